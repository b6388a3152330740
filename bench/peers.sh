#!/usr/bin/env bash
# `make bench-peers` (issue 24): muster against the schedulers a user would
# pick instead, on the same cluster files and seeded workloads, each side in a
# fresh namespace of the same cluster (a fresh cluster per workload):
#   stock     the default kube-scheduler, pods placed one by one;
#   upstream  Kubernetes' own gang scheduling (1.37, feature gate
#             GenericWorkload, which this script turns on in every cluster it
#             starts: MUSTER_GENERIC_WORKLOAD=1): the same
#             kube-scheduler, every gang a scheduling.k8s.io/v1beta1 Workload
#             with one PodGroupTemplate (gang minCount = the gang's size,
#             disruptionMode all, the gang's priority class) and a PodGroup
#             made from it, pods joining it through spec.schedulingGroup
#             (e2e/scenarios/gang_workload.py upstream_gang: the choices and
#             why);
#   kueue     Kueue v0.17 (sigs.k8s.io/kueue, built into the component cache
#             by build-components.sh --kueue; cluster.sh up --peer kueue)
#             admitting each gang as a pod group of one ClusterQueue that
#             holds the cluster, the stock kube-scheduler placing the pods it
#             ungates (gang workloads 1-3; e2e/cluster/kueue/config.yaml and
#             e2e/scenarios/fixtures/kueue-gangs.yaml: the choices and why);
#   muster    the volcano profile calling muster, gangs as Volcano PodGroups,
#             with muster's pod webhook registered (manifests/webhook).
# Workloads (each side's figures per run in OUT/<workload>[-<run>]/):
#   1. deadlock    e2e/scenarios/gang_deadlock.sh, RUNS times: 2 gangs x 100
#                  pods x 1 GPU on 100 GPUs (gpu-25x4)
#   2. burst       e2e/scenarios/gang_burst.sh, RUNS times: 51 gang jobs of
#                  1-8 pods x 1-8 GPUs on 32 x 8 GPUs in three exactly-filling
#                  waves (seed 3); makespan / ideal per side
#   3. preemption  e2e/scenarios/gang_preemption.sh, RUNS times: a
#                  high-priority 8 x 8-GPU gang on a cluster full of
#                  low-priority gangs
#   4. throughput  bench/gang_wait.sh --gangs 300 --sizes 10 --interval 0,0
#                  (300 gangs x 10 pods at once, 1000 nodes; every side), and
#                  bench/scheduling_throughput.sh (3000 plain pods, stock vs
#                  muster alternating, RUNS runs each; plain pods have no gang,
#                  so the upstream column repeats the stock one)
#   5. gang wait   bench/gang_wait.sh (60 gangs of 2-100 pods, capacity free;
#                  every side)
#   6. fairshare   e2e/scenarios/queue_fairshare.sh, RUNS times: queues 1:2:4
#                  kept saturating 16 x (8 GPUs, 32 cpu) for 180 s, the third
#                  from 60 s; sides stock, kueue, muster (upstream has no
#                  queues)
#   7. racks       e2e/scenarios/gang_racks.sh, RUNS times: 4 gangs of 4-5 x
#                  8-GPU pods, each required in one rack, filling the free
#                  nodes of 4 racks exactly; then a rack-required gang no rack
#                  holds; sides stock, kueue (topology-aware scheduling),
#                  muster (network tiers); upstream's topology-aware workload
#                  scheduling is alpha in 1.37 (KEP-5732) and left out
#   8. admission   bench/gang_wait.sh twice, sides stock, kueue, muster: 1000
#                  single-pod workloads, then 100 pod groups of 10, all at
#                  once on 1000 nodes (gangs at minMember per second: a
#                  queueing peer's admissions per second, and their wait)
# Then bench/peers_report.py prints one table per workload (medians and
# [min-max] over runs) and writes OUT/peers.json.
#
# usage: bench/peers.sh [--muster BIN] [--runs R] [--only "deadlock burst ..."] [--out DIR]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   R     runs of the gang workloads 1-3 and of the plain-pod throughput (default 3)
#   --only  a subset of: deadlock burst preemption throughput wait fairshare racks admission
#   DIR   where everything goes (default ${TMPDIR:-/tmp}/muster-peers)
# Needs Kubernetes >= 1.37 (MUSTER_K8S_VERSION, default v1.37.2). About
# 95 min on 2 cores (plus a cold Kueue build, ~3 min). A workload that fails
# on muster's own checks is reported and the others still run; the exit code
# is 1 then.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
SCENARIOS=$REPO/e2e/scenarios

