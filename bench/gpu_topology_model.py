"""The model behind bench/gpu_topology.py's report (pure; stdlib only): a
node's GPU topology from its muster.io/gpu-topology annotation and the link
class of a GPU set, rack feasibility by first-fit decreasing, the
first-fit policy, and the replay of a policy's binds into the figures
gpu_topology.py's docstring defines."""

import functools
import itertools
import json
import re

GPU = "nvidia.com/gpu"
TOPOLOGY = "muster.io/gpu-topology"
GPU_IDS = "muster.io/gpu-ids"
GPU_UUIDS = "muster.io/gpu-uuids"
RACK = "network.muster.io/rack"

# Link classes as docs/topology.md ranks them (higher is better).
NVLINK, PCIE_SWITCH, PCIE_HOST, NUMA, SYS = 5, 4, 3, 2, 1
CLASS_NAMES = {NVLINK: "nvlink", PCIE_SWITCH: "pcie-switch", PCIE_HOST: "pcie-host", NUMA: "numa", SYS: "sys"}


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
    start = stranded(topo, free)
    f = {"multiGpuPods": 0, "bestLink": 0, "byClass": {}, "unknownTopology": 0, "idsMissing": 0,
         "idsInvalid": 0, "overcommit": 0, "pods": 0, "gpus": 0}
    members, feasible, groups = replay(f, gangs, events, free, racks, topo)
    f["bestLinkGang"] = best_link_gang(groups, topo)
    f.update(gang_totals(nodes, gangs, members, feasible))
    f.update({
        "strandedStart": start, "strandedEnd": stranded(topo, free),
        "freeEnd": sum(len(s) for s in free.values()),
        "nvlinkQuadsEnd": sum(topo[n].nvlink_quads(frozenset(s)) for n, s in free.items() if topo[n]),
    })
    f["strandedCreated"] = f["strandedEnd"] - f["strandedStart"]
    f["bestLinkRate"] = f["bestLink"] / f["multiGpuPods"] if f["multiGpuPods"] else None
    known = f["multiGpuPods"] - f["unknownTopology"]
    f["bestLinkGangRate"] = f["bestLinkGang"] / known if known else None
    f["oneRackRate"] = f["oneRackWhenFeasible"] / f["rackFeasible"] if f["rackFeasible"] else None
    return f


def stranded(topo, free):
    """Stranded GPUs over the nodes of known topology."""
    return sum(topo[n].stranded(frozenset(f)) for n, f in free.items() if topo[n])


def replay(f, gangs, events, free, racks, topo):
    """Plays `events` on `free` (changed in place), counting into `f` each
    pod's GPUs, link class and the ids it carried. Returns per gang the nodes
    of its placed members, whether some rack could hold it at its decision,
    and (gang, node, GPUs a member) -> [free before the first, [classes]]."""
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
        ids = pod_ids(f, ids, have, k)
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
    return members, feasible, groups


def pod_ids(f, ids, have, k):
    """The GPUs a pod of k GPUs holds given the ids it carried (None: none)
    and its node's free GPUs `have`: the lowest free ones when missing or
    invalid, whatever is left when the node had too few (counted in f)."""
    if ids is None:
        f["idsMissing"] += 1
        ids = lowest_free(have, k)
    elif len(ids) != k or not set(ids) <= have:
        f["idsInvalid"] += 1
        ids = lowest_free(have, k)
    if ids is None:  # more than the node had free: count it, take what is left
        f["overcommit"] += 1
        ids = sorted(have)
    return ids


def best_link_gang(groups, topo):
    """Judging the members of one gang on one node together: sets chosen
    together may trade one member's class for another's (3 pairs from 3 + 3
    free GPUs of two islands: one pair must cross), so each member is held
    against the best the group could have had, in rank."""
    hits = 0
    for (gi, node, k), (have, got) in groups.items():
        best = topo[node].best_classes(have, k, len(got))
        mine = sorted((c or 0 for c in got), reverse=True)
        hits += sum(1 for i, c in enumerate(mine) if i >= len(best) or c >= best[i])
    return hits


def gang_totals(nodes, gangs, members, feasible):
    """Gangs placed, partial, asked GPUs, rack-feasible and placed in one rack."""
    placed = [gi for gi, g in enumerate(gangs) if len(members[gi]) >= g["size"]]
    one_rack = [gi for gi in placed if len({nodes[n]["rack"] for n in members[gi]}) == 1]
    feasible_set = [gi for gi in range(len(gangs)) if feasible[gi]]
    return {
        "gangsSubmitted": len(gangs), "gangsPlaced": len(placed),
        "gangsPartial": sum(1 for gi, g in enumerate(gangs) if 0 < len(members[gi]) < g["size"]),
        "gpusAsked": sum(g["size"] * g["gpus"] for g in gangs),
        "rackFeasible": len(feasible_set),
        "oneRackWhenFeasible": sum(1 for gi in feasible_set if gi in set(one_rack)),
        "oneRack": len(one_rack),
    }
