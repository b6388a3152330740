#!/usr/bin/env python3
"""GPU-topology benchmark helper for bench/gpu_topology.sh (issue 7,
acceptance 3; stdlib only).

Subcommands:
  plan --cluster FILE --out DIR [--seed N] [--busy F] [--load F]
       [--members 2,3,4] [--gpu-weights 2:0.4,4:0.4,8:0.2] [--chunk C]
      The seeded prefill and workload of one cluster file:
        prefill   exactly F (0.5) of all GPUs busy, drawn uniformly over
                  (node, GPU index); one pod per node that has busy GPUs,
                  bound by spec.nodeName (no scheduler), asking
                  nvidia.com/gpu = its busy GPUs, with the annotation
                  muster.io/gpu-ids "i,j,..." (ascending) - muster rebuilds
                  per-GPU occupancy from it. Written as v1 Lists of C (200)
                  pods, DIR/prefill-NNN.json, for `kubectl create -f`.
        workload  gangs (PodGroup minMember = members) of 2-4 members, every
                  member of a gang asking the same 2, 4 or 8 GPUs (drawn with
                  --gpu-weights), until the demand reaches --load (0.8) of the
                  GPUs free after the prefill. Pods run until deleted.
      DIR/plan.json holds both (and the seed and the cluster's shape).
  run CLUSTER_DIR PLAN OUT --side NAME --scheduler S [--gated]
      [--extender URL] [--gang-timeout S] [--infeasible-wait S]
      [--namespace NS] [--prefill-namespace NS]
      Watch every pod of the cluster; read the nodes (rack label, GPU count,
      muster.io/gpu-topology); check that the prefill (created beforehand in
      --prefill-namespace) is there, and with --extender that muster's cache
      counts its GPUs; then submit the gangs one after another: the PodGroup
      and the members (schedulerName S; --gated: the muster.io/gang gate), and
      wait until every member is bound or the gang has waited --gang-timeout
      (10 s) unbound - a gang that has started (a gate lifted or a member
      bound) gets one more --gang-timeout. A gang that no placement can hold
      at submission (counted: sum over nodes of floor(free / GPUs a member)
      < members, exact since the members are alike) waits only
      --infeasible-wait (2 s), time for the stock scheduler's partial binds.
      A gang that timed out has its unbound members deleted (resourceVersion
      precondition: one bound meanwhile stays) and, if none is bound, its
      PodGroup: it holds no place in either scheduler's queue (muster would
      otherwise keep nodes draining for it as head of the line; pods never
      finish here, so that would block them for good). Writes OUT (JSON): the
      nodes, the prefill as the API holds it, each gang's outcome and wait,
      and every workload bind in bind order (the watch's order) with its node
      and, when the Binding carried them, muster.io/gpu-ids and
      muster.io/gpu-uuids. Exit 1 only on an infrastructure failure.
  report --side SIZE/NAME=OUT ... [--wall SIZE/NAME=SECONDS ...] [--json FILE]
      For each cluster size, replay each side's binds in bind order from the
      prefill, plus a first-fit simulation on the same prefill and arrival
      order (a gang all or nothing, each member on the first node in name
      order with enough free GPUs, the lowest free indices). GPUs a pod holds:
      muster's muster.io/gpu-ids (missing: the lowest free indices on its
      node, and the report says so); the stock scheduler assigns none, so the
      kubelet without a topology-aware device plugin is modelled as the lowest
      free indices, in bind order. Figures per policy:
        best-link    multi-GPU pods whose set's weakest link class equals the
                     best any set of that size of the node's free GPUs just
                     before the bind had (target 100 %); and the same with
                     the members of one gang on one node judged together:
                     their classes, best first, against the best m disjoint
                     sets of the node's free GPUs before the first of them
                     (bind order alone charges a member whose better set went
                     to a co-member bound after it)
        one-rack     gangs placed whole in one rack / gangs some rack could
                     hold (first-fit decreasing of the members' GPU counts over
                     the rack's nodes' free counts) just before their first
                     bind (first-fit: at their decision; a gang never bound:
                     at the point it was passed over) (target >= 99 %)
        stranded     free GPUs no 2-GPU NVLink request can use (no free
                     NVLink peer on their node): after the prefill, at the
                     end, created = end - start; muster / first-fit for end
                     and created (target <= 50 %; when first-fit's is not
                     positive - bigger pods absorb stranded GPUs too - read
                     as muster's <= first-fit's)
        placed       gangs placed / submitted (partial: some members bound),
                     GPUs placed, multi-GPU pods by link class, free GPUs and
                     disjoint free NVLink quads at the end
      Prints a table per size with PASS/MISS per target for muster, and
      writes all figures as JSON. Exit 0 unless the inputs are unreadable.
"""

import argparse
import functools
import itertools
import json
import os
import random
import re
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e", "scenarios"))
sys.path.insert(1, os.path.join(HERE, "..", "e2e", "cluster"))
from kube_watch import read_watch  # noqa: E402  e2e/scenarios: one watch response, event by event
from placement import fake_gpu_pod_spec, gpu_request  # noqa: E402  e2e/scenarios: the scenarios' pod helpers

