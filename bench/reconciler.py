#!/usr/bin/env python3
"""Reconciler benchmark helper for bench/reconciler.sh (stdlib only).

Subcommands:
  run CLUSTER_DIR NAMESPACE OUT --side stock|muster --jobs J --pods P
      [--shape NAME] [--creators C] [--reconciler-port PORT] [--plugins P,..]
      [--timeout S] [--quiet S]
      Watch the namespace's pods, Jobs (and for muster PodGroups) from
      before the first create, then POST J Jobs of P pods each (cpu 100m,
      no muster.io/run-seconds: the pods run until deleted) over C
      connections at once, noting each Job's send time:
        stock   batch/v1 Jobs, parallelism = completions = P, pods for
                default-scheduler (kube-controller-manager's Job controller)
        muster  batch.volcano.sh/v1alpha1 Jobs, one task of P replicas,
                minAvailable P, schedulerName volcano, queue default, the
                given Volcano plugins (none by default)
      Snapshots the write counters - kube-apiserver's apiserver_request_total
      (write verbs) and, with --reconciler-port, the reconciler's
      muster_reconciler_* series - before the first create, once every pod
      exists ("created") and once every pod is Running, every Job's status
      says so and nothing in the namespace changed for --quiet seconds
      ("settled"), and the CPU seconds of every process the cluster's state
      file records. Writes OUT (JSON): per Job its send/ack times, its pods'
      first receipt on the watch (ADDED) and Running, for muster its
      PodGroup's ADDED and Inqueue, how often the Job changed and its status
      counters' sequence, the snapshots; all times are seconds on one
      monotonic clock from the first send. Exit 1 when a pod was missing
      at --timeout.
  report RUN.json ... [--json FILE]
      Per shape (the runs' --shape), stock vs muster: Job create -> all its
      pods created (p50/p90/p99/max), the makespan (first create -> last pod
      of the batch created), the same to Running, writes per pod in both
      windows and the ratio muster / stock; the split of the writes by
      verb and resource (kube-apiserver's view, both sides; the
      reconciler's own counter, muster) and where muster's job -> pods time
      goes (Job -> PodGroup -> Inqueue -> pods).

Which writes each figure counts (see WRITE_SETS):
  controller   the workload controller's own writes as kube-apiserver counts
               them: POST pods; writes to the Jobs other than our POST (the
               status); POST and DELETE podgroups (the PodGroup CRD has no
               status subresource: PATCH podgroups is the extender's status
               write; the reconciler's own PATCHes show in its counter).
               Events are not in it (kept apart: kcm, the schedulers and the
               extender write Events).
  all          every write to pods (incl. binding, status, the extender's
               gate-lift PATCH), to Jobs but our POST, to podgroups (incl.
               status) and to Events: what the whole path cost the API
               server, schedulers, kwok and the extender included.
  reconciler   muster_reconciler_api_writes_total (muster only): total, and
               "pods + job status" = pods and jobs, excluding the shared
               per-job objects (podgroups, services, configmaps, secrets,
               networkpolicies, persistentvolumeclaims, events).
"""

import argparse
import json
import os
import queue
import re
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_binds import connect  # noqa: E402  (the cluster's admin client)
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from kube_watch import read_watch  # noqa: E402  (one watch response, event by event)
from gang_wait import quantile, summary  # noqa: E402  (the percentiles every bench prints)
from placement import fake_gpu_pod_spec  # noqa: E402  (the e2e scenarios' fake pod)

STOCK_JOBS = "/apis/batch/v1"
VC_JOBS = "/apis/batch.volcano.sh/v1alpha1"
PG_API = "/apis/scheduling.volcano.sh/v1beta1"
JOB_LABEL = {"stock": "batch.kubernetes.io/job-name", "muster": "volcano.sh/job-name"}
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY")
SHARED = ("podgroups", "services", "configmaps", "secrets", "networkpolicies",
          "persistentvolumeclaims", "events")


