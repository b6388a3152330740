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

With --callgrind, DIR/index.tsv lists (side, benchmark, file) of runs
under valgrind's callgrind with its cache simulation, one benchmark per
run: per benchmark the instructions and simulated D1 / LL cache misses
per call of its verb (Pipeline::Filter, ::Prioritize, ::ReserveBind +
::FinishBind, inclusive, every call of the process: the probe, the timed
loop and the percentile samples), current/base. Deterministic: what a
busy host cannot blur, though it counts no stall and no real cache.

usage: extender_ab.py DIR   (DIR holds base-<r>.json and current-<r>.json)
       extender_ab.py --callgrind DIR
stdlib only."""

import json
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from harness.figures import fmt_spread, spread  # noqa: E402,F401  e2e/scenarios/harness (spread: the tests')

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


# The verb a benchmark times: the functions whose inclusive costs add up
# (the first one's calls count the calls).
VERBS = {"Filter": ("Filter",), "Prioritize": ("Prioritize",), "Bind": ("ReserveBind", "FinishBind")}


def verb_of(name):
    m = re.match(r"BM_(Filter|Prioritize|Bind)", name)
    return VERBS[m.group(1)] if m else None


def callgrind_costs(path, functions):
    """A callgrind output (--compress-strings=no --compress-pos=no) -> (calls
    of functions[0], {event: inclusive cost summed over every call of any of
    `functions`}), the functions being muster::extender::Pipeline's."""
    wanted = [f"muster::extender::Pipeline::{f}(" for f in functions]
    events, calls, costs = [], 0, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("cfn=") and any(line[4:].startswith(w) for w in wanted) and "{lambda" not in line:
            if i + 2 < len(lines) and lines[i + 1].startswith("calls="):
                if line[4:].startswith(wanted[0]):
                    calls += int(lines[i + 1].split("=")[1].split()[0])
                values = [int(v) for v in lines[i + 2].split()[1:]]
                for event, value in zip(events, values):
                    costs[event] = costs.get(event, 0) + value
                i += 3
                continue
        i += 1
    return calls, costs


def per_call(calls, costs):
    """Instructions, D1 misses and LL misses per call."""
    if calls == 0:
        return None
    d1 = costs.get("D1mr", 0) + costs.get("D1mw", 0)
    ll = costs.get("DLmr", 0) + costs.get("DLmw", 0)
    return {"ir": costs.get("Ir", 0) / calls, "d1": d1 / calls, "ll": ll / calls, "calls": calls}


def callgrind_report(path):
    """The --callgrind table, as Markdown."""
    runs = {}
    with open(os.path.join(path, "index.tsv"), encoding="utf-8") as f:
        for line in f:
            side, name, file = line.rstrip("\n").split("\t")
            functions = verb_of(name)
            if functions:
                runs.setdefault(name, {})[side] = per_call(*callgrind_costs(os.path.join(path, file), functions))
    lines = ["instructions and simulated cache misses per call of the verb (callgrind, inclusive), base -> current",
             "",
             "| benchmark | calls | instructions | current/base | D1 misses | current/base | LL misses |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in sorted(runs, key=order_key):
        sides = runs[name]
        b, c = sides.get("base"), sides.get("current")
        if c is None:
            continue
        if b is None:
            lines.append(f"| {short(name)} | {c['calls']} | {c['ir']:,.0f} | - | {c['d1']:,.0f} | - | {c['ll']:,.1f} |")
            continue
        ir_ratio = c["ir"] / b["ir"] if b["ir"] else float("inf")
        d1_ratio = c["d1"] / b["d1"] if b["d1"] else float("inf")
        lines.append(f"| {short(name)} | {b['calls']} / {c['calls']} | {b['ir']:,.0f} -> {c['ir']:,.0f} | "
                     f"{ir_ratio:.3f} | {b['d1']:,.0f} -> {c['d1']:,.0f} | {d1_ratio:.3f} | "
                     f"{b['ll']:,.1f} -> {c['ll']:,.1f} |")
    return "\n".join(lines)


def main(argv):
    if len(argv) == 3 and argv[1] == "--callgrind" and os.path.isdir(argv[2]):
        print(callgrind_report(argv[2]))
        return 0
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: extender_ab.py DIR | --callgrind DIR", file=sys.stderr)
        return 2
    sides = load_dir(argv[1])
    if not sides["base"] or not sides["current"]:
        print(f"extender_ab.py: no base-<r>.json and current-<r>.json in {argv[1]}", file=sys.stderr)
        return 1
    print(report(sides))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
