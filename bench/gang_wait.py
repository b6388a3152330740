#!/usr/bin/env python3
"""Gang wait benchmark helper for bench/gang_wait.sh (stdlib only).

Subcommands:
  workload [--seed N] [--gangs G] [--sizes 2,4,...] [--gpus 1,1,2,4]
           [--interval A,B] [--run-seconds A,B] [--max-gpus M]
      Print the workload as JSON: G gangs in arrival order, each with a size
      (pods = minMember, drawn from --sizes), GPUs per pod (drawn from --gpus,
      halved while the total would pass --max-gpus, so capacity exists), an
      arrival offset (the gaps drawn uniformly from --interval seconds) and a
      run time (whole seconds drawn from --run-seconds; kwok finishes each pod
      that long after it starts, via muster.io/run-seconds).
  run CLUSTER_DIR NAMESPACE WORKLOAD OUT --scheduler S [--gated]
      [--upstream | --kueue QUEUE] [--await-inqueue S] [--timeout S]
      Watch the namespace's pods and PodGroups, then submit the workload on
      its schedule: per gang a PodGroup (minMember = size), then its pods
      (annotation scheduling.k8s.io/group-name, schedulerName S, with
      --gated the muster.io/gang scheduling gate). --await-inqueue: create a
      gang's pods only once its PodGroup is Inqueue (as muster's Job
      reconciler does), waiting at most S seconds. --upstream: each gang a
      scheduling.k8s.io/v1beta1 Workload + PodGroup instead. --kueue: no
      PodGroup; each gang a Kueue pod group of LocalQueue QUEUE (a gang of one
      a plain Kueue pod: just the queue label), which Kueue's webhook gates
      and Kueue admits. Ends when every gang has
      minMember pods bound, or --timeout seconds after the last arrival, and
      writes OUT (JSON): per gang the local receipt time of each pod's
      creation, gate removal and binding (spec.nodeName set) as the watch
      reports them, and of the PodGroup turning Inqueue; all times are
      seconds on one monotonic clock. Exit 1 when a gang was left unbound.
  report --side NAME=OUT ... [--metrics FILE] [--target-p99 S] [--json FILE]
      Figures per side:
        wait        minMember-th bind - last pod created (the admission point
                    of a reconciler that creates pods once a gang is Inqueue)
        from Inqueue minMember-th bind - PodGroup seen Inqueue (muster only;
                    what muster_gang_wait_seconds measures, at pass granularity)
        submit      minMember-th bind - PodGroup POST, or the gang's arrival
                    when it has no PodGroup (--kueue) (what a user sees)
        gangs/s     gangs at minMember per second, first pod created -> last
                    bind (admissions per second, for a queueing peer)
        ramp        first bind - minMember-th bind of a gang
        gated runs: last pod created -> first gate lifted (muster's pass:
                    reservation and the patch), the gate lifts' spread, and
                    minMember-th gate lifted -> bound (kube-scheduler's queue
                    and the bind)
        partial     gangs left with bound members but fewer than minMember,
                    GPU-seconds held by bound members of gangs below
                    minMember (ramps included), gangs whose ramp another
                    gang's bind fell into (interleaved), the most gangs
                    partially bound at one time
      and, with --metrics (muster's /metrics), muster_gang_wait_seconds'
      quantiles estimated from its buckets as Prometheus' histogram_quantile
      does, and the other muster_gang_* series.
"""

import argparse
import json
import os
import random
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from harness import cluster, figures, recording  # noqa: E402  e2e/scenarios/harness
from harness.figures import parse_metrics, summary  # noqa: E402  (the percentiles every bench prints; /metrics pages)
from placement import fake_gpu_pod_spec  # noqa: E402  (the e2e scenarios' fake pod)
from gang_workload import (  # noqa: E402  (the gang scenarios' PodGroups and Kueue's labels)
    GATE, GROUP, KUEUE_GROUP, KUEUE_QUEUE, KUEUE_TOTAL, pod_group, upstream_gang)

