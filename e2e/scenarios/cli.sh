#!/usr/bin/env bash
# The `muster job` and `muster queue` command line (issue 23) on the shared
# cluster (16 fake nodes x 8 GPUs, muster's extender and reconciler running).
# Every verb's output is compared to a golden in fixtures/cli/ once the
# volatile parts are masked (mask below: the namespace and queue names,
# creation dates, ages - "(5m ago)" and a last AGE column, never a quantity
# like cpu 200m -, generated name suffixes; runs of spaces are squeezed as
# masked cells change column widths). MUSTER_UPDATE_GOLDENS=1 rewrites them.
#  1. queue create; job run from flags and from a YAML manifest (-f).
#  2. job list: plain, -o wide, -q QUEUE, -A, -o json|yaml; job view.
#  3. job suspend of the running Job -> Aborted, pods gone; job resume ->
#     Running again with its pods back (through Volcano's Command objects).
#  4. queue list (-o wide with and without muster's /debug/state), queue get,
#     queue close / open (Commands), the refused delete of `default`.
#  5. Exit codes: unknown job 3, no cluster 5, a ServiceAccount token without
#     RBAC 4, wrong flag 2; --help 0. The same token bound to copies of
#     manifests/rbac's muster-cli and muster-cli-queues may list and view.
#  6. `kubectl muster job list` after `cmake --install` of this build.
#  7. job delete, queue delete.
# Needs MUSTER_BIN (the muster binary) and MUSTER_BUILD_DIR (its build dir).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[[ -x ${MUSTER_BIN:-} ]] || fail "MUSTER_BIN is not the muster binary: '${MUSTER_BIN:-}'"
[[ -d ${MUSTER_BUILD_DIR:-} ]] || fail "MUSTER_BUILD_DIR is no build dir: '${MUSTER_BUILD_DIR:-}'"
GOLDEN_DIR=$E2E_FIXTURES/cli

new_namespace
E2E_TMP=$(mktemp -d)
QUEUE=e2e-cli-$(printf '%04x' $RANDOM)
# Queues are cluster-scoped: not deleted with the namespace.
e2e_before_cleanup() {
  "$MUSTER_KUBECTL" delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  # And so are the copies of the users' roles (section 5).
  "$MUSTER_KUBECTL" delete clusterrolebinding "$E2E_NS-nobody-queues" --ignore-not-found \
    >/dev/null 2>&1 || true
  "$MUSTER_KUBECTL" delete clusterrole "$E2E_NS-muster-cli" "$E2E_NS-muster-cli-queues" \
    --ignore-not-found >/dev/null 2>&1 || true
}

# m ARGS...: muster in the scenario's namespace.
m() { "$MUSTER_BIN" "$@"; }

# mask: the volatile parts of muster's output made stable.
mask() {
  sed -E \
    -e "s/$E2E_NS/NS/g" -e "s/$QUEUE/QUEUE/g" \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/TIME/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}/DATE/g' \
    -e 's/-(abortjob|resumejob|openqueue|closequeue)-[a-z0-9]{5}\b/-\1-XXXXX/g' \
    -e 's/\(([0-9]+[smhdy])+ ago\)/(AGE ago)/g' -e 's/ ([0-9]+[smhdy])+$/ AGE/' \
    -e 's/ +/ /g' -e 's/ $//'
}

# golden NAME TEXT: TEXT, masked, equals fixtures/cli/NAME.txt.
golden() {
  local want=$GOLDEN_DIR/$1.txt got
  got=$(mask <<<"$2")
  if [[ -n ${MUSTER_UPDATE_GOLDENS:-} ]]; then
    mkdir -p "$GOLDEN_DIR"
    printf '%s\n' "$got" >"$want"
  fi
  [[ -f $want ]] || fail "no golden $want (MUSTER_UPDATE_GOLDENS=1 writes it)"
  if ! diff -u "$want" <(printf '%s\n' "$got") >"$E2E_TMP/diff"; then
    cat "$E2E_TMP/diff"
    fail "$1: output differs from its golden (above)"
  fi
  pass "$1 matches its golden"
}

# expect_exit DESC CODE CMD...: CMD exits CODE; its stderr is in $E2E_TMP/err.
expect_exit() {
  local desc=$1 want=$2 rc=0
  shift 2
  "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
  ((rc == want)) || fail "$desc: exit $rc, want $want; stderr: $(cat "$E2E_TMP/err")"
  pass "$desc: exit $want"
}

