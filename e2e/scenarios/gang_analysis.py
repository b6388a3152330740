"""Analysis of one side's gang log (gang_report.py report; pure, stdlib
only): the log replayed into each pod's life, then the figures per gang and
per side that gang_report.py's docstring defines. The log's line format is
gang_recorder.py's; queue_report.py reads the same replay."""

import collections
import types

from gang_workload import TERMINAL
from harness import figures


class PodLife:
    def __init__(self, v, t):
        self.name, self.gang, self.min, self.work, self.gpus = v["name"], v["gang"], v["min"], v["work"], v["gpus"]
        self.created = t
        self.node = None
        self.bind = self.release = None  # times
        self.gone = None  # when it ended (terminal phase or deleted), bound or not
        self.leaving = None  # when it was first seen terminating (deletionTimestamp) while bound
        self.bind_seq = self.release_seq = None  # order in the log
        self.outcome = None  # Succeeded, Failed, evicted
        self.last = v


def replay(records):
    """One side's log replayed: node GPU capacity, each pod's life (PodLife by
    name), PodGroup lines by name, marks, gang start times, GPU over-commits
    (in the watch's order) and the time of the last line."""
    run = types.SimpleNamespace(capacity={}, pods={}, pgs=collections.defaultdict(list), marks=[], start_t={},
                                over=[], t_end=max((r["t"] for r in records), default=0.0))
    pods, used = run.pods, collections.Counter()
    for seq, r in enumerate(records):
        kind, t = r.get("kind"), r["t"]
        if kind == "meta":
            run.capacity = r["nodes"]
        elif kind == "pg":
            run.pgs[r["name"]].append(r)
        elif kind == "mark":
            run.marks.append(r)
        elif kind == "start":
            run.start_t.setdefault(r["gang"], t)
        elif kind == "pod":
            p = pods.get(r["name"])
            if p is None:
                p = pods[r["name"]] = PodLife(r, t)
            p.last = r if r["ev"] != "DELETED" else p.last
            if r["node"] and p.bind is None:
                p.node, p.bind, p.bind_seq = r["node"], t, seq
                used[p.node] += p.gpus
                if used[p.node] > run.capacity.get(p.node, 0):
                    run.over.append({"t": t, "node": p.node, "gpus": used[p.node],
                                     "capacity": run.capacity.get(p.node, 0), "pod": p.name})
            if r.get("terminating") and p.bind is not None and p.release is None and p.leaving is None:
                p.leaving = t
            ended = r["ev"] == "DELETED" or r["phase"] in TERMINAL
            if ended and p.gone is None:
                p.gone = t
            if ended and p.release is None and p.bind is not None:
                p.release, p.release_seq = t, seq
                p.outcome = r["phase"] if r["phase"] in TERMINAL else "evicted"
                used[p.node] -= p.gpus
            elif ended and p.outcome is None:
                p.outcome = r["phase"] if r["phase"] in TERMINAL else "deleted"
    return run




def analyze(records, snapshot_at=None):
    """Figures of one side's log (see gang_report.py's docstring)."""
    run = replay(records)
    pods = run.pods
    gangs = collections.defaultdict(list)
    for p in pods.values():
        if p.gang:
            gangs[p.gang].append(p)
    t0 = min((p.created for p in pods.values()), default=0.0)
    out = {"gangs": {name: gang_figures(name, members, run.t_end, run.pgs.get(name, []), run.start_t.get(name))
                     for name, members in sorted(gangs.items())}}
    g = out["gangs"].values()
    out.update(work_figures(run, t0))
    out.update(gang_totals(g))
    out.update({
        "overcommits": run.over[:10], "overcommitCount": len(run.over),
        "badAnnotations": bad_annotations(pods.values()),
        "marks": {m["name"]: round(m["t"] - t0, 2) for m in run.marks},  # the last of each name
        # Gangs bound in part at each mark (a crash there hits them mid-binding).
        "partBoundAtMarks": {m["name"]: sorted(
            x["name"] for x in g if x["firstBind"] is not None and x["firstBind"] < m["t"]
            and (x["assembledAt"] is None or x["assembledAt"] > m["t"])) for m in run.marks},
    })
    if snapshot_at is not None:
        at = t0 + snapshot_at
        out["boundAt"] = {"seconds": snapshot_at, "gangs": {
            name: sum(1 for p in members if p.bind is not None and p.bind <= at and (p.release is None or p.release > at))
            for name, members in sorted(gangs.items())}}
    return out


