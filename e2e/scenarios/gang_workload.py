"""The gang scenarios' workloads (gang_report.py workload; pure, stdlib
only): PodGroups and pods of fake GPU jobs, and the annotations the recorder
and the analysis read. queue_report.py, e2e/scenarios/topology.sh and
bench/gpu_topology.py build their gangs with the same pod_group and gang_pod.

With upstream=True each gang is expressed for Kubernetes' own gang
scheduling instead (scheduling.k8s.io/v1beta1, feature gate GenericWorkload,
1.37+; the peer of `make bench-peers`): a Workload with one PodGroupTemplate,
a PodGroup made from it, and pods joining it through spec.schedulingGroup -
the same gangs, sizes, priorities and work as every other side.

With kueue=QUEUE each gang is a Kueue pod group instead (Kueue v0.17's plain
pods integration, keps/976-plain-pods): every member labelled with the
LocalQueue QUEUE and the group's name and annotated with its total count;
Kueue builds one Workload per group once all members exist, admits it whole
against its ClusterQueue's quota and ungates its pods, which the stock
kube-scheduler then places. No PodGroup object."""

import random

from placement import fake_gpu_pod_spec  # same directory: the scenarios' pod helpers

GPU = "nvidia.com/gpu"
GROUP = "scheduling.k8s.io/group-name"
MIN = "e2e.muster.io/min-member"
WORK = "e2e.muster.io/work-seconds"
TASK = "volcano.sh/task-spec"
GATE = "muster.io/gang"
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_GROUP = "kueue.x-k8s.io/pod-group-name"
KUEUE_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
KUEUE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
TIER_REQUIRED = "muster.io/network-tier-required"
RACK_LABEL = "network.muster.io/rack"
TERMINAL = ("Succeeded", "Failed")


def pod_group(name, min_member, priority=None, min_task=None, queue="default"):
    spec = {"minMember": min_member, "queue": queue}
    if priority:
        spec["priorityClassName"] = priority
    if min_task:
        spec["minTaskMember"] = dict(min_task)
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "labels": {"e2e.muster.io/gang": name}}, "spec": spec}


UPSTREAM_API = "scheduling.k8s.io/v1beta1"
UPSTREAM_TEMPLATE = "workers"


def upstream_policy(min_member, priority):
    """What a Workload's PodGroupTemplate and its PodGroup both say, as
    KEP-4671's 1.37 docs configure a gang: policy gang with minCount (all or
    nothing); disruptionMode all, so workload-aware preemption evicts a gang
    whole rather than pod by pod (the guarantee muster keeps); the priority
    class, which pod-group preemption reads from the group."""
    spec = {"schedulingPolicy": {"gang": {"minCount": min_member}}, "disruptionMode": {"all": {}}}
    if priority:
        spec["priorityClassName"] = priority
    return spec


def upstream_gang(name, min_member, priority=None):
    """The Workload and PodGroup of one upstream gang (created in this order).
    Per-task minimums have no upstream counterpart: minCount is the gang's."""
    labels = {"e2e.muster.io/gang": name}
    template = {"name": UPSTREAM_TEMPLATE, **upstream_policy(min_member, priority)}
    workload = {"apiVersion": UPSTREAM_API, "kind": "Workload",
                "metadata": {"name": name, "labels": labels}, "spec": {"podGroupTemplates": [template]}}
    group = {"apiVersion": UPSTREAM_API, "kind": "PodGroup",
             "metadata": {"name": name, "labels": labels},
             "spec": {"workloadRef": {"workloadName": name, "templateName": UPSTREAM_TEMPLATE},
                      **upstream_policy(min_member, priority)}}
    return [workload, group]


def gang_pod(gang, index, gpus, min_member, scheduler, work=None, priority=None, gated=False, task=None,
             cpu="100m", upstream=False, kueue=None):
    ann = {GROUP: gang, MIN: str(min_member)}
    if work is not None:
        ann[WORK] = str(work)
    if task:
        ann[TASK] = task
    spec = fake_gpu_pod_spec(scheduler, gpus, memory="64Mi", cpu=cpu)
    if priority:
        spec["priorityClassName"] = priority
    if gated:
        spec["schedulingGates"] = [{"name": GATE}]
    if upstream:
        spec["schedulingGroup"] = {"podGroupName": gang}
        del ann[GROUP]  # names no Volcano PodGroup (the recorder reads schedulingGroup)
    labels = {"e2e.muster.io/gang": gang}
    if kueue:
        # Every gang here is all of its pods (minMember = size): Kueue's
        # total count, which it waits for before it builds the Workload.
        labels.update({KUEUE_QUEUE: kueue, KUEUE_GROUP: gang})
        ann[KUEUE_TOTAL] = str(min_member)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{gang}-{index}", "labels": labels, "annotations": ann},
            "spec": spec}


