"""One watch response of the API server, read event by event: shared by the
e2e recorders (gang_report.py) and the bench watchers (bench/watch_binds.py,
gang_wait.py, gpu_topology.py), which differ only in what they do with an
event and when they stop."""

import json


def read_watch(resp, rv, on_event, done=lambda: False):
    """Reads `resp` (a `?watch=1` response) line by line until it ends or
    done() is true, calling on_event(type, obj) for every ADDED, MODIFIED and
    DELETED event. Returns the resourceVersion to resume from: the last one
    seen (`rv` when none), or None after an ERROR event (410 Gone: list
    again)."""
    while not done():
        line = resp.readline()
        if not line:
            break
        event = json.loads(line)
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            return None
        rv = obj.get("metadata", {}).get("resourceVersion", rv)
        if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
            on_event(event["type"], obj)
    return rv
