#!/usr/bin/env bash
# Every object gets an answer (issue 18 §1), on the shared gpu-16 cluster.
# Jobs, PodGroups and Queues that the CRDs accept but muster's codecs cannot
# decode - quantities the schema lets through as strings ("1.2.3", "lots",
# "1E30", a negative or 1e20 one that CEL's isQuantity() takes), a template
# field of the wrong type, durations that are not ("forever", "soon"),
# integers past int32 where the schema names no format - are applied all at
# once, beside a valid Job and a valid gang (fixtures/undecodable/):
#  1. each bad Job: status Failed, reason InvalidSpec, the message starting
#     with the JSON path of the bad field, one Warning Event, no PodGroup;
#  2. each bad PodGroup: an Unschedulable condition (reason InvalidSpec)
#     naming the field and a Warning Event; the pod of one waits, its
#     FailedScheduling event naming the PodGroup's problem;
#  3. each bad Queue: a Warning Event (namespace default) naming the field;
#     a valid PodGroup in one waits (QueueNotFound) naming the queue's problem;
#  4. /debug/state lists the PodGroups and Queues, both processes' gauges
#     count them; a few seconds later nothing was said twice;
#  5. the valid Job completes and the valid gang is bound, and the extender
#     and the reconciler are the processes they were before (no crash).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[[ -n ${MUSTER_E2E_DIR:-} ]] || fail "undecodable needs the local cluster (MUSTER_E2E_DIR)"
EXT_URL=http://127.0.0.1:$MUSTER_EXTENDER_PORT
REC_URL=http://127.0.0.1:$MUSTER_RECONCILER_PORT
FIXTURES=$E2E_FIXTURES/undecodable

# pid NAME: the recorded PID of a muster process of the cluster, if alive.
pid() {
  local p
  p=$(awk -v n="$1" '$1 == "proc" && $2 == n {print $3}' "$MUSTER_E2E_DIR/state" | tail -n 1)
  [[ -n $p && -d /proc/$p ]] || fail "the muster $1 of the cluster is not running"
  echo "$p"
}
EXT_PID=$(pid extender)
REC_PID=$(pid reconciler)

