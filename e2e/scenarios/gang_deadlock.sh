#!/usr/bin/env bash
# Gang deadlock (issue 5, acceptance 2; Volcano #3373): two gangs of 100 pods
# x 1 GPU (minMember 100) submitted together - pods interleaved a-0, b-0,
# a-1, ... - on 100 GPUs (e2e/clusters/gpu-25x4.yaml). Plain pods without the
# scheduling gate, as users apply them. A member works (8 s) only once its
# whole gang is bound (gang_report.py record --rendezvous).
#   stock kube-scheduler: places both gangs in part; neither can start; the
#     GPUs stay held (shown 20 s after submission, then the run is stopped).
#   upstream (GANG_SIDES with "upstream"): Kubernetes' own gang scheduling,
#     both gangs as scheduling.k8s.io/v1beta1 Workload + PodGroup.
#   kueue (GANG_SIDES with "kueue"): Kueue v0.17, both gangs as pod groups of
#     one ClusterQueue holding the cluster (gang_lib.sh gang_kueue_side).
#   muster: rejects the members in filter ("muster: ...") until a gang is
#     reserved whole (with MUSTER_GANG_WEBHOOK=1, muster's pod webhook gates
#     them at creation instead, and lifts the gate of a reserved gang); one
#     gang runs to completion, then the other; no GPU-second held by a gang
#     below minMember beyond its binding ramp, no over-commit, placement
#     annotations, PodGroup status.
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-25x4.yaml
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"

if gang_has_side stock; then
  gang_side stock
  gang_submit deadlock --scheduler default-scheduler
  gang_wait 20 1000 >/dev/null # stuck for good well before; 20 s shows it
  gang_end_side
fi

# Kubernetes' own gang scheduling (`make bench-peers`): given muster's limit.
gang_upstream_side 120 30 deadlock
# Kueue (`make bench-peers`): each gang a Kueue pod group, quota = the cluster.
gang_kueue_side 120 30 deadlock

outcome=skipped
if gang_has_side muster; then
  gang_start_muster
  gang_side muster
  gang_submit deadlock --scheduler volcano
  # The gang that goes second waits, rejected by muster's filter.
  first_started() { grep -m1 '"kind": "start"' "$GANG_OUT/muster.jsonl" | grep -o '"gang": "[ab]"'; }
  gang_wait_for "one gang to be bound whole" 60 first_started
  first=$(first_started)
  first=${first: -2:1}
  if [[ $first == a ]]; then second=b; else second=a; fi
  e2e_log "gang $first was reserved first; $second waits"
  if [[ ${MUSTER_GANG_WEBHOOK:-0} == 1 ]]; then
    # muster's pod webhook gated every member at creation: the second gang
    # waits outside kube-scheduler's queue, without a scheduling cycle.
    expect_eq "$second-0 gated by the webhook" \
      "$(k get pod "$second-0" -o 'jsonpath={.spec.schedulingGates[*].name}')" "muster.io/gang"
  else
    gang_wait_for "a FailedScheduling event for $second-0" 30 nonempty failed_scheduling "$second-0"
    expect_contains "$second-0 FailedScheduling" "$(failed_scheduling "$second-0" | sed -n 1p)" "muster: "
  fi
  outcome=$(gang_wait 120 30)
  gang_metrics
  gang_end_side
fi

gang_report --snapshot-at 20 --check overcommit --check complete --check no-partial --check annotations \
  --check serial --check podgroup --check podgroup-wait --max-assembly 10
[[ $outcome == "done" || $outcome == skipped ]] || fail "muster did not finish both gangs: $outcome"
