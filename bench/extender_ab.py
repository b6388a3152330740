#!/usr/bin/env python3
"""The report of bench/extender_ab.sh: extender_bench's JSON outputs from
alternating rounds of two builds (base, current) -> per benchmark, the
medians and spread (min-max) over the rounds of each side's time per call,
and current/base (the ratio of the medians, and the median and spread of
the rounds' paired ratios: round r's current over round r's base).

Benchmarks only the current build has (the shared-GPU cases: the base
commit skips them) are compared with their unshared counterpart in the
current build, round by round: BM_FilterSharedGpus/nodes:N/fraction_probe:K
against BM_Filter/nodes:N/gpu_topology:0, and so on for Prioritize and Bind.

usage: extender_ab.py DIR   (DIR holds base-<r>.json and current-<r>.json)
stdlib only."""

import json
import os
import re
import statistics
import sys

TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def load_run(path):
    """One extender_bench --benchmark_format=json output -> {name: {"time":
    microseconds per call (real time), "cpu": CPU microseconds per
    iteration, "p50": p50_us or None}}; skipped benchmarks and aggregate
    rows are left out."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred") or b.get("skipped"):
            continue
        scale = TO_US[b.get("time_unit", "ns")]
        out[b["name"]] = {"time": b["real_time"] * scale, "cpu": b["cpu_time"] * scale, "p50": b.get("p50_us")}
    return out


def load_dir(path):
    """{"base": {round: run}, "current": {round: run}} from DIR/<side>-<round>.json."""
    sides = {"base": {}, "current": {}}
    for entry in sorted(os.listdir(path)):
        m = re.fullmatch(r"(base|current)-(\d+)\.json", entry)
        if m:
            sides[m.group(1)][int(m.group(2))] = load_run(os.path.join(path, entry))
    return sides


def spread(values):
    """(median, min, max) of a non-empty list."""
    return statistics.median(values), min(values), max(values)


def unshared_of(name):
    """The whole-GPU, untopologied counterpart of a shared-GPU benchmark, or None."""
    m = re.fullmatch(r"BM_(Filter|Prioritize|Bind)SharedGpus/nodes:(\d+)/fraction_probe:\d(/manual_time)?", name)
    if not m:
        return None
    return f"BM_{m.group(1)}/nodes:{m.group(2)}/gpu_topology:0{m.group(3) or ''}"


def series(runs, name, field="time"):
    """{round: value} of one benchmark over one side's rounds."""
    return {r: run[name][field] for r, run in runs.items() if name in run and run[name][field] is not None}


def paired_ratios(num, den):
    """Round-by-round num/den over the rounds both have."""
    return [num[r] / den[r] for r in sorted(num) if r in den and den[r] > 0]


def fmt_spread(values, digits=1):
    med, lo, hi = spread(values)
    return f"{med:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def ab_rows(sides):
    """Rows comparing base and current on the benchmarks both ran."""
    base, current = sides["base"], sides["current"]
    names = sorted({n for run in base.values() for n in run} & {n for run in current.values() for n in run},
                   key=order_key)
    rows = []
    for name in names:
        b, c = series(base, name), series(current, name)
        ratios = paired_ratios(c, b)
        bp, cp = series(base, name, "p50"), series(current, name, "p50")
        bc, cc = series(base, name, "cpu"), series(current, name, "cpu")
        rows.append({
            "name": name,
            "base": list(b.values()),
            "current": list(c.values()),
            "ratio_of_medians": statistics.median(c.values()) / statistics.median(b.values()),
            "ratios": ratios,
            "p50_ratio": (statistics.median(cp.values()) / statistics.median(bp.values())) if bp and cp else None,
            "cpu_ratios": paired_ratios(cc, bc),
        })
    return rows


def shared_rows(sides):
    """Rows for the current build's shared-GPU benchmarks against their unshared counterpart."""
    current = sides["current"]
    names = sorted({n for run in current.values() for n in run if unshared_of(n)}, key=order_key)
    rows = []
    for name in names:
        plain = unshared_of(name)
        s, p = series(current, name), series(current, plain)
        if not s or not p:
            continue
        rows.append({"name": name, "against": plain, "shared": list(s.values()), "plain": list(p.values()),
                     "ratios": paired_ratios(s, p)})
    return rows


def order_key(name):
    """Verb order (filter, prioritize, bind), then the name."""
    for i, verb in enumerate(("BM_Filter", "BM_Prioritize", "BM_Bind")):
        if name.startswith(verb):
            return (i, name)
    return (9, name)


def short(name):
    return name.replace("/manual_time", "").replace("BM_", "")


def report(sides):
    """The tables, as Markdown (what docs/topology.md quotes)."""
    rounds = len(sides["current"])
    lines = [f"current vs base, {rounds} rounds: µs per call, median [min-max] over the rounds; "
             "current/base = ratio of the medians, and the rounds' paired ratios median [min-max]; "
             "the same paired ratios of CPU time (bind: CPU time includes the untimed Forget)",
             "",
             "| benchmark | base µs | current µs | current/base | paired ratios | p50_us current/base "
             "| CPU time: paired ratios |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in ab_rows(sides):
        p50 = f"{row['p50_ratio']:.3f}" if row["p50_ratio"] is not None else "-"
        paired = fmt_spread(row["ratios"], 3) if row["ratios"] else "-"
        cpu = fmt_spread(row["cpu_ratios"], 3) if row["cpu_ratios"] else "-"
        lines.append(f"| {short(row['name'])} | {fmt_spread(row['base'])} | {fmt_spread(row['current'])} | "
                     f"{row['ratio_of_medians']:.3f} | {paired} | {p50} | {cpu} |")
    shared = shared_rows(sides)
    if shared:
        lines += ["",
                  "shared GPUs (current build only): µs per call, median [min-max]; x = the rounds' paired "
                  "ratios against the whole-GPU probe on the unshared cluster, median [min-max]",
                  "",
                  "| benchmark | µs | against | its µs | x |",
                  "| --- | --- | --- | --- | --- |"]
        for row in shared:
            lines.append(f"| {short(row['name'])} | {fmt_spread(row['shared'])} | {short(row['against'])} | "
                         f"{fmt_spread(row['plain'])} | {fmt_spread(row['ratios'], 2)} |")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: extender_ab.py DIR", file=sys.stderr)
        return 2
    sides = load_dir(argv[1])
    if not sides["base"] or not sides["current"]:
        print(f"extender_ab.py: no base-<r>.json and current-<r>.json in {argv[1]}", file=sys.stderr)
        return 1
    print(report(sides))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
