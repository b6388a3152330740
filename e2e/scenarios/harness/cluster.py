"""Cluster I/O: the test cluster's kube-apiserver (e2e/cluster/cluster.sh
writes CLUSTER_DIR/state and CLUSTER_DIR/pki) over its admin client
certificate, and the list-then-watch loop every recorder and bench runs
(stdlib only).

Contract: every call blocks on the network and may raise OSError or
http.client.HTTPException (connection faults) or RuntimeError (an HTTP
status the caller did not accept), except `list_then_watch`, which never
returns and hands every fault it is told to survive to its `on_error`.
Objects are plain decoded JSON (dicts). An `Api` is immutable once made and
may be shared by threads; a connection (http.client) belongs to one thread.
"""

import http.client
import json
import os
import re
import ssl
import time

CONNECTION_ERRORS = (OSError, http.client.HTTPException)
PG_API = "/apis/scheduling.volcano.sh/v1beta1"
# Kubernetes' own Workload and PodGroup (1.37+, feature gate GenericWorkload).
UPSTREAM_PG_API = "/apis/scheduling.k8s.io/v1beta1"


class Api:
    """The cluster's kube-apiserver on 127.0.0.1 over its admin client
    certificate (CLUSTER_DIR/pki/{ca,admin}.crt, admin.key; the port from
    the `port apiserver N` line of CLUSTER_DIR/state)."""

    def __init__(self, cluster_dir):
        with open(os.path.join(cluster_dir, "state")) as f:
            ports = {p[1]: int(p[2]) for p in (line.split() for line in f) if p[:1] == ["port"]}
        if "apiserver" not in ports:
            raise SystemExit(f"no apiserver port in {cluster_dir}/state")
        self.port = ports["apiserver"]
        pki = os.path.join(cluster_dir, "pki")
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))

    def connect(self, timeout=30):
        """A new (lazily opened) connection."""
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def get(self, path):
        """GET `path` on a connection of its own: the decoded body. Raises
        RuntimeError unless the status is 200."""
        conn = self.connect()
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"GET {path}: {resp.status} {body[:200]!r}")
            return json.loads(body)
        finally:
            conn.close()

    def delete(self, path, body):
        """DELETE `path` with a DeleteOptions `body` on a connection of its
        own: the HTTP status (any)."""
        conn = self.connect()
        try:
            conn.request("DELETE", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()


def send(api, conn, method, path, body, content_type="application/json", timeout=30, attempts=3,
         errors=CONNECTION_ERRORS):
    """Sends one request over `conn` (None: a new connection with `timeout`),
    on one of `errors` closing it and trying again on a new one, `attempts`
    times in all. Returns (connection for the next request, status, body
    bytes); raises the last error when every attempt failed."""
    for attempt in range(attempts):
        try:
            conn = conn or api.connect(timeout)
            conn.request(method, path, body=body, headers={"Content-Type": content_type})
            resp = conn.getresponse()
            return conn, resp.status, resp.read()
        except errors:
            if conn is not None:
                conn.close()
            conn = None
            if attempt == attempts - 1:
                raise
    raise ValueError("attempts must be positive")


def create_items(api, namespace, items, conn=None):
    """Creates Pods, PodGroups (Volcano's or Kubernetes') and Workloads in
    order over one kept-alive connection
    (`conn`, or a new one); returns the connection for the next batch. Raises
    RuntimeError naming the first object the API server refused."""
    paths = {("v1", "Pod"): f"/api/v1/namespaces/{namespace}/pods",
             ("scheduling.volcano.sh/v1beta1", "PodGroup"): f"{PG_API}/namespaces/{namespace}/podgroups",
             (UPSTREAM_PG_API[len("/apis/"):], "PodGroup"): f"{UPSTREAM_PG_API}/namespaces/{namespace}/podgroups",
             (UPSTREAM_PG_API[len("/apis/"):], "Workload"): f"{UPSTREAM_PG_API}/namespaces/{namespace}/workloads"}
    for item in items:
        path = paths[(item["apiVersion"], item["kind"])]
        conn, status, text = send(api, conn, "POST", path, json.dumps(item))
        if status != 201:
            raise RuntimeError(f"creating {item['kind']} {item['metadata']['name']}: HTTP {status} {text[:300]!r}")
    return conn


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


def list_on(conn, path):
    """GET `path` over `conn`: the decoded body (the status is not checked:
    a refusal fails to decode as a list)."""
    conn.request("GET", path)
    return json.loads(conn.getresponse().read())


def list_then_watch(connect, path, on_list, on_event, on_open, on_error, *, query="", watch_seconds=300,
                    list_objects=None, errors=(Exception,), label=None):
    """Never returns: lists `path` (list_objects(conn), default GET
    path?limit=100000`query` on the connection), hands the items to
    on_list(items), then watches from the list's resourceVersion
    (allowWatchBookmarks, timeoutSeconds=`watch_seconds`, then `query`),
    calling on_open() once the watch answers 200 and on_event(type, obj) per
    event. A watch that ends is resumed from the last resourceVersion; after
    410 Gone it lists again. Any of `errors` goes to on_error(e), then it
    starts over after 0.5 s (a recorder's thread must not die). `connect()`
    makes the connection of each round; `label` names the watch in the
    error of a refused watch (default `path`)."""
    rv = None
    while True:
        try:
            conn = connect()
            if rv is None:
                listing = (list_objects or (lambda c: list_on(c, f"{path}?limit=100000{query}")))(conn)
                on_list(listing["items"])
                rv = listing["metadata"]["resourceVersion"]
            conn.request("GET", f"{path}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
                                f"&timeoutSeconds={watch_seconds}{query}")
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"watch {label or path}: HTTP {resp.status}")
            on_open()
            rv = read_watch(resp, rv, on_event)
            conn.close()
        except errors as e:
            on_error(e)
            time.sleep(0.5)


def watch_present(connect, path, handler, on_open, on_error, **kwargs):
    """list_then_watch for a recorder that keeps only when each object was
    first seen in some state: handler(obj, time.monotonic()) for every
    listed object (one time for the whole list) and every event but
    DELETED. Never returns; `kwargs` go to list_then_watch."""
    def on_list(items):
        now = time.monotonic()
        for obj in items:
            handler(obj, now)

    def on_event(kind, obj):
        if kind != "DELETED":
            handler(obj, time.monotonic())

    list_then_watch(connect, path, on_list, on_event, on_open, on_error, **kwargs)


QUANTITY_SUFFIXES = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
                     "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(text, milli=False):
    """A Kubernetes quantity ("500m", "2k", "64Gi", 5) as an integer, in
    thousandths when milli (cpu in millicores). Raises ValueError on a form
    it does not know (exponents), never guesses."""
    m = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T|)", str(text))
    if not m:
        raise ValueError(f"unsupported quantity {text!r}")
    number, unit = float(m.group(1)), m.group(2)
    if unit == "m":
        return round(number) if milli else round(number / 1000)
    value = number * QUANTITY_SUFFIXES[unit]
    return round(value * 1000) if milli else round(value)


def node_allocatable(node, resource, parse=int):
    """A Node's allocatable `resource` (0 when absent), parsed by `parse`."""
    return parse((node["status"].get("allocatable") or {}).get(resource, "0"))