def burst_jobs(seed, waves, cluster_gpus=256, node_gpus=8):
    """Jobs (name, pods, gpus per pod, work, tasks) in submission order: each
    wave is a random split of the whole cluster into gang jobs of 1-8 pods x
    1, 2, 4 or 8 GPUs. Sizes are powers of two summing to the cluster, so every
    wave packs onto the nodes exactly, and the ideal makespan is the sum of the
    wave durations."""
    rng = random.Random(seed)
    jobs = []
    for w, work in enumerate(waves):
        left, k = cluster_gpus, 0
        while left:
            gpus = rng.choice([g for g in (1, 2, 4, node_gpus) if g <= left])
            pods = rng.randint(1, min(8, left // gpus))
            tasks = None
            if pods >= 3 and rng.random() < 0.25:  # a master and its workers
                tasks = {"master": 1, "worker": pods - 1}
            jobs.append((f"w{w}-j{k:02d}", pods, gpus, work, tasks))
            left -= pods * gpus
            k += 1
    return jobs


# The rack workloads (e2e/scenarios/gang_racks.sh) on gpu-32x8's 4 racks of
# 8 whole-node (8-GPU) nodes. Busy pods hold nodes 0..n-1 of each rack, which
# leaves racks a, b, c, d with 5, 4, 4, 4 free nodes.
RACKS_BUSY = {"a": 3, "b": 4, "c": 4, "d": 4}
# Four gangs of 8-GPU pods that fill the 17 free nodes exactly, each in one
# rack - but only if the three 4-pod gangs leave rack a (the only rack with 5
# free nodes) to the 5-pod gang created last: a best-fit choice of rack.
RACKS_PACK = (("pack-1", 4), ("pack-2", 4), ("pack-3", 4), ("pack-4", 5))
RACKS_PACK_WORK = 10
# 6 pods of 8 GPUs that must share a rack: 17 nodes are free, no rack has 6.
RACKS_WIDE = ("wide", 6)


def busy_pods():
    """Whole-node pods pinned (spec.nodeName) to the first nodes of each rack,
    scheduled by nobody, running until deleted."""
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"busy-{rack}-{i}", "labels": {"e2e.muster.io/busy": "true"}},
             "spec": dict(fake_gpu_pod_spec("default-scheduler", 8), nodeName=f"gpu-{rack}-{i}")}
            for rack, count in RACKS_BUSY.items() for i in range(count)]


def require_rack(items, kueue):
    """Every gang in `items` must run inside one rack: Kueue's TAS annotation
    on each pod of a Kueue pod group (the rack level of its Topology), muster's
    annotation on each Volcano PodGroup. The stock scheduler has no such
    notion: it ignores the PodGroups (the stock side gets them too)."""
    for item in items:
        md = item["metadata"]
        if kueue and item["kind"] == "Pod":
            md["annotations"][KUEUE_REQUIRED_TOPOLOGY] = RACK_LABEL
        elif item["kind"] == "PodGroup":
            md["annotations"] = {TIER_REQUIRED: "rack"}
    return items


def workload(kind, scheduler, gated, seed, waves, upstream=False, kueue=None):
    items = []

    def add_gang(name, pods, gpus, work=None, priority=None, tasks=None):
        if upstream:
            items.extend(upstream_gang(name, pods, priority))
        elif not kueue:
            items.append(pod_group(name, pods, priority, tasks))
        names = []
        for t, count in (tasks or {"": pods}).items():
            names += [t] * count
        return [gang_pod(name, i, gpus, pods, scheduler, work, priority, gated, names[i] or None,
                         upstream=upstream, kueue=kueue)
                for i in range(pods)]

    if kind == "deadlock":
        a = add_gang("a", 100, 1, work=8)
        b = add_gang("b", 100, 1, work=8)
        for pa, pb in zip(a, b):
            items += [pa, pb]
    elif kind == "burst":
        for name, pods, gpus, work, tasks in burst_jobs(seed, waves):
            items += add_gang(name, pods, gpus, work, tasks=tasks)
    elif kind == "preemption-low":
        for name, pods in (("low-a", 16), ("low-b", 9), ("low-c", 4), ("low-d", 3)):
            items += add_gang(name, pods, 8, priority="e2e-gang-low")
    elif kind == "preemption-high":
        items += add_gang("high", 8, 8, work=5, priority="e2e-gang-high")
    elif kind == "racks-busy":
        items += busy_pods()
    elif kind == "racks-pack":
        for name, pods in RACKS_PACK:
            items += add_gang(name, pods, 8, work=RACKS_PACK_WORK)
        require_rack(items, kueue)
    elif kind == "racks-wide":
        items += add_gang(*RACKS_WIDE, 8)
        require_rack(items, kueue)
    else:
        raise SystemExit(f"unknown workload {kind}")
    return {"apiVersion": "v1", "kind": "List", "items": items}

