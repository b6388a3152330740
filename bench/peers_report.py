#!/usr/bin/env python3
"""`make bench-peers`' tables (stdlib only): one per workload, a column per
side - stock (the default kube-scheduler, pod by pod), upstream (the same
kube-scheduler with Kubernetes' own gang scheduling, GenericWorkload, each
gang a scheduling.k8s.io/v1beta1 Workload + PodGroup), kueue (Kueue v0.17
admitting pod groups for the stock kube-scheduler; every workload but the
plain-pod throughput 4b) and muster - from the figures the runs of
bench/peers.sh left in OUT:

  OUT/deadlock[-<run>]/figures.json, OUT/preemption[-<run>]/figures.json,
  OUT/burst-<run>/figures.json      e2e/scenarios/gang_report.py report
  OUT/racks[-<run>]/figures.json    e2e/scenarios/gang_report.py report --racks
  OUT/fairshare[-<run>]/figures.json e2e/scenarios/queue_report.py report
  OUT/gang-throughput/figures.json,
  OUT/gang-wait/figures.json,
  OUT/admit-singles/figures.json,
  OUT/admit-groups/figures.json     bench/gang_wait.py report
  OUT/plain-throughput.jsonl        bench/throughput_figures.py run records

usage: peers_report.py OUT [--json FILE]

Several runs of a workload (the burst): the median of each figure, and
[min-max] beside it. A side or workload without figures shows "-". The last
line of each table says which side is best on each figure (ties named
together); the JSON has every figure per side and run.
"""

import json
import os
import statistics
import sys