job_phase_is() { [[ $(field "vcjob/$1" '{.status.state.phase}') == "$2" ]]; }
running_pods() {
  k get pods -l "volcano.sh/job-name=$1" --no-headers \
    -o 'custom-columns=P:.status.phase,D:.metadata.deletionTimestamp' |
    awk '$1 == "Running" && $2 == "<none>"' | wc -l
}
running_is() { (($(running_pods "$1") == $2)); }
pods_gone() { k_none pods -l "volcano.sh/job-name=$1"; }
no_pods_counted() {
  [[ $(field "vcjob/$1" '{.status.pending}/{.status.running}/{.status.unknown}') =~ ^(0?/){2}0?$ ]]
}
queue_field() { "$MUSTER_KUBECTL" get queue "$QUEUE" -o "jsonpath=$1"; }
queue_state_is() { [[ $(queue_field '{.status.state}') == "$1" ]]; }
queue_gpus_are() { [[ $(queue_field '{.status.allocated.nvidia\.com/gpu}') == "$1" ]]; }
# The header and the lines of rows whose first cell is $1 (a shared cluster
# has other namespaces' jobs and other queues).
rows_of() { awk -v want="$1" 'NR == 1 || $1 == want'; }

# --- 1. create -------------------------------------------------------------------
out=$(m queue create "$QUEUE" -w 2 --capability cpu=8,nvidia.com/gpu=16)
golden queue_create "$out"
wait_for "queue $QUEUE Open" 30 queue_state_is Open

out=$(m job run sleeper -n "$E2E_NS" -q "$QUEUE" -i registry.invalid/fake:1 -r 2 -m 2 \
  -R cpu=100m,nvidia.com/gpu=1 -L nvidia.com/gpu=1)
golden job_run "$out"
cat >"$E2E_TMP/job.yaml" <<EOF
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: manifest
  labels: {volcano.sh/job-type: PyTorch}
spec:
  schedulerName: volcano
  minAvailable: 1
  tasks:
  - name: worker
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: registry.invalid/fake:1
          resources: {requests: {cpu: 100m}}
EOF
out=$(m job run -f "$E2E_TMP/job.yaml" -n "$E2E_NS")
golden job_run_manifest "$out"
wait_for "sleeper: 2 pods Running" 60 running_is sleeper 2
wait_for "sleeper Running" 30 job_phase_is sleeper Running
wait_for "manifest Running" 60 job_phase_is manifest Running

# --- 2. job list / view -----------------------------------------------------------
golden job_list "$(m job list -n "$E2E_NS")"
golden job_list_wide "$(m job list -n "$E2E_NS" -o wide)"
golden job_list_queue "$(m job list -n "$E2E_NS" -q "$QUEUE")"
golden job_list_all "$(m job list -A | rows_of "$E2E_NS")"
names=$(m job list -n "$E2E_NS" -o json |
  jq -r '.kind + ":" + ([.items[].metadata.name] | join(","))')
expect_eq "job list -o json" "$names" "List:manifest,sleeper"
yaml=$(m job list -n "$E2E_NS" -q "$QUEUE" -o yaml)
expect_contains "job list -o yaml" "$yaml" "kind: List"
expect_contains "job list -o yaml" "$yaml" "name: sleeper"
expect_exit "job list in an empty namespace" 0 m job list -n kube-public
expect_eq "empty list's message" "$(cat "$E2E_TMP/err")" \
  "No resources found in kube-public namespace."
view=$(m job view sleeper -n "$E2E_NS")
golden job_view "$(sed '/^Conditions:/,$d' <<<"$view")"
expect_contains "job view conditions" "$view" "Running"
uid=$(m job view -N sleeper -n "$E2E_NS" -o json | jq -r .metadata.uid)
expect_eq "job view -o json uid" "$uid" "$(field vcjob/sleeper '{.metadata.uid}')"

# --- 3. suspend / resume ------------------------------------------------------------
golden job_suspend "$(m job suspend sleeper -n "$E2E_NS")"
wait_for "sleeper Aborted" 60 job_phase_is sleeper Aborted
wait_for "sleeper's pods gone" 60 pods_gone sleeper
# The row's counters are the Job's status: wait for the write that saw the
# pods gone, not only for the phase.
wait_for "sleeper's status counts no pod" 30 no_pods_counted sleeper
golden job_list_suspended "$(m job list -n "$E2E_NS" -q "$QUEUE")"
expect_contains "job view Events after suspend" "$(m job view sleeper -n "$E2E_NS")" \
  "Start to execute command AbortJob"
golden job_resume "$(m job resume -N sleeper -n "$E2E_NS")"
wait_for "sleeper Running again" 90 job_phase_is sleeper Running
wait_for "sleeper: 2 pods Running again" 60 running_is sleeper 2
golden job_list_resumed "$(m job list -n "$E2E_NS" -q "$QUEUE")"

# --- 4. queues ----------------------------------------------------------------------
wait_for "queue $QUEUE holds 2 GPUs" 30 queue_gpus_are 2
golden queue_list "$(m queue list | rows_of "$QUEUE")"
# Without a reachable muster (this cluster runs it as processes, not pods of
# muster-system) DESERVED is "-" with one note, and the list still succeeds.
expect_exit "queue list -o wide without muster" 0 m queue list -o wide --muster-port 1
golden queue_list_wide_nomuster "$(rows_of "$QUEUE" <"$E2E_TMP/out")"
expect_contains "the note" "$(cat "$E2E_TMP/err")" "deserved shares not shown (-)"
url=http://127.0.0.1:$MUSTER_EXTENDER_PORT
wide=$(m queue list -o wide --muster-url "$url" | rows_of "$QUEUE" | tail -n 1)
expect_contains "queue list -o wide DESERVED from muster" "$(awk '{print $NF}' <<<"$wide")" \
  "nvidia.com/gpu="
