#!/usr/bin/env bash
# `muster why` (issue 23) on the shared cluster (16 fake nodes x 8 GPUs,
# muster's extender and reconciler running): five situations, each screen
# checked to name the true reason and what would change it. muster's own view
# is read from the extender's port (--muster-url), as after a port-forward.
#  1. capacity: a Job of one 8-GPU pod per node fills every GPU; a second
#     gang of 2 x 8 GPUs waits (NotEnoughResources): the screen says no node
#     has 8 free and how many must free up on one node.
#  2. queue capability: a queue of capability nvidia.com/gpu 2 and a Job
#     asking 4 (QueueCapability): the screen shows the kubectl patch that
#     raises the capability to 4.
#  3. members: a PodGroup of minMember 3 and one pod of scheduler volcano
#     naming it (NotEnoughTasks): create the missing 2 pods; asked by pod too.
#  4. invalid: a Job the reconciler refuses (an mpi --master naming no task;
#     the CRD cannot tell): the field to fix, spec.plugins.mpi.
#  5. running: the filling Job: it runs, nothing to do.
# Then the exit codes (unknown name 3, bad kind 2, --help 0) and muster
# unreachable (exit 0, what the API alone shows plus a note).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

MUSTER_BIN=${MUSTER_BIN:-$E2E_REPO/build/cmd/muster}
[[ -x $MUSTER_BIN ]] || fail "muster binary '$MUSTER_BIN' not found (set MUSTER_BIN)"
[[ -n ${MUSTER_EXTENDER_PORT:-} ]] || fail "the cluster records no extender port"
MUSTER_URL=http://127.0.0.1:$MUSTER_EXTENDER_PORT

new_namespace
QUEUE=e2e-why-$(printf '%04x' $RANDOM)
# Queues are cluster-scoped: not deleted with the namespace.
e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# why TARGET [ARGS...]: `muster why` in the scenario's namespace.
why() { "$MUSTER_BIN" why "$@" -n "$E2E_NS" --muster-url "$MUSTER_URL"; }
# why_says TARGET TEXT: the screen names TEXT (for wait_for: muster's pass and
# the reconciler settle in their own time).
why_says() {
  local out
  out=$(why "$1") || return 1
  [[ $out == *"$2"* ]] || { echo "$out"; return 1; }
}
# screen TARGET: the screen, logged once.
screen() {
  local out
  out=$(why "$@") || fail "muster why $* exited $?"
  e2e_log "muster why $*:" >&2
  local line
  while IFS= read -r line; do printf '    | %s\n' "$line"; done <<<"$out" >&2
  printf '%s' "$out"
}
running_pods() { k get pods -l "volcano.sh/job-name=$1" --field-selector=status.phase=Running -o name | wc -l; }
running_is() { (($(running_pods "$1") == $2)); }

# gpu_job NAME REPLICAS GPUS QUEUE [PLUGINS_YAML]: a gang of REPLICAS pods of
# GPUS GPUs each (minAvailable REPLICAS), running until deleted.
gpu_job() {
  k apply -f - >/dev/null <<EOF
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: $1
spec:
  schedulerName: volcano
  queue: $4
  minAvailable: $2
  ${5:-}
  tasks:
  - name: worker
    replicas: $2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: registry.invalid/fake:1
          resources:
            requests: {cpu: 100m, nvidia.com/gpu: "$3"}
            limits: {nvidia.com/gpu: "$3"}
EOF
}

# --- 5 (set-up for 1): fill every 8-GPU node ------------------------------------------
nodes=$("$MUSTER_KUBECTL" get nodes -o 'jsonpath={range .items[*]}{.status.allocatable.nvidia\.com/gpu}{"\n"}{end}' | grep -cx 8) ||
  fail "no node with 8 GPUs"
gpu_job fill "$nodes" 8 default
"$MUSTER_KUBECTL" apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: $QUEUE
spec:
  weight: 1
  capability: {nvidia.com/gpu: 2}
EOF
wait_for "fill: $nodes pods Running" 60 running_is fill "$nodes"

