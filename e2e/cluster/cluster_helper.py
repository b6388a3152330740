#!/usr/bin/env python3
"""Helpers for e2e/cluster/cluster.sh (standard library only).

Subcommands:
  free-ports N                  print N distinct free TCP ports on 127.0.0.1
  render-nodes CLUSTER OUT      write the cluster file's Nodes as a v1 List (JSON)
                                to OUT; print the node count
  split-list IN K PREFIX        split the v1 List IN into K lists PREFIX.0.json ..
                                PREFIX.<K-1>.json (round robin), for K parallel
                                creates; print the file names
  parse CLUSTER                 print the parsed cluster file as JSON (for tests)
  nodes-ready N                 read `kubectl get nodes -o json` on stdin; exit 0
                                when N nodes are Ready and schedulable, else print
                                what is missing and exit 1

Cluster file format: a small YAML subset, so no YAML library is needed. Every
non-blank line is `key: value` or `key:` (opening a nested map), indented with
spaces; `#` starts a comment (outside quotes). Values are plain scalars or
"double"/'single' quoted strings. No lists, anchors, flow collections or
multi-line scalars. Everything that parses is also valid YAML with the same
meaning (except that every scalar stays a string here).

  name: gpu-4                   # informational
  defaults:                     # merged under every group (group wins)
    capacity: {resource: quantity, ...}   # written as a nested block map
    allocatable: {...}          # optional; defaults to capacity
    labels: {...}
    annotations: {...}
  groups:
    <group>:                    # groups in file order
      count: 2
      namePrefix: gpu-a-        # nodes are <namePrefix>0 .. <namePrefix><count-1>
      capacity / allocatable / labels / annotations: as in defaults

Every node also gets the labels kubernetes.io/hostname=<name>,
kubernetes.io/os=linux, kubernetes.io/arch=amd64 and type=kwok (unless set).
Each node must carry the annotation kwok.x-k8s.io/node: fake (kwok manages only
those), and capacity must name cpu, memory and pods.
"""

import json
import random
import re
import socket
import sys

MANAGED_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class ParseError(Exception):
    pass


def _strip_comment(line):
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _scalar(text, where):
    text = text.strip()
    if not text:
        return None
    if text[0] in "\"'":
        q = text[0]
        if len(text) < 2 or text[-1] != q:
            raise ParseError(f"{where}: unterminated quoted string")
        body = text[1:-1]
        if q == '"':
            if "\\" in body:
                raise ParseError(f"{where}: escapes in double-quoted strings are not supported")
            if '"' in body:
                raise ParseError(f"{where}: stray quote")
        else:
            body = body.replace("''", "'")
        return body
    if text[0] in "[{&*!|>@`%" or text.startswith("- ") or text == "-":
        raise ParseError(f"{where}: only plain or quoted scalars are supported, got {text!r}")
    return text


def _split_key(content, where):
    # key: quoted or plain, followed by ':' and then space or end of line
    if content[0] in "\"'":
        q = content[0]
        end = content.find(q, 1)
        if end < 0:
            raise ParseError(f"{where}: unterminated quoted key")
        key, rest = content[1:end], content[end + 1:]
        if not rest.startswith(":"):
            raise ParseError(f"{where}: expected ':' after key")
        return key, rest[1:]
    m = re.match(r"^([^:#]+?):(\s|$)", content)
    if not m:
        raise ParseError(f"{where}: expected 'key: value' or 'key:'")
    return m.group(1), content[m.end(1) + 1:]


def parse_subset(text, name="<input>"):
    """Parse the YAML subset described in the module docstring into nested dicts."""
    root = {}
    stack = [[None, root]]  # [indent of the map's keys (None: not seen yet), map]
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"{name}:{lineno}"
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ParseError(f"{where}: tabs are not allowed for indentation")
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        if line.strip() in ("---", "..."):
            raise ParseError(f"{where}: one document only")
        indent = len(line) - len(line.lstrip(" "))
        content = line.strip()
        if content.startswith("-"):
            raise ParseError(f"{where}: lists are not supported")
        key, rest = _split_key(content, where)
        if stack[-1][0] is None:  # first line after 'key:' (or of the file)
            parent_indent = stack[-2][0] if len(stack) > 1 else -1
            if indent > parent_indent:
                stack[-1][0] = indent
            else:
                stack.pop()  # 'key:' with no children: an empty map
        while len(stack) > 1 and indent < stack[-1][0]:
            stack.pop()
        if indent != stack[-1][0]:
            raise ParseError(f"{where}: inconsistent indentation")
        current = stack[-1][1]
        if key in current:
            raise ParseError(f"{where}: duplicate key {key!r}")
        value = _scalar(rest, where)
        if value is None:
            child = {}
            current[key] = child
            stack.append([None, child])
        else:
            current[key] = value
    return root


def _str_map(obj, where):
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise ParseError(f"{where}: expected a map")
    out = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            raise ParseError(f"{where}.{k}: expected a scalar")
        out[str(k)] = str(v)
    return out


