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
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from harness import cluster, recording  # noqa: E402  e2e/scenarios/harness
from placement import fake_gpu_pod_spec  # noqa: E402  (the e2e scenarios' fake pod)
# The pure figures, re-exported: the tests and report use them as reconciler.X.
from reconciler_figures import (analyze, apiserver_writes, by_request, diff, in_set, parse_prom,  # noqa: E402,F401
                                quantile, ratio, reconciler_series, reconciler_writes, report, shape_table,
                                summary, window_writes)

STOCK_JOBS = "/apis/batch/v1"
VC_JOBS = "/apis/batch.volcano.sh/v1alpha1"
PG_API = "/apis/scheduling.volcano.sh/v1beta1"
JOB_LABEL = {"stock": "batch.kubernetes.io/job-name", "muster": "volcano.sh/job-name"}


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
        self.api = cluster.Api(args.cluster_dir)
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
        cluster.watch_present(lambda: self.api.connect(900), path, handler,
                              self.opened.setdefault(what, threading.Event()).set,
                              lambda e: self.errors.append(f"watch {what}: {e}"),
                              query=f"&labelSelector={selector}" if selector else "", watch_seconds=600)

    def snapshot(self):
        snap = {"t": time.monotonic(), "cpu": cpu_seconds(self.args.cluster_dir)}
        try:
            conn = self.api.connect(60)
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
    conns = [state.api.connect(60) for _ in range(args.creators)]
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
                    conn = state.api.connect(60)
                    if attempt == 2:
                        j["error"] = str(e)
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(args.creators)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def start_watches(args, state):
    """The pods (by the side's Job label), Jobs and, for muster, PodGroups of
    the namespace, each on a thread; returns once all are open."""
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


def settle(args, state, deadline):
    """Waits (lock held) until every pod is Running and nothing changed for
    --quiet s: "status" when every Job's status says so too, "quiet" when
    they lag 10 s more, "timeout" at the deadline."""
    total = args.jobs * args.pods
    while time.monotonic() < deadline:
        now = time.monotonic()
        running = len(state.pod_running) >= total
        statuses = len(state.job_status_ok) >= args.jobs
        if running and now - state.last_event >= args.quiet:
            if statuses:
                return "status"
            # Every pod Running but some Job's status lags: give it
            # time, then settle on quiet alone.
            if now - state.last_event >= max(args.quiet, 10):
                return "quiet"
        state.lock.wait(0.25)
    return "timeout"


def job_records(state, snaps, t_start):
    """Each Job's times in seconds from the first send (lock held); the
    snapshots' times are made relative too."""
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
    return jobs


def run(args):
    state = Run(args)
    ns, side = args.namespace, args.side
    start_watches(args, state)
    snaps = {"before": state.snapshot()}
    total = args.jobs * args.pods
    t_start = time.monotonic()
    create_jobs(args, state)
    deadline = t_start + args.timeout
    with state.lock:
        recording.wait_until(state.lock, lambda: len(state.pod_seen) >= total, deadline, step=0.5)
    snaps["created"] = state.snapshot()
    with state.lock:
        settled_by = settle(args, state, deadline)
    snaps["settled"] = state.snapshot()
    with state.lock:
        jobs = job_records(state, snaps, t_start)
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