# --- the waiting gangs ---------------------------------------------------------------
gpu_job big 2 8 default
gpu_job capped 2 2 "$QUEUE"
gpu_job bad 2 1 default 'plugins: {mpi: ["--master=launcher", "--worker=worker"]}'
k apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: trio
spec:
  minMember: 3
---
apiVersion: v1
kind: Pod
metadata:
  name: trio-0
  annotations: {scheduling.k8s.io/group-name: trio}
spec:
  schedulerName: volcano
  containers:
  - {name: main, image: registry.invalid/fake:1, resources: {requests: {cpu: 100m}}}
EOF

# 1. capacity
wait_for "why big: capacity" 60 why_says job/big "no node has that free"
out=$(screen job/big)
expect_contains "big verdict" "$(head -n1 <<<"$out")" \
  "job $E2E_NS/big is waiting: its gang of 2 needs 8 nvidia.com/gpu per member and no node has that free"
expect_contains "big reason" "$out" "NotEnoughResources"
expect_contains "big remedy" "$out" "8 nvidia.com/gpu more must free up on one node"
expect_contains "big largest free" "$out" "largest free: "
expect_contains "big order" "$out" "Order:     "
expect_contains "big needs" "$out" "2 x worker: cpu=100m, nvidia.com/gpu=8"
expect_contains "big bare name" "$(why big)" "job $E2E_NS/big is waiting"

# 2. queue capability
wait_for "why capped: capability" 60 why_says job/capped "is at its capability"
out=$(screen job/capped)
expect_contains "capped reason" "$out" "QueueCapability"
expect_contains "capped queue line" "$out" "capability nvidia.com/gpu=2"
expect_contains "capped remedy" "$out" \
  "kubectl patch queue $QUEUE --type merge -p '{\"spec\":{\"capability\":{\"nvidia.com/gpu\":\"4\"}}}'"

# 3. members
wait_for "why trio: members" 60 why_says pg/trio "waiting for members"
out=$(screen pg/trio)
expect_contains "trio verdict" "$out" "1 of the 3 pods its minMember asks exist"
expect_contains "trio reason" "$out" "NotEnoughTasks"
expect_contains "trio remedy" "$out" "create the missing 2 pods with schedulerName: volcano"
expect_contains "trio by pod" "$(why pod/trio-0)" "pod $E2E_NS/trio-0 is waiting for members"

# 4. invalid
wait_for "why bad: refused" 60 why_says job/bad "refused as invalid"
out=$(screen job/bad)
expect_contains "bad message" "$(head -n1 <<<"$out")" "spec.plugins.mpi"
expect_contains "bad remedy" "$out" "fix spec.plugins.mpi in the Job"

# 5. running
out=$(screen job/fill)
expect_contains "fill verdict" "$(head -n1 <<<"$out")" "job $E2E_NS/fill is running: $nodes of $nodes members scheduled"
expect_contains "fill remedy" "$out" "nothing: it runs"

# --- exit codes, muster unreachable ------------------------------------------------------
code=0
err=$(why job/nope 2>&1 >/dev/null) || code=$?
expect_eq "unknown job exit" "$code" 3
expect_contains "unknown job message" "$err" "muster why: no job named nope in namespace $E2E_NS"
code=0
err=$(why nope 2>&1 >/dev/null) || code=$?
expect_eq "unknown name exit" "$code" 3
expect_contains "unknown name message" "$err" "no job, podgroup or pod named nope"
code=0
why deploy/x >/dev/null 2>&1 || code=$?
expect_eq "bad kind exit" "$code" 2
expect_contains "--help" "$("$MUSTER_BIN" why --help)" "usage: muster why"
# Port 1: nothing listens; the screen falls back to the PodGroup's condition.
code=0
out=$("$MUSTER_BIN" why job/big -n "$E2E_NS" --muster-url http://127.0.0.1:1) || code=$?
expect_eq "unreachable exit" "$code" 0
expect_contains "unreachable reason" "$out" "NotEnoughResources"
expect_contains "unreachable note" "$out" "Note: muster's own view was not read"
