#!/usr/bin/env bash
# A corpus of Volcano Jobs written from Volcano's user guides (issue 19,
# acceptance point 2), on the shared gpu-16 cluster (16 kwok nodes x 8 GPUs),
# muster's extender and reconciler running. Each fixture in fixtures/corpus/
# names, in its header, the upstream guide it follows and the end the Job must
# reach; this script runs them all (concurrently where they do not interfere)
# and checks each end: phase, pods, env, plugin objects - or a refusal whose
# message names the field. One "JOB <name>: <end>" line per case, and a
# summary at the end.
#
#   frameworks  mpi (mpi plugin: MPI_HOST, ssh Secret, svc), pytorch
#               (MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK), tf (tensorflow
#               plugin: TF_CONFIG), tf-mnist (env + svc: /etc/volcano hosts,
#               VK_TASK_INDEX), mindspore (ssh + env + svc, 8 replicas),
#               ray (ray plugin: head ports and command, head Service)
#   lifecycle   chain (dependsOn, 3 stages), minsuccess (minSuccess 2 of 3),
#               flaky (PodFailed -> RestartJob until maxRetry -> Failed),
#               ttl (ttlSecondsAfterFinished), sleeper (Commands AbortJob
#               then ResumeJob, as vcctl job suspend/resume write them)
#   queues      leaf (a job in a leaf of a queue tree runs), over-parent (a
#               leaf without capability is held by its parent's), to-root
#               (refused: spec.queue), late (a new Job in a queue closed by a
#               CloseQueue Command is refused naming spec.queue)
#   refusals    dup-task, min-available, dup-event (the API server refuses
#               them, naming the field); mpi-no-master (the reconciler
#               refuses it: status and Warning Event name spec.plugins.mpi)
#
#   plain pods  web (a Deployment with schedulerName volcano and the
#               queue-name annotation, 4 replicas of 1 cpu in a queue of
#               capability cpu 2: 2 run, 2 wait with a FailedScheduling event
#               naming the capability), to-parent (a Job in a non-leaf queue
#               is refused naming spec.queue)
#
# Pods are kwok's: a pod "runs" for its muster.io/run-seconds annotation and
# exits with muster.io/exit-code (e2e/cluster/kwok-stages.yaml); without the
# annotation it runs until deleted.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FIX=$E2E_FIXTURES/corpus

