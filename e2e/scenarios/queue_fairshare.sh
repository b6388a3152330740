#!/usr/bin/env bash
# Queue fair share (issue 6, acceptance 2 and 3): three Queues q1, q2, q4 of
# weights 1:2:4 share 16 nodes x (8 GPUs, 32 cpu) (e2e/clusters/gpu-16x8.yaml:
# 128 GPUs, 512 cpu). For QUEUE_RUN_SECONDS (180) a driver (queue_report.py
# drive) keeps every queue with demand at a backlog of pending gangs above the
# whole cluster in cpu and in GPUs - mixed GPU-heavy (2-4 pods x 1-2 GPUs) and
# CPU-heavy (2-4 pods x 4-8 cpu) gangs of at most 4 % of the cluster, work
# 15-40 s each, seeded, the same on both sides. Demand changes midway: for the
# first third only q1 and q2 have demand (targets 1/3, 2/3), then q4 too (1/7,
# 2/7, 4/7; mark `change`). A member works only once its gang is whole
# (gang_report.py's recorder), so every gang gives its resources back after
# its work.
#   stock kube-scheduler (default-scheduler, no gate): pods placed one by one
#     in creation order - no notion of queues or gangs; reported, not checked.
#   kueue (GANG_SIDES with "kueue", `make bench-peers`): Kueue v0.17 with
#     ClusterQueues q1, q2, q4 in one cohort, fair-sharing weights 1:2:4,
#     nominal quotas weight/7 of the cluster, borrowing and reclaim
#     (fixtures/kueue-fairshare.yaml says why each); every gang a Kueue pod
#     group of its queue's LocalQueue, placed by the stock kube-scheduler once
#     admitted; Kueue's preemptions judged as muster's reclaims (its
#     PreemptedWorkload Events); reported, not checked.
#   muster (schedulerName volcano, the muster.io/gang gate): checked -
#     each queue's dominant share within 5 % of the cluster of its weighted
#     target (median over each phase's steady window), Jain >= 0.98, converged
#     within 30 s of the change, reclaim victims whole gangs (GangReclaimed
#     Events), no victim queue pushed below its target (one gang of slack), no
#     flip-flops. See queue_report.py for the definitions.
# Figures: $MUSTER_GANG_OUT/figures.txt (default /tmp/muster-gang/queue_fairshare).
# Environment: as the gang scenarios (gang_lib.sh: MUSTER_BIN, GANG_SIDES,
# MUSTER_GANG_DIR, MUSTER_GANG_OUT), QUEUE_RUN_SECONDS, QUEUE_SEED (6).
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-16x8.yaml
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"
QUEUE_PY=$GANG_LIB_DIR/queue_report.py
RUN_SECONDS=${QUEUE_RUN_SECONDS:-180}
SEED=${QUEUE_SEED:-6}

# The queues exist before either side runs (Open, as Volcano's queue
# controller would set them).
python3 "$QUEUE_PY" queues >"$GANG_OUT/queues.json"
"$MUSTER_KUBECTL" apply -f "$GANG_OUT/queues.json" >/dev/null || fail "creating the queues failed"
for q in q1 q2 q4; do
  "$MUSTER_KUBECTL" patch queue "$q" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null ||
    fail "opening queue $q failed"
done
e2e_log "queues: $("$MUSTER_KUBECTL" get queues -o jsonpath='{range .items[*]}{.metadata.name}={.spec.weight} {end}')"

