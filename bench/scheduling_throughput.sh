#!/usr/bin/env bash
# End-to-end scheduling throughput (issue 4, acceptance 5c): pods/s bound on a
# local control plane with 1000 kwok GPU nodes, the stock default scheduler vs
# the `volcano` profile calling muster, in the same cluster and run.
#
# usage: bench/scheduling_throughput.sh [--muster BIN] [--pods N] [--runs R]
#                                       [--cluster FILE] [--dir DIR]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   N     pods per run (default 3000), each asking 1 nvidia.com/gpu and 100m cpu
#   R     runs per scheduler (default 3), alternating stock / volcano
#   FILE  node layout (default e2e/clusters/kwok-1000.yaml)
#
# One run: freeze the scheduler under test (SIGSTOP), create the N pods in a
# fresh namespace, open a watch (bench/watch_binds.py), release the scheduler
# (SIGCONT) and time the bindings as the API server reports them. Pod creation
# is thus outside the measurement, and so is scheduler start-up; what remains
# is how fast a scheduler drains a full queue. pods/s = (N-1) / (last bind -
# first bind). Both schedulers and muster run with the same API client rate
# limit (cluster.sh, MUSTER_KUBE_API_QPS, default 500/s), so neither is capped
# by its client.
#
# Prints each run, then the medians and the ratio volcano+muster / stock.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh
PLACEMENT=$REPO/e2e/scenarios/placement.py

muster=''
pods=3000
runs=3
cluster_file=$REPO/e2e/clusters/kwok-1000.yaml
dir=''
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }

log() { printf '[throughput] %s\n' "$*" >&2; }
[[ -n $dir ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-throughput.XXXXXX")
log "starting a cluster from ${cluster_file#"$REPO"/} in $dir"
env=$("$CLUSTER" up --cluster "$cluster_file" --dir "$dir" --muster "$muster" --watch-pid $$) ||
  { echo "the cluster did not come up" >&2; exit 1; }
eval "$env"
trap '"$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true' EXIT
k() { "$MUSTER_KUBECTL" --request-timeout=60s "$@"; }

proc_pid() { awk -v n="$1" '$1 == "proc" && $2 == n {print $3}' "$dir/state" | tail -n1; }

# run_one SCHEDULER_NAME PROC_NAME RUN -> prints watch_binds.py's JSON line
run_one() {
  local scheduler=$1 proc=$2 run=$3 ns pid ready result
  ns=bench-${scheduler//_/-}-$run
  k create namespace "$ns" >/dev/null
  until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  pid=$(proc_pid "$proc")
  kill -STOP "$pid"
  python3 "$PLACEMENT" pods p "$pods" 1 "$scheduler" >"$dir/pods.json"
  k -n "$ns" create -f "$dir/pods.json" >/dev/null
  ready=$dir/watch-ready
  rm -f "$ready"
  python3 "$HERE/watch_binds.py" "$dir" "$ns" "$pods" "$ready" 600 >"$dir/result.json" &
  local watcher=$!
  until [[ -e $ready ]]; do sleep 0.05; done
  kill -CONT "$pid"
  wait "$watcher" || log "run $run ($scheduler): not every pod was bound in time"
  result=$(<"$dir/result.json")
  # Free the nodes for the next run; kwok removes the pods once deleted.
  k delete namespace "$ns" --wait=true --timeout=300s >/dev/null
  echo "$result"
}

declare -a stock_rates=() volcano_rates=()
for ((run = 1; run <= runs; run++)); do
  for mode in stock volcano; do
    if [[ $mode == stock ]]; then
      r=$(run_one default-scheduler kube-scheduler "$run")
    else
      r=$(run_one volcano volcano-scheduler "$run")
    fi
    rate=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("pods_per_s", 0))' "$r")
    log "run $run $mode: $rate pods/s  $r"
    if [[ $mode == stock ]]; then stock_rates+=("$rate"); else volcano_rates+=("$rate"); fi
  done
done

metrics=$(curl -fsS "http://127.0.0.1:$MUSTER_EXTENDER_PORT/metrics")
python3 - "${stock_rates[*]}" "${volcano_rates[*]}" "$pods" "$metrics" <<'EOF'
import statistics, sys
stock = [float(x) for x in sys.argv[1].split()]
volcano = [float(x) for x in sys.argv[2].split()]
metrics = sys.argv[4]
def total(name):
    return sum(float(l.split()[-1]) for l in metrics.splitlines()
               if l.startswith(name + "{") or l.startswith(name + " "))
ms, mv = statistics.median(stock), statistics.median(volcano)
print(f"pods per run: {sys.argv[3]}")
print(f"stock default-scheduler  pods/s: {stock}  median {ms:.1f}")
print(f"volcano + muster         pods/s: {volcano}  median {mv:.1f}")
print(f"ratio volcano+muster / stock: {mv / ms:.2f}  (target >= 0.8)")
print(f"muster: {total('muster_extender_requests_total'):.0f} requests, "
      f"{total('muster_extender_bind_failures_total'):.0f} bind failures")
EOF
