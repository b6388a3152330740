# Shared by the gang scenarios (gang_*.sh; sourced, not run). Each scenario
# brings up a cluster of its own from GANG_CLUSTER_FILE (set before sourcing),
# runs one workload through the stock kube-scheduler and then through muster
# on it, one after the other, and compares the two with gang_report.py.
#
#   GANG_CLUSTER_FILE=$E2E_REPO/e2e/clusters/gpu-32x8.yaml   (before sourcing)
#   source gang_lib.sh          # cluster up (no extender yet), then lib.sh
#   gang_side stock             # namespace <scenario>-stock + recorder
#   gang_submit burst --scheduler default-scheduler
#   gang_wait 60 20             # until done, stalled 20 s, or 60 s
#   gang_end_side               # stop the recorder, delete the namespace
#   gang_start_muster           # cluster.sh extender start
#   ... the same with side muster and --scheduler volcano ...
#   gang_report --check ...     # side-by-side figures; fails on muster's checks
#
# The cluster's processes are niced like the caller (the host is shared). Its
# state directory is MUSTER_GANG_DIR (default: a fresh temporary one); it goes
# down on exit - and, through cluster.sh's guard, also when this script is
# killed. Everything worth keeping (each side's pod log, the figures, the
# cluster's logs including the extender's) is copied to MUSTER_GANG_OUT
# (default ${TMPDIR:-/tmp}/muster-gang/<scenario>) before the cluster goes down.
# Environment: MUSTER_BIN (the muster binary; default build/cmd/muster),
# GANG_SIDES (default "stock muster"; "muster" skips the stock run; "upstream"
# adds Kubernetes' own gang scheduling - gang_upstream_side - which needs
# Kubernetes >= 1.37 and MUSTER_GENERIC_WORKLOAD=1, with which cluster.sh
# turns the feature gate GenericWorkload
# on; "kueue" adds Kueue - gang_kueue_side - and brings the cluster up with
# `--peer kueue`: `make bench-peers` runs "stock upstream kueue muster").
# GANG_UP_ARGS (an array, set before sourcing): more `cluster.sh up` flags,
# e.g. (--replicas 2 --muster "$MUSTER_BIN") (failover.sh).
# GANG_MAX_SECONDS (set before sourcing): a hard cap - the scenario is sent
# TERM (exit 124, cleaned up by the EXIT trap; the cluster's guard takes it
# down even if that fails) once it runs that long (failover.sh, chaos.sh).
# shellcheck shell=bash

GANG_SCENARIO=$(basename "$0" .sh)
GANG_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GANG_CLUSTER=$GANG_LIB_DIR/../cluster/cluster.sh
GANG_PY=$GANG_LIB_DIR/gang_report.py
MUSTER_BIN=${MUSTER_BIN:-$GANG_LIB_DIR/../../build/cmd/muster}
GANG_OUT=${MUSTER_GANG_OUT:-${TMPDIR:-/tmp}/muster-gang/$GANG_SCENARIO}
GANG_SIDES=${GANG_SIDES:-stock muster}
GANG_SIDE=
GANG_RECORDER=
GANG_OWN_CLUSTER=0

gang_say() { printf '[%s] %s\n' "$GANG_SCENARIO" "$*"; }

GANG_WATCHDOG=
if [[ -n ${GANG_MAX_SECONDS:-} ]]; then
  trap 'exit 124' TERM
  (
    for ((i = 0; i < GANG_MAX_SECONDS; i++)); do
      sleep 1
      kill -0 $$ 2>/dev/null || exit 0
    done
    gang_say "FAIL: still running after ${GANG_MAX_SECONDS}s: stopping" >&2
    kill -TERM $$
  ) &
  GANG_WATCHDOG=$!
fi
[[ -n ${GANG_CLUSTER_FILE:-} ]] || {
  gang_say "FAIL: set GANG_CLUSTER_FILE before sourcing gang_lib.sh"
  exit 1
}
[[ " $GANG_SIDES " != *" muster"* || -x $MUSTER_BIN ]] || {
  gang_say "FAIL: muster binary '$MUSTER_BIN' not found (set MUSTER_BIN)"
  exit 1
}
rm -rf -- "$GANG_OUT"
mkdir -p "$GANG_OUT"

