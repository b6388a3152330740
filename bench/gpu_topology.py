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
import json
import os
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e", "scenarios"))
sys.path.insert(1, os.path.join(HERE, "..", "e2e", "cluster"))
# The model and the run, re-exported: the tests use them as gpu_topology.X.
from gpu_topology_model import (GPU, GPU_IDS, GPU_UUIDS, NUMA, NVLINK, PCIE_HOST,  # noqa: E402,F401
                                PCIE_SWITCH, RACK, SYS, TOPOLOGY, Topology, evaluate, ffd_fits, first_fit,
                                live_events, parse_ids, rack_feasible, token_class)
from gpu_topology_run import run_cmd  # noqa: E402
from harness.figures import Columns, natural_key, pct, positive_ratio as ratio, upper_median  # noqa: E402
from placement import fake_gpu_pod_spec, gpu_request  # noqa: E402,F401  e2e/scenarios: the scenarios' pod helpers


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
        f["boundWaitP50"] = upper_median(waits)
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
    lines = [f"== {fig['nodes']} nodes x 8 GPUs ({fig['gpus']} GPUs, {fig['busy']} busy after the prefill), "
             f"seed {fig['seed']}: {fig['gangs']} gangs asking {fig['demand']} GPUs =="]
    cols = Columns(names, width=34, col=24, indent="  ")
    lines.append(cols.header())
    lines += [cols.row(label, cells) for label, cells in figure_rows(fig)]
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
    return lines + target_lines(fig)


def figure_rows(fig):
    """(label, cell per policy) of the table."""
    pol = fig["policies"]
    names = list(pol)
    classes = sorted({c for f in pol.values() for c in f["byClass"]})
    t = targets(fig)

    def r(x):
        return "-" if x is None else f"{x:.2f}"

    return [
        ("gangs placed / submitted", [f"{f['gangsPlaced']}/{f['gangsSubmitted']}" for f in pol.values()]),
        ("gangs partial (some bound)", [str(f["gangsPartial"]) for f in pol.values()]),
        ("GPUs placed", [f"{f['gpus']} ({f['pods']} pods)" for f in pol.values()]),
        ("multi-GPU pods by link class", [" ".join(f"{c} {f['byClass'].get(c, 0)}" for c in classes) or "-"
                                          for f in pol.values()]),
        ("best-link-class rate", [pct(f["bestLink"], f["multiGpuPods"]) for f in pol.values()]),
        ("  gang members of a node together", [pct(f["bestLinkGang"], f["multiGpuPods"] - f["unknownTopology"])
                                               for f in pol.values()]),
        ("one-rack rate when feasible", [pct(f["oneRackWhenFeasible"], f["rackFeasible"]) for f in pol.values()]),
        ("stranded GPUs start / end", [f"{f['strandedStart']} / {f['strandedEnd']}" for f in pol.values()]),
        ("stranded GPUs created", [str(f["strandedCreated"]) for f in pol.values()]),
        ("free GPUs / NVLink quads at end", [f"{f['freeEnd']} / {f['nvlinkQuadsEnd']}" for f in pol.values()]),
        ("stranded vs first-fit: end/created",
         [f"{r(t[n]['strandedEndRatio'])} / {r(t[n]['strandedCreatedRatio'])}" if n in t else "-" for n in names]),
        ("gangs infeasible at submission", [str(pol[n].get("infeasibleAtSubmit", "-")) for n in names]),
        ("bound gang wait p50 / max (s)",
         [f"{r(pol[n]['boundWaitP50'])} / {r(pol[n]['boundWaitMax'])}" if "boundWaitP50" in pol[n] else "-"
          for n in names]),
        ("wall time of the side (s)",
         [("-" if pol[n].get("wall") is None else f"{pol[n]['wall']:.0f}") +
          (f" (gangs {pol[n]['seconds']['gangs']:.0f})" if "seconds" in pol[n] else "") for n in names]),
    ]


def target_lines(fig):
    """PASS/MISS per target for each side but first-fit."""
    pol = fig["policies"]
    ff = pol["first-fit"]
    lines = []
    for n, tt in targets(fig).items():
        f = pol[n]

        def pm(ok):
            return "PASS" if ok else "MISS"

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
