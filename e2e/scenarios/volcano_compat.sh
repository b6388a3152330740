#!/usr/bin/env bash
# Volcano compatibility (issue 19) on the real control plane, muster as the
# scheduler, on the shared gpu-16 cluster (16 nodes x 8 GPUs):
#  1. Per-task minimums vs the job minimum: an elastic Job larger than the
#     cluster (20 workers x 8 GPUs, minAvailable 1; its PodGroup carries
#     minTaskMember {worker: 20} as Volcano's controller writes it) runs the
#     16 that fit and keeps 4 pending; when room frees, a waiting worker runs.
#     Volcano enforces minTaskMember only when minAvailable >= their sum
#     (pkg/scheduler/api/job_info.go).
#  1b. Two such elastic Jobs share the cluster by DRF: 16 workers each.
#  2. A 3-stage dependsOn chain with minAvailable 1 (examples/volcano/
#     depends-on-chain.yaml, the demo's): each stage's pods are created only
#     once the stage before runs, all three run, and the job is Completed when
#     the last stage completes.
#  3. The ray plugin: head and workers run together; the head's ports and
#     command, the workers' address, Service <job>-head-svc (Volcano's
#     pkg/controllers/job/plugins/distributed-framework/ray/ray.go).
#  4. Job updates (Volcano's pkg/webhooks/admission/jobs/validate/
#     admit_job.go validateJobUpdate): the API server refuses a change of a
#     task's image and of the queue with the CRD's CEL message; scaling a
#     running svc Job's workers from 2 to 3 creates and runs the third pod,
#     raises the PodGroup's minTaskMember, and the svc plugin rewrites the
#     hosts ConfigMap (VC_WORKER_NUM 3, three hosts; Volcano's
#     pkg/controllers/job/plugins/svc/svc.go OnJobUpdate).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FIX=$E2E_FIXTURES/compat
EXAMPLES=$E2E_REPO/examples/volcano

new_namespace

job_phase() { field "vcjob/$1" '{.status.state.phase}'; }
job_phase_is() { [[ $(job_phase "$1") == "$2" ]]; }
# pods_of JOB [TASK]: "name phase node" of the job's (task's) pods not being
# deleted (node "<none>" while unbound).
pods_of() {
  local selector="volcano.sh/job-name=$1"
  [[ -n ${2:-} ]] && selector+=",volcano.sh/task-spec=$2"
  k get pods -l "$selector" --no-headers -o \
    'custom-columns=N:.metadata.name,P:.status.phase,NODE:.spec.nodeName,D:.metadata.deletionTimestamp' |
    awk '$4 == "<none>" {print $1, $2, $3}'
}
count_running() { pods_of "$@" | awk '$2 == "Running"' | wc -l; }
count_pods() { pods_of "$@" | wc -l; }
running_is() { [[ $(count_running "$1") -eq $2 ]]; }
task_running_is() { [[ $(count_running "$1" "$2") -eq $3 ]]; }
pods_are() { [[ $(count_pods "$1") -eq $2 ]]; }

# --- 1. elastic Job larger than the cluster ---------------------------------
k apply -f "$FIX/elastic.yaml" >/dev/null
wait_for "elastic: 20 pods exist" 60 pods_are elastic 20
wait_for "elastic: 16 workers Running" 90 running_is elastic 16
wait_for "elastic phase Running" 30 job_phase_is elastic Running
pg=$(k get podgroups.scheduling.volcano.sh -o name | grep '/elastic-' | sed -n 1p)
expect_eq "elastic PodGroup minTaskMember (as Volcano's controller writes it)" \
  "$(field "$pg" '{.spec.minMember}/{.spec.minTaskMember.worker}')" "1/20"
sleep 3 # the gang controller's passes keep the 4 others waiting
expect_eq "elastic: still 16 Running, 4 unbound" \
  "$(count_running elastic) $(pods_of elastic | awk '$3 == "<none>"' | wc -l)" "16 4"
msg=$(field "$pg" '{.status.conditions[*].message}')
[[ $msg != *"allocatable is 0"* ]] || fail "PodGroup message claims an empty node: $msg"
pass "PodGroup message: ${msg:-<none>}"
# Room frees: one running worker is deleted (OnFailure restarts are the
# kubelet's; a deleted pod is re-created by the Job controller), so one of the
# waiting workers or the re-created pod takes its node: 16 run again.
victim=$(pods_of elastic | awk '$2 == "Running" {print $1; exit}')
victim_uid=$(field "pod/$victim" '{.metadata.uid}')
k delete pod "$victim" --wait=false >/dev/null
replaced() { [[ $(field "pod/$victim" '{.metadata.uid}' 2>/dev/null) != "$victim_uid" ]]; }
wait_for "$victim gone" 30 replaced
wait_for "elastic: 16 Running again after a pod is deleted" 90 running_is elastic 16
expect_eq "elastic: after $victim was deleted, Running and unbound" \
  "$(count_running elastic) $(pods_of elastic | awk '$3 == "<none>"' | wc -l)" "16 4"
