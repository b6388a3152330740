#!/usr/bin/env python3
"""The failover scenario's workload, monitor and figures (e2e/scenarios/failover.sh;
stdlib only). Pods and PodGroups are gang_workload's, the pod log is
gang_report.py record's (one JSON line per pod change, receipt time "t",
the scenario's marks `kill-<k>-<replica>` / `restart-<replica>` in it).

Subcommands:
  chunks --seed N --gangs A,B,... --prefix P --out-prefix FILE [--max-gpus G] [--work LO,HI]
      Write one v1 List per chunk (FILE-<i>.json): chunk i holds the i-th
      count of gangs named P<i>-g<k>, each 1-8 pods x 1/2/4/8 GPUs (seeded;
      at most G GPUs per chunk, default 112 of the cluster's 256, so a chunk
      submitted during a failover finds room), work LO-HI s (default 10,20),
      gated (muster.io/gang), schedulerName volcano.
  monitor CLUSTER_DIR --out LOG --status FILE --stop FILE [--interval S]
      Every S s (default 0.5) until FILE exists (or the parent is gone):
      list every pod and node, sum the nvidia.com/gpu of bound pods that are
      not Succeeded/Failed per node against its allocatable (a node above it
      is a double booking), read the Leases volcano-scheduler and
      muster-reconciler in muster-e2e and the leader gauges of every
      extender and reconciler of the state file; one JSON line per poll.
  first-bind LOG T
      Exit 0 when LOG holds a pod bound (spec.nodeName set) at t > T.
  report --phase NAME=LOG ... --workload FILE ... --monitor LOG [--json FILE]
         [--target S] [--fail-above S] [--grace S]
      The figures (below) and checks; exit 1 when a check fails.

Failover time, per `kill-*` mark: from the mark (taken just before
`cluster.sh replica kill`) to the first pod bound after it, i.e. the first
write of the new leader's kube-scheduler + extender. Binds received within
--grace s (default 1) of the kill are the dead leader's requests already in
flight and do not count (a new leader cannot take the Lease that fast: it
waits for the Lease to expire, 8 s). The scenario submits a chunk of gated
gangs right after each kill, so pods are pending throughout. Also shown: the
kill to the Lease's new holder (kube-scheduler's election), and the same for
the reconciler's Lease when its leader was killed too.
"""

import argparse
import json
import os
import random
import sys
import time
import urllib.request

from gang_workload import GPU, TERMINAL, gang_pod, pod_group
from harness import cluster, figures, recording

NAMESPACE = "muster-e2e"
LEASES = {"sched": "volcano-scheduler", "rec": "muster-reconciler"}


