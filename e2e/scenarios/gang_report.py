#!/usr/bin/env python3
"""Workloads, recorder and analysis of the gang e2e scenarios (stdlib only).

Each scenario runs one workload on the same cluster file once per side -
through the stock kube-scheduler (schedulerName default-scheduler), through
Kubernetes' own gang scheduling (side `upstream`: the same scheduler with the
feature gate GenericWorkload, the gangs as scheduling.k8s.io/v1beta1 Workload
+ PodGroup; `make bench-peers`), through muster (schedulerName volcano) -
records every pod's life as the API server reports it, and compares the runs
here.

Subcommands:
  workload KIND [--scheduler S] [--gated] [--upstream | --kueue QUEUE] [--seed N] [--waves D,D,...]
      Print a v1 List, in creation order, of the PodGroups and pods of KIND:
        deadlock         two gangs a, b of 100 pods x 1 GPU (minMember 100),
                         pods interleaved a-0, b-0, a-1, ...; work 8 s each
        burst            waves of gang jobs, each wave filling 32 x 8 GPUs
                         exactly (1-8 pods x 1/2/4/8 GPUs, seeded), one work
                         duration per wave (--waves, seconds); some jobs have
                         two tasks (minTaskMember)
        preemption-low   low-priority gangs of whole-node (8-GPU) pods filling
                         32 nodes: a 16, b 9, c 4, d 3 pods; they run until
                         deleted
        preemption-high  one high-priority gang of 8 pods x 8 GPUs, work 5 s
        racks-busy       whole-node pods pinned to the first 3, 4, 4, 4 nodes
                         of gpu-32x8's racks a-d (5, 4, 4, 4 nodes left free)
        racks-pack       gangs pack-1..3 of 4 pods and pack-4 of 5 pods x 8
                         GPUs, work 10 s, each required in one rack: they
                         fill the free nodes exactly when the 4-pod gangs
                         leave rack a to pack-4
        racks-wide       gang wide of 6 pods x 8 GPUs, required in one rack,
                         which no rack has room for; runs until deleted
      The rack workloads mark each gang for the side that reads it: Kueue's
      podset-required-topology on each pod (--kueue), muster's
      muster.io/network-tier-required on each PodGroup.
      Every pod carries scheduling.k8s.io/group-name, e2e.muster.io/min-member
      and (unless it runs until deleted) e2e.muster.io/work-seconds.
      --gated adds the muster.io/gang scheduling gate (muster lifts it).
      --upstream expresses each gang as a Workload and a PodGroup of
      scheduling.k8s.io/v1beta1 (gang minCount, disruptionMode all, the
      priority class) with pods joining it through spec.schedulingGroup
      instead of a Volcano PodGroup (gang_workload.py upstream_gang).
      --kueue QUEUE makes each gang a Kueue pod group of LocalQueue QUEUE
      (labels queue-name and pod-group-name, annotation
      pod-group-total-count) instead of a Volcano PodGroup.
  submit CLUSTER_DIR NAMESPACE FILE
      Create the items of a List (a workload) in its order, over one kept-alive
      connection with the cluster's admin credentials.
  record CLUSTER_DIR NAMESPACE OUT --ready FILE --stop FILE --status FILE [--rendezvous]
      Watch the namespace's pods and PodGroups over the cluster's admin
      credentials and append one JSON line per change to OUT (receipt time
      "t", epoch seconds; pod lines in the API server's order). Touches
      --ready once both watches are open; rewrites --status (counts, time of
      the last pod change) twice a second; exits when --stop exists.
      --rendezvous: the recorder also plays the gangs' workload, with the
      barrier of a real distributed job: a member starts working only once
      minMember members of its gang are bound at the same time; it (and a
      member bound later) works e2e.muster.io/work-seconds, and then the
      recorder marks it Succeeded through the status subresource, as its
      kubelet would (kwok only makes pods Running: they carry no
      muster.io/run-seconds, and kwok's finishing lags by seconds when a
      whole wave ends at once on a busy host). A gang that never assembles
      holds its GPUs and never finishes - the stock scheduler's deadlock.
  report [--side NAME=LOG ...] [--check CHECK ...] [options]
      Analyse each side's log, print the figures side by side and as JSON
      (--json FILE), and exit 1 when a check fails on a side whose name
      starts with `muster` (other sides are shown for comparison). Checks:
        overcommit    no node ever holds more GPUs than it has (bound pods
                      until they finish or are deleted, in the watch's order)
        complete      every gang whose pods have work finished (all Succeeded)
        no-partial    no GPU-second held by a gang that never reached
                      minMember, no gang left below minMember holding GPUs at
                      the end, no gang broken by a partial eviction
        annotations   every bound pod carries muster.io/node = its node and a
                      muster.io/gang-plan
        serial        gangs ran one after the other (each finished before the
                      next one's first bind)
        podgroup      each finished gang's PodGroup ended Completed with its
                      succeeded count
        podgroup-wait each gang that waited 5 s or more for its first bind
                      had condition Unschedulable on its PodGroup meanwhile
        one-rack      (with --racks) every gang with work ran whole in one
                      rack, and no pod of an --unplaceable gang was bound
      Options: --max-makespan-ratio R (makespan <= R x ideal, ideal = work
      GPU-seconds / cluster GPUs), --max-assembly S (first to minMember-th
      bind of a gang <= S seconds), --victims A,B (exactly these gangs lost
      members, and lost all their unfinished ones), --snapshot-at S (also
      show bound members per gang S seconds after the first pod's creation),
      --show-gang G (also show gang G's wait and assembly), --racks FILE (a
      JSON map node -> rack: add where each gang ran, by rack), --unplaceable
      G (gang G fits no rack: count its pods bound and GPU-s held).

Figures per side: gangs assembled / completed / left partial / broken,
partial GPU-seconds (GPUs held by a gang's bound, unfinished members while
fewer than minMember of its members are bound - a member that succeeded
still counts, an evicted or failed one does not; the binding ramp of every
gang counts too), never-assembled GPU-seconds (the same, for gangs that never
reached minMember: pure waste), assembly time, makespan (first creation to
last finish) against the ideal, and over-commits.
"""