GPU = "nvidia.com/gpu"
TOPOLOGY = "muster.io/gpu-topology"
GPU_IDS = "muster.io/gpu-ids"
GPU_UUIDS = "muster.io/gpu-uuids"
RACK = "network.muster.io/rack"
GROUP = "scheduling.k8s.io/group-name"
PG_API = "/apis/scheduling.volcano.sh/v1beta1"

# Link classes as docs/topology.md ranks them (higher is better).
NVLINK, PCIE_SWITCH, PCIE_HOST, NUMA, SYS = 5, 4, 3, 2, 1
CLASS_NAMES = {NVLINK: "nvlink", PCIE_SWITCH: "pcie-switch", PCIE_HOST: "pcie-host", NUMA: "numa", SYS: "sys"}


def natural_key(name):
    """Node names in name order, numbers by value (n2 before n10)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# --- topology ----------------------------------------------------------------------


def token_class(token):
    t = token.strip().upper()
    if re.fullmatch(r"NV\d+", t):
        return NVLINK
    return {"PIX": PCIE_SWITCH, "PXB": PCIE_SWITCH, "PHB": PCIE_HOST, "NODE": NUMA, "SYS": SYS, "SOC": SYS}.get(t)


class Topology:
    """A node's GPUs and the class of each pair's best link, from its
    muster.io/gpu-topology annotation (only what the figures need)."""

    def __init__(self, n, cls, uuids=None):
        self.n = n
        self.cls = cls  # cls[i][j]: link class of the pair (None on the diagonal)
        self.uuids = uuids or [None] * n  # gpus[i].uuid

    @staticmethod
    def parse(text):
        """The topology of an annotation value; None when it does not read
        (such a node counts as topology-unknown, as in muster)."""
        try:
            doc = json.loads(text)
            link = doc["link"]
            n = len(doc["gpus"])
            if doc.get("v") != 1 or len(link) != n or any(len(row) != n for row in link):
                return None
            cls = [[None if i == j else token_class(link[i][j]) for j in range(n)] for i in range(n)]
            if any(cls[i][j] is None or cls[i][j] != cls[j][i] for i in range(n) for j in range(n) if i != j):
                return None
            return Topology(n, cls, [g.get("uuid") for g in doc["gpus"]])
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    @staticmethod
    def islands(n, groups, inside="NV4", across="SYS"):
        """A topology from NVLink islands (lists of indices), for tests."""
        where = {g: k for k, island in enumerate(groups) for g in island}
        link = [["X" if i == j else (inside if where[i] == where[j] else across) for j in range(n)]
                for i in range(n)]
        return Topology.parse(json.dumps({"v": 1, "gpus": [{"i": i} for i in range(n)], "link": link}))

    def set_class(self, ids):
        """The weakest link class inside a set of GPUs (None for fewer than 2)."""
        ids = sorted(ids)
        if len(ids) < 2:
            return None
        return min(self.cls[a][b] for a, b in itertools.combinations(ids, 2))

    @functools.lru_cache(maxsize=None)  # noqa: B019 - topologies live as long as the process
    def best_class(self, free, k):
        """The best weakest-link class any k of the free GPUs (a frozenset)
        have (None when k < 2 or fewer than k are free)."""
        if k < 2 or len(free) < k:
            return None
        return max(self.set_class(s) for s in itertools.combinations(sorted(free), k))

    @functools.lru_cache(maxsize=None)  # noqa: B019
    def best_classes(self, free, k, m):
        """The best classes m disjoint k-sets of the free GPUs (a frozenset)
        can have together: the lexicographically greatest descending list
        (as many sets of the best class as possible first); fewer than m
        entries when fewer sets fit. k >= 2."""
        if m == 0 or len(free) < k:
            return ()
        first = min(free)  # the set holding the lowest free GPU, or none does
        best = self.best_classes(free - {first}, k, m)
        for rest in itertools.combinations(sorted(free - {first}), k - 1):
            s = (first,) + rest
            got = tuple(sorted((self.set_class(s),) + self.best_classes(free - set(s), k, m - 1), reverse=True))
            if (len(got), got) > (len(best), best):
                best = got
        return best

    def stranded(self, free):
        """Free GPUs no 2-GPU NVLink request can use: no other free GPU is
        NVLinked to them (with islands: the only free GPU of its island)."""
        return sum(1 for g in free if not any(h != g and self.cls[g][h] == NVLINK for h in free))

    def nvlink_quads(self, free):
        """Disjoint 4-GPU all-NVLink sets among the free GPUs (greedy, lowest
        first): what 4-GPU requests can still get at NVLink class."""
        left, count = set(free), 0
        while len(left) >= 4:
            quad = next((s for s in itertools.combinations(sorted(left), 4) if self.set_class(s) == NVLINK), None)
            if quad is None:
                break
            left -= set(quad)
            count += 1
        return count


def lowest_free(free, k):
    """The lowest k free indices (None when fewer are free)."""
    ids = sorted(free)[:k]
    return ids if len(ids) == k else None


# --- packing -------------------------------------------------------------------------


def ffd_fits(requests, capacities):
    """Whether first-fit decreasing packs every request (GPU counts) into
    bins of the given free counts. Count-based (ignores which GPUs)."""
    bins = sorted(capacities, reverse=True)
    for r in sorted(requests, reverse=True):
        for i, c in enumerate(bins):
            if c >= r:
                bins[i] = c - r
                break
        else:
            return False
    return True


def rack_feasible(requests, free, racks):
    """Whether some rack's nodes could hold every request: free is node ->
    set of free GPUs, racks is rack -> its nodes."""
    return any(ffd_fits(requests, [len(free[n]) for n in nodes]) for nodes in racks.values())


def first_fit(order, free, gangs):
    """The first-fit policy on a copy of `free` (node -> set of free GPUs):
    gangs in arrival order, each all or nothing; each member on the first
    node of `order` with enough free GPUs, the lowest free indices. Returns
    the decision sequence: ("gang", index) at each gang's decision, then
    ("pod", index, node, ids) for each member of a gang that fits."""
    free = {n: set(s) for n, s in free.items()}
    events = []
    for gi, g in enumerate(gangs):
        events.append(("gang", gi))
        trial = {}
        placed = []
        for _ in range(g["size"]):
            for node in order:
                have = trial.get(node, free[node])
                if len(have) >= g["gpus"]:
                    ids = lowest_free(have, g["gpus"])
                    trial[node] = have - set(ids)
                    placed.append((node, ids))
                    break
            else:
                placed = None
                break
        if placed is None:
            continue
        free.update(trial)
        events.extend(("pod", gi, node, ids) for node, ids in placed)
    return events


# --- replay ----------------------------------------------------------------------------


def live_events(gangs, binds):
    """A side's decision sequence from its binds (in bind order): each gang's
    decision point comes just before its first bind; a gang never bound is
    passed over just before the first bind of a later gang (or at the end).
    ids: the muster.io/gpu-ids the bind carried, or None."""
    index = {g["name"]: i for i, g in enumerate(gangs)}
    events, decided = [], set()
    nxt = 0
    for b in binds:
        gi = index.get(b["gang"])
        if gi is None:
            continue
        if gi not in decided:
            while nxt <= gi:
                if nxt not in decided:
                    events.append(("gang", nxt))
                    decided.add(nxt)
                nxt += 1
            if gi not in decided:
                events.append(("gang", gi))
                decided.add(gi)
        events.append(("pod", gi, b["node"], b.get("ids"), b["gpus"]))
    for gi in range(len(gangs)):
        if gi not in decided:
            events.append(("gang", gi))
    return events


def parse_ids(text):
    """muster.io/gpu-ids ("0,2" - containers may be joined by ';') -> sorted
    ints, or None when absent or unreadable."""
    if text is None:
        return None
    try:
        ids = [int(x) for x in re.split(r"[;,]", text) if x.strip() != ""]
    except ValueError:
        return None
    return sorted(ids)


def evaluate(nodes, topologies, prefill, gangs, events):
    """Figures of one policy. nodes: name -> {"rack", "gpus", "topo"};
    topologies: key -> Topology (or None); prefill: node -> busy indices;
    events: ("gang", gi) | ("pod", gi, node, ids or None[, gpus])."""
    free = {n: set(range(v["gpus"])) - set(prefill.get(n, [])) for n, v in nodes.items()}
    racks = {}
    for n, v in nodes.items():
        racks.setdefault(v["rack"], []).append(n)
    topo = {n: topologies.get(v["topo"]) for n, v in nodes.items()}

    def stranded():
        return sum(topo[n].stranded(frozenset(f)) for n, f in free.items() if topo[n])

    start = stranded()
    f = {"multiGpuPods": 0, "bestLink": 0, "byClass": {}, "unknownTopology": 0, "idsMissing": 0,
         "idsInvalid": 0, "overcommit": 0, "pods": 0, "gpus": 0}
    members = [[] for _ in gangs]  # per gang: nodes of its placed members
    feasible = [None] * len(gangs)
    groups = {}  # (gang, node) -> [free before its first member, [class of each member]]
    for ev in events:
        if ev[0] == "gang":
            gi = ev[1]
            g = gangs[gi]
            feasible[gi] = rack_feasible([g["gpus"]] * g["size"], free, racks)
            continue
        gi, node, ids = ev[1], ev[2], ev[3]
        k = ev[4] if len(ev) > 4 else gangs[gi]["gpus"]
        have = free[node]
        if ids is None:
            f["idsMissing"] += 1
            ids = lowest_free(have, k)
        elif len(ids) != k or not set(ids) <= have:
            f["idsInvalid"] += 1
            ids = lowest_free(have, k)
        if ids is None:  # more than the node had free: count it, take what is left
            f["overcommit"] += 1
            ids = sorted(have)
        t = topo[node]
        if k >= 2:
            f["multiGpuPods"] += 1
            if t is None:
                f["unknownTopology"] += 1
            else:
                got, best = t.set_class(ids), t.best_class(frozenset(have), k)
                name = CLASS_NAMES.get(got, "unknown") if len(ids) >= 2 else "unknown"
                f["byClass"][name] = f["byClass"].get(name, 0) + 1
                if got is not None and got == best:
                    f["bestLink"] += 1
                groups.setdefault((gi, node, k), [frozenset(have), []])[1].append(got)
        free[node] = have - set(ids)
        members[gi].append(node)
        f["pods"] += 1
        f["gpus"] += len(ids)
    # The same, judging the members of one gang on one node together: sets
    # chosen together may trade one member's class for another's (3 pairs
    # from 3 + 3 free GPUs of two islands: one pair must cross), so each
    # member is held against the best the group could have had, in rank.
    f["bestLinkGang"] = 0
    for (gi, node, k), (have, got) in groups.items():
        best = topo[node].best_classes(have, k, len(got))
        mine = sorted((c or 0 for c in got), reverse=True)
        f["bestLinkGang"] += sum(1 for i, c in enumerate(mine) if i >= len(best) or c >= best[i])
    placed = [gi for gi, g in enumerate(gangs) if len(members[gi]) >= g["size"]]
    one_rack = [gi for gi in placed if len({nodes[n]["rack"] for n in members[gi]}) == 1]
    feasible_set = [gi for gi in range(len(gangs)) if feasible[gi]]
    f.update({
        "gangsSubmitted": len(gangs), "gangsPlaced": len(placed),
        "gangsPartial": sum(1 for gi, g in enumerate(gangs) if 0 < len(members[gi]) < g["size"]),
        "gpusAsked": sum(g["size"] * g["gpus"] for g in gangs),
        "rackFeasible": len(feasible_set),
        "oneRackWhenFeasible": sum(1 for gi in feasible_set if gi in set(one_rack)),
        "oneRack": len(one_rack),
        "strandedStart": start, "strandedEnd": stranded(),
        "freeEnd": sum(len(s) for s in free.values()),
        "nvlinkQuadsEnd": sum(topo[n].nvlink_quads(frozenset(s)) for n, s in free.items() if topo[n]),
    })
    f["strandedCreated"] = f["strandedEnd"] - f["strandedStart"]
    f["bestLinkRate"] = f["bestLink"] / f["multiGpuPods"] if f["multiGpuPods"] else None
    known = f["multiGpuPods"] - f["unknownTopology"]
    f["bestLinkGangRate"] = f["bestLinkGang"] / known if known else None
    f["oneRackRate"] = f["oneRackWhenFeasible"] / f["rackFeasible"] if f["rackFeasible"] else None
    return f


# --- plan -------------------------------------------------------------------------------


def cluster_nodes(path):
    import cluster_helper  # e2e/cluster: the cluster file format

    with open(path) as f:
        spec = cluster_helper.parse_subset(f.read(), path)
    out = []
    for n in cluster_helper.build_nodes(spec, path):
        labels = n["metadata"]["labels"]
        out.append({"name": n["metadata"]["name"], "rack": labels.get(RACK, n["metadata"]["name"]),
                    "gpus": int(n["status"]["allocatable"].get(GPU, "0"))})
    return sorted(out, key=lambda n: natural_key(n["name"]))


def parse_weights(text):
    out = []
    for part in text.split(","):
        k, _, w = part.partition(":")
        out.append((int(k), float(w)))
    return out


def make_plan(nodes, seed, busy=0.5, load=0.8, members=(2, 3, 4), weights=((2, 0.4), (4, 0.4), (8, 0.2))):
    """The prefill (node -> busy indices, exactly round(busy x all GPUs) of
    them, uniform over (node, index)) and the gangs, both seeded."""
    slots = [(n["name"], i) for n in nodes for i in range(n["gpus"])]
    rng = random.Random(f"prefill-{seed}")
    chosen = rng.sample(slots, round(busy * len(slots)))
    prefill = {}
    for name, i in chosen:
        prefill.setdefault(name, []).append(i)
    prefill = {n: sorted(ids) for n, ids in sorted(prefill.items(), key=lambda kv: natural_key(kv[0]))}
    free = len(slots) - len(chosen)
    target = round(load * free)
    rng = random.Random(f"workload-{seed}")
    gangs, total = [], 0
    while total < target:
        size = rng.choice(list(members))
        gpus = rng.choices([k for k, _ in weights], [w for _, w in weights])[0]
        gangs.append({"name": f"g{len(gangs):03d}-{size}x{gpus}", "size": size, "gpus": gpus})
        total += size * gpus
    return {"seed": seed, "nodes": len(nodes), "gpus": len(slots), "busy": len(chosen), "freeAfterPrefill": free,
            "load": load, "demand": total, "prefill": prefill, "gangs": gangs}


def prefill_pod(node, ids):
    spec = dict(fake_gpu_pod_spec("default-scheduler", len(ids)), nodeName=node)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"fill-{node}", "labels": {"bench.muster.io/prefill": "true"},
                         "annotations": {GPU_IDS: ",".join(str(i) for i in ids)}},
            "spec": spec}


def plan_cmd(args):
    nodes = cluster_nodes(args.cluster)
    plan = make_plan(nodes, args.seed, args.busy, args.load, [int(x) for x in args.members.split(",")],
                     parse_weights(args.gpu_weights))
    plan["cluster"] = os.path.basename(args.cluster)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    pods = [prefill_pod(n, ids) for n, ids in plan["prefill"].items()]
    for c in range(0, len(pods), args.chunk):
        with open(os.path.join(args.out, f"prefill-{c // args.chunk:03d}.json"), "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": pods[c:c + args.chunk]}, f)
    print(f"[gpu-topology] plan {plan['cluster']} seed {args.seed}: {plan['nodes']} nodes, {plan['gpus']} GPUs, "
          f"{plan['busy']} busy in {len(pods)} prefill pods; {len(plan['gangs'])} gangs asking {plan['demand']} "
          f"GPUs ({plan['demand'] / plan['freeAfterPrefill']:.0%} of the {plan['freeAfterPrefill']} free)",
          file=sys.stderr)
    return 0


# --- run ----------------------------------------------------------------------------------


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

    def run(self):
        rv = None
        while True:
            try:
                if rv is None:
                    listing = self.api.get("/api/v1/pods?limit=100000")
                    now = time.time()
                    # After a relist, newly seen binds go in resourceVersion order.
                    items = sorted(listing["items"], key=lambda p: int(p["metadata"].get("resourceVersion") or 0))
                    for pod in items:
                        self.on_pod("ADDED", pod, now)
                    rv = listing["metadata"]["resourceVersion"]
                conn = self.api.connect(timeout=600)
                conn.request("GET", f"/api/v1/pods?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
                                    "&timeoutSeconds=300")
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch pods: HTTP {resp.status}")
                self.opened.set()
                rv = read_watch(resp, rv, lambda kind, obj: self.on_pod(kind, obj, time.time()))
                conn.close()
            except Exception as e:  # noqa: BLE001 - the watch thread must not die
                self.errors.append(f"watch pods: {e}")
                time.sleep(0.5)

    def used(self):
        """node -> GPUs held by live bound pods (call with the lock held)."""
        out = {}
        for v in self.pods.values():
            if v["node"] and not v["deleted"]:
                out[v["node"]] = out.get(v["node"], 0) + v["gpus"]
        return out


def api_delete(api, path, body):
    conn = api.connect()
    try:
        conn.request("DELETE", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def extender_gpus(url):
    with urllib.request.urlopen(f"{url}/debug/state", timeout=10) as r:
        state = json.loads(r.read())
    # /debug/state counts nvidia.com/gpu in thousandths.
    return sum(int(n["allocated"].get(GPU, 0)) // 1000 for n in state["nodes"]), len(state["nodes"])


def run_cmd(args):
    import gang_report as g  # e2e/scenarios: Api, create_items, pod_group, gang_pod

    with open(args.plan) as f:
        plan = json.load(f)
    api = g.Api(args.cluster_dir)
    t_start = time.time()
    nodes, topologies = {}, {}
    for n in api.get("/api/v1/nodes")["items"]:
        md = n["metadata"]
        text = (md.get("annotations") or {}).get(TOPOLOGY)
        key = None
        if text is not None:
            key = topologies.setdefault(text, f"t{len(topologies)}")
        nodes[md["name"]] = {"rack": (md.get("labels") or {}).get(RACK, md["name"]),
                             "gpus": int((n["status"].get("allocatable") or {}).get(GPU, "0")), "topo": key}
    topologies = {k: text for text, k in topologies.items()}
    bad = [k for k, text in topologies.items() if Topology.parse(text) is None]
    if bad:
        print(f"[gpu-topology] WARNING: {len(bad)} node topology annotation(s) do not read", file=sys.stderr)

    watch = PodWatch(api)
    threading.Thread(target=watch.run, daemon=True).start()
    if not watch.opened.wait(60):
        raise SystemExit("gpu_topology.py: the pod watch did not open within 60 s")
    # The prefill, as the API server holds it.
    want = sum(1 for ids in plan["prefill"].values() if ids)
    deadline = time.time() + 60
    with watch.cond:
        while True:
            fill = [v for v in watch.pods.values() if v["ns"] == args.prefill_namespace and v["node"]]
            if len(fill) >= want or time.time() > deadline:
                break
            watch.cond.wait(1)
        prefill = {v["node"]: parse_ids(v.get("ids")) or [] for v in fill}
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
    t_gangs = time.time()
    conn = None
    outcomes = []
    gangs = plan["gangs"]
    for gi, gang in enumerate(gangs):
        name, size, gpus = gang["name"], gang["size"], gang["gpus"]
        with watch.cond:
            used = watch.used()
        fits = sum((v["gpus"] - used.get(n, 0)) // gpus for n, v in nodes.items()) >= size
        items = [g.pod_group(name, size)] + [g.gang_pod(name, i, gpus, size, args.scheduler, gated=args.gated)
                                             for i in range(size)]
        t0 = time.time()
        try:
            conn = g.create_items(api, args.namespace, items, conn)
        except (RuntimeError, OSError) as e:
            raise SystemExit(f"gpu_topology.py: creating gang {name}: {e}") from e
        keys = [f"{args.namespace}/{name}-{i}" for i in range(size)]
        deadline = t0 + (args.gang_timeout if fits else args.infeasible_wait)
        extended = False
        with watch.cond:
            while True:
                views = [watch.pods.get(k) for k in keys]
                bound = sum(1 for v in views if v and v["node"])
                if bound == size:
                    break
                now = time.time()
                if now >= deadline:
                    started = bound > 0 or (args.gated and any(v and not v["gated"] for v in views))
                    if started and fits and not extended:
                        deadline, extended = now + args.gang_timeout, True
                        continue
                    break
                watch.cond.wait(min(0.5, deadline - now))
        outcome = "bound" if bound == size else ("partial" if bound else "timeout")
        waited = time.time() - t0
        if bound < size:
            # Give up: delete the unbound members (not one bound meanwhile).
            for k in keys:
                for _ in range(5):
                    with watch.cond:
                        v = watch.pods.get(k)
                        if v is None or v["node"] or v["deleted"]:
                            break
                        rv = v["rv"]
                    status = api_delete(api, f"/api/v1/namespaces/{args.namespace}/pods/{k.split('/', 1)[1]}",
                                        {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                         "preconditions": {"resourceVersion": rv}})
                    if status in (200, 202, 404):
                        break
                    time.sleep(0.1)  # 409: it changed; look again
            with watch.cond:
                end = time.time() + 10
                while time.time() < end and not all(
                        (watch.pods.get(k) or {}).get("deleted") or (watch.pods.get(k) or {}).get("node")
                        for k in keys):
                    watch.cond.wait(0.5)
                bound = sum(1 for k in keys if (watch.pods.get(k) or {}).get("node"))
            if not bound:
                api_delete(api, f"{PG_API}/namespaces/{args.namespace}/podgroups/{name}",
                           {"kind": "DeleteOptions", "apiVersion": "v1"})
            outcome = "bound" if bound == size else ("partial" if bound else outcome)
        outcomes.append({"name": name, "size": size, "gpus": gpus, "fitsAtSubmit": fits, "outcome": outcome,
                         "bound": bound, "wait": round(waited, 3)})
        if (gi + 1) % 25 == 0 or gi + 1 == len(gangs):
            done = sum(1 for o in outcomes if o["outcome"] == "bound")
            print(f"[gpu-topology] {args.side}: {gi + 1}/{len(gangs)} gangs submitted, {done} bound, "
                  f"{time.time() - t_gangs:.0f} s", file=sys.stderr)
    if conn is not None:
        conn.close()
    t_end = time.time()
    time.sleep(1)  # late binds of the last gangs, if any
    with watch.cond:
        binds = sorted((v for v in watch.pods.values() if v["ns"] == args.namespace and v["node"]),
                       key=lambda v: v["bind"])
        binds = [{"pod": v["name"], "gang": v["gang"], "node": v["node"], "gpus": v["gpus"],
                  "idsAnnotation": v.get("ids"), "ids": parse_ids(v.get("ids")), "uuids": v.get("uuids"),
                  "deleted": v["deleted"], "t": round(v["tBind"] - t_gangs, 4)} for v in binds]
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


# --- report -------------------------------------------------------------------------------


def uuid_mismatches(side):
    """Binds whose muster.io/gpu-uuids is not the UUIDs of their
    muster.io/gpu-ids in the node's topology (in order, comma-joined)."""
    topologies = {k: Topology.parse(t) for k, t in side["topologies"].items()}
    bad = 0
    for b in side["binds"]:
        t = topologies.get(side["nodes"].get(b["node"], {}).get("topo"))
        if b.get("ids") is None or b.get("uuids") is None or t is None:
            continue
        if any(i >= t.n for i in b["ids"]) or b["uuids"] != ",".join(str(t.uuids[i]) for i in b["ids"]):
            bad += 1
    return bad


