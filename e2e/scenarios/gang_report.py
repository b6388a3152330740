#!/usr/bin/env python3
"""Workloads, recorder and analysis of the gang e2e scenarios (stdlib only).

Each scenario runs one workload twice on the same cluster file - once through
the stock kube-scheduler (schedulerName default-scheduler), once through muster
(schedulerName volcano) - records every pod's life as the API server reports
it, and compares the two runs here.

Subcommands:
  workload KIND [--scheduler S] [--gated] [--seed N] [--waves D,D,...]
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
      Every pod carries scheduling.k8s.io/group-name, e2e.muster.io/min-member
      and (unless it runs until deleted) e2e.muster.io/work-seconds.
      --gated adds the muster.io/gang scheduling gate (muster lifts it).
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
      Options: --max-makespan-ratio R (makespan <= R x ideal, ideal = work
      GPU-seconds / cluster GPUs), --max-assembly S (first to minMember-th
      bind of a gang <= S seconds), --victims A,B (exactly these gangs lost
      members, and lost all their unfinished ones), --snapshot-at S (also
      show bound members per gang S seconds after the first pod's creation),
      --show-gang G (also show gang G's wait and assembly).

Figures per side: gangs assembled / completed / left partial / broken,
partial GPU-seconds (GPUs held by a gang's bound, unfinished members while
fewer than minMember of its members are bound - a member that succeeded
still counts, an evicted or failed one does not; the binding ramp of every
gang counts too), never-assembled GPU-seconds (the same, for gangs that never
reached minMember: pure waste), assembly time, makespan (first creation to
last finish) against the ideal, and over-commits.
"""

import argparse
import collections
import heapq
import http.client
import json
import os
import random
import ssl
import sys
import threading
import time
import types

from kube_watch import read_watch  # same directory
from placement import fake_gpu_pod_spec, gpu_request  # same directory: the scenarios' pod helpers

GPU = "nvidia.com/gpu"
GROUP = "scheduling.k8s.io/group-name"
MIN = "e2e.muster.io/min-member"
WORK = "e2e.muster.io/work-seconds"
TASK = "volcano.sh/task-spec"
GATE = "muster.io/gang"
TERMINAL = ("Succeeded", "Failed")
PATCHERS = 8

# --- workloads -------------------------------------------------------------------


def pod_group(name, min_member, priority=None, min_task=None, queue="default"):
    spec = {"minMember": min_member, "queue": queue}
    if priority:
        spec["priorityClassName"] = priority
    if min_task:
        spec["minTaskMember"] = dict(min_task)
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "labels": {"e2e.muster.io/gang": name}}, "spec": spec}


def gang_pod(gang, index, gpus, min_member, scheduler, work=None, priority=None, gated=False, task=None,
             cpu="100m"):
    ann = {GROUP: gang, MIN: str(min_member)}
    if work is not None:
        ann[WORK] = str(work)
    if task:
        ann[TASK] = task
    spec = fake_gpu_pod_spec(scheduler, gpus, memory="64Mi", cpu=cpu)
    if priority:
        spec["priorityClassName"] = priority
    if gated:
        spec["schedulingGates"] = [{"name": GATE}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{gang}-{index}", "labels": {"e2e.muster.io/gang": gang}, "annotations": ann},
            "spec": spec}


