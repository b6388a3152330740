#!/usr/bin/env bash
# `make bench-scale` (issue 22): muster at 1000 and 5000 kwok nodes against
# the stock kube-scheduler, on the real control plane, one size after the
# other on a fresh cluster each:
#   1. throughput (bench/scheduling_throughput.sh): 3000 plain one-GPU pods
#      on kwok-1000 and 10 000 on kwok-5000, stock and volcano+muster
#      alternating, RUNS runs each; pods/s from the release, API writes per
#      pod and CPU per pod of each side; medians, spread and ratios;
#   2. gang wait (bench/gang_wait.sh): p50/p99 from a gang's last pod to
#      minMember bound, 60 gangs, at both sizes;
#   3. restart (bench/restart.sh): the extender kill -9'd 5 times with 5000
#      nodes and 50 000 pods, the reconciler with 5000 Jobs: kill -> ready,
#      RSS above idle, double bookings.
# Not CI: about 1.5 h on a 2-core host.
#
# usage: bench/scale.sh [--muster BIN] [--runs R] [--out DIR] [--only throughput|gang|restart]
#   BIN  the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   R    throughput runs per side and size (default 3)
#   DIR  figures and logs (default ${TMPDIR:-/tmp}/muster-scale): throughput.jsonl,
#        gang-1000/, gang-5000/, restart.json and each step's output
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

muster=''
runs=3
out=${TMPDIR:-/tmp}/muster-scale
only=''
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }
mkdir -p "$out"
step() { [[ -z $only || $only == "$1" ]]; }
log() { printf '[scale] %s\n' "$*" >&2; }

if step throughput; then
  : >"$out/throughput.jsonl"
  for size in "1000 3000" "5000 10000"; do
    read -r nodes pods <<<"$size"
    log "throughput: $nodes nodes, $pods pods, $runs runs a side"
    "$HERE/scheduling_throughput.sh" --muster "$muster" --cluster "$REPO/e2e/clusters/kwok-$nodes.yaml" \
      --pods "$pods" --runs "$runs" --out "$out/throughput.jsonl" | tee "$out/throughput-$nodes.txt"
  done
fi
if step gang; then
  for nodes in 1000 5000; do
    log "gang wait: $nodes nodes"
    "$HERE/gang_wait.sh" --muster "$muster" --cluster "$REPO/e2e/clusters/kwok-$nodes.yaml" \
      --out "$out/gang-$nodes" | tee "$out/gang-$nodes.txt"
  done
fi
if step restart; then
  log "restart: 5000 nodes, 50 000 pods, 5000 Jobs"
  "$HERE/restart.sh" --muster "$muster" --out "$out/restart.json" | tee "$out/restart.txt"
fi
if step throughput; then
  echo "== throughput, both sizes (pods per run: 3000 at 1000 nodes, 10 000 at 5000) =="
  python3 "$HERE/throughput_figures.py" report "$out/throughput.jsonl"
fi
