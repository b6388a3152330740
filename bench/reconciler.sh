#!/usr/bin/env bash
# Reconciler throughput (issue 8, acceptance 3): how fast `muster reconciler`
# turns Volcano Jobs into pods and how many API writes it spends per pod
# (target <= 2 apart from the shared per-job objects), against Kubernetes' own
# batch/v1 Job controller (kube-controller-manager) on the same shapes.
#
# usage: bench/reconciler.sh [--muster BIN] [--sides "stock muster"]
#                            [--jobs "1000 10"] [--pods "1 100"]
#                            [--creators C] [--plugins LIST] [--timeout S]
#                            [--cluster FILE] [--dir DIR] [--out DIR]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   --jobs/--pods  the shapes, as two lists read pairwise: shape k is
#         (jobs k) Jobs of (pods k) pods each (default A = 1000 x 1,
#         B = 10 x 100)
#   C     connections creating the Jobs at once (default 16)
#   LIST  Volcano plugins of muster's Jobs, comma-separated (default none;
#         e.g. env,svc adds a Service, ConfigMap and NetworkPolicy per Job)
#   S     how long one side may take from the first create (default 240 s)
#   FILE  node layout (default e2e/clusters/gpu-16.yaml: 16 x 110 pods)
#   --out where each run's record, the cluster logs and the figures
#         (figures.txt, figures.json) are kept
#         (default ${TMPDIR:-/tmp}/muster-reconciler-bench)
#
# One cluster (`cluster.sh up --muster BIN`: kube-apiserver, kcm, both
# kube-schedulers, kwok, the muster extender and reconciler). Per shape, per
# side (stock first), a fresh namespace, deleted and gone before the next run:
#   stock   batch/v1 Jobs, parallelism = completions = pods, schedulerName
#           default-scheduler: kcm's Job controller creates the pods.
#   muster  batch.volcano.sh/v1alpha1 Jobs, one task of `pods` replicas,
#           minAvailable = pods, schedulerName volcano: the reconciler makes
#           the PodGroup, the extender admits it (Inqueue), the reconciler
#           creates the gated pods, the extender reserves and ungates them.
# Pods ask cpu 100m only and run until deleted (no muster.io/run-seconds).
# bench/reconciler.py run POSTs all Jobs at once over C connections, watches
# pods, Jobs and PodGroups from before the first create and snapshots
# kube-apiserver's apiserver_request_total and the reconciler's /metrics
# before, once all pods exist and once all are Running and settled.
# Prints per shape: Job create -> all its pods created (p50/p90/p99/max),
# the makespan (first create -> last pod created), the same to Running,
# writes per pod (the controller's, everything's, the reconciler's own
# counter; bench/reconciler.py's docstring says what each counts), the
# ratio muster / stock, the writes by verb and resource, the CPU seconds of
# each cluster process in the run, how each Job's status changed, and where
# muster's time goes (Job -> PodGroup -> Inqueue -> pods).
# About 3 min on 2 shared cores (4 min with other work on the host).
# The host is shared: the load average is printed; compare runs with care.
# Exits 1 when a side did not get all its pods created.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh
PY=$HERE/reconciler.py

muster=''
sides='stock muster'
jobs_list='1000 10'
pods_list='1 100'
creators=16
plugins=''
timeout=240
cluster_file=$REPO/e2e/clusters/gpu-16.yaml
dir=''
out=${TMPDIR:-/tmp}/muster-reconciler-bench
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --sides) sides=$2; shift 2 ;;
    --jobs) jobs_list=$2; shift 2 ;;
    --pods) pods_list=$2; shift 2 ;;
    --creators) creators=$2; shift 2 ;;
    --plugins) plugins=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