# --- the cluster ------------------------------------------------------------------
if [[ -n ${MUSTER_GANG_DIR:-} ]]; then
  GANG_DIR=$MUSTER_GANG_DIR
else
  GANG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/muster-$GANG_SCENARIO.XXXXXX")
fi
gang_say "cluster $(basename "$GANG_CLUSTER_FILE") in $GANG_DIR (log: $GANG_OUT/cluster-up.log)"
GANG_OWN_CLUSTER=1
[[ " $GANG_SIDES " != *" kueue "* ]] || GANG_UP_ARGS+=(--peer kueue)
if ! "$GANG_CLUSTER" up --cluster "$GANG_CLUSTER_FILE" --dir "$GANG_DIR" --watch-pid $$ \
  ${GANG_UP_ARGS[@]+"${GANG_UP_ARGS[@]}"} >/dev/null 2>"$GANG_OUT/cluster-up.log"; then
  tail -n 20 "$GANG_OUT/cluster-up.log"
  gang_say "FAIL: the cluster did not come up"
  exit 1
fi
gang_say "$(grep -o 'cluster accepts pods.*' "$GANG_OUT/cluster-up.log")"
unset MUSTER_E2E_KUBECONFIG
export MUSTER_E2E_DIR=$GANG_DIR
# shellcheck source=e2e/scenarios/lib.sh
source "$GANG_LIB_DIR/lib.sh"
# shellcheck source=e2e/scenarios/kueue_lib.sh
source "$GANG_LIB_DIR/kueue_lib.sh"
# shellcheck disable=SC2034 # lib.sh's logs name the scenario, not this file
E2E_NAME=$GANG_SCENARIO
EXT_URL=http://127.0.0.1:$MUSTER_EXTENDER_PORT

gang_exit() {
  local rc=$?
  trap - EXIT
  [[ -z $GANG_WATCHDOG ]] || kill "$GANG_WATCHDOG" 2>/dev/null || true
  gang_stop_recorder
  if ((rc != 0)) && [[ -n ${E2E_NS:-} ]]; then
    e2e_log "state at failure (namespace $E2E_NS):"
    k get pods -o wide 2>&1 | sed -n 1,30p | sed 's/^/  /' || true
    k get podgroups.scheduling.volcano.sh 2>&1 | sed -n 1,20p | sed 's/^/  /' || true
    k get events --sort-by=.lastTimestamp 2>&1 | tail -n 15 | sed 's/^/  /' || true
  fi
  if ((GANG_OWN_CLUSTER)); then
    cp -r "$GANG_DIR/logs" "$GANG_OUT/cluster-logs" 2>/dev/null || true
    "$GANG_CLUSTER" down --dir "$GANG_DIR" 2>"$GANG_OUT/cluster-down.log" ||
      e2e_log "cluster down left something behind: $(tail -n 3 "$GANG_OUT/cluster-down.log")"
  fi
  e2e_log "artifacts (pod logs, figures, cluster logs): $GANG_OUT"
  if ((rc == 0)); then e2e_log "PASS"; else e2e_log "FAILED (exit $rc)"; fi
  exit "$rc"
}
trap gang_exit EXIT

# gang_has_side SIDE: SIDE is in GANG_SIDES.
gang_has_side() { [[ " $GANG_SIDES " == *" $1 "* ]]; }

