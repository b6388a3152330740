"""The queue fair-share scenario's workload and driver (queue_report.py
queues and drive; stdlib only): the Queues, each queue's seeded gang
sequence, and the driver that keeps every queue's backlog above the cluster,
logging what it creates and the GangReclaimed Events it polls into the
recorder's log (see queue_report.py's docstring). Cluster I/O and the log
are harness's; the gang objects gang_workload.py's.

With --kueue (the Kueue side of `make bench-peers`) every gang is a Kueue pod
group of the LocalQueue named after its queue, and the reclaims come from
Kueue's PreemptedWorkload Events (on the preemptor's Workload, which Kueue
names after the pod group) instead, logged with the preemptor's queue and
gang so the analysis judges them like muster's."""

import calendar
import collections
import os
import random
import re
import sys
import time
import urllib.parse

import gang_workload as gw  # same directory: the gangs' PodGroups and pods
from harness import cluster, recording

GPU = gw.GPU
CPU = "cpu"
RESOURCES = (CPU, GPU)
REASON = "GangReclaimed"
MESSAGE = re.compile(r"^reclaimed by queue (\S+) for gang ([^/\s]+)/(\S+)$")
# Kueue v0.17 pkg/scheduler/preemption/preemption.go, on the preemptor's Workload.
KUEUE_REASON = "PreemptedWorkload"
KUEUE_MESSAGE = re.compile(r"^Preempted workload ([^/\s]+)/(\S+) \(UID: [^)]*\) in ClusterQueue (\S+);")
MAX_GANG = 0.04  # of the cluster, in the gang's dominant resource
TICK = 2.0  # s between top-ups


def parse_weights(text):
    out = {}
    for part in text.split(","):
        name, _, w = part.partition("=")
        out[name.strip()] = int(w)
    return out


def queues_list(weights):
    items = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": q},
              "spec": {"weight": w, "reclaimable": True}} for q, w in weights.items()]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def millicores(q):
    return cluster.quantity(q, milli=True)


