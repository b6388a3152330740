#!/usr/bin/env bash
# Soak (issue 21; `make soak`, not CI): M minutes (default 30) of seeded
# random churn on 100 kwok nodes x 8 GPUs (e2e/clusters/gpu-topo-100.yaml)
# through muster - gangs (PodGroups + gated pods), plain volcano pods,
# Volcano Jobs (some failing and restarted by PodFailed -> RestartJob until
# maxRetry), queue weight changes, kwok nodes added and drained - with
# everything deleted once finished. Watches that the muster extender and
# reconciler neither leak nor break.
#
# usage: bench/soak.sh [--muster BIN] [--seed N] [--minutes M] [--out DIR]
#                      [--cluster FILE] [--dir DIR] [-- more soak.py run flags]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   N     the churn's seed (default 1): the same seed, the same action sequence
#   M     minutes of churn (default 30; `--minutes 3` is a smoke run)
#   --out where the samples (samples.jsonl), violations.txt, summary.json,
#         soak.log and the cluster logs are kept
#         (default ${TMPDIR:-/tmp}/muster-soak-out)
#
# Prints a line every 5 minutes (every minute below 15 min): RSS, open fds
# and threads of each muster process (/proc/<pid>/status and fd of the
# PIDs in the cluster's state file), the extender's cache sizes
# (muster_extender_cache_objects), the reconciler's Jobs by phase
# (muster_reconciler_jobs), what was churned and the invariant violations
# so far. Invariants, checked every 10 s (bench/soak_figures.py): no node's
# live bound pods above its allocatable nvidia.com/gpu and no GPU index
# held twice; no PodGroup partly bound (0 < bound < minMember) for longer
# than 60 s; no Volcano Job with more pods than replicas; both muster
# processes alive with the PIDs they started with and /healthz answering;
# after the churn, once everything is deleted, the extender's cache back to
# its size at the start and no Job in the reconciler's gauge.
# "Flat": the last sample under churn against the sample at 10 min (a
# third of the run when shorter): RSS at most +15 %, open fds at most +10.
# Exits 1 when not flat or when any invariant was violated.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh

muster=''
seed=1
minutes=30
cluster_file=$REPO/e2e/clusters/gpu-topo-100.yaml
dir=''
out=${TMPDIR:-/tmp}/muster-soak-out
extra=()
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }

log() { printf '[soak] %s\n' "$*" >&2; }
rm -rf -- "$out"
mkdir -p "$out"
[[ -n $dir ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-soak.XXXXXX")
start=$SECONDS
log "seed $seed, $minutes min; cluster ${cluster_file#"$REPO"/} in $dir with $muster"
cleanup() {
  cp -r "$dir/logs" "$out/cluster-logs" 2>/dev/null || true
  "$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || log "cluster.sh down failed (see $dir)"
}
trap cleanup EXIT
"$CLUSTER" up --cluster "$cluster_file" --dir "$dir" --muster "$muster" --no-build \
  --watch-pid $$ >"$out/cluster-env.sh" 2>"$out/cluster-up.log" ||
  { tail -n 20 "$out/cluster-up.log" >&2; echo "the cluster did not come up" >&2; exit 1; }
log "cluster up in $((SECONDS - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
"$CLUSTER" status --dir "$dir" 2>&1 | grep -E 'extender|reconciler' | sed 's/^/[soak] /' >&2 || true

rc=0
python3 "$HERE/soak.py" run "$dir" --seed "$seed" --minutes "$minutes" --out "$out" \
  ${extra[@]+"${extra[@]}"} | tee "$out/soak.log" || rc=$?
log "done in $((SECONDS - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg)); artifacts: $out"
((rc == 0)) || exit "$rc"
