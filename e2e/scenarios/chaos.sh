#!/usr/bin/env bash
# Chaos scenarios 2-6 (issue 21; scenario 1, the leader kill, is failover.sh).
# Each runs on a fresh cluster of its own (e2e/clusters/gpu-16x8.yaml: 128
# GPUs; one replica of the volcano trio, so no leader election: with two,
# an apiserver outage longer than the 6 s lease deadline makes the leaders
# exit by design), with a workload of gated gangs (failover.py chunks: 1-8
# pods x 1/2/4/8 GPUs, work 6-12 s, played by gang_report.py's recorder) and
# Volcano Jobs run by the reconciler (chaos.py jobs: 1-4 workers x 1/2/4
# GPUs, some with a master, their pods finished by kwok after 6-12 s):
#   2  kube-apiserver restart: during a burst, a 40-pod Job is submitted and
#      the apiserver restarted at once (`cluster.sh component restart
#      kube-apiserver`: SIGTERM, KILL 3 s later - it does not exit on TERM
#      while watches are open - then the same command line, port and flags).
#   3  etcd restart during a burst (SIGTERM, same data dir and ports).
#   4  every watch stream cut, repeatedly: the sidecars talk to the apiserver
#      through e2e/cluster/api_proxy.py (`up --api-proxy`), which closes every
#      connection every CHAOS_RESET_EVERY s (5) for CHAOS_CUT_SECONDS (60)
#      while chunks keep arriving (4 chunks of gangs, 3 of Jobs, 15 s apart).
#   5  a slow apiserver: `delay 200` (ms per request) on the proxy for the
#      sidecars during a burst (until it finished, at most 45 s); checked:
#      no gang reservation expired and no bind failed
#      (muster_gang_reservations_total{outcome="expired"} and
#      muster_extender_bind_failures_total deltas 0).
#   6  the extender SIGSTOPped for 10 s during a burst (kube-scheduler calls
#      fail: it is `ignorable: false`); during the stop a gang chunk, Jobs
#      and 6 ungated single-pod PodGroups (chaos.py plain: kube-scheduler
#      tries those at once) arrive. No pod bound while it is stopped (binds
#      within 1 s of the SIGSTOP were in flight), binds resume after SIGCONT.
# Checked in each (chaos.py report): a monitor (failover.py monitor, 2 Hz)
# never sees a node's bound, unfinished pods ask for more GPUs than it has;
# every gang complete, none below minMember, no gang pod lost, duplicated,
# failed or deleted; every Job Completed, none lost or duplicated (one
# PodGroup each, exactly its pods, none deleted, no restart); plus
# gang_report.py's overcommit / complete / no-partial checks on the pod log.
# Printed: fault duration, binds during the fault, fault end -> first bind,
# polls, double bookings, gangs and Jobs complete, metric deltas.
#
#   e2e/scenarios/chaos.sh N|all [--muster BIN]     (also --scenario N)
# Environment: MUSTER_BIN (default build/cmd/muster), CHAOS_MAX_SECONDS
# (hard cap of one scenario, default 300), CHAOS_CUT_SECONDS (60),
# CHAOS_RESET_EVERY (5), CHAOS_DELAY_MS (200), CHAOS_STOP_SECONDS (10).
# Figures and logs: MUSTER_GANG_OUT (default ${TMPDIR:-/tmp}/muster-gang/chaos,
# one scenario-N/ each): chaos.txt, figures-chaos.json, monitor.jsonl, the
# pod log, metrics before/after, cluster-logs/; `all` adds summary.txt
# (result and wall time per scenario).
set -euo pipefail
CH_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CH_T0=${EPOCHREALTIME/,/.}
CH_N=
while (($#)); do
  case $1 in
    --muster) MUSTER_BIN=${2:?--muster needs a value}; shift 2 ;;
    --scenario) CH_N=${2:?--scenario needs a value}; shift 2 ;;
    [2-6] | all) CH_N=$1; shift ;;
    *) echo "usage: $0 2|3|4|5|6|all [--muster BIN]" >&2; exit 2 ;;
  esac
