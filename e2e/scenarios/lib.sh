# Shared helpers for the e2e scenarios (sourced, not run). A scenario is a
# black box: it talks to the cluster only through kubectl and YAML fixtures.
#
# Which cluster:
#   MUSTER_E2E_KUBECONFIG set  -> that kubeconfig (e.g. a kind cluster, e2e/kind/);
#                                 kubectl from MUSTER_KUBECTL or PATH
#   otherwise                  -> the local cluster of e2e/cluster/cluster.sh in
#                                 MUSTER_E2E_DIR (ctest sets it), else the current one;
#                                 kubectl is the one the builder made
# Every scenario works in its own namespace (new_namespace), deleted on exit.
# shellcheck shell=bash

E2E_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_REPO=$(cd "$E2E_LIB_DIR/../.." && pwd)
# shellcheck disable=SC2034 # used by the scenarios
E2E_FIXTURES=$E2E_LIB_DIR/fixtures
E2E_NAME=$(basename "${BASH_SOURCE[1]:-scenario}" .sh)
E2E_T0=${EPOCHREALTIME//[.,]/}

e2e_log() {
  local ms=$(((${EPOCHREALTIME//[.,]/} - E2E_T0) / 1000))
  printf '[%s %3d.%03ds] %s\n' "$E2E_NAME" $((ms / 1000)) $((ms % 1000)) "$*"
}
fail() {
  e2e_log "FAIL: $*"
  exit 1
}
pass() { e2e_log "ok: $*"; }

if [[ -n ${MUSTER_E2E_KUBECONFIG:-} ]]; then
  export KUBECONFIG=$MUSTER_E2E_KUBECONFIG
  MUSTER_KUBECTL=${MUSTER_KUBECTL:-kubectl}
else
  e2e_env=$("$E2E_REPO/e2e/cluster/cluster.sh" env ${MUSTER_E2E_DIR:+--dir "$MUSTER_E2E_DIR"}) ||
    fail "no e2e cluster (start one: e2e/cluster/cluster.sh up)"
  eval "$e2e_env"
fi
command -v "$MUSTER_KUBECTL" >/dev/null || fail "kubectl '$MUSTER_KUBECTL' not found"

# k ARGS...: kubectl against the e2e cluster, in the scenario's namespace once
# new_namespace ran.
k() { "$MUSTER_KUBECTL" --request-timeout=20s ${E2E_NS:+--namespace "$E2E_NS"} "$@"; }

# wait_for DESC TIMEOUT_S CMD...: poll CMD (every 0.25 s) until it succeeds.
wait_for() {
  local desc=$1 timeout=$2 out='' deadline
  shift 2
  deadline=$((${EPOCHREALTIME//[.,]/} + timeout * 1000000))
  until out=$("$@" 2>&1); do
    if ((${EPOCHREALTIME//[.,]/} > deadline)); then
      e2e_log "last check output: ${out:0:400}"
      fail "timed out after ${timeout}s waiting for: $desc"
    fi
    sleep 0.25
  done
}

# k_none ARGS...: `k get ARGS -o name` answered and listed nothing (for
# wait_for). A failed call is "not yet": its empty output must never read as
# "none left".
k_none() {
  local names
  names=$(k get "$@" -o name) || return 1
  [[ -z $names ]]
}

# field KIND/NAME JSONPATH: one field of an object in the namespace.
field() { k get "$1" -o "jsonpath=$2"; }

# expect_eq DESC GOT WANT
expect_eq() {
  [[ $2 == "$3" ]] || fail "$1: got '$2', want '$3'"
  pass "$1 = '$3'"
}
# expect_contains DESC HAYSTACK NEEDLE
expect_contains() {
  [[ $2 == *"$3"* ]] || fail "$1: '$2' does not contain '$3'"
  pass "$1 contains '$3'"
}

# nonempty CMD...: CMD succeeds and prints something (for wait_for).
nonempty() {
  local out
  out=$("$@") && [[ -n $out ]]
}

# phase_is POD PHASE (for wait_for)
phase_is() { [[ $(field "pod/$1" '{.status.phase}') == "$2" ]]; }

# scheduled_by POD: the component that reported the pod's Scheduled event.
scheduled_by() {
  k get events --field-selector "involvedObject.name=$1,reason=Scheduled" \
    -o 'jsonpath={.items[0].reportingComponent}{.items[0].source.component}'
}
# failed_scheduling POD: the messages of the pod's FailedScheduling events.
failed_scheduling() {
  k get events --field-selector "involvedObject.name=$1,reason=FailedScheduling" \
    -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}'
}

# No namespace of a scenario exists (for wait_for) - nor of kube_client_e2e
# (kube/client/client_e2e.cc: client-e2e-<pid>), whose pods hold GPUs of the
# shared cluster while its namespace goes (a burst right after it counted
# them as taken, and bound more pods once they went).
# Gone only when the list was read: a failed kubectl call is "not yet", never
# "gone" (as a bare `! kubectl ... | grep -q` would have it).
earlier_namespaces_gone() {
  local names
  names=$("$MUSTER_KUBECTL" get namespaces -o name) || return 1
  ! grep -qE '^namespace/(client-)?e2e-' <<<"$names"
}

# new_namespace: a fresh namespace for this scenario (E2E_NS), with its
# default ServiceAccount (pods are rejected until kcm made it), once earlier
# scenarios' namespaces are gone; deleted on exit.
new_namespace() {
  # Scenarios share a cluster and delete their namespace without waiting: an
  # earlier one's pods may still hold GPUs. Start once they are gone.
  wait_for "earlier scenarios' namespaces gone" 120 earlier_namespaces_gone
  E2E_NS=e2e-${E2E_NAME//_/-}-$(printf '%04x%04x' $RANDOM $RANDOM)
  "$MUSTER_KUBECTL" create namespace "$E2E_NS" >/dev/null || fail "cannot create namespace $E2E_NS"
  trap e2e_cleanup EXIT
  wait_for "ServiceAccount $E2E_NS/default" 60 k get serviceaccount default -o name
  e2e_log "namespace $E2E_NS"
}

# The reconciler's and the extender's log lines naming the scenario's
# namespace, and their warnings (the logs go with the cluster: a failure in
# CI shows them here or nowhere).
e2e_log_lines_of_namespace() {
  local dir=${MUSTER_E2E_DIR:-} name
  [[ -n $dir && -d $dir/logs ]] || return 0
  for name in reconciler extender; do
    [[ -f $dir/logs/$name.log ]] || continue
    e2e_log "logs/$name.log, lines naming $E2E_NS or warning:"
    grep -e "$E2E_NS" -e '\[warning\]' -e '\[error\]' "$dir/logs/$name.log" | tail -n 30 |
      sed 's/^/  /' || true
  done
}

# A scenario may define e2e_before_cleanup (e.g. to restart a component it
# stopped); it runs first, and cannot change the scenario's exit status.
e2e_cleanup() {
  local rc=$?
  if declare -F e2e_before_cleanup >/dev/null; then e2e_before_cleanup || true; fi
  if [[ -n ${E2E_NS:-} ]]; then
    if ((rc != 0)); then
      e2e_log "state at failure:"
      k get pods -o wide 2>&1 | sed 's/^/  /' || true
      k get events --sort-by=.lastTimestamp 2>&1 | tail -n 40 | sed 's/^/  /' || true
      e2e_log_lines_of_namespace
    fi
    "$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=false >/dev/null 2>&1 || true
  fi
  # A scenario's scratch directory (E2E_TMP, when it made one).
  [[ -z ${E2E_TMP:-} ]] || rm -rf -- "$E2E_TMP"
  if ((rc == 0)); then e2e_log "PASS"; else e2e_log "FAILED (exit $rc)"; fi
  exit "$rc"
}