# --- workload --------------------------------------------------------------------


def job_name(i):
    return f"j{i:04d}"


def stock_job(name, pods):
    spec = fake_gpu_pod_spec("default-scheduler", 0)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": pods, "completions": pods, "backoffLimit": 0,
                     "template": {"spec": spec}}}


def muster_job(name, pods, plugins=()):
    spec = fake_gpu_pod_spec("volcano", 0)
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
           "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": pods,
                    "tasks": [{"name": "main", "replicas": pods, "template": {"spec": spec}}]}}
    if plugins:
        job["spec"]["plugins"] = {p: [] for p in plugins}
    return job


# --- metrics (pure) -------------------------------------------------------------

SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_prom(text):
    """Prometheus text exposition -> [(name, {label: value}, float)]."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, value))
    return out


def apiserver_writes(text, reads=False):
    """apiserver_request_total's write requests (reads: the others), summed
    over scope, version, component and dry_run:
    {"group|resource|subresource|VERB|code": n}."""
    out = {}
    for name, lb, v in parse_prom(text):
        if name != "apiserver_request_total" or (lb.get("verb") in WRITE_VERBS) == reads:
            continue
        key = "|".join((lb.get("group", ""), lb.get("resource", ""), lb.get("subresource", ""),
                        lb["verb"], lb.get("code", "")))
        out[key] = out.get(key, 0) + v
    return out


def reconciler_series(text):
    """The reconciler's counters: {"name{k=v,...}": n} for every muster_reconciler_
    series but the histograms' buckets."""
    out = {}
    for name, lb, v in parse_prom(text):
        if name.startswith("muster_reconciler_") and not name.endswith("_bucket"):
            out[name + "{" + ",".join(f"{k}={lb[k]}" for k in sorted(lb)) + "}"] = v
    return out


def diff(before, after):
    """after - before for every key that changed."""
    keys = set(before) | set(after)
    return {k: after.get(k, 0) - before.get(k, 0) for k in sorted(keys)
            if after.get(k, 0) != before.get(k, 0)}


def by_request(writes):
    """{"group|resource|sub|VERB|code": n} -> {"VERB group/resource[/sub]": [n, non-2xx]}."""
    out = {}
    for key, n in writes.items():
        group, resource, sub, verb, code = key.split("|")
        label = f"{verb} {group + '/' if group else ''}{resource}{'/' + sub if sub else ''}"
        row = out.setdefault(label, [0, 0])
        row[0] += n
        if not code.startswith("2"):
            row[1] += n
    return out


def in_set(which, key):
    """Whether an apiserver write key belongs to the WRITE_SETS `which`."""
    group, resource, sub, verb, _ = key.split("|")
    job = resource == "jobs" and group in ("batch", "batch.volcano.sh")
    pg = resource == "podgroups" and group == "scheduling.volcano.sh"
    if which == "controller":
        return ((group == "" and resource == "pods" and sub == "" and verb == "POST")
                or (job and verb != "POST") or (pg and verb in ("POST", "DELETE")))
    if which == "all":
        return ((group == "" and resource == "pods") or (job and verb != "POST") or pg
                or resource == "events")
    if which == "events":
        return resource == "events"
    raise ValueError(which)


WRITE_SETS = ("controller", "all", "events")


def reconciler_writes(series):
    """{"verb resource": n} of muster_reconciler_api_writes_total in a diff."""
    out = {}
    for key, n in series.items():
        if key.startswith("muster_reconciler_api_writes_total{"):
            lb = dict(kv.split("=", 1) for kv in key[key.index("{") + 1:-1].split(",") if kv)
            out[f"{lb.get('verb')} {lb.get('resource')}"] = n
    return out