done
[[ $CH_N =~ ^([2-6]|all)$ ]] || { echo "usage: $0 2|3|4|5|6|all [--muster BIN]" >&2; exit 2; }
MUSTER_BIN=${MUSTER_BIN:-$CH_HERE/../../build/cmd/muster}
[[ -x $MUSTER_BIN ]] || {
  echo "[chaos] FAIL: muster binary '$MUSTER_BIN' not found (--muster BIN or MUSTER_BIN)" >&2
  exit 1
}
MUSTER_BIN=$(cd "$(dirname "$MUSTER_BIN")" && pwd)/$(basename "$MUSTER_BIN")
export MUSTER_BIN
CH_OUT=${MUSTER_GANG_OUT:-${TMPDIR:-/tmp}/muster-gang/chaos}
ch_secs() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }

# --- all: each scenario in a process (and on a cluster) of its own -------------------
if [[ $CH_N == all ]]; then
  mkdir -p "$CH_OUT"
  : >"$CH_OUT/summary.txt"
  rc=0
  for n in 2 3 4 5 6; do
    t=${EPOCHREALTIME/,/.}
    if MUSTER_GANG_OUT=$CH_OUT/scenario-$n "$0" "$n"; then r=PASS; else r=FAIL; rc=1; fi
    echo "scenario $n: $r, wall time $(ch_secs "$t" "${EPOCHREALTIME/,/.}") s" | tee -a "$CH_OUT/summary.txt"
  done
  cat "$CH_OUT/summary.txt"
  exit "$rc"
fi

# --- one scenario ----------------------------------------------------------------------
CH_MAX=${CHAOS_MAX_SECONDS:-300}
GANG_MAX_SECONDS=$CH_MAX # the hard cap (gang_lib.sh's watchdog)

MUSTER_GANG_OUT=${MUSTER_GANG_OUT:-$CH_OUT/scenario-$CH_N}
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$CH_HERE/../clusters/gpu-16x8.yaml
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_SIDES=muster-s$CH_N
GANG_UP_ARGS=(--muster "$MUSTER_BIN")
[[ $CH_N == [45] ]] && GANG_UP_ARGS+=(--api-proxy)
# Scenario 2: the reconciler throttled to 10 writes/s (as reconciler.sh's
# crash test), so the 40-pod Job's creates span the apiserver's restart.
[[ $CH_N == 2 ]] && export MUSTER_RECONCILER_FLAGS="--kube-api-qps=10 --kube-api-burst=1 ${MUSTER_RECONCILER_FLAGS:-}"
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$CH_HERE/gang_lib.sh"
CH_PY=$CH_HERE/chaos.py
FO_PY=$CH_HERE/failover.py
CH_MONITOR=
E2E_NAME=chaos-$CH_N

ch_exit() {
  local rc=$?
  set +e
  if [[ -n $CH_EXT_PID ]]; then kill -CONT "$CH_EXT_PID" 2>/dev/null; fi
  touch "$GANG_OUT/monitor.stop"
  [[ -z $CH_MONITOR ]] || wait "$CH_MONITOR" 2>/dev/null
  (exit "$rc")
  gang_exit
}
CH_EXT_PID=
trap ch_exit EXIT

ch_now() { echo "${EPOCHREALTIME/,/.}"; }
ch_mark() { printf '{"kind": "mark", "name": "%s", "t": %s}\n' "$1" "$2" >>"$GANG_OUT/$GANG_SIDE.jsonl"; }
ch_submit() { python3 "$CH_PY" submit "$MUSTER_E2E_DIR" "$E2E_NS" "$1" || fail "submitting $1 failed"; }
ch_metrics() { # FILE: both sidecars' metrics in one page (their series names differ)
  {
    curl -fsS --max-time 5 "http://127.0.0.1:$MUSTER_EXTENDER_PORT/metrics"
    curl -fsS --max-time 5 "http://127.0.0.1:$MUSTER_RECONCILER_PORT/metrics"
  } >"$1" || fail "cannot read the sidecars' metrics"
}
ch_first_bind_after() { # DESC T TIMEOUT
  gang_wait_for "$1" "$3" python3 "$FO_PY" first-bind "$GANG_OUT/$GANG_SIDE.jsonl" "$2"
}
ch_cluster() { "$GANG_CLUSTER" "$@" --dir "$MUSTER_E2E_DIR" 2>>"$GANG_OUT/faults.log"; }

