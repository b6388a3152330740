"""The gang scenarios' recorder (gang_report.py record and submit; stdlib
only): watches a namespace's pods and PodGroups and appends one JSON line
per change to the side's log, and with --rendezvous plays the gangs'
workload (see gang_report.py's docstring for the line format and the
barrier). Cluster I/O and the log are harness's."""

import collections
import heapq
import http.client
import json
import os
import sys
import threading
import time

from gang_workload import GPU, GROUP, MIN, TERMINAL, WORK
from harness import cluster, recording
from placement import gpu_request  # same directory: the scenarios' pod helpers

PATCHERS = 8


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
        # Volcano's group annotation, else Kubernetes' own spec.schedulingGroup.
        "name": md["name"], "gang": ann.get(GROUP) or (spec.get("schedulingGroup") or {}).get("podGroupName"),
        "min": int(ann.get(MIN) or 0),
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
        self.out = recording.JsonLog(out)
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
        self.out.write(rec)

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
            try:
                conn, status, text = cluster.send(self.api, conn, "PATCH",
                                                  f"/api/v1/namespaces/{self.ns}/pods/{name}/status", body,
                                                  "application/strategic-merge-patch+json")
            except cluster.CONNECTION_ERRORS as e:
                conn = None  # closed by send; the next member gets a new one
                self.log({"kind": "error", "what": f"finish {name}: {e}"})
                continue
            if status != 200:
                self.log({"kind": "error", "what": f"finish {name}: HTTP {status} {text[:200]!r}"})

    # Watches ---------------------------------------------------------------
    def watch(self, what, path, handler):
        """List, then watch from the list's resourceVersion; resume after a
        closed watch, list again after 410 Gone (reporting what vanished)."""

        def on_list(items):
            seen = set()
            for obj in items:
                seen.add(obj["metadata"]["name"])
                handler("ADDED", obj)
            if what == "pods":
                with self.state:
                    gone = [self.stub(n) for n in self.pods if n not in seen]
                for obj in gone:
                    handler("DELETED", obj)

        cluster.list_then_watch(lambda: self.api.connect(timeout=600), path, on_list, handler,
                                self.opened[what].set,
                                lambda e: self.log({"kind": "error", "what": f"watch {what}: {e}"}),
                                list_objects=lambda conn: self.api.get(path),
                                errors=(OSError, http.client.HTTPException, RuntimeError, ValueError))

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


def submit(args):
    """Creates the List's items in order (kubectl takes seconds for a few
    hundred objects on a busy host, and the makespan counts from the first
    creation)."""
    with open(args.file) as f:
        items = json.load(f)["items"]
    try:
        cluster.create_items(cluster.Api(args.cluster_dir), args.namespace, items).close()
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


def podgroup_logger(rec):
    """The PodGroup watch's handler: one "pg" line per changed view."""
    pgs = {}

    def on_pg(ev, pg):
        view = pg_view(pg)
        if ev == "DELETED":
            pgs.pop(view["name"], None)
            return
        if pgs.get(view["name"]) != view:
            pgs[view["name"]] = view
            rec.log({"kind": "pg", **view})

    return on_pg


def start_threads(rec, ns):
    """The watches, the timer and the patchers, as daemon threads."""
    threads = [
        threading.Thread(target=rec.watch, daemon=True,
                         args=("pods", f"/api/v1/namespaces/{ns}/pods", rec.on_pod)),
        threading.Thread(target=rec.watch, daemon=True,
                         args=("podgroups", f"{cluster.PG_API}/namespaces/{ns}/podgroups", podgroup_logger(rec))),
        threading.Thread(target=rec.timer, daemon=True),
    ] + [threading.Thread(target=rec.patcher, daemon=True) for _ in range(PATCHERS)]
    for t in threads:
        t.start()


def record(args):
    api = cluster.Api(args.cluster_dir)
    rec = Recorder(api, args.namespace, args.out, args.rendezvous)
    nodes = api.get("/api/v1/nodes")["items"]
    rec.log({"kind": "meta", "namespace": args.namespace,
             "nodes": {n["metadata"]["name"]: cluster.node_allocatable(n, GPU) for n in nodes}})
    start_threads(rec, args.namespace)
    for ev in rec.opened.values():
        if not ev.wait(60):
            raise SystemExit("recorder: the watches did not open within 60 s")
    open(args.ready, "w").close()
    parent = os.getppid()
    # Until told to stop - or orphaned (the scenario was killed): then the
    # cluster goes down too, and the watches would retry forever.
    while not os.path.exists(args.stop) and os.getppid() == parent:
        recording.write_json_atomic(args.status, rec.status())
        time.sleep(0.5)
    rec.log({"kind": "end"})
    return 0