def window_writes(snap_a, snap_b, pods):
    """The write figures between two snapshots, `pods` pods."""
    api = diff(snap_a.get("apiserver", {}), snap_b.get("apiserver", {}))
    per = {w: sum(n for k, n in api.items() if in_set(w, k)) for w in WRITE_SETS}
    reads = diff(snap_a.get("apiserverReads", {}), snap_b.get("apiserverReads", {}))
    out = {"apiserver": by_request(api), "reads": by_request(reads), "sets": per,
           "perPod": {w: (n / pods if pods else None) for w, n in per.items()}}
    if "reconciler" in snap_a and "reconciler" in snap_b:
        rec = reconciler_writes(diff(snap_a["reconciler"], snap_b["reconciler"]))
        total = sum(rec.values())
        own = sum(n for k, n in rec.items() if k.split(" ")[1] not in SHARED)
        out["reconciler"] = rec
        out["reconcilerOther"] = {k: v for k, v in diff(snap_a["reconciler"], snap_b["reconciler"]).items()
                                  if not k.startswith("muster_reconciler_api_writes_total")}
        out["reconcilerTotal"] = total
        out["reconcilerPerPod"] = total / pods if pods else None
        out["reconcilerPodsAndStatusPerPod"] = own / pods if pods else None
    return out


# --- latency (pure) ----------------------------------------------------------------


def analyze(run):
    """The figures of one run (run JSON as `run` writes it)."""
    jobs, want = run["jobList"], run["pods"]
    to_pods, to_running, stages = [], [], {"toPodGroup": [], "toInqueue": [], "inqueueToFirstPod": [],
                                           "firstToLastPod": [], "toFirstPod": []}
    last_created, last_running, complete = None, None, 0
    for j in jobs:
        created, running, sent = j["created"], j["running"], j.get("sent")
        if created:
            last_created = max(last_created or created[-1], created[-1])
        if running:
            last_running = max(last_running or running[-1], running[-1])
        if sent is None or len(created) < want:
            continue
        complete += 1
        to_pods.append(max(created) - sent)
        if len(running) >= want:
            to_running.append(max(running) - sent)
        stages["toFirstPod"].append(min(created) - sent)
        stages["firstToLastPod"].append(max(created) - min(created))
        if j.get("pgAdded") is not None:
            stages["toPodGroup"].append(j["pgAdded"] - sent)
        if j.get("pgInqueue") is not None:
            stages["toInqueue"].append(j["pgInqueue"] - sent)
            stages["inqueueToFirstPod"].append(min(created) - j["pgInqueue"])
    seqs = {}
    for j in jobs:
        seq = " -> ".join(b for _, b in j.get("statuses", []))
        seqs[seq] = seqs.get(seq, 0) + 1
    sends = [j["sent"] for j in jobs if j.get("sent") is not None]
    acks = [j["acked"] for j in jobs if j.get("acked") is not None]
    first = min(sends) if sends else None
    pods = run["jobs"] * want
    snaps = run.get("metrics", {})
    out = {
        "shape": run.get("shape"), "side": run["side"], "jobs": run["jobs"], "podsPerJob": want,
        "pods": pods, "complete": complete,
        "podsCreated": sum(len(j["created"]) for j in jobs),
        "podsRunning": sum(len(j["running"]) for j in jobs),
        "jobToPods": summary(to_pods), "jobToRunning": summary(to_running),
        "makespan": (last_created - first) if last_created is not None and first is not None else None,
        "makespanRunning": (last_running - first) if last_running is not None and first is not None
        and sum(len(j["running"]) for j in jobs) >= pods else None,
        "submitSpan": (max(acks) - first) if acks and first is not None else None,
        "stages": {k: summary(v) for k, v in stages.items() if v},
        "jobEvents": summary([j.get("jobEvents", 0) for j in jobs]),
        "statusSequences": sorted(([n, s] for s, n in seqs.items()), reverse=True)[:3],
        "errors": run.get("errors", [])[:10], "settledBy": run.get("settledBy"),
    }
    controller = "kube-controller-manager" if run["side"] == "stock" else "reconciler"
    for window in ("created", "settled"):
        if "before" in snaps and window in snaps:
            w = window_writes(snaps["before"], snaps[window], pods)
            cpu = diff(snaps["before"].get("cpu", {}), snaps[window].get("cpu", {}))
            w["cpu"] = cpu
            w["controllerCpu"] = cpu.get(controller, 0.0) if cpu else None
            w["apiserverCpu"] = (cpu.get("kube-apiserver", 0.0) + cpu.get("etcd", 0.0)) if cpu else None
            other = w.get("reconcilerOther", {})
            n = other.get("muster_reconciler_sync_duration_seconds_count{}")
            if n:
                w["syncs"] = n
                w["meanSync"] = other.get("muster_reconciler_sync_duration_seconds_sum{}", 0) / n
            out[window] = w
    return out