def build_nodes(spec, name="<cluster>"):
    if not isinstance(spec.get("groups"), dict) or not spec["groups"]:
        raise ParseError(f"{name}: 'groups' must be a non-empty map")
    defaults = spec.get("defaults") or {}
    unknown = set(spec) - {"name", "defaults", "groups", "description"}
    if unknown:
        raise ParseError(f"{name}: unknown top-level keys {sorted(unknown)}")
    fields = ("capacity", "allocatable", "labels", "annotations")
    nodes, seen = [], set()
    for gname, group in spec["groups"].items():
        where = f"{name}: groups.{gname}"
        if not isinstance(group, dict):
            raise ParseError(f"{where}: expected a map")
        unknown = set(group) - {"count", "namePrefix", *fields}
        if unknown:
            raise ParseError(f"{where}: unknown keys {sorted(unknown)}")
        try:
            count = int(str(group.get("count", "")))
        except ValueError:
            raise ParseError(f"{where}.count: expected an integer") from None
        if count < 0:
            raise ParseError(f"{where}.count: must be >= 0")
        prefix = str(group.get("namePrefix", f"{gname}-"))
        merged = {}
        for f in fields:
            merged[f] = {**_str_map(defaults.get(f), f"{name}: defaults.{f}"),
                         **_str_map(group.get(f), f"{where}.{f}")}
        capacity = merged["capacity"]
        for r in ("cpu", "memory", "pods"):
            if r not in capacity:
                raise ParseError(f"{where}: capacity needs {r!r}")
        allocatable = {**capacity, **merged["allocatable"]}
        k, v = MANAGED_ANNOTATION
        if merged["annotations"].get(k) != v:
            raise ParseError(f"{where}: needs annotation '{k}: {v}' (kwok manages only those nodes)")
        for i in range(count):
            node_name = f"{prefix}{i}"
            if len(node_name) > 63 or not DNS1123_SUBDOMAIN.match(node_name):
                raise ParseError(f"{where}: node name {node_name!r} is not a valid DNS-1123 name")
            if node_name in seen:
                raise ParseError(f"{where}: duplicate node name {node_name!r}")
            seen.add(node_name)
            labels = {"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                      **merged["labels"], "kubernetes.io/hostname": node_name}
            nodes.append({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node_name, "labels": labels,
                             "annotations": dict(merged["annotations"])},
                "spec": {},
                "status": {"capacity": dict(capacity), "allocatable": dict(allocatable),
                           "phase": "Running"},
            })
    return nodes


def split_list(path, shards, prefix):
    """Writes the items of the v1 List at `path` round robin into `shards`
    lists PREFIX.<i>.json; returns their paths (empty shards are skipped)."""
    with open(path) as f:
        items = json.load(f)["items"]
    out = []
    for i in range(max(1, shards)):
        part = items[i::max(1, shards)]
        if not part:
            continue
        name = f"{prefix}.{i}.json"
        with open(name, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": part}, f)
        out.append(name)
    return out


def free_ports(n):
    """N distinct ports that are free on 127.0.0.1 right now.

    Chosen at random below the kernel's ephemeral range (so outgoing
    connections never take them between now and the components binding them),
    held open together so the N are distinct, then released."""
    lo, hi = 32768, 60999
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
    except OSError:
        pass
    if lo - 20000 >= 1000:
        candidates = list(range(20000, lo))
    else:
        candidates = list(range(hi + 1, 65536))
    random.shuffle(candidates)
    held, ports = [], []
    try:
        for p in candidates:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                s.close()
                continue
            held.append(s)
            ports.append(p)
            if len(ports) == n:
                return ports
    finally:
        for s in held:
            s.close()
    raise SystemExit(f"free-ports: found only {len(ports)} of {n} free ports")


def nodes_ready(want, doc):
    items = doc.get("items", [])
    problems = []
    ok = 0
    for node in items:
        name = node["metadata"]["name"]
        conds = {c.get("type"): c.get("status") for c in node.get("status", {}).get("conditions", [])}
        blocking = [t["key"] for t in node.get("spec", {}).get("taints", [])
                    if t.get("effect") in ("NoSchedule", "NoExecute")]
        if conds.get("Ready") != "True":
            problems.append(f"{name}: not Ready")
        elif blocking:
            problems.append(f"{name}: tainted {','.join(blocking)}")
        elif node.get("spec", {}).get("unschedulable"):
            problems.append(f"{name}: cordoned")
        else:
            ok += 1
    if ok >= want:
        return True, f"{ok}/{want} nodes Ready and schedulable"
    shown = "; ".join(problems[:4]) + (" ..." if len(problems) > 4 else "")
    return False, f"{ok}/{want} nodes Ready and schedulable ({len(items)} exist){': ' + shown if shown else ''}"


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "free-ports" and len(args) == 1:
            print(" ".join(str(p) for p in free_ports(int(args[0]))))
        elif cmd == "parse" and len(args) == 1:
            with open(args[0]) as f:
                print(json.dumps(parse_subset(f.read(), args[0]), indent=1))
        elif cmd == "render-nodes" and len(args) == 2:
            with open(args[0]) as f:
                nodes = build_nodes(parse_subset(f.read(), args[0]), args[0])
            with open(args[1], "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, f)
            print(len(nodes))
        elif cmd == "split-list" and len(args) == 3:
            print(" ".join(split_list(args[0], int(args[1]), args[2])))
        elif cmd == "nodes-ready" and len(args) == 1:
            ok, msg = nodes_ready(int(args[0]), json.load(sys.stdin))
            print(msg)
            return 0 if ok else 1
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except ParseError as e:
        print(f"cluster file error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
