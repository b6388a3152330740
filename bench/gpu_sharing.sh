#!/usr/bin/env bash
# GPU sharing, placement quality (issue 18 acceptance 5): 100 nodes x 8 GPUs,
# a seeded mix of whole-GPU pods (1/2/4/8), fractions (0.25/0.5/0.75) and
# memory-bound vGPU pods arriving one after another, some leaving; muster's
# extender verbs (filter, prioritize, bind, in process) against first-fit on
# the same arrival order. bench/gpu_sharing_bench.cc says how and why; this
# runs it for two loads and prints its tables:
#   - offer 1.2x the GPUs, mean lifetime 4x the run (the default): the
#     cluster fills up toward the end, about an eighth of the pods leave;
#   - offer 1.5x, mean lifetime 2x: full for the second half of the run,
#     about a fifth leave (a steady state with churn).
# No cluster is needed; about 3 s per load.
#
# usage: bench/gpu_sharing.sh [--bin BIN] [--seed N] [--runs N]
#   BIN  the gpu_sharing_quality binary (default build-bench/bench/gpu_sharing_quality,
#        which make bench-sharing builds)
#   N    the first seed (default 1) and how many seeds per load (default 9)
# Exits non-zero when the bench failed one of its checks (a GPU over its
# limits, muster's ledger not the Bindings', muster refusing a request that
# first-fit's rules place on muster's own state).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

bin=$REPO/build-bench/bench/gpu_sharing_quality
seed=1
runs=9
while (($#)); do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gpu_sharing.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ ! -x $bin ]]; then
  echo "gpu_sharing.sh: no $bin; make bench-sharing builds it" >&2
  exit 2
fi

status=0
for load in "--offer=1.2 --life=4" "--offer=1.5 --life=2"; do
  echo "=== gpu_sharing_quality $load"
  # shellcheck disable=SC2086 # the load is two flags
  "$bin" --seed="$seed" --runs="$runs" $load || status=$?
  echo
done
exit "$status"