def burst_jobs(seed, waves, cluster_gpus=256, node_gpus=8):
    """Jobs (name, pods, gpus per pod, work, tasks) in submission order: each
    wave is a random split of the whole cluster into gang jobs of 1-8 pods x
    1, 2, 4 or 8 GPUs. Sizes are powers of two summing to the cluster, so every
    wave packs onto the nodes exactly, and the ideal makespan is the sum of the
    wave durations."""
    rng = random.Random(seed)
    jobs = []
    for w, work in enumerate(waves):
        left, k = cluster_gpus, 0
        while left:
            gpus = rng.choice([g for g in (1, 2, 4, node_gpus) if g <= left])
            pods = rng.randint(1, min(8, left // gpus))
            tasks = None
            if pods >= 3 and rng.random() < 0.25:  # a master and its workers
                tasks = {"master": 1, "worker": pods - 1}
            jobs.append((f"w{w}-j{k:02d}", pods, gpus, work, tasks))
            left -= pods * gpus
            k += 1
    return jobs


def workload(kind, scheduler, gated, seed, waves):
    items = []

    def add_gang(name, pods, gpus, work=None, priority=None, tasks=None):
        items.append(pod_group(name, pods, priority, tasks))
        names = []
        for t, count in (tasks or {"": pods}).items():
            names += [t] * count
        return [gang_pod(name, i, gpus, pods, scheduler, work, priority, gated, names[i] or None)
                for i in range(pods)]

    if kind == "deadlock":
        a = add_gang("a", 100, 1, work=8)
        b = add_gang("b", 100, 1, work=8)
        for pa, pb in zip(a, b):
            items += [pa, pb]
    elif kind == "burst":
        for name, pods, gpus, work, tasks in burst_jobs(seed, waves):
            items += add_gang(name, pods, gpus, work, tasks=tasks)
    elif kind == "preemption-low":
        for name, pods in (("low-a", 16), ("low-b", 9), ("low-c", 4), ("low-d", 3)):
            items += add_gang(name, pods, 8, priority="e2e-gang-low")
    elif kind == "preemption-high":
        items += add_gang("high", 8, 8, work=5, priority="e2e-gang-high")
    else:
        raise SystemExit(f"unknown workload {kind}")
    return {"apiVersion": "v1", "kind": "List", "items": items}


# --- recorder --------------------------------------------------------------------


class Api:
    """The cluster's kube-apiserver over its admin client certificate."""

    def __init__(self, cluster_dir):
        with open(os.path.join(cluster_dir, "state")) as f:
            ports = {p[1]: int(p[2]) for p in (line.split() for line in f) if p[:1] == ["port"]}
        self.port = ports["apiserver"]
        pki = os.path.join(cluster_dir, "pki")
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))

    def connect(self, timeout=30):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def get(self, path):
        conn = self.connect()
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"GET {path}: {resp.status} {body[:200]!r}")
            return json.loads(body)
        finally:
            conn.close()


def succeeded_status(now):
    """The status a kubelet reports when the pod's one container exited 0."""
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    done = {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": at}
    return {"status": {
        "phase": "Succeeded",
        "conditions": [done, dict(done, type="ContainersReady")],
        "containerStatuses": [{"name": "main", "image": "registry.invalid/muster/fake:1", "imageID": "",
                               "ready": False, "started": False, "restartCount": 0,
                               "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": at}}}],
    }}


def pod_view(pod):
    """The fields of a pod the analysis needs (a new line is logged when they change)."""
    md, spec, st = pod["metadata"], pod["spec"], pod.get("status") or {}
    ann = md.get("annotations") or {}
    work = ann.get(WORK)
    return {
        "name": md["name"], "gang": ann.get(GROUP), "min": int(ann.get(MIN) or 0),
        "work": float(work) if work is not None else None, "gpus": gpu_request(pod),
        "node": spec.get("nodeName"), "phase": st.get("phase"),
        "terminating": bool(md.get("deletionTimestamp")), "gated": bool(spec.get("schedulingGates")),
        "mnode": ann.get("muster.io/node"), "plan": "muster.io/gang-plan" in ann,
        "sched": spec.get("schedulerName"), "prio": spec.get("priority"),
    }


def pg_view(pg):
    st = pg.get("status") or {}
    conds = [[c.get("type"), c.get("status"), c.get("reason"), c.get("message")]
             for c in st.get("conditions") or []]
    return {"name": pg["metadata"]["name"], "phase": st.get("phase"), "running": st.get("running", 0),
            "succeeded": st.get("succeeded", 0), "failed": st.get("failed", 0), "conditions": conds}


