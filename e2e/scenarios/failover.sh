#!/usr/bin/env bash
# Failover of the volcano trio (issue 21): two replicas of kube-scheduler
# (profile volcano) + muster extender + muster reconciler on
# e2e/clusters/gpu-32x8.yaml (`cluster.sh up --replicas 2`: each replica with
# its own hostname, the schedulers electing on the Lease
# muster-e2e/volcano-scheduler, the extenders following it, the reconcilers
# electing on muster-e2e/muster-reconciler).
#
#   1. Failover: 50 gangs (1-8 pods x 1/2/4/8 GPUs, work 10-20 s, gated
#      by muster.io/gang; failover.py chunks, seed 7) in six chunks: 10 at the
#      start, then 8 right after each of 5 kills. Each kill is a SIGKILL of
#      the replica whose kube-scheduler holds the Lease (`cluster.sh replica
#      kill`), then that replica is started again (`replica start`: it comes
#      back as the standby) before the next kill, so leadership alternates.
#      Failover time per kill: from the kill to the first pod bound after it
#      (the new leader's first write; binds within 1 s of the kill are the
#      dead leader's requests in flight and do not count). p50 and p99 of the
#      five (p99 = the max): target <= 15 s, the scenario fails above 30 s.
#   2. Rolling restart: 24 more gangs (384 GPUs: more than the cluster, so
#      some wait); `replica restart` of the standby, then of the leader
#      (SIGTERM), while they run.
# Checked: a monitor polls twice a second the whole time (failover.py
# monitor): no node ever holds more GPUs (bound, unfinished pods) than it
# has, never two extenders (or reconcilers) leading at once; at the end of
# each phase every gang completed (all pods Succeeded), none below
# minMember, no pod lost, failed, deleted or duplicated (per gang, against
# the workload), and gang_report.py's overcommit / complete / no-partial /
# annotations / podgroup checks on the recorded pod logs.
#
#   e2e/scenarios/failover.sh [--muster BIN]      (make e2e-chaos; ~2.5 min)
# Environment: MUSTER_BIN (default build/cmd/muster), FAILOVER_KILLS (5),
# FAILOVER_MAX_SECONDS (hard cap of the whole run, default 480: then the
# scenario is stopped and fails). Figures and logs: MUSTER_GANG_OUT (default
# ${TMPDIR:-/tmp}/muster-gang/failover): failover.txt, figures-failover.json,
# monitor.jsonl, the pod logs, cluster-logs/ (every process's log, replica
# 1's as *-1.log, earlier runs of a restarted process as <name>.<n>.log).
set -euo pipefail
FO_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FO_T0=${EPOCHREALTIME/,/.}
while (($#)); do
  case $1 in
    --muster) MUSTER_BIN=${2:?--muster needs a value}; shift 2 ;;
    *) echo "usage: $0 [--muster BIN]" >&2; exit 2 ;;
  esac
done
MUSTER_BIN=${MUSTER_BIN:-$FO_HERE/../../build/cmd/muster}
[[ -x $MUSTER_BIN ]] || {
  echo "[failover] FAIL: muster binary '$MUSTER_BIN' not found (--muster BIN or MUSTER_BIN)" >&2
  exit 1
}
MUSTER_BIN=$(cd "$(dirname "$MUSTER_BIN")" && pwd)/$(basename "$MUSTER_BIN")
export MUSTER_BIN
FO_KILLS=${FAILOVER_KILLS:-5}
FO_MAX=${FAILOVER_MAX_SECONDS:-480}

# The hard cap (gang_lib.sh's watchdog).
GANG_MAX_SECONDS=$FO_MAX

# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$FO_HERE/../clusters/gpu-32x8.yaml
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_SIDES="muster-failover muster-rolling"
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_UP_ARGS=(--replicas 2 --muster "$MUSTER_BIN")
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$FO_HERE/gang_lib.sh"
# shellcheck disable=SC2034 # read by gang_lib.sh: replicas die on purpose
GANG_EXTENDER_DOWN=1
FO_PY=$FO_HERE/failover.py
FO_MONITOR=
FO_REPLICAS_LOG=$GANG_OUT/replicas.log

fo_exit() {
  local rc=$?
  set +e
  touch "$GANG_OUT/monitor.stop"
  [[ -z $FO_MONITOR ]] || wait "$FO_MONITOR" 2>/dev/null
  (exit "$rc")
  gang_exit
}
trap fo_exit EXIT

fo_now() { echo "${EPOCHREALTIME/,/.}"; }
fo_secs() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }
# fo_mark NAME T: a mark at time T in the side's pod log.
fo_mark() { printf '{"kind": "mark", "name": "%s", "t": %s}\n' "$1" "$2" >>"$GANG_OUT/$GANG_SIDE.jsonl"; }
fo_replica() { # kill|start|restart R
  "$GANG_CLUSTER" replica "$1" "$2" --dir "$MUSTER_E2E_DIR" --muster "$MUSTER_BIN" 2>>"$FO_REPLICAS_LOG" ||
    fail "cluster.sh replica $1 $2 failed (end of $FO_REPLICAS_LOG: $(tail -n 3 "$FO_REPLICAS_LOG"))"
}
# fo_leader: the replica (0 or 1) whose kube-scheduler holds the Lease.
fo_leader() {
  local who
  who=$("$GANG_CLUSTER" leaders --dir "$MUSTER_E2E_DIR" 2>/dev/null | awk '$1 == "scheduler" {print $2}')
  [[ $who == muster-replica-[01] ]] || return 1
  echo "${who##*-}"
}
fo_leader_is() { [[ $(fo_leader) == "$1" ]]; }
fo_submit() {
  python3 "$GANG_PY" submit "$MUSTER_E2E_DIR" "$E2E_NS" "$1" || fail "submitting $1 failed"
}
fo_wait_done() { # CAP STALL
  local outcome
  outcome=$(gang_wait "$1" "$2")
  e2e_log "side $GANG_SIDE: $outcome; $(gang_status)"
  [[ $outcome == "done" ]] || fail "the $GANG_SIDE gangs did not all finish: $outcome"
  sleep 2 # the leader's last PodGroup status writes reach the recorder
  gang_stop_recorder
}

