#!/usr/bin/env python3
"""Restart-to-ready and memory of muster's sidecars on a large cluster
(issue 22): driven by bench/restart.sh on a running cluster (stdlib only).

usage: restart.py CLUSTER_DIR CLUSTER_FILE [--pods-per-node N] [--gpu-pods-per-node G]
                  [--kills K] [--jobs J] [--burst B] [--out FILE]

1. Idle: the RSS of the extender and the reconciler on the cluster as it
   came up (no nodes, no pods).
2. Fill: the nodes of CLUSTER_FILE (e.g. kwok-5000), then N pods per node
   created already bound (spec.nodeName; G of them ask 1 nvidia.com/gpu, the
   rest 100m cpu), over 8 connections in parallel. Then wait until the
   extender's cache holds them all (muster_extender_cache_objects).
3. Extender, K times: start a burst of B one-GPU volcano pods, kill -9 the
   extender while they bind, start it again and time kill -> /readyz 200
   (polled every 20 ms); wait for the burst to be bound; its RSS; then
   check every node's GPUs against what its bound pods ask (a double booking
   is a node asked for more than it has).
4. Reconciler: J Volcano Jobs of one pod each; once the reconciler made
   their pods, its RSS; then K times kill -9 -> /readyz 200.
Prints a table and writes the figures as JSON to FILE.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "e2e", "scenarios"))
sys.path.insert(0, os.path.join(REPO, "e2e", "cluster"))
from harness.cluster import Api, send  # noqa: E402
from harness.figures import parse_metrics  # noqa: E402
from placement import fake_gpu_pod_spec, gpu_request  # noqa: E402
import cluster_helper  # noqa: E402

CLUSTER = os.path.join(REPO, "e2e", "cluster", "cluster.sh")
NAMESPACE = "bench-restart"  # the bound pods and the Jobs
BURST_NAMESPACE = "bench-restart-burst"  # the pods bound across each extender kill
JOB_NAMESPACE = "bench-restart-jobs"
GPU = "nvidia.com/gpu"


def log(msg):
    print(f"[restart] {msg}", file=sys.stderr, flush=True)


def state(cluster_dir):
    """(ports, procs) of CLUSTER_DIR/state: {name: port}, {name: pid}."""
    ports, procs = {}, {}
    with open(os.path.join(cluster_dir, "state")) as f:
        for parts in (line.split() for line in f):
            if parts[:1] == ["port"]:
                ports[parts[1]] = int(parts[2])
            elif parts[:1] == ["proc"]:
                procs[parts[1]] = int(parts[2])
    return ports, procs


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def http_ok(port, path, timeout=1.0):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return parse_metrics(r.read().decode())


def create_parallel(api, path, items, workers=8):
    """POSTs `items` to `path` over `workers` connections; an object that
    exists already (409, a rerun on the same cluster) counts as created.
    Raises on the first other refusal."""
    errors = []

    def worker(part):
        conn = None
        for item in part:
            conn, status, text = send(api, conn, "POST", path, json.dumps(item))
            if status not in (201, 409):
                errors.append(f"{item['kind']} {item['metadata']['name']}: HTTP {status} {text[:200]!r}")
                return
        if conn:
            conn.close()

    threads = [threading.Thread(target=worker, args=(items[i::workers],)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])


def list_all(api, path, page=5000):
    """Every item of a collection, `page` at a time."""
    items, token = [], ""
    while True:
        doc = api.get(f"{path}?limit={page}" + (f"&continue={token}" if token else ""))
        items += doc["items"]
        token = doc["metadata"].get("continue", "")
        if not token:
            return items


def create_nodes(api, cluster_file):
    with open(cluster_file) as f:
        nodes = cluster_helper.build_nodes(cluster_helper.parse_subset(f.read(), cluster_file), cluster_file)
    create_parallel(api, "/api/v1/nodes", nodes)
    return [n["metadata"]["name"] for n in nodes]


def bound_pods(node_names, per_node, gpu_per_node):
    items = []
    for n, node in enumerate(node_names):
        for i in range(per_node):
            spec = fake_gpu_pod_spec("default-scheduler", 1 if i < gpu_per_node else 0)
            spec["nodeName"] = node
            items.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"fill-{n}-{i}"}, "spec": spec})
    return items


def wait_for(what, predicate, timeout, every=0.5):
    """Polls `predicate` until it holds or `timeout` s pass. A poll that
    times out counts as "not yet": while 5000 Jobs make their pods, one list
    of their namespace took longer than the client's 30 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except TimeoutError as e:
            log(f"waiting for {what}: a poll timed out ({e}); polling again")
        time.sleep(every)
    log(f"timed out after {timeout} s waiting for {what}")
    return False