new_namespace
SUFFIX=${E2E_NS##*-}
e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete queue "q-negative-$SUFFIX" "q-huge-$SUFFIX" "q-guarantee-$SUFFIX" \
    --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# What each bad object must be told: name, then the start of the message.
BAD_JOBS=(
  'job-bad-cpu|spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantity "1.2.3" of cpu is invalid'
  'job-bad-gpu|spec.tasks[0].template.spec.containers[0].resources.limits["nvidia.com/gpu"]: quantity "lots"'
  'job-bad-containers|spec.tasks[0].template.spec.containers: expected an array, got a string'
  'job-bad-estimate|spec.runningEstimate: '
  'job-bad-timeout|spec.policies[0].timeout: '
  'job-bad-tier|spec.networkTopology.highestTierAllowed: integer 5000000000 out of range'
)
BAD_GROUPS=(
  'pg-bad-gpu|spec.minResources["nvidia.com/gpu"]: quantity "lots" of nvidia.com/gpu is invalid'
  'pg-bad-cpu|spec.minResources.cpu: quantity "1.2.3" of cpu is invalid'
  'pg-bad-memory|spec.minResources.memory: quantity "1E30" of memory is invalid: it is too large'
  'pg-bad-tier|spec.networkTopology.highestTierAllowed: integer 5000000000 out of range'
)
BAD_QUEUES=(
  "q-negative-$SUFFIX|spec.capability.cpu: quantity \"-1\" of cpu is negative"
  "q-huge-$SUFFIX|spec.deserved[\"nvidia.com/gpu\"]: quantity \"100E\" of nvidia.com/gpu is invalid: it is too large"
  "q-guarantee-$SUFFIX|spec.guarantee.resource.memory: quantity \"-1Gi\" of memory is negative"
)

# --- apply everything at once -----------------------------------------------------
{
  cat "$FIXTURES/jobs.yaml"
  echo ---
  sed "s/SUFFIX/$SUFFIX/g" "$FIXTURES/queues.yaml"
  echo ---
  cat "$FIXTURES/podgroups.yaml"
} | k apply -f - >/dev/null || fail "the API server refused a fixture (see above)"
T_APPLIED=${EPOCHREALTIME//[.,]/}
e2e_log "applied ${#BAD_JOBS[@]} bad Jobs, ${#BAD_GROUPS[@]} bad PodGroups, ${#BAD_QUEUES[@]} bad Queues, a good Job and gang"

# events_of KIND NAME [NAMESPACE]: "type reason: message" of the object's Events.
events_of() {
  "$MUSTER_KUBECTL" --request-timeout=20s -n "${3:-$E2E_NS}" get events \
    --field-selector "involvedObject.kind=$1,involvedObject.name=$2" \
    -o 'jsonpath={range .items[*]}{.type} {.reason}: {.message}{"\n"}{end}'
}
# said KIND NAME WANT [NAMESPACE]: exactly one Warning InvalidSpec Event,
# its message starting with WANT.
said() {
  local events
  events=$(events_of "$1" "$2" "${4:-}")
  [[ $(grep -c . <<<"$events") == 1 && $events == "Warning InvalidSpec: $3"* ]]
}
job_failed() {
  [[ $(field "job.batch.volcano.sh/$1" '{.status.state.phase}/{.status.state.reason}') == Failed/InvalidSpec &&
    $(field "job.batch.volcano.sh/$1" '{.status.state.message}') == "$2"* ]]
}
group_told() {
  local c='{.status.conditions[?(@.type=="Unschedulable")]'
  [[ $(field "podgroups.scheduling.volcano.sh/$1" "$c.reason}") == InvalidSpec && $(field "podgroups.scheduling.volcano.sh/$1" "$c.message}") == "$2"* ]]
}
pod_told() {
  grep -qF "muster: PodGroup $E2E_NS/pg-bad-gpu cannot be read: ${BAD_GROUPS[0]#*|}" <<<"$(failed_scheduling pg-bad-gpu-0)"
}

# --- 1-3. every bad object is answered within seconds ------------------------------
for entry in "${BAD_JOBS[@]}"; do
  name=${entry%%|*} want=${entry#*|}
  wait_for "$name: Failed / InvalidSpec naming the field" 20 job_failed "$name" "$want"
  wait_for "$name: one Warning InvalidSpec Event" 20 said Job "$name" "$want"
  pass "$name: $(field "job.batch.volcano.sh/$name" '{.status.state.message}')"
done
for entry in "${BAD_GROUPS[@]}"; do
  name=${entry%%|*} want=${entry#*|}
  wait_for "$name: Unschedulable / InvalidSpec naming the field" 20 group_told "$name" "$want"
  wait_for "$name: one Warning InvalidSpec Event" 20 said PodGroup "$name" "$want"
  pass "$name: $(field "podgroups.scheduling.volcano.sh/$name" '{.status.conditions[0].message}')"
done
for entry in "${BAD_QUEUES[@]}"; do
  name=${entry%%|*} want=${entry#*|}
  wait_for "$name: one Warning InvalidSpec Event in default" 20 said Queue "$name" "$want" default
  pass "$name: $(events_of Queue "$name" default)"
done
e2e_log "every bad object answered (checked one by one until $(((${EPOCHREALTIME//[.,]/} - T_APPLIED) / 1000)) ms after the apply)"
queue_named() {
  local c='{.status.conditions[?(@.type=="Unschedulable")]'
  [[ $(field podgroup/pg-in-bad-queue "$c.reason}") == QueueNotFound &&
    $(field podgroup/pg-in-bad-queue "$c.message}") == "queue \"q-negative-$SUFFIX\" cannot be read: ${BAD_QUEUES[0]#*|}"* ]]
}
wait_for "pg-in-bad-queue waits naming its queue's problem" 20 queue_named
pass "pg-in-bad-queue: $(field podgroup/pg-in-bad-queue '{.status.conditions[0].message}')"
wait_for "pg-bad-gpu-0's FailedScheduling names its PodGroup's problem" 30 pod_told
pass "pg-bad-gpu-0: $(failed_scheduling pg-bad-gpu-0 | sed -n 1p)"
expect_eq "pg-bad-gpu-0 bound" "$(field pod/pg-bad-gpu-0 '{.spec.nodeName}')" ""
for entry in "${BAD_JOBS[@]}"; do
  name=${entry%%|*}
  expect_eq "$name: no PodGroup, no pods" \
    "$(k get podgroups.scheduling.volcano.sh,pods -o name | grep -c "/$name-" || true)" 0
done

# --- 4. /debug/state and the gauges -------------------------------------------------
debug_lists() {
  curl -fsS --max-time 5 "$EXT_URL/debug/state" | python3 -c '
import json, sys
ns, want = sys.argv[1], sys.argv[2:]
listed = {(u["kind"], u["key"]): u["problem"] for u in json.load(sys.stdin)["undecodable"]}
missing = [w for w in want if tuple(w.split(" ", 1)) not in listed]
sys.exit(1 if missing else 0)' "$E2E_NS" "$@"
}
want=()
for entry in "${BAD_GROUPS[@]}"; do want+=("podgroups $E2E_NS/${entry%%|*}"); done
for entry in "${BAD_QUEUES[@]}"; do want+=("queues ${entry%%|*}"); done
wait_for "/debug/state lists every bad PodGroup and Queue" 10 debug_lists "${want[@]}"
pass "/debug/state lists ${#want[@]} undecodable objects"
# gauge URL METRIC KIND: its bad_spec sample.
gauge() {
  curl -fsS --max-time 5 "$1/metrics" |
    awk -v m="$2{kind=\"$3\",reason=\"bad_spec\"}" 'index($0, m " ") == 1 {print int($2)}'
}
at_least() { [[ $(gauge "$1" "$2" "$3") -ge $4 ]]; }
wait_for "extender gauge: podgroups" 10 at_least "$EXT_URL" muster_extender_undecodable_objects podgroups ${#BAD_GROUPS[@]}
wait_for "extender gauge: queues" 10 at_least "$EXT_URL" muster_extender_undecodable_objects queues ${#BAD_QUEUES[@]}
wait_for "reconciler gauge: jobs" 10 at_least "$REC_URL" muster_reconciler_undecodable_objects jobs ${#BAD_JOBS[@]}
pass "gauges: extender podgroups $(gauge "$EXT_URL" muster_extender_undecodable_objects podgroups)," \
  "queues $(gauge "$EXT_URL" muster_extender_undecodable_objects queues);" \
  "reconciler jobs $(gauge "$REC_URL" muster_reconciler_undecodable_objects jobs)"

# --- 5. the good objects run, nothing crashed, nothing was said twice ---------------
job_phase() { [[ $(field job.batch.volcano.sh/job-good '{.status.state.phase}') == "$1" ]]; }
wait_for "job-good Completed" 40 job_phase Completed
pass "job-good Completed"
wait_for "pg-good-0 bound" 30 nonempty field pod/pg-good-0 '{.spec.nodeName}'
wait_for "pg-good-1 bound" 30 nonempty field pod/pg-good-1 '{.spec.nodeName}'
pass "pg-good: both members bound"
for entry in "${BAD_JOBS[@]}"; do said Job "${entry%%|*}" "${entry#*|}" || fail "${entry%%|*}: said again"; done
for entry in "${BAD_GROUPS[@]}"; do
  said PodGroup "${entry%%|*}" "${entry#*|}" || fail "${entry%%|*}: said again"
done
for entry in "${BAD_QUEUES[@]}"; do
  said Queue "${entry%%|*}" "${entry#*|}" default || fail "${entry%%|*}: said again"
done
pass "each answer was given once"
expect_eq "extender PID" "$(pid extender)" "$EXT_PID"
expect_eq "reconciler PID" "$(pid reconciler)" "$REC_PID"
