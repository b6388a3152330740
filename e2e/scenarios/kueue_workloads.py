#!/usr/bin/env python3
"""Kueue's side of the gang scenarios (stdlib only).

Usage:
  kueue_workloads.py --capacity < nodes.json
      Print the nodes' summed allocatable as "CPU MEMORY GPU" (Kueue
      quantities: millicores, bytes, count) - the ClusterQueue's quota.
  kueue_workloads.py --split Q=W,... < nodes.json
      Split it by the weights: one line "Q CPU MEMORY GPU" per queue, each
      resource in whole units (millicores, bytes, GPUs) by largest remainder,
      so the queues' nominal quotas add up to exactly the cluster.
  kueue_workloads.py WORKLOADS.json
      Summarise a `kubectl get workloads.kueue.x-k8s.io -o json` list: how
      many Workloads Kueue made, admitted, finished, and how often it evicted
      one (waitForPodsReady timeouts, preemption) - Kueue's admissions as its
      own objects record them.
  kueue_workloads.py --release CLUSTER_DIR NAMESPACE
      After a side's run: drop Kueue's finalizer (kueue.x-k8s.io/managed)
      from every pod of NAMESPACE that still carries it, so the side's pods
      go at once. Kueue releases them one pod group at a time (it had not
      released 1500 pods of the fair-share run 120 s after they were deleted),
      and the measurement is over by then. Prints how many it released.
"""
import json
import sys

from harness import cluster  # same directory: the scenarios' API client
from harness.cluster import quantity  # noqa: F401  (kueue_workloads.quantity in the tests)

FINALIZER = "kueue.x-k8s.io/managed"

def capacity(nodes):
    items = nodes.get("items", [])

    def total(resource, milli=False):
        return sum(cluster.node_allocatable(n, resource, lambda q: quantity(q, milli)) for n in items)
    return f"{total('cpu', milli=True)}m", str(total("memory")), str(total("nvidia.com/gpu"))


def split(total, weights):
    """Integer parts of `total` proportional to `weights` (a dict), adding up
    to `total`: floors, then the largest remainders get one more."""
    whole = sum(weights.values())
    exact = {q: total * w / whole for q, w in weights.items()}
    parts = {q: int(x) for q, x in exact.items()}
    for q in sorted(exact, key=lambda q: exact[q] - parts[q], reverse=True)[:total - sum(parts.values())]:
        parts[q] += 1
    return parts


def split_capacity(nodes, weights):
    cpu, memory, gpu = (int(v.rstrip("m")) for v in capacity(nodes))
    parts = [split(total, weights) for total in (cpu, memory, gpu)]
    return [(q, f"{parts[0][q]}m", str(parts[1][q]), str(parts[2][q])) for q in weights]


def condition(workload, kind):
    for c in workload.get("status", {}).get("conditions", []):
        if c.get("type") == kind:
            return c
    return {}


def summary(workloads):
    items = workloads.get("items", [])
    admitted = sum(1 for w in items if w.get("status", {}).get("admission"))
    finished = sum(1 for w in items if condition(w, "Finished").get("status") == "True")
    evictions = sum(int(w.get("status", {}).get("requeueState", {}).get("count", 0)) for w in items)
    evicted_now = sum(1 for w in items if condition(w, "Evicted").get("status") == "True")
    return (f"{len(items)} Workloads, {admitted} admitted now, {finished} finished, "
            f"{evictions} requeues after eviction, {evicted_now} evicted now")


def held(pods):
    """Names of the pods that still carry Kueue's finalizer."""
    return [p["metadata"]["name"] for p in pods.get("items", [])
            if FINALIZER in (p["metadata"].get("finalizers") or [])]


def release(cluster_dir, namespace):
    api = cluster.Api(cluster_dir)
    names = held(api.get(f"/api/v1/namespaces/{namespace}/pods"))
    conn, patch = None, json.dumps({"metadata": {"finalizers": None}})
    for name in names:
        conn, status, text = cluster.send(api, conn, "PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}", patch,
                                          content_type="application/merge-patch+json")
        if status not in (200, 404):
            raise RuntimeError(f"releasing pod {name}: HTTP {status} {text[:200]!r}")
    return len(names)


def main(argv):
    if argv[1:] == ["--capacity"]:
        print(*capacity(json.load(sys.stdin)))
        return 0
    if len(argv) == 3 and argv[1] == "--split":
        weights = {q: int(w) for q, _, w in (part.partition("=") for part in argv[2].split(","))}
        for line in split_capacity(json.load(sys.stdin), weights):
            print(*line)
        return 0
    if len(argv) == 4 and argv[1] == "--release":
        print(f"released {release(argv[2], argv[3])} pods Kueue still held")
        return 0
    if len(argv) == 2 and not argv[1].startswith("-"):
        with open(argv[1]) as f:
            print(summary(json.load(f)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