def gang_sequence(seed, queue, capacity):
    """The endless, seeded sequence of a queue's gangs: dicts with pods, gpus
    and cpu (millicores) per pod, and work seconds. Every gang asks for at
    most MAX_GANG of the cluster in its dominant resource."""
    rng = random.Random(f"{seed}/{queue}")
    max_gpus = int(MAX_GANG * capacity[GPU])
    max_cpu = MAX_GANG * capacity[CPU]
    while True:
        pods = rng.randint(2, 4)
        if rng.random() < 0.75:
            gpus = rng.choice([g for g in (1, 2) if pods * g <= max_gpus] or [1])
            cpu = 2000
        else:
            gpus = 0
            cpu = min(8000, int(max_cpu / pods) // 1000 * 1000)
        yield {"pods": pods, "gpus": gpus, "cpu": cpu, "work": rng.randint(15, 40)}


def gang_objects(name, queue, gang, scheduler, gated, kueue=False):
    """The PodGroup and pods of one gang (gang_workload's shapes); with kueue
    no PodGroup, the pods a pod group of the LocalQueue `queue`."""
    items = [] if kueue else [gw.pod_group(name, gang["pods"], queue=queue)]
    items += [gw.gang_pod(name, i, gang["gpus"], gang["pods"], scheduler, gang["work"], gated=gated,
                          cpu=f"{gang['cpu']}m", kueue=queue if kueue else None) for i in range(gang["pods"])]
    return items


def kueue_reclaim(event, gangs):
    """A Kueue PreemptedWorkload Event as a reclaim record's fields, or None
    when it is not one: the victim gang, the preemptor's queue and gang."""
    m = KUEUE_MESSAGE.match(event.get("message", ""))
    preemptor = (event.get("involvedObject") or {}).get("name")
    if not m or preemptor not in gangs:
        return None
    return {"victim": m.group(2), "by": gangs[preemptor]["queue"], "forGang": preemptor,
            "victimClusterQueue": m.group(3)}


def request(gang):
    """A gang's total request per resource."""
    return {CPU: gang["pods"] * gang["cpu"], GPU: gang["pods"] * gang["gpus"]}


class Backlog:
    """The driver's view of its pods: which are still pending (created, not
    bound, not ended), from the recorder's lines."""

    def __init__(self):
        self.gangs = {}  # name -> gang record
        self.pending = {}  # pod name -> gang name

    def add(self, rec):
        self.gangs[rec["name"]] = rec
        for i in range(rec["pods"]):
            self.pending[f"{rec['name']}-{i}"] = rec["name"]

    def on_pod(self, rec):
        if rec["node"] or rec["ev"] == "DELETED" or rec["phase"] in gw.TERMINAL or rec["terminating"]:
            self.pending.pop(rec["name"], None)

    def demand(self, queues):
        out = {q: dict.fromkeys(RESOURCES, 0) for q in queues}
        for gang in self.pending.values():
            g = self.gangs[gang]
            if g["queue"] in out:
                out[g["queue"]][CPU] += g["cpu"]
                out[g["queue"]][GPU] += g["gpus"]
        return out


def needs_more(pending, capacity):
    return any(pending[r] < capacity[r] for r in RESOURCES)


class Driver:
    def __init__(self, args):
        self.args = args
        self.api = cluster.Api(args.cluster_dir)
        self.weights = parse_weights(args.weights)
        self.late = set(filter(None, args.late.split(",")))
        self.out = recording.JsonLog(args.log)  # shared with the recorder, which appends too
        self.tail = recording.LogTail(args.log)
        self.backlog = Backlog()
        self.conn = None
        self.events = {}  # uid -> count logged
        nodes = self.api.get("/api/v1/nodes")["items"]
        self.capacity = {CPU: sum(cluster.node_allocatable(n, CPU, millicores) for n in nodes),
                         GPU: sum(cluster.node_allocatable(n, GPU) for n in nodes)}
        self.seqs = {q: gang_sequence(args.seed, q, self.capacity) for q in self.weights}
        self.count = collections.Counter()

    def log(self, rec):
        self.out.write(rec)

    def read_log(self):
        for rec in self.tail.records():
            if rec.get("kind") == "pod":
                self.backlog.on_pod(rec)

    def top_up(self, active):
        """Round robin over the queues still short of a backlog above the
        cluster, one gang each, until none is."""
        pending = self.backlog.demand(active)
        short = [q for q in active if needs_more(pending[q], self.capacity)]
        items = []
        while short:
            for q in list(short):
                gang = next(self.seqs[q])
                name = f"{q}-{self.count[q]:04d}"
                self.count[q] += 1
                rec = {"kind": "gang", "name": name, "queue": q, **gang}
                self.log(rec)
                self.backlog.add(rec)
                items += gang_objects(name, q, gang, self.args.scheduler, self.args.gated, self.args.kueue)
                for r, v in request(gang).items():
                    pending[q][r] += v
                if not needs_more(pending[q], self.capacity):
                    short.remove(q)
        if items:
            self.conn = cluster.create_items(self.api, self.args.namespace, items, self.conn)

    def poll_reclaims(self):
        selector = urllib.parse.quote(f"reason={KUEUE_REASON if self.args.kueue else REASON}")
        try:
            events = self.api.get(f"/api/v1/namespaces/{self.args.namespace}/events?fieldSelector={selector}")
        except (OSError, RuntimeError, ValueError) as e:
            self.log({"kind": "error", "what": f"events: {e}"})
            return
        for ev in events["items"]:
            uid, count = ev["metadata"]["uid"], ev.get("count") or 1
            if self.events.get(uid) == count:
                continue
            self.events[uid] = count
            obj = ev.get("involvedObject") or {}
            at = ev.get("eventTime") or ev.get("lastTimestamp") or ev.get("firstTimestamp")
            rec = {"kind": "reclaim", "uid": uid, "count": count, "objectKind": obj.get("kind"),
                   "victim": obj.get("name"), "message": ev.get("message", ""), "at": epoch(at)}
            if self.args.kueue:
                rec.update(kueue_reclaim(ev, self.backlog.gangs) or {"victim": None})
            self.log(rec)

    def run(self):
        a = self.args
        self.log({"kind": "capacity", **self.capacity, "weights": self.weights, "late": sorted(self.late),
                  "seed": a.seed, "scheduler": a.scheduler, "gated": a.gated, "kueue": a.kueue})
        start = time.time()
        self.log({"kind": "mark", "name": "drive-start"})
        changed = False
        parent = os.getppid()
        # Until the run's end - or orphaned (the scenario was killed or failed).
        while time.time() - start < a.seconds and os.getppid() == parent:
            if not changed and time.time() - start >= a.seconds * a.change_at:
                changed = True
                self.log({"kind": "mark", "name": "change"})
            self.read_log()
            self.top_up([q for q in self.weights if changed or q not in self.late])
            self.poll_reclaims()
            time.sleep(max(0.0, TICK - (time.time() - start) % TICK))
        self.log({"kind": "mark", "name": "drive-end"})
        self.poll_reclaims()
        print(f"drive: {sum(self.count.values())} gangs ({dict(self.count)}), {len(self.events)} reclaim events",
              file=sys.stderr)
        return 0


def epoch(stamp):
    """RFC 3339 (with or without fractional seconds) to epoch seconds."""
    if not stamp:
        return None
    main, _, frac = stamp.rstrip("Z").partition(".")
    t = calendar.timegm(time.strptime(main, "%Y-%m-%dT%H:%M:%S"))
    return t + (float(f"0.{frac}") if frac else 0.0)

