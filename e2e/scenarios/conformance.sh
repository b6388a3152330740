#!/usr/bin/env bash
# Conformance (issue 19; Volcano's pkg/scheduler/plugins/conformance/
# conformance.go, muster's gang/conformance.h) on the shared gpu-16 cluster
# (16 nodes x 8 GPUs), muster as the scheduler: muster never evicts a pod of
# priority class system-cluster-critical / system-node-critical (or in
# kube-system: the unit tests; this scenario's namespace is its own), nor
# any gang that has such a member.
#  1. A low-priority gang of 16 whole-node pods fills the cluster; one member
#     is system-cluster-critical. A 2-pod gang of higher priority then needs
#     two nodes: the full gang keeps all 16 pods running (same UIDs, no
#     deletion, no GangPreempted Event), the newcomer binds nothing and its
#     PodGroup says preemption spares the gang.
#  2. The same without the critical member: the whole low gang is evicted and
#     the newcomer runs.
# A gang's priority is its highest member's, so the critical member lifts
# the gang in case 1 to 2000000000: the newcomer's first member is
# system-node-critical (2000001000) so that priority alone would let it
# preempt, and only conformance stops it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

new_namespace
e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete priorityclass e2e-conformance-low e2e-conformance-high \
    --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

"$MUSTER_KUBECTL" apply -f - >/dev/null <<'YAML' || fail "cannot create the PriorityClasses"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-conformance-low}
value: 100
description: the gangs that fill the cluster in the conformance scenario
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-conformance-high}
value: 1000
description: the gang that needs room in the conformance scenario
YAML

# gang_yaml CASE NAME PODS CLASS FIRST_CLASS: PodGroup NAME (minMember PODS)
# and its PODS pods of 8 GPUs (a whole node each), gated as muster's
# reconciler creates them, of priority class CLASS but the first FIRST_CLASS.
gang_yaml() {
  local case=$1 name=$2 pods=$3 class=$4 first=$5 i
  cat <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $name, labels: {e2e.muster.io/case: $case}}
spec: {minMember: $pods, queue: default, priorityClassName: $class}
YAML
  for ((i = 0; i < pods; i++)); do
    cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $name-$i
  labels: {e2e.muster.io/case: $case, e2e.muster.io/gang: $name}
  annotations: {scheduling.k8s.io/group-name: $name}
spec:
  schedulerName: volcano
  priorityClassName: $( ((i == 0)) && echo "$first" || echo "$class")
  schedulingGates: [{name: muster.io/gang}]
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.invalid/muster/fake:1
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {nvidia.com/gpu: "8"}
YAML
  done
}
submit() { gang_yaml "$@" | k apply -f - >/dev/null || fail "cannot create gang $2 ($1)"; }

# gang_pods GANG: "name phase node uid" of its pods not being deleted (node
# "<none>" while unbound).
gang_pods() {
  k get pods -l "e2e.muster.io/gang=$1" --no-headers -o \
    'custom-columns=N:.metadata.name,P:.status.phase,NODE:.spec.nodeName,U:.metadata.uid,D:.metadata.deletionTimestamp' |
    awk '$5 == "<none>" {print $1, $2, $3, $4}'
}
count_running() { gang_pods "$1" | awk '$2 == "Running"' | wc -l; }
count_bound() { gang_pods "$1" | awk '$3 != "<none>"' | wc -l; }
count_pods() { gang_pods "$1" | wc -l; }
running_is() { (($(count_running "$1") == $2)); }
pods_are() { (($(count_pods "$1") == $2)); }
pg_message() { field "podgroups.scheduling.volcano.sh/$1" '{.status.conditions[*].message}'; }
pg_message_has() { [[ $(pg_message "$1") == *"$2"* ]]; }
events_of() { # PODGROUP REASON: how many such Events it has
  k get events --field-selector "involvedObject.name=$1,reason=$2" -o name | wc -l
}
case_gone() { k_none pods -l "e2e.muster.io/case=$1"; }
end_case() {
  k delete podgroups.scheduling.volcano.sh,pods -l "e2e.muster.io/case=$1" --wait=false >/dev/null
  wait_for "the pods of case $1 gone" 60 case_gone "$1"
}

# --- 1. a gang with a system-cluster-critical member is never a victim ---------
submit critical held 16 e2e-conformance-low system-cluster-critical
expect_eq "held-0 priority (its class's)" "$(field pod/held-0 '{.spec.priority}')" 2000000000
wait_for "held: 16 pods Running" 90 running_is held 16
before=$(gang_pods held | awk '{print $1, $4}' | sort)
submit critical urgent 2 e2e-conformance-high system-node-critical
expect_eq "urgent-0 priority (above held's)" "$(field pod/urgent-0 '{.spec.priority}')" 2000001000
wait_for "urgent's PodGroup to say preemption spares held" 30 \
  pg_message_has urgent "preemption spares 1 gang with kube-system or system-critical pods"
pass "urgent waits: $(pg_message urgent)"
sleep 5 # several gang passes: a preemption would have started by now
expect_eq "held: Running pods, unchanged" "$(gang_pods held | awk '$2 == "Running" {print $1, $4}' | sort)" "$before"
expect_eq "held: GangPreempted Events" "$(events_of held GangPreempted)" 0
expect_eq "urgent: GangPreempting Events" "$(events_of urgent GangPreempting)" 0
expect_eq "urgent: pods bound" "$(count_bound urgent)" 0
end_case critical

# --- 2. the same gang without it is preempted whole ---------------------------
submit plain plain 16 e2e-conformance-low e2e-conformance-low
wait_for "plain: 16 pods Running" 90 running_is plain 16
submit plain urgent 2 e2e-conformance-high system-node-critical
wait_for "plain evicted whole" 60 pods_are plain 0
wait_for "urgent: 2 pods Running" 60 running_is urgent 2
expect_eq "plain: GangPreempted Events" "$(events_of plain GangPreempted)" 1
[[ $(pg_message urgent) != *"preemption spares"* ]] || fail "urgent's PodGroup: $(pg_message urgent)"
pass "urgent ran after preempting plain"
end_case plain
