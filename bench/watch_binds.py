#!/usr/bin/env python3
"""Times pod bindings as the API server reports them (stdlib only).

usage: watch_binds.py CLUSTER_DIR NAMESPACE COUNT READY_FILE TIMEOUT_S [RELEASED_FILE]

Lists the pods of NAMESPACE, then watches them from that resourceVersion over
the cluster's admin credentials (CLUSTER_DIR/pki, the apiserver port from
CLUSTER_DIR/state). It touches READY_FILE once the watch is open, so the
caller can release the scheduler only then, and notes the local monotonic time
at which each pod is first seen with spec.nodeName. It stops when COUNT pods are
bound or after TIMEOUT_S, and prints one JSON line:
  {"bound": n, "first_s": t, "last_s": t, "pods_per_s": (n-1)/(last-first),
   "p50_gap_ms": ..., "timeline": [[seconds since first bind, bound so far], ...]}
With RELEASED_FILE (written by the caller when it released the scheduler:
the local monotonic time, as `python3 -c 'import time; print(time.monotonic())'`
prints it), also "released_s": that moment on the same scale as first_s.
Receipt time on a loopback watch is within milliseconds of the binding, which
is plenty for runs of many seconds.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "scenarios"))
from harness.cluster import Api, read_watch  # noqa: E402  e2e/scenarios/harness: the admin client, one watch response


def list_bound(conn, ns, bound_at):
    """Lists the namespace's pods, notes the bound ones; returns the list's resourceVersion."""
    conn.request("GET", f"/api/v1/namespaces/{ns}/pods?limit=100000")
    listing = json.loads(conn.getresponse().read())
    now = time.monotonic()
    for pod in listing["items"]:
        if pod["spec"].get("nodeName"):
            bound_at.setdefault(pod["metadata"]["name"], now)
    return listing["metadata"]["resourceVersion"]


def main(argv):
    if len(argv) not in (6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    cluster_dir, ns, count, ready_file, timeout = argv[1], argv[2], int(argv[3]), argv[4], float(argv[5])
    released_file = argv[6] if len(argv) == 7 else None
    bound_at = {}
    start = time.monotonic()
    deadline = start + timeout
    rv = None
    ready_signalled = False
    watches = 0
    api = Api(cluster_dir)
    # A watch may end early (the API server closes watchers it finds slow):
    # resume from the last resourceVersion seen, or list again on 410 Gone.
    while len(bound_at) < count and time.monotonic() < deadline:
        conn = api.connect(timeout)
        watches += 1
        if rv is None:
            rv = list_bound(conn, ns, bound_at)
        conn.request("GET", f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}"
                            f"&allowWatchBookmarks=true&timeoutSeconds={int(timeout)}")
        resp = conn.getresponse()
        if not ready_signalled:
            open(ready_file, "w").close()
            ready_signalled = True
        def on_event(kind, obj):
            if kind != "DELETED" and obj.get("spec", {}).get("nodeName"):
                bound_at.setdefault(obj["metadata"]["name"], time.monotonic())

        rv = read_watch(resp, rv, on_event, done=lambda: len(bound_at) >= count or time.monotonic() >= deadline)
        conn.close()
    times = sorted(bound_at.values())
    result = {"bound": len(times), "watches": watches}
    if len(times) >= 2:
        first, last = times[0], times[-1]
        gaps = sorted(b - a for a, b in zip(times, times[1:]))
        result.update(first_s=round(first - start, 3), last_s=round(last - start, 3),
                      pods_per_s=round((len(times) - 1) / max(last - first, 1e-6), 1),
                      p50_gap_ms=round(gaps[len(gaps) // 2] * 1000, 3))
        step = max(1, len(times) // 10)
        result["timeline"] = [[round(times[i] - first, 2), i + 1] for i in range(step - 1, len(times), step)]
    if released_file and os.path.exists(released_file):
        with open(released_file) as f:
            result["released_s"] = round(float(f.read()) - start, 3)
    print(json.dumps(result))
    return 0 if len(times) >= count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