def size_figures(sides, walls):
    """Figures of one cluster size: each recorded side and first-fit."""
    first = next(iter(sides.values()))
    with open(first["plan"]) as f:
        plan = json.load(f)
    gangs = plan["gangs"]
    nodes = first["nodes"]
    texts = first["topologies"]
    topologies = {k: Topology.parse(t) for k, t in texts.items()}
    prefill = {n: ids for n, ids in first["prefill"].items()}
    out = {"nodes": len(nodes), "gpus": sum(v["gpus"] for v in nodes.values()),
           "busy": sum(len(v) for v in prefill.values()), "seed": plan["seed"], "gangs": len(gangs),
           "demand": plan["demand"], "policies": {}, "notes": []}
    for name, side in sides.items():
        if side["prefill"] != prefill or side["nodes"] != nodes:
            out["notes"].append(f"{name}: its prefill or nodes differ from {next(iter(sides))}'s")
        events = live_events(gangs, [b for b in side["binds"]])
        f = evaluate(side["nodes"], {k: Topology.parse(t) for k, t in side["topologies"].items()},
                     side["prefill"], gangs, events)
        outcomes = {}
        for o in side["gangs"]:
            outcomes[o["outcome"]] = outcomes.get(o["outcome"], 0) + 1
        f["outcomes"] = outcomes
        f["uuidMismatch"] = uuid_mismatches(side)
        f["infeasibleAtSubmit"] = sum(1 for o in side["gangs"] if not o["fitsAtSubmit"])
        waits = sorted(o["wait"] for o in side["gangs"] if o["outcome"] == "bound")
        f["boundWaitP50"] = waits[len(waits) // 2] if waits else None
        f["boundWaitMax"] = waits[-1] if waits else None
        f["seconds"] = side["seconds"]
        f["wall"] = walls.get(name)
        f["watchErrors"] = side.get("errors", [])
        if side["scheduler"] == "default-scheduler":
            f["idsModel"] = "lowest free indices (no GPU ids from the stock scheduler)"
        elif f["idsMissing"]:
            f["idsModel"] = (f"{f['idsMissing']} of {f['pods']} pods carried no {GPU_IDS}: lowest free indices "
                             "(muster's bind-time GPU choice not in this binary?)")
        else:
            with_uuids = sum(1 for b in side["binds"] if b.get("uuids"))
            f["idsModel"] = (f"{GPU_IDS} of every bind; {with_uuids} carried {GPU_UUIDS}, "
                             f"{f['uuidMismatch']} not matching the ids")
        out["policies"][name] = f
    order = sorted(nodes, key=natural_key)
    free = {n: set(range(v["gpus"])) - set(prefill.get(n, [])) for n, v in nodes.items()}
    ff = evaluate(nodes, topologies, prefill, gangs, first_fit(order, free, gangs))
    ff["idsModel"] = "lowest free indices (simulated)"
    out["policies"]["first-fit"] = ff
    return out


def pct(a, b):
    return "-" if not b else f"{100.0 * a / b:.1f}% ({a}/{b})"


def ratio(a, b):
    return None if b is None or b <= 0 or a is None else a / b


def at_most_half(mine, theirs):
    """mine <= 50 % of theirs; when theirs is not positive, mine <= theirs."""
    return mine <= 0.5 * theirs if theirs > 0 else mine <= theirs


def targets(fig):
    """PASS/MISS lines for muster (and each other side, for comparison)."""
    pol = fig["policies"]
    ff = pol["first-fit"]
    out = {}
    for name, f in pol.items():
        if name == "first-fit":
            continue
        end, created = ratio(f["strandedEnd"], ff["strandedEnd"]), ratio(f["strandedCreated"], ff["strandedCreated"])
        out[name] = {
            "bestLink100": f["bestLinkRate"] is not None and f["bestLinkRate"] >= 1.0,
            "bestLinkGang100": f["bestLinkGangRate"] is not None and f["bestLinkGangRate"] >= 1.0,
            "oneRack99": f["oneRackRate"] is not None and f["oneRackRate"] >= 0.99,
            "strandedEndHalf": at_most_half(f["strandedEnd"], ff["strandedEnd"]),
            "strandedCreatedHalf": at_most_half(f["strandedCreated"], ff["strandedCreated"]),
            "strandedEndRatio": end, "strandedCreatedRatio": created,
        }
    return out


def table(fig):
    pol = fig["policies"]
    names = list(pol)
    w = 24
    lines = [f"== {fig['nodes']} nodes x 8 GPUs ({fig['gpus']} GPUs, {fig['busy']} busy after the prefill), "
             f"seed {fig['seed']}: {fig['gangs']} gangs asking {fig['demand']} GPUs =="]

    def row(label, cells):
        lines.append(f"  {label:<34}" + "".join(f"{c:>{w}}" for c in cells))

    row("", names)
    row("gangs placed / submitted", [f"{f['gangsPlaced']}/{f['gangsSubmitted']}" for f in pol.values()])
    row("gangs partial (some bound)", [str(f["gangsPartial"]) for f in pol.values()])
    row("GPUs placed", [f"{f['gpus']} ({f['pods']} pods)" for f in pol.values()])
    classes = sorted({c for f in pol.values() for c in f["byClass"]})
    row("multi-GPU pods by link class", [" ".join(f"{c} {f['byClass'].get(c, 0)}" for c in classes) or "-"
                                         for f in pol.values()])
    row("best-link-class rate", [pct(f["bestLink"], f["multiGpuPods"]) for f in pol.values()])
    row("  gang members of a node together", [pct(f["bestLinkGang"], f["multiGpuPods"] - f["unknownTopology"])
                                              for f in pol.values()])
    row("one-rack rate when feasible", [pct(f["oneRackWhenFeasible"], f["rackFeasible"]) for f in pol.values()])
    row("stranded GPUs start / end", [f"{f['strandedStart']} / {f['strandedEnd']}" for f in pol.values()])
    row("stranded GPUs created", [str(f["strandedCreated"]) for f in pol.values()])
    row("free GPUs / NVLink quads at end", [f"{f['freeEnd']} / {f['nvlinkQuadsEnd']}" for f in pol.values()])
    t = targets(fig)

    def r(x):
        return "-" if x is None else f"{x:.2f}"

    row("stranded vs first-fit: end/created",
        [f"{r(t[n]['strandedEndRatio'])} / {r(t[n]['strandedCreatedRatio'])}" if n in t else "-" for n in names])
    row("gangs infeasible at submission", [str(pol[n].get("infeasibleAtSubmit", "-")) for n in names])
    row("bound gang wait p50 / max (s)",
        [f"{r(pol[n]['boundWaitP50'])} / {r(pol[n]['boundWaitMax'])}" if "boundWaitP50" in pol[n] else "-"
         for n in names])
    row("wall time of the side (s)",
        [("-" if pol[n].get("wall") is None else f"{pol[n]['wall']:.0f}") +
         (f" (gangs {pol[n]['seconds']['gangs']:.0f})" if "seconds" in pol[n] else "") for n in names])
    for n in names:
        f = pol[n]
        lines.append(f"  {n}: GPU ids: {f['idsModel']}"
                     + (f"; {f['idsInvalid']} ids not free or of the wrong count" if f["idsInvalid"] else "")
                     + (f"; {f['overcommit']} pods beyond their node's free GPUs" if f["overcommit"] else "")
                     + (f"; {f['uuidMismatch']} {GPU_UUIDS} not the UUIDs of the ids" if f.get("uuidMismatch") else "")
                     + (f"; outcomes {f['outcomes']}" if "outcomes" in f else "")
                     + (f"; watch errors {f['watchErrors'][:2]}" if f.get("watchErrors") else ""))
    for note in fig["notes"]:
        lines.append(f"  note: {note}")
    for n, tt in t.items():
        f = pol[n]

        def pm(ok):
            return "PASS" if ok else "MISS"

        ff = pol["first-fit"]
        read_as = "; first-fit created none, read as <= first-fit" if ff["strandedCreated"] <= 0 else ""
        lines.append(f"  {n} targets: best-link 100%: {pm(tt['bestLink100'])} (gang members of a node "
                     f"together: {pm(tt['bestLinkGang100'])}); one-rack >= 99%: "
                     f"{pm(tt['oneRack99'])}; stranded created <= 50% of first-fit's: "
                     f"{pm(tt['strandedCreatedHalf'])} ({f['strandedCreated']} vs {ff['strandedCreated']}{read_as}); "
                     f"stranded at end <= 50%: {pm(tt['strandedEndHalf'])} ({f['strandedEnd']} vs {ff['strandedEnd']})")
    return lines


def report_cmd(args):
    by_size = {}
    for spec in args.side:
        key, _, path = spec.partition("=")
        size, _, name = key.partition("/")
        with open(path) as f:
            by_size.setdefault(size, {})[name] = json.load(f)
    walls = {}
    for spec in args.wall:
        key, _, secs = spec.partition("=")
        size, _, name = key.partition("/")
        walls.setdefault(size, {})[name] = float(secs)
    out, lines = {}, []
    for size in sorted(by_size, key=natural_key):
        fig = size_figures(by_size[size], walls.get(size, {}))
        fig["targets"] = targets(fig)
        out[size] = fig
        lines.extend(table(fig))
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--cluster", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--busy", type=float, default=0.5)
    p.add_argument("--load", type=float, default=0.8)
    p.add_argument("--members", default="2,3,4")
    p.add_argument("--gpu-weights", default="2:0.4,4:0.4,8:0.2")
    p.add_argument("--chunk", type=int, default=200)
    r = sub.add_parser("run")
    r.add_argument("cluster_dir")
    r.add_argument("plan")
    r.add_argument("out")
    r.add_argument("--side", required=True)
    r.add_argument("--scheduler", required=True)
    r.add_argument("--gated", action="store_true")
    r.add_argument("--extender")
    r.add_argument("--namespace", default="topo")
    r.add_argument("--prefill-namespace", default="topo-prefill")
    r.add_argument("--gang-timeout", type=float, default=10)
    r.add_argument("--infeasible-wait", type=float, default=2)
    q = sub.add_parser("report")
    q.add_argument("--side", action="append", default=[])
    q.add_argument("--wall", action="append", default=[])
    q.add_argument("--json")
    args = ap.parse_args(argv[1:])
    return {"plan": plan_cmd, "run": run_cmd, "report": report_cmd}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
