"""The run of one side of bench/gpu_topology.sh (gpu_topology.py run; stdlib
only): read the nodes, check the prefill, submit the gangs one after another
and record every bind as one watch of all pods reports it (see
gpu_topology.py's docstring). Cluster I/O is harness's."""

import json
import os
import sys
import threading
import time
import urllib.request

from gpu_topology_model import GPU, GPU_IDS, GPU_UUIDS, RACK, TOPOLOGY, Topology, parse_ids
from gang_workload import GROUP, gang_pod, pod_group  # e2e/scenarios: the gang scenarios' objects
from harness import cluster, recording  # e2e/scenarios/harness
from placement import gpu_request  # e2e/scenarios: the scenarios' pod helpers


class PodWatch:
    """Every pod of the cluster as one watch reports it: node, bind order,
    GPU annotations, gates, deletion."""

    def __init__(self, api):
        self.api = api
        self.cond = threading.Condition()
        self.pods = {}  # "ns/name" -> view
        self.seq = 0  # binds seen so far
        self.errors = []
        self.opened = threading.Event()

    def on_pod(self, kind, pod, now):
        md, spec = pod["metadata"], pod["spec"]
        key = f"{md['namespace']}/{md['name']}"
        ann = md.get("annotations") or {}
        with self.cond:
            v = self.pods.setdefault(key, {"ns": md["namespace"], "name": md["name"], "gang": ann.get(GROUP),
                                           "gpus": gpu_request(pod), "node": None, "bind": None})
            v["rv"] = md.get("resourceVersion")
            v["gated"] = bool(spec.get("schedulingGates"))
            v["deleted"] = kind == "DELETED"
            if spec.get("nodeName"):
                if v["bind"] is None:
                    self.seq += 1
                    v.update(bind=self.seq, node=spec["nodeName"], tBind=now)
                # The Binding's annotations arrive with nodeName; keep the latest.
                v["ids"], v["uuids"] = ann.get(GPU_IDS), ann.get(GPU_UUIDS)
            self.cond.notify_all()

    def on_list(self, items):
        now = time.time()
        # After a relist, newly seen binds go in resourceVersion order.
        for pod in sorted(items, key=lambda p: int(p["metadata"].get("resourceVersion") or 0)):
            self.on_pod("ADDED", pod, now)

    def run(self):
        cluster.list_then_watch(lambda: self.api.connect(timeout=600), "/api/v1/pods", self.on_list,
                                lambda kind, obj: self.on_pod(kind, obj, time.time()), self.opened.set,
                                lambda e: self.errors.append(f"watch pods: {e}"),
                                list_objects=lambda conn: self.api.get("/api/v1/pods?limit=100000"),
                                label="pods")

    def used(self):
        """node -> GPUs held by live bound pods (call with the lock held)."""
        out = {}
        for v in self.pods.values():
            if v["node"] and not v["deleted"]:
                out[v["node"]] = out.get(v["node"], 0) + v["gpus"]
        return out

    def live(self, key, field):
        """A field of a pod's view; None when the pod is unknown (lock held)."""
        return (self.pods.get(key) or {}).get(field)


