#!/usr/bin/env bash
# End-to-end scheduling throughput (issue 4, acceptance 5c): pods/s bound on a
# local control plane with 1000 kwok GPU nodes, the stock default scheduler vs
# the `volcano` profile calling muster, in the same cluster and run.
#
# usage: bench/scheduling_throughput.sh [--muster BIN] [--pods N] [--runs R]
#                                       [--cluster FILE] [--dir DIR] [--out FILE]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   N     pods per run (default 3000), each asking 1 nvidia.com/gpu and 100m cpu
#   R     runs per scheduler (default 3), alternating stock / volcano
#   FILE  node layout (default e2e/clusters/kwok-1000.yaml)
#   --out FILE  also append each run's record (bench/throughput_figures.py run)
#               to FILE, one JSON line per run
#
# One run: freeze the side under test (SIGSTOP: the stock kube-scheduler; or
# the volcano kube-scheduler and the muster extender), create the N pods in a
# fresh namespace (8 parallel creates; muster's reconciler stays up, as it
# serves the admission webhook that gates volcano pods), open a watch
# (bench/watch_binds.py), release the side (SIGCONT) and time the bindings
# as the API server reports them. Pod creation is thus outside the
# measurement, and so is start-up; what remains is how fast a side drains a
# full queue, everything it does after the release included.
# release pods/s = N / (last bind - release), the figure compared; the drain
# rate (N-1) / (last bind - first bind) is printed beside it. Writes per pod
# and CPU per pod (bench/throughput_figures.py) are taken between the
# release and the last binding. Both schedulers and muster run with the same
# API client rate limit (cluster.sh, MUSTER_KUBE_API_QPS, default 500/s), so
# neither is capped by its client.
#
# Prints each run, then the medians, their spread and the ratios
# volcano+muster / stock.
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
out=''
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
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

FIGURES=$HERE/throughput_figures.py
ALL_PROCS=(kube-scheduler volcano-scheduler extender reconciler kube-apiserver etcd kwok kube-controller-manager)
runs_file=$dir/runs.jsonl
: >"$runs_file"

# run_one SIDE RUN -> prints the run's record (throughput_figures.py run)
run_one() {
  local side=$1 run=$2 scheduler ns name ready watcher part
  local -a procs pids=() creates=()
  if [[ $side == stock ]]; then
    scheduler=default-scheduler procs=(kube-scheduler)
  else
    scheduler=volcano procs=(volcano-scheduler extender)
  fi
  ns=bench-$side-$run
  k create namespace "$ns" >/dev/null
  until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  for name in "${procs[@]}"; do pids+=("$(proc_pid "$name")"); done
  kill -STOP "${pids[@]}"
  python3 "$PLACEMENT" pods p "$pods" 1 "$scheduler" >"$dir/pods.json"
  for part in $(python3 "$REPO/e2e/cluster/cluster_helper.py" split-list "$dir/pods.json" 8 "$dir/pods-part"); do
    k -n "$ns" create -f "$part" >/dev/null &
    creates+=($!)
  done
  for part in "${creates[@]}"; do wait "$part"; done
  ready=$dir/watch-ready
  rm -f "$ready" "$dir/released"
  python3 "$HERE/watch_binds.py" "$dir" "$ns" "$pods" "$ready" 900 "$dir/released" >"$dir/watch.json" &
  watcher=$!
  until [[ -e $ready ]]; do sleep 0.05; done
  python3 "$FIGURES" snapshot "$dir" "$dir/before.json" "${ALL_PROCS[@]}"
  python3 -c 'import time; print(time.monotonic())' >"$dir/released"
  kill -CONT "${pids[@]}"
  wait "$watcher" || log "run $run ($side): not every pod was bound in time"
  python3 "$FIGURES" snapshot "$dir" "$dir/after.json" "${ALL_PROCS[@]}"
  python3 "$FIGURES" run "$side" "$pods" "$dir/before.json" "$dir/after.json" "$dir/watch.json" |
    tee -a "$runs_file"
  # Free the nodes for the next run; kwok removes the pods once deleted.
  k delete namespace "$ns" --wait=true --timeout=600s >/dev/null
}

for ((run = 1; run <= runs; run++)); do
  for side in stock volcano; do
    r=$(run_one "$side" "$run")
    log "run $run $side: $(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["release_pods_per_s"], "pods/s from release,", r["pods_per_s"], "drain,", r["writes_per_pod"], "writes/pod,", r["side_cpu_ms_per_pod"], "CPU ms/pod")' "$r")"
  done
done
[[ -z $out ]] || cat "$runs_file" >>"$out"

metrics=$(curl -fsS "http://127.0.0.1:$MUSTER_EXTENDER_PORT/metrics")
python3 "$FIGURES" report "$runs_file"
python3 - "$metrics" <<'EOF'
import sys
metrics = sys.argv[1]
def total(name):
    return sum(float(l.split()[-1]) for l in metrics.splitlines()
               if l.startswith(name + "{") or l.startswith(name + " "))
passes = total("muster_gang_pass_duration_seconds_count")
print(f"muster: {total('muster_extender_requests_total'):.0f} requests, "
      f"{total('muster_extender_bind_failures_total'):.0f} bind failures, "
      f"{passes:.0f} gang passes, mean {1000 * total('muster_gang_pass_duration_seconds_sum') / max(passes, 1):.1f} ms")
EOF
