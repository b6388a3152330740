#!/usr/bin/env bash
# Restart-to-ready and memory of muster's sidecars at scale (issue 22,
# acceptance 3): the extender killed (kill -9) with 5000 kwok nodes and
# 50 000 real pods in the cluster, each of 5 kills during a burst of
# bindings, and the reconciler with 5000 Volcano Jobs. Targets: ready
# (caches synced, reservations rebuilt, /readyz 200) <= 5 s after the kill,
# RSS <= 64 MiB above idle, no node double-booked after a restart.
#
# usage: bench/restart.sh [--muster BIN] [--cluster FILE] [--dir DIR] [--out FILE] [--keep]
#                         [-- restart.py flags, e.g. --kills 5 --jobs 5000]
#   BIN   the muster binary (default build-bench/cmd/muster, else build/cmd/muster)
#   FILE  the nodes to create (default e2e/clusters/kwok-5000.yaml)
#   --out FILE  the figures as JSON
#   --keep      leave the cluster running (filling it takes minutes; rerun
#               `bench/restart.py DIR FILE` on it: it skips what exists)
#
# The cluster starts empty (a cluster file with no nodes, with cluster.sh's
# large-cluster settings forced: MUSTER_LARGE_CLUSTER=1) so the sidecars'
# idle RSS is taken before any node exists; bench/restart.py then creates
# the nodes and pods and runs the kills.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"
CLUSTER=$REPO/e2e/cluster/cluster.sh

muster=''
cluster_file=$REPO/e2e/clusters/kwok-5000.yaml
dir=''
out=''
keep=0
while (($#)); do
  case $1 in
    --muster) muster=$2; shift 2 ;;
    --cluster) cluster_file=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $muster ]] || muster=$(bench_muster_binary "$REPO")
[[ -x $muster ]] || { echo "no muster binary (build it, or pass --muster)" >&2; exit 1; }
[[ -n $dir ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-restart.XXXXXX")
echo "[restart] starting an empty cluster in $dir" >&2
watch=(--watch-pid $$)
((keep)) && watch=()
# A cluster file with no nodes (kept out of e2e/clusters: its lint refuses
# a layout without nodes, which is what a typo there would give).
empty=$(mktemp "${TMPDIR:-/tmp}/muster-empty-cluster.XXXXXX.yaml")
cat >"$empty" <<'YAML'
name: empty
description: no nodes
defaults:
  capacity:
    cpu: "1"
    memory: 1Gi
    pods: "1"
  annotations:
    kwok.x-k8s.io/node: fake
groups:
  none:
    count: 0
YAML
env=$(MUSTER_LARGE_CLUSTER=1 "$CLUSTER" up --cluster "$empty" --dir "$dir" \
  --muster "$muster" "${watch[@]}") || { echo "the cluster did not come up" >&2; exit 1; }
eval "$env"
if ((keep)); then
  echo "[restart] the cluster stays up: $CLUSTER down --dir $dir" >&2
else
  trap '"$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true' EXIT
fi
python3 "$HERE/restart.py" "$dir" "$cluster_file" ${out:+--out "$out"} "$@"
