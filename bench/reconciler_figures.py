"""The pure figures of bench/reconciler.py (stdlib only): Prometheus text
parsed into kube-apiserver's write series and the reconciler's counters,
which write set each write belongs to (reconciler.py's docstring defines
them), the figures of one run, and the text table of one shape."""

import json
import re

from harness.figures import quantile, ratio, summary  # noqa: F401  e2e/scenarios/harness (quantile: the tests')
from harness import figures

WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY")
SHARED = ("podgroups", "services", "configmaps", "secrets", "networkpolicies",
          "persistentvolumeclaims", "events")


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
            out[window] = window_figures(snaps["before"], snaps[window], pods, controller)
    return out


def window_figures(before, after, pods, controller):
    """The writes, CPU seconds and reconciler syncs between two snapshots."""
    w = window_writes(before, after, pods)
    cpu = diff(before.get("cpu", {}), after.get("cpu", {}))
    w["cpu"] = cpu
    w["controllerCpu"] = cpu.get(controller, 0.0) if cpu else None
    w["apiserverCpu"] = (cpu.get("kube-apiserver", 0.0) + cpu.get("etcd", 0.0)) if cpu else None
    other = w.get("reconcilerOther", {})
    n = other.get("muster_reconciler_sync_duration_seconds_count{}")
    if n:
        w["syncs"] = n
        w["meanSync"] = other.get("muster_reconciler_sync_duration_seconds_sum{}", 0) / n
    return w


# --- report (pure) -------------------------------------------------------------------


def fmt(x, digits=3):
    return figures.fixed(x, digits)


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
    lines += side_notes(st, mu) + apiserver_lines(st, mu) + reconciler_lines(mu) + path_lines(st, mu)
    return "\n".join(lines)


def side_notes(st, mu):
    """Sides that did not get all their pods, and their errors."""
    lines = []
    for name, a in (("stock", st), ("muster", mu)):
        if a and (a["complete"] < a["jobs"] or a["podsCreated"] < a["pods"]):
            lines.append(f"  {name}: only {a['complete']}/{a['jobs']} Jobs got all their pods "
                         f"({a['podsCreated']}/{a['pods']} pods created, {a['podsRunning']} Running)")
        if a and a["errors"]:
            lines.append(f"  {name} errors: {a['errors'][:3]}")
    return lines


def apiserver_lines(st, mu):
    """Where the writes went (settled window), kube-apiserver's view of both
    sides, and the reads per pod."""
    lines = []
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
    return lines


def reconciler_lines(mu):
    """muster's reconciler: its own writes and syncs."""
    lines = []
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
    return lines


def path_lines(st, mu):
    """CPU by component, the reconciler's target, where job -> pods goes
    and how the Jobs' statuses went."""
    lines = []
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
    return lines


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