# Its pods go with the garbage collector, which may take up to its 30 s
# resource resync on a cluster whose CRDs are seconds old.
k delete vcjob elastic --wait=false >/dev/null
wait_for "elastic pods gone" 90 pods_are elastic 0

# --- 1b. elastic neighbours share by DRF ----------------------------------------
# 15 plain pods hold 15 nodes; two elastic Jobs (fixtures/compat/
# neighbours.yaml) each fit their minimum in the 8 GPUs left, so both are
# admitted and get their 24 pods. Once the blockers go, the freed nodes are
# shared one worker per turn to the Job holding the least: 16 and 16.
blockers() {
  local i
  for i in $(seq 0 14); do
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: blocker-$i, labels: {app: blocker}}
spec:
  schedulerName: volcano
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.invalid/fake:1
    resources: {requests: {cpu: "1"}, limits: {nvidia.com/gpu: "8"}}
---
EOF
  done
}
blockers | k apply -f - >/dev/null
blockers_running() { [[ $(k get pods -l app=blocker --no-headers | grep -c Running) -eq 15 ]]; }
wait_for "15 blockers Running" 60 blockers_running
for job in left right; do sed "s/NAME/$job/" "$FIX/neighbours.yaml" | k apply -f - >/dev/null; done
wait_for "left: 24 pods exist" 60 pods_are left 24
wait_for "right: 24 pods exist" 60 pods_are right 24
e2e_log "before the blockers go: left $(count_running left), right $(count_running right) Running"
k delete pods -l app=blocker --wait=false >/dev/null
both_at_16() { [[ "$(count_running left) $(count_running right)" == "16 16" ]]; }
wait_for "left and right: 16 workers Running each (DRF)" 90 both_at_16
sleep 3 # the gang controller's passes in between change nothing
expect_eq "left, right Running" "$(count_running left) $(count_running right)" "16 16"
k delete vcjob left right --wait=false >/dev/null
wait_for "left pods gone" 90 pods_are left 0
wait_for "right pods gone" 90 pods_are right 0

# --- 2. dependsOn chain, stage after stage -------------------------------------
# A watch started before the Job sees every pod change in resourceVersion
# order: a stage's first pod must come after the stage before it ran.
watch_log=$(mktemp)
k get pods -l volcano.sh/job-name=depends-on-chain --watch --output-watch-events --no-headers -o \
  'custom-columns=E:.type,T:.object.metadata.labels.volcano\.sh/task-spec,N:.object.metadata.name,P:.object.status.phase' \
  >"$watch_log" 2>/dev/null &
