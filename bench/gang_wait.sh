#!/usr/bin/env bash
# Gang wait: p50/p99 time from a gang's admission to all of its minMember
# pods bound, for gangs of at most 100 pods on 1000 kwok nodes x 8 GPUs while
# capacity exists (target: muster p99 <= 0.5 s, the scale issue's; the first
# one, issue 5's, was 2 s), and the stock kube-scheduler's outcome on the
# same workload. The report's met / NOT met line holds for this default
# workload only.
#
# usage: bench/gang_wait.sh [--muster BIN] [--gangs G] [--seed N] [--sizes S,S,...]
#                           [--interval LO,HI] [--max-gpus M]
#                           [--sides "stock upstream kueue muster"] [--cluster FILE]
#                           [--dir DIR] [--out DIR]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   G     gangs (default 60), N the workload's seed (default 5), S the gang
#         sizes drawn from (default 2,4,8,16,32,64,100), LO,HI the seconds
#         between two gangs (default 0.5,1.0; 0,0: all at once)
#   M     cap on the workload's GPUs, all gangs together (default 4000)
#   FILE  node layout (default e2e/clusters/kwok-1000.yaml)
#   --out where the workload, each side's timings, muster's /metrics,
#         /debug/state and extender log and the figures are kept
#         (default ${TMPDIR:-/tmp}/muster-gang-wait)
#
# Workload (bench/gang_wait.py workload): G gangs, sizes drawn from
# {2,4,8,16,32,64,100}, minMember = size, 1/2/4 GPUs a pod (about 4000 of the
# 8000 GPUs in all), one gang every 0.5-1 s, each pod running 30-60 s
# (muster.io/run-seconds), so the cluster fills to about half and stays busy.
#
# One cluster, both schedulers, one side after the other in fresh namespaces:
#   stock   first, before the extender is started (so muster never sees its
#           PodGroups): pods with schedulerName default-scheduler, ungated;
#           the PodGroups are created too and ignored.
#   upstream  (with --sides containing it; Kubernetes >= 1.37, where the
#           harness turns the feature gate GenericWorkload on with
#           MUSTER_GENERIC_WORKLOAD=1) Kubernetes' own
#           gang scheduling: per gang a scheduling.k8s.io/v1beta1 Workload +
#           PodGroup (gang minCount), then its pods, schedulerName
#           default-scheduler joining it through spec.schedulingGroup; also
#           before the extender starts.
#   kueue   (with --sides containing it; the cluster comes up with
#           `--peer kueue`, Kueue built by build-components.sh --kueue)
#           Kueue v0.17 admitting each gang as a pod group (a gang of one as
#           a plain pod) of one ClusterQueue holding the cluster
#           (e2e/scenarios/fixtures/kueue-gangs.yaml), in a namespace
#           labelled kueue-peer=true; the stock kube-scheduler places what it
#           ungates. Also before the extender starts.
#   muster  then `cluster.sh extender start`: per gang the PodGroup, and once
#           muster has it Inqueue (as muster's Job reconciler would) its
#           pods, schedulerName volcano with the muster.io/gang gate.
# Gang wait = the minMember-th bind - the creation of the gang's last pod,
# both as a watch on the API server reports them (bench/gang_wait.py run).
# Prints each side's p50/p90/p99/max, the ratio muster / stock, muster's
# muster_gang_wait_seconds quantiles (estimated from the histogram; its
# admission is the Inqueue transition, before the pods exist, so it also
# counts pod creation), where muster's wait goes (last pod created -> first
# gate lifted -> minMember-th gate lifted -> bound), and the partial-gang
# figures: gangs left with fewer than minMember bound (muster: none, every
# gang is reserved whole before a gate is lifted; the stock scheduler has no
# such guarantee, though with free capacity it binds everything), and
# GPU-seconds held below minMember during the bind ramps, which both sides
# have (muster_gang_partial_gpu_seconds_total counts these ramps too).
# The host is shared: the load average is printed; compare runs with care.
# Exits 1 when muster did not bring every gang to minMember.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh
PY=$HERE/gang_wait.py

muster=''
gangs=60
seed=5
max_gpus=4000
sides='stock muster'
sizes=2,4,8,16,32,64,100
interval=0.5,1.0
cluster_file=$REPO/e2e/clusters/kwok-1000.yaml
dir=''
out=${TMPDIR:-/tmp}/muster-gang-wait
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --gangs) gangs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --max-gpus) max_gpus=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --sides) sides=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ " $sides " != *" muster "* || -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }

log() { printf '[gang-wait] %s\n' "$*" >&2; }
rm -rf -- "$out"
mkdir -p "$out"
python3 "$PY" workload --seed "$seed" --gangs "$gangs" --max-gpus "$max_gpus" --sizes "$sizes" \
  --interval "$interval" >"$out/workload.json"
