#!/usr/bin/env bash
# down_clean: `cluster.sh down` leaves nothing behind. Reads the cluster's
# state file first, runs down, then checks on its own (not trusting down's
# verdict) that no recorded process is alive, no recorded port is listening
# and the state directory is gone. ctest runs it as the e2e_cluster fixture's
# cleanup (e2e_cluster_down) with MUSTER_E2E_DIR set.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=gone.sh
source "$HERE/gone.sh"
dir=${MUSTER_E2E_DIR:?MUSTER_E2E_DIR must name the cluster directory}
say() { printf '[down_clean] %s\n' "$*"; }

if [[ ! -f $dir/state ]]; then
  say "no cluster state in $dir (up failed or never ran); running down anyway"
  "$HERE/../cluster/cluster.sh" down --dir "$dir"
  exit 0
fi
state=$(<"$dir/state")
rc=0
"$HERE/../cluster/cluster.sh" down --dir "$dir" || rc=$?
((rc == 0)) || say "cluster.sh down exited $rc"
problems=0
verify_gone "$state" "$dir" || problems=$?
nprocs=$(grep -c '^proc ' <<<"$state" || true)
nports=$(grep -c '^port ' <<<"$state" || true)
if ((problems == 0 && rc == 0)); then
  say "ok: $nprocs recorded processes gone, $nports recorded ports not listening, $dir removed"
  exit 0
fi
say "FAILED: $problems thing(s) left behind, down exit $rc"
exit 1
