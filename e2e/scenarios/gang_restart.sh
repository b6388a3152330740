#!/usr/bin/env bash
# Gang scheduling across extender crashes (issue 5, acceptance 2): a smaller
# burst (gang_report.py workload burst, seed 4: 32 gang jobs, 125 pods, two
# waves of 15 s filling 32 nodes x 8 GPUs, e2e/clusters/gpu-32x8.yaml),
# created with the muster.io/gang scheduling gate, and the muster extender
# killed with SIGKILL twice while gangs are being bound - once the first
# pods are bound (first wave), and once the second wave's first pods are - and
# restarted 2 s later each time. Same outcome as without crashes: every job
# completes, no GPU-second held by a gang that never reached minMember, no
# gang left partial, and no node ever holds more GPUs than it has (from the
# pod timeline, in the API server's order). The stock side runs the same
# burst (no crash; stopped at 40 s) for comparison.
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-32x8.yaml
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"
WORKLOAD=(burst --seed 4 --waves "15,15")

# Start the extender unless it already answers.
gang_restart_extender() {
  curl -fsS --max-time 2 "$EXT_URL/readyz" >/dev/null 2>&1 ||
    "$GANG_CLUSTER" extender start --dir "$MUSTER_E2E_DIR" --muster "$MUSTER_BIN" 2>>"$GANG_OUT/cluster-up.log"
}
# bound_in_log: the pods the pod log has seen bound (read straight from the
# log: the status file lags by up to half a second, and a wave binds in less).
bound_in_log() {
  grep -o '"name": "[^"]*", "node": "gpu-' "$GANG_OUT/$GANG_SIDE.jsonl" | sort -u | grep -c . || true
}
# until_bound N TIMEOUT: poll the log every 50 ms until N pods are bound.
until_bound() {
  local deadline=$((${EPOCHREALTIME%[.,]*} + $2))
  until (($(bound_in_log) >= $1)); do
    ((${EPOCHREALTIME%[.,]*} < deadline)) || fail "timed out after $2 s waiting for $1 pods bound"
    gang_extender_check
    sleep 0.05
  done
}

# crash WHY: SIGKILL the extender, note it in the pod log, start it 2 s later.
crash() {
  GANG_EXTENDER_DOWN=1
  "$GANG_CLUSTER" extender stop --signal KILL --dir "$MUSTER_E2E_DIR" 2>>"$GANG_OUT/cluster-up.log" ||
    fail "cannot kill the extender"
  gang_mark "kill-$1"
  e2e_log "extender killed ($1): $(gang_status)"
  sleep 2
  gang_restart_extender || fail "the extender did not start again"
  GANG_EXTENDER_DOWN=0
  gang_mark "ready-$1"
  e2e_log "extender restarted"
}

gang_stock_side 40 15 "${WORKLOAD[@]}"

outcome=skipped
if gang_has_side muster; then
  gang_start_muster
  gang_side muster
  gang_submit "${WORKLOAD[@]}" --scheduler volcano --gated
  until_bound 1 60
  crash binding
  wave0=$(grep -o '"name": "w0-j[0-9]*-[0-9]*"' "$GANG_OUT/muster-workload.json" | grep -c .)
  until_bound $((wave0 + 1)) 90
  crash second-wave
  outcome=$(gang_wait 120 30)
  e2e_log "muster: $outcome"
  gang_metrics
  gang_end_side
fi

gang_report --check overcommit --check complete --check no-partial --check annotations --check podgroup
[[ $outcome == "done" || $outcome == skipped ]] || fail "muster did not finish the burst: $outcome"
