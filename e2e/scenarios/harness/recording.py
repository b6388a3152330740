"""Recording: what a run writes as it goes and what a report reads back
(stdlib only).

Contract: a log is JSON lines, one object per line, keys sorted, each
stamped "t" = receipt time (epoch seconds, 4 decimals) when written; writers
flush every line, so a reader (or a crash) sees whole lines only, and a
tailing reader keeps an incomplete last line until it is finished.
`JsonLog.write` is safe from several threads; `LogTail` belongs to one.
Status files are replaced atomically (never seen half written).
"""

import json
import os
import threading
import time


class JsonLog:
    """An append-only JSON-lines log (opened for appending: several writers,
    e.g. a recorder and a driver, may share the file)."""

    def __init__(self, path):
        self.file = open(path, "a")
        self.lock = threading.Lock()

    def write(self, rec):
        """Appends `rec` stamped with the receipt time "t"; returns nothing."""
        line = json.dumps(dict(rec, t=round(time.time(), 4)), sort_keys=True) + "\n"
        with self.lock:
            self.file.write(line)
            self.file.flush()

    def close(self):
        self.file.close()


def read_log(path):
    """Every record of a finished JSON-lines log, in order (blank lines skipped)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class LogTail:
    """Reads a growing JSON-lines log from its start, whole lines only."""

    def __init__(self, path):
        self.file = open(path)
        self.partial = ""

    def records(self):
        """The records completed since the last call (an unfinished last
        line is kept for the next one)."""
        chunk = self.file.read()
        if not chunk:
            return []
        lines = (self.partial + chunk).split("\n")
        self.partial = lines.pop()
        return [json.loads(line) for line in lines if line.strip()]


def write_json_atomic(path, obj):
    """Replaces `path` with `obj` as JSON (through path.tmp and a rename)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def wait_until(cond, done, deadline, step=None, clock=time.monotonic):
    """With `cond` (a threading.Condition) held: waits on it until done() is
    true or `clock` passes `deadline`, waking at least every `step` seconds
    (None: only when notified or at the deadline). Returns done()'s last value."""
    while not done():
        left = deadline - clock()
        if left <= 0:
            return False
        cond.wait(min(step, left) if step is not None else left)
    return True