# --- report (pure) -------------------------------------------------------------------


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def ratio(m, s):
    return None if m is None or s is None or s == 0 else m / s


def get(d, *path):
    for p in path:
        if d is None:
            return None
        d = d.get(p)
    return d


def shape_table(shape, sides):
    """Text table of one shape: {"stock": analyzed, "muster": analyzed}."""
    st, mu = sides.get("stock"), sides.get("muster")
    any_side = st or mu
    title = (f"shape {shape}: {any_side['jobs']} Jobs x {any_side['podsPerJob']} pods "
             f"({any_side['pods']} pods)")
    rows = [
        ("job create -> all pods created p50 (s)", ("jobToPods", "p50")),
        ("                               p90 (s)", ("jobToPods", "p90")),
        ("                               p99 (s)", ("jobToPods", "p99")),
        ("                               max (s)", ("jobToPods", "max")),
        ("makespan: first create -> last pod created (s)", ("makespan",)),
        ("job create -> all pods Running p50 (s)", ("jobToRunning", "p50")),
        ("                               p99 (s)", ("jobToRunning", "p99")),
        ("makespan to the last pod Running (s)", ("makespanRunning",)),
        ("our Job POSTs: first sent -> last answered (s)", ("submitSpan",)),
        ("controller writes / pod, until all created", ("created", "perPod", "controller")),
        ("controller writes / pod, until settled", ("settled", "perPod", "controller")),
        ("all writes (pods, jobs, podgroups, events) / pod, settled", ("settled", "perPod", "all")),
        ("  of which Events / pod, settled", ("settled", "perPod", "events")),
        ("controller CPU s (kcm | reconciler), until all created", ("created", "controllerCpu")),
        ("kube-apiserver + etcd CPU s, until all created", ("created", "apiserverCpu")),
        ("reconciler's own writes / pod, until all created", ("created", "reconcilerPerPod")),
        ("reconciler's own writes / pod, until settled", ("settled", "reconcilerPerPod")),
        ("reconciler pods + job status / pod, settled (<= 2)", ("settled", "reconcilerPodsAndStatusPerPod")),
    ]
    width = max(len(r[0]) for r in rows) + 2
    lines = [title, f"  {'':{width}}{'stock':>10}{'muster':>10}{'muster/stock':>14}"]
    for label, path in rows:
        s, m = get(st, *path), get(mu, *path)
        if s is None and m is None:
            continue
        r = ratio(m, s)
        lines.append(f"  {label:{width}}{fmt(s):>10}{fmt(m):>10}{fmt(r, 2):>14}")
    for name, a in (("stock", st), ("muster", mu)):
        if a and (a["complete"] < a["jobs"] or a["podsCreated"] < a["pods"]):
            lines.append(f"  {name}: only {a['complete']}/{a['jobs']} Jobs got all their pods "
                         f"({a['podsCreated']}/{a['pods']} pods created, {a['podsRunning']} Running)")
        if a and a["errors"]:
            lines.append(f"  {name} errors: {a['errors'][:3]}")
    # Where the writes went (settled window): kube-apiserver's view, both sides.
    keys = sorted(set(get(st, "settled", "apiserver") or {}) | set(get(mu, "settled", "apiserver") or {}),
                  key=lambda k: (k.split(" ", 1)[1], k))
    keys = [k for k in keys if not k.split(" ", 1)[1].startswith(("coordination.k8s.io/", "nodes"))]
    if keys:
        kw = max(len(k) for k in keys) + 2
        lines.append(f"  kube-apiserver writes, create -> settled (all clients; non-2xx in brackets; "
                     f"leases and nodes left out), per pod:")
        lines.append(f"    {'':{kw}}{'stock':>16}{'muster':>16}")
        for k in keys:
            cells = []
            for a in (st, mu):
                row = get(a, "settled", "apiserver", k)
                if row is None:
                    cells.append("-")
                else:
                    bad = f" [{row[1]:.0f}]" if row[1] else ""
                    cells.append(f"{row[0]:.0f} {row[0] / a['pods']:.2f}{bad}")
            lines.append(f"    {k:{kw}}{cells[0]:>16}{cells[1]:>16}")
    reads = {}
    for name, a in (("stock", st), ("muster", mu)):
        for k, (n, _) in (get(a, "settled", "reads") or {}).items():
            if n >= 0.05 * a["pods"]:
                reads.setdefault(k, {})[name] = n / a["pods"]
    if reads:
        lines.append("  kube-apiserver reads per pod, create -> settled (>= 0.05; stock / muster): " + ", ".join(
            f"{k} {fmt(v.get('stock'), 2)} / {fmt(v.get('muster'), 2)}" for k, v in sorted(reads.items())))
    else:
        lines.append("  kube-apiserver reads (GET, LIST, WATCH requests), create -> settled: < 0.05 per pod"
                     " on both sides")
    if mu and get(mu, "settled", "reconciler") is not None:
        rc, rs = get(mu, "created", "reconciler") or {}, get(mu, "settled", "reconciler")
        lines.append("  muster_reconciler_api_writes_total (until created / until settled, per pod settled): "
                     + ", ".join(f"{k} {rc.get(k, 0):.0f}/{v:.0f} ({v / mu['pods']:.2f})"
                                 for k, v in sorted(rs.items())))
        other = get(mu, "settled", "reconcilerOther") or {}
        keep = {k: v for k, v in other.items() if "syncs_total" in k or "actions_total" in k}
        line = "  reconciler, create -> settled: " + ", ".join(f"{k} {v:g}" for k, v in keep.items())
        if get(mu, "settled", "meanSync") is not None:
            line += f"; mean sync {get(mu, 'settled', 'meanSync') * 1000:.1f} ms"
        n = other.get("muster_reconciler_job_to_pods_seconds_count{}")
        if n:
            line += (f"; muster_reconciler_job_to_pods_seconds mean "
                     f"{other.get('muster_reconciler_job_to_pods_seconds_sum{}', 0) / n:.3f} s (n={n:g})")
        lines.append(line)
    for name, a in (("stock", st), ("muster", mu)):
        cpu = get(a, "settled", "cpu")
        if cpu:
            lines.append(f"  {name}: CPU s by component, create -> settled: " + ", ".join(
                f"{k} {v:.1f}" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1]) if v >= 0.05))
    target = get(mu, "settled", "reconcilerPodsAndStatusPerPod")
    if target is not None:
        lines.append(f"  target: the reconciler's pods + job status writes <= 2 per pod: {target:.2f},"
                     f" {'met' if target <= 2 else 'NOT met'}")
    if mu and mu.get("stages"):
        names = {"toPodGroup": "Job -> PodGroup seen", "toInqueue": "Job -> PodGroup Inqueue",
                 "inqueueToFirstPod": "Inqueue -> first pod", "toFirstPod": "Job -> first pod",
                 "firstToLastPod": "first -> last pod of a job"}
        lines.append("  muster, where job -> pods goes (p50 / p99 s): " + ", ".join(
            f"{names[k]} {fmt(v['p50'])} / {fmt(v['p99'])}" for k, v in mu["stages"].items() if k in names))
    for name, a in (("stock", st), ("muster", mu)):
        if a and a.get("statusSequences"):
            n, seq = a["statusSequences"][0]
            lines.append(f"  {name}: a Job changed {fmt(a['jobEvents']['p50'], 0)} times (p50, create"
                         f" included; max {fmt(a['jobEvents']['max'], 0)}); its status went, in {n} of"
                         f" {a['jobs']} Jobs: {seq}")
    for name, a in (("stock", st), ("muster", mu)):
        if a and a.get("settledBy") and a["settledBy"] != "status":
            lines.append(f"  {name}: settled by {a['settledBy']} (not every Job's status showed all pods running)")
    return "\n".join(lines)