RUN = "muster.io/run-seconds"
PG_API = "/apis/scheduling.volcano.sh/v1beta1"
UPSTREAM_API = "/apis/scheduling.k8s.io/v1beta1"  # Kubernetes' own Workload and PodGroup (--upstream)
CREATORS = 4  # connections creating one gang's pods


def pair(text, conv=float):
    a, b = (conv(x) for x in text.split(","))
    return a, b


# --- workload --------------------------------------------------------------------


def make_workload(args):
    rng = random.Random(args.seed)
    sizes = [int(x) for x in args.sizes.split(",")]
    gpu_choices = [int(x) for x in args.gpus.split(",")]
    lo, hi = pair(args.interval)
    run_lo, run_hi = pair(args.run_seconds, int)
    gangs, total, at = [], 0, 0.0
    for i in range(args.gangs):
        size, gpus = rng.choice(sizes), rng.choice(gpu_choices)
        while gpus > 1 and total + size * gpus > args.max_gpus:
            gpus //= 2
        if i:
            at += rng.uniform(lo, hi)
        gangs.append({"name": f"g{i:03d}-{size}x{gpus}", "size": size, "gpus": gpus,
                      "at": round(at, 3), "run": rng.randint(run_lo, run_hi)})
        total += size * gpus
    return {"seed": args.seed, "gangs": gangs, "pods": sum(g["size"] for g in gangs), "gpus": total}


def pod(gang, index, scheduler, gated, upstream=False, kueue=None):
    """A member: of the Volcano PodGroup it names, or (upstream) of
    Kubernetes' own PodGroup it joins through spec.schedulingGroup, or
    (kueue) of a Kueue pod group of LocalQueue `kueue` - a plain Kueue pod
    when the gang has one member. Kueue ignores the Volcano annotation, which
    names the gang for the recorder."""
    spec = fake_gpu_pod_spec(scheduler, gang["gpus"], memory="64Mi")
    annotations, labels = {RUN: str(gang["run"])}, {}
    if gated:
        spec["schedulingGates"] = [{"name": GATE}]
    if upstream:
        spec["schedulingGroup"] = {"podGroupName": gang["name"]}
    else:
        annotations[GROUP] = gang["name"]
    if kueue:
        labels[KUEUE_QUEUE] = kueue
        if gang["size"] > 1:
            labels[KUEUE_GROUP] = gang["name"]
            annotations[KUEUE_TOTAL] = str(gang["size"])
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{gang['name']}-{index}", "annotations": annotations,
                         **({"labels": labels} if labels else {})},
            "spec": spec}


def group_of(md, spec):
    """The gang a pod belongs to: Volcano's annotation, else spec.schedulingGroup."""
    return (md.get("annotations") or {}).get(GROUP) or (spec.get("schedulingGroup") or {}).get("podGroupName")


# --- run -------------------------------------------------------------------------


class Recorder:
    """First receipt of each pod's creation, gate removal and binding, and
    of each PodGroup's Inqueue phase, on the monotonic clock."""

    def __init__(self, api, ns):
        self.api, self.ns = api, ns
        self.lock = threading.Condition()
        self.created, self.ungated, self.bound = {}, {}, {}  # pod -> t
        self.group_of = {}  # pod -> gang
        self.inqueue = {}  # gang -> t
        self.opened = {"pods": threading.Event(), "podgroups": threading.Event()}
        self.errors = []

    def on_pod(self, obj, now):
        md, spec = obj["metadata"], obj["spec"]
        name = md["name"]
        with self.lock:
            self.created.setdefault(name, now)
            self.group_of.setdefault(name, group_of(md, spec))
            if not spec.get("schedulingGates"):
                self.ungated.setdefault(name, now)
            if spec.get("nodeName"):
                self.bound.setdefault(name, now)
            self.lock.notify_all()

    def on_pg(self, obj, now):
        if (obj.get("status") or {}).get("phase") in ("Inqueue", "Running", "Completed"):
            with self.lock:
                self.inqueue.setdefault(obj["metadata"]["name"], now)
                self.lock.notify_all()

    def watch(self, what, path, handler):
        cluster.watch_present(lambda: self.api.connect(600), path, handler, self.opened[what].set,
                              lambda e: self.errors.append(f"watch {what}: {e}"))