def double_bookings(api):
    """Nodes whose bound, unfinished pods ask more GPUs than the node has."""
    nodes = list_all(api, "/api/v1/nodes")
    pods = list_all(api, "/api/v1/pods")
    have = {n["metadata"]["name"]: int((n["status"].get("allocatable") or {}).get(GPU, "0")) for n in nodes}
    used = {}
    for p in pods:
        node = p["spec"].get("nodeName")
        if node and p.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            used[node] = used.get(node, 0) + gpu_request(p)
    return sorted(n for n, u in used.items() if u > have.get(n, 0))


def cluster(cluster_dir, *args):
    subprocess.run([CLUSTER, *args, "--dir", cluster_dir], check=True, stdout=subprocess.DEVNULL)


def restart_to_ready(cluster_dir, which, muster=""):
    """kill -9 `which`, start it again (from `muster`, else the binary `up`
    recorded): seconds from the kill to /readyz 200."""
    ports, _ = state(cluster_dir)
    t_kill = time.monotonic()
    cluster(cluster_dir, which, "stop", "--signal", "KILL")
    starter = subprocess.Popen([CLUSTER, which, "start", "--dir", cluster_dir] + (["--muster", muster] if muster else []),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ready = None
    while ready is None and time.monotonic() - t_kill < 300:
        if http_ok(ports[which], "/readyz", timeout=0.5):
            ready = time.monotonic() - t_kill
        else:
            time.sleep(0.02)
    starter.wait()
    return ready


def volcano_job(name):
    spec = fake_gpu_pod_spec("volcano", 0, cpu="10m")
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name},
            "spec": {"minAvailable": 1, "schedulerName": "volcano", "queue": "default",
                     "tasks": [{"name": "t", "replicas": 1, "template": {"spec": spec}}]}}


def create_jobs(api, count):
    create_parallel(api, f"/apis/batch.volcano.sh/v1alpha1/namespaces/{JOB_NAMESPACE}/jobs",
                    [volcano_job(f"job-{i}") for i in range(count)])


def count_pods(api, namespace):
    return len(list_all(api, f"/api/v1/namespaces/{namespace}/pods"))


def extender_rounds(api, cluster_dir, args, out):
    for k in range(args.kills):
        burst = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"burst-{k}-{i}"},
                  "spec": fake_gpu_pod_spec("volcano", 1)} for i in range(args.burst)]
        creator = threading.Thread(target=create_parallel,
                                   args=(api, f"/api/v1/namespaces/{BURST_NAMESPACE}/pods", burst))
        creator.start()
        time.sleep(0.5)
        ready = restart_to_ready(cluster_dir, "extender", args.muster)
        creator.join()

        def all_bound():
            pods = list_all(api, f"/api/v1/namespaces/{BURST_NAMESPACE}/pods")
            return sum(1 for p in pods if p["metadata"]["name"].startswith(f"burst-{k}-")
                       and p["spec"].get("nodeName")) == args.burst

        bound = wait_for(f"burst {k} bound", all_bound, 300)
        _, procs = state(cluster_dir)
        rss = rss_mib(procs["extender"])
        doubles = double_bookings(api)
        out["extender"]["rounds"].append({"ready_s": ready, "rss_mib": round(rss, 1),
                                          "burst_bound": bound, "double_booked_nodes": doubles})
        log(f"extender kill {k + 1}: ready in {ready:.2f} s, RSS {rss:.1f} MiB, burst bound {bound}, "
            f"double-booked nodes {len(doubles)}")