def extender_gpus(url):
    with urllib.request.urlopen(f"{url}/debug/state", timeout=10) as r:
        state = json.loads(r.read())
    # /debug/state counts nvidia.com/gpu in thousandths.
    return sum(int(n["allocated"].get(GPU, 0)) // 1000 for n in state["nodes"]), len(state["nodes"])


def read_nodes(api):
    """The nodes (rack, GPUs, topology key) and the topology texts by key."""
    nodes, topologies = {}, {}
    for n in api.get("/api/v1/nodes")["items"]:
        md = n["metadata"]
        text = (md.get("annotations") or {}).get(TOPOLOGY)
        key = None
        if text is not None:
            key = topologies.setdefault(text, f"t{len(topologies)}")
        nodes[md["name"]] = {"rack": (md.get("labels") or {}).get(RACK, md["name"]),
                             "gpus": cluster.node_allocatable(n, GPU), "topo": key}
    topologies = {k: text for text, k in topologies.items()}
    bad = [k for k, text in topologies.items() if Topology.parse(text) is None]
    if bad:
        print(f"[gpu-topology] WARNING: {len(bad)} node topology annotation(s) do not read", file=sys.stderr)
    return nodes, topologies


def check_prefill(args, plan, watch):
    """The prefill as the API server holds it (node -> GPU ids), once it is
    all bound and, with --extender, muster's cache counts its GPUs."""
    want = sum(1 for ids in plan["prefill"].values() if ids)
    with watch.cond:
        recording.wait_until(watch.cond, lambda: len(prefill_pods(watch, args)) >= want, time.time() + 60,
                             step=1, clock=time.time)
        prefill = {v["node"]: parse_ids(v.get("ids")) or [] for v in prefill_pods(watch, args)}
    if prefill != {n: ids for n, ids in plan["prefill"].items() if ids}:
        raise SystemExit(f"gpu_topology.py: the prefill in namespace {args.prefill_namespace} is not the plan's "
                         f"({len(prefill)} bound pods, want {want})")
    busy = sum(len(ids) for ids in prefill.values())
    if args.extender:
        deadline = time.time() + 120
        while True:
            try:
                got, count = extender_gpus(args.extender)
            except (OSError, ValueError, KeyError) as e:
                got, count = None, str(e)
            if got == busy or time.time() > deadline:
                break
            time.sleep(0.5)
        if got != busy:
            raise SystemExit(f"gpu_topology.py: muster's cache holds {got} GPUs of the prefill's {busy} ({count})")
    return prefill


def prefill_pods(watch, args):
    return [v for v in watch.pods.values() if v["ns"] == args.prefill_namespace and v["node"]]


def await_gang(args, watch, keys, deadline, fits):
    """Waits until every member is bound or `deadline`; a gang that has
    started (a gate lifted or a member bound) and fits gets one more
    --gang-timeout. Returns the members bound."""
    size, extended = len(keys), False
    with watch.cond:
        while True:
            views = [watch.pods.get(k) for k in keys]
            bound = sum(1 for v in views if v and v["node"])
            if bound == size:
                return bound
            now = time.time()
            if now >= deadline:
                started = bound > 0 or (args.gated and any(v and not v["gated"] for v in views))
                if started and fits and not extended:
                    deadline, extended = now + args.gang_timeout, True
                    continue
                return bound
            watch.cond.wait(min(0.5, deadline - now))


def give_up(api, args, watch, name, keys):
    """Deletes a gang's unbound members (resourceVersion precondition: one
    bound meanwhile stays) and, when none is bound, its PodGroup. Returns the
    members bound in the end."""
    for k in keys:
        for _ in range(5):
            with watch.cond:
                v = watch.pods.get(k)
                if v is None or v["node"] or v["deleted"]:
                    break
                rv = v["rv"]
            status = api.delete(f"/api/v1/namespaces/{args.namespace}/pods/{k.split('/', 1)[1]}",
                                {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                 "preconditions": {"resourceVersion": rv}})
            if status in (200, 202, 404):
                break
            time.sleep(0.1)  # 409: it changed; look again
    with watch.cond:
        end = time.time() + 10
        while time.time() < end and not all(watch.live(k, "deleted") or watch.live(k, "node") for k in keys):
            watch.cond.wait(0.5)
        bound = sum(1 for k in keys if watch.live(k, "node"))
    if not bound:
        api.delete(f"{cluster.PG_API}/namespaces/{args.namespace}/podgroups/{name}",
                   {"kind": "DeleteOptions", "apiVersion": "v1"})
    return bound


def submit_gang(api, args, watch, nodes, gang, conn):
    """Creates one gang, waits for it, gives up on it if need be: (its
    outcome record, the connection for the next gang)."""
    name, size, gpus = gang["name"], gang["size"], gang["gpus"]
    with watch.cond:
        used = watch.used()
    fits = sum((v["gpus"] - used.get(n, 0)) // gpus for n, v in nodes.items()) >= size
    items = [pod_group(name, size)] + [gang_pod(name, i, gpus, size, args.scheduler, gated=args.gated)
                                       for i in range(size)]
    t0 = time.time()
    try:
        conn = cluster.create_items(api, args.namespace, items, conn)
    except (RuntimeError, OSError) as e:
        raise SystemExit(f"gpu_topology.py: creating gang {name}: {e}") from e
    keys = [f"{args.namespace}/{name}-{i}" for i in range(size)]
    bound = await_gang(args, watch, keys, t0 + (args.gang_timeout if fits else args.infeasible_wait), fits)
    outcome = "bound" if bound == size else ("partial" if bound else "timeout")
    waited = time.time() - t0
    if bound < size:
        bound = give_up(api, args, watch, name, keys)
        outcome = "bound" if bound == size else ("partial" if bound else outcome)
    return {"name": name, "size": size, "gpus": gpus, "fitsAtSubmit": fits, "outcome": outcome,
            "bound": bound, "wait": round(waited, 3)}, conn


def submit_gangs(api, args, watch, nodes, gangs, t_gangs):
    """Every gang in turn: their outcomes."""
    conn, outcomes = None, []
    for gi, gang in enumerate(gangs):
        outcome, conn = submit_gang(api, args, watch, nodes, gang, conn)
        outcomes.append(outcome)
        if (gi + 1) % 25 == 0 or gi + 1 == len(gangs):
            done = sum(1 for o in outcomes if o["outcome"] == "bound")
            print(f"[gpu-topology] {args.side}: {gi + 1}/{len(gangs)} gangs submitted, {done} bound, "
                  f"{time.time() - t_gangs:.0f} s", file=sys.stderr)
    if conn is not None:
        conn.close()
    return outcomes


def workload_binds(args, watch, t_gangs):
    """The workload's binds in bind order (the watch's)."""
    with watch.cond:
        binds = sorted((v for v in watch.pods.values() if v["ns"] == args.namespace and v["node"]),
                       key=lambda v: v["bind"])
        return [{"pod": v["name"], "gang": v["gang"], "node": v["node"], "gpus": v["gpus"],
                 "idsAnnotation": v.get("ids"), "ids": parse_ids(v.get("ids")), "uuids": v.get("uuids"),
                 "deleted": v["deleted"], "t": round(v["tBind"] - t_gangs, 4)} for v in binds]


def run_cmd(args):
    with open(args.plan) as f:
        plan = json.load(f)
    api = cluster.Api(args.cluster_dir)
    t_start = time.time()
    nodes, topologies = read_nodes(api)
    watch = PodWatch(api)
    threading.Thread(target=watch.run, daemon=True).start()
    if not watch.opened.wait(60):
        raise SystemExit("gpu_topology.py: the pod watch did not open within 60 s")
    prefill = check_prefill(args, plan, watch)
    t_gangs = time.time()
    gangs = plan["gangs"]
    outcomes = submit_gangs(api, args, watch, nodes, gangs, t_gangs)
    t_end = time.time()
    time.sleep(1)  # late binds of the last gangs, if any
    binds = workload_binds(args, watch, t_gangs)
    result = {"side": args.side, "scheduler": args.scheduler, "gated": args.gated, "plan": os.path.abspath(args.plan),
              "seed": plan["seed"], "nodes": nodes, "topologies": topologies, "prefill": prefill,
              "gangs": outcomes, "binds": binds,
              "seconds": {"setup": round(t_gangs - t_start, 2), "gangs": round(t_end - t_gangs, 2)},
              "errors": watch.errors[:20]}
    with open(args.out, "w") as f:
        json.dump(result, f)
    counts = {}
    for o in outcomes:
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    print(f"[gpu-topology] {args.side}: {len(gangs)} gangs in {t_end - t_gangs:.1f} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
    return 0