muster=''
runs=3
only='deadlock burst preemption throughput wait fairshare racks admission'
out=${TMPDIR:-/tmp}/muster-peers
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }
muster=$(cd "$(dirname "$muster")" && pwd)/$(basename "$muster")
version=${MUSTER_K8S_VERSION:-v1.37.2}
minor=${version#v1.}
minor=${minor%%.*}
((minor >= 37)) || { echo "bench-peers needs Kubernetes >= 1.37 for the upstream side (got $version)" >&2; exit 2; }

log() { printf '[bench-peers] %s\n' "$*" >&2; }
# Every cluster the workloads bring up serves Kubernetes' own gang API, and
# muster runs as installed with manifests/webhook: its pod webhook gates
# Volcano PodGroup members at creation (the deadlock workload's pods are
# created ungated; the others' muster pods are gated by the workload itself).
export MUSTER_GENERIC_WORKLOAD=1 MUSTER_GANG_WEBHOOK=1
rm -rf -- "$out"
mkdir -p "$out"
failed=()
wants() { [[ " $only " == *" $1 "* ]]; }

# gang_scenario NAME OUTDIR [SIDES]: one gang scenario with all four sides
# (or SIDES).
gang_scenario() {
  local name=$1 dir=$2 sides=${3:-stock upstream kueue muster} t0=$SECONDS
  log "$name -> $dir"
  if GANG_SIDES=$sides MUSTER_BIN=$muster MUSTER_GANG_OUT=$dir \
    "$SCENARIOS/$name.sh" >"$dir.log" 2>&1; then
    log "$name: done in $((SECONDS - t0)) s"
  else
    log "$name: FAILED on muster's checks or did not finish (see $dir.log)"
    failed+=("$name")
  fi
}

# gang_runs NAME SCENARIO [SIDES]: SCENARIO RUNS times, into OUT/NAME-<run>.
gang_runs() {
  local r
  for ((r = 1; r <= runs; r++)); do gang_scenario "$2" "$out/$1-$r" "${@:3}"; done
}

# Kueue is built once, before any clock starts (a cold build takes minutes);
# every workload has a Kueue side.
"$REPO/e2e/cluster/build-components.sh" --kueue >"$out/build-kueue.log" 2>&1 ||
  { log "building Kueue failed (see $out/build-kueue.log)"; exit 1; }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS
wants deadlock && gang_runs deadlock gang_deadlock
wants burst && gang_runs burst gang_burst
wants preemption && gang_runs preemption gang_preemption
if wants throughput; then
  log "gang throughput -> $out/gang-throughput"
  "$HERE/gang_wait.sh" --muster "$muster" --sides "stock upstream kueue muster" --gangs 300 --sizes 10 \
    --interval 0,0 --out "$out/gang-throughput" >"$out/gang-throughput.log" 2>&1 ||
    { log "gang throughput: muster did not bring every gang to minMember"; failed+=(gang-throughput); }
  log "plain-pod throughput -> $out/plain-throughput.jsonl"
  "$HERE/scheduling_throughput.sh" --muster "$muster" --runs "$runs" --out "$out/plain-throughput.jsonl" \
    >"$out/plain-throughput.log" 2>&1 || { log "plain-pod throughput failed"; failed+=(plain-throughput); }
fi
if wants wait; then
  log "gang wait -> $out/gang-wait"
  "$HERE/gang_wait.sh" --muster "$muster" --sides "stock upstream kueue muster" --out "$out/gang-wait" \
    >"$out/gang-wait.log" 2>&1 || { log "gang wait: muster did not bring every gang to minMember"; failed+=(gang-wait); }
fi
wants fairshare && gang_runs fairshare queue_fairshare "stock kueue muster"
wants racks && gang_runs racks gang_racks "stock kueue muster"
if wants admission; then
  for shape in "singles 1000 1" "groups 100 10"; do
    read -r what gangs size <<<"$shape"
    log "admission, $gangs x $size -> $out/admit-$what"
    "$HERE/gang_wait.sh" --muster "$muster" --sides "stock kueue muster" --gangs "$gangs" --sizes "$size" \
      --interval 0,0 --out "$out/admit-$what" >"$out/admit-$what.log" 2>&1 ||
      { log "admission $what: muster did not bring every gang to minMember"; failed+=("admit-$what"); }
  done
fi
log "all workloads in $((SECONDS - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) (before: $load0)"

python3 "$HERE/peers_report.py" "$out" --json "$out/peers.json" | tee "$out/peers.txt"
log "tables: $out/peers.txt, JSON: $out/peers.json"
((${#failed[@]} == 0)) || { log "failed: ${failed[*]}"; exit 1; }