import argparse
import json
import sys

from gang_analysis import analyze, rack_figures
# Re-exported: scenarios (topology.sh), the tests and bench/gpu_topology.py use them as gang_report.X.
from gang_recorder import Recorder, pod_view, record, submit, succeeded_status  # noqa: F401
from gang_workload import GATE, GROUP, MIN, WORK, gang_pod, pod_group, workload  # noqa: F401
from harness import figures
from harness.recording import read_log as load
from placement import gpu_request  # noqa: F401  same directory: the scenarios' pod helpers


def checks(fig, names, max_ratio=None, max_assembly=None, victims=None):
    """The failed checks of one side, as messages."""
    bad = []
    gangs = fig["gangs"].values()
    if "overcommit" in names and fig["overcommitCount"]:
        bad.append(f"overcommit: {fig['overcommitCount']} times a node held more GPUs than it has, "
                   f"first {fig['overcommits'][:3]}")
    if "complete" in names:
        left = [g["name"] for g in gangs if g["hasWork"] and not g["completed"] and not g["evicted"]]
        if left:
            bad.append(f"complete: {len(left)} gang(s) did not finish: {left[:10]}")
    if "no-partial" in names:
        if fig["neverAssembledGpuSeconds"] > 0:
            bad.append(f"no-partial: {fig['neverAssembledGpuSeconds']} GPU-seconds held by gangs that never "
                       f"reached minMember: {[g['name'] for g in gangs if g['assembledAt'] is None and g['firstBind']]}")
        if fig["leftPartial"]:
            bad.append(f"no-partial: gangs left below minMember holding GPUs: {fig['leftPartial']}")
        if fig["broken"]:
            bad.append(f"no-partial: gangs broken (members evicted, survivors still hold GPUs): {fig['broken']}")
    if "annotations" in names and fig["badAnnotations"]:
        bad.append(f"annotations: {len(fig['badAnnotations'])} bound pods lack muster's placement annotations, "
                   f"e.g. {fig['badAnnotations'][:3]}")
    if "serial" in names:
        ran = sorted((g for g in gangs if g["firstBind"] is not None), key=lambda g: g["firstBind"])
        for a, b in zip(ran, ran[1:]):
            if a["doneAt"] is None or a["doneAt"] > b["firstBind"]:
                bad.append(f"serial: gang {b['name']} was bound before gang {a['name']} finished")
    if "podgroup" in names:
        for g in gangs:
            pg = g["podGroup"]
            if g["completed"] and (pg is None or pg["phase"] != "Completed" or pg["succeeded"] < g["minMember"]):
                bad.append(f"podgroup: {g['name']} finished but its PodGroup ended {pg and (pg['phase'], pg['succeeded'])}")
    if "podgroup-wait" in names:
        for g in gangs:
            if g["waited"] and not g["waitedUnschedulable"]:
                bad.append(f"podgroup: {g['name']} waited for capacity but its PodGroup had no "
                           "condition Unschedulable before its first bind")
    if max_ratio is not None:
        if fig["makespanRatio"] is None:
            bad.append("makespan: the workload did not finish")
        elif fig["makespanRatio"] > max_ratio:
            bad.append(f"makespan: {fig['makespanSeconds']} s = {fig['makespanRatio']} x ideal "
                       f"{fig['idealSeconds']} s > {max_ratio}")
    if max_assembly is not None and fig["assemblyMaxSeconds"] is not None and fig["assemblyMaxSeconds"] > max_assembly:
        slow = sorted(((g["assemblySeconds"], g["name"]) for g in gangs if g["assemblySeconds"] is not None),
                      reverse=True)[:3]
        bad.append(f"assembly: a gang took {fig['assemblyMaxSeconds']} s from first to minMember-th bind "
                   f"(> {max_assembly}): {slow}")
    if "one-rack" in names:
        if fig.get("notOneRack"):
            bad.append(f"one-rack: gangs not run whole in one rack: "
                       f"{ {g: fig['racksOfGangs'].get(g) for g in fig['notOneRack']} }")
        if fig.get("unplaceableBoundPods"):
            bad.append(f"one-rack: {fig['unplaceableBoundPods']} pods bound of a gang that fits no rack")
    if victims is not None:
        if fig["victims"] != sorted(victims):
            bad.append(f"victims: gangs that lost members {fig['victims']}, want exactly {sorted(victims)}")
        partial = [g["name"] for g in gangs if g["evicted"] and not g["evictedAllUnfinished"]]
        if partial:
            bad.append(f"victims: gangs only partly evicted: {partial}")
    return bad


