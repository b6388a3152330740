#!/usr/bin/env python3
"""Checks of GPU sharing over the API's objects (e2e/scenarios/gpu_sharing.sh).

  gpu_share_check.py fractions < {"pods": <PodList>}
      Pods sharing GPUs by the fraction annotation (muster.io/gpu-fraction):
      groups the bound, unfinished ones by (node, muster.io/gpu-ids) and
      fails (exit 1) when a GPU's shares add up above 1, or a sharer lacks
      its GPU annotations. Prints {"gpus": {"node/gpu": [pods]}, "bad": [...]}.

  gpu_share_check.py vgpu < {"pods": <PodList>, "nodes": <NodeList>}
      Pods asking Volcano's vGPU resources: every bound, unfinished one
      carries exactly the annotations Volcano's vGPU device plugin reads
      (volcano.sh/vgpu-ids-new == devices-to-allocate, one segment per
      container with its vgpu-number distinct registered UUIDs of its node,
      its vgpu-memory and vgpu-cores; vgpu-node = its node; bind-phase
      allocating; vgpu-time and bind-time unix seconds), and no registered
      GPU is given past its memory, 100 % of its cores or its split count.
      Prints {"bound": n, "pending": n, "gpus": {...}, "bad": [...]}.

Standard library only.
"""
import json
import sys

from harness.cluster import quantity  # same directory: a Kubernetes quantity as an integer

FRACTION = "muster.io/gpu-fraction"
REGISTER = "volcano.sh/node-vgpu-register"
TERMINAL = ("Succeeded", "Failed")


def live_bound(pod):
    return pod["spec"].get("nodeName") and pod.get("status", {}).get("phase") not in TERMINAL


def annotations(obj):
    return obj["metadata"].get("annotations") or {}


def name_of(pod):
    return f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']}"


def fractions(doc):
    gpus, bad = {}, []
    for pod in doc["pods"]["items"]:
        ann = annotations(pod)
        if FRACTION not in ann or not live_bound(pod):
            continue
        ids = ann.get("muster.io/gpu-ids", "")
        if not ids or "," in ids or not ann.get("muster.io/gpu-shares"):
            bad.append(f"{name_of(pod)}: gpu-ids '{ids}', gpu-shares '{ann.get('muster.io/gpu-shares')}'")
            continue
        key = f"{pod['spec']['nodeName']}/{ids}"
        gpus.setdefault(key, []).append((name_of(pod), float(ann[FRACTION])))
    for key, sharers in gpus.items():
        total = sum(share for _, share in sharers)
        if total > 1.0 + 1e-9:
            bad.append(f"{key}: shares add up to {total}")
    out = {"gpus": {k: sorted(p for p, _ in v) for k, v in sorted(gpus.items())}, "bad": bad}
    return out, not bad


def registration(node):
    """UUID -> {memory, split} of a node's vGPU registration."""
    out = {}
    for record in annotations(node).get(REGISTER, "").split(":"):
        fields = record.split(",")
        if len(fields) >= 6:
            out[fields[0]] = {"memory": int(fields[2]), "split": int(fields[1])}
    return out


def limit(container, resource):
    res = container.get("resources") or {}
    for kind in ("limits", "requests"):
        value = (res.get(kind) or {}).get(resource)
        if value is not None:
            return quantity(value)
    return None


def vgpu_asks(pod):
    """Per container: (number, memory, cores) or None when it asks no vGPU."""
    asks = []
    for c in pod["spec"]["containers"]:
        number, memory = limit(c, "volcano.sh/vgpu-number"), limit(c, "volcano.sh/vgpu-memory")
        if number is None and memory is None:
            asks.append(None)
        else:
            asks.append((number or 1, memory or 0, limit(c, "volcano.sh/vgpu-cores") or 0))
    return asks


def check_vgpu_pod(pod, cards, used, bad):
    ann, node = annotations(pod), pod["spec"]["nodeName"]
    who = name_of(pod)
    ids, to_allocate = ann.get("volcano.sh/vgpu-ids-new"), ann.get("volcano.sh/devices-to-allocate")
    if ids is None or ids != to_allocate:
        bad.append(f"{who}: vgpu-ids-new '{ids}' != devices-to-allocate '{to_allocate}'")
        return
    if ann.get("volcano.sh/vgpu-node") != node or ann.get("volcano.sh/bind-phase") != "allocating":
        bad.append(f"{who}: vgpu-node '{ann.get('volcano.sh/vgpu-node')}' on {node}, "
                   f"bind-phase '{ann.get('volcano.sh/bind-phase')}'")
    for key in ("volcano.sh/vgpu-time", "volcano.sh/bind-time"):
        if not ann.get(key, "").isdigit():
            bad.append(f"{who}: {key} '{ann.get(key)}' is not unix seconds")
    segments = ids.split(";")
    for i, ask in enumerate(vgpu_asks(pod)):
        devices = [d for d in (segments[i] if i < len(segments) else "").split(":") if d]
        if ask is None:
            if devices:
                bad.append(f"{who}: container {i} asks no vGPU but got {devices}")
            continue
        number, memory, cores = ask
        uuids = [d.split(",")[0] for d in devices]
        if len(devices) != number or len(set(uuids)) != number:
            bad.append(f"{who}: container {i} asks {number} vGPUs on distinct GPUs, got {devices}")
        for d in devices:
            uuid, kind, mem, core = d.split(",")
            if uuid not in cards or kind != "NVIDIA" or int(mem) != memory or int(core) != cores:
                bad.append(f"{who}: device '{d}' is not {number} x ({memory} MiB, {cores}%) "
                           f"of a GPU of {node}")
                continue
            u = used.setdefault(uuid, {"memory": 0, "cores": 0, "sharers": 0})
            u["memory"] += int(mem)
            u["cores"] += int(core)
            u["sharers"] += 1


def vgpu(doc):
    cards = {}
    for node in doc["nodes"]["items"]:
        cards.update(registration(node))
    used, bad, bound, pending = {}, [], 0, 0
    for pod in doc["pods"]["items"]:
        if not any(vgpu_asks(pod)) or pod.get("status", {}).get("phase") in TERMINAL:
            continue
        if not pod["spec"].get("nodeName"):
            pending += 1
            continue
        bound += 1
        check_vgpu_pod(pod, cards, used, bad)
    for uuid, u in sorted(used.items()):
        card = cards[uuid]
        if u["memory"] > card["memory"] or u["cores"] > 100 or u["sharers"] > card["split"]:
            bad.append(f"{uuid} oversubscribed: {u} of {card}")
    return {"bound": bound, "pending": pending, "gpus": used, "bad": bad[:10]}, not bad


def main(argv):
    checks = {"fractions": fractions, "vgpu": vgpu}
    if len(argv) != 2 or argv[1] not in checks:
        print(__doc__, file=sys.stderr)
        return 2
    out, ok = checks[argv[1]](json.load(sys.stdin))
    print(json.dumps(out, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