# queue_status_check: while the muster side's gangs still run, every Queue's
# status (written by muster) shows what it holds and its PodGroups by phase,
# and /debug/state explains the shares.
queue_status_check() {
  local q line gpus running
  for q in q1 q2 q4; do
    line=$("$MUSTER_KUBECTL" get queue "$q" -o jsonpath='{.status.allocated.nvidia\.com/gpu} {.status.running}')
    read -r gpus running <<<"$line"
    [[ ${gpus:-0} -gt 0 && ${running:-0} -gt 0 ]] ||
      fail "queue $q status does not show its running gangs: allocated GPUs '${gpus:-}', running '${running:-}'"
    e2e_log "queue $q status: allocated nvidia.com/gpu=$gpus, running PodGroups $running"
  done
  curl -fsS --max-time 5 "$EXT_URL/debug/state" >"$GANG_OUT/muster-debug-state.json" ||
    fail "cannot read $EXT_URL/debug/state"
  python3 - "$GANG_OUT/muster-debug-state.json" <<'PY' || fail "/debug/state does not explain the queues"
import json, sys
state = json.load(open(sys.argv[1]))
queues = {q["name"]: q for q in state["fairShare"]["queues"]}
assert {"q1", "q2", "q4"} <= set(queues), sorted(queues)
assert all(queues[q]["deserved"] for q in ("q1", "q2", "q4")), queues
waiting = [g for g in state["gangs"] if "position" in g]
assert waiting and all("queue" in g for g in waiting), state["gangs"][:3]
print("debug/state: shares", {q: round(queues[q]["share"], 2) for q in ("q1", "q2", "q4")},
      "and", len(waiting), "ranked gangs")
PY
}

# queue_side SIDE DRIVE-OPTIONS...: one side's run - recorder, driver for
# RUN_SECONDS (checking meanwhile that a muster extender stays up), cleanup.
queue_side() {
  if [[ $1 == kueue ]]; then
    gang_side kueue kueue-peer=true
    queue_kueue_queues
  else
    gang_side "$1"
  fi
  shift
  local log=$GANG_OUT/$GANG_SIDE.jsonl drive rc=0
  python3 "$QUEUE_PY" drive "$MUSTER_E2E_DIR" "$E2E_NS" "$log" --seconds "$RUN_SECONDS" --seed "$SEED" "$@" \
    2>"$GANG_OUT/$GANG_SIDE.drive.log" &
  drive=$!
  while kill -0 "$drive" 2>/dev/null; do
    gang_extender_check
    sleep 1
  done
  wait "$drive" || rc=$?
  ((rc == 0)) || fail "the $GANG_SIDE driver failed (exit $rc): $(tail -n 5 "$GANG_OUT/$GANG_SIDE.drive.log")"
  e2e_log "$GANG_SIDE: $(tail -n 1 "$GANG_OUT/$GANG_SIDE.drive.log")"
  [[ $GANG_SIDE != muster ]] || queue_status_check
  if [[ $GANG_SIDE == kueue ]]; then gang_kueue_end; else gang_end_side; fi
}

# queue_kueue_queues: Kueue's ClusterQueue and LocalQueue per queue, the
# quotas the cluster split 1:2:4, all active before the driver starts.
queue_kueue_queues() {
  local queue cpu memory gpu weights=q1=1,q2=2,q4=4 w
  while read -r queue cpu memory gpu; do
    w=${weights#*"$queue"=}
    w=${w%%,*}
    sed -e "s|@QUEUE@|$queue|" -e "s|@WEIGHT@|$w|" -e "s|@CPU@|$cpu|" -e "s|@MEMORY@|$memory|" \
      -e "s|@GPU@|$gpu|" -e "s|@NAMESPACE@|$E2E_NS|" "$GANG_LIB_DIR/fixtures/kueue-fairshare.yaml" |
      "$MUSTER_KUBECTL" apply -f - >/dev/null || fail "creating Kueue's queue $queue failed"
    e2e_log "kueue: ClusterQueue $queue (weight $w; nominal cpu $cpu, memory $memory, nvidia.com/gpu $gpu)"
  done < <("$MUSTER_KUBECTL" get nodes -o json | python3 "$GANG_LIB_DIR/kueue_workloads.py" --split "$weights")
  wait_for "Kueue's LocalQueues active" 60 kueue_queues_active "$E2E_NS" q1 q2 q4
}

if gang_has_side stock; then
  queue_side stock --scheduler default-scheduler
fi
if gang_has_side kueue; then
  queue_side kueue --scheduler default-scheduler --kueue
fi
if gang_has_side muster; then
  gang_start_muster
  queue_side muster --scheduler volcano --gated
  gang_metrics
fi

GANG_REPORT_PY=$QUEUE_PY gang_report --max-deviation 5 --min-jain 0.98 --max-converge 30