def post(conn_box, api, path, obj):
    """POSTs `obj` over conn_box[0] (None: a new connection), three tries on
    a connection fault; RuntimeError unless the answer is 200 or 201."""
    try:
        conn_box[0], status, data = cluster.send(api, conn_box[0], "POST", path, json.dumps(obj), timeout=60,
                                                 errors=(OSError,))
    except OSError as e:
        conn_box[0] = None
        raise RuntimeError(f"POST {path}: {e}") from e
    if status not in (200, 201):
        raise RuntimeError(f"POST {path}: HTTP {status} {data[:200]!r}")


def submit_gang(args, rec, gang, log):
    """Creates one gang: its PodGroup, then (after Inqueue, if asked) its pods
    over CREATORS connections in parallel."""
    ns, api = args.namespace, rec.api
    entry = log[gang["name"]]
    try:
        if args.upstream:
            box = [None]
            for obj in upstream_gang(gang["name"], gang["size"]):
                post(box, api, f"{UPSTREAM_API}/namespaces/{ns}/{obj['kind'].lower()}s", obj)
            if box[0] is not None:
                box[0].close()
        elif not args.kueue:
            post([None], api, f"{PG_API}/namespaces/{ns}/podgroups", pod_group(gang["name"], gang["size"]))
        entry["pgPosted"] = time.monotonic()
        if args.await_inqueue:
            with rec.lock:
                recording.wait_until(rec.lock, lambda: gang["name"] in rec.inqueue,
                                     time.monotonic() + args.await_inqueue)
            if gang["name"] not in rec.inqueue:
                entry["inqueueTimeout"] = True
        pods = [pod(gang, i, args.scheduler, args.gated, args.upstream, args.kueue) for i in range(gang["size"])]

        def create(chunk):
            box = [None]
            for p in chunk:
                post(box, api, f"/api/v1/namespaces/{ns}/pods", p)
            if box[0] is not None:
                box[0].close()

        entry["podsStart"] = time.monotonic()
        threads = [threading.Thread(target=create, args=(pods[k::CREATORS],)) for k in range(CREATORS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        entry["podsPosted"] = time.monotonic()
    except Exception as e:  # noqa: BLE001 - reported in the output
        entry["error"] = str(e)


def run(args):
    with open(args.workload) as f:
        workload = json.load(f)
    gangs = workload["gangs"]
    rec = Recorder(cluster.Api(args.cluster_dir), args.namespace)
    for what, path, handler in (("pods", f"/api/v1/namespaces/{args.namespace}/pods", rec.on_pod),
                                ("podgroups", f"{PG_API}/namespaces/{args.namespace}/podgroups", rec.on_pg)):
        threading.Thread(target=rec.watch, args=(what, path, handler), daemon=True).start()
    for name, ev in rec.opened.items():
        if not ev.wait(60):
            raise SystemExit(f"gang_wait.py: the {name} watch did not open within 60 s")
    log = {g["name"]: {} for g in gangs}
    t0 = time.monotonic()
    submitters = []
    for g in gangs:
        delay = t0 + g["at"] - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        log[g["name"]]["arrival"] = time.monotonic()
        t = threading.Thread(target=submit_gang, args=(args, rec, g, log), daemon=True)
        t.start()
        submitters.append(t)
    for t in submitters:
        t.join()
    deadline = time.monotonic() + args.timeout

    def assembled():
        counts = {}
        for name in rec.bound:
            gname = rec.group_of.get(name)
            counts[gname] = counts.get(gname, 0) + 1
        return sum(1 for g in gangs if counts.get(g["name"], 0) >= g["size"])

    with rec.lock:
        recording.wait_until(rec.lock, lambda: assembled() >= len(gangs), deadline, step=1.0)
        done = assembled()
        out_gangs = []
        for g in gangs:
            members = [f"{g['name']}-{i}" for i in range(g["size"])]

            def times(d):
                return sorted(round(d[m] - t0, 4) for m in members if m in d)

            e = log[g["name"]]
            out_gangs.append({
                **g, "min": g["size"],
                **{k: round(v - t0, 4) for k, v in e.items() if isinstance(v, float)},
                **{k: v for k, v in e.items() if not isinstance(v, float)},
                "inqueue": round(rec.inqueue[g["name"]] - t0, 4) if g["name"] in rec.inqueue else None,
                "created": times(rec.created), "ungated": times(rec.ungated), "binds": times(rec.bound),
            })
        end = round(time.monotonic() - t0, 4)
    result = {"namespace": args.namespace, "scheduler": args.scheduler, "gated": args.gated,
              "end": end, "assembled": done, "gangs": out_gangs, "errors": rec.errors[:20]}
    with open(args.out, "w") as f:
        json.dump(result, f)
    print(f"gang_wait.py: {args.namespace}: {done}/{len(gangs)} gangs reached minMember in {end:.1f} s",
          file=sys.stderr)
    return 0 if done == len(gangs) else 1


# --- report ----------------------------------------------------------------------


def analyze(result):
    gangs = result["gangs"]
    end = result["end"]
    waits, from_submit, from_inqueue, ramps, spans = [], [], [], [], []
    ungate_spreads, reserve, gate_to_bind = [], [], []
    by_size = {}
    left_partial, unbound, partial_gpu_s, bind_before_ungated = [], [], 0.0, 0
    windows = []  # (first bind, minMember-th bind or end) of each gang with a bind
    for g in gangs:
        binds, created, mn = g["binds"], g["created"], g["min"]
        ok = len(binds) >= mn and len(created) == g["size"]
        at = binds[mn - 1] if len(binds) >= mn else None
        if ok:
            w = at - max(created)
            waits.append(w)
            by_size.setdefault(g["size"], []).append(w)
            ramps.append(at - binds[0])
            if g.get("pgPosted") is not None:
                from_submit.append(at - g["arrival"])
            spans.append(max(created) - min(created))
            if g.get("inqueue") is not None:
                from_inqueue.append(at - g["inqueue"])
        elif binds:
            left_partial.append(g["name"])
        else:
            unbound.append(g["name"])
        stop = at if at is not None else end
        partial_gpu_s += sum(stop - b for b in binds[:mn]) * g["gpus"] if binds else 0.0
        if binds:
            windows.append((binds[0], stop, g["name"]))
        if result.get("gated") and len(g["ungated"]) >= mn and binds:
            ungate_spreads.append(g["ungated"][mn - 1] - g["ungated"][0])
            if created:
                reserve.append(g["ungated"][0] - max(created))
            if at is not None:
                gate_to_bind.append(at - g["ungated"][mn - 1])
            if binds[0] < g["ungated"][mn - 1]:
                bind_before_ungated += 1
    interleaved, peak = overlaps(gangs, windows)
    all_binds = [b for g in gangs for b in g["binds"]]
    all_created = [c for g in gangs for c in g["created"]]
    span = max(all_binds) - min(all_created) if all_binds and all_created else 0
    return {
        # Pods bound and gangs at minMember per second, first pod created ->
        # last bind (all gangs).
        "podsPerSecond": round(len(all_binds) / span, 1) if span > 0 else None,
        "gangsPerSecond": round(len(waits) / span, 2) if span > 0 else None,
        "gangs": len(gangs), "pods": sum(g["size"] for g in gangs),
        "gpus": sum(g["size"] * g["gpus"] for g in gangs),
        "assembled": len(waits), "leftPartial": left_partial, "unbound": unbound,
        "wait": summary(waits), "fromInqueue": summary(from_inqueue),
        "fromSubmit": summary(from_submit), "ramp": summary(ramps),
        "createSpan": summary(spans), "ungateSpread": summary(ungate_spreads),
        "reserve": summary(reserve), "gateToBind": summary(gate_to_bind),
        "bindBeforeAllUngated": bind_before_ungated,
        "partialGpuSeconds": round(partial_gpu_s, 2), "interleaved": interleaved,
        "peakPartial": peak,
        "waitBySize": {str(s): summary(v) for s, v in sorted(by_size.items())},
        "end": end, "errors": result.get("errors", []),
    }


def overlaps(gangs, windows):
    """(gangs with another gang's bind inside their ramp, the most gangs
    partially bound at one time) over the ramps `windows` (first bind,
    minMember-th bind or end, gang)."""
    all_binds = sorted((b, g["name"]) for g in gangs for b in g["binds"])
    interleaved = 0
    for lo, hi, name in windows:
        if any(lo < b < hi and n != name for b, n in all_binds):
            interleaved += 1
    events = sorted([(lo, 1) for lo, hi, _ in windows] + [(hi, -1) for lo, hi, _ in windows])
    cur = peak = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    return interleaved, peak


def histogram_quantile(series, name, q):
    buckets = []
    for key, v in series.items():
        if key.startswith(name + "_bucket{"):
            le = key.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), v))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower  # Prometheus: the highest finite bound
            return lower + (le - lower) * ((rank - below) / (count - below) if count > below else 0)
        lower, below = le, count
    return lower


