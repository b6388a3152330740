#!/usr/bin/env bash
# CRDs: our Volcano Job / PodGroup / Queue definitions (manifests/crds/) accept
# Volcano YAMLs unchanged (kubectl's default strict field validation would
# reject unknown fields), apply defaults, expose the short names and print
# columns, and have the right scope and subresources.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

new_namespace
queue_fixture=$E2E_FIXTURES/queue.yaml
cleanup_queue() { "$MUSTER_KUBECTL" delete -f "$queue_fixture" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
trap 'rc=$?; cleanup_queue; (exit $rc); e2e_cleanup' EXIT
# The checks below write a Job's status by hand: the muster reconciler (on a
# local cluster) is stopped meanwhile, or it would run the Job and own its
# status. e2e_cleanup starts it again.
if [[ -z ${MUSTER_E2E_KUBECONFIG:-} ]]; then
  cluster=$E2E_REPO/e2e/cluster/cluster.sh
  "$cluster" reconciler stop ${MUSTER_E2E_DIR:+--dir "$MUSTER_E2E_DIR"} >/dev/null 2>&1 ||
    fail "could not stop the reconciler"
  e2e_before_cleanup() {
    "$cluster" reconciler start ${MUSTER_E2E_DIR:+--dir "$MUSTER_E2E_DIR"} >/dev/null 2>&1
  }
fi

# --- the default queues the cluster creates ---------------------------------------
for q in default root; do
  expect_eq "queue $q state" "$(field "queue/$q" '{.status.state}')" Open
  expect_eq "queue $q weight" "$(field "queue/$q" '{.spec.weight}')" 1
done
expect_eq "queue default parent" "$(field queue/default '{.spec.parent}')" root

# --- Volcano Job: a TensorFlow ps/worker job with policies, unchanged ---------------
k apply -f "$E2E_FIXTURES/volcano-job.yaml" >/dev/null || fail "the Volcano example Job did not apply"
pass "fixtures/volcano-job.yaml applied"
expect_eq "tf-job minAvailable" "$(field job.batch.volcano.sh/tf-job '{.spec.minAvailable}')" 3
expect_eq "tf-job tasks" "$(field vcjob/tf-job '{.spec.tasks[*].name}')" "ps worker"
expect_eq "tf-job worker replicas" "$(field vj/tf-job '{.spec.tasks[?(@.name=="worker")].replicas}')" 2
expect_eq "tf-job policy timeout" "$(field vcjob/tf-job '{.spec.policies[1].timeout}')" 10m
expect_eq "tf-job task policy" "$(field vcjob/tf-job '{.spec.tasks[1].policies[0].action}')" CompleteJob
expect_eq "tf-job plugins" "$(field vcjob/tf-job '{.spec.plugins}')" '{"env":[],"svc":[]}'
expect_eq "tf-job template image (unknown fields kept)" \
  "$(field vcjob/tf-job '{.spec.tasks[0].template.spec.containers[0].image}')" img

k apply -f "$E2E_FIXTURES/volcano-job-minimal.yaml" >/dev/null || fail "volcano-job-minimal.yaml did not apply"
expect_eq "minimal: defaulted queue" "$(field vcjob/minimal '{.spec.queue}')" default
expect_eq "minimal: defaulted maxRetry" "$(field vcjob/minimal '{.spec.maxRetry}')" 3
expect_eq "minimal: template annotation kept" \
  "$(field vcjob/minimal '{.spec.tasks[0].template.metadata.annotations.muster\.io/run-seconds}')" 5

# Unknown fields are rejected (strict validation), so the schema is really checked.
if out=$(k apply -f - 2>&1 <<'EOF'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: 1
  notAField: true
  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}]
EOF
); then
  fail "a Job with an unknown spec field was accepted"
fi
expect_contains "unknown field rejected" "$out" notAField
if out=$(k apply -f - 2>&1 <<'EOF'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: -1
  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}]
EOF
); then
  fail "a Job with minAvailable -1 was accepted"
fi
expect_contains "minAvailable -1 rejected" "$out" "minAvailable"

# Job has a status subresource: status goes through /status, not the main resource.
k patch vcjob tf-job --subresource=status --type=merge \
  -p '{"status":{"state":{"phase":"Pending"},"minAvailable":3,"running":0}}' >/dev/null ||
  fail "patching Job status through /status failed"
