#!/usr/bin/env bash
# Topology (issue 7, acceptance 2) on 2 racks x 4 nodes x 8 GPUs, each node
# with two interleaved 4-GPU NVLink islands, plus gpu-x-0 whose topology
# annotation is broken (e2e/clusters/gpu-racks-2x4.yaml), muster started with
# --network-tiers zone=topology.kubernetes.io/zone,rack=network.muster.io/rack.
#
# GPU sets:
#   - a 4-GPU pod on gpu-a-1 gets one whole NVLink island (muster.io/gpu-ids
#     0,2,4,6 or 1,3,5,7, and the matching muster.io/gpu-uuids, which its
#     container takes as NVIDIA_VISIBLE_DEVICES through the downward API);
#     the stock scheduler chooses no GPUs at all (reported);
#   - after the extender is killed and restarted, a second 4-GPU pod there
#     gets the other island: the ledger is rebuilt from the pods;
#   - a 2-GPU pod on gpu-x-0 is bound by count, without GPU ids, and
#     muster_gpu_topology_nodes{source="invalid"} counts that node.
# Network tiers:
# A pod pinned to gpu-a-0 holds 4 of its GPUs, so rack a has 3 whole nodes
# free and rack b 4.
#   - a gang of 4 pods x 8 GPUs fits only rack b. Stock kube-scheduler (no
#     gate): placed pod by pod, wherever each fits (reported: the racks it
#     used). muster: all four in rack b.
#   - a gang of 5 pods x 8 GPUs that must stay in one rack
#     (muster.io/network-tier-required: rack) fits no rack: muster binds none
#     of it and its PodGroup says why ("its minimum must fit in one rack").
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-racks-2x4.yaml
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"
export MUSTER_EXTENDER_FLAGS="--network-tiers=zone=topology.kubernetes.io/zone,rack=network.muster.io/rack"

# racks_items SCHEDULER GATED: the busy pod and the 4-pod gang (a List).
racks_items() {
  python3 - "$GANG_LIB_DIR" "$1" "$2" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gang_report as g
from placement import fake_gpu_pod_spec
scheduler, gated = sys.argv[2], sys.argv[3] == "gated"
busy = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "busy"},
        "spec": dict(fake_gpu_pod_spec("default-scheduler", 4), nodeName="gpu-a-0")}
