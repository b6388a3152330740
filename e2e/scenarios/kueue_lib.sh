# Kueue's side of a run, shared by the gang scenarios (gang_lib.sh) and
# bench/gang_wait.sh (sourced, not run). Needs MUSTER_KUBECTL (the cluster's
# env, `cluster.sh up`); every function returns non-zero on failure and
# leaves the message to the caller.
# shellcheck shell=bash

KUEUE_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# kueue_apply_queues FIXTURE NAMESPACE: apply FIXTURE (Kueue's queues) with
# @CPU@, @MEMORY@, @GPU@ the nodes' summed allocatable and @NAMESPACE@ the
# side's namespace; prints the quota.
kueue_apply_queues() {
  local fixture=$1 ns=$2 cpu memory gpu
  read -r cpu memory gpu < <("$MUSTER_KUBECTL" get nodes -o json | python3 "$KUEUE_LIB_DIR/kueue_workloads.py" --capacity) ||
    return 1
  sed -e "s|@CPU@|$cpu|" -e "s|@MEMORY@|$memory|" -e "s|@GPU@|$gpu|" -e "s|@NAMESPACE@|$ns|" "$fixture" |
    "$MUSTER_KUBECTL" apply -f - >/dev/null || return 1
  echo "cpu $cpu, memory $memory, nvidia.com/gpu $gpu"
}

# kueue_queues_active NAMESPACE LOCALQUEUE...: every one is Active.
kueue_queues_active() {
  local ns=$1 q
  shift
  for q in "$@"; do
    [[ $("$MUSTER_KUBECTL" -n "$ns" get localqueue "$q" \
      -o 'jsonpath={.status.conditions[?(@.type=="Active")].status}') == True ]] || return 1
  done
}

# kueue_save_workloads NAMESPACE FILE: Kueue's Workloads of NAMESPACE saved
# to FILE (its own record of what it admitted and evicted); prints their
# summary (kueue_workloads.py).
kueue_save_workloads() {
  "$MUSTER_KUBECTL" -n "$1" get workloads.kueue.x-k8s.io -o json >"$2" || return 1
  python3 "$KUEUE_LIB_DIR/kueue_workloads.py" "$2"
}

# kueue_release CLUSTER_DIR NAMESPACE: drop Kueue's finalizer from the
# namespace's deleted pods (Kueue lets them go one pod group at a time; the
# measurement is over); prints how many.
kueue_release() { python3 "$KUEUE_LIB_DIR/kueue_workloads.py" --release "$1" "$2"; }
