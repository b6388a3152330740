#!/usr/bin/env bash
# teardown: a cluster never outlives its caller.
#  (a) `up` interrupted (SIGTERM) once kube-apiserver is running: it stops
#      everything it started and removes its directory;
#  (b) `up --watch-pid P`: when P exits, the guard takes the cluster down.
# Runs its own two clusters (in a temporary directory), not the fixture's.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=gone.sh
source "$HERE/gone.sh"
CLUSTER=$HERE/../cluster/cluster.sh
T0=${EPOCHREALTIME//[.,]/}
say() {
  local ms=$(((${EPOCHREALTIME//[.,]/} - T0) / 1000))
  printf '[teardown %3d.%03ds] %s\n' $((ms / 1000)) $((ms % 1000)) "$*"
}
fail() {
  say "FAIL: $*"
  exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/muster-teardown.XXXXXX")
holder=
cleanup() {
  local rc=$? d
  [[ -n $holder ]] && kill "$holder" 2>/dev/null
  for d in "$work/a" "$work/b"; do
    [[ -f $d/state ]] && "$CLUSTER" down --dir "$d" >/dev/null 2>&1
  done
  rm -rf -- "$work"
  exit "$rc"
}
trap cleanup EXIT
# wait_until DESC TIMEOUT CMD...
wait_until() {
  local desc=$1 deadline=$((${EPOCHREALTIME//[.,]/} + $2 * 1000000))
  shift 2
  until "$@"; do
    ((${EPOCHREALTIME//[.,]/} < deadline)) || fail "timed out waiting for $desc"
    sleep 0.2
  done
}

# wait_until_quiet TIMEOUT CMD...: like wait_until, but returns 1 on timeout.
wait_until_quiet() {
  local deadline=$((${EPOCHREALTIME//[.,]/} + $1 * 1000000))
  shift
  until "$@"; do
    ((${EPOCHREALTIME//[.,]/} < deadline)) || return 1
    sleep 0.2
  done
}

# --- (a) interrupted up -----------------------------------------------------------------
"$CLUSTER" up --dir "$work/a" --no-build >"$work/a.out" 2>&1 &
up_pid=$!
apiserver_recorded() { grep -qs '^proc kube-apiserver ' "$work/a/state"; }
wait_until "up to start kube-apiserver" 60 apiserver_recorded
state=$(<"$work/a/state")
kill -TERM "$up_pid"
rc=0
wait "$up_pid" || rc=$?
((rc == 143)) || {
  cat "$work/a.out"
  fail "(a) interrupted up exited $rc, want 143"
}
grep -q 'tearing down what was started' "$work/a.out" || fail "(a) up did not report its teardown"
if ! out=$(verify_gone "$state" "$work/a"); then
  printf '%s\n' "$out"
  fail "(a) interrupted up left things behind"
fi
say "ok: (a) SIGTERM during up: $(grep -c '^proc ' <<<"$state") started processes stopped, directory removed"

# --- (b) the guard --------------------------------------------------------------------------
tail -f /dev/null &
holder=$!
"$CLUSTER" up --dir "$work/b" --no-build --watch-pid "$holder" >"$work/b.out" 2>&1 ||
  {
    cat "$work/b.out"
    fail "(b) up failed"
  }
state=$(<"$work/b/state")
grep -q '^proc guard ' <<<"$state" || fail "(b) no guard recorded"
say "(b) cluster up; ending the watched process $holder"
kill "$holder"
wait "$holder" 2>/dev/null || true
holder=
dir_gone() { [[ ! -e $work/b ]]; }
wait_until "the guard to take the cluster down" 40 dir_gone
# The guard itself exits right after removing the directory.
all_gone() { verify_gone "$state" "$work/b" >/dev/null; }
if ! wait_until_quiet 10 all_gone; then
  verify_gone "$state" "$work/b" || true
  fail "(b) the guard left things behind"
fi
say "ok: (b) watched process exited: guard stopped $(grep -c '^proc ' <<<"$state") processes, directory removed"
say PASS
