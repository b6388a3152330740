#!/usr/bin/env bash
# Gang preemption (issue 5, acceptance 2): low-priority gangs of whole-node
# pods fill 32 nodes x 8 GPUs (e2e/clusters/gpu-32x8.yaml) and run until
# deleted - low-a 16 pods, low-b 9, low-c 4, low-d 3 - then a high-priority
# gang of 8 pods x 8 GPUs (work 5 s) arrives. The fewest GPUs that make room
# are low-b's 72: evicting low-b, whole, is the one best answer.
#   stock kube-scheduler: preempts pod by pod; the victims' gangs are left
#     below minMember, their survivors holding GPUs they cannot use.
#   upstream (GANG_SIDES with "upstream", `make bench-peers`): Kubernetes'
#     own gangs (scheduling.k8s.io/v1beta1, disruptionMode all, the priority
#     class on the PodGroup), whose workload-aware preemption evicts whole
#     pod groups.
#   kueue (GANG_SIDES with "kueue", `make bench-peers`): Kueue v0.17, every
#     gang a pod group of one ClusterQueue (preemption withinClusterQueue
#     LowerPriority: it evicts whole pod groups, chosen by its own order).
#   muster: evicts exactly low-b, all of it; low-a, low-c, low-d keep every
#     member; the high gang runs to completion; no over-commit. Run twice:
#     the high gang as plain pods and created with the muster.io/gang
#     scheduling gate. muster's gang controller preempts in both cases: a
#     member of an unreserved gang fails filter as Unresolvable on every
#     node, so kube-scheduler's own preemption does not run for it.
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-32x8.yaml
GANG_SIDES=${GANG_SIDES:-stock muster muster-gated}
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"

k apply -f - >/dev/null <<'YAML' || fail "cannot create the PriorityClasses"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-gang-low}
value: 100
description: low-priority gangs of the gang preemption scenario
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-gang-high}
value: 10000
description: the high-priority gang of the gang preemption scenario
YAML

gang_bound_is() { [[ $(json_get "$(gang_status)" bound) == "$1" ]]; }

# run_side SIDE SCHEDULER [--gated]: fill, wait for all 32 low pods, add the
# high gang, wait until it finished (or 45 s; 20 s without progress, 40 s on
# the peers' sides). Side
# upstream: both workloads as Kubernetes' own gangs (--upstream); side kueue:
# as Kueue pod groups of one ClusterQueue (--kueue), whose preemption within
# the queue evicts lower-priority groups whole.
run_side() {
  local side=$1 sched=$2 both=()
  shift 2
  case $side in
    upstream) both=(--upstream) ;;
    kueue) both=(--kueue gangs) ;;
  esac
  if [[ $side == kueue ]]; then gang_kueue_begin; else gang_side "$side"; fi
  gang_submit preemption-low --scheduler "$sched" "${both[@]}"
  gang_wait_for "the 32 low-priority pods bound" 90 gang_bound_is 32
  sleep 1 # every low pod Running before the high gang comes
  gang_submit preemption-high --scheduler "$sched" "${both[@]}" "$@"
  # The peers get 40 s without progress rather than 20: Kueue took 21 s to
  # admit the high gang after its preemption in one run of three (it evicted
  # low-a then, low-b in the others), and is measured to the end, not cut.
  local outcome idle=20
  [[ $side != upstream && $side != kueue ]] || idle=40
  outcome=$(gang_wait 45 "$idle")
  e2e_log "$side: $outcome"
  sleep 1 # a late eviction would still show
  [[ $side != muster* ]] || gang_metrics
  if [[ $side == kueue ]]; then gang_kueue_end; else gang_end_side; fi
}

gang_has_side stock && run_side stock default-scheduler
if gang_has_side upstream; then
  gang_require_generic_workload
  run_side upstream default-scheduler
fi
gang_has_side kueue && run_side kueue default-scheduler
if gang_has_side muster || gang_has_side muster-gated; then gang_start_muster; fi
gang_has_side muster && run_side muster volcano
gang_has_side muster-gated && run_side muster-gated volcano --gated

gang_report --check overcommit --check complete --check no-partial --check annotations --victims low-b \
  --show-gang high
