#!/usr/bin/env bash
# The muster extender on the real control plane (issue 4, acceptance 2):
# pods with schedulerName volcano go through kube-scheduler's `volcano` profile,
# which calls muster's filter, prioritize and bind (each seen in /metrics);
# muster's Binding puts its placement annotations on the pod; 200 GPU pods
# created at once on 16 nodes never over-commit a node's GPUs (the in-tree
# NodeResourcesFit ignores nvidia.com/gpu in this profile, so muster alone
# guards them) and fill the cluster; a pod no node can hold gets a
# FailedScheduling event carrying muster's reason.
set -euo pipefail
# shellcheck source=e2e/scenarios/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=e2e/scenarios/extender_lib.sh
source "$E2E_LIB_DIR/extender_lib.sh"

new_namespace
require_extender
nodes=$(k get nodes -o name | grep -c .)
((nodes >= 16)) || fail "needs at least 16 GPU nodes (e2e/clusters/gpu-16.yaml), the cluster has $nodes"
gpus=$(json_field "$(check_placements)" gpusAllocatable)
e2e_log "$nodes nodes, $gpus GPUs"

# --- one pod through filter, prioritize and bind --------------------------------------
requests_ok() { metric "muster_extender_requests_total{result=\"ok\",verb=\"$1\"}"; }
declare -A before
for verb in filter prioritize bind; do before[$verb]=$(requests_ok "$verb"); done
python3 "$PLACEMENT" pods first 1 2 | k apply -f - >/dev/null || fail "cannot create pod first-0"
wait_for "first-0 bound" 60 nonempty field pod/first-0 '{.spec.nodeName}'
node=$(field pod/first-0 '{.spec.nodeName}')
expect_eq "first-0 annotation muster.io/node" "$(field pod/first-0 '{.metadata.annotations.muster\.io/node}')" "$node"
expect_eq "first-0 annotation muster.io/resources" \
  "$(field pod/first-0 '{.metadata.annotations.muster\.io/resources}')" "nvidia.com/gpu=2"
wait_for "Scheduled event for first-0" 20 nonempty scheduled_by first-0
expect_eq "first-0 scheduled by" "$(scheduled_by first-0)" volcano
for verb in filter prioritize bind; do
  after=$(requests_ok "$verb")
  ((after > before[$verb])) || fail "muster_extender_requests_total{verb=$verb,result=ok} did not grow ($after)"
  pass "/metrics: $verb requests ${before[$verb]} -> $after"
done

# --- a pod no node can hold: FailedScheduling with muster's reason ---------------------
python3 "$PLACEMENT" pods huge 1 16 | k apply -f - >/dev/null || fail "cannot create pod huge-0"
wait_for "FailedScheduling event for huge-0" 60 nonempty failed_scheduling huge-0
msg=$(failed_scheduling huge-0)
expect_contains "huge-0 FailedScheduling" "$msg" "muster: needs 16 nvidia.com/gpu (node has 8)"
k delete pod huge-0 first-0 --wait=false >/dev/null

# --- 200 pods at once on 16 nodes ----------------------------------------------------
wait_for "first-0 and huge-0 gone" 60 no_pods_left
# "Full" and "stable once full" below need every GPU the burst does not get to
# stay held: pods of other namespaces that finish later (CI once met 4 GPUs
# freed 3 s after the cluster was full, bound at once to 4 more burst pods)
# make room that muster rightly fills. Start once no one else holds a GPU.
no_gpus_elsewhere() {
  local summary
  summary=$(check_placements) || return 1
  [[ $(json_field "$summary" gpusElsewhere) == 0 ]] || {
    echo "$summary"
    return 1
  }
}
wait_for "no GPU held outside $E2E_NS" 120 no_gpus_elsewhere
t0=${EPOCHREALTIME//[.,]/}
python3 "$PLACEMENT" pods burst 200 1,1,2,4 >"$E2E_TMP/burst.json"
k create -f "$E2E_TMP/burst.json" >/dev/null || fail "cannot create 200 pods"
e2e_log "200 pods created (408 GPUs asked of $gpus)"
# Every 1-GPU pod can use any free GPU and half the pods ask for one, so the
# cluster must end full.
# If the burst stalls, say where: what the extender holds, its bind outcomes,
# and the last lines of its and the volcano scheduler's logs.
stalled() {
  e2e_log "stalled burst: extender /debug/state summary and logs follow"
  curl -fsS --max-time 5 "$EXT_URL/debug/state" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print({k: (len(v) if isinstance(v, (list, dict)) else v) for k, v in s.items()})' || true
  curl -fsS --max-time 5 "$EXT_URL/metrics" | grep -E '^muster_extender_(bind_failures|requests)_total' || true
  local logs=${MUSTER_E2E_DIR:-}/logs
  [[ -d $logs ]] && tail -n 30 "$logs/extender.log" "$logs/volcano-scheduler.log" 2>&1 | cut -c1-300
  return 0
}
if ! (wait_for "all $gpus GPUs handed out" 240 gpus_used_is "$gpus"); then
  stalled
  fail "the burst stalled below $gpus GPUs"
fi
t1=${EPOCHREALTIME//[.,]/}
summary=$(check_placements) || fail "placement invariants broken: $summary"
pass "placements after the burst: $summary"
e2e_log "cluster full after $(((t1 - t0) / 1000)) ms"
bind_failures=$(metric_sum 'muster_extender_bind_failures_total')
e2e_log "bind failures so far (refused reservations and API errors): $bind_failures"
# Stable: nothing more is bound once full.
sleep 3
summary2=$(check_placements) || fail "placement invariants broken later: $summary2"
if [[ $(json_field "$summary2" bound) != "$(json_field "$summary" bound)" ]]; then
  e2e_log "full: $summary"
  e2e_log "3 s later: $summary2"
fi
expect_eq "bound pods 3 s later" "$(json_field "$summary2" bound)" "$(json_field "$summary" bound)"

# A pending pod's FailedScheduling names muster's reason.
pending_pod=$(k get pods --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}')
[[ -n $pending_pod ]] || fail "no pending pod left, but 408 GPUs were asked of $gpus"
wait_for "FailedScheduling event for $pending_pod" 60 nonempty failed_scheduling "$pending_pod"
expect_contains "$pending_pod FailedScheduling" "$(failed_scheduling "$pending_pod")" "muster: needs"

# The extender's cache agrees with the API, node by node.
check_debug_state

# The PodGroup and Queue watches: the cluster's queues, and a PodGroup made now.
k apply -f "$E2E_FIXTURES/podgroup.yaml" >/dev/null || fail "podgroup.yaml did not apply"
watched() {
  curl -fsS --max-time 5 "$EXT_URL/debug/state" | python3 -c '
import json, sys
state, ns = json.load(sys.stdin), sys.argv[1]
queues = {q["name"] for q in state["queues"]}
groups = {g["name"]: g["minMember"] for g in state["podGroups"]}
ok = {"default", "root"} <= queues and groups.get(ns + "/pg-train") == 4
print(f"queues {sorted(queues)}, podGroups {groups}")
sys.exit(0 if ok else 1)' "$E2E_NS"
}
wait_for "the extender to watch queues default, root and PodGroup pg-train" 30 watched
pass "watched by the extender: $(watched)"