watch_pid=$!
sleep 1 # the watch is established before the Job exists
k apply -f "$EXAMPLES/depends-on-chain.yaml" >/dev/null
wait_for "chain: client Running" 90 task_running_is depends-on-chain client 1
sleep 1
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
# Lines: EVENT TASK POD PHASE. running[task] = pods of it last seen Running.
order=$(awk '
  $1 == "DELETED" { next }
  !($3 in seen) {
    seen[$3] = 1
    if ($2 == "server" && running["db"] < 1) { print "violation: " $3 " created before db ran"; exit }
    if ($2 == "client" && running["server"] < 2) { print "violation: " $3 " created before 2 servers ran"; exit }
    print "created " $3 " (db running " running["db"] + 0 ", servers running " running["server"] + 0 ")"
  }
  { was = ($3 in up) ? up[$3] : 0; now = ($4 == "Running"); up[$3] = now; running[$2] += now - was }
' "$watch_log")
rm -f "$watch_log"
e2e_log "chain watch: ${order//$'\n'/; }"
[[ $order != *violation* ]] || fail "dependsOn order: $order"
expect_eq "chain: pods created stage after stage" "$(grep -c '^created' <<<"$order")" 4
wait_for "chain Completed when the client completes" 60 job_phase_is depends-on-chain Completed
wait_for "chain: db and servers cleaned up" 60 running_is depends-on-chain 0
expect_eq "client Succeeded" "$(field pod/depends-on-chain-client-0 '{.status.phase}')" Succeeded

# --- 3. ray plugin -------------------------------------------------------------
k apply -f "$FIX/ray.yaml" >/dev/null
wait_for "ray-cluster: head and 2 workers Running" 60 running_is ray-cluster 3
expect_eq "head-svc selector and ports" \
  "$(field service/ray-cluster-head-svc '{.spec.selector.volcano\.sh/task-spec} {range .spec.ports[*]}{.name}:{.port}>{.targetPort},{end}')" \
  "head gcs:6379>gcs,dashboard:8265>dashboard,client-server:10001>client-server,"
expect_eq "headless Service of svc" "$(field service/ray-cluster '{.spec.clusterIP}')" None
expect_eq "head command" "$(field pod/ray-cluster-head-0 '{.spec.containers[0].command[2]}')" \
  "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 --ray-client-server-port=10001"
expect_eq "head ports" "$(field pod/ray-cluster-head-0 '{range .spec.containers[0].ports[*]}{.name}:{.containerPort},{end}')" \
  "gcs:6379,dashboard:8265,client-server:10001,"
expect_eq "worker command" "$(field pod/ray-cluster-worker-1 '{.spec.containers[0].command[2]}')" \
  "ray start --block --address=ray-cluster-head-0.ray-cluster:6379"
wait_for "ray-cluster phase Running" 30 job_phase_is ray-cluster Running

# --- 4. Job updates -------------------------------------------------------------
frozen="may not change after creation; only minAvailable, priorityClassName, tasks[*].replicas and tasks[*].minAvailable may"
k apply -f "$FIX/svc-scale.yaml" >/dev/null
wait_for "svc-scale: 2 workers Running" 60 running_is svc-scale 2
wait_for "svc-scale phase Running" 30 job_phase_is svc-scale Running
cm_field() { field configmap/svc-scale-svc "{.data.$1}"; }
cm_num_is() { [[ $(cm_field VC_WORKER_NUM) == "$1" ]]; }
expect_eq "hosts ConfigMap before the scale" "$(cm_field VC_WORKER_NUM)" 2
# (a) forbidden updates: refused by the API server, the Job unchanged.
if out=$(k patch vcjob svc-scale --type=json \
  -p '[{"op":"replace","path":"/spec/tasks/0/template/spec/containers/0/image","value":"registry.invalid/fake:2"}]' 2>&1); then
  fail "a change of the task's image was accepted"
fi
# The field, then the rule's message: Kubernetes 1.34 puts the value's
# CEL type between them ('Invalid value: "array": ...'), 1.37 does not.
expect_contains "image change refused on spec.tasks" "$out" "spec.tasks: Invalid value: "
expect_contains "image change refused" "$out" "tasks[0].template: $frozen"
if out=$(k patch vcjob svc-scale --type=merge -p '{"spec":{"queue":"other"}}' 2>&1); then
  fail "a change of the queue was accepted"
fi
expect_contains "queue change refused on spec.queue" "$out" "spec.queue: Invalid value: "
expect_contains "queue change refused" "$out" ": $frozen"
expect_eq "the image as created" "$(field vcjob/svc-scale '{.spec.tasks[0].template.spec.containers[0].image}')" \
  registry.invalid/fake:1
# (b) a scale: the third worker, the PodGroup, the hosts ConfigMap.
k patch vcjob svc-scale --type=json -p '[{"op":"replace","path":"/spec/tasks/0/replicas","value":3}]' >/dev/null ||
  fail "scaling svc-scale's workers to 3 was refused"
wait_for "svc-scale: 3 workers Running after the scale" 60 running_is svc-scale 3
wait_for "hosts ConfigMap rewritten: VC_WORKER_NUM 3" 30 cm_num_is 3
expect_eq "VC_WORKER_HOSTS" "$(cm_field VC_WORKER_HOSTS)" \
  "svc-scale-worker-0.svc-scale,svc-scale-worker-1.svc-scale,svc-scale-worker-2.svc-scale"
expect_eq "worker.host: a line per worker" "$(cm_field 'worker\.host' | grep -c '^svc-scale-worker-')" 3
pg=$(k get podgroups.scheduling.volcano.sh -o name | grep '/svc-scale-' | sed -n 1p)
expect_eq "svc-scale PodGroup minMember/minTaskMember after the scale" \
  "$(field "$pg" '{.spec.minMember}/{.spec.minTaskMember.worker}')" "2/3"
expect_eq "svc-scale status: no refusal" "$(field vcjob/svc-scale '{.status.state.phase}/{.status.state.reason}')" \
  "Running/"