def report(args):
    shapes = {}
    for path in args.runs:
        with open(path) as f:
            run = json.load(f)
        a = analyze(run)
        shapes.setdefault(a["shape"] or "?", {})[a["side"]] = a
    text = "\n\n".join(shape_table(name, sides) for name, sides in shapes.items())
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"shapes": shapes}, f, indent=1)
    return 0


# --- run -------------------------------------------------------------------------


def cpu_seconds(cluster_dir):
    """CPU seconds (user + system) so far of each process the cluster's
    state file records (`proc NAME PID STARTTIME`), by NAME."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    with open(os.path.join(cluster_dir, "state")) as f:
        procs = [line.split() for line in f if line.startswith("proc ")]
    for _, name, pid, start in (p[:4] for p in procs if len(p) >= 4):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] != start:  # field 22: a reused PID is another process
            continue
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / tick  # fields 14, 15
    return out


def http_get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Run:
    """The watches and the bookkeeping of one side's run."""

    def __init__(self, args):
        self.args = args
        self.lock = threading.Condition()
        self.t0 = None  # monotonic time of the first send
        self.jobs = {job_name(i): {"name": job_name(i), "created": [], "running": []}
                     for i in range(args.jobs)}
        self.pod_seen, self.pod_running = {}, {}  # pod -> t
        self.job_status_ok = set()
        self.last_event = time.monotonic()
        self.errors = []
        self.opened = {}

    # Handlers: the first receipt of each thing.
    def on_pod(self, obj, now):
        md = obj["metadata"]
        name, job = md["name"], (md.get("labels") or {}).get(JOB_LABEL[self.args.side])
        if job is None:
            job = (md.get("labels") or {}).get("job-name")
        with self.lock:
            self.last_event = now
            if job not in self.jobs:
                return
            if name not in self.pod_seen:
                self.pod_seen[name] = now
                self.jobs[job]["created"].append(now)
            if (obj.get("status") or {}).get("phase") == "Running" and name not in self.pod_running:
                self.pod_running[name] = now
                self.jobs[job]["running"].append(now)
            self.lock.notify_all()

    def on_job(self, obj, now):
        name, st = obj["metadata"]["name"], obj.get("status") or {}
        p = self.args.pods
        if self.args.side == "stock":
            ok = st.get("active") == p and st.get("ready") == p
            brief = f"active={st.get('active', 0)},ready={st.get('ready', 0)}"
        else:
            phase = (st.get("state") or {}).get("phase") or "-"
            ok = st.get("running") == p and phase == "Running"
            brief = f"{phase}(pending={st.get('pending', 0)},running={st.get('running', 0)})"
        with self.lock:
            self.last_event = now
            if name not in self.jobs:
                return
            j = self.jobs[name]
            j["events"] = j.get("events", 0) + 1  # ADDED + MODIFIED: writes that changed it
            seq = j.setdefault("statuses", [])
            if not seq or seq[-1][1] != brief:
                seq.append((now, brief))
            if ok:
                self.job_status_ok.add(name)
            else:
                self.job_status_ok.discard(name)
            self.lock.notify_all()

    def on_pg(self, obj, now):
        md = obj["metadata"]
        owners = md.get("ownerReferences") or []
        job = owners[0]["name"] if owners else md["name"][:-37]
        with self.lock:
            self.last_event = now
            j = self.jobs.get(job)
            if j is None:
                return
            j.setdefault("pgAdded", now)
            if (obj.get("status") or {}).get("phase") in ("Inqueue", "Running"):
                j.setdefault("pgInqueue", now)
            self.lock.notify_all()

    def watch(self, what, path, handler, selector=""):
        ev = self.opened.setdefault(what, threading.Event())
        rv, sel = None, f"&labelSelector={selector}" if selector else ""
        while True:
            try:
                conn = connect(self.args.cluster_dir, 900)
                if rv is None:
                    conn.request("GET", f"{path}?limit=100000{sel}")
                    listing = json.loads(conn.getresponse().read())
                    now = time.monotonic()
                    for obj in listing["items"]:
                        handler(obj, now)
                    rv = listing["metadata"]["resourceVersion"]
                conn.request("GET", f"{path}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
                                    f"&timeoutSeconds=600{sel}")
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch {path}: HTTP {resp.status}")
                ev.set()

                def on_event(kind, obj):
                    if kind != "DELETED":
                        handler(obj, time.monotonic())

                rv = read_watch(resp, rv, on_event)
                conn.close()
            except Exception as e:  # noqa: BLE001 - a watch thread must not die
                self.errors.append(f"watch {what}: {e}")
                time.sleep(0.5)

    def snapshot(self):
        snap = {"t": time.monotonic(), "cpu": cpu_seconds(self.args.cluster_dir)}
        try:
            conn = connect(self.args.cluster_dir, 60)
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
            snap["apiserver"] = apiserver_writes(text)
            snap["apiserverReads"] = apiserver_writes(text, reads=True)
            conn.close()
        except Exception as e:  # noqa: BLE001 - reported
            self.errors.append(f"apiserver /metrics: {e}")
        if self.args.reconciler_port:
            try:
                snap["reconciler"] = reconciler_series(
                    http_get(f"http://127.0.0.1:{self.args.reconciler_port}/metrics"))
            except Exception as e:  # noqa: BLE001 - reported
                self.errors.append(f"reconciler /metrics: {e}")
        return snap


