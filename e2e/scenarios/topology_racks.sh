#!/usr/bin/env bash
# Network tiers (issue 7, acceptance 2, the gang cases) on 2 racks x 4 nodes
# x 8 GPUs (e2e/clusters/gpu-racks-2x4.yaml), muster started with
# --network-tiers zone=topology.kubernetes.io/zone,rack=network.muster.io/rack.
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

# racks_of GANG: the racks its bound pods are on ("a b" ...), sorted, unique.
racks_of() {
  k get pods -l "e2e.muster.io/gang=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' |
    sed -n 's/^gpu-\([a-z]\)-.*/\1/p' | sort -u | tr '\n' ' '
}
bound_count() {
  k get pods -l "e2e.muster.io/gang=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}

racks_side() {
  E2E_NS=topology-racks-$1
  "$MUSTER_KUBECTL" create namespace "$E2E_NS" >/dev/null || fail "cannot create namespace $E2E_NS"
  wait_for "ServiceAccount $E2E_NS/default" 60 k get serviceaccount default -o name
  racks_items "$2" "$3" | k apply -f - >/dev/null || fail "creating the $1 workload failed"
}

stock_racks=skipped
if gang_has_side stock; then
  racks_side stock default-scheduler plain
  wait_for "4 stock pods bound" 60 test "$(bound_count pack)" -eq 4
  stock_racks=$(racks_of pack)
  e2e_log "stock: the 4-pod gang is in rack(s) $stock_racks"
  "$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=true --timeout=60s >/dev/null || true
fi

gang_start_muster
racks_side muster volcano gated
wait_for "muster binds the 4-pod gang" 60 test "$(bound_count pack)" -eq 4
muster_racks=$(racks_of pack)
[[ $muster_racks == "b " ]] || fail "muster split the 4-pod gang over rack(s) $muster_racks (want rack b only)"
pass "muster: the 4-pod gang is all in rack b (stock: rack(s) $stock_racks)"

wide_items | k apply -f - >/dev/null || fail "creating the 5-pod gang failed"
wait_for "the 5-pod gang's PodGroup to say why it waits" 30 \
  sh -c "$MUSTER_KUBECTL -n $E2E_NS get podgroup wide -o jsonpath='{.status.conditions[*].message}' | grep -q 'must fit in one rack'"
message=$(k get podgroup wide -o jsonpath='{.status.conditions[0].reason}: {.status.conditions[0].message}')
sleep 3 # a few more passes: still nothing bound
[[ $(bound_count wide) -eq 0 ]] || fail "muster bound part of the 5-pod gang that fits no rack"
pass "the 5-pod rack-bound gang waits, nothing bound: $message"
"$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=false >/dev/null || true