ROWS = [
    ("pods", "pods"), ("gangCount", "gangs"), ("assembled", "gangs that reached minMember"),
    ("completed", "gangs completed"), ("leftPartial", "gangs left below minMember, holding GPUs"),
    ("broken", "gangs broken by eviction"), ("victims", "gangs that lost members"),
    ("evictedPods", "pods evicted"),
    ("partialGpuSeconds", "partial GPU-s (held below minMember, incl. bind ramp)"),
    ("neverAssembledGpuSeconds", "GPU-s held by gangs never at minMember"),
    ("assemblyP50Seconds", "gang assembly p50 s (first to minMember-th bind)"),
    ("assemblyMaxSeconds", "gang assembly max s"),
    ("waitP50Seconds", "gang wait p50 s (creation to minMember bound)"), ("waitMaxSeconds", "gang wait max s"),
    ("workGpuSeconds", "work GPU-s"), ("workDoneGpuSeconds", "work GPU-s done (by the end of the run)"),
    ("idealSeconds", "ideal makespan s (work / cluster GPUs)"),
    ("makespanSeconds", "makespan s (first create to last finish)"), ("makespanRatio", "makespan / ideal"),
    ("occupancy", "GPU occupancy over the makespan"), ("heldGpuSeconds", "GPU-s held"),
    ("overcommitCount", "over-commits"), ("runSeconds", "recorded s"),
    ("oneRackRate", "gangs run whole in one rack (fraction)"),
    ("unplaceableBoundPods", "pods bound of the gang no rack holds"),
    ("unplaceableGpuSeconds", "GPU-s held by the gang no rack holds"),
]


fmt = figures.compact  # a table cell


def table(figs, show_gangs=()):
    names = list(figs)
    cols = figures.Columns(names, [label for _, label in ROWS])
    lines = [cols.header()]
    for key, label in ROWS:
        if all(key not in figs[n] for n in names):
            continue  # a figure of other scenarios (the rack rows)
        cells = []
        for n in names:
            v = fmt(figs[n].get(key))
            if key == "makespanSeconds" and figs[n]["workDoneGpuSeconds"] < figs[n]["workGpuSeconds"]:
                v = f"> {figs[n]['runSeconds']:g}"  # unfinished when the run stopped
            cells.append(v)
        lines.append(cols.row(label, cells))
    lines += snapshot_rows(figs, cols) + gang_rows(figs, cols, show_gangs) + mark_rows(figs, cols)
    for n in names:
        for key, label in ROWS:
            if isinstance(figs[n].get(key), list) and figs[n][key]:
                lines.append(f"{n}: {label}: {', '.join(figs[n][key])}")
        for m, gangs in figs[n]["partBoundAtMarks"].items():
            if gangs:
                lines.append(f"{n}: gangs bound in part at mark {m}: {', '.join(gangs)}")
    return "\n".join(lines)


def snapshot_rows(figs, cols):
    """Bound members per gang at --snapshot-at, when asked for."""
    if not any("boundAt" in f for f in figs.values()):
        return []
    at = next(f["boundAt"]["seconds"] for f in figs.values() if "boundAt" in f)
    gangs = sorted({g for f in figs.values() for g in f.get("boundAt", {}).get("gangs", {})})
    return [cols.row(f"bound members of {g} at +{at:g} s",
                     [fmt(figs[n].get("boundAt", {}).get("gangs", {}).get(g)) for n in cols.names])
            for g in gangs]


