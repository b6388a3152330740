#!/usr/bin/env python3
"""The chaos scenarios' Volcano Jobs, snapshot and figures (e2e/scenarios/chaos.sh;
stdlib only). The gated gangs, the monitor and the gang outcome are
failover.py's; the pod log is gang_report.py record's, with the scenario's
marks `fault-start` / `fault-end` in it.

Subcommands:
  jobs --seed N --count K --prefix P --out FILE [--max-gpus G] [--run LO,HI] [--big PODS]
      A v1 List of K Volcano Jobs (batch.volcano.sh/v1alpha1) named P-<k>:
      1-4 workers x 1/2/4 GPUs, some with a master task too (seeded; at
      most G GPUs in all, default 48), minAvailable = every pod, schedulerName
      volcano, queue default; their pods run LO-HI s (kwok's
      muster.io/run-seconds; default 6,12). --big PODS: one more Job P-big
      of PODS cpu-only pods (100m) running 5 s (the apiserver-restart case:
      the reconciler is creating its pods when the apiserver goes away).
  plain --seed N --count K --prefix P --out FILE
      A v1 List of K ungated volcano pods P-<k>-0 (1/2/4 GPUs, work 6-12 s,
      played by the recorder), each the one member of its PodGroup P-<k>:
      kube-scheduler sends them to the extender as soon as they exist.
  submit CLUSTER_DIR NAMESPACE FILE
      Create the List's items (Pods, PodGroups, Jobs) in order over the
      cluster's admin credentials; a connection fault is retried for 60 s.
  jobs-done CLUSTER_DIR NAMESPACE
      Exit 0 when every Job in the namespace is Completed (prints the phases).
  snapshot CLUSTER_DIR NAMESPACE OUT
      Jobs, PodGroups and pods of the namespace as they are now (JSON).
  report --pods LOG --workload FILE ... --jobs FILE ... --snapshot FILE --monitor LOG
         [--metrics-before F --metrics-after F] [--zero SERIES ...]
         [--no-binds-during] [--grace S] [--json FILE] [--title T]
      The figures and checks (exit 1 when one fails):
        - the monitor: no poll saw a node's bound, unfinished pods ask for
          more GPUs than it has (double booking); polls at least every 2.5 s
          outside the fault window (inside it the apiserver may be away);
        - gangs (failover.gang_outcome, against the workload): all complete,
          none below minMember, no pod lost, duplicated, failed or deleted;
        - Jobs (snapshot + pod log): none lost (each submitted Job exists),
          none duplicated (no other Job; one PodGroup each; exactly its
          tasks' replicas as pods, none deleted, no second version), each
          Completed with every pod Succeeded;
        - --zero SERIES: that metric's delta (after - before, summed over
          series starting with SERIES) is 0;
        - --no-binds-during: no pod bound between fault-start + grace
          (default 1 s: requests in flight) and fault-end.
      Figures: fault duration, binds during the fault, fault end -> first
      bind, polls, double bookings, gangs and Jobs complete, metric deltas.
"""

import argparse
import json
import random
import re
import sys
import time

import failover as fo
from gang_workload import gang_pod, pod_group
from harness import cluster, recording
from harness.figures import parse_metrics
from placement import fake_gpu_pod_spec

JOB_API = "/apis/batch.volcano.sh/v1alpha1"
RUN = "muster.io/run-seconds"
JOB_LABEL = "volcano.sh/job-name"
UID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Metrics whose deltas are shown (prefixes of series).
SHOWN = ('muster_gang_reservations_total{outcome="expired"}', 'muster_gang_reservations_total{outcome="made"}',
         "muster_extender_bind_failures_total", 'muster_extender_requests_total{verb="bind"',
         "muster_reconciler_syncs_total", "muster_reconciler_api_writes_total{verb=\"create\",resource=\"pods\"}",
         "muster_gang_partial_gpu_seconds_total")


# --- workload ---------------------------------------------------------------------
def job_template(gpus, run):
    """A task's pod template: the scenarios' kwok pod (placement.py), done after `run` s."""
    return {"metadata": {"annotations": {RUN: str(run)}},
            "spec": fake_gpu_pod_spec("volcano", gpus, memory="64Mi")}


def volcano_job(name, tasks, run):
    """tasks: [(task name, replicas, gpus per pod)]."""
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": sum(r for _, r, _ in tasks), "schedulerName": "volcano", "queue": "default",
                     "tasks": [{"name": t, "replicas": r, "template": job_template(g, run)} for t, r, g in tasks]}}