# --- one side's run ------------------------------------------------------------------
# gang_side SIDE [LABEL=VALUE...]: a fresh namespace (E2E_NS, created with
# those labels) and a recorder (gang_report.py record --rendezvous) writing
# $GANG_OUT/SIDE.jsonl.
gang_side() {
  GANG_SIDE=$1
  shift
  E2E_NS=$GANG_SCENARIO-$GANG_SIDE
  E2E_NS=${E2E_NS//_/-}
  gang_create_namespace "$E2E_NS" "$@" || fail "cannot create namespace $E2E_NS"
  wait_for "ServiceAccount $E2E_NS/default" 60 k get serviceaccount default -o name
  local base=$GANG_OUT/$GANG_SIDE
  rm -f "$base.ready" "$base.stop" "$base.status"
  python3 "$GANG_PY" record "$MUSTER_E2E_DIR" "$E2E_NS" "$base.jsonl" --rendezvous \
    --ready "$base.ready" --stop "$base.stop" --status "$base.status" 2>"$base.recorder.log" &
  GANG_RECORDER=$!
  wait_for "the $GANG_SIDE recorder's watches" 60 test -e "$base.ready"
  e2e_log "side $GANG_SIDE: namespace $E2E_NS, pod log $base.jsonl"
}

# gang_create_namespace NAME [LABEL=VALUE...]: the namespace, created with
# those labels (a webhook's namespaceSelector sees them from its first pod).
gang_create_namespace() {
  local name=$1 json
  shift
  json=$("$MUSTER_KUBECTL" create namespace "$name" --dry-run=client -o json) || return 1
  if (($#)); then json=$("$MUSTER_KUBECTL" label --local -f - -o json "$@" <<<"$json") || return 1; fi
  "$MUSTER_KUBECTL" create -f - <<<"$json" >/dev/null
}

# gang_mark NAME: a timestamped mark in the side's pod log.
gang_mark() { printf '{"kind": "mark", "name": "%s", "t": %s}\n' "$1" "$EPOCHREALTIME" >>"$GANG_OUT/$GANG_SIDE.jsonl"; }

# gang_submit KIND [gang_report.py workload options]: create the workload.
gang_submit() {
  local file=$GANG_OUT/$GANG_SIDE-workload.json
  python3 "$GANG_PY" workload "$@" >"$file" || fail "gang_report.py workload $* failed"
  gang_mark "submit-$1"
  python3 "$GANG_PY" submit "$MUSTER_E2E_DIR" "$E2E_NS" "$file" || fail "creating the $1 workload failed"
  e2e_log "submitted: $(grep -o '"kind": "Pod"' "$file" | grep -c .) pods, $(grep -o '"kind": "PodGroup"' "$file" |
    grep -c .) PodGroups ($*)"
}

# gang_stock_side CAP IDLE WORKLOAD...: when the stock side is asked for, its
# whole run: the workload through the default scheduler, waited for at most
# CAP s (IDLE s without progress), its outcome logged.
gang_stock_side() {
  local cap=$1 idle=$2
  shift 2
  gang_has_side stock || return 0
  gang_side stock
  gang_submit "$@" --scheduler default-scheduler
  e2e_log "stock: $(gang_wait "$cap" "$idle")"
  gang_end_side
}

# gang_require_generic_workload: fail unless the cluster serves Kubernetes'
# own gang API (side upstream needs it).
gang_require_generic_workload() {
  [[ ${MUSTER_GENERIC_WORKLOAD:-0} == 1 ]] ||
    fail "side upstream needs the feature gate GenericWorkload (Kubernetes >= 1.37, MUSTER_GENERIC_WORKLOAD=1)"
}

# gang_upstream_side CAP IDLE WORKLOAD...: when the upstream side is asked
# for, its whole run, as gang_stock_side's: the same workload with every gang
# a scheduling.k8s.io/v1beta1 Workload + PodGroup (gang_report.py workload
# --upstream) for the stock kube-scheduler, whose GangScheduling plugin and
# pod-group cycle (GenericWorkload) place it. Before gang_start_muster: muster
# never sees these pods.
gang_upstream_side() {
  local cap=$1 idle=$2
  shift 2
  gang_has_side upstream || return 0
  gang_require_generic_workload
  gang_side upstream
  gang_submit "$@" --scheduler default-scheduler --upstream
  e2e_log "upstream: $(gang_wait "$cap" "$idle")"
  gang_end_side
}

# gang_kueue_side CAP IDLE WORKLOAD...: when the kueue side is asked for, its
# whole run, as gang_stock_side's: the same workload with every gang a Kueue
# pod group (gang_report.py workload --kueue) in a namespace Kueue manages
# (kueue-peer=true), queued in a ClusterQueue holding the whole cluster
# (fixtures/kueue-gangs.yaml); Kueue admits and ungates, the stock
# kube-scheduler places. Kueue's Workload objects are saved
# ($GANG_OUT/kueue-workloads.json) and counted. Before gang_start_muster.
gang_kueue_side() {
  local cap=$1 idle=$2
  shift 2
  gang_has_side kueue || return 0
  gang_kueue_begin "$GANG_LIB_DIR/fixtures/kueue-gangs.yaml" gangs
  gang_submit "$@" --scheduler default-scheduler --kueue gangs
  gang_kueue_managed
  e2e_log "kueue: $(gang_wait "$cap" "$idle")"
  gang_kueue_end
}

# gang_kueue_begin [FIXTURE QUEUE] / gang_kueue_end: the kueue side's
# namespace and queues (gang_kueue_queues) / its Workloads saved and
# summarised, then gang_end_side.
gang_kueue_begin() {
  gang_side kueue kueue-peer=true
  gang_kueue_queues "$@"
}
gang_kueue_end() {
  e2e_log "kueue: $(kueue_save_workloads "$E2E_NS" "$GANG_OUT/kueue-workloads.json")"
  gang_end_side gang_kueue_release
}
# gang_kueue_release: the side's deleted pods let go (kueue_release).
gang_kueue_release() { e2e_log "kueue: $(kueue_release "$MUSTER_E2E_DIR" "$E2E_NS")"; }

# gang_kueue_queues [FIXTURE QUEUE]: Kueue's objects of FIXTURE (default
# fixtures/kueue-gangs.yaml: a ClusterQueue and LocalQueue, both gangs), its
# quota the nodes' allocatable, and the side's LocalQueue QUEUE active before
# any pod is created.
gang_kueue_queues() {
  local fixture=${1:-$GANG_LIB_DIR/fixtures/kueue-gangs.yaml} queue=${2:-gangs} quota
  quota=$(kueue_apply_queues "$fixture" "$E2E_NS") || fail "creating Kueue's queues ($(basename "$fixture")) failed"
  wait_for "Kueue's LocalQueue $queue active" 60 kueue_queues_active "$E2E_NS" "$queue"
  e2e_log "kueue: $(basename "$fixture") ($quota), LocalQueue $E2E_NS/$queue"
}

# gang_kueue_managed: every pod of the side went through Kueue's webhook
# (gated or already admitted) - none reached the scheduler around it.
gang_kueue_managed() {
  local unmanaged
  unmanaged=$(k get pods -l 'kueue.x-k8s.io/managed!=true' -o name) || fail "cannot list the kueue side's pods"
  [[ -z $unmanaged ]] || fail "pods not managed by Kueue (its webhook missed them): $(wc -l <<<"$unmanaged")"
}

# gang_status: the recorder's status (JSON; see gang_report.py Recorder.status).
gang_status() { cat "$GANG_OUT/$GANG_SIDE.status" 2>/dev/null || echo '{}'; }
json_get() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], 0))' "$1" "$2"; }

