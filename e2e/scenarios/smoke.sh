#!/usr/bin/env bash
# Smoke: the stock kube-scheduler and kwok on the real control plane.
#  1. a 1-GPU pod (run-seconds 3) is bound by default-scheduler to a kwok GPU
#     node, turns Running, then Succeeded about 3 s later;
#  2. a 9-GPU pod stays Pending: FailedScheduling / PodScheduled=False name
#     nvidia.com/gpu (every node has 8);
#  3. a pod with exit-code 3 ends Failed with exitCode 3;
#  4. deleting a Running pod removes it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

new_namespace
k apply -f "$E2E_FIXTURES/smoke-pods.yaml" >/dev/null
e2e_log "applied fixtures/smoke-pods.yaml"

# --- 1. scheduled onto a kwok GPU node, Running, then Succeeded ----------------
wait_for "gpu-1 bound to a node" 30 nonempty field pod/gpu-1 '{.spec.nodeName}'
node=$(field pod/gpu-1 '{.spec.nodeName}')
expect_eq "gpu-1 node $node kwok annotation" \
  "$("$MUSTER_KUBECTL" get node "$node" -o 'jsonpath={.metadata.annotations.kwok\.x-k8s\.io/node}')" fake
expect_eq "gpu-1 node $node allocatable nvidia.com/gpu" \
  "$("$MUSTER_KUBECTL" get node "$node" -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}')" 8
wait_for "Scheduled event for gpu-1" 20 nonempty scheduled_by gpu-1
expect_eq "gpu-1 scheduled by" "$(scheduled_by gpu-1)" default-scheduler
wait_for "gpu-1 Running" 30 phase_is gpu-1 Running
pass "gpu-1 Running on $node"
wait_for "gpu-1 Succeeded" 30 phase_is gpu-1 Succeeded
started=$(field pod/gpu-1 '{.status.containerStatuses[0].state.terminated.startedAt}')
finished=$(field pod/gpu-1 '{.status.containerStatuses[0].state.terminated.finishedAt}')
ran=$(($(date -d "$finished" +%s) - $(date -d "$started" +%s)))
# Timestamps have 1 s resolution and kwok starts the delay when it sees Running.
((ran >= 2 && ran <= 15)) || fail "gpu-1 ran ${ran}s ($started -> $finished), want about 3s"
pass "gpu-1 Succeeded after ${ran}s (run-seconds 3)"
expect_eq "gpu-1 exit code" "$(field pod/gpu-1 '{.status.containerStatuses[0].state.terminated.exitCode}')" 0

# --- 2. more GPUs than a node has: Pending with the scheduler's reason ---------
unschedulable() {
  [[ $(field pod/gpu-9 '{.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]]
}
wait_for "gpu-9 PodScheduled=False/Unschedulable" 30 unschedulable
msg=$(field pod/gpu-9 '{.status.conditions[?(@.type=="PodScheduled")].message}')
expect_contains "gpu-9 PodScheduled message" "$msg" "Insufficient nvidia.com/gpu"
wait_for "FailedScheduling event for gpu-9" 20 nonempty failed_scheduling gpu-9
expect_contains "gpu-9 FailedScheduling event" "$(failed_scheduling gpu-9)" "nvidia.com/gpu"
expect_eq "gpu-9 phase" "$(field pod/gpu-9 '{.status.phase}')" Pending
expect_eq "gpu-9 nodeName" "$(field pod/gpu-9 '{.spec.nodeName}')" ""

# --- 3. exit code 3: Failed -----------------------------------------------------
wait_for "exit-3 Failed" 30 phase_is exit-3 Failed
expect_eq "exit-3 exit code" "$(field pod/exit-3 '{.status.containerStatuses[0].state.terminated.exitCode}')" 3
expect_eq "exit-3 reason" "$(field pod/exit-3 '{.status.containerStatuses[0].state.terminated.reason}')" Error

# --- 4. deleting a Running pod -------------------------------------------------
wait_for "long-running Running" 30 phase_is long-running Running
k delete pod long-running --wait=true --timeout=30s >/dev/null || fail "deleting long-running failed"
if k get pod long-running -o name >/dev/null 2>&1; then fail "long-running still exists after delete"; fi
pass "long-running deleted"

# gpu-9 is still Pending: allocatable held firm while the others came and went.
expect_eq "gpu-9 phase at the end" "$(field pod/gpu-9 '{.status.phase}')" Pending