def work_figures(run, t0):
    """The side's pods, cluster, work, makespan and GPU-seconds held."""
    capacity, pods, t_end = run.capacity, run.pods, run.t_end
    work_pods = [p for p in pods.values() if p.work is not None]
    total_gpus = sum(capacity.values())
    work = sum(p.gpus * p.work for p in work_pods)
    finished = [p.release for p in work_pods if p.outcome == "Succeeded"]
    # A makespan only for workloads that end: every pod has work and succeeded.
    all_done = bool(work_pods) and len(work_pods) == len(pods) and all(p.outcome == "Succeeded" for p in work_pods)
    makespan = (max(finished) - t0) if all_done else None
    ideal = work / total_gpus if total_gpus else 0.0
    held = sum(((p.release or t_end) - p.bind) * p.gpus for p in pods.values() if p.bind is not None)
    in_makespan = 0.0
    if makespan:
        t1 = t0 + makespan
        in_makespan = sum((min(p.release or t_end, t1) - p.bind) * p.gpus
                          for p in pods.values() if p.bind is not None and p.bind < t1)
    return {
        "pods": len(pods), "clusterGpus": total_gpus, "nodes": len(capacity),
        "runSeconds": round(t_end - t0, 2),
        "heldGpuSeconds": round(held, 1),
        "workGpuSeconds": round(work, 1),
        "workDoneGpuSeconds": round(sum(p.gpus * p.work for p in work_pods if p.outcome == "Succeeded"), 1),
        "idealSeconds": round(ideal, 2),
        "makespanSeconds": round(makespan, 2) if makespan is not None else None,
        "makespanRatio": round(makespan / ideal, 3) if makespan is not None and ideal else None,
        "occupancy": round(in_makespan / (makespan * total_gpus), 3) if makespan else None,
    }


def gang_totals(g):
    """Counts, partial GPU-seconds, waits and assembly times over the gangs'
    figures `g` (medians: the lower middle value)."""
    assembly = sorted(x["assemblySeconds"] for x in g if x["assemblySeconds"] is not None)
    waits = sorted(x["assembledAt"] - x["createdAt"] for x in g if x["assembledAt"] is not None)
    return {
        "gangCount": len(g),
        "assembled": sum(1 for x in g if x["assembledAt"] is not None),
        "completed": sum(1 for x in g if x["completed"]),
        "leftPartial": sorted(x["name"] for x in g if x["leftPartial"]),
        "broken": sorted(x["name"] for x in g if x["broken"]),
        "victims": sorted(x["name"] for x in g if x["evicted"]),
        "evictedPods": sum(x["evicted"] for x in g),
        "partialGpuSeconds": round(sum(x["partialGpuSeconds"] for x in g), 1),
        "neverAssembledGpuSeconds": round(sum(x["partialGpuSeconds"] for x in g if x["assembledAt"] is None), 1),
        "waitP50Seconds": round(figures.lower_median(waits), 2) if waits else None,
        "waitMaxSeconds": round(waits[-1], 2) if waits else None,
        "assemblyMaxSeconds": round(assembly[-1], 2) if assembly else None,
        "assemblyP50Seconds": round(figures.lower_median(assembly), 2) if assembly else None,
    }


def held_below_min(members, need, t_end):
    """Integrates a gang's GPUs held while fewer than `need` members are
    bound, in the log's order: (GPU-seconds, when it first reached `need` or
    None, whether it dropped below with GPUs held afterwards, members counted
    at the end)."""
    events = []
    for p in members:
        if p.bind is None:
            continue
        events.append((p.bind_seq, p.bind, +1, p.gpus))
        if p.release is not None:
            events.append((p.release_seq, p.release, -1 if p.outcome != "Succeeded" else 0, -p.gpus))
    events.sort()
    count = held = 0
    partial = 0.0
    last_t = None
    assembled = None
    dropped_after = False
    for _, t, dc, dg in events:
        if last_t is not None and count < need:
            partial += held * (t - last_t)
        count += dc
        held += dg
        last_t = t
        if assembled is None and count >= need:
            assembled = t
        elif assembled is not None and count < need and held > 0:
            dropped_after = True
    if last_t is not None and count < need:
        partial += held * (t_end - last_t)
    return partial, assembled, dropped_after, count


