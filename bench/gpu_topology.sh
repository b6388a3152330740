#!/usr/bin/env bash
# GPU topology (issue 7, acceptance 3): how muster places multi-GPU gang
# members inside nodes and gangs inside racks, against the stock
# kube-scheduler and a first-fit simulation, on kwok clusters of 100 and 1000
# nodes x 8 GPUs in racks of 10 (e2e/clusters/gpu-topo-<N>.yaml). Every node
# has two 4-GPU NVLink islands, interleaved (0,2,4,6 and 1,3,5,7), so taking
# the lowest free indices is visibly wrong.
#
# usage: bench/gpu_topology.sh [--muster BIN] [--nodes "100 1000"] [--seed N]
#                              [--sides "stock muster"] [--gang-timeout S]
#                              [--infeasible-wait S] [--out DIR]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   --nodes  cluster sizes to run, each e2e/clusters/gpu-topo-<N>.yaml
#            (default "100 1000": about 1 + 5-7 min on 2 busy cores)
#   N     the seed of the prefill and the workload (default 7)
#   --gang-timeout     how long a gang that fits may wait unbound (default 10 s)
#   --infeasible-wait  how long a gang that fits nowhere waits (default 2 s)
#   --out where plans, each side's record, muster's /metrics, /debug/state
#         and the cluster logs, and the figures (figures.txt, figures.json)
#         are kept (default ${TMPDIR:-/tmp}/muster-gpu-topology)
#
# Per size (bench/gpu_topology.py plan): a seeded prefill makes exactly half
# of all GPUs busy, drawn uniformly over (node, GPU index): one pod per node,
# bound by spec.nodeName, with muster.io/gpu-ids naming its GPUs, created in
# Lists of 200 with kubectl. The workload: gangs of 2-4 members x 2/4/8 GPUs
# (weights 0.4/0.4/0.2) asking about 80 % of the GPUs left free, submitted one
# after another (bench/gpu_topology.py run: each once the previous one is
# bound or gave up). Pods run until deleted, so the state accumulates.
# Each side gets a fresh cluster (cluster.sh up ... down):
#   stock   schedulerName default-scheduler, no gate, the PodGroups ignored;
#   muster  schedulerName volcano with the muster.io/gang gate, the extender
#           started with --network-tiers=zone=...,rack=network.muster.io/rack.
# bench/gpu_topology.py report replays each side's binds in bind order from
# the prefill, simulates first-fit on the same prefill and arrival order, and
# prints per size: the best-link-class rate (target 100 %; also with the
# members of one gang on one node judged together), the one-rack rate
# of gangs some rack could hold (target >= 99 %), GPUs stranded (free with no
# free NVLink peer: start, end, created; target <= 50 % of first-fit's), gangs
# and GPUs placed, pods by link class, each side's wall time, PASS/MISS per
# target for muster. Exits non-zero only when something failed to run.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh
PY=$HERE/gpu_topology.py
TIERS="--network-tiers=zone=topology.kubernetes.io/zone,rack=network.muster.io/rack"

muster=''
sizes='100 1000'
seed=7
sides='stock muster'
gang_timeout=10
infeasible_wait=2
out=${TMPDIR:-/tmp}/muster-gpu-topology
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --nodes) sizes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --sides) sides=$2; shift 2 ;;
    --gang-timeout) gang_timeout=$2; shift 2 ;;
    --infeasible-wait) infeasible_wait=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ " $sides " != *" muster "* || -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }
for side in $sides; do
  [[ $side == stock || $side == muster ]] || { echo "unknown side $side" >&2; exit 2; }
done