# gang_extender_check: on a muster side, fail at once (with the end of its
# log) if the extender is not running - unless a scenario stopped it on
# purpose (GANG_EXTENDER_DOWN=1).
GANG_EXTENDER_DOWN=0
gang_extender_check() {
  [[ $GANG_SIDE == muster* ]] && ((!GANG_EXTENDER_DOWN)) || return 0
  local st
  st=$("$GANG_CLUSTER" status --dir "$MUSTER_E2E_DIR" 2>/dev/null || true)
  grep -qE '^ +extender +pid [0-9]+ +alive' <<<"$st" && return 0
  sleep 0.5 # an abort message comes after the process is gone
  e2e_log "the muster extender is not running; end of $MUSTER_E2E_DIR/logs/extender.log:"
  tail -n 15 "$MUSTER_E2E_DIR/logs/extender.log" | sed 's/^/  /' >&2
  fail "the muster extender died"
}

# gang_wait_for DESC TIMEOUT CMD...: wait_for, failing early if the extender dies.
gang_wait_for() {
  local desc=$1 timeout=$2 deadline
  shift 2
  deadline=$((${EPOCHREALTIME%[.,]*} + timeout))
  until "$@" >/dev/null 2>&1; do
    gang_extender_check
    ((${EPOCHREALTIME%[.,]*} < deadline)) || fail "timed out after ${timeout}s waiting for: $desc"
    sleep 0.25
  done
}