golden queue_get "$(m queue get "$QUEUE" --muster-port 1 2>/dev/null)"
deserved=$(m queue get "$QUEUE" --muster-url "$url" | awk '$1 == "nvidia.com/gpu" {print $3}')
[[ $deserved =~ ^[0-9.]+$ ]] || fail "queue get: deserved GPUs from muster: '$deserved'"
pass "queue get: $QUEUE deserves $deserved GPUs"
golden queue_close "$(m queue close "$QUEUE" -n "$E2E_NS")"
wait_for "queue $QUEUE Closing" 30 queue_state_is Closing
golden queue_open "$(m queue open -N "$QUEUE" -n "$E2E_NS")"
wait_for "queue $QUEUE Open again" 30 queue_state_is Open
expect_exit "queue delete default" 1 m queue delete default
golden queue_delete_default "$(cat "$E2E_TMP/err")"

# --- 5. exit codes ------------------------------------------------------------------
expect_exit "job view of an unknown job" 3 m job view nope -n "$E2E_NS"
golden job_view_unknown "$(cat "$E2E_TMP/err")"
expect_exit "queue get of an unknown queue" 3 m queue get "$QUEUE-nope"
expect_exit "no cluster" 5 env KUBECONFIG=/nonexistent "$MUSTER_BIN" job list
golden no_cluster "$(cat "$E2E_TMP/err")"
expect_exit "wrong flag" 2 m job list --frob
golden wrong_flag "$(cat "$E2E_TMP/err")"
expect_exit "job --help" 0 m job --help
expect_exit "queue create --help" 0 m queue create --help
k create serviceaccount nobody >/dev/null
token=$(k create token nobody --duration=10m)
"$MUSTER_KUBECTL" config view --minify --raw --flatten >"$E2E_TMP/nobody.kubeconfig"
KUBECONFIG=$E2E_TMP/nobody.kubeconfig "$MUSTER_KUBECTL" config set-credentials nobody \
  --token="$token" >/dev/null
KUBECONFIG=$E2E_TMP/nobody.kubeconfig "$MUSTER_KUBECTL" config set-context --current \
  --user=nobody >/dev/null
expect_exit "a token without RBAC" 4 env KUBECONFIG="$E2E_TMP/nobody.kubeconfig" \
  "$MUSTER_BIN" job list -n "$E2E_NS"
golden forbidden "$(cat "$E2E_TMP/err")"
# The roles an admin binds to users (manifests/rbac/cli-user-roles.yaml), as
# copies named after this scenario (the install's own may exist): with them
# the same token may list and view jobs here and list the queues.
python3 - "$E2E_REPO/manifests/rbac/cli-user-roles.yaml" "$E2E_NS" >"$E2E_TMP/roles.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ClusterRole"]
for d in docs:
    d["metadata"]["name"] = sys.argv[2] + "-" + d["metadata"]["name"]
print(yaml.safe_dump_all(docs))
PY
"$MUSTER_KUBECTL" create -f "$E2E_TMP/roles.yaml" >/dev/null
k create rolebinding nobody-cli --clusterrole="$E2E_NS-muster-cli" \
  --serviceaccount="$E2E_NS:nobody" >/dev/null
"$MUSTER_KUBECTL" create clusterrolebinding "$E2E_NS-nobody-queues" \
  --clusterrole="$E2E_NS-muster-cli-queues" --serviceaccount="$E2E_NS:nobody" >/dev/null
as_nobody() { env KUBECONFIG="$E2E_TMP/nobody.kubeconfig" "$MUSTER_BIN" "$@"; }
wait_for "muster-cli lets the token list jobs" 30 as_nobody job list -n "$E2E_NS"
expect_exit "job view with muster-cli" 0 as_nobody job view sleeper -n "$E2E_NS"
wait_for "muster-cli-queues lets the token list queues" 30 as_nobody queue list

# --- 6. kubectl muster --------------------------------------------------------------
cmake --install "$MUSTER_BUILD_DIR" --prefix "$E2E_TMP/prefix" >/dev/null
[[ -L $E2E_TMP/prefix/bin/kubectl-muster ]] ||
  fail "no bin/kubectl-muster link after cmake --install"
out=$(PATH="$E2E_TMP/prefix/bin:$PATH" "$MUSTER_KUBECTL" muster job list -n "$E2E_NS")
golden kubectl_muster_job_list "$out"

# --- 7. delete ----------------------------------------------------------------------
golden job_delete "$(m job delete sleeper -n "$E2E_NS")"
golden job_delete_manifest "$(m job delete manifest -n "$E2E_NS")"
expect_exit "job delete of a deleted job" 3 m job delete sleeper -n "$E2E_NS"
golden queue_delete "$(m queue delete "$QUEUE")"