def gang_rows(figs, cols, show_gangs):
    """The wait and assembly of each --show-gang gang."""
    lines = []
    for g in show_gangs:
        for key, label in (("assembledAt", "wait s (creation to minMember bound)"),
                           ("assemblySeconds", "assembly s")):
            cells = []
            for n in cols.names:
                x = figs[n]["gangs"].get(g)
                v = x and x[key]
                if v is not None and key == "assembledAt":
                    v = round(v - x["createdAt"], 2)
                cells.append(fmt(v))
            lines.append(cols.row(f"gang {g}: {label}", cells))
    return lines


def mark_rows(figs, cols):
    """Each mark's time and the gangs bound in part then, in time order."""
    marks = sorted({m for f in figs.values() for m in f["marks"]},
                   key=lambda m: min(f["marks"][m] for f in figs.values() if m in f["marks"]))
    lines = []
    for m in marks:
        lines.append(cols.row(f"mark {m} at s", [fmt(figs[n]["marks"].get(m)) for n in cols.names]))
        lines.append(cols.row("  gangs bound in part then", [fmt(figs[n]["partBoundAtMarks"].get(m))
                                                            for n in cols.names]))
    return lines


def write_outcome(figs, failed, json_path):
    """The figures and failed checks as JSON (when asked for), and each
    failed check on stdout."""
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"figures": figs, "failed": failed}, f, indent=1, sort_keys=True)
    for msg in failed:
        print(f"CHECK FAILED {msg}")


def report(args):
    figs = {}
    for side in args.side:
        name, _, path = side.partition("=")
        records = load(path)
        figs[name] = analyze(records, args.snapshot_at)
        if args.racks:
            with open(args.racks) as f:
                figs[name].update(rack_figures(records, json.load(f), args.unplaceable))
    print(table(figs, args.show_gang))
    victims = args.victims.split(",") if args.victims is not None else None
    failed = []
    for name, fig in figs.items():
        if not name.startswith("muster"):
            continue
        for msg in checks(fig, set(args.check), args.max_makespan_ratio, args.max_assembly, victims):
            failed.append(f"{name}: {msg}")
    write_outcome(figs, failed, args.json)
    if not failed and any(n.startswith("muster") for n in figs):
        print(f"checks passed on {', '.join(n for n in figs if n.startswith('muster'))}: {', '.join(sorted(args.check)) or 'none'}"
              + (f", makespan <= {args.max_makespan_ratio} x ideal" if args.max_makespan_ratio else "")
              + (f", assembly <= {args.max_assembly} s" if args.max_assembly else "")
              + (f", victims = {victims}" if victims is not None else ""))
    return 1 if failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("workload")
    w.add_argument("kind")
    w.add_argument("--scheduler", default="volcano")
    w.add_argument("--gated", action="store_true")
    peer = w.add_mutually_exclusive_group()
    peer.add_argument("--upstream", action="store_true")
    peer.add_argument("--kueue", metavar="QUEUE")
    w.add_argument("--seed", type=int, default=3)
    w.add_argument("--waves", default="20,12,16")
    r = sub.add_parser("record")
    r.add_argument("cluster_dir")
    r.add_argument("namespace")
    r.add_argument("out")
    r.add_argument("--ready", required=True)
    r.add_argument("--stop", required=True)
    r.add_argument("--status", required=True)
    r.add_argument("--rendezvous", action="store_true")
    s = sub.add_parser("submit")
    s.add_argument("cluster_dir")
    s.add_argument("namespace")
    s.add_argument("file")
    p = sub.add_parser("report")
    p.add_argument("--side", action="append", default=[], help="NAME=LOG")
    p.add_argument("--check", action="append", default=[],
                   choices=["overcommit", "complete", "no-partial", "annotations", "serial", "podgroup",
                            "podgroup-wait", "one-rack"])
    p.add_argument("--max-makespan-ratio", type=float)
    p.add_argument("--max-assembly", type=float)
    p.add_argument("--victims")
    p.add_argument("--snapshot-at", type=float)
    p.add_argument("--show-gang", action="append", default=[], help="also show this gang's wait")
    p.add_argument("--racks", help="JSON map node -> rack")
    p.add_argument("--unplaceable", action="append", default=[], help="a gang that fits no rack")
    p.add_argument("--json")
    args = ap.parse_args(argv[1:])
    if args.cmd == "workload":
        waves = [float(x) for x in args.waves.split(",")]
        json.dump(workload(args.kind, args.scheduler, args.gated, args.seed, waves, args.upstream, args.kueue),
                  sys.stdout)
        return 0
    if args.cmd == "record":
        return record(args)
    if args.cmd == "submit":
        return submit(args)
    return report(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
