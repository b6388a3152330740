#!/usr/bin/env bash
# Commands and queue state (issue 19) on the shared cluster (16 fake nodes x
# 8 GPUs, muster's extender and reconciler running). Every Command is written
# as vcctl writes it (volcano-sh/volcano pkg/cli/util/util.go
# CreateJobCommand, CreateQueueCommand): metadata.generateName
# <target>-<action lowercased>-, the target as controller owner and as
# `target`. Docs: docs/reconciler.md, "Commands" and "Queue state".
#  1. A queue created without a state is made Open by the reconciler.
#  2. `vcctl job suspend`: Command AbortJob on a running Job -> the Job goes
#     Aborting/Aborted, its pods are gone, the Command is deleted, a
#     CommandIssued Event is on the Job.
#  3. `vcctl job resume`: Command ResumeJob -> the Job runs again (a new
#     job version), the Command is deleted.
#  4. A Command muster cannot run (an unknown action) gets a Warning Event
#     naming the field and is deleted.
#  5. `vcctl queue operate -a close` while a Job runs in the queue -> Closing;
#     once the Job is deleted (its PodGroup gone) -> Closed. Only
#     status.state is the reconciler's: the extender's status.allocated stays.
#  6. A new Job in the Closed queue is refused as Volcano's admission refuses
#     it: Failed, reason InvalidSpec, the message and a Warning Event say
#     why; no PodGroup, no pod.
#  7. `vcctl queue operate -a open` -> Open; the same Job submitted again runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

new_namespace
QUEUE=e2e-cmd-$(printf '%04x' $RANDOM)
# Queues are cluster-scoped: not deleted with the namespace.
e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

job_phase() { field "vcjob/$1" '{.status.state.phase}'; }
job_phase_is() { [[ $(job_phase "$1") == "$2" ]]; }
# job_pods JOB: "name phase version" of the job's pods not being deleted.
job_pods() {
  k get pods -l "volcano.sh/job-name=$1" --no-headers -o \
    'custom-columns=N:.metadata.name,P:.status.phase,V:.metadata.annotations.volcano\.sh/job-version,D:.metadata.deletionTimestamp' |
    awk '$4 == "<none>" {print $1, $2, $3}'
}
# Every pod, being deleted or not.
pods_gone() { k_none pods -l "volcano.sh/job-name=$1"; }
running_is() { (($(job_pods "$1" | awk -v v="${3:-}" '$2 == "Running" && (v == "" || $3 == v)' | wc -l) == $2)); }
queue_state() { "$MUSTER_KUBECTL" get queue "$QUEUE" -o 'jsonpath={.status.state}'; }
queue_state_is() { [[ $(queue_state) == "$1" ]]; }
gone() { ! k get "$1" -o name >/dev/null 2>&1; }
events_of() { # NAME REASON -> the messages of NAME's Events with REASON
  k get events --field-selector "involvedObject.name=$1,reason=$2" \
    -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
}

# vcjob NAME: a gang of 2 pods x 1 GPU in $QUEUE, running until deleted.
vcjob() {
  k apply -f - >/dev/null <<EOF
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: $1
spec:
  schedulerName: volcano
  queue: $QUEUE
  minAvailable: 2
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: registry.invalid/fake:1
          resources:
            requests: {cpu: 100m, nvidia.com/gpu: "1"}
            limits: {nvidia.com/gpu: "1"}
EOF
}

# vc_command ACTION Job|Queue NAME: create a Command as vcctl does; prints
# its name.
vc_command() {
  local action=$1 kind=$2 name=$3 api resource uid lower
  case $kind in
    Job) api=batch.volcano.sh/v1alpha1 resource=jobs.batch.volcano.sh ;;
    Queue) api=scheduling.volcano.sh/v1beta1 resource=queues.scheduling.volcano.sh ;;
    *) fail "vc_command: no kind $kind" ;;
  esac
  uid=$(k get "$resource" "$name" -o 'jsonpath={.metadata.uid}')
  [[ -n $uid ]] || fail "no $kind $name to command"
  lower=$(tr '[:upper:]' '[:lower:]' <<<"$action")
  k create -o 'jsonpath={.metadata.name}' -f - <<EOF
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata:
  generateName: $name-$lower-
  ownerReferences:
  - {apiVersion: $api, kind: $kind, name: $name, uid: $uid, controller: true, blockOwnerDeletion: true}
action: $action
target: {apiVersion: $api, kind: $kind, name: $name, uid: $uid, controller: true, blockOwnerDeletion: true}
EOF
}

# --- 1. a new queue gets Open ------------------------------------------------------
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {weight: 1, reclaimable: true, parent: root}\n' \
  "$QUEUE" | "$MUSTER_KUBECTL" apply -f - >/dev/null
e2e_log "queue $QUEUE created without a state"
wait_for "queue $QUEUE Open" 30 queue_state_is Open
pass "the reconciler made queue $QUEUE Open"