# --- workload ---------------------------------------------------------------------
def chunk_gangs(rng, count, max_gpus, work):
    """`count` gangs (pods, gpus per pod, work s) of at most `max_gpus` GPUs
    together (each at least one 1-GPU pod)."""
    gangs, left = [], max_gpus
    for k in range(count):
        reserve = count - k - 1  # one GPU for each gang still to come
        gpus = rng.choice([g for g in (1, 2, 4, 8) if g <= left - reserve] or [1])
        pods = rng.randint(1, max(1, min(8, (left - reserve) // gpus)))
        gangs.append((pods, gpus, rng.randint(work[0], work[1])))
        left -= pods * gpus
    return gangs


def chunk_items(prefix, index, gangs):
    items = []
    for k, (pods, gpus, work) in enumerate(gangs):
        name = f"{prefix}{index}-g{k:02d}"
        items.append(pod_group(name, pods))
        items += [gang_pod(name, i, gpus, pods, "volcano", work, gated=True) for i in range(pods)]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def cmd_chunks(args):
    rng = random.Random(args.seed)
    lo, hi = (int(x) for x in args.work.split(","))
    for i, count in enumerate(int(c) for c in args.gangs.split(",")):
        with open(f"{args.out_prefix}-{i}.json", "w") as f:
            json.dump(chunk_items(args.prefix, i, chunk_gangs(rng, count, args.max_gpus, (lo, hi))), f)
    return 0


# --- monitor ----------------------------------------------------------------------
def overbooked(pods, allocatable):
    """{node: [used, allocatable]} for every node whose bound, unfinished
    pods ask for more GPUs than it has."""
    used = {}
    for p in pods:
        node = p["spec"].get("nodeName")
        if node and (p.get("status") or {}).get("phase") not in TERMINAL:
            used[node] = used.get(node, 0) + gpu_of(p)
    return {n: [u, allocatable.get(n, 0)] for n, u in used.items() if u > allocatable.get(n, 0)}


def gpu_of(pod):
    total = 0
    for c in pod["spec"].get("containers") or []:
        res = c.get("resources") or {}
        v = (res.get("limits") or {}).get(GPU) or (res.get("requests") or {}).get(GPU)
        total += int(v) if v else 0
    return total


def holder_host(identity):
    """kube-scheduler's "<hostname>_<uuid>" -> hostname; "" -> None."""
    return identity.split("_", 1)[0] if identity else None


def gauge(port, name):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=0.5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def state_ports(cluster_dir):
    with open(os.path.join(cluster_dir, "state")) as f:
        return {p[1]: int(p[2]) for p in (line.split() for line in f) if p[:1] == ["port"]}


def cmd_monitor(args):
    api = cluster.Api(args.cluster_dir)
    ports = state_ports(args.cluster_dir)
    sidecars = {n: p for n, p in ports.items() if n.split("-")[0] in ("extender", "reconciler")}
    alloc = {n["metadata"]["name"]: cluster.node_allocatable(n, GPU) for n in api.get("/api/v1/nodes")["items"]}
    out = recording.JsonLog(args.out)
    parent = os.getppid()
    polls = bad = errors = 0
    while not os.path.exists(args.stop) and os.getppid() == parent:
        t0 = time.time()
        rec = {"kind": "poll", "t": round(t0, 3)}
        try:
            pods = api.get("/api/v1/pods")["items"]
            leases = api.get(f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases")["items"]
        except (RuntimeError, ValueError, *cluster.CONNECTION_ERRORS) as e:
            errors += 1
            out.write({"kind": "error", "t": round(t0, 3), "what": str(e)[:200]})
            time.sleep(args.interval)
            continue
        over = overbooked(pods, alloc)
        by_name = {le["metadata"]["name"]: le.get("spec") or {} for le in leases}
        for key, lease in LEASES.items():
            spec = by_name.get(lease, {})
            rec[key] = holder_host(spec.get("holderIdentity"))
            rec[key + "_id"] = spec.get("holderIdentity") or None
        rec["leading"] = sorted(n for n, p in sidecars.items()
                                if gauge(p, f"muster_{n.split('-')[0]}_leader") == 1)
        rec["pending"] = sum(1 for p in pods if not p["spec"].get("nodeName"))
        rec["gpus"] = sum(gpu_of(p) for p in pods
                          if p["spec"].get("nodeName") and (p.get("status") or {}).get("phase") not in TERMINAL)
        if over:
            rec["overbooked"] = over
            bad += 1
        polls += 1
        out.write(rec)
        recording.write_json_atomic(args.status, {"polls": polls, "overbooked": bad, "errors": errors,
                                                  "sched": rec["sched"], "rec": rec["rec"]})
        time.sleep(max(0.0, args.interval - (time.time() - t0)))
    return 0


# --- figures ----------------------------------------------------------------------
def bind_times(records):
    """[(t, pod)] of every pod's change from unbound to bound, in log order."""
    nodes, binds = {}, []
    for r in records:
        if r.get("kind") != "pod":
            continue
        if r["node"] and not nodes.get(r["name"]):
            binds.append((r["t"], r["name"]))
        nodes[r["name"]] = r["node"] if r["ev"] != "DELETED" else None
    return binds


def kills(records):
    """[(mark name, t)] of the marks `kill-<k>-<replica>` (SIGKILL) and
    `stop-<k>-<replica>` (SIGTERM of the leader in a rolling restart)."""
    return [(r["name"], r["t"]) for r in records
            if r.get("kind") == "mark" and r["name"].startswith(("kill-", "stop-"))]


def failovers(records, polls, grace=1.0):
    """Per kill mark: failover s (kill to the first bind after kill + grace),
    binds within the grace, pending pods at that bind, the Lease takeover of
    kube-scheduler (and of the reconciler if its leader died with the replica)."""
    binds = bind_times(records)
    out = []
    for name, t in kills(records):
        row = {"kill": name, "t": t, "failover": None, "inflight": 0, "sched_takeover": None,
               "rec_takeover": None}
        row["inflight"] = sum(1 for b, _ in binds if t < b <= t + grace)
        after = [b for b, _ in binds if b > t + grace]
        if after:
            row["failover"] = round(after[0] - t, 3)
        before = [p for p in polls if p["t"] <= t]
        last = before[-1] if before else {}
        victim = name.split("-", 2)[2] if name.count("-") >= 2 else None
        for key in ("sched", "rec"):
            if last.get(key) is None or last[key] != victim:
                continue  # that Lease's leader was not on the killed replica
            # A new holder: another identity (kube-scheduler's carries a
            # uuid per process, so a restarted one on the same replica counts).
            idk = key + "_id" if key + "_id" in last else key
            was = last[idk]
            took = [p for p in polls if p["t"] > t and p.get(idk) and p[idk] != was]
            if took:
                row[f"{key}_takeover"] = round(took[0]["t"] - t, 3)
        out.append(row)
    return out


def last_views(records):
    """{pod name: last view} (DELETED pods marked deleted)."""
    views = {}
    for r in records:
        if r.get("kind") == "pod":
            views[r["name"]] = dict(r, deleted=r["ev"] == "DELETED")
    return views


def gang_outcome(records, workload_items):
    """Per-gang pod counts against the workload: completed gangs, gangs
    below minMember at the end, pods lost (created but missing, deleted or
    Failed), pods duplicated (seen but not in the workload), pods deleted."""
    want = {}
    mins = {}
    for it in workload_items:
        if it["kind"] == "Pod":
            g = it["metadata"]["labels"]["e2e.muster.io/gang"]
            want.setdefault(g, set()).add(it["metadata"]["name"])
        elif it["kind"] == "PodGroup":
            mins[it["metadata"]["name"]] = it["spec"]["minMember"]
    views = last_views(records)
    seen = {}
    for v in views.values():
        seen.setdefault(v["gang"], set()).add(v["name"])
    res = {"gangs": len(want), "completed": 0, "below_min": [], "lost": [], "duplicated": [], "failed": [],
           "deleted": sorted(n for n, v in views.items() if v["deleted"])}
    for g, names in sorted(want.items()):
        live = [views[n] for n in names if n in views and not views[n]["deleted"]]
        res["lost"] += sorted(names - {v["name"] for v in live})
        res["duplicated"] += sorted(seen.get(g, set()) - names)
        res["failed"] += sorted(v["name"] for v in live if v["phase"] == "Failed")
        ok = sum(1 for v in live if v["phase"] == "Succeeded" or (v["node"] and v["phase"] != "Failed"))
        if ok < mins.get(g, len(names)):
            res["below_min"].append(g)
        if len(live) == len(names) and all(v["phase"] == "Succeeded" for v in live):
            res["completed"] += 1
    res["duplicated"] += sorted(n for g, ns in seen.items() if g not in want for n in ns)
    return res


def poll_figures(polls):
    ts = [p["t"] for p in polls]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    return {"polls": len(polls), "overbooked_polls": sum(1 for p in polls if p.get("overbooked")),
            "two_leading_extenders": sum(1 for p in polls
                                         if sum(1 for n in p.get("leading", []) if n.startswith("extender")) > 1),
            "two_leading_reconcilers": sum(1 for p in polls
                                           if sum(1 for n in p.get("leading", []) if n.startswith("reconciler")) > 1),
            "max_gap": round(max(gaps), 3) if gaps else None,
            "rate_hz": round((len(ts) - 1) / (ts[-1] - ts[0]), 2) if len(ts) > 1 and ts[-1] > ts[0] else None}


def evaluate(phases, workload_items, polls, target=15.0, fail_above=30.0, grace=1.0):
    """(figures dict, [failed check messages]) over every phase."""
    fig = {"phases": {}, "monitor": poll_figures(polls)}
    failed = []
    all_fail = []
    for name, records in phases.items():
        out = gang_outcome(records, [it for it in workload_items if it["_phase"] == name])
        fo = failovers(records, polls, grace)
        fig["phases"][name] = {"outcome": out, "failovers": fo}
        all_fail += [row for row in fo if row["kill"].startswith("kill-")]
        if out["completed"] != out["gangs"]:
            failed.append(f"{name}: {out['gangs'] - out['completed']} of {out['gangs']} gangs did not complete")
        for key in ("below_min", "lost", "duplicated", "failed", "deleted"):
            if out[key]:
                failed.append(f"{name}: {key} {out[key][:10]}")
        for row in fo:
            if row["failover"] is None and row["kill"].startswith("kill-"):
                failed.append(f"{name}: no pod was bound after {row['kill']}")
    times = [r["failover"] for r in all_fail if r["failover"] is not None]
    fig["failover"] = {"n": len(times), "times": times, "p50": figures.nearest_rank(times, 0.5),
                       "p99": figures.nearest_rank(times, 0.99), "target": target, "fail_above": fail_above}
    p99 = fig["failover"]["p99"]
    fig["failover"]["target_met"] = p99 is not None and p99 <= target
    if p99 is not None and p99 > fail_above:
        failed.append(f"failover p99 {p99:.1f} s > {fail_above:.0f} s")
    m = fig["monitor"]
    if m["overbooked_polls"]:
        failed.append(f"{m['overbooked_polls']} polls saw GPUs double booked")
    if m["two_leading_extenders"] or m["two_leading_reconcilers"]:
        failed.append(f"two leaders at once: extenders in {m['two_leading_extenders']} polls, "
                      f"reconcilers in {m['two_leading_reconcilers']}")
    if m["polls"] == 0 or (m["max_gap"] or 0) > 2.5:
        failed.append(f"monitor polls too sparse: {m['polls']} polls, max gap {m['max_gap']} s")
    return fig, failed


def fmt(x, unit=" s"):
    return "-" if x is None else f"{x:.1f}{unit}"


def text(fig, failed):
    lines = []
    for name, ph in fig["phases"].items():
        o = ph["outcome"]
        lines.append(f"{name}: gangs {o['gangs']}, completed {o['completed']}, below minMember "
                     f"{len(o['below_min'])}, pods lost {len(o['lost'])}, duplicated {len(o['duplicated'])}, "
                     f"failed {len(o['failed'])}, deleted {len(o['deleted'])}")
        for r in ph["failovers"]:
            lines.append(f"  {r['kill']:<24} failover {fmt(r['failover']):>7}  kube-scheduler Lease taken "
                         f"{fmt(r['sched_takeover']):>7}  reconciler Lease taken {fmt(r['rec_takeover']):>7}"
                         f"  in-flight binds {r['inflight']}")
    f = fig["failover"]
    lines.append(f"failover time (kill -> first bind by the new leader) over {f['n']} kills: "
                 f"{', '.join(f'{t:.1f}' for t in f['times'])} s; p50 {fmt(f['p50'])}, p99 {fmt(f['p99'])}")
    lines.append(f"target p99 <= {f['target']:.0f} s: {'met' if f['target_met'] else 'NOT MET'} "
                 f"(fails above {f['fail_above']:.0f} s)")
    m = fig["monitor"]
    lines.append(f"monitor: {m['polls']} polls at {m['rate_hz']} Hz (max gap {m['max_gap']} s), "
                 f"double-booked polls {m['overbooked_polls']}, polls with two leading extenders "
                 f"{m['two_leading_extenders']}, with two leading reconcilers {m['two_leading_reconcilers']}")
    lines += [f"FAIL: {x}" for x in failed] or ["all checks passed"]
    return "\n".join(lines)


def cmd_report(args):
    phases = {}
    for spec in args.phase:
        name, path = spec.split("=", 1)
        phases[name] = recording.read_log(path)
    items = []
    for spec in args.workload:
        name, path = spec.split("=", 1)
        with open(path) as f:
            items += [dict(it, _phase=name) for it in json.load(f)["items"]]
    polls = [r for r in recording.read_log(args.monitor) if r.get("kind") == "poll"]
    fig, failed = evaluate(phases, items, polls, args.target, args.fail_above, args.grace)
    print(text(fig, failed))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(fig, failed=failed), f, indent=1)
    return 1 if failed else 0


def cmd_first_bind(args):
    after = float(args.t)
    records = []
    with open(args.log) as f:
        for line in f:
            try:
                records.append(json.loads(line))
            except ValueError:
                pass  # the line being written
    return 0 if any(t > after for t, _ in bind_times(records)) else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("chunks")
    c.add_argument("--seed", type=int, default=7)
    c.add_argument("--gangs", required=True)
    c.add_argument("--prefix", required=True)
    c.add_argument("--out-prefix", required=True)
    c.add_argument("--max-gpus", type=int, default=112)
    c.add_argument("--work", default="10,20")
    m = sub.add_parser("monitor")
    m.add_argument("cluster_dir")
    m.add_argument("--out", required=True)
    m.add_argument("--status", required=True)
    m.add_argument("--stop", required=True)
    m.add_argument("--interval", type=float, default=0.5)
    b = sub.add_parser("first-bind")
    b.add_argument("log")
    b.add_argument("t")
    r = sub.add_parser("report")
    r.add_argument("--phase", action="append", default=[], help="NAME=LOG")
    r.add_argument("--workload", action="append", default=[], help="PHASE=FILE")
    r.add_argument("--monitor", required=True)
    r.add_argument("--json")
    r.add_argument("--target", type=float, default=15.0)
    r.add_argument("--fail-above", type=float, default=30.0)
    r.add_argument("--grace", type=float, default=1.0)
    args = ap.parse_args(argv)
    return {"chunks": cmd_chunks, "monitor": cmd_monitor, "first-bind": cmd_first_bind,
            "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
