"""bench/soak.py's pure parts (stdlib only): the seeded churn's object
builders, process samples from /proc text, the invariant checks over plain
listed objects, the "flat" verdict and the report lines. No I/O here; the
tests (bench/soak_test.py) feed hand-made objects.

Invariants (each check returns a list of violation strings, empty = ok):
  gpu_overcommit   per node, the nvidia.com/gpu of its live bound pods (bound:
                   spec.nodeName set; live: phase not Succeeded/Failed and
                   no deletionTimestamp) <= its allocatable; and no GPU index
                   of muster.io/gpu-ids held by two live pods of one node
  GangWatch        a PodGroup with 0 < bound pods < minMember (bound counts
                   finished pods too: a gang that ran stays whole) for longer
                   than the grace window; pods mid-bind and restarts pass
  job_duplicates   a Volcano Job with more live pods (no deletionTimestamp)
                   than the sum of its tasks' replicas, or a pod whose
                   task-index is outside its task's replicas
Flat (flat_verdict): the last sample under churn against the sample at the
end of the warm-up: RSS within +RSS_GROWTH (15 %) and open fds within
+FD_GROWTH (10).
"""

import random

GPU = "nvidia.com/gpu"
GROUP = "scheduling.k8s.io/group-name"
GPU_IDS = "muster.io/gpu-ids"
RUN = "muster.io/run-seconds"
EXIT = "muster.io/exit-code"
JOB_NAME = "volcano.sh/job-name"
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
TERMINAL = ("Succeeded", "Failed")
JOB_DONE = ("Completed", "Failed", "Aborted", "Terminated")
RSS_GROWTH = 0.15
FD_GROWTH = 10


# --- quantities -------------------------------------------------------------------


def gpus_of(pod):
    """A pod's whole nvidia.com/gpu: the sum over its containers of the
    limit (else the request)."""
    total = 0
    for c in pod.get("spec", {}).get("containers", []):
        res = c.get("resources") or {}
        q = (res.get("limits") or {}).get(GPU, (res.get("requests") or {}).get(GPU, "0"))
        total += int(float(q))
    return total


def is_live(pod):
    return (pod.get("status", {}).get("phase") not in TERMINAL
            and not pod.get("metadata", {}).get("deletionTimestamp"))


def node_of(pod):
    return pod.get("spec", {}).get("nodeName") or None


# --- the churn ---------------------------------------------------------------------


ACTIONS = (("gang", 30), ("pod", 30), ("job", 20), ("queue", 6), ("node", 4), ("idle", 10))


def pick_action(rng):
    """One weighted action name (ACTIONS) from the seeded rng."""
    r = rng.uniform(0, sum(w for _, w in ACTIONS))
    for name, w in ACTIONS:
        if r < w:
            return name
        r -= w
    return ACTIONS[-1][0]