# gang_wait CAP STALL: wait until every pod with work has finished (prints
# "done"), or nothing has changed for STALL s with no pod running its work
# (a deadlock: "stalled"), or CAP s have passed ("capped"). Fails if the
# extender dies meanwhile.
gang_wait() {
  local cap=$1 stall=$2 deadline s
  deadline=$((${EPOCHREALTIME%[.,]*} + cap))
  while :; do
    gang_extender_check >&2
    s=$(gang_status)
    if python3 -c '
import json, sys
s, stall = json.loads(sys.argv[1]), float(sys.argv[2])
done = s.get("workPods", 0) > 0 and s["workDone"] == s["workPods"]
stalled = s.get("pending", 0) > 0 and s["active"] == 0 and s["sinceChange"] >= stall
sys.exit(0 if done or stalled else 1)' "$s" "$stall"; then
      if [[ $(json_get "$s" workDone) == "$(json_get "$s" workPods)" ]]; then echo "done"; else echo stalled; fi
      return 0
    fi
    if ((${EPOCHREALTIME%[.,]*} >= deadline)); then
      echo capped
      return 0
    fi
    sleep 0.5
  done
}

gang_stop_recorder() {
  [[ -n $GANG_RECORDER ]] || return 0
  touch "$GANG_OUT/$GANG_SIDE.stop"
  local _
  for _ in $(seq 1 40); do
    kill -0 "$GANG_RECORDER" 2>/dev/null || break
    sleep 0.1
  done
  kill "$GANG_RECORDER" 2>/dev/null || true
  wait "$GANG_RECORDER" 2>/dev/null || true
  GANG_RECORDER=
}

# gang_end_side [CMD...]: stop the recorder, delete the side's pods (freeing
# their GPUs for the next side) and its namespace. CMD runs once the pods are
# marked for deletion, before waiting for them to go (a peer's finalizers).
gang_end_side() {
  gang_stop_recorder
  e2e_log "side $GANG_SIDE: $(gang_status)"
  rm -f "$GANG_OUT/$GANG_SIDE".{ready,stop,status}
  k delete pods --all --grace-period=0 --wait=false >/dev/null 2>&1 || true
  (($# == 0)) || "$@"
  wait_for "the $GANG_SIDE pods gone" 120 gang_no_pods
  "$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=false >/dev/null 2>&1 || true
  E2E_NS=
}
gang_no_pods() { k_none pods; }

# gang_start_muster: start the extender (the stock side ran without it, so
# it never saw the stock pods' PodGroups).
gang_start_muster() {
  "$GANG_CLUSTER" extender start --dir "$MUSTER_E2E_DIR" --muster "$MUSTER_BIN" 2>>"$GANG_OUT/cluster-up.log" ||
    fail "the muster extender did not start (see $GANG_OUT/cluster-up.log)"
  wait_for "muster extender /readyz" 60 curl -fsS --max-time 2 "$EXT_URL/readyz"
  e2e_log "muster extender ready on $EXT_URL ($MUSTER_BIN)"
}

# gang_metrics: muster's gang metrics (saved and printed).
gang_metrics() {
  curl -fsS --max-time 5 "$EXT_URL/metrics" >"$GANG_OUT/muster-metrics.txt" || {
    e2e_log "cannot read $EXT_URL/metrics"
    return 0
  }
  curl -fsS --max-time 5 "$EXT_URL/debug/state" >"$GANG_OUT/muster-debug-state.json" 2>/dev/null || true
  e2e_log "muster gang (and queue) metrics:"
  grep -E '^muster_(gang|queue)' "$GANG_OUT/muster-metrics.txt" | grep -vE '_bucket\{' | sed 's/^/  /' || true
}

# gang_report ARGS...: the side-by-side figures of every recorded side
# (saved as $GANG_OUT/figures.{txt,json}); fails when a check fails on muster.
# GANG_REPORT_PY names another analysis with the same `report` interface
# (queue_report.py); default gang_report.py.
gang_report() {
  local sides=() side rc=0
  for side in $GANG_SIDES; do
    [[ -f $GANG_OUT/$side.jsonl ]] && sides+=(--side "$side=$GANG_OUT/$side.jsonl")
  done
  python3 "${GANG_REPORT_PY:-$GANG_PY}" report "${sides[@]}" --json "$GANG_OUT/figures.json" "$@" >"$GANG_OUT/figures.txt" || rc=$?
  sed 's/^/  /' "$GANG_OUT/figures.txt"
  ((rc == 0)) || fail "checks failed on the muster side (figures above; $GANG_OUT)"
}
