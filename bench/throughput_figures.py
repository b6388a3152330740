#!/usr/bin/env python3
"""Figures of bench/scheduling_throughput.sh (stdlib only): what one side
(stock kube-scheduler, or the volcano kube-scheduler + muster) costs per pod
between the release of its frozen processes and its last binding.

usage:
  throughput_figures.py snapshot CLUSTER_DIR OUT.json PROC...
      CPU seconds (utime + stime, /proc/PID/stat) of each named `proc` of
      CLUSTER_DIR/state, plus kube-apiserver's write counters
      (apiserver_request_total) -> OUT.json
  throughput_figures.py run SIDE PODS BEFORE.json AFTER.json WATCH.json
      One run's record (one JSON line): pods/s, API writes per pod (by
      request), CPU seconds per pod of the side's processes and of the
      control plane.
  throughput_figures.py report RUNS.jsonl
      Per side and pod count: medians and spread of every figure, and the
      ratio volcano+muster / stock of the medians.

pods/s: `pods_per_s` is (n - 1) / (last bind - first bind), the queue drain
rate once binding has started; `release_pods_per_s` is n / (last bind -
release), which also charges what a side does before its first binding
(muster: decode the burst, plan, lift gates). The ratio is taken on the
second. A "write" is a POST/PUT/PATCH/DELETE the API server counted in the
window; Leases and node status (the fake nodes' own heartbeats, the same
for both sides) are listed but left out of writes per pod.
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from reconciler_figures import apiserver_writes, by_request, diff  # noqa: E402  bench/reconciler_figures.py

# The processes whose CPU a side is charged with; the control plane's is
# reported beside it.
SIDE_PROCS = {"stock": ("kube-scheduler",), "volcano": ("volcano-scheduler", "extender", "reconciler")}
CONTROL_PLANE = ("kube-apiserver", "etcd", "kwok", "kube-controller-manager")
# Background writes of the fake nodes, alike on both sides.
BACKGROUND = ("PUT coordination.k8s.io/leases", "PATCH nodes/status", "PUT nodes/status")


def state_procs(state_text):
    """{name: pid} of the last `proc NAME PID START` line of each name."""
    out = {}
    for line in state_text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "proc":
            out[parts[1]] = int(parts[2])
    return out


def cpu_seconds(stat_text, ticks_per_s):
    """utime + stime of a /proc/PID/stat line, in seconds."""
    fields = stat_text[stat_text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def writes_per_pod(window, pods):
    """(total, {request: n}) of a window's writes, background left out."""
    rows = {k: v[0] for k, v in by_request(window).items()}
    counted = {k: n for k, n in rows.items() if not k.startswith(BACKGROUND)}
    return sum(counted.values()) / pods if pods else None, rows


def run_record(side, pods, before, after, watch):
    """The figures of one run (see the module docstring)."""
    window = diff(before["writes"], after["writes"])
    per_pod, rows = writes_per_pod(window, pods)
    cpu = {name: round(after["cpu"].get(name, 0) - before["cpu"].get(name, 0), 3)
           for name in set(before["cpu"]) | set(after["cpu"])}
    side_cpu = sum(cpu.get(name, 0) for name in SIDE_PROCS[side])
    plane_cpu = sum(cpu.get(name, 0) for name in CONTROL_PLANE)
    drain = watch.get("last_s", 0) - watch.get("released_s", watch.get("first_s", 0))
    return {
        "side": side, "pods": pods, "bound": watch.get("bound", 0),
        "pods_per_s": watch.get("pods_per_s", 0),
        "release_pods_per_s": round(watch.get("bound", 0) / drain, 1) if drain > 0 else 0,
        "writes_per_pod": round(per_pod, 2) if per_pod is not None else None,
        "writes": rows, "cpu_s": cpu,
        "side_cpu_ms_per_pod": round(1000 * side_cpu / pods, 3) if pods else None,
        "plane_cpu_ms_per_pod": round(1000 * plane_cpu / pods, 3) if pods else None,
    }


FIGURES = ("release_pods_per_s", "pods_per_s", "writes_per_pod", "side_cpu_ms_per_pod",
           "plane_cpu_ms_per_pod")


def report(records):
    """Text lines: per pod count, each side's medians [min-max] and the ratios."""
    lines = []
    for pods in sorted({r["pods"] for r in records}):
        lines.append(f"{pods} pods per run")
        medians = {}
        for side in ("stock", "volcano"):
            runs = [r for r in records if r["pods"] == pods and r["side"] == side]
            if not runs:
                continue
            cells = []
            for name in FIGURES:
                values = [r[name] for r in runs if r.get(name) is not None]
                if not values:
                    continue
                med = statistics.median(values)
                medians[(side, name)] = med
                cells.append(f"{name} {med:.2f} [{min(values):.2f}-{max(values):.2f}]")
            lines.append(f"  {side:8} ({len(runs)} runs): " + ", ".join(cells))
        for name in FIGURES:
            stock, volcano = medians.get(("stock", name)), medians.get(("volcano", name))
            if stock and volcano is not None:
                lines.append(f"  ratio volcano+muster / stock, {name}: {volcano / stock:.2f}")
    return lines


def snapshot(cluster_dir, names):
    """CPU seconds of the named procs and the API server's write counters."""
    from harness.cluster import Api  # e2e/scenarios/harness (only the CLI needs the cluster)
    with open(os.path.join(cluster_dir, "state")) as f:
        procs = state_procs(f.read())
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = {}
    for name in names:
        if name in procs:
            try:
                with open(f"/proc/{procs[name]}/stat") as f:
                    cpu[name] = cpu_seconds(f.read(), ticks)
            except OSError:
                pass
    conn = Api(cluster_dir).connect()
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return {"cpu": cpu, "writes": apiserver_writes(text)}


def main(argv):
    if len(argv) >= 4 and argv[1] == "snapshot":
        with open(argv[3], "w") as f:
            json.dump(snapshot(argv[2], argv[4:]), f)
        return 0
    if len(argv) == 7 and argv[1] == "run":
        docs = []
        for path in argv[4:7]:
            with open(path) as f:
                docs.append(json.load(f))
        print(json.dumps(run_record(argv[2], int(argv[3]), *docs)))
        return 0
    if len(argv) == 3 and argv[1] == "report":
        with open(argv[2]) as f:
            records = [json.loads(line) for line in f if line.strip()]
        print("\n".join(report(records)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
