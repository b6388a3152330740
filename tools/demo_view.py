#!/usr/bin/env python3
"""Renders the `make demo` progress view and summary (tools/demo.sh).

Reads a kubectl List (pods of the demo namespace + nodes + Volcano Jobs) as
JSON on stdin:
  demo_view.py frame ELAPSED     the live table (pods per phase, GPUs per node)
  demo_view.py line ELAPSED      a one-line status (for logs that are not a TTY)
  demo_view.py summary           the final summary
  demo_view.py finished          exit 0 when every pod has finished
"""
import json
import sys
from datetime import datetime

GPU = "nvidia.com/gpu"
PHASES = ("Pending", "Running", "Succeeded", "Failed")
WAITING = "waiting for the muster reconciler (not yet available)"


def qty_int(v):
    try:
        return int(str(v))
    except ValueError:
        return 0


FRACTION = "muster.io/gpu-fraction"


def pod_gpus(pod):
    """Whole GPUs the pod asks, or the share of one GPU (muster.io/gpu-fraction)."""
    share = (pod["metadata"].get("annotations") or {}).get(FRACTION)
    if share:
        try:
            return float(share)
        except ValueError:
            return 0
    total = 0
    for c in pod["spec"].get("containers", []):
        res = c.get("resources", {})
        total += qty_int(res.get("limits", {}).get(GPU, res.get("requests", {}).get(GPU, 0)))
    return total


def gpu_cells(pods_here, capacity):
    """One character per GPU of a node: '#' held whole, '%' shared and full,
    '+' shared with a share left, '.' idle. GPUs are placed by the pods'
    muster.io/gpu-ids (pods bound without them fill the first idle GPUs)."""
    whole, shared, unnamed = set(), {}, 0
    for pod in pods_here:
        ann = pod["metadata"].get("annotations") or {}
        ids = [int(i) for i in ann.get("muster.io/gpu-ids", "").split(",") if i.isdigit()]
        if ann.get(FRACTION):
            for i in ids:
                shared[i] = shared.get(i, 0) + pod_gpus(pod)
        elif ids:
            whole.update(ids)
        else:
            unnamed += int(pod_gpus(pod))
    cells = []
    for i in range(capacity):
        if i in whole:
            cells.append("#")
        elif i in shared:
            cells.append("%" if shared[i] >= 0.999 else "+")
        elif unnamed > 0:
            cells.append("#")
            unnamed -= 1
        else:
            cells.append(".")
    return "".join(cells)


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ") if s else None


def load():
    items = json.load(sys.stdin).get("items", [])
    pods = [i for i in items if i.get("kind") == "Pod"]
    nodes = sorted((i for i in items if i.get("kind") == "Node"), key=lambda n: n["metadata"]["name"])
    jobs = [i for i in items if i.get("kind") == "Job" and i.get("apiVersion", "").startswith("batch.volcano.sh/")]
    return pods, nodes, jobs


def phase_counts(pods):
    counts = {p: 0 for p in PHASES}
    for pod in pods:
        ph = pod.get("status", {}).get("phase", "Pending")
        counts[ph] = counts.get(ph, 0) + 1
    return counts


def gpu_use(pods, nodes):
    cap = {n["metadata"]["name"]: qty_int(n["status"].get("allocatable", {}).get(GPU, 0)) for n in nodes}
    used = {name: 0 for name in cap}
    holders = {name: [] for name in cap}
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if node in used and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            used[node] += pod_gpus(pod)
            holders[node].append(pod)
    return cap, used, holders


def job_status(job):
    phase = job.get("status", {}).get("state", {}).get("phase")
    return phase if phase else WAITING


def job_detail(job):
    """"Running: 4 running, 0 pending, version 1, 1 retry" for the frame."""
    st = job.get("status", {})
    counts = ", ".join(f"{st.get(k, 0)} {k}" for k in ("pending", "running", "succeeded", "failed") if st.get(k))
    extra = f", version {st['version']}" if st.get("version") else ""
    extra += f", {st['retryCount']} retries" if st.get("retryCount") else ""
    return job_status(job) + (f": {counts}" if counts else "") + extra