[[ -n $dir ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-gang-wait.XXXXXX")
log "starting a cluster from ${cluster_file#"$REPO"/} in $dir (no extender yet)"
peer=()
[[ " $sides " != *" kueue "* ]] || peer=(--peer kueue)
env=$("$CLUSTER" up --cluster "$cluster_file" --dir "$dir" --watch-pid $$ "${peer[@]}" 2>"$out/cluster-up.log") ||
  { tail -n 20 "$out/cluster-up.log" >&2; echo "the cluster did not come up" >&2; exit 1; }
eval "$env"
cleanup() {
  cp -r "$dir/logs" "$out/cluster-logs" 2>/dev/null || true
  "$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
k() { "$MUSTER_KUBECTL" --request-timeout=60s "$@"; }
ext=http://127.0.0.1:$MUSTER_EXTENDER_PORT

# shellcheck source=e2e/scenarios/kueue_lib.sh
source "$REPO/e2e/scenarios/kueue_lib.sh"
# kueue_queues NS: Kueue's ClusterQueue gangs (quota: the nodes' allocatable)
# and LocalQueue NS/gangs, active.
kueue_queues() {
  local ns=$1 _
  kueue_apply_queues "$REPO/e2e/scenarios/fixtures/kueue-gangs.yaml" "$ns" >/dev/null || return 1
  for _ in $(seq 1 120); do
    kueue_queues_active "$ns" gangs && return 0
    sleep 0.5
  done
  log "Kueue's LocalQueue $ns/gangs not active in 60 s"
  return 1
}

# run_side SIDE SCHEDULER [gang_wait.py run options] -> $out/SIDE.json
run_side() {
  local side=$1 scheduler=$2 ns=gang-wait-$1 rc=0
  shift 2
  k create namespace "$ns" >/dev/null
  [[ $side != kueue ]] || { k label namespace "$ns" kueue-peer=true >/dev/null && kueue_queues "$ns"; } ||
    { echo "the kueue side's namespace and queues failed" >&2; exit 1; }
  until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  log "side $side: namespace $ns, scheduler $scheduler"
  python3 "$PY" run "$dir" "$ns" "$out/workload.json" "$out/$side.json" --scheduler "$scheduler" "$@" || rc=$?
  if [[ $side == muster ]]; then
    # muster observes a gang's wait at its next pass: give it a few seconds
    # to count the last gangs.
    local _
    for _ in $(seq 1 20); do
      curl -fsS --max-time 10 "$ext/metrics" >"$out/muster-metrics.txt" ||
        { log "cannot read $ext/metrics (is the extender alive? see $out/cluster-logs/extender.log)"; break; }
      grep -q "^muster_gang_wait_seconds_count $gangs\b" "$out/muster-metrics.txt" && break
      sleep 0.5
    done
    curl -fsS --max-time 10 "$ext/debug/state" >"$out/muster-debug-state.json" || true
  fi
  [[ $side != kueue ]] || log "kueue: $(kueue_save_workloads "$ns" "$out/kueue-workloads.json")"
  # Free the GPUs for the next side; kwok removes pods once deleted (Kueue's
  # finalizers dropped at once: it lets pods go one pod group at a time).
  k -n "$ns" delete pods --all --grace-period=0 --wait=false >/dev/null 2>&1 || true
  [[ $side != kueue ]] || log "kueue: $(kueue_release "$dir" "$ns")"
  k delete namespace "$ns" --wait=true --timeout=300s >/dev/null || log "namespace $ns not gone in 300 s"
  return "$rc"
}

muster_rc=0
start=$SECONDS
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for side in $sides; do
  case $side in
    stock) run_side stock default-scheduler || log "stock: not every gang reached minMember" ;;
    upstream)
      [[ ${MUSTER_GENERIC_WORKLOAD:-0} == 1 ]] ||
        { echo "side upstream needs the feature gate GenericWorkload (Kubernetes >= 1.37)" >&2; exit 2; }
      run_side upstream default-scheduler --upstream || log "upstream: not every gang reached minMember"
      ;;
    kueue) run_side kueue default-scheduler --kueue gangs || log "kueue: not every gang reached minMember" ;;
    muster)
      "$CLUSTER" extender start --dir "$dir" --muster "$muster" 2>>"$out/cluster-up.log" >/dev/null ||
        { echo "the muster extender did not start (see $out/cluster-up.log)" >&2; exit 1; }
      log "muster extender ready on $ext ($muster)"
      run_side muster volcano --gated --await-inqueue 30 || muster_rc=$?
      ((muster_rc == 0)) || log "muster: not every gang reached minMember (see $out)"
      ;;
    *) echo "unknown side $side" >&2; exit 2 ;;
  esac
done
log "sides done in $((SECONDS - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) (before: $load0)"

args=()
for side in $sides; do args+=(--side "$side=$out/$side.json"); done
python3 "$PY" report "${args[@]}" --metrics "$out/muster-metrics.txt" --json "$out/figures.json" |
  tee "$out/figures.txt"
log "artifacts: $out"
((muster_rc == 0)) || exit 1