log() { printf '[gpu-topology] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
rm -rf -- "$out"
mkdir -p "$out"

dir=''
side_out=''
down() {
  [[ -n $dir ]] || return 0
  cp -r "$dir/logs" "$side_out-cluster-logs" 2>/dev/null || true
  "$CLUSTER" down --dir "$dir" >/dev/null 2>>"$side_out-cluster-down.log" ||
    log "cluster down left something behind (see $side_out-cluster-down.log)"
  dir=''
}
trap down EXIT
k() { "$MUSTER_KUBECTL" --request-timeout=60s "$@"; }

# run_side SIZE SIDE: a fresh cluster, the prefill, the side's run; the
# record in $out/SIZE/SIDE.json and the wall time in $out/SIZE/SIDE.wall.
run_side() {
  local size=$1 side=$2 t0=$SECONDS cluster_file=$REPO/e2e/clusters/gpu-topo-$1.yaml env chunk ns
  local -a opts
  side_out=$out/$size/$side
  dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-gpu-topology.XXXXXX")
  log "$size nodes, $side: cluster in $dir"
  env=$("$CLUSTER" up --cluster "$cluster_file" --dir "$dir" --watch-pid $$ 2>"$side_out-cluster-up.log") ||
    { tail -n 20 "$side_out-cluster-up.log" >&2; die "the cluster did not come up"; }
  eval "$env"
  log "$(grep -o 'cluster accepts pods.*' "$side_out-cluster-up.log")"
  for ns in topo-prefill topo; do
    k create namespace "$ns" >/dev/null || die "cannot create namespace $ns"
    until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  done
  for chunk in "$out/$size"/prefill-*.json; do
    k -n topo-prefill create -f "$chunk" >/dev/null || die "creating the prefill ($chunk) failed"
  done
  log "prefill created ($(cat "$out/$size"/prefill-*.json | grep -o '"kind": "Pod"' | grep -c .) pods) after $((SECONDS - t0)) s"
  opts=(--side "$side" --gang-timeout "$gang_timeout" --infeasible-wait "$infeasible_wait")
  if [[ $side == muster ]]; then
    MUSTER_EXTENDER_FLAGS=$TIERS "$CLUSTER" extender start --dir "$dir" --muster "$muster" \
      2>>"$side_out-cluster-up.log" >/dev/null || die "the muster extender did not start (see $side_out-cluster-up.log)"
    log "muster extender ready ($muster $TIERS)"
    opts+=(--scheduler volcano --gated --extender "http://127.0.0.1:$MUSTER_EXTENDER_PORT")
  else
    opts+=(--scheduler default-scheduler)
  fi
  python3 "$PY" run "$dir" "$out/$size/plan.json" "$side_out.json" "${opts[@]}" ||
    die "the $side run failed (its logs: $side_out-cluster-logs)"
  if [[ $side == muster ]]; then
    curl -fsS --max-time 10 "http://127.0.0.1:$MUSTER_EXTENDER_PORT/metrics" >"$side_out-metrics.txt" ||
      log "cannot read muster's /metrics"
    curl -fsS --max-time 10 "http://127.0.0.1:$MUSTER_EXTENDER_PORT/debug/state" >"$side_out-debug-state.json" || true
  fi
  down
  echo $((SECONDS - t0)) >"$side_out.wall"
  log "$size nodes, $side: $(cat "$side_out.wall") s (cluster up, prefill, gangs, down)"
}

start=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
args=()
for size in $sizes; do
  [[ -f $REPO/e2e/clusters/gpu-topo-$size.yaml ]] || die "no cluster file e2e/clusters/gpu-topo-$size.yaml"
  mkdir -p "$out/$size"
  python3 "$PY" plan --cluster "$REPO/e2e/clusters/gpu-topo-$size.yaml" --seed "$seed" --out "$out/$size" ||
    die "planning the $size-node workload failed"
  for side in $sides; do
    run_side "$size" "$side"
    args+=(--side "$size/$side=$out/$size/$side.json" --wall "$size/$side=$(cat "$out/$size/$side.wall")")
  done
done
log "all sides done in $((SECONDS - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) (before: $load0)"
python3 "$PY" report "${args[@]}" --json "$out/figures.json" | tee "$out/figures.txt" || die "the report failed"
log "artifacts: $out"