class Recorder:
    def __init__(self, api, ns, out, rendezvous):
        self.api, self.ns, self.rendezvous = api, ns, rendezvous
        self.out = open(out, "a")
        self.lock = threading.Lock()  # the log file
        self.state = threading.Lock()  # pods, working, last_change
        self.pods = {}  # name -> last logged view
        self.working = {}  # name -> when its work is done (members past the barrier)
        self.last_change = time.time()
        self.started = set()  # gangs past the barrier
        self.due = []  # heap of (done time, pod name)
        self.due_ready = threading.Condition()
        self.patches = collections.deque()  # pods to mark Succeeded
        self.patch_ready = threading.Condition()
        self.opened = {"pods": threading.Event(), "podgroups": threading.Event()}

    def log(self, rec):
        rec = dict(rec, t=round(time.time(), 4))
        with self.lock:
            self.out.write(json.dumps(rec, sort_keys=True) + "\n")
            self.out.flush()

    # Pods ------------------------------------------------------------------
    def on_pod(self, ev, pod):
        view = pod_view(pod)
        name = view["name"]
        with self.state:
            if ev == "DELETED":
                if self.pods.pop(name, None) is None:
                    return
                rec = {"kind": "pod", "ev": "DELETED", **view}
            else:
                if self.pods.get(name) == view:
                    return
                rec = {"kind": "pod", "ev": "MODIFIED" if name in self.pods else "ADDED", **view}
                self.pods[name] = view
            self.last_change = time.time()
        self.log(rec)
        self.gang_changed(view["gang"])

    def counting(self, v):
        return v["node"] and not v["terminating"] and v["phase"] != "Failed"

    def gang_changed(self, gang):
        """The barrier: once minMember members of the gang are bound at once,
        each bound member (and each one bound later) works for its
        e2e.muster.io/work-seconds, then is marked Succeeded."""
        if not self.rendezvous or gang is None:
            return
        with self.state:
            members = [v for v in self.pods.values() if v["gang"] == gang]
        if not members:
            return
        if gang not in self.started:
            if sum(1 for v in members if self.counting(v)) < members[0]["min"]:
                return
            self.started.add(gang)
            self.log({"kind": "start", "gang": gang})
        now = time.time()
        for v in members:
            if (v["node"] and not v["terminating"] and v["phase"] not in TERMINAL and v["work"] is not None
                    and v["name"] not in self.working):
                with self.state:
                    self.working[v["name"]] = now + v["work"]
                with self.due_ready:
                    heapq.heappush(self.due, (now + v["work"], v["name"]))
                    self.due_ready.notify()

    def timer(self):
        """Hands each member to the patchers when its work is done."""
        while True:
            with self.due_ready:
                while not self.due or self.due[0][0] > time.time():
                    self.due_ready.wait(None if not self.due else self.due[0][0] - time.time())
                _, name = heapq.heappop(self.due)
            with self.patch_ready:
                self.patches.append(name)
                self.patch_ready.notify()

    def patcher(self):
        """Marks members Succeeded as their kubelet would (PATCHERS threads, a
        connection each, so a gang's members finish together)."""
        conn = self.api.connect()
        while True:
            with self.patch_ready:
                while not self.patches:
                    self.patch_ready.wait()
                name = self.patches.popleft()
            with self.state:
                v = self.pods.get(name)
            if v is None or v["terminating"] or v["phase"] in TERMINAL:
                continue  # evicted or gone meanwhile
            body = json.dumps(succeeded_status(time.time()))
            for attempt in range(3):
                try:
                    conn.request("PATCH", f"/api/v1/namespaces/{self.ns}/pods/{name}/status", body=body,
                                 headers={"Content-Type": "application/strategic-merge-patch+json"})
                    resp = conn.getresponse()
                    text = resp.read()
                    if resp.status != 200:
                        self.log({"kind": "error", "what": f"finish {name}: HTTP {resp.status} {text[:200]!r}"})
                    break
                except (OSError, http.client.HTTPException) as e:
                    conn.close()
                    conn = self.api.connect()
                    if attempt == 2:
                        self.log({"kind": "error", "what": f"finish {name}: {e}"})

    # Watches ---------------------------------------------------------------
    def watch(self, what, path, handler):
        """List, then watch from the list's resourceVersion; resume after a
        closed watch, list again after 410 Gone (reporting what vanished)."""
        rv = None
        while True:
            try:
                conn = self.api.connect(timeout=600)
                if rv is None:
                    listing = self.api.get(path)
                    seen = set()
                    for obj in listing["items"]:
                        seen.add(obj["metadata"]["name"])
                        handler("ADDED", obj)
                    if what == "pods":
                        with self.state:
                            gone = [self.stub(n) for n in self.pods if n not in seen]
                        for obj in gone:
                            handler("DELETED", obj)
                    rv = listing["metadata"]["resourceVersion"]
                conn.request("GET", f"{path}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
                                    f"&timeoutSeconds=300")
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch {path}: HTTP {resp.status}")
                self.opened[what].set()
                rv = read_watch(resp, rv, handler)
                conn.close()
            except (OSError, http.client.HTTPException, RuntimeError, ValueError) as e:
                self.log({"kind": "error", "what": f"watch {what}: {e}"})
                time.sleep(0.5)

    def stub(self, name):
        v = self.pods[name]
        ann = {GROUP: v["gang"], MIN: str(v["min"])}
        return {"metadata": {"name": name, "annotations": ann},
                "spec": {"containers": [{"resources": {"limits": {GPU: str(v["gpus"])}}}]}}

    def status(self):
        with self.state:
            views = list(self.pods.values())
            since = time.time() - self.last_change
        holding = [v for v in views if v["node"] and v["phase"] not in TERMINAL]
        return {
            "t": round(time.time(), 3), "pods": len(views),
            "bound": sum(1 for v in views if v["node"]),
            "holding": len(holding),
            "active": sum(1 for v in holding if v["name"] in self.working),
            "succeeded": sum(1 for v in views if v["phase"] == "Succeeded"),
            "failed": sum(1 for v in views if v["phase"] == "Failed"),
            "pending": sum(1 for v in views if not v["node"]),
            "workPods": sum(1 for v in views if v["work"] is not None),
            "workDone": sum(1 for v in views if v["work"] is not None and v["phase"] == "Succeeded"),
            "sinceChange": round(since, 3),
        }


