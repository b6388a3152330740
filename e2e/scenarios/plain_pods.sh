#!/usr/bin/env bash
# Plain pods of schedulerName volcano (issue 19) on the shared gpu-16 cluster,
# muster as the scheduler, side by side with the stock scheduler. Volcano
# gives each such pod (a Deployment's, an Argo step's) a PodGroup of one,
# named after its controller owner, in the queue of its
# scheduling.volcano.sh/queue-name annotation (pkg/controllers/podgroup/);
# muster keeps that PodGroup in its cache only (no API object, no write):
#  1. A Deployment of 4 x 1 cpu in a Queue of capability cpu 2: exactly 2 run;
#     the others wait with a FailedScheduling event naming the queue's
#     capability. The same Deployment under the stock scheduler runs all 4.
#     The pods admitted at once got no API write from muster (no
#     muster.io/reserved-node annotation).
#  2. A Deployment without the annotation is in queue "default": all run.
#     A pod naming a missing queue waits, with a message naming it.
#  3. The queue's capability is raised to 3: one waiting pod runs. Nothing in
#     kube-scheduler's view changed, so muster wakes it (the annotation).
#  4. Restart: the extender is killed and started again; scaled to 6 the
#     Deployment still runs 3 - what the queue holds is read from the pods.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[[ -n ${MUSTER_E2E_DIR:-} ]] || fail "plain_pods needs the local cluster (MUSTER_E2E_DIR)"
CLUSTER=$E2E_REPO/e2e/cluster/cluster.sh

new_namespace
QUEUE=pp-small-${E2E_NS##*-}

e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# queue NAME CPU: a Queue of capability cpu CPU.
queue() {
  k apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: $1
spec:
  weight: 1
  reclaimable: false
  capability:
    cpu: "$2"
EOF
}
# deployment NAME REPLICAS SCHEDULER QUEUE: REPLICAS pods of 1 cpu; QUEUE ""
# for no queue annotation.
deployment() {
  local annotations="{}"
  [[ -n $4 ]] && annotations="{scheduling.volcano.sh/queue-name: $4}"
  k apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
spec:
  replicas: $2
  selector:
    matchLabels: {app: $1}
  template:
    metadata:
      labels: {app: $1}
      annotations: $annotations
    spec:
      schedulerName: $3
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: registry.example/app:1
        resources:
          requests: {cpu: "1", memory: 64Mi}
EOF
}
# pods_of APP: "name phase node" of the app's pods not being deleted.
pods_of() {
  k get pods -l "app=$1" --no-headers -o \
    'custom-columns=N:.metadata.name,P:.status.phase,NODE:.spec.nodeName,D:.metadata.deletionTimestamp' |
    awk '$4 == "<none>" {print $1, $2, $3}'
}
count_running() { pods_of "$1" | awk '$2 == "Running"' | wc -l; }
count_unbound() { pods_of "$1" | awk '$3 == "<none>"' | wc -l; }
running_is() { [[ $(count_running "$1") -eq $2 ]]; }
pods_are() { [[ $(pods_of "$1" | wc -l) -eq $2 ]]; }
# held_by_queue APP: some unbound pod of APP has a FailedScheduling event
# naming the queue's capability.
held_by_queue() {
  local pod
  for pod in $(pods_of "$1" | awk '$3 == "<none>" {print $1}'); do
    grep -q "queue $QUEUE is at its capability" <<<"$(failed_scheduling "$pod")" && return 0
  done
  return 1
}
woken() { field "pod/$1" '{.metadata.annotations.muster\.io/reserved-node}'; }
# steady APP RUNNING UNBOUND: the app shows exactly that, now and 3 s later
# (the gang controller passes in between).
steady() {
  expect_eq "$1: running/unbound" "$(count_running "$1")/$(count_unbound "$1")" "$2/$3"
  sleep 3
  expect_eq "$1: running/unbound 3 s later" "$(count_running "$1")/$(count_unbound "$1")" "$2/$3"
}

# --- 1. capability holds a Deployment back; the stock scheduler has no queue -
queue "$QUEUE" 2
deployment capped 4 volcano "$QUEUE"
deployment stock 4 default-scheduler "$QUEUE"
wait_for "capped: 4 pods exist" 60 pods_are capped 4
wait_for "capped: 2 Running" 60 running_is capped 2
wait_for "stock: 4 Running (no queues in the stock scheduler)" 60 running_is stock 4
steady capped 2 2
wait_for "a waiting pod's FailedScheduling names the queue's capability" 30 held_by_queue capped
for pod in $(pods_of capped | awk '$2 == "Running" {print $1}'); do
  expect_eq "$pod admitted at once: no API write from muster" "$(woken "$pod")" ""
  expect_eq "$pod scheduled by the volcano profile" "$(scheduled_by "$pod")" "volcano"
done
k get events --field-selector reason=FailedScheduling -o 'jsonpath={.items[0].message}' |
  sed 's/^/  FailedScheduling: /'
echo

# --- 2. queue "default", and a queue that does not exist ---------------------
deployment free 3 volcano ""
deployment lost 1 volcano "pp-nope-${E2E_NS##*-}"
wait_for "free: 3 Running in queue default" 60 running_is free 3
lost_missing() {
  local pod
  pod=$(pods_of lost | awk '{print $1}')
  [[ -n $pod ]] && grep -q "does not exist" <<<"$(failed_scheduling "$pod")"
}
wait_for "lost: waits, its queue named missing" 30 lost_missing
expect_eq "lost: nothing bound" "$(count_running lost)" "0"

# --- 3. the capability grows: muster wakes a waiting pod ---------------------
queue "$QUEUE" 3
wait_for "capped: 3 Running once the capability is 3" 60 running_is capped 3
woken_pods=0
for pod in $(pods_of capped | awk '$2 == "Running" {print $1}'); do
  [[ -n $(woken "$pod") ]] && woken_pods=$((woken_pods + 1))
done
expect_eq "capped: pods muster woke (one annotation patch each)" "$woken_pods" "1"
steady capped 3 1

# --- 4. restart: what the queue holds comes back from the pods ---------------
"$CLUSTER" extender stop --signal KILL --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
"$CLUSTER" extender start --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
extender_ready() { curl -fsS "http://127.0.0.1:$MUSTER_EXTENDER_PORT/readyz" >/dev/null; }
wait_for "the extender ready again" 60 extender_ready
k scale deployment capped --replicas 6 >/dev/null
wait_for "capped: 6 pods exist" 60 pods_are capped 6
steady capped 3 3
wait_for "a new pod's FailedScheduling names the queue's capability" 30 held_by_queue capped
pass "plain pods: queue capability honoured, woken once, restart-safe"