def reconciler_rounds(api, cluster_dir, args, out):
    create_jobs(api, args.jobs)
    wait_for(f"{args.jobs} job pods", lambda: count_pods(api, JOB_NAMESPACE) >= args.jobs, 900, every=5)
    time.sleep(5)
    _, procs = state(cluster_dir)
    out["reconciler"]["loaded_rss_mib"] = round(rss_mib(procs["reconciler"]), 1)
    for k in range(args.kills):
        ready = restart_to_ready(cluster_dir, "reconciler", args.muster)
        time.sleep(3)
        _, procs = state(cluster_dir)
        rss = rss_mib(procs["reconciler"])
        out["reconciler"]["rounds"].append({"ready_s": ready, "rss_mib": round(rss, 1)})
        log(f"reconciler kill {k + 1}: ready in {ready:.2f} s, RSS {rss:.1f} MiB")


def summary(out):
    lines = []
    for who in ("extender", "reconciler"):
        rounds = out[who]["rounds"]
        if not rounds:
            continue
        ready = [r["ready_s"] for r in rounds if r["ready_s"] is not None]
        rss = [r["rss_mib"] for r in rounds]
        idle = out[who]["idle_rss_mib"]
        lines.append(f"{who}: {len(rounds)} kills, kill -> ready median {statistics.median(ready):.2f} s "
                     f"[{min(ready):.2f}-{max(ready):.2f}] (target <= 5 s); RSS median "
                     f"{statistics.median(rss):.1f} MiB, {statistics.median(rss) - idle:+.1f} above idle "
                     f"{idle:.1f} (target <= 64)")
        if who == "extender":
            lines.append(f"  double-booked nodes after each kill: "
                         f"{[len(r['double_booked_nodes']) for r in rounds]}")
    return lines


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("cluster_dir")
    ap.add_argument("cluster_file")
    ap.add_argument("--pods-per-node", type=int, default=10)
    ap.add_argument("--gpu-pods-per-node", type=int, default=4)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--burst", type=int, default=400)
    ap.add_argument("--out", default="")
    ap.add_argument("--muster", default="", help="restart the sidecars from this binary (default: up's)")
    args = ap.parse_args(argv[1:])
    api = Api(args.cluster_dir)
    procs = state(args.cluster_dir)[1]
    out = {"extender": {"idle_rss_mib": round(rss_mib(procs["extender"]), 1), "rounds": []},
           "reconciler": {"idle_rss_mib": round(rss_mib(procs["reconciler"]), 1), "rounds": []}}
    log(f"idle RSS: extender {out['extender']['idle_rss_mib']} MiB, "
        f"reconciler {out['reconciler']['idle_rss_mib']} MiB")
    def cached(nodes, pods):
        m = metrics(state(args.cluster_dir)[0]["extender"])
        return (m.get('muster_extender_cache_objects{kind="pods"}', 0) >= pods
                and m.get('muster_extender_cache_objects{kind="nodes"}', 0) >= nodes)

    with open(args.cluster_file) as f:
        names = [n["metadata"]["name"] for n in cluster_helper.build_nodes(
            cluster_helper.parse_subset(f.read(), args.cluster_file), args.cluster_file)]
    pods = bound_pods(names, args.pods_per_node, args.gpu_pods_per_node)
    if cached(len(names), len(pods)):
        log("the cluster holds the nodes and pods already (a rerun): not creating them")
    else:
        t0 = time.monotonic()
        create_nodes(api, args.cluster_file)
        log(f"{len(names)} nodes created in {time.monotonic() - t0:.0f} s")
        for ns in (NAMESPACE, BURST_NAMESPACE, JOB_NAMESPACE):
            create_parallel(api, "/api/v1/namespaces", [{"kind": "Namespace", "metadata": {"name": ns}}], 1)
            wait_for(f"namespace {ns}'s ServiceAccount", lambda ns=ns: bool(
                api.get(f"/api/v1/namespaces/{ns}/serviceaccounts")["items"]), 60)
        t0 = time.monotonic()
        create_parallel(api, f"/api/v1/namespaces/{NAMESPACE}/pods", pods)
        log(f"{len(pods)} bound pods created in {time.monotonic() - t0:.0f} s")

    wait_for("the extender's cache to hold every node and pod", lambda: cached(len(names), len(pods)), 600,
             every=2)
    out["extender"]["loaded_rss_mib"] = round(rss_mib(state(args.cluster_dir)[1]["extender"]), 1)
    out["objects"] = {"nodes": len(names), "pods": len(pods)}
    extender_rounds(api, args.cluster_dir, args, out)
    reconciler_rounds(api, args.cluster_dir, args, out)
    text = summary(out)
    print("\n".join(text))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
