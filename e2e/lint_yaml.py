#!/usr/bin/env python3
"""YAML checks for e2e/lint.sh: every file parses, and the files other tools
read have the shape those tools expect. Needs PyYAML."""
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "cluster"))
import cluster_helper  # noqa: E402

problems = []


def check(cond, msg):
    if not cond:
        problems.append(msg)


def norm(x):
    if isinstance(x, dict):
        return {str(k): norm(v) for k, v in x.items()}
    return "" if x is None else str(x)


docs = {}
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            docs[path] = [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        problems.append(f"{path}: {e}")

for path, ds in docs.items():
    rel = os.path.relpath(path, os.path.dirname(HERE))
    if rel.startswith("e2e/clusters/"):
        # The cluster files are read by our own subset parser: same meaning as YAML.
        with open(path) as f:
            text = f.read()
        try:
            mine = cluster_helper.parse_subset(text, rel)
            check(mine == norm(ds[0]), f"{rel}: cluster_helper and PyYAML disagree")
            nodes = cluster_helper.build_nodes(mine, rel)
            check(len(nodes) > 0, f"{rel}: no nodes")
        except cluster_helper.ParseError as e:
            problems.append(str(e))
    elif rel == "e2e/cluster/kwok-stages.yaml":
        names = [d["metadata"]["name"] for d in ds]
        check(all(d.get("kind") == "Stage" and d.get("apiVersion") == "kwok.x-k8s.io/v1alpha1" for d in ds),
              f"{rel}: every document must be a kwok.x-k8s.io/v1alpha1 Stage")
        check(len(set(names)) == len(names), f"{rel}: duplicate stage names")
        kinds = {d["spec"]["resourceRef"]["kind"] for d in ds}
        check(kinds == {"Node", "Pod"}, f"{rel}: want Node and Pod stages, got {sorted(kinds)}")
    elif rel.startswith("manifests/crds/"):
        for d in ds:
            check(d.get("kind") == "CustomResourceDefinition", f"{rel}: not a CRD")
            for v in d["spec"]["versions"]:
                schema = v["schema"]["openAPIV3Schema"]
                check(schema.get("type") == "object", f"{rel}: {v['name']}: schema root must be an object")
    elif rel == "e2e/kind/kind-config.yaml":
        d = ds[0]
        check(d.get("kind") == "Cluster" and d.get("apiVersion") == "kind.x-k8s.io/v1alpha4",
              f"{rel}: not a kind v1alpha4 Cluster")
        check(any(n.get("role") == "control-plane" for n in d.get("nodes", [])), f"{rel}: no control-plane node")
    elif rel == "manifests/scheduler/kube-scheduler-config.yaml":
        cfg = ds[0]
        check(cfg.get("kind") == "KubeSchedulerConfiguration", f"{rel}: not a KubeSchedulerConfiguration")
        check([p["schedulerName"] for p in cfg.get("profiles", [])] == ["volcano"], f"{rel}: profile must be volcano")
        ext = (cfg.get("extenders") or [{}])[0]
        for field, want in (("filterVerb", "filter"), ("prioritizeVerb", "prioritize"), ("bindVerb", "bind"),
                            ("preemptVerb", "preempt"), ("nodeCacheCapable", True), ("ignorable", False)):
            check(ext.get(field) == want, f"{rel}: extender {field} must be {want!r}")
        check(ext.get("urlPrefix", "").startswith("http://127.0.0.1:"), f"{rel}: the extender must be on loopback")
        check(cfg.get("percentageOfNodesToScore") == 100, f"{rel}: percentageOfNodesToScore must be 100")
        le = cfg.get("leaderElection") or {}
        check(le.get("leaderElect") is True and le.get("resourceName") == "volcano-scheduler",
              f"{rel}: leader election on its own lease volcano-scheduler")
        secs = lambda v: float(str(v).rstrip("s")) if str(v).endswith("s") else -1
        # The extender follows this Lease and stops 6 s (its default
        # --leader-renew-deadline) after the holder's last renewal: that must
        # come before a standby can take the Lease.
        check(secs(le.get("leaseDuration")) > max(6, secs(le.get("renewDeadline"))) > 0,
              f"{rel}: leaseDuration must exceed renewDeadline and the extender's 6s renew deadline")
    elif rel == "manifests/deploy/deployment.yaml":
        dep = ds[0]
        names = [c["name"] for c in dep["spec"]["template"]["spec"]["containers"]]
        check(names == ["kube-scheduler", "extender", "reconciler"],
              f"{rel}: want containers kube-scheduler, extender, reconciler")
        check(dep["spec"].get("replicas", 1) >= 2 and dep["spec"]["strategy"]["type"] == "RollingUpdate",
              f"{rel}: two replicas, rolling update (one leads, the other is a warm standby)")
        args = {c["name"]: c.get("args", []) for c in dep["spec"]["template"]["spec"]["containers"]}
        for sidecar in ("extender", "reconciler"):
            check("--leader-elect=true" in args.get(sidecar, []),
                  f"{rel}: {sidecar} must run with --leader-elect=true beside another replica")
        check("podAntiAffinity" in (dep["spec"]["template"]["spec"].get("affinity") or {}),
              f"{rel}: replicas need pod anti-affinity")

for p in problems:
    print(f"lint: {p}", file=sys.stderr)
print(f"yaml: {len(docs)} files parse, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
