#!/usr/bin/env bash
# Rack packing (issue 25; `make bench-peers`, not CI: e2e_topology keeps the
# muster side's rack guarantees in CI) on 4 racks x 8 nodes x 8 GPUs
# (e2e/clusters/gpu-32x8.yaml), muster started with
# --network-tiers zone=topology.kubernetes.io/zone,rack=network.muster.io/rack.
# Whole-node pods pinned to the first 3, 4, 4, 4 nodes of racks a-d (in
# namespace racks-busy, before any side) leave 5, 4, 4, 4 nodes free.
#   1. pack: gangs of 8-GPU pods, pack-1..3 of 4 pods and pack-4 of 5 (work
#      10 s), created together, each required in one rack. They fill the 17
#      free nodes exactly, each in one rack, only if the 4-pod gangs leave
#      rack a to pack-4 (a best-fit choice of rack).
#   2. wide: once the pack gangs finished, a gang of 6 pods x 8 GPUs required
#      in one rack: 17 nodes are free, but no rack has 6. Watched 15 s.
# Sides (GANG_SIDES, default "stock kueue muster"):
#   stock   the default kube-scheduler: no rack notion; pods go wherever
#           they fit (reported: how many gangs ended up in one rack, and the
#           wide gang bound across racks).
#   kueue   Kueue v0.17 with topology-aware scheduling
#           (fixtures/kueue-racks.yaml: Topology rack > hostname, a TAS
#           ResourceFlavor, pods annotated podset-required-topology).
#   muster  PodGroups annotated muster.io/network-tier-required: rack, pods
#           gated (muster.io/gang). Checks: every pack gang completes whole in
#           one rack; no pod of the wide gang is bound and its PodGroup says
#           why; no over-commit, no partial gang.
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-32x8.yaml
GANG_SIDES=${GANG_SIDES:-stock kueue muster}
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"
export MUSTER_EXTENDER_FLAGS="--network-tiers=zone=topology.kubernetes.io/zone,rack=network.muster.io/rack"
BUSY_NS=racks-busy
WIDE_WATCH=15

# The node -> rack map the report reads.
"$MUSTER_KUBECTL" get nodes -o json | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["items"]
print(json.dumps({n["metadata"]["name"]: n["metadata"]["labels"].get("network.muster.io/rack") for n in nodes}))
' >"$GANG_OUT/node-racks.json" || fail "cannot read the nodes' racks"

busy_running() { [[ $("$MUSTER_KUBECTL" -n "$BUSY_NS" get pods --field-selector=status.phase=Running -o name | wc -l) == 15 ]]; }
gang_create_namespace "$BUSY_NS" || fail "cannot create namespace $BUSY_NS"
python3 "$GANG_PY" workload racks-busy >"$GANG_OUT/busy.json" || fail "gang_report.py workload racks-busy failed"
python3 "$GANG_PY" submit "$MUSTER_E2E_DIR" "$BUSY_NS" "$GANG_OUT/busy.json" || fail "creating the busy pods failed"
wait_for "the 15 busy pods Running" 60 busy_running
e2e_log "busy pods on the first 3, 4, 4, 4 nodes of racks a-d"

# run_side SIDE SCHEDULER [WORKLOAD FLAGS...]: the pack gangs (waited for at
# most 60 s, 20 s without progress), then the wide gang, watched WIDE_WATCH s.
run_side() {
  local side=$1 sched=$2 outcome
  shift 2
  if [[ $side == kueue ]]; then
    gang_kueue_begin "$GANG_LIB_DIR/fixtures/kueue-racks.yaml" racks
  else
    gang_side "$side"
  fi
  gang_submit racks-pack --scheduler "$sched" "$@"
  [[ $side != kueue ]] || gang_kueue_managed
  outcome=$(gang_wait 60 20)
  e2e_log "$side: pack: $outcome"
  gang_submit racks-wide --scheduler "$sched" "$@"
  sleep "$WIDE_WATCH"
  e2e_log "$side: wide: $(k get pods -l e2e.muster.io/gang=wide --field-selector=spec.nodeName!= -o name | wc -l) of 6 pods bound"
  case $side in
    muster) wide_says_why; gang_metrics; gang_end_side ;;
    kueue) kueue_wide_status; gang_kueue_end ;;
    *) gang_end_side ;;
  esac
}

# wide_says_why: muster's PodGroup of the wide gang is Unschedulable because
# its minimum must fit in one rack.
wide_says_why() {
  local msg
  # Fully qualified: with GenericWorkload on (`make bench-peers`) "podgroup"
  # names Kubernetes' own scheduling.k8s.io kind.
  msg=$(k get podgroups.scheduling.volcano.sh wide \
    -o 'jsonpath={.status.conditions[?(@.type=="Unschedulable")].message}') ||
    fail "cannot read PodGroup wide"
  e2e_log "muster: PodGroup wide: $msg"
  [[ $msg == *"must fit in one rack"* ]] || fail "PodGroup wide does not say it must fit in one rack: '$msg'"
}

# kueue_wide_status: why Kueue holds the wide gang (its Workload's
# QuotaReserved condition), logged.
kueue_wide_status() {
  local names name
  names=$(k get workloads.kueue.x-k8s.io -o name) || return 0
  for name in $names; do
    [[ $name == *wide* ]] || continue
    e2e_log "kueue: $name: $(k get "$name" -o \
      'jsonpath={.status.conditions[?(@.type=="QuotaReserved")].status} {.status.conditions[?(@.type=="QuotaReserved")].message}')"
  done
}

gang_has_side stock && run_side stock default-scheduler
gang_has_side kueue && run_side kueue default-scheduler --kueue racks
if gang_has_side muster; then
  gang_start_muster
  run_side muster volcano --gated
fi

gang_report --check overcommit --check complete --check no-partial --check annotations --check podgroup \
  --check one-rack --racks "$GANG_OUT/node-racks.json" --unplaceable wide