def fmt(x, unit="s"):
    return figures.fixed(x, 3, unit)


def fmt_summary(s):
    return (f"p50 {fmt(s['p50'])}  p90 {fmt(s['p90'])}  p99 {fmt(s['p99'])}  max {fmt(s['max'])}"
            f"  (n={s['n']})")


def report(args):
    sides = {}
    for spec in args.side:
        name, _, path = spec.partition("=")
        with open(path) as f:
            sides[name] = analyze(json.load(f))
    out = {"sides": sides}
    lines = []
    for name, a in sides.items():
        lines.append(f"{name}: {a['gangs']} gangs, {a['pods']} pods, {a['gpus']} GPUs; "
                     f"{a['assembled']} reached minMember; left partial {len(a['leftPartial'])}"
                     f"{' ' + ','.join(a['leftPartial']) if a['leftPartial'] else ''}; "
                     f"never bound {len(a['unbound'])}")
        lines.append(f"  wait (last pod created -> minMember bound): {fmt_summary(a['wait'])}")
        lines.append(f"  throughput: {a['podsPerSecond']} pods bound/s, {a['gangsPerSecond']} gangs at minMember/s"
                     " (first pod created -> last bind)")
        if a["fromInqueue"]["n"]:
            lines.append(f"  from Inqueue -> minMember bound:          {fmt_summary(a['fromInqueue'])}")
        lines.append(f"  submit (PodGroup POST) -> minMember bound:  {fmt_summary(a['fromSubmit'])}")
        lines.append(f"  ramp (first -> minMember-th bind):         {fmt_summary(a['ramp'])}")
        lines.append(f"  pod creation span per gang:                {fmt_summary(a['createSpan'])}")
        if a["reserve"]["n"]:
            lines.append(f"  last pod created -> first gate lifted:     {fmt_summary(a['reserve'])}")
        if a["ungateSpread"]["n"]:
            lines.append(f"  gate lifts (first -> minMember-th):        {fmt_summary(a['ungateSpread'])};"
                         f" gangs bound before all gates lifted: {a['bindBeforeAllUngated']}")
            lines.append(f"  minMember-th gate lifted -> bound:         {fmt_summary(a['gateToBind'])}")
        lines.append(f"  partial: {a['partialGpuSeconds']} GPU-s held below minMember (ramps included), "
                     f"{a['interleaved']} gangs with another gang's bind inside their ramp, "
                     f"at most {a['peakPartial']} gangs partially bound at once")
        lines.append("  wait by gang size: " + "  ".join(
            f"{s}: p50 {fmt(v['p50'])} max {fmt(v['max'])} (n={v['n']})" for s, v in a["waitBySize"].items()))
        if a["errors"]:
            lines.append(f"  watch errors: {a['errors'][:3]}")
    if args.metrics and os.path.exists(args.metrics):
        with open(args.metrics) as f:
            m = parse_metrics(f.read())
        name = "muster_gang_wait_seconds"
        hq = {q: histogram_quantile(m, name, q) for q in (0.5, 0.9, 0.99)}
        count, total = m.get(name + "_count", 0), m.get(name + "_sum", 0)
        out["metrics"] = {"waitQuantiles": hq, "waitCount": count, "waitSum": total,
                          **{k: v for k, v in m.items() if k.startswith("muster_gang")
                             and "_bucket" not in k and not k.startswith(name)}}
        lines.append(f"muster_gang_wait_seconds (admission = PodGroup Inqueue, pass granularity): "
                     f"count {count:.0f}, mean {fmt(total / count if count else None)}, histogram_quantile "
                     f"p50 {fmt(hq[0.5])} p90 {fmt(hq[0.9])} p99 {fmt(hq[0.99])}")
        lines.append("  " + ", ".join(f"{k} = {v:g}" for k, v in m.items() if k.startswith("muster_gang")
                                      and "_bucket" not in k and not k.startswith(name)))
    if "muster" in sides and "stock" in sides:
        mp, sp = sides["muster"]["wait"], sides["stock"]["wait"]
        if mp["p50"] and sp["p50"]:
            lines.append(f"ratio muster / stock: p50 {mp['p50'] / sp['p50']:.2f}  p99 {mp['p99'] / sp['p99']:.2f}")
    if "muster" in sides and sides["muster"]["wait"]["p99"] is not None:
        p99 = sides["muster"]["wait"]["p99"]
        lines.append(f"muster p99 {p99:.3f} s vs target <= {args.target_p99:g} s: "
                     f"{'met' if p99 <= args.target_p99 else 'NOT met'}")
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("workload")
    w.add_argument("--seed", type=int, default=5)
    w.add_argument("--gangs", type=int, default=60)
    w.add_argument("--sizes", default="2,4,8,16,32,64,100")
    w.add_argument("--gpus", default="1,1,2,4")
    w.add_argument("--interval", default="0.5,1.0")
    w.add_argument("--run-seconds", default="30,60")
    w.add_argument("--max-gpus", type=int, default=4000)
    r = sub.add_parser("run")
    r.add_argument("cluster_dir")
    r.add_argument("namespace")
    r.add_argument("workload")
    r.add_argument("out")
    r.add_argument("--scheduler", required=True)
    r.add_argument("--gated", action="store_true")
    peer = r.add_mutually_exclusive_group()
    peer.add_argument("--upstream", action="store_true",
                      help="gangs as Kubernetes' own Workload + PodGroup (scheduling.k8s.io/v1beta1)")
    peer.add_argument("--kueue", metavar="QUEUE", help="gangs as Kueue pod groups of this LocalQueue")
    r.add_argument("--await-inqueue", type=float, default=0)
    r.add_argument("--timeout", type=float, default=120)
    p = sub.add_parser("report")
    p.add_argument("--side", action="append", default=[])
    p.add_argument("--metrics")
    p.add_argument("--target-p99", type=float, default=0.5)
    p.add_argument("--json")
    args = ap.parse_args(argv[1:])
    if args.cmd == "workload":
        w = make_workload(args)
        print(json.dumps(w, indent=1))
        print(f"[gang-wait] workload: {len(w['gangs'])} gangs, {w['pods']} pods, {w['gpus']} GPUs, arriving"
              f" over {w['gangs'][-1]['at']:.0f} s", file=sys.stderr)
        return 0
    return run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