def job_list(seed, count, prefix, max_gpus=48, run=(6, 12), big=0):
    rng = random.Random(seed)
    items, left = [], max_gpus
    for k in range(count):
        reserve = count - k - 1
        gpus = rng.choice([g for g in (1, 2, 4) if g <= max(1, left - reserve)] or [1])
        workers = rng.randint(1, max(1, min(4, (left - reserve) // gpus)))
        tasks = [("worker", workers, gpus)]
        if rng.random() < 0.3:
            tasks.insert(0, ("master", 1, 0))
        items.append(volcano_job(f"{prefix}-{k}", tasks, rng.randint(run[0], run[1])))
        left -= workers * gpus
    if big:
        items.append(volcano_job(f"{prefix}-big", [("worker", big, 0)], 5))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def plain_list(seed, count, prefix, work=(6, 12)):
    """`count` ungated volcano pods, each the one member of its own PodGroup
    (1/2/4 GPUs): kube-scheduler sends them to the extender at once."""
    rng = random.Random(seed)
    items = []
    for k in range(count):
        name = f"{prefix}-{k}"
        items.append(pod_group(name, 1))
        items.append(gang_pod(name, 0, rng.choice((1, 2, 4)), 1, "volcano", rng.randint(work[0], work[1])))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def expected_pods(job):
    return sum(t["replicas"] for t in job["spec"]["tasks"])


def cmd_plain(args):
    with open(args.out, "w") as f:
        json.dump(plain_list(args.seed, args.count, args.prefix), f)
    return 0


def cmd_jobs(args):
    lo, hi = (int(x) for x in args.run.split(","))
    with open(args.out, "w") as f:
        json.dump(job_list(args.seed, args.count, args.prefix, args.max_gpus, (lo, hi), args.big), f)
    return 0


def item_path(ns, kind):
    return {"Pod": f"/api/v1/namespaces/{ns}/pods", "PodGroup": f"{cluster.PG_API}/namespaces/{ns}/podgroups",
            "Job": f"{JOB_API}/namespaces/{ns}/jobs"}[kind]


def cmd_submit(args):
    api = cluster.Api(args.cluster_dir)
    with open(args.file) as f:
        items = json.load(f)["items"]
    conn = None
    for item in items:
        deadline = time.time() + 60
        while True:
            try:
                conn, status, text = cluster.send(api, conn, "POST", item_path(args.namespace, item["kind"]),
                                                  json.dumps(item))
            except cluster.CONNECTION_ERRORS as e:
                conn = None
                if time.time() > deadline:
                    print(f"creating {item['kind']} {item['metadata']['name']}: {e}", file=sys.stderr)
                    return 1
                time.sleep(0.5)
                continue
            if status == 201:
                break
            # 409: a retried POST whose first attempt had been stored.
            if status == 409 and b"AlreadyExists" in text:
                print(f"{item['kind']} {item['metadata']['name']}: created by an earlier attempt", file=sys.stderr)
                break
            if status >= 500 and time.time() < deadline:
                time.sleep(0.5)
                continue
            print(f"creating {item['kind']} {item['metadata']['name']}: HTTP {status} {text[:300]!r}",
                  file=sys.stderr)
            return 1
    return 0


def cmd_jobs_done(args):
    try:
        jobs = cluster.Api(args.cluster_dir).get(f"{JOB_API}/namespaces/{args.namespace}/jobs")["items"]
    except (RuntimeError, ValueError, *cluster.CONNECTION_ERRORS) as e:
        print(f"cannot list Jobs: {e}")
        return 1
    phases = {}
    for j in jobs:
        p = ((j.get("status") or {}).get("state") or {}).get("phase") or "-"
        phases[p] = phases.get(p, 0) + 1
    print(" ".join(f"{p} {n}" for p, n in sorted(phases.items())) or "no Jobs")
    return 0 if jobs and set(phases) == {"Completed"} else 1


def cmd_snapshot(args):
    api = cluster.Api(args.cluster_dir)
    ns = args.namespace
    snap = {"jobs": api.get(f"{JOB_API}/namespaces/{ns}/jobs")["items"],
            "podgroups": api.get(f"{cluster.PG_API}/namespaces/{ns}/podgroups")["items"],
            "pods": api.get(f"/api/v1/namespaces/{ns}/pods")["items"]}
    with open(args.out, "w") as f:
        json.dump(snap, f)
    return 0


# --- figures ----------------------------------------------------------------------
def metric_delta(before, after, prefix):
    """Sum over the series starting with `prefix` of after - before."""
    keys = {k for k in list(before) + list(after) if k.startswith(prefix)}
    return sum(after.get(k, 0.0) - before.get(k, 0.0) for k in keys)


def nonzero_deltas(before, after, prefixes):
    """{series: delta} of every series under `prefixes` that changed."""
    out = {}
    for k in sorted(set(before) | set(after)):
        if any(k.startswith(p) for p in prefixes):
            d = after.get(k, 0.0) - before.get(k, 0.0)
            if d:
                out[k] = round(d, 3)
    return out


def marks(records):
    return {r["name"]: r["t"] for r in records if r.get("kind") == "mark"}


def job_outcome(jobs_wanted, snapshot, records):
    """Lost / duplicated / incomplete Jobs. jobs_wanted: the submitted Job
    objects; snapshot: {jobs, podgroups, pods} at the end; records: the pod log."""
    have = {j["metadata"]["name"]: j for j in snapshot["jobs"]}
    want = {j["metadata"]["name"]: j for j in jobs_wanted}
    res = {"jobs": len(want), "completed": 0, "lost": sorted(set(want) - set(have)),
           "duplicated": sorted(set(have) - set(want)), "incomplete": [], "wrong_pods": [], "podgroups": [],
           "restarted": [], "deleted_pods": [], "pods": 0}
    pods_by_job, pgs_by_uid = {}, {}
    for p in snapshot["pods"]:
        job = ((p["metadata"].get("labels") or {}).get(JOB_LABEL))
        if job:
            pods_by_job.setdefault(job, []).append(p)
    for pg in snapshot["podgroups"]:
        for o in pg["metadata"].get("ownerReferences") or []:
            if o.get("kind") == "Job":
                pgs_by_uid.setdefault(o.get("uid"), []).append(pg["metadata"]["name"])
    job_pod_names = set()
    for name, j in sorted(want.items()):
        if name not in have:
            continue
        got = have[name]
        st = got.get("status") or {}
        pods = pods_by_job.get(name, [])
        res["pods"] += len(pods)
        job_pod_names |= {p["metadata"]["name"] for p in pods}
        n = expected_pods(j)
        ok_pods = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        if len(pods) != n:
            res["wrong_pods"].append(f"{name}: {len(pods)} pods, want {n}")
        # The reconciler deletes a finished Job's PodGroup: count the ones
        # the pod log saw (named <job>-<uid>) and any still there.
        own = f"{name}-{got['metadata']['uid']}"
        mine = re.compile(re.escape(name) + "-" + UID)
        pgs = set(pgs_by_uid.get(got["metadata"]["uid"], [])) | {
            r["name"] for r in records if r.get("kind") == "pg" and mine.fullmatch(r["name"])}
        if own not in pgs:
            res["podgroups"].append(f"{name}: its PodGroup {own} never seen")
        if len(pgs) != 1:
            res["podgroups"].append(f"{name}: {len(pgs)} PodGroups ({sorted(pgs)[:3]})")
        if st.get("version", 0) or st.get("retryCount", 0):
            res["restarted"].append(f"{name}: version {st.get('version', 0)}, retryCount {st.get('retryCount', 0)}")
        phase = (st.get("state") or {}).get("phase")
        if phase == "Completed" and ok_pods == n:
            res["completed"] += 1
        else:
            res["incomplete"].append(f"{name}: {phase}, {ok_pods}/{n} pods Succeeded")
    prefixes = tuple(f"{n}-" for n in want)
    res["deleted_pods"] = sorted({r["name"] for r in records if r.get("kind") == "pod" and r["ev"] == "DELETED"
                                  and r["name"].startswith(prefixes)})
    seen = {r["name"] for r in records if r.get("kind") == "pod" and r["name"].startswith(prefixes)}
    extra = sorted(seen - job_pod_names)
    if extra:
        res["duplicated"] += [f"pod {x}" for x in extra[:10]]
    return res


def big_job_timeline(records, jobs_wanted, start, end):
    """The largest Job's pods by when the pod log first saw them: before
    fault-start, during the fault, after it (None without Jobs or marks)."""
    if not jobs_wanted or start is None or end is None:
        return None
    big = max(jobs_wanted, key=expected_pods)
    name = big["metadata"]["name"]
    first = {}
    for r in records:
        if r.get("kind") == "pod" and r["name"].startswith(name + "-") and r["name"] not in first:
            first[r["name"]] = r["t"]
    ts = list(first.values())
    return {"job": name, "pods": expected_pods(big), "before": sum(1 for t in ts if t < start),
            "during": sum(1 for t in ts if start <= t <= end), "after": sum(1 for t in ts if t > end)}


def gang_records(records, workload_items):
    """The pod log's lines of the workload's gangs (Job pods left out) and every mark."""
    gangs = {it["metadata"]["name"] for it in workload_items if it["kind"] == "PodGroup"}
    return [r for r in records if r.get("kind") != "pod" or r.get("gang") in gangs]


def gaps_outside(polls, start, end):
    """The longest gap between polls that does not overlap [start, end]."""
    ts = [p["t"] for p in polls]
    worst = 0.0
    for a, b in zip(ts, ts[1:]):
        if start is not None and end is not None and a <= end and b >= start:
            continue
        worst = max(worst, b - a)
    return round(worst, 3)


def evaluate(records, workload_items, jobs_wanted, snapshot, polls, errors, before=None, after=None, zero=(),
             no_binds_during=False, grace=1.0):
    fig, failed = {}, []
    m = marks(records)
    start, end = m.get("fault-start"), m.get("fault-end")
    binds = fo.bind_times(records)
    fig["fault"] = {"start": start, "end": end, "seconds": round(end - start, 3) if start and end else None}
    if start and end:
        fig["fault"]["binds_during"] = sum(1 for t, _ in binds if start < t <= end)
        fig["fault"]["binds_in_grace"] = sum(1 for t, _ in binds if start < t <= start + grace)
        late = [t for t, _ in binds if start + grace < t <= end]
        fig["fault"]["binds_after_grace"] = len(late)
        inside = [p.get("pending", 0) for p in polls if start <= p["t"] <= end]
        fig["fault"]["pending_max"] = max(inside) if inside else None
        after_end = [t for t, _ in binds if t > end]
        fig["fault"]["end_to_first_bind"] = round(after_end[0] - end, 3) if after_end else None
        if no_binds_during and late:
            failed.append(f"{len(late)} pods bound between fault-start + {grace:.0f} s and fault-end")
        if no_binds_during and not after_end:
            failed.append("no pod bound after the fault ended")
    fig["binds"] = len(binds)
    fig["big_job_pods"] = big_job_timeline(records, jobs_wanted, start, end)
    mon = fo.poll_figures(polls)
    mon["errors"] = errors
    mon["max_gap_outside_fault"] = gaps_outside(polls, start, end)
    fig["monitor"] = mon
    if mon["overbooked_polls"]:
        failed.append(f"{mon['overbooked_polls']} polls saw GPUs double booked")
    if mon["polls"] == 0 or mon["max_gap_outside_fault"] > 2.5:
        failed.append(f"monitor polls too sparse: {mon['polls']} polls, max gap outside the fault "
                      f"{mon['max_gap_outside_fault']} s")
    g = fo.gang_outcome(gang_records(records, workload_items), workload_items)
    fig["gangs"] = g
    if g["completed"] != g["gangs"]:
        failed.append(f"{g['gangs'] - g['completed']} of {g['gangs']} gangs did not complete")
    for key in ("below_min", "lost", "duplicated", "failed", "deleted"):
        if g[key]:
            failed.append(f"gangs: {key} {g[key][:10]}")
    j = job_outcome(jobs_wanted, snapshot, records)
    fig["jobs"] = j
    if j["completed"] != j["jobs"]:
        failed.append(f"{j['jobs'] - j['completed']} of {j['jobs']} Jobs did not complete: {j['incomplete'][:5]}")
    for key in ("lost", "duplicated", "wrong_pods", "podgroups", "restarted", "deleted_pods"):
        if j[key]:
            failed.append(f"Jobs: {key} {j[key][:10]}")
    if before is not None and after is not None:
        fig["metrics"] = nonzero_deltas(before, after, SHOWN + tuple(zero))
        for z in zero:
            d = metric_delta(before, after, z)
            if d:
                failed.append(f"{z} rose by {d:g}")
    return fig, failed


def fmt(x, unit=" s"):
    return "-" if x is None else f"{x:.1f}{unit}"


def text(fig, failed, title=""):
    f, mon, g, j = fig["fault"], fig["monitor"], fig["gangs"], fig["jobs"]
    lines = [f"{title}fault {fmt(f['seconds'])}; binds during it {f.get('binds_during', '-')} "
             f"({f.get('binds_in_grace', '-')} in the first second: in flight) while up to "
             f"{'-' if f.get('pending_max') is None else f['pending_max']} pods waited; fault end -> first bind "
             f"{fmt(f.get('end_to_first_bind'))}; {fig['binds']} binds in all",
             f"monitor: {mon['polls']} polls at {mon['rate_hz']} Hz ({mon['errors']} failed: apiserver away), "
             f"max gap {mon['max_gap']} s ({mon['max_gap_outside_fault']} s outside the fault), "
             f"double-booked polls {mon['overbooked_polls']}",
             f"gangs: {g['gangs']}, completed {g['completed']}, below minMember {len(g['below_min'])}, pods lost "
             f"{len(g['lost'])}, duplicated {len(g['duplicated'])}, failed {len(g['failed'])}, deleted "
             f"{len(g['deleted'])}",
             f"Jobs: {j['jobs']}, completed {j['completed']} ({j['pods']} pods), lost {len(j['lost'])}, duplicated "
             f"{len(j['duplicated'])}, wrong pod counts {len(j['wrong_pods'])}, PodGroup counts wrong "
             f"{len(j['podgroups'])}, restarted {len(j['restarted'])}, pods deleted {len(j['deleted_pods'])}"]
    b = fig.get("big_job_pods")
    if b:
        lines.append(f"Job {b['job']} ({b['pods']} pods): pods created {b['before']} before the fault, "
                     f"{b['during']} during it, {b['after']} after")
    if "metrics" in fig:
        lines.append("metric deltas: " + (", ".join(f"{k} {v:+g}" for k, v in fig["metrics"].items()) or "none"))
    lines += [f"FAIL: {x}" for x in failed] or ["all checks passed"]
    return "\n".join(lines)


def read_items(paths):
    items = []
    for p in paths:
        with open(p) as f:
            items += json.load(f)["items"]
    return items


def cmd_report(args):
    records = recording.read_log(args.pods)
    mon = recording.read_log(args.monitor)
    polls = [r for r in mon if r.get("kind") == "poll"]
    errors = sum(1 for r in mon if r.get("kind") == "error")
    with open(args.snapshot) as f:
        snapshot = json.load(f)
    before = after = None
    if args.metrics_before and args.metrics_after:
        with open(args.metrics_before) as f:
            before = parse_metrics(f.read())
        with open(args.metrics_after) as f:
            after = parse_metrics(f.read())
    fig, failed = evaluate(records, read_items(args.workload), read_items(args.jobs), snapshot, polls, errors,
                           before, after, args.zero, args.no_binds_during, args.grace)
    print(text(fig, failed, f"{args.title}: " if args.title else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(fig, failed=failed, title=args.title), f, indent=1)
    return 1 if failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("--seed", type=int, default=3)
    j.add_argument("--count", type=int, required=True)
    j.add_argument("--prefix", required=True)
    j.add_argument("--out", required=True)
    j.add_argument("--max-gpus", type=int, default=48)
    j.add_argument("--run", default="6,12")
    j.add_argument("--big", type=int, default=0)
    pl = sub.add_parser("plain")
    pl.add_argument("--seed", type=int, default=5)
    pl.add_argument("--count", type=int, required=True)
    pl.add_argument("--prefix", required=True)
    pl.add_argument("--out", required=True)
    for name in ("submit", "jobs-done", "snapshot"):
        s = sub.add_parser(name)
        s.add_argument("cluster_dir")
        s.add_argument("namespace")
        if name == "submit":
            s.add_argument("file")
        if name == "snapshot":
            s.add_argument("out")
    r = sub.add_parser("report")
    r.add_argument("--pods", required=True)
    r.add_argument("--workload", action="append", default=[])
    r.add_argument("--jobs", action="append", default=[])
    r.add_argument("--snapshot", required=True)
    r.add_argument("--monitor", required=True)
    r.add_argument("--metrics-before")
    r.add_argument("--metrics-after")
    r.add_argument("--zero", action="append", default=[])
    r.add_argument("--no-binds-during", action="store_true")
    r.add_argument("--grace", type=float, default=1.0)
    r.add_argument("--json")
    r.add_argument("--title", default="")
    args = ap.parse_args(argv)
    return {"jobs": cmd_jobs, "plain": cmd_plain, "submit": cmd_submit, "jobs-done": cmd_jobs_done, "snapshot": cmd_snapshot,
            "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