items = [busy, g.pod_group("pack", 4)] + [g.gang_pod("pack", i, 8, 4, scheduler, gated=gated) for i in range(4)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

# wide_items: the 5-pod gang that must stay in one rack.
wide_items() {
  python3 - "$GANG_LIB_DIR" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gang_report as g
pg = g.pod_group("wide", 5)
pg["metadata"]["annotations"] = {"muster.io/network-tier-required": "rack"}
items = [pg] + [g.gang_pod("wide", i, 8, 5, "volcano", gated=True) for i in range(5)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

# island_pod NAME GPUS SCHEDULER NODE: a pod pinned to NODE asking GPUS, whose
# container reads the GPUs chosen for it through the downward API.
island_pod() {
  python3 - "$GANG_LIB_DIR" "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from placement import fake_gpu_pod_spec
name, gpus, scheduler, node = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
spec = fake_gpu_pod_spec(scheduler, gpus)
spec["nodeSelector"] = {"kubernetes.io/hostname": node}
spec["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "valueFrom": {"fieldRef": {
    "fieldPath": "metadata.annotations['muster.io/gpu-uuids']"}}}]
print(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}))
PY
}
gpu_ids() { k get pod "$1" -o jsonpath='{.metadata.annotations.muster\.io/gpu-ids}'; }
gpu_uuids() { k get pod "$1" -o jsonpath='{.metadata.annotations.muster\.io/gpu-uuids}'; }
pod_bound() { [[ -n $(k get pod "$1" -o jsonpath='{.spec.nodeName}') ]]; }
# uuids_of IDS: the fake UUIDs the cluster file gives those GPU indices.
uuids_of() {
  local ids=$1 out='' i
  for i in ${ids//,/ }; do out+="${out:+,}GPU-00000000-0000-0000-0000-00000000000$i"; done
  echo "$out"
}
metric() { curl -fsS --max-time 5 "$EXT_URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# racks_of GANG: the racks its bound pods are on ("a b" ...), sorted, unique.
racks_of() {
  k get pods -l "e2e.muster.io/gang=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    sed -n 's/^gpu-\([a-z]\)-.*/\1/p' | sort -u | tr '\n' ' '
}
bound_count() {
  k get pods -l "e2e.muster.io/gang=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
# bound_is GANG N: N of its pods bound, counted again at each call (for
# wait_for: `wait_for ... test "$(bound_count g)" -eq 4` counts once, when
# the line runs, and then waits on that count).
bound_is() { (($(bound_count "$1") == $2)); }

racks_side() {
  E2E_NS=topology-racks-$1
  "$MUSTER_KUBECTL" create namespace "$E2E_NS" >/dev/null || fail "cannot create namespace $E2E_NS"
  wait_for "ServiceAccount $E2E_NS/default" 60 k get serviceaccount default -o name
  racks_items "$2" "$3" | k apply -f - >/dev/null || fail "creating the $1 workload failed"
}

stock_racks=skipped
if gang_has_side stock; then
  racks_side stock default-scheduler plain
  wait_for "4 stock pods bound" 60 bound_is pack 4
  stock_racks=$(racks_of pack)
  e2e_log "stock: the 4-pod gang is in rack(s) $stock_racks"
  k delete pods -l e2e.muster.io/gang=pack --wait=true --timeout=60s >/dev/null # frees gpu-a-1
  island_pod island-1 4 default-scheduler gpu-a-1 | k apply -f - >/dev/null || fail "creating the stock island pod failed"
  wait_for "the stock 4-GPU pod bound" 60 pod_bound island-1
  e2e_log "stock: the 4-GPU pod on gpu-a-1 has GPU ids \"$(gpu_ids island-1)\" (none chosen: the device plugin picks, and the lowest free 0,1,2,3 straddle both islands)"
  "$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=true --timeout=60s >/dev/null || true
fi

gang_start_muster
racks_side muster volcano gated
wait_for "muster binds the 4-pod gang" 60 bound_is pack 4
muster_racks=$(racks_of pack)
[[ $muster_racks == "b " ]] || fail "muster split the 4-pod gang over rack(s) $muster_racks (want rack b only)"
pass "muster: the 4-pod gang is all in rack b (stock: rack(s) $stock_racks)"

wide_items | k apply -f - >/dev/null || fail "creating the 5-pod gang failed"
wide_says_why() {
  [[ $(k get podgroups.scheduling.volcano.sh wide -o jsonpath='{.status.conditions[*].message}') == *"must fit in one rack"* ]]
}
wait_for "the 5-pod gang's PodGroup to say why it waits" 30 wide_says_why
message=$(k get podgroups.scheduling.volcano.sh wide -o jsonpath='{.status.conditions[0].reason}: {.status.conditions[0].message}')
sleep 3 # a few more passes: still nothing bound
[[ $(bound_count wide) -eq 0 ]] || fail "muster bound part of the 5-pod gang that fits no rack"
pass "the 5-pod rack-bound gang waits, nothing bound: $message"

# ---- GPU sets inside a node.
island_pod island-1 4 volcano gpu-a-1 | k apply -f - >/dev/null || fail "creating island-1 failed"
wait_for "island-1 bound" 60 pod_bound island-1
first=$(gpu_ids island-1)
case $first in
  0,2,4,6) other=1,3,5,7 ;;
  1,3,5,7) other=0,2,4,6 ;;
  *) fail "the 4-GPU pod got GPUs \"$first\" on gpu-a-1, not one NVLink island (0,2,4,6 or 1,3,5,7)" ;;
esac
expect_eq "island-1's GPU UUIDs" "$(gpu_uuids island-1)" "$(uuids_of "$first")"
pass "a 4-GPU pod on a node of two interleaved NVLink islands got one island: GPUs $first ($(gpu_uuids island-1))"

"$GANG_CLUSTER" extender stop --signal KILL --dir "$MUSTER_E2E_DIR" 2>>"$GANG_OUT/cluster-up.log" ||
  fail "cannot kill the extender"
gang_start_muster
island_pod island-2 4 volcano gpu-a-1 | k apply -f - >/dev/null || fail "creating island-2 failed"
wait_for "island-2 bound" 60 pod_bound island-2
expect_eq "island-2's GPUs after the extender's restart" "$(gpu_ids island-2)" "$other"
pass "after a restart, the next 4-GPU pod got the other island ($other): the ledger came back from the pods"

island_pod broken-1 2 volcano gpu-x-0 | k apply -f - >/dev/null || fail "creating broken-1 failed"
wait_for "broken-1 bound (by count)" 60 pod_bound broken-1
expect_eq "GPU ids on the node of unknown topology" "$(gpu_ids broken-1)" ""
expect_eq 'muster_gpu_topology_nodes{source="invalid"}' "$(metric 'muster_gpu_topology_nodes{source="invalid"}')" 1
expect_eq 'muster_gpu_topology_nodes{source="annotation"}' "$(metric 'muster_gpu_topology_nodes{source="annotation"}')" 8
expect_eq 'muster_gpu_sets_total{link="unchosen"}' "$(metric 'muster_gpu_sets_total{link="unchosen"}')" 1
grep -q 'node gpu-x-0: GPU topology unknown.*gpus\[0\].numa' "$MUSTER_E2E_DIR/logs/extender.log" ||
  fail "the extender log does not say why gpu-x-0's topology is unknown"
pass "gpu-x-0's broken topology: bound by count without GPU ids, counted and logged ($(grep -o 'node gpu-x-0: GPU topology unknown.*' "$MUSTER_E2E_DIR/logs/extender.log" | sed -n 1p))"
"$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=false >/dev/null || true