# The workload: gang chunks (g<i>-g<k>) and Job lists (job<i>-<k>).
python3 "$FO_PY" chunks --seed "$((CH_N * 10))" --gangs 8,6,6,6 --prefix g --max-gpus 64 --work 6,12 \
  --out-prefix "$GANG_OUT/gangs"
for i in 0 1 2; do
  python3 "$CH_PY" jobs --seed "$((CH_N * 10 + i))" --count 4 --prefix "job$i" --max-gpus 40 \
    --out "$GANG_OUT/jobs-$i.json"
done
python3 "$CH_PY" jobs --count 0 --prefix job --big 40 --out "$GANG_OUT/jobs-big.json"
python3 "$CH_PY" plain --count 6 --prefix p --out "$GANG_OUT/plain.json"
python3 "$FO_PY" monitor "$MUSTER_E2E_DIR" --out "$GANG_OUT/monitor.jsonl" --status "$GANG_OUT/monitor.status" \
  --stop "$GANG_OUT/monitor.stop" 2>"$GANG_OUT/monitor.log" &
CH_MONITOR=$!
wait_for "the monitor's first poll" 30 test -s "$GANG_OUT/monitor.status"

gang_side "muster-s$CH_N"
ch_metrics "$GANG_OUT/metrics-before.txt"
CH_GANG_FILES=()
CH_JOB_FILES=()
ch_gangs() { ch_submit "$GANG_OUT/gangs-$1.json"; CH_GANG_FILES+=("$GANG_OUT/gangs-$1.json"); }
ch_jobs() { ch_submit "$GANG_OUT/$1.json"; CH_JOB_FILES+=("$GANG_OUT/$1.json"); }
CH_REPORT_ARGS=()
t_start=$(ch_now)

case $CH_N in
  2 | 3)
    ch_gangs 0
    ch_jobs jobs-0
    ch_first_bind_after "the first bind" "$t_start" 60
    if [[ $CH_N == 2 ]]; then
      ch_jobs jobs-big
      # Restarted as soon as the reconciler's first pod of it shows (the
      # other 39 follow at 10/s): mid-creation.
      gang_wait_for "the first job-big pod" 20 grep -q '"name": "job-big-worker-' "$GANG_OUT/$GANG_SIDE.jsonl"
      what=kube-apiserver
      args=(--stop-timeout 3)
    else
      what=etcd
      args=()
    fi
    t=$(ch_now)
    ch_mark fault-start "$t"
    took=$(ch_cluster component restart "$what" "${args[@]}") || fail "component restart $what failed (faults.log)"
    ch_mark fault-end "$(ch_now)"
    e2e_log "$what restarted: healthy again after $took s"
    ch_gangs 1
    ch_jobs jobs-1
    ;;
  4)
    ch_gangs 0
    ch_jobs jobs-0
    ch_first_bind_after "the first bind" "$t_start" 60
    every=${CHAOS_RESET_EVERY:-5}
    cut=${CHAOS_CUT_SECONDS:-60}
    ch_cluster api-proxy reset "$every" || fail "api-proxy reset failed"
    t0=$(ch_now)
    ch_mark fault-start "$t0"
    for i in 1 2 3; do
      sleep "$((cut / 4))"
      ch_gangs "$i"
      ((i < 3)) && ch_jobs "jobs-$i"
    done
    sleep "$((cut - 3 * (cut / 4)))"
    ch_cluster api-proxy pass || fail "api-proxy pass failed"
    ch_mark fault-end "$(ch_now)"
    e2e_log "watch streams cut every $every s for $(ch_secs "$t0" "$(ch_now)") s: $(grep '"cut"' "$MUSTER_E2E_DIR/logs/api-proxy.log" | tail -n 1)"
    ;;
  5)
    delay=${CHAOS_DELAY_MS:-200}
    ch_cluster api-proxy delay "$delay" || fail "api-proxy delay failed"
    t0=$(ch_now)
    ch_mark fault-start "$t0"
    ch_gangs 0
    ch_jobs jobs-0
    ch_first_bind_after "the first bind" "$t_start" 60
    sleep 5
    ch_gangs 1
    ch_jobs jobs-1
    # Until the burst is done (at most 45 s of delay).
    for _ in $(seq 1 90); do
      s=$(gang_status)
      [[ $(json_get "$s" workDone) == "$(json_get "$s" workPods)" ]] &&
        python3 "$CH_PY" jobs-done "$MUSTER_E2E_DIR" "$E2E_NS" >/dev/null && break
      sleep 0.5
    done
    ch_cluster api-proxy pass || fail "api-proxy pass failed"
    ch_mark fault-end "$(ch_now)"
    e2e_log "delay $delay ms for $(ch_secs "$t0" "$(ch_now)") s"
    CH_REPORT_ARGS+=(--zero 'muster_gang_reservations_total{outcome="expired"}'
      --zero muster_extender_bind_failures_total)
    ;;
  6)
    ch_gangs 0
    ch_jobs jobs-0
    ch_first_bind_after "the first bind" "$t_start" 60
    CH_EXT_PID=$(awk '$1 == "proc" && $2 == "extender" {print $3}' "$MUSTER_E2E_DIR/state" | tail -n 1)
    [[ -n $CH_EXT_PID ]] || fail "no extender recorded"
    stop=${CHAOS_STOP_SECONDS:-10}
    kill -STOP "$CH_EXT_PID"
    t0=$(ch_now)
    ch_mark fault-start "$t0"
    ch_gangs 1
    ch_jobs jobs-1
    # Ungated pods too: kube-scheduler tries them at once (filter, then bind:
    # the extender's verbs), and must place none of them while it is stopped.
    ch_submit "$GANG_OUT/plain.json"
    CH_GANG_FILES+=("$GANG_OUT/plain.json")
    sleep "$(python3 -c 'import sys, time; print(max(0.0, float(sys.argv[1]) + float(sys.argv[2]) - time.time()))' \
      "$t0" "$stop")"
    kill -CONT "$CH_EXT_PID"
    CH_EXT_PID=
    ch_mark fault-end "$(ch_now)"
    e2e_log "extender stopped (SIGSTOP) for $(ch_secs "$t0" "$(ch_now)") s"
    CH_REPORT_ARGS+=(--no-binds-during)
    ;;