expect_eq "tf-job status via /status" "$(field vcjob/tf-job '{.status.state.phase}')" Pending
k patch vcjob tf-job --type=merge -p '{"status":{"state":{"phase":"Running"}}}' >/dev/null
expect_eq "tf-job status ignored on the main resource" "$(field vcjob/tf-job '{.status.state.phase}')" Pending
# `sed -n 1p`, not `head -n1`: head exits after one line, kubectl then dies of
# SIGPIPE and pipefail fails the scenario (now and then).
columns=$(k get vcjob tf-job -o wide | sed -n 1p)
for c in NAME STATUS MINAVAILABLE RUNNINGS AGE QUEUE; do expect_contains "vcjob columns" "$columns" "$c"; done

# --- PodGroup ---------------------------------------------------------------------------
k apply -f "$E2E_FIXTURES/podgroup.yaml" >/dev/null || fail "podgroup.yaml did not apply"
expect_eq "pg minMember" "$(field podgroup/pg-train '{.spec.minMember}')" 4
expect_eq "pg minTaskMember" "$(field pg/pg-train '{.spec.minTaskMember.worker}')" 3
expect_eq "pg defaulted queue" "$(field pg/pg-train '{.spec.queue}')" default
expect_eq "pg minResources gpu (int kept)" "$(field podgroup-v1beta1/pg-train '{.spec.minResources.nvidia\.com/gpu}')" 16
# No status subresource: status is written through the main resource.
k patch pg pg-train --type=merge -p '{"status":{"phase":"Inqueue","running":0}}' >/dev/null ||
  fail "patching PodGroup status through the main resource failed"
expect_eq "pg status via main resource" "$(field pg/pg-train '{.status.phase}')" Inqueue
if k patch pg pg-train --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null 2>&1; then
  fail "PodGroup unexpectedly has a status subresource"
fi
pass "PodGroup has no status subresource"
columns=$(k get pg pg-train -o wide | sed -n 1p)
for c in STATUS MINMEMBER RUNNINGS AGE QUEUE; do expect_contains "pg columns" "$columns" "$c"; done

# --- Queue (cluster-scoped) -----------------------------------------------------------------
k apply -f "$queue_fixture" >/dev/null || fail "queue.yaml did not apply"
expect_eq "queue weight" "$(field q/e2e-research '{.spec.weight}')" 4
expect_eq "queue capability gpu" "$(field queue-v1beta1/e2e-research '{.spec.capability.nvidia\.com/gpu}')" 64
expect_eq "queue guarantee gpu" "$(field q/e2e-research '{.spec.guarantee.resource.nvidia\.com/gpu}')" 8
expect_eq "queue namespace (cluster-scoped)" "$(field q/e2e-research '{.metadata.namespace}')" ""
k patch q e2e-research --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null ||
  fail "patching Queue status through /status failed"
expect_eq "queue status via /status" "$(field q/e2e-research '{.status.state}')" Open
expect_contains "queue columns" "$(k get q e2e-research | sed -n 1p)" PARENT
if out=$(k apply -f - 2>&1 <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: e2e-weightless}
spec:
  reclaimable: true
EOF
); then
  expect_eq "queue default weight" "$(field q/e2e-weightless '{.spec.weight}')" 1
  "$MUSTER_KUBECTL" delete queue e2e-weightless --wait=false >/dev/null
else
  fail "a Queue without weight did not apply: $out"
fi

# --- discovery: scope and short names -------------------------------------------------------
resources=$("$MUSTER_KUBECTL" api-resources --api-group=batch.volcano.sh --no-headers)
expect_contains "jobs.batch.volcano.sh short names" "$resources" "vcjob,vj"
resources=$("$MUSTER_KUBECTL" api-resources --api-group=scheduling.volcano.sh --no-headers)
expect_contains "podgroups short names" "$resources" "pg,podgroup-v1beta1"
expect_contains "queues short names" "$resources" "q,queue-v1beta1"
[[ $(grep '^queues' <<<"$resources") == *false*Queue* ]] || fail "queues are not cluster-scoped: $resources"
pass "queues are cluster-scoped"