read -ra jobs_of <<<"$jobs_list"
read -ra pods_of <<<"$pods_list"
((${#jobs_of[@]} == ${#pods_of[@]} && ${#jobs_of[@]} > 0)) ||
  { echo "--jobs and --pods must list as many shapes" >&2; exit 2; }
for side in $sides; do
  [[ $side == stock || $side == muster ]] || { echo "unknown side $side" >&2; exit 2; }
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
# The cluster runs the reconciler whichever side is measured (up --muster).
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }

log() { printf '[reconciler-bench] %s\n' "$*" >&2; }
rm -rf -- "$out"
mkdir -p "$out"
[[ -n $dir ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-reconciler-bench.XXXXXX")
start=$SECONDS
log "starting a cluster from ${cluster_file#"$REPO"/} in $dir with $muster"
env=$("$CLUSTER" up --cluster "$cluster_file" --dir "$dir" --muster "$muster" --no-build \
  --watch-pid $$ 2>"$out/cluster-up.log") ||
  { tail -n 20 "$out/cluster-up.log" >&2; echo "the cluster did not come up" >&2; exit 1; }
eval "$env"
cleanup() {
  cp -r "$dir/logs" "$out/cluster-logs" 2>/dev/null || true
  "$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
k() { "$MUSTER_KUBECTL" --request-timeout=60s "$@"; }
log "cluster up in $((SECONDS - start)) s; reconciler metrics on :$MUSTER_RECONCILER_PORT"

# run_side SHAPE SIDE JOBS PODS -> $out/SHAPE-SIDE.json; the namespace is gone after.
run_side() {
  local shape=$1 side=$2 jobs=$3 pods=$4 rc=0 t=$SECONDS
  local ns
  ns=rb-$(tr '[:upper:]' '[:lower:]' <<<"$shape")-$side
  k create namespace "$ns" >/dev/null
  until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
  log "shape $shape ($jobs x $pods), side $side: namespace $ns"
  python3 "$PY" run "$dir" "$ns" "$out/$shape-$side.json" --side "$side" --shape "$shape" \
    --jobs "$jobs" --pods "$pods" --creators "$creators" --plugins "$plugins" \
    --timeout "$timeout" --reconciler-port "$MUSTER_RECONCILER_PORT" || rc=$?
  # The Jobs first (their pods go with them), so no controller re-creates a
  # pod deleted under it; kwok removes pods once deleted.
  if [[ $side == stock ]]; then
    k -n "$ns" delete jobs.batch --all --cascade=background --wait=false >/dev/null 2>&1 || true
  else
    k -n "$ns" delete jobs.batch.volcano.sh --all --cascade=background --wait=false >/dev/null 2>&1 || true
  fi
  k -n "$ns" delete pods --all --grace-period=0 --wait=false >/dev/null 2>&1 || true
  k delete namespace "$ns" --wait=true --timeout=300s >/dev/null || log "namespace $ns not gone in 300 s"
  log "shape $shape side $side: done in $((SECONDS - t)) s (namespace deleted)"
  return "$rc"
}

SHAPE_NAMES=ABCDEFGHIJKLMNOPQRSTUVWXYZ
rc=0
load0=$(cut -d' ' -f1-3 /proc/loadavg)
runs=()
for i in "${!jobs_of[@]}"; do
  shape=${SHAPE_NAMES:i:1}
  for side in $sides; do
    run_side "$shape" "$side" "${jobs_of[$i]}" "${pods_of[$i]}" || { rc=1; log "$side: not every pod was created"; }
    [[ -f $out/$shape-$side.json ]] && runs+=("$out/$shape-$side.json")
  done
done
curl -fsS --max-time 10 "http://127.0.0.1:$MUSTER_RECONCILER_PORT/metrics" >"$out/reconciler-metrics.txt" || true
log "runs done in $((SECONDS - start)) s with the cluster's start; load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg) (before: $load0)"

python3 "$PY" report "${runs[@]}" --json "$out/figures.json" | tee "$out/figures.txt"
log "artifacts: $out"
((rc == 0)) || exit 1