python3 "$FO_PY" chunks --seed 7 --gangs "10$(printf ',8%.0s' $(seq 1 "$FO_KILLS"))" --prefix c \
  --out-prefix "$GANG_OUT/failover-chunk"
python3 "$FO_PY" chunks --seed 11 --gangs 8,8,8 --prefix r --max-gpus 128 --work 12,20 \
  --out-prefix "$GANG_OUT/rolling-chunk"
python3 "$FO_PY" monitor "$MUSTER_E2E_DIR" --out "$GANG_OUT/monitor.jsonl" --status "$GANG_OUT/monitor.status" \
  --stop "$GANG_OUT/monitor.stop" 2>"$GANG_OUT/monitor.log" &
FO_MONITOR=$!
wait_for "the monitor's first poll" 30 test -s "$GANG_OUT/monitor.status"
wait_for "a kube-scheduler holding the Lease" 30 fo_leader
e2e_log "leaders: $("$GANG_CLUSTER" leaders --dir "$MUSTER_E2E_DIR" | paste -sd ' ')"

# --- 1. failover ---------------------------------------------------------------------
gang_side muster-failover
t_start=$(fo_now)
fo_submit "$GANG_OUT/failover-chunk-0.json"
gang_wait_for "the first bind" 60 python3 "$FO_PY" first-bind "$GANG_OUT/$GANG_SIDE.jsonl" "$t_start"
for ((k = 1; k <= FO_KILLS; k++)); do
  leader=$(fo_leader) || fail "no replica holds the Lease before kill $k"
  t_kill=$(fo_now)
  fo_mark "kill-$k-muster-replica-$leader" "$t_kill"
  fo_replica kill "$leader"
  fo_submit "$GANG_OUT/failover-chunk-$k.json"
  gang_wait_for "a bind after kill $k" 45 python3 "$FO_PY" first-bind "$GANG_OUT/$GANG_SIDE.jsonl" \
    "$(python3 -c 'import sys; print(float(sys.argv[1]) + 1)' "$t_kill")"
  t_bind=$(fo_now)
  wait_for "replica $((1 - leader)) holding the Lease" 20 fo_leader_is $((1 - leader))
  e2e_log "kill $k: replica $leader killed; replica $((1 - leader)) leads and binds ($(fo_secs "$t_kill" "$t_bind") s, polled)"
  fo_replica start "$leader"
  e2e_log "kill $k: replica $leader started again ($(fo_secs "$t_kill" "$(fo_now)") s after the kill): the standby"
done
fo_wait_done 120 30

# --- 2. rolling restart ----------------------------------------------------------------
gang_side muster-rolling
t_start=$(fo_now)
for f in "$GANG_OUT"/rolling-chunk-*.json; do fo_submit "$f"; done
gang_wait_for "the first rolling bind" 60 python3 "$FO_PY" first-bind "$GANG_OUT/$GANG_SIDE.jsonl" "$t_start"
leader=$(fo_leader) || fail "no replica holds the Lease before the rolling restart"
standby=$((1 - leader))
fo_mark "restart-standby-muster-replica-$standby" "$(fo_now)"
fo_replica restart "$standby"
e2e_log "rolling: standby replica $standby restarted"
fo_mark "stop-1-muster-replica-$leader" "$(fo_now)"
fo_replica restart "$leader"
e2e_log "rolling: leader replica $leader restarted; leaders now: $("$GANG_CLUSTER" leaders --dir "$MUSTER_E2E_DIR" | paste -sd ' ')"
fo_wait_done 120 30

# --- figures and checks --------------------------------------------------------------
touch "$GANG_OUT/monitor.stop"
wait "$FO_MONITOR" || true
FO_MONITOR=
workloads=()
for f in "$GANG_OUT"/failover-chunk-*.json; do workloads+=(--workload "muster-failover=$f"); done
for f in "$GANG_OUT"/rolling-chunk-*.json; do workloads+=(--workload "muster-rolling=$f"); done
rc=0
python3 "$FO_PY" report --phase "muster-failover=$GANG_OUT/muster-failover.jsonl" \
  --phase "muster-rolling=$GANG_OUT/muster-rolling.jsonl" "${workloads[@]}" \
  --monitor "$GANG_OUT/monitor.jsonl" --json "$GANG_OUT/figures-failover.json" >"$GANG_OUT/failover.txt" || rc=$?
sed 's/^/  /' "$GANG_OUT/failover.txt"
gang_report --check overcommit --check complete --check no-partial --check annotations --check podgroup
((rc == 0)) || fail "failover checks failed (figures above; $GANG_OUT)"
e2e_log "wall time $(fo_secs "$FO_T0" "$(fo_now)") s"
