#!/usr/bin/env python3
"""Pod batches and placement checks for the extender e2e scenarios (stdlib only).

Subcommands:
  pods PREFIX COUNT GPUS [SCHEDULER]
      Print a v1 List of COUNT pods named PREFIX-0..PREFIX-<COUNT-1> for
      SCHEDULER (default volcano). GPUS is a comma-separated cycle of
      nvidia.com/gpu limits ("1,1,2,4": pod i asks for GPUS[i % 4]). The pods
      run until deleted (no muster.io/run-seconds).
  check NAMESPACE
      Read {"pods": <kubectl get pods -A -o json>, "nodes": <kubectl get nodes
      -o json>} on stdin. Print one JSON summary line and exit 1 if any
      invariant fails:
        - no node holds more nvidia.com/gpu (over every live pod bound to it,
          in any namespace) than its allocatable;
        - every pod of NAMESPACE bound by the volcano scheduler carries the
          Binding annotations muster.io/node = spec.nodeName and
          muster.io/resources = its GPU request.
      Summary keys: bound, pending (pods of NAMESPACE), gpusUsed and
      gpusAllocatable (whole cluster), overcommitted (nodes), badAnnotations,
      gpusElsewhere and elsewhere (GPUs held by live pods of other
      namespaces, and up to 10 of them as "ns/name on node: N").
  cache-check STATE_FILE
      Read `kubectl get pods -A -o json` on stdin and the extender's
      /debug/state from STATE_FILE; exit 1 unless, node by node, the cache's
      allocated nvidia.com/gpu equals what the API's live pods hold there and
      no reservation is outstanding.
"""

import json
import sys

GPU = "nvidia.com/gpu"
TERMINAL = ("Succeeded", "Failed")


def fake_gpu_pod_spec(scheduler, gpus, memory=None, cpu="100m"):
    """The spec of a kwok pod asking `gpus` nvidia.com/gpu (as a limit, the
    way device-plugin resources are asked for; none when 0) and `cpu` (and
    `memory`), never restarted, deleted at once. Shared by the extender, gang
    and queue scenarios and bench/gang_wait.py."""
    requests = {"cpu": cpu}
    if memory:
        requests["memory"] = memory
    limits = {GPU: str(gpus)} if gpus else {}
    return {
        "schedulerName": scheduler,
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "containers": [{
            "name": "main",
            "image": "registry.invalid/muster/fake:1",
            "resources": {"limits": limits, "requests": requests},
        }],
    }


def make_pods(prefix, count, gpus, scheduler):
    cycle = [int(g) for g in gpus.split(",")]
    items = []
    for i in range(count):
        n = cycle[i % len(cycle)]
        items.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "labels": {"batch": prefix}},
            "spec": fake_gpu_pod_spec(scheduler, n),
        })
    return {"apiVersion": "v1", "kind": "List", "items": items}


def gpu_request(pod):
    """The pod's effective nvidia.com/gpu request (extended resources: requests
    default to limits; init containers run before the others)."""

    def of(c):
        res = c.get("resources") or {}
        value = (res.get("requests") or {}).get(GPU) or (res.get("limits") or {}).get(GPU) or "0"
        return int(value)

    spec = pod["spec"]
    app = sum(of(c) for c in spec.get("containers") or [])
    init = max([of(c) for c in spec.get("initContainers") or []] or [0])
    return max(app, init)


def check(namespace, doc):
    allocatable = {n["metadata"]["name"]: int((n["status"].get("allocatable") or {}).get(GPU, "0"))
                   for n in doc["nodes"]["items"]}
    used = {name: 0 for name in allocatable}
    used.update(gpus_by_node(doc["pods"]))
    bound = pending = 0
    bad = []
    elsewhere = []
    for pod in doc["pods"]["items"]:
        node = pod["spec"].get("nodeName")
        if pod["metadata"]["namespace"] != namespace:
            if live_on_node(pod) and gpu_request(pod):
                elsewhere.append((f"{pod['metadata']['namespace']}/{pod['metadata']['name']} on {node}",
                                  gpu_request(pod)))
            continue
        if not node:
            pending += 1
            continue
        bound += 1
        if pod["spec"].get("schedulerName") != "volcano":
            continue
        ann = pod["metadata"].get("annotations") or {}
        want_res = f"{GPU}={gpu_request(pod)}" if gpu_request(pod) else "none"
        if ann.get("muster.io/node") != node or ann.get("muster.io/resources") != want_res:
            bad.append(f"{pod['metadata']['name']}: on {node}, annotations "
                       f"node={ann.get('muster.io/node')} resources={ann.get('muster.io/resources')}")
    over = [f"{n}: {used[n]} of {allocatable.get(n, 0)}" for n in sorted(used)
            if used[n] > allocatable.get(n, 0)]
    summary = {"bound": bound, "pending": pending, "gpusUsed": sum(used.values()),
               "gpusAllocatable": sum(allocatable.values()), "overcommitted": over,
               "badAnnotations": bad[:10], "badAnnotationCount": len(bad),
               "gpusElsewhere": sum(g for _, g in elsewhere),
               "elsewhere": [f"{where}: {g}" for where, g in elsewhere[:10]]}
    return summary, not over and not bad


def live_on_node(pod):
    """Bound and not finished: the pod holds what it asks on its node."""
    return bool(pod["spec"].get("nodeName")) and pod.get("status", {}).get("phase") not in TERMINAL


def gpus_by_node(pods):
    held = {}
    for pod in pods["items"]:
        if live_on_node(pod):
            node = pod["spec"]["nodeName"]
            held[node] = held.get(node, 0) + gpu_request(pod)
    return held


def cache_check(state, pods):
    want = gpus_by_node(pods)
    bad = []
    for node in state["nodes"]:
        # /debug/state counts nvidia.com/gpu in muster's unit, thousandths.
        got = node["allocated"].get(GPU, 0) / 1000
        if got != want.get(node["name"], 0):
            bad.append(f"{node['name']}: cache {got}, API {want.get(node['name'], 0)}")
    ok = not bad and state["reservations"] == 0
    return (f"debug/state: {len(state['nodes'])} nodes, {state['reservations']} reservations, "
            f"{sum(want.values())} GPUs held; mismatches: {bad or 'none'}"), ok


def main(argv):
    if len(argv) >= 5 and argv[1] == "pods":
        scheduler = argv[5] if len(argv) > 5 else "volcano"
        json.dump(make_pods(argv[2], int(argv[3]), argv[4], scheduler), sys.stdout)
        return 0
    if len(argv) == 3 and argv[1] == "check":
        summary, ok = check(argv[2], json.load(sys.stdin))
        print(json.dumps(summary, sort_keys=True))
        return 0 if ok else 1
    if len(argv) == 3 and argv[1] == "cache-check":
        with open(argv[2]) as f:
            message, ok = cache_check(json.load(f), json.load(sys.stdin))
        print(message)
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