def frame(pods, nodes, jobs, elapsed):
    counts = phase_counts(pods)
    cap, used, holders = gpu_use(pods, nodes)
    total_cap, total_used = sum(cap.values()), sum(used.values())
    out = [f"muster demo   t={elapsed:>4}s   {len(nodes)} nodes, {total_cap} GPUs   (refresh 2 s)", ""]
    out.append("pods (stock kube-scheduler): " + "   ".join(f"{p} {counts.get(p, 0)}" for p in PHASES))
    pct = int(100 * total_used // total_cap) if total_cap else 0
    out.append(f"GPUs in use: {total_used:g}/{total_cap} ({pct}%)")
    cells = {name: gpu_cells(holders[name], cap[name]) for name in cap}
    shared = sum(c.count("%") + c.count("+") for c in cells.values())
    partly = sum(c.count("+") for c in cells.values())
    if shared:
        out.append(f"shared GPUs (GPU sharing): {shared}, {partly} with a share left   "
                   "(# whole  % shared, full  + shared, share left  . idle)")
    out.append("")
    rack_of = {n["metadata"]["name"]: n["metadata"].get("labels", {}).get("network.muster.io/rack", "-")
               for n in nodes}
    for name in sorted(cap, key=lambda n: (rack_of[n], n)):
        c, u = cap[name], used[name]
        pods_here = ", ".join(sorted(p["metadata"]["name"] for p in holders[name]))
        out.append(f"  {rack_of[name]:<7} {name:<10} [{cells[name]:<8}] {u:g}/{c}  {pods_here}")
    if jobs:
        out.append("")
        out.append("Volcano Jobs (scheduler `volcano` = kube-scheduler + muster extender):")
        for j in jobs:
            out.append(f"  {j['metadata']['name']:<16} queue {j['spec'].get('queue', 'default'):<8} {job_detail(j)}")
    return "\n".join(out)


def line(pods, nodes, jobs, elapsed):
    counts = phase_counts(pods)
    cap, used, _ = gpu_use(pods, nodes)
    return (f"t={elapsed}s pods: " + " ".join(f"{p}={counts.get(p, 0)}" for p in PHASES)
            + f"  GPUs in use {sum(used.values()):g}/{sum(cap.values())}")


def summary(pods, nodes, jobs):
    counts = phase_counts(pods)
    out = ["", "=== summary ==="]
    out.append(f"pods: {len(pods)}  " + "  ".join(f"{p} {counts.get(p, 0)}" for p in PHASES))
    created = [ts(p["metadata"].get("creationTimestamp")) for p in pods]
    finished = []
    waits = {}
    gpu_seconds = 0
    for p in pods:
        st = p.get("status", {})
        start = ts(st.get("startTime"))
        cs = (st.get("containerStatuses") or [{}])[0].get("state", {}).get("terminated", {})
        end = ts(cs.get("finishedAt"))
        if end:
            finished.append(end)
        if start:
            size = p["metadata"].get("labels", {}).get("muster.io/size", f"{pod_gpus(p)}gpu")
            waits.setdefault(size, []).append((start - ts(p["metadata"]["creationTimestamp"])).total_seconds())
        if start and end:
            gpu_seconds += pod_gpus(p) * (end - start).total_seconds()
    if created and finished and len(finished) == len(pods):
        out.append(f"makespan (first created -> last finished): {(max(finished) - min(created)).total_seconds():.0f} s")
    out.append(f"GPU-seconds used: {gpu_seconds:.0f}")
    for size in sorted(waits, key=lambda s: -qty_int(s.rstrip("gpu"))):
        w = waits[size]
        out.append(f"  {size:>5} pods: {len(w):>2}, wait to start: mean {sum(w) / len(w):5.1f} s, max {max(w):5.1f} s")
    failed = [p for p in pods if p.get("status", {}).get("phase") == "Failed"]
    for p in failed:
        term = (p["status"].get("containerStatuses") or [{}])[0].get("state", {}).get("terminated", {})
        out.append(f"  failed: {p['metadata']['name']} (exit code {term.get('exitCode', '?')})")
    via_muster = [p for p in pods if p["spec"].get("schedulerName") == "volcano"]
    if via_muster:
        placed = [p for p in via_muster if (p["metadata"].get("annotations") or {}).get("muster.io/node")]
        out.append(f"schedulerName volcano: {len(via_muster)} pods, {len(placed)} placed by muster "
                   "(Binding annotation muster.io/node)")
        for p in placed[:3]:
            a = p["metadata"]["annotations"]
            out.append(f"  {p['metadata']['name']}: muster.io/node={a['muster.io/node']} "
                       f"muster.io/resources={a.get('muster.io/resources')}")
    for j in jobs:
        out.append(f"Volcano Job {j['metadata']['name']}: {job_detail(j)}")
    return "\n".join(out)


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    pods, nodes, jobs = load()
    if cmd == "frame":
        print(frame(pods, nodes, jobs, argv[2]))
    elif cmd == "line":
        print(line(pods, nodes, jobs, argv[2]))
    elif cmd == "summary":
        print(summary(pods, nodes, jobs))
    elif cmd == "finished":
        phases = [p.get("status", {}).get("phase") for p in pods]
        jobs_done = all(job_status(j) in ("Completed", "Failed", "Terminated", "Aborted") for j in jobs)
        return 0 if phases and jobs_done and all(ph in ("Succeeded", "Failed") for ph in phases) else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