def gang_figures(name, members, t_end, pg_records, start_t):
    """One gang's figures: its GPUs held while fewer than minMember members
    are bound (a member counts from its bind until it is evicted or fails;
    one that succeeded still counts, so a gang's finishing is not
    "partial"), assembly, completion, eviction and PodGroup."""
    need = max(p.min for p in members)
    partial, assembled, dropped_after, count = held_below_min(members, need, t_end)
    binds = [p.bind for p in members if p.bind is not None]
    evicted = [p for p in members if p.outcome == "evicted"]
    holding_end = [p for p in members if p.bind is not None and p.release is None]
    has_work = all(p.work is not None for p in members)
    created = min(p.created for p in members)
    completed = has_work and all(p.outcome == "Succeeded" for p in members)
    last_pg = pg_records[-1] if pg_records else None
    first_bind = min(binds) if binds else None
    # A gang that waited for capacity (first bind 5 s or more after its
    # creation) should have told its users why, on its PodGroup.
    waited = first_bind is None or first_bind - created >= 5
    waited_unschedulable = any(
        c[0] == "Unschedulable" and c[1] == "True" for r in pg_records
        if first_bind is None or r["t"] <= first_bind for c in r["conditions"])
    return {
        "name": name, "members": len(members), "minMember": need, "gpus": sum(p.gpus for p in members),
        "createdAt": created, "hasWork": has_work, "waited": waited,
        "firstBind": first_bind, "assembledAt": assembled,
        "assemblySeconds": round(assembled - min(binds), 3) if assembled is not None else None,
        "startedAt": start_t,
        "doneAt": max(p.release for p in members) if completed else None,
        "completed": completed,
        "partialGpuSeconds": round(partial, 2),
        "leftPartial": bool(holding_end) and count < need,
        "broken": dropped_after and bool(holding_end),
        "evicted": len(evicted),
        "evictedAllUnfinished": bool(evicted) and not holding_end,
        "podGroup": {"phase": last_pg["phase"], "succeeded": last_pg["succeeded"],
                     "conditions": last_pg["conditions"]} if last_pg else None,
        "waitedUnschedulable": waited_unschedulable,
    }


def bad_annotations(pods):
    """Bound volcano pods without muster's placement annotations. A gang of
    one needs no gang plan: once its pod carries no gate (an extender restart
    may find the gate lifted and the reservation gone) it is bound like any
    pod (extender/gang_inputs.cc, PassPlans)."""
    bad = []
    for p in pods:
        v = p.last
        if p.bind is None or v.get("sched") != "volcano":
            continue
        needs_plan = (v.get("min") or 0) > 1
        if v.get("mnode") != p.node or (needs_plan and not v.get("plan")):
            bad.append(f"{p.name}: on {p.node}, muster.io/node={v.get('mnode')}, gang-plan={v.get('plan')}")
    return sorted(bad)


def rack_figures(records, node_racks, unplaceable=()):
    """Where the gangs ran, by rack (node_racks: node name -> rack; a node
    missing from it is a rack of its own). A gang with work must run whole in
    one rack; an `unplaceable` gang (it must share a rack and no rack has room
    for it) must never get a pod bound."""
    run = replay(records)
    racks, bound = collections.defaultdict(set), collections.defaultdict(list)
    for p in run.pods.values():
        if p.gang and p.bind is not None:
            racks[p.gang].add(node_racks.get(p.node, p.node))
            bound[p.gang].append(p)
    with_work = sorted({p.gang for p in run.pods.values()
                        if p.gang and p.gang not in unplaceable and p.work is not None})
    one_rack = [g for g in with_work if len(racks[g]) == 1 and len(bound[g]) == sum(
        1 for p in run.pods.values() if p.gang == g)]
    held = sum(p.gpus * ((p.release or run.t_end) - p.bind) for g in unplaceable for p in bound[g])
    return {
        "racksOfGangs": {g: sorted(r) for g, r in sorted(racks.items())},
        "rackGangs": len(with_work), "oneRackGangs": len(one_rack),
        "oneRackRate": round(len(one_rack) / len(with_work), 3) if with_work else None,
        "notOneRack": [g for g in with_work if g not in one_rack],
        "unplaceableBoundPods": sum(len(bound[g]) for g in unplaceable),
        "unplaceableGpuSeconds": round(held, 2),
    }