def create_jobs(args, state):
    """POSTs every Job over args.creators connections; notes send/ack times."""
    ns = args.namespace
    if args.side == "stock":
        path, make = f"{STOCK_JOBS}/namespaces/{ns}/jobs", lambda n: stock_job(n, args.pods)
    else:
        plugins = [p for p in args.plugins.split(",") if p]
        path, make = f"{VC_JOBS}/namespaces/{ns}/jobs", lambda n: muster_job(n, args.pods, plugins)
    bodies = {n: json.dumps(make(n)) for n in state.jobs}
    todo = queue.Queue()
    for n in state.jobs:
        todo.put(n)
    conns = [connect(args.cluster_dir, 60) for _ in range(args.creators)]
    start = threading.Barrier(args.creators)

    def worker(k):
        conn = conns[k]
        start.wait()
        while True:
            try:
                n = todo.get_nowait()
            except queue.Empty:
                break
            j = state.jobs[n]
            for attempt in range(3):
                try:
                    j["sent"] = time.monotonic()
                    conn.request("POST", path, body=bodies[n], headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    data = resp.read()
                    j["acked"] = time.monotonic()
                    if resp.status not in (200, 201):
                        j["error"] = f"HTTP {resp.status} {data[:200]!r}"
                    break
                except (OSError, ConnectionError) as e:
                    conn.close()
                    conn = connect(args.cluster_dir, 60)
                    if attempt == 2:
                        j["error"] = str(e)
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.creators)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run(args):
    state = Run(args)
    ns, side = args.namespace, args.side
    job_api = STOCK_JOBS if side == "stock" else VC_JOBS
    watches = [("pods", f"/api/v1/namespaces/{ns}/pods", state.on_pod, JOB_LABEL[side]),
               ("jobs", f"{job_api}/namespaces/{ns}/jobs", state.on_job, "")]
    if side == "muster":
        watches.append(("podgroups", f"{PG_API}/namespaces/{ns}/podgroups", state.on_pg, ""))
    for what, path, handler, sel in watches:
        state.opened[what] = threading.Event()
        threading.Thread(target=state.watch, args=(what, path, handler, sel), daemon=True).start()
    for what, ev in state.opened.items():
        if not ev.wait(60):
            raise SystemExit(f"reconciler.py: the {what} watch did not open within 60 s")
    snaps = {"before": state.snapshot()}
    total = args.jobs * args.pods
    t_start = time.monotonic()
    create_jobs(args, state)
    deadline = t_start + args.timeout
    with state.lock:
        while len(state.pod_seen) < total and time.monotonic() < deadline:
            state.lock.wait(min(0.5, max(0.0, deadline - time.monotonic())))
    snaps["created"] = state.snapshot()
    settled_by = "timeout"
    with state.lock:
        while time.monotonic() < deadline:
            now = time.monotonic()
            running = len(state.pod_running) >= total
            statuses = len(state.job_status_ok) >= args.jobs
            if running and now - state.last_event >= args.quiet:
                if statuses:
                    settled_by = "status"
                    break
                # Every pod Running but some Job's status lags: give it
                # time, then settle on quiet alone.
                if now - state.last_event >= max(args.quiet, 10):
                    settled_by = "quiet"
                    break
            state.lock.wait(0.25)
    snaps["settled"] = state.snapshot()
    with state.lock:
        t0 = min((j["sent"] for j in state.jobs.values() if "sent" in j), default=t_start)

        def rel(t):
            return None if t is None else round(t - t0, 4)

        jobs = [{"name": j["name"], "sent": rel(j.get("sent")), "acked": rel(j.get("acked")),
                 "error": j.get("error"), "created": sorted(rel(t) for t in j["created"]),
                 "running": sorted(rel(t) for t in j["running"]),
                 "pgAdded": rel(j.get("pgAdded")), "pgInqueue": rel(j.get("pgInqueue")),
                 "jobEvents": j.get("events", 0),
                 "statuses": [[rel(t), b] for t, b in j.get("statuses", [])]}
                for j in state.jobs.values()]
        for s in snaps.values():
            s["t"] = rel(s["t"])
        created, running = len(state.pod_seen), len(state.pod_running)
    result = {"shape": args.shape, "side": side, "namespace": ns, "jobs": args.jobs, "pods": args.pods,
              "creators": args.creators, "plugins": args.plugins, "settledBy": settled_by,
              "jobList": jobs, "metrics": snaps, "errors": state.errors[:20]}
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(f"reconciler.py: {ns}: {created}/{total} pods created, {running} Running, settled by {settled_by}"
          f" at {snaps['settled']['t']:.1f} s", file=sys.stderr)
    return 0 if created >= total else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("cluster_dir")
    r.add_argument("namespace")
    r.add_argument("out")
    r.add_argument("--side", choices=("stock", "muster"), required=True)
    r.add_argument("--shape", default="")
    r.add_argument("--jobs", type=int, required=True)
    r.add_argument("--pods", type=int, required=True)
    r.add_argument("--creators", type=int, default=16)
    r.add_argument("--reconciler-port", type=int, default=0)
    r.add_argument("--plugins", default="")
    r.add_argument("--timeout", type=float, default=240)
    r.add_argument("--quiet", type=float, default=3)
    p = sub.add_parser("report")
    p.add_argument("runs", nargs="+")
    p.add_argument("--json")
    args = ap.parse_args(argv[1:])
    return run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