# --- 2. vcctl job suspend ----------------------------------------------------------
vcjob sleeper
wait_for "sleeper: 2 pods Running" 60 running_is sleeper 2
wait_for "sleeper Running" 30 job_phase_is sleeper Running
cmd=$(vc_command AbortJob Job sleeper)
expect_contains "suspend Command name" "$cmd" "sleeper-abortjob-"
wait_for "sleeper Aborted" 60 job_phase_is sleeper Aborted
wait_for "sleeper's pods gone" 60 pods_gone sleeper
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
conds=$(field vcjob/sleeper '{range .status.conditions[*]}{.status} {end}')
expect_contains "sleeper conditions" "$conds" "Aborting Aborted"
expect_contains "sleeper CommandIssued Event" "$(events_of sleeper CommandIssued)" \
  "Start to execute command AbortJob"
expect_eq "sleeper PodGroups while Aborted" "$(k get podgroups.scheduling.volcano.sh -o name | grep -c '/sleeper-' || true)" 0

# --- 3. vcctl job resume -----------------------------------------------------------
cmd=$(vc_command ResumeJob Job sleeper)
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
wait_for "sleeper Running again" 90 job_phase_is sleeper Running
version=$(field vcjob/sleeper '{.status.version}')
wait_for "sleeper: 2 pods Running at version $version" 60 running_is sleeper 2 "$version"
expect_eq "sleeper retryCount after resume" "$(field vcjob/sleeper '{.status.retryCount}')" 1
expect_contains "sleeper CommandIssued Event" "$(events_of sleeper CommandIssued)" \
  "Start to execute command ResumeJob"

# --- 4. a Command muster cannot run -----------------------------------------------
cmd=$(vc_command Suspend Job sleeper)
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
invalid() { nonempty events_of "$cmd" InvalidCommand; }
wait_for "InvalidCommand Event on $cmd" 30 invalid
expect_contains "InvalidCommand Event" "$(events_of "$cmd" InvalidCommand)" \
  'action: "Suspend" is not an action on a Job'
expect_eq "sleeper phase after the refused Command" "$(job_phase sleeper)" Running

# --- 5. vcctl queue operate -a close ------------------------------------------------
# A Command of a Queue lives in any namespace (vcctl: its -n); this one in ours.
cmd=$(vc_command CloseQueue Queue "$QUEUE")
wait_for "queue $QUEUE Closing (sleeper still runs)" 30 queue_state_is Closing
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
allocated() { [[ -n $("$MUSTER_KUBECTL" get queue "$QUEUE" -o 'jsonpath={.status.allocated.nvidia\.com/gpu}') ]]; }
wait_for "the extender's status.allocated of $QUEUE" 30 allocated
pass "queue $QUEUE Closing; allocated nvidia.com/gpu=$("$MUSTER_KUBECTL" get queue "$QUEUE" -o 'jsonpath={.status.allocated.nvidia\.com/gpu}')"
expect_eq "sleeper phase in a Closing queue" "$(job_phase sleeper)" Running
k delete vcjob sleeper --wait=false >/dev/null
wait_for "queue $QUEUE Closed (no PodGroup left)" 90 queue_state_is Closed
allocated_field=$("$MUSTER_KUBECTL" get queue "$QUEUE" -o 'jsonpath={.status.allocated}')
[[ -n $allocated_field ]] || fail "queue $QUEUE lost status.allocated (the extender's)"
pass "queue $QUEUE status.allocated kept: $allocated_field"

# --- 6. a new Job in a Closed queue ------------------------------------------------
vcjob late
wait_for "late Failed" 30 job_phase_is late Failed
expect_eq "late reason" "$(field vcjob/late '{.status.state.reason}')" InvalidSpec
bt='`' # Volcano's message quotes with backticks
want="spec.queue: can only submit job to queue with state ${bt}Open${bt}, queue ${bt}$QUEUE${bt} status is ${bt}Closed${bt}"
expect_eq "late message" "$(field vcjob/late '{.status.state.message}')" "$want"
refused() { nonempty events_of late InvalidSpec; }
wait_for "late InvalidSpec Event" 30 refused
expect_contains "late Warning Event" "$(events_of late InvalidSpec)" "can only submit job to queue with state"
sleep 2 # a Job the reconciler ran would have its PodGroup by now
expect_eq "late PodGroups" "$(k get podgroups.scheduling.volcano.sh -o name | grep -c '/late-' || true)" 0
expect_eq "late pods" "$(job_pods late | wc -l)" 0

# --- 7. vcctl queue operate -a open -------------------------------------------------
cmd=$(vc_command OpenQueue Queue "$QUEUE")
wait_for "queue $QUEUE Open" 30 queue_state_is Open
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
# Refused is final, as a webhook's refusal: the Job is submitted again.
k delete vcjob late >/dev/null
wait_for "late deleted" 30 gone vcjob/late
vcjob late
wait_for "late: 2 pods Running" 60 running_is late 2
wait_for "late Running" 30 job_phase_is late Running
k delete vcjob late --wait=false >/dev/null