SIDES = ("stock", "upstream", "kueue", "muster")
# (figure key in gang_report.py's figures, label, lower is better?)
GANG_ROWS = [
    ("completedFraction", "jobs completed (fraction of gangs)", False),
    ("makespanRatio", "makespan / ideal", True),
    ("neverAssembledGpuSeconds", "GPU-s held by gangs never at minMember", True),
    ("partialGpuSeconds", "GPU-s held below minMember (ramps incl.)", True),
    ("partialGangs", "gangs left partial or broken", True),
    ("victimGangs", "victim gangs", True),
    ("evictedPods", "evicted pods", True),
    ("brokenVictims", "victim gangs left running in part", True),
    ("waitP50Seconds", "gang wait p50 s", True),
    ("waitMaxSeconds", "gang wait max s", True),
]
WAIT_ROWS = [
    ("assembledFraction", "gangs at minMember (fraction)", False),
    ("podsPerSecond", "pods bound/s", False),
    ("gangsPerSecond", "gangs at minMember/s (admissions/s)", False),
    ("waitP50", "gang wait p50 s", True),
    ("waitP99", "gang wait p99 s", True),
    ("partialGpuSeconds", "GPU-s held below minMember (ramps incl.)", True),
    ("leftPartial", "gangs left partial", True),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def gang_figures(fig):
    """The compared figures of one side of a gang scenario."""
    count = fig.get("gangCount") or 0
    broken = set(fig.get("broken") or [])
    victims = fig.get("victims") or []
    return {
        "completedFraction": round(fig["completed"] / count, 3) if count else None,
        "makespanRatio": fig.get("makespanRatio"),
        "neverAssembledGpuSeconds": fig.get("neverAssembledGpuSeconds"),
        "partialGpuSeconds": fig.get("partialGpuSeconds"),
        "partialGangs": len(set(fig.get("leftPartial") or []) | broken),
        "victimGangs": len(victims),
        "evictedPods": fig.get("evictedPods"),
        "brokenVictims": len(broken & set(victims)),
        "waitP50Seconds": fig.get("waitP50Seconds"),
        "waitMaxSeconds": fig.get("waitMaxSeconds"),
        # The rack workload's (gang_report.py report --racks); absent elsewhere.
        "oneRackRate": fig.get("oneRackRate"),
        "packCompletedFraction": round(fig["completed"] / fig["rackGangs"], 3) if fig.get("rackGangs") else None,
        "unplaceableBoundPods": fig.get("unplaceableBoundPods"),
        "unplaceableGpuSeconds": fig.get("unplaceableGpuSeconds"),
    }


def wait_figures(side):
    """The compared figures of one side of bench/gang_wait.py's report."""
    gangs = side.get("gangs") or 0
    return {
        "assembledFraction": round(side["assembled"] / gangs, 3) if gangs else None,
        "podsPerSecond": side.get("podsPerSecond"),
        "gangsPerSecond": side.get("gangsPerSecond"),
        "waitP50": side["wait"].get("p50"),
        "waitP99": side["wait"].get("p99"),
        "partialGpuSeconds": side.get("partialGpuSeconds"),
        "leftPartial": len(side.get("leftPartial") or []),
    }


# Below this share of a side's evictions named by an Event, the figures
# judged from its Events (victims whole, floor, flip-flops) are left out:
# they would judge a sample. Kueue's PreemptedWorkload Events named 36 of 181
# evicted gangs in a fair-share run (late and dropped under load).
MIN_EVENT_COVERAGE = 0.95
EVENT_ROWS = ("notWhole", "belowTarget", "flipFlops")


def fair_figures(fig):
    """One side's queue_report.py figures as FAIR_ROWS' values."""
    windows = fig.get("windows", {}).values()
    per_queue = [q for w in windows for q in w["queues"].values()]

    def worst(key):
        values = [q[key] for q in per_queue if q.get(key) is not None]
        return max(values) if values else None

    jains = [w["jainMedian"] for w in windows if w.get("jainMedian") is not None]
    out = {
        "deviationMedianMax": worst("deviationMedian"), "deviationP90Max": worst("deviationP90"),
        "jainMin": min(jains) if jains else None, "convergeSeconds": fig.get("convergeSeconds"),
        "evictedGangs": fig.get("evictedGangs"), "evictedPods": fig.get("evictedPods"),
        "eventCoverage": fig.get("eventCoverage"), "notWhole": len(fig.get("notWhole") or []),
        "belowTarget": len(fig.get("belowTarget") or []), "flipFlops": len(fig.get("flipFlops") or []),
        "gpuUtil": fig.get("gpuUtil"), "partialGpuSeconds": fig.get("partialGpuSeconds"),
    }
    if out["eventCoverage"] is not None and out["eventCoverage"] < MIN_EVENT_COVERAGE:
        out.update(dict.fromkeys(EVENT_ROWS))
    return out


def runs_of(out, name):
    """The figure dicts per side of every run of workload `name` (a dir
    `name` or `name-<run>`), in run order."""
    dirs = sorted(d for d in os.listdir(out) if d == name or d.startswith(name + "-"))
    runs = []
    for d in dirs:
        doc = load(os.path.join(out, d, "figures.json"))
        if doc is None:
            continue
        if "sides" in doc:  # bench/gang_wait.py
            runs.append({s: wait_figures(v) for s, v in doc["sides"].items()})
        elif name == "fairshare":
            runs.append({s: fair_figures(v) for s, v in doc["figures"].items() if s in SIDES})
        else:
            runs.append({s: gang_figures(v) for s, v in doc["figures"].items() if s in SIDES})
    return runs


def plain_runs(out):
    """bench/throughput_figures.py records -> runs, the n-th run holding each
    side's n-th record (the sides alternate), with upstream = stock: plain
    pods carry no gang, so Kubernetes' gang scheduling never acts and its
    scheduler is the stock one (the same process)."""
    path = os.path.join(out, "plain-throughput.jsonl")
    if not os.path.exists(path):
        return []
    runs, seen = [], {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            side = "muster" if r["side"] == "volcano" else "stock"
            entry = {"podsPerSecond": r["release_pods_per_s"], "writesPerPod": r["writes_per_pod"],
                     "cpuMsPerPod": r["side_cpu_ms_per_pod"]}
            n = seen[side] = seen.get(side, -1) + 1
            if n == len(runs):
                runs.append({})
            runs[n].update({side: entry, **({"upstream": entry} if side == "stock" else {})})
    return runs
# Queue fair share (e2e/scenarios/queue_report.py's figures, summarised by fair_figures).
FAIR_ROWS = [
    ("deviationMedianMax", "|share - target| median %, worst queue and phase", True),
    ("deviationP90Max", "|share - target| p90 %, worst queue and phase", True),
    ("jainMin", "Jain index (median), worse phase", False),
    ("convergeSeconds", "converged after the change, s", True),
    ("evictedGangs", "gangs evicted (pod log)", True),
    ("evictedPods", "pods evicted (pod log)", True),
    ("eventCoverage", "evictions named by an Event (fraction)", False),
    ("notWhole", "victim gangs not evicted whole (Events)", True),
    ("belowTarget", "reclaims that pushed a queue below target (Events)", True),
    ("flipFlops", "flip-flops (Events)", True),
    ("gpuUtil", "GPU utilisation % (whole drive)", False),
    ("partialGpuSeconds", "GPU-s held below minMember (ramps incl.)", True),
]


# Rack packing (gang_report.py's figures with --racks, through gang_figures).
RACK_ROWS = [
    ("oneRackRate", "pack gangs run whole in one rack (fraction)", False),
    ("packCompletedFraction", "pack gangs completed (fraction)", False),
    ("waitP50Seconds", "gang wait p50 s", True),
    ("waitMaxSeconds", "gang wait max s", True),
    ("partialGpuSeconds", "GPU-s held below minMember (ramps incl.)", True),
    ("unplaceableBoundPods", "pods bound of the gang no rack holds", True),
    ("unplaceableGpuSeconds", "GPU-s held by the gang no rack holds", True),
]


PLAIN_ROWS = [("podsPerSecond", "pods bound/s (release -> last bind)", False),
              ("writesPerPod", "API writes per pod", True),
              ("cpuMsPerPod", "scheduler (+ muster) CPU ms per pod", True)]


def combine(runs):
    """Per side and figure: (median, min, max, n) over the runs that have it."""
    out = {}
    for side in SIDES:
        figs = {}
        for run in runs:
            for key, v in (run.get(side) or {}).items():
                if v is not None:
                    figs.setdefault(key, []).append(v)
        out[side] = {k: (statistics.median(v), min(v), max(v), len(v)) for k, v in figs.items()}
    return out


def cell(stat):
    if stat is None:
        return "-"
    med, lo, hi, n = stat
    text = f"{med:g}" if isinstance(med, int) else f"{med:.3g}"
    return text if n == 1 or lo == hi else f"{text} [{lo:.3g}-{hi:.3g}]"


def best(stats, key, lower):
    have = {s: stats[s][key][0] for s in SIDES if key in stats[s]}
    if not have:
        return "-"
    target = min(have.values()) if lower else max(have.values())
    return "=".join(s for s, v in have.items() if v == target)


def table(title, runs, rows):
    stats = combine(runs)
    width = max(len(label) for _, label, _ in rows) + 2
    lines = [f"{title} ({len(runs)} run{'s' if len(runs) != 1 else ''})",
             " " * width + "".join(f"{s:>22}" for s in SIDES) + "   best"]
    for key, label, lower in rows:
        cells = "".join(f"{cell(stats[s].get(key)):>22}" for s in SIDES)
        lines.append(f"{label:<{width}}{cells}   {best(stats, key, lower)}")
    return "\n".join(lines), stats


WORKLOADS = [
    ("deadlock", "1. deadlock: 2 gangs x 100 pods x 1 GPU on 100 GPUs", GANG_ROWS),
    ("burst", "2. contention burst: 51 gangs of 1-8 pods x 1-8 GPUs on 32 x 8 GPUs, 3 waves", GANG_ROWS),
    ("preemption", "3. whole-gang preemption: an 8-pod high-priority gang on a full 32 x 8 cluster", GANG_ROWS),
    ("fairshare", "6. fair share: queues 1:2:4 saturating 16 x (8 GPUs, 32 cpu), the third from 60 s", FAIR_ROWS),
    ("racks", "7. rack packing: gangs of 4, 4, 4, 5 x 8 GPUs on 5+4+4+4 free nodes, then 6 pods no rack holds",
     RACK_ROWS),
    ("gang-throughput", "4a. gang throughput: 300 gangs x 10 pods at once on 1000 nodes", WAIT_ROWS),
    ("plain", "4b. plain-pod throughput: 3000 pods x 1 GPU on 1000 nodes", PLAIN_ROWS),
    ("gang-wait", "5. gang wait with capacity free: 60 gangs of 2-100 pods on 1000 nodes", WAIT_ROWS),
    ("admit-singles", "8a. admission: 1000 single-pod workloads at once on 1000 nodes", WAIT_ROWS),
    ("admit-groups", "8b. admission: 100 pod groups of 10 at once on 1000 nodes", WAIT_ROWS),
]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    json_path = argv[argv.index("--json") + 1] if "--json" in argv else None
    doc, texts = {}, []
    for name, title, rows in WORKLOADS:
        runs = plain_runs(out) if name == "plain" else runs_of(out, name)
        text, stats = table(title, runs, rows)
        texts.append(text)
        doc[name] = {"title": title, "runs": runs,
                     "medians": {s: {k: v[0] for k, v in st.items()} for s, st in stats.items()}}
    print("\n\n".join(texts))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