esac

# --- the end: everything finished, then figures and checks ------------------------------
outcome=$(gang_wait 150 40)
e2e_log "gangs: $outcome; $(gang_status)"
for _ in $(seq 1 180); do # at most 90 s; the report names what is missing
  python3 "$CH_PY" jobs-done "$MUSTER_E2E_DIR" "$E2E_NS" >/dev/null && break
  sleep 0.5
done
e2e_log "Jobs: $(python3 "$CH_PY" jobs-done "$MUSTER_E2E_DIR" "$E2E_NS" || true)"
sleep 2 # the last status writes reach the recorder
python3 "$CH_PY" snapshot "$MUSTER_E2E_DIR" "$E2E_NS" "$GANG_OUT/snapshot.json" || fail "snapshot failed"
ch_metrics "$GANG_OUT/metrics-after.txt"
gang_stop_recorder
touch "$GANG_OUT/monitor.stop"
wait "$CH_MONITOR" || true
CH_MONITOR=
args=()
for f in "${CH_GANG_FILES[@]}"; do args+=(--workload "$f"); done
for f in "${CH_JOB_FILES[@]}"; do args+=(--jobs "$f"); done
rc=0
python3 "$CH_PY" report --title "scenario $CH_N" --pods "$GANG_OUT/$GANG_SIDE.jsonl" "${args[@]}" \
  --snapshot "$GANG_OUT/snapshot.json" --monitor "$GANG_OUT/monitor.jsonl" \
  --metrics-before "$GANG_OUT/metrics-before.txt" --metrics-after "$GANG_OUT/metrics-after.txt" \
  ${CH_REPORT_ARGS[@]+"${CH_REPORT_ARGS[@]}"} --json "$GANG_OUT/figures-chaos.json" >"$GANG_OUT/chaos.txt" || rc=$?
sed 's/^/  /' "$GANG_OUT/chaos.txt"
gang_report --check overcommit --check complete --check no-partial
((rc == 0)) || fail "chaos scenario $CH_N checks failed (figures above; $GANG_OUT)"
e2e_log "wall time $(ch_secs "$CH_T0" "$(ch_now)") s"