new_namespace
SUFFIX=${E2E_NS##*-} # the namespace's random part: queue names of this run
PARENT=corpus-eng-$SUFFIX
LEAF=corpus-eng-a-$SUFFIX
LEAF2=corpus-eng-b-$SUFFIX
WEBQ=corpus-web-$SUFFIX
CLOSING=corpus-closing-$SUFFIX
QUEUES=("$LEAF" "$LEAF2" "$PARENT" "$WEBQ" "$CLOSING")
E2E_TMP=$(mktemp -d)
WATCHES=()
# Queues are cluster-scoped: not deleted with the namespace. The watches are
# this script's own background kubectl processes.
e2e_before_cleanup() {
  local pid
  for pid in "${WATCHES[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$MUSTER_KUBECTL" delete queue "${QUEUES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# --- helpers -----------------------------------------------------------------
# render FILE: the fixture with this run's queue suffix.
render() { sed "s/__SUFFIX__/$SUFFIX/g" "$1"; }
apply() {
  local f
  for f in "$@"; do render "$FIX/$f" | k apply -f - >/dev/null || fail "applying $f failed"; done
}
job_phase() { field "vcjob/$1" '{.status.state.phase}'; }
job_phase_is() { [[ $(job_phase "$1") == "$2" ]]; }
# job_pods JOB: "name phase version node task" of the job's pods not being
# deleted (node "<none>" while unbound).
job_pods() {
  k get pods -l "volcano.sh/job-name=$1" --no-headers -o \
    'custom-columns=N:.metadata.name,P:.status.phase,V:.metadata.annotations.volcano\.sh/job-version,NODE:.spec.nodeName,T:.metadata.labels.volcano\.sh/task-spec,D:.metadata.deletionTimestamp' |
    awk '$6 == "<none>" {print $1, $2, $3, $4, $5}'
}
# count JOB [PHASE [TASK [VERSION]]]: the job's pods (in that phase, of that task/version).
count() {
  job_pods "$1" | awk -v p="${2:-}" -v t="${3:-}" -v v="${4:-}" \
    '(p == "" || $2 == p) && (t == "" || $5 == t) && (v == "" || $3 == v)' | wc -l
}
count_is() { # WANT JOB [PHASE [TASK [VERSION]]]
  local want=$1
  shift
  (($(count "$@") == want))
}
# Every pod of the job, being deleted or not, is gone.
pods_gone() { k_none pods -l "volcano.sh/job-name=$1"; }
task_gone() { # the pod list read first: a failed read is "not yet", never "gone"
  local pods
  pods=$(job_pods "$1") || return 1
  ! awk -v t="$2" '$5 == t {found = 1} END {exit !found}' <<<"$pods"
}
gone() { ! k get "$1" -o name >/dev/null 2>&1; }
env_of() { # POD NAME -> the value of env NAME of the first container
  k get pod "$1" -o "jsonpath={.spec.containers[0].env[?(@.name==\"$2\")].value}"
}
ports_of() { field "pod/$1" '{range .spec.containers[0].ports[*]}{.name}:{.containerPort},{end}'; }
mounts_of() { field "pod/$1" '{range .spec.containers[0].volumeMounts[*]}{.name}:{.mountPath} {end}'; }
uid_of() { field "vcjob/$1" '{.metadata.uid}'; }
podgroups_of() { # JOB UID -> how many PodGroups <job>-<uid> exist (0 or 1)
  k get podgroups.scheduling.volcano.sh -o name | grep -c "/$1-$2\$" || true
}
events_of() { # NAME REASON -> the messages of NAME's Events with REASON
  k get events --field-selector "involvedObject.name=$1,reason=$2" \
    -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
}
queue_state() { "$MUSTER_KUBECTL" get queue "$1" -o 'jsonpath={.status.state}'; }
queue_state_is() { [[ $(queue_state "$1") == "$2" ]]; }
queues_open() {
  local q
  for q in "${QUEUES[@]}"; do queue_state_is "$q" Open || return 1; done
}

# vc_command ACTION Job|Queue NAME: a Command as vcctl writes it (volcano-sh/
# volcano pkg/cli/util/util.go: generateName <target>-<action lowercased>-,
# the target as controller owner and as `target`); prints its name.
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

# One line per case, repeated in the summary.
OUTCOMES=()
outcome() {
  OUTCOMES+=("$(printf '%-14s %s' "$1" "$2")")
  e2e_log "JOB $1: $2"
}

# Every Job's phases and every pod's changes, in resourceVersion order, from
# before the first Job exists (a TTL job is gone by the time it is checked; a
# dependsOn stage must be created only after the stage before it runs).
watch_to() { # FILE KUBECTL-ARGS...: a watch without kubectl's request timeout
  local file=$1
  shift
  "$MUSTER_KUBECTL" --namespace "$E2E_NS" get "$@" --watch --output-watch-events --no-headers >"$file" 2>/dev/null &
  WATCHES+=($!)
}
watch_to "$E2E_TMP/jobs.log" jobs.batch.volcano.sh -o \
  'custom-columns=E:.type,N:.object.metadata.name,P:.object.status.state.phase'
watch_to "$E2E_TMP/chain.log" pods -l volcano.sh/job-name=chain -o \
  'custom-columns=E:.type,T:.object.metadata.labels.volcano\.sh/task-spec,N:.object.metadata.name,P:.object.status.phase'
# phases JOB: the job's phases as watched, repeats dropped ("Pending Running Completed").
phases() {
  awk -v j="$1" '$2 == j && $3 != "<none>" && $3 != last {printf "%s%s", sep, $3; sep = " "; last = $3}' \
    "$E2E_TMP/jobs.log"
}
saw_deleted() { grep -q "^DELETED  *$1 " "$E2E_TMP/jobs.log"; }

# --- queues ---------------------------------------------------------------------
render "$FIX/queues.yaml" | "$MUSTER_KUBECTL" apply -f - >/dev/null || fail "creating the queues failed"
wait_for "queues ${QUEUES[*]} Open" 30 queues_open
e2e_log "queues Open: ${QUEUES[*]}"
sleep 1 # the watches are established before the first Job exists

# --- refused at create (the Job CRD's rules, as Volcano's admission webhook) ----
# refused_at_create FILE JOB FIELD TEXT: the API server refuses it, naming
# FIELD, and no Job exists.
refused_at_create() {
  local file=$1 job=$2 want_field=$3 want=$4 out
  if out=$(render "$FIX/$file" | k create -f - 2>&1); then fail "$job ($file) was accepted: $out"; fi
  expect_contains "$job refusal" "$out" "$want_field: Invalid value"
  expect_contains "$job refusal" "$out" "$want"
  gone "vcjob/$job" || fail "$job exists after its refusal"
  outcome "$job" "refused at create: ${out#*is invalid: }"
}
refused_at_create invalid-duplicate-task.yaml dup-task spec.tasks 'duplicate task name "worker"'
refused_at_create invalid-min-available.yaml min-available spec.minAvailable '4 is more than the 3 replicas of all tasks'
refused_at_create invalid-duplicate-event.yaml dup-event spec.policies 'duplicate event "PodFailed"'
refused_at_create hier-root.yaml to-root spec.queue '"root" is the root of the queue tree; submit to a leaf queue'

# --- everything that runs, at once -------------------------------------------------
apply mpi.yaml pytorch.yaml tensorflow.yaml tf-mnist-env-svc.yaml mindspore.yaml ray.yaml \
  depends-on.yaml min-success.yaml restart-max-retry.yaml ttl.yaml suspend-resume.yaml \
  hier-leaf.yaml invalid-mpi-master.yaml
e2e_log "applied 13 Jobs"
apply deployment.yaml
e2e_log "applied Deployment web"
# vcctl queue operate -n $CLOSING -a close (nothing runs in it: Closed at once).
close_cmd=$(vc_command CloseQueue Queue "$CLOSING")

# --- the frameworks' pods, while they run ------------------------------------------
# Their finishing tasks run 15 s: these spec checks come first, as soon as
# each job's pods exist (a pod's spec is all they read).
wait_for "mpi: 3 pods" 60 count_is 3 mpi
expect_eq "mpi launcher MPI_HOST" "$(env_of mpi-mpimaster-0 MPI_HOST)" "mpi-mpiworker-0.mpi,mpi-mpiworker-1.mpi"
worker_env=$(field pod/mpi-mpiworker-0 '{.metadata.name}:{range .spec.containers[0].env[*]}{.name},{end}')
[[ $worker_env == mpi-mpiworker-0:* && $worker_env != *MPI_HOST* ]] ||
  fail "mpi worker env: want no MPI_HOST (the master's only), got '$worker_env'"
pass "mpi worker env has no MPI_HOST: ${worker_env#*:}"
expect_eq "mpi ports (launcher, worker)" "$(ports_of mpi-mpimaster-0) $(ports_of mpi-mpiworker-1)" \
  "mpijob-port:22, mpijob-port:22,"
mounts=$(mounts_of mpi-mpimaster-0)
expect_contains "mpi launcher mounts" "$mounts" "mpi-ssh:/root/.ssh"
expect_contains "mpi launcher mounts" "$mounts" "mpi-svc:/etc/volcano"
keys=$(field secret/mpi-ssh '{.data}' | python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')
expect_eq "Secret mpi-ssh keys" "$keys" "authorized_keys config id_rsa id_rsa.pub"
expect_eq "mpi headless Service" "$(field service/mpi '{.spec.clusterIP}')" None
expect_eq "mpi worker hostname.subdomain" "$(field pod/mpi-mpiworker-1 '{.spec.hostname}.{.spec.subdomain}')" \
  "mpi-mpiworker-1.mpi"

wait_for "pytorch: 3 pods" 60 count_is 3 pytorch
for pod_rank in master-0:0 worker-0:1 worker-1:2; do
  pod=pytorch-${pod_rank%%:*}
  got="$(env_of "$pod" MASTER_ADDR) $(env_of "$pod" MASTER_PORT) $(env_of "$pod" WORLD_SIZE) $(env_of "$pod" RANK)"
  expect_eq "$pod MASTER_ADDR MASTER_PORT WORLD_SIZE RANK" "$got" "pytorch-master-0.pytorch 23456 3 ${pod_rank##*:}"
done
expect_eq "pytorch worker port" "$(ports_of pytorch-worker-1)" "pytorchjob-port:23456,"

wait_for "tf: 3 pods" 60 count_is 3 tf
tf_cluster='"cluster":{"ps":["tf-ps-0.tf:5000"],"worker":["tf-worker-0.tf:5000","tf-worker-1.tf:5000"]}'
expect_eq "tf worker-1 TF_CONFIG" "$(env_of tf-worker-1 TF_CONFIG)" "{$tf_cluster,\"task\":{\"type\":\"worker\",\"index\":1}}"
expect_eq "tf ps-0 TF_CONFIG" "$(env_of tf-ps-0 TF_CONFIG)" "{$tf_cluster,\"task\":{\"type\":\"ps\",\"index\":0}}"

wait_for "tf-mnist: 3 pods" 60 count_is 3 tf-mnist
expect_eq "tf-mnist worker-1 VK_TASK_INDEX VC_TASK_INDEX" \
  "$(env_of tf-mnist-worker-1 VK_TASK_INDEX) $(env_of tf-mnist-worker-1 VC_TASK_INDEX)" "1 1"
expect_contains "tf-mnist ps mounts" "$(mounts_of tf-mnist-ps-0)" "tf-mnist-svc:/etc/volcano"
expect_eq "ConfigMap tf-mnist-svc ps.host" "$(field configmap/tf-mnist-svc '{.data.ps\.host}')" "tf-mnist-ps-0.tf-mnist"
expect_eq "ConfigMap tf-mnist-svc worker.host" "$(field configmap/tf-mnist-svc '{.data.worker\.host}')" \
  $'tf-mnist-worker-0.tf-mnist\ntf-mnist-worker-1.tf-mnist'

wait_for "mindspore: 8 pods" 60 count_is 8 mindspore
expect_eq "mindspore-pod-7 VK_TASK_INDEX VC_TASK_INDEX" \
  "$(env_of mindspore-pod-7 VK_TASK_INDEX) $(env_of mindspore-pod-7 VC_TASK_INDEX)" "7 7"
expect_eq "mindspore-pod-7 hostname.subdomain" "$(field pod/mindspore-pod-7 '{.spec.hostname}.{.spec.subdomain}')" \
  "mindspore-pod-7.mindspore"
mounts=$(mounts_of mindspore-pod-0)
expect_contains "mindspore mounts" "$mounts" "mindspore-ssh:/root/.ssh"
expect_contains "mindspore mounts" "$mounts" "mindspore-svc:/etc/volcano"
expect_eq "ConfigMap mindspore-svc VC_POD_NUM" "$(field configmap/mindspore-svc '{.data.VC_POD_NUM}')" 8

# --- ray: a cluster that serves until deleted ---------------------------------------
wait_for "ray: head and 2 workers Running" 60 count_is 3 ray Running
expect_eq "ray head ports" "$(ports_of ray-head-0)" "gcs:6379,dashboard:8265,client-server:10001,"
expect_eq "ray head command" "$(field pod/ray-head-0 '{.spec.containers[0].command[2]}')" \
  "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 --ray-client-server-port=10001"
expect_eq "ray worker command" "$(field pod/ray-worker-1 '{.spec.containers[0].command[2]}')" \
  "ray start --block --address=ray-head-0.ray:6379"
expect_eq "Service ray-head-svc selector and ports" \
  "$(field service/ray-head-svc '{.spec.selector.volcano\.sh/task-spec} {range .spec.ports[*]}{.name}:{.port},{end}')" \
  "head gcs:6379,dashboard:8265,client-server:10001,"
wait_for "ray Running" 30 job_phase_is ray Running
outcome ray "Running: head + 2 workers, head ports gcs/dashboard/client-server, Service ray-head-svc"

# --- hierarchical queues --------------------------------------------------------------
wait_for "leaf: 2 pods Running in $LEAF" 60 count_is 2 leaf Running
wait_for "leaf Running" 30 job_phase_is leaf Running
allocated_cpu() { "$MUSTER_KUBECTL" get queue "$1" -o 'jsonpath={.status.allocated.cpu}'; }
allocated_is() { [[ $(allocated_cpu "$1") == "$2" ]]; }
wait_for "$LEAF status.allocated cpu 1" 30 allocated_is "$LEAF" 1
wait_for "$PARENT status.allocated cpu 1 (its leaf's)" 30 allocated_is "$PARENT" 1
outcome leaf "Running in leaf queue $LEAF: 2 pods; allocated cpu 1 in $LEAF and its parent"
# Applied once leaf holds its cpu: the parent has 3 of its 4 left, the gang needs 5.
apply hier-over-parent.yaml
over_uid=$(uid_of over-parent)
over_pg=over-parent-$over_uid
pg_message() { k get podgroups.scheduling.volcano.sh "$1" -o 'jsonpath={range .status.conditions[*]}{.reason}: {.message}{"\n"}{end}' 2>/dev/null; }
pg_says() { [[ $(pg_message "$1") == *"$2"* ]]; }
wait_for "PodGroup $over_pg names $PARENT's capability" 30 pg_says "$over_pg" \
  "QueueCapability: not admitted: queue $PARENT is at its capability: needs cpu=5"
expect_eq "over-parent PodGroup phase" "$(field "podgroups.scheduling.volcano.sh/$over_pg" '{.status.phase}')" Pending

# --- Deployment with schedulerName volcano in a queue of capability cpu 2 ---------
web_pods() { # "name phase node" of the Deployment's pods
  k get pods -l app=web --no-headers -o 'custom-columns=N:.metadata.name,P:.status.phase,NODE:.spec.nodeName'
}
web_count() { web_pods | awk -v p="$1" '$2 == p' | wc -l; }
web_refused() { # every Pending replica has a FailedScheduling event naming the capability
  local pod n=0
  for pod in $(web_pods | awk '$2 == "Pending" {print $1}'); do
    [[ $(failed_scheduling "$pod") == *"muster: queue $WEBQ is at its capability: needs cpu=1 (0 left)"* ]] || return 1
    n=$((n + 1))
  done
  ((n == 2))
}
web_running_is() { (($(web_count Running) == $1)); }
wait_for "web: 2 replicas Running" 60 web_running_is 2
wait_for "web: 2 Pending replicas refused naming $WEBQ's capability" 60 web_refused
web_pending=$(web_pods | awk '$2 == "Pending" {print $1}' | sed -n 1p)
web_msg=$(failed_scheduling "$web_pending" | tail -n 1)
e2e_log "web $web_pending FailedScheduling: $web_msg"

# --- queue close: a new Job in a Closed queue ------------------------------------------
wait_for "queue $CLOSING Closed" 30 queue_state_is "$CLOSING" Closed
wait_for "Command $close_cmd deleted" 30 gone "command/$close_cmd"
apply queue-closed.yaml
wait_for "late Failed" 30 job_phase_is late Failed
expect_eq "late reason" "$(field vcjob/late '{.status.state.reason}')" InvalidSpec
bt='`' # Volcano's message quotes with backticks
late_msg=$(field vcjob/late '{.status.state.message}')
expect_eq "late message" "$late_msg" \
  "spec.queue: can only submit job to queue with state ${bt}Open${bt}, queue ${bt}$CLOSING${bt} status is ${bt}Closed${bt}"
wait_for "late InvalidSpec Event" 30 nonempty events_of late InvalidSpec
outcome late "Failed (InvalidSpec) in the closed queue: $late_msg"

# --- refused by the reconciler -----------------------------------------------------------
wait_for "mpi-no-master Failed" 30 job_phase_is mpi-no-master Failed
expect_eq "mpi-no-master reason" "$(field vcjob/mpi-no-master '{.status.state.reason}')" InvalidSpec
nm_msg=$(field vcjob/mpi-no-master '{.status.state.message}')
expect_contains "mpi-no-master message" "$nm_msg" "spec.plugins.mpi"
wait_for "mpi-no-master InvalidSpec Event" 30 nonempty events_of mpi-no-master InvalidSpec
expect_contains "mpi-no-master Warning Event" "$(events_of mpi-no-master InvalidSpec)" "spec.plugins.mpi"
expect_eq "mpi-no-master pods, PodGroups" "$(count mpi-no-master) $(podgroups_of mpi-no-master "$(uid_of mpi-no-master)")" "0 0"
outcome mpi-no-master "Failed (InvalidSpec): $nm_msg"

# --- vcctl job suspend / resume ----------------------------------------------------------
wait_for "sleeper: 2 pods Running" 60 count_is 2 sleeper Running
wait_for "sleeper Running" 30 job_phase_is sleeper Running
cmd=$(vc_command AbortJob Job sleeper)
wait_for "sleeper Aborted" 60 job_phase_is sleeper Aborted
wait_for "sleeper's pods gone" 60 pods_gone sleeper
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
expect_eq "sleeper PodGroups while Aborted" "$(podgroups_of sleeper "$(uid_of sleeper)")" 0
cmd=$(vc_command ResumeJob Job sleeper)
wait_for "Command $cmd deleted" 30 gone "command/$cmd"
wait_for "sleeper Running again" 60 job_phase_is sleeper Running
version=$(field vcjob/sleeper '{.status.version}')
wait_for "sleeper: 2 pods Running at version $version" 60 count_is 2 sleeper Running "" "$version"
expect_eq "sleeper retryCount after resume" "$(field vcjob/sleeper '{.status.retryCount}')" 1
expect_contains "sleeper CommandIssued Events" "$(events_of sleeper CommandIssued)" "AbortJob"
expect_contains "sleeper CommandIssued Events" "$(events_of sleeper CommandIssued)" "ResumeJob"
outcome sleeper "Running again at version $version after AbortJob (Aborted, pods gone) and ResumeJob ($(phases sleeper))"

# --- ends of the lifecycle cases ---------------------------------------------------------
wait_for "minsuccess Completed" 60 job_phase_is minsuccess Completed
wait_for "minsuccess straggler cleaned up" 30 task_gone minsuccess straggler
expect_eq "minsuccess status.succeeded" "$(field vcjob/minsuccess '{.status.succeeded}')" 2
expect_eq "minsuccess shards Succeeded" "$(count minsuccess Succeeded shard)" 2
outcome minsuccess "Completed with 2 of 3 pods succeeded (minSuccess 2), straggler killed"

wait_for "flaky Failed" 90 job_phase_is flaky Failed
expect_eq "flaky reason, retryCount" "$(field vcjob/flaky '{.status.state.reason} {.status.retryCount}')" \
  "MaxRetryExceeded 2"
outcome flaky "Failed (MaxRetryExceeded) after 2 restarts ($(phases flaky))"

wait_for "ttl deleted by ttlSecondsAfterFinished" 60 gone vcjob/ttl
wait_for "the watch saw ttl deleted" 10 saw_deleted ttl
ttl_phases=$(phases ttl)
[[ $ttl_phases == *Completed ]] || fail "ttl was deleted before it was seen Completed (phases: $ttl_phases)"
outcome ttl "Completed, then deleted (ttlSecondsAfterFinished 3) ($ttl_phases)"

wait_for "chain Completed" 60 job_phase_is chain Completed
wait_for "chain: prep and serve cleaned up" 30 count_is 0 chain Running
expect_eq "chain load-0" "$(field pod/chain-load-0 '{.status.phase}')" Succeeded
# Lines: EVENT TASK POD PHASE. up[task] = its pods last seen Running.
order=$(awk '
  $1 == "DELETED" { next }
  !($3 in seen) {
    seen[$3] = 1
    if ($2 == "serve" && up["prep"] < 1) { print "violation: " $3 " created before prep ran"; exit }
    if ($2 == "load" && up["serve"] < 2) { print "violation: " $3 " created before both serve pods ran"; exit }
    print "created " $3 " (prep running " up["prep"] + 0 ", serve running " up["serve"] + 0 ")"
  }
  { was = ($3 in run) ? run[$3] : 0; now = ($4 == "Running"); run[$3] = now; up[$2] += now - was }
' "$E2E_TMP/chain.log")
e2e_log "chain watch: ${order//$'\n'/; }"
[[ $order != *violation* ]] || fail "dependsOn order: $order"
expect_eq "chain: pods created stage after stage" "$(grep -c '^created' <<<"$order")" 4
outcome chain "Completed: prep -> serve -> load created stage after stage, load's TaskCompleted completed it"

# The frameworks (their finishing tasks ran 15 s).
ends=(mpi:mpimaster:mpiworker pytorch:master:worker tf:worker:ps tf-mnist:worker:ps)
for end in "${ends[@]}"; do
  IFS=: read -r job done_task killed_task <<<"$end"
  wait_for "$job Completed" 60 job_phase_is "$job" Completed
  wait_for "$job $killed_task cleaned up" 30 task_gone "$job" "$killed_task"
  expect_eq "$job $done_task pods Succeeded" "$(count "$job" Succeeded "$done_task")" \
    "$(field "vcjob/$job" "{.spec.tasks[?(@.name==\"$done_task\")].replicas}")"
done
outcome mpi "Completed: MPI_HOST on the launcher, ssh Secret at /root/.ssh, svc hosts; workers cleaned up"
outcome pytorch "Completed: MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK on every pod; workers cleaned up"
outcome tf "Completed: TF_CONFIG per role and index; ps cleaned up"
outcome tf-mnist "Completed: VK_TASK_INDEX, /etc/volcano ps.host and worker.host; ps cleaned up"
wait_for "mindspore Completed" 60 job_phase_is mindspore Completed
expect_eq "mindspore pods Succeeded" "$(count mindspore Succeeded)" 8
outcome mindspore "Completed: 8 of 8 Succeeded; VC_TASK_INDEX, ssh Secret, svc ConfigMap"

# Still held, after all of the above.
expect_eq "web: Running, Pending" "$(web_count Running) $(web_count Pending)" "2 2"
outcome web "Deployment: 2 of 4 Running, 2 Pending: $web_msg"
expect_eq "over-parent pods, phase" "$(count over-parent) $(job_phase over-parent)" "0 Pending"
outcome over-parent "Pending, no pods: $(pg_message "$over_pg" | sed -n 1p)"
# A Job in a non-leaf queue (last: it would hold part of the parent's
# capability if it ran): Volcano's webhook refuses it.
apply hier-parent.yaml
wait_for "to-parent Failed" 30 job_phase_is to-parent Failed
to_parent_msg=$(field vcjob/to-parent '{.status.state.message}')
expect_contains "to-parent message" "$to_parent_msg" "spec.queue"
outcome to-parent "Failed (InvalidSpec): $to_parent_msg"

# --- summary -------------------------------------------------------------------------------
e2e_log "corpus: ${#OUTCOMES[@]} cases"
printf '  %s\n' "${OUTCOMES[@]}"
k delete jobs.batch.volcano.sh --all --wait=false >/dev/null
k delete deployment web --ignore-not-found --wait=false >/dev/null