def create_items(api, namespace, items, conn=None):
    """Creates Pods and PodGroups in order over one kept-alive connection
    (`conn`, or a new one); returns the connection for the next batch. Raises
    RuntimeError naming the first object the API server refused."""
    conn = conn or api.connect()
    paths = {"Pod": f"/api/v1/namespaces/{namespace}/pods",
             "PodGroup": f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups"}
    for item in items:
        body = json.dumps(item)
        for attempt in range(3):
            try:
                conn.request("POST", paths[item["kind"]], body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                text = resp.read()
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = api.connect()
                if attempt == 2:
                    raise
        if resp.status != 201:
            raise RuntimeError(f"creating {item['kind']} {item['metadata']['name']}: HTTP {resp.status} {text[:300]!r}")
    return conn


def submit(args):
    """Creates the List's items in order (kubectl takes seconds for a few
    hundred objects on a busy host, and the makespan counts from the first
    creation)."""
    with open(args.file) as f:
        items = json.load(f)["items"]
    try:
        create_items(Api(args.cluster_dir), args.namespace, items).close()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def record(args):
    api = Api(args.cluster_dir)
    rec = Recorder(api, args.namespace, args.out, args.rendezvous)
    nodes = api.get("/api/v1/nodes")["items"]
    rec.log({"kind": "meta", "namespace": args.namespace,
             "nodes": {n["metadata"]["name"]: int((n["status"].get("allocatable") or {}).get(GPU, "0"))
                       for n in nodes}})
    pgs = {}

    def on_pg(ev, pg):
        view = pg_view(pg)
        if ev == "DELETED":
            pgs.pop(view["name"], None)
            return
        if pgs.get(view["name"]) != view:
            pgs[view["name"]] = view
            rec.log({"kind": "pg", **view})

    threads = [
        threading.Thread(target=rec.watch, daemon=True,
                         args=("pods", f"/api/v1/namespaces/{args.namespace}/pods", rec.on_pod)),
        threading.Thread(target=rec.watch, daemon=True,
                         args=("podgroups", f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{args.namespace}"
                                            "/podgroups", on_pg)),
        threading.Thread(target=rec.timer, daemon=True),
    ] + [threading.Thread(target=rec.patcher, daemon=True) for _ in range(PATCHERS)]
    for t in threads:
        t.start()
    for ev in rec.opened.values():
        if not ev.wait(60):
            raise SystemExit("recorder: the watches did not open within 60 s")
    open(args.ready, "w").close()
    parent = os.getppid()
    # Until told to stop - or orphaned (the scenario was killed): then the
    # cluster goes down too, and the watches would retry forever.
    while not os.path.exists(args.stop) and os.getppid() == parent:
        tmp = args.status + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rec.status(), f)
        os.replace(tmp, args.status)
        time.sleep(0.5)
    rec.log({"kind": "end"})
    return 0


# --- analysis --------------------------------------------------------------------


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


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


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
    """Figures of one side's log (see the module docstring)."""
    run = replay(records)
    capacity, pods, pgs, marks, start_t = run.capacity, run.pods, run.pgs, run.marks, run.start_t
    over, t_end = run.over, run.t_end
    gangs = collections.defaultdict(list)
    for p in pods.values():
        if p.gang:
            gangs[p.gang].append(p)
    t0 = min((p.created for p in pods.values()), default=0.0)
    out = {"gangs": {name: gang_figures(name, members, t_end, pgs.get(name, []), start_t.get(name))
                     for name, members in sorted(gangs.items())}}
    g = out["gangs"].values()
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
    assembly = sorted(x["assemblySeconds"] for x in g if x["assemblySeconds"] is not None)
    waits = sorted(x["assembledAt"] - x["createdAt"] for x in g if x["assembledAt"] is not None)
    out.update({
        "pods": len(pods), "clusterGpus": total_gpus, "nodes": len(capacity),
        "runSeconds": round(t_end - t0, 2),
        "gangCount": len(out["gangs"]),
        "assembled": sum(1 for x in g if x["assembledAt"] is not None),
        "completed": sum(1 for x in g if x["completed"]),
        "leftPartial": sorted(x["name"] for x in g if x["leftPartial"]),
        "broken": sorted(x["name"] for x in g if x["broken"]),
        "victims": sorted(x["name"] for x in g if x["evicted"]),
        "evictedPods": sum(x["evicted"] for x in g),
        "partialGpuSeconds": round(sum(x["partialGpuSeconds"] for x in g), 1),
        "neverAssembledGpuSeconds": round(sum(x["partialGpuSeconds"] for x in g if x["assembledAt"] is None), 1),
        "heldGpuSeconds": round(held, 1),
        "workGpuSeconds": round(work, 1),
        "workDoneGpuSeconds": round(sum(p.gpus * p.work for p in work_pods if p.outcome == "Succeeded"), 1),
        "idealSeconds": round(ideal, 2),
        "makespanSeconds": round(makespan, 2) if makespan is not None else None,
        "makespanRatio": round(makespan / ideal, 3) if makespan is not None and ideal else None,
        "occupancy": round(in_makespan / (makespan * total_gpus), 3) if makespan else None,
        "waitP50Seconds": round(waits[(len(waits) - 1) // 2], 2) if waits else None,
        "waitMaxSeconds": round(waits[-1], 2) if waits else None,
        "assemblyMaxSeconds": round(assembly[-1], 2) if assembly else None,
        "assemblyP50Seconds": round(assembly[(len(assembly) - 1) // 2], 2) if assembly else None,
        "overcommits": over[:10], "overcommitCount": len(over),
        "badAnnotations": bad_annotations(pods.values()),
        "marks": {m["name"]: round(m["t"] - t0, 2) for m in marks},  # the last of each name
        # Gangs bound in part at each mark (a crash there hits them mid-binding).
        "partBoundAtMarks": {m["name"]: sorted(
            x["name"] for x in g if x["firstBind"] is not None and x["firstBind"] < m["t"]
            and (x["assembledAt"] is None or x["assembledAt"] > m["t"])) for m in marks},
    })
    if snapshot_at is not None:
        at = t0 + snapshot_at
        out["boundAt"] = {"seconds": snapshot_at, "gangs": {
            name: sum(1 for p in members if p.bind is not None and p.bind <= at and (p.release is None or p.release > at))
            for name, members in sorted(gangs.items())}}
    return out


def gang_figures(name, members, t_end, pg_records, start_t):
    """Integrates one gang's GPUs held while fewer than minMember members are
    bound (a member counts from its bind until it is evicted or fails; one that
    succeeded still counts, so a gang's finishing is not "partial")."""
    need = max(p.min for p in members)
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
    pod (extender/gang_controller.cc, DropUngatedPending)."""
    bad = []
    for p in pods:
        v = p.last
        if p.bind is None or v.get("sched") != "volcano":
            continue
        needs_plan = (v.get("min") or 0) > 1
        if v.get("mnode") != p.node or (needs_plan and not v.get("plan")):
            bad.append(f"{p.name}: on {p.node}, muster.io/node={v.get('mnode')}, gang-plan={v.get('plan')}")
    return sorted(bad)


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
]


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, list):
        return str(len(v))  # the names follow the table
    return f"{v:g}" if isinstance(v, float) else str(v)


def table(figs, show_gangs=()):
    names = list(figs)
    width = max(len(label) for _, label in ROWS) + 2
    col = max(16, *(len(n) + 2 for n in names))
    lines = ["".ljust(width) + "".join(n.rjust(col) for n in names)]
    for key, label in ROWS:
        cells = []
        for n in names:
            v = fmt(figs[n].get(key))
            if key == "makespanSeconds" and figs[n]["workDoneGpuSeconds"] < figs[n]["workGpuSeconds"]:
                v = f"> {figs[n]['runSeconds']:g}"  # unfinished when the run stopped
            cells.append(v.rjust(col))
        lines.append(label.ljust(width) + "".join(cells))
    if any("boundAt" in f for f in figs.values()):
        at = next(f["boundAt"]["seconds"] for f in figs.values() if "boundAt" in f)
        gangs = sorted({g for f in figs.values() for g in f.get("boundAt", {}).get("gangs", {})})
        for g in gangs:
            label = f"bound members of {g} at +{at:g} s"
            lines.append(label.ljust(width) + "".join(
                fmt(figs[n].get("boundAt", {}).get("gangs", {}).get(g)).rjust(col) for n in names))
    for g in show_gangs:
        for key, label in (("assembledAt", "wait s (creation to minMember bound)"),
                           ("assemblySeconds", "assembly s")):
            cells = []
            for n in names:
                x = figs[n]["gangs"].get(g)
                v = x and x[key]
                if v is not None and key == "assembledAt":
                    v = round(v - x["createdAt"], 2)
                cells.append(fmt(v).rjust(col))
            lines.append(f"gang {g}: {label}".ljust(width) + "".join(cells))
    marks = sorted({m for f in figs.values() for m in f["marks"]},
                   key=lambda m: min(f["marks"][m] for f in figs.values() if m in f["marks"]))
    for m in marks:
        lines.append(f"mark {m} at s".ljust(width) + "".join(fmt(figs[n]["marks"].get(m)).rjust(col) for n in names))
        lines.append("  gangs bound in part then".ljust(width) + "".join(
            fmt(figs[n]["partBoundAtMarks"].get(m)).rjust(col) for n in names))
    for n in names:
        for key, label in ROWS:
            if isinstance(figs[n].get(key), list) and figs[n][key]:
                lines.append(f"{n}: {label}: {', '.join(figs[n][key])}")
        for m, gangs in figs[n]["partBoundAtMarks"].items():
            if gangs:
                lines.append(f"{n}: gangs bound in part at mark {m}: {', '.join(gangs)}")
    return "\n".join(lines)


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
        figs[name] = analyze(load(path), args.snapshot_at)
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
                            "podgroup-wait"])
    p.add_argument("--max-makespan-ratio", type=float)
    p.add_argument("--max-assembly", type=float)
    p.add_argument("--victims")
    p.add_argument("--snapshot-at", type=float)
    p.add_argument("--show-gang", action="append", default=[], help="also show this gang's wait")
    p.add_argument("--json")
    args = ap.parse_args(argv[1:])
    if args.cmd == "workload":
        waves = [float(x) for x in args.waves.split(",")]
        json.dump(workload(args.kind, args.scheduler, args.gated, args.seed, waves), sys.stdout)
        return 0
    if args.cmd == "record":
        return record(args)
    if args.cmd == "submit":
        return submit(args)
    return report(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