def gang_shape(rng):
    """(pods, gpus per pod, run seconds) of a gang: 2-8 pods x 1/2/4/8 GPUs,
    at most 32 GPUs in all."""
    gpus = rng.choice((1, 1, 2, 2, 4, 8))
    pods = rng.randint(2, max(2, min(8, 32 // gpus)))
    return pods, gpus, rng.randint(10, 60)


def plain_pod(name, gpus, run_seconds, spec_of):
    """A plain volcano pod (no PodGroup) that runs `run_seconds`; spec_of is
    placement.fake_gpu_pod_spec."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"soak.muster.io/kind": "pod"},
                         "annotations": {RUN: str(run_seconds)}},
            "spec": spec_of("volcano", gpus, memory="64Mi")}


def volcano_job(name, queue, tasks, gpus, run_seconds, flaky, spec_of, max_retry=2):
    """A batch.volcano.sh/v1alpha1 Job: `tasks` = [(task name, replicas)],
    minAvailable = every replica; each pod asks `gpus` and runs
    `run_seconds`. flaky: every pod fails (exit code 1) and the policy
    PodFailed -> RestartJob restarts the job up to max_retry times, then it is
    Failed."""
    ann = {RUN: str(run_seconds)}
    if flaky:
        ann[EXIT] = "1"
    spec = {"schedulerName": "volcano", "queue": queue, "minAvailable": sum(r for _, r in tasks),
            "tasks": [{"name": t, "replicas": r,
                       "template": {"metadata": {"annotations": dict(ann)},
                                    "spec": spec_of("volcano", gpus, memory="64Mi")}} for t, r in tasks]}
    if flaky:
        spec["maxRetry"] = max_retry
        spec["policies"] = [{"event": "PodFailed", "action": "RestartJob"}]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "labels": {"soak.muster.io/kind": "job"}}, "spec": spec}


def job_shape(rng):
    """(tasks, gpus per pod, run seconds, flaky) of a Volcano Job: one task
    of 1-4 workers, or a master and 1-3 workers; 0, 1 or 2 GPUs a pod; a
    third of them flaky."""
    if rng.random() < 0.5:
        tasks = [("worker", rng.randint(1, 4))]
    else:
        tasks = [("master", 1), ("worker", rng.randint(1, 3))]
    return tasks, rng.choice((0, 1, 1, 2)), rng.randint(10, 40), rng.random() < 1 / 3


def extra_node(template, name, rack="rack-soak"):
    """A copy of a cluster Node (cluster.sh's nodes.json item) named `name`."""
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(template["metadata"].get("labels") or {}),
                         "annotations": dict(template["metadata"].get("annotations") or {})},
            "spec": {}, "status": dict(template.get("status") or {})}
    node["metadata"]["labels"]["kubernetes.io/hostname"] = name
    node["metadata"]["labels"]["soak.muster.io/extra"] = "true"
    if "network.muster.io/rack" in node["metadata"]["labels"]:
        node["metadata"]["labels"]["network.muster.io/rack"] = rack
    return node


def new_rng(seed):
    return random.Random(seed)


# --- process samples ---------------------------------------------------------------


def parse_status(text):
    """/proc/<pid>/status -> (VmRSS in KiB, Threads)."""
    rss = threads = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "VmRSS":
            rss = int(value.split()[0])
        elif key == "Threads":
            threads = int(value.split()[0])
    return rss, threads


def parse_state(text):
    """A cluster state file -> ({name: port}, {name: (pid, starttime)})."""
    ports, procs = {}, {}
    for line in text.splitlines():
        p = line.split()
        if p[:1] == ["port"] and len(p) >= 3:
            ports[p[1]] = int(p[2])
        elif p[:1] == ["proc"] and len(p) >= 4:
            procs[p[1]] = (int(p[2]), p[3])
    return ports, procs


def stat_starttime(text):
    """/proc/<pid>/stat -> field 22 (start time in clock ticks)."""
    return text.rsplit(")", 1)[1].split()[19]


def cache_sizes(series):
    """parse_prom output -> {kind: n} of muster_extender_cache_objects."""
    return {lb.get("kind", "?"): int(v) for name, lb, v in series if name == "muster_extender_cache_objects"}


def job_phases(series):
    """parse_prom output -> {phase: n} of muster_reconciler_jobs (zeros dropped)."""
    return {lb.get("phase", "?"): int(v) for name, lb, v in series if name == "muster_reconciler_jobs" and v}


# --- invariants --------------------------------------------------------------------


def gpu_overcommit(nodes, pods):
    """Violations: nodes whose live bound pods ask more nvidia.com/gpu than
    the node's allocatable, and GPU indices (muster.io/gpu-ids) held twice on
    one node."""
    alloc = {n["metadata"]["name"]: int(float((n.get("status", {}).get("allocatable") or {}).get(GPU, "0")))
             for n in nodes}
    used, held, out = {}, {}, []
    for pod in pods:
        node = node_of(pod)
        if not node or not is_live(pod):
            continue
        used[node] = used.get(node, 0) + gpus_of(pod)
        ids = (pod["metadata"].get("annotations") or {}).get(GPU_IDS, "")
        name = f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']}"
        for i in (x for x in ids.split(",") if x.strip()):
            other = held.setdefault((node, i.strip()), name)
            if other != name:
                out.append(f"node {node}: GPU {i.strip()} held by {other} and {name}")
    for node, n in sorted(used.items()):
        if n > alloc.get(node, 0):
            out.append(f"node {node}: {n} GPUs bound > allocatable {alloc.get(node, 0)}")
    return out


def gang_counts(pod_groups, pods):
    """{namespace/PodGroup: (minMember, pods bound (any phase))}, pods matched
    by their scheduling.k8s.io/group-name annotation."""
    bound = {}
    for pod in pods:
        meta = pod["metadata"]
        g = (meta.get("annotations") or {}).get(GROUP)
        if g and node_of(pod) and not meta.get("deletionTimestamp"):
            key = f"{meta.get('namespace', '')}/{g}"
            bound[key] = bound.get(key, 0) + 1
    out = {}
    for pg in pod_groups:
        meta = pg["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        out[key] = (int(pg.get("spec", {}).get("minMember", 1)), bound.get(key, 0))
    return out


class GangWatch:
    """Partial gangs over time: observe(now, counts, exempt) with
    gang_counts' output; a gang partly bound (0 < bound < minMember) since
    more than `grace` seconds is a violation, reported once per episode.
    `exempt`: gang keys being deleted (their pods go one by one)."""

    def __init__(self, grace):
        self.grace = grace
        self.since = {}
        self.reported = set()
        self.longest = 0.0

    def observe(self, now, counts, exempt=()):
        out = []
        for key, (minimum, bound) in counts.items():
            if key in exempt or bound == 0 or bound >= minimum:
                self.since.pop(key, None)
                self.reported.discard(key)
                continue
            t0 = self.since.setdefault(key, now)
            self.longest = max(self.longest, now - t0)
            if now - t0 > self.grace and key not in self.reported:
                self.reported.add(key)
                out.append(f"PodGroup {key}: {bound} of minMember {minimum} bound for {now - t0:.0f} s")
        for key in list(self.since):
            if key not in counts:
                del self.since[key]
                self.reported.discard(key)
        return out


def job_duplicates(jobs, pods):
    """Violations: Volcano Jobs with more live pods than their replicas, or
    pods whose task index is outside their task's replicas."""
    replicas = {}
    for job in jobs:
        meta = job["metadata"]
        tasks = {t.get("name"): int(t.get("replicas", 1)) for t in job.get("spec", {}).get("tasks", [])}
        replicas[(meta.get("namespace", ""), meta["name"])] = tasks
    count, out = {}, []
    for pod in pods:
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get(JOB_NAME)
        key = (meta.get("namespace", ""), job)
        if not job or key not in replicas or meta.get("deletionTimestamp"):
            continue
        count[key] = count.get(key, 0) + 1
        ann = meta.get("annotations") or {}
        task, index = ann.get(TASK_SPEC), ann.get(TASK_INDEX)
        if task in replicas[key] and index is not None and int(index) >= replicas[key][task]:
            out.append(f"Job {key[0]}/{job}: pod {meta['name']} has task-index {index} >= replicas "
                       f"{replicas[key][task]} of task {task}")
    for key, n in sorted(count.items()):
        want = sum(replicas[key].values())
        if n > want:
            out.append(f"Job {key[0]}/{key[1]}: {n} pods > {want} replicas")
    return out


# --- verdict and report ------------------------------------------------------------


def sample_at(samples, t):
    """The first sample taken at or after t seconds (else the last one)."""
    for s in samples:
        if s["t"] >= t:
            return s
    return samples[-1] if samples else None


def flat_verdict(samples, warm_t, procs=("extender", "reconciler"), rss_growth=RSS_GROWTH, fd_growth=FD_GROWTH):
    """(ok, lines): per process, the last sample vs the one at warm_t: RSS
    may grow at most rss_growth (fraction), fds at most fd_growth."""
    if not samples:
        return False, ["no samples"]
    warm, last = sample_at(samples, warm_t), samples[-1]
    ok, lines = True, []
    for p in procs:
        a, b = warm["procs"].get(p), last["procs"].get(p)
        if not a or not b:
            ok = False
            lines.append(f"{p}: no sample")
            continue
        rss_ok = b["rss_kb"] <= a["rss_kb"] * (1 + rss_growth)
        fd_ok = b["fds"] <= a["fds"] + fd_growth
        ok = ok and rss_ok and fd_ok
        lines.append(f"{p}: RSS {a['rss_kb'] / 1024:.1f} -> {b['rss_kb'] / 1024:.1f} MiB "
                     f"({pct(a['rss_kb'], b['rss_kb'])}, limit +{rss_growth * 100:.0f} %) "
                     f"{'ok' if rss_ok else 'GROWING'}; fds {a['fds']} -> {b['fds']} "
                     f"(limit +{fd_growth}) {'ok' if fd_ok else 'GROWING'}; threads {a['threads']} -> {b['threads']} "
                     f"[{clock(warm['t'])} vs {clock(last['t'])}]")
    return ok, lines


def slope_mib_per_hour(samples, proc, after_t):
    """Least-squares slope of a process's RSS over the samples after
    after_t, in MiB per hour (None with fewer than 3)."""
    pts = [(s["t"], s["procs"][proc]["rss_kb"] / 1024) for s in samples
           if s["t"] >= after_t and proc in s["procs"]]
    if len(pts) < 3:
        return None
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / sxx * 3600


def pct(a, b):
    return f"{(b - a) / a * 100:+.1f} %" if a else "n/a"


def clock(t):
    t = int(round(t))
    return f"{t // 60}:{t % 60:02d}"


def report_line(sample, churned, violations):
    """One periodic line: each muster process's RSS, fds and threads, the
    extender's cache sizes, the reconciler's Jobs by phase, what was churned
    so far and the violations so far."""
    parts = [f"[soak {clock(sample['t']):>6}]"]
    for p in ("extender", "reconciler"):
        s = sample["procs"].get(p)
        parts.append(f"{p} rss {s['rss_kb'] / 1024:.1f}MiB fds {s['fds']} thr {s['threads']}" if s else f"{p} GONE")
    cache = sample.get("cache") or {}
    parts.append("cache " + " ".join(f"{k}={cache[k]}" for k in sorted(cache) if k != "other"))
    jobs = sample.get("jobs") or {}
    parts.append("jobs " + (" ".join(f"{k}={jobs[k]}" for k in sorted(jobs)) or "none"))
    parts.append("churned " + " ".join(f"{k}={churned[k]}" for k in sorted(churned)))
    parts.append(f"violations {violations}")
    return parts[0] + " " + " | ".join(parts[1:])
