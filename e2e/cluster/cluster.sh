#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for muster's e2e tests and demo:
# etcd, kube-apiserver, kube-controller-manager, kwok (fake GPU nodes and pod
# lifecycles) and two kube-schedulers - the stock one (profile
# default-scheduler) and one with profile `volcano` that calls the muster
# extender. Plain processes, no containers.
#
# Usage:
#   cluster.sh up [--cluster FILE] [--dir DIR] [--muster BIN] [--no-build]
#                 [--watch-pid PID | --watch-parent] [--replicas N] [--api-proxy]
#                 [--peer kueue]
#       Start a cluster. FILE: node layout (default e2e/clusters/gpu-4.yaml,
#       format in cluster_helper.py). DIR: state directory (default: a fresh
#       ${TMPDIR:-/tmp}/muster-e2e.XXXXXX); it must be new, empty, or hold a
#       dead cluster. --muster BIN: also run `BIN extender` on the recorded
#       extender port (and wait for its /readyz); without it the `volcano`
#       profile's pods fail their extender call until one is started.
#       --no-build: fail instead of building missing components.
#       --watch-pid/--watch-parent: also start a guard that runs `down` when
#       that process (or the caller of this script) exits - so a test runner
#       that is killed leaves nothing behind.
#       --replicas N: 1 (default) or 2 replicas of the `volcano` trio
#       (kube-scheduler + extender + reconciler), as the Deployment's pods
#       would run: see "Replicas" below.
#       --api-proxy: also run e2e/cluster/api_proxy.py (recorded as proc
#       `api-proxy`, `port api-proxy N`) in front of the kube-apiserver, its
#       control file DIR/api-proxy.control (`pass` at first), and give the
#       muster sidecars (extender, reconciler, of every replica) kubeconfigs
#       pointing at the proxy's port; kube-schedulers, kcm, kwok and admin
#       stay direct. See `api-proxy` below.
#       --peer kueue: also run Kueue v0.17's controller-manager (built into the
#       cache by build-components.sh --kueue; ports kueue-webhook and
#       kueue-health), its CRDs and webhooks, for the pods of namespaces
#       labelled kueue-peer=true (e2e/cluster/kueue.sh says what it takes).
#       Progress goes to stderr; stdout gets the `export ...` lines of `env`.
#   cluster.sh down [--dir DIR]
#       Stop exactly the processes recorded in DIR/state (TERM, then KILL after
#       a bounded wait), check that none is alive and no recorded port is
#       listening, remove DIR. Exits non-zero if anything is left behind.
#   cluster.sh env [--dir DIR]
#       Print `export` lines: KUBECONFIG, MUSTER_KUBECTL, MUSTER_K8S_VERSION, MUSTER_E2E_DIR,
#       MUSTER_GENERIC_WORKLOAD (1|0, see below), MUSTER_EXTENDER_PORT and
#       MUSTER_<COMPONENT>_PORT for every port.
#   cluster.sh status [--dir DIR]
#       Show each recorded process (alive/dead) and port.
#   cluster.sh extender start|stop|restart [--dir DIR] [--muster BIN] [--signal SIG]
#       Manage the muster extender of a running cluster: start it on the
#       recorded port (BIN defaults to the one `up --muster` recorded) and
#       wait for /readyz; stop it with SIG (default TERM; KILL for a crash
#       test) and drop its `proc` line. Each start keeps the previous log as
#       logs/extender.<n>.log.
#   cluster.sh reconciler start|stop|restart [--dir DIR] [--muster BIN] [--signal SIG]
#       The same for `BIN reconciler` (Volcano Jobs -> PodGroups + pods),
#       which `up --muster` also starts; its metrics port is `port reconciler`.
#   cluster.sh replica kill|start|restart R [--dir DIR] [--muster BIN]
#       (R: 0 or 1 on a cluster `up --replicas 2`; 0 alone is the one trio
#       of a one-replica cluster) kill: SIGKILL replica R's kube-scheduler,
#       extender and reconciler at once and drop their `proc` lines; start:
#       start them again (same ports, hostname, identity) and wait for the
#       scheduler's /healthz and the sidecars' /readyz; restart: SIGTERM,
#       wait for the exit (KILL after the stop timeout), start.
#   cluster.sh leaders [--dir DIR]
#       Print `scheduler <holder>` and `reconciler <holder>` from the Leases
#       volcano-scheduler and muster-reconciler in muster-e2e (the replica's
#       hostname, e.g. muster-replica-1; `-` when nobody holds one).
#   cluster.sh component stop|start|restart NAME [--dir DIR] [--signal SIG] [--stop-timeout S]
#       (NAME: kube-apiserver or etcd) stop: save the recorded process's
#       command line and working directory (/proc/PID/cmdline, cwd) as
#       DIR/NAME.cmdline, signal it (SIG, default TERM; KILL after S s,
#       default the stop timeout: a kube-apiserver with open watches does
#       not exit on TERM within 15 s here, etcd takes ~7 s), wait for the
#       exit, drop its `proc` line; start: run that
#       saved command line again (same flags, ports, data dir), record it,
#       and wait until healthy (etcd: its /health, then the apiserver's
#       /readyz; kube-apiserver: /readyz); restart: stop, then start. Each
#       start keeps the previous log as logs/NAME.<n>.log. start and
#       restart print the seconds they took (signal to healthy) on stdout.
#   cluster.sh api-proxy delay MS|reset SECONDS|pass [--dir DIR]
#       On a cluster `up --api-proxy`: write that fault line to the proxy's
#       control file (api_proxy.py applies it within 100 ms).
# Environment: MUSTER_K8S_VERSION (the Kubernetes version of every control-plane
# component and kubectl: see build-components.sh; `env` prints it as
# MUSTER_K8S_VERSION), MUSTER_APISERVER_ARGS (extra kube-apiserver flags), MUSTER_CACHE,
# MUSTER_KUBE_API_QPS (client rate limit of the schedulers and the extender),
# MUSTER_APISERVER_TIMEOUT / MUSTER_READY_TIMEOUT / MUSTER_STOP_TIMEOUT (seconds),
# MUSTER_GENERIC_WORKLOAD (0, the default, or 1; Kubernetes >= 1.37 only: the
# upstream gang API, scheduling.k8s.io/v1beta1 Workload and PodGroup, behind
# the feature gate GenericWorkload; see "GenericWorkload" below),
# MUSTER_GANG_WEBHOOK (0, the default, or 1: the extender serves its pod
# webhook, manifests/webhook, registered with the API server at
# https://127.0.0.1:<port webhook>/mutate-pods; volcano PodGroup members are
# then gated at creation).
# Without --dir, down/env/status use the cluster named in
# ${MUSTER_CACHE:-~/.cache/muster}/current-cluster (written by the last `up`).
#
# DIR layout: state (the record below), admin.kubeconfig (paths relative to
# DIR), extender.kubeconfig and reconciler.kubeconfig (see below), pki/,
# logs/<component>.log, etcd/, nodes.json, *.yaml configs.
#
# Least privilege: the extender and the reconciler never run as admin. `up`
# applies the ClusterRoles of manifests/rbac (muster-extender,
# muster-reconciler), creates the namespace muster-e2e with ServiceAccounts
# `extender` and `reconciler`, each bound to its own ClusterRole only, and
# writes DIR/<name>.kubeconfig with a TokenRequest token of that account;
# the sidecars always use those. A permission missing from manifests/rbac
# shows up as 403 Forbidden in logs/<name>.log and a failing scenario.
# DIR/state is line-based: `key value`, `port <name> <port>`,
# `proc <name> <pid> <starttime>`. Tools that start more processes for this
# cluster (the extender, the reconciler) may append `proc` lines (and `port`
# lines for what they listen on); `down` stops every proc line (the guard
# first, then newest first) and never signals a PID whose start time no longer
# matches (PID reuse).
#
# Replicas (`up --replicas 2`, recorded as `replicas 2`): replica R runs its
# kube-scheduler (profile volcano), extender and reconciler with hostname
# muster-replica-R (`unshare --uts`, as a Pod's containers share one), each
# on its own ports. Replica 0 keeps the names volcano-scheduler, extender and
# reconciler (processes and ports); replica 1 is volcano-scheduler-1,
# extender-1, reconciler-1. The kube-schedulers elect a leader on the Lease
# muster-e2e/volcano-scheduler (manifests/scheduler's leaderElection, its
# namespace replaced); each extender follows it (--leader-elect=true
# --leader-lease=muster-e2e/volcano-scheduler --leader-identity=muster-replica-R:
# it acts only while its own kube-scheduler leads); the reconcilers elect one
# on muster-e2e/muster-reconciler. manifests/rbac/leader-election-role.yaml
# is applied in muster-e2e and bound to both ServiceAccounts. With one
# replica (the default) there is no leader election at all.
#
# GenericWorkload (Kubernetes >= 1.37 with MUSTER_GENERIC_WORKLOAD=1;
# recorded as `generic_workload 1|0`): Kubernetes' own gang scheduling -
# scheduling.k8s.io/v1beta1 PodGroup (and Workload), pods joining one through
# spec.schedulingGroup.podGroupName - is beta and off by default in 1.37. muster
# treats members of such a PodGroup (schedulerName volcano) as its gangs, next
# to Volcano's PodGroups, so the harness can turn the gate on everywhere a real
# cluster would need it: kube-apiserver (the gate plus
# --runtime-config=scheduling.k8s.io/v1beta1=true: a beta API is not served by
# default even with its gate on), kube-controller-manager (its
# podgroup-protection-controller, added to the controller list: the apiserver's
# PodGroupProtection admission puts a finalizer on every new PodGroup, which
# only that controller removes - without it deleting a PodGroup, or its
# namespace, would hang) and both kube-schedulers (the stock one, so a
# comparison sees upstream gang scheduling too, and the volcano one, whose
# GangScheduling plugin - PreEnqueue, PlacementFeasible, Permit - works with
# muster's filter: muster reserves the whole gang first, so no member waits at
# Permit). Below 1.37 it is always off: 1.35/1.36 had only an alpha
# v1alpha1 API of another shape, 1.34 none. Off by default: with the gate on,
# `kubectl get podgroups` (and `pg`) name Kubernetes' PodGroups, no longer
# Volcano's - kubectl prefers the built-in group - which every script that
# reads Volcano's by the short name would have to spell out
# (podgroups.scheduling.volcano.sh); e2e_gw_upstream_gang and `make
# bench-peers` bring up clusters with it on.
#
# Ports: chosen at `up` from 20000 up to the kernel's ephemeral range, all
# bound on 127.0.0.1. The muster extender's port is picked and recorded too
# (`port extender`); the `volcano` scheduler's config points at it, and the
# extender listens there once started (`up --muster` or `extender start`).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
readonly HERE REPO
readonly SELF=$HERE/cluster.sh
readonly HELPER=$HERE/cluster_helper.py
# shellcheck source=e2e/cluster/kueue.sh
source "$HERE/kueue.sh"
readonly CACHE_ROOT=${MUSTER_CACHE:-$HOME/.cache/muster}
readonly POINTER=$CACHE_ROOT/current-cluster
readonly STATE_MAGIC='# muster e2e cluster state'

# API client rate limit (requests/s; burst twice that) of both kube-schedulers,
# the extender and kube-controller-manager alike, so no side of a comparison is throttled by its
# client: kube-scheduler's default of 50 would cap the stock scheduler's
# binds at 50 pods/s.
readonly API_QPS=${MUSTER_KUBE_API_QPS:-500}

# The kube-schedulers serve /metrics to anyone on 127.0.0.1, as /healthz:
# they run without --authentication-kubeconfig/--authorization-kubeconfig, so
# every client is system:anonymous and only these paths are allowed. The
# scenarios read the schedulers' own counters (e.g. upstream_gang.sh:
# scheduler_permit_wait_duration_seconds, scheduler_podgroup_schedule_attempts_total).
# kube-scheduler's default list is /healthz,/readyz,/livez.
readonly SCHEDULER_ALLOW_PATHS=--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics

# Timeouts (seconds).
readonly APISERVER_TIMEOUT=${MUSTER_APISERVER_TIMEOUT:-90}
readonly READY_TIMEOUT=${MUSTER_READY_TIMEOUT:-120}
STOP_TIMEOUT=${MUSTER_STOP_TIMEOUT:-15} # component --stop-timeout sets it

now_us() { local t=${EPOCHREALTIME//[.,]/}; echo "$t"; }
T0=$(now_us)
fmt_secs() { # microseconds -> "12.345"
  local ms=$(($1 / 1000))
  printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}
log() { printf '[cluster %8ss] %s\n' "$(fmt_secs $(($(now_us) - T0)))" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

# --- process bookkeeping ------------------------------------------------------
# starttime (clock ticks since boot, /proc/PID/stat field 22) identifies a
# process together with its PID, so a reused PID is never signalled.
proc_starttime() { # pid -> starttime, or fails
  local stat rest
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  rest=${stat##*) } # fields after "(comm) "; comm may contain spaces
  # shellcheck disable=SC2086 # split on purpose
  set -- $rest
  # $1 is field 3 (state); field 22 is $20.
  echo "${20}"
}
proc_state() { # pid -> one-letter state (R, S, Z, ...)
  local stat rest
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  rest=${stat##*) }
  echo "${rest%% *}"
}
# alive PID STARTTIME: the recorded process still exists and is not a zombie.
alive() {
  local st state
  st=$(proc_starttime "$1") || return 1
  [[ $st == "$2" ]] || return 1
  state=$(proc_state "$1") || return 1
  [[ $state != Z ]]
}

# --- state file ------------------------------------------------------------------
state_get() { # dir key -> value of the first `key value` line
  local k v
  while read -r k v; do
    if [[ $k == "$2" ]]; then
      echo "$v"
      return 0
    fi
  done <"$1/state"
  return 1
}
state_procs() { # dir -> "name pid starttime" lines: guards first, then newest first
  local k name pid st lines=() guards=()
  while read -r k name pid st; do
    [[ $k == proc ]] || continue
    if [[ $name == guard ]]; then guards+=("$name $pid $st"); else lines+=("$name $pid $st"); fi
  done <"$1/state"
  local i
  for ((i = 0; i < ${#guards[@]}; i++)); do echo "${guards[i]}"; done
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do echo "${lines[i]}"; done
}
state_ports() { # dir -> "name port" lines
  local k name port
  while read -r k name port; do
    [[ $k == port ]] && echo "$name $port"
  done <"$1/state"
}
state_port() { # dir name -> the port recorded for name ("" when none)
  state_ports "$1" | awk -v w="$2" '$1 == w {print $2}'
}

resolve_dir() { # [dir] -> existing cluster dir with a state file
  local dir=${1:-}
  if [[ -z $dir ]]; then
    [[ -f $POINTER ]] || die "no --dir given and no current cluster ($POINTER missing)"
    dir=$(<"$POINTER")
  fi
  [[ -f $dir/state ]] || die "no cluster state in '$dir' (nothing to do?)"
  [[ $(head -n1 "$dir/state") == "$STATE_MAGIC" ]] || die "$dir/state is not a muster cluster state file"
  (cd "$dir" && pwd)
}

listening_ports() { # -> every local TCP port in LISTEN state, one per line
  ss -Hltn | awk '{n = split($4, a, ":"); print a[n]}' | sort -un
}

# --- down ------------------------------------------------------------------------
# Stops every recorded process of DIR (newest first), verifies, removes DIR.
do_down() { # dir [seconds to wait after SIGTERM before SIGKILL]
  local dir=$1 stop_timeout=${2:-$STOP_TIMEOUT} name pid st left=() skip_pid=${MUSTER_CLUSTER_GUARD_PID:-}
  local -a names=() pids=() sts=()
  while read -r name pid st; do
    [[ -n $name ]] || continue
    [[ $pid == "$skip_pid" ]] && continue # the guard running this very `down`
    names+=("$name")
    pids+=("$pid")
    sts+=("$st")
  done < <(state_procs "$dir")

  local i n=${#pids[@]} deadline
  for ((i = 0; i < n; i++)); do
    if alive "${pids[i]}" "${sts[i]}"; then
      kill -TERM "${pids[i]}" 2>/dev/null || true
    fi
  done
  deadline=$(($(now_us) + stop_timeout * 1000000))
  while :; do
    left=()
    for ((i = 0; i < n; i++)); do
      alive "${pids[i]}" "${sts[i]}" && left+=("$i")
    done
    ((${#left[@]} == 0)) && break
    if (($(now_us) > deadline)); then
      for i in "${left[@]}"; do
        log "${names[i]} (pid ${pids[i]}) still running ${stop_timeout}s after SIGTERM: SIGKILL"
        kill -KILL "${pids[i]}" 2>/dev/null || true
      done
      # SIGKILL cannot be ignored; give the kernel a moment to reap.
    
      for _ in 1 2 3 4 5 6 7 8 9 10; do
        left=()
        for ((i = 0; i < n; i++)); do
          alive "${pids[i]}" "${sts[i]}" && left+=("$i")
        done
        ((${#left[@]} == 0)) && break
        sleep 0.2
      done
      break
    fi
    sleep 0.1
  done

  local problems=()
  for i in "${left[@]}"; do
    problems+=("process ${names[i]} (pid ${pids[i]}) still alive")
  done
  # Ports: a component may close its listener a moment after its PID is
  # gone (never in practice, but poll briefly rather than race).
  local busy=() port t
  for t in 1 2 3 4 5 6 7 8 9 10; do
    busy=()
    local listening
    listening=$(listening_ports)
    while read -r name port; do
      grep -qx "$port" <<<"$listening" && busy+=("$name:$port")
    done < <(state_ports "$dir")
    ((${#busy[@]} == 0)) && break
    sleep 0.2
  done
  for port in "${busy[@]}"; do
    problems+=("port $port still listening")
  done
  if ((${#problems[@]})); then
    for t in "${problems[@]}"; do log "LEFT BEHIND: $t"; done
    log "state kept in $dir"
    return 1
  fi
  state_cleanup "$dir"
  rm -rf -- "$dir"
  if [[ -f $POINTER && $(<"$POINTER") == "$dir" ]]; then rm -f -- "$POINTER"; fi
  log "down: stopped ${n} process(es), no recorded port listening, removed $dir"
}

# state_cleanup DIR: remove what `cleanup PATH` lines recorded outside DIR
# (Kueue's metrics certificates), once every process is gone.
state_cleanup() {
  local path
  while read -r path; do
    [[ -n $path ]] && rm -rf -- "$path"
  done < <(awk '$1 == "cleanup" {print $2}' "$1/state")
}

cmd_down() {
  local dir=
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      *) die "down: unknown argument $1" ;;
    esac
  done
  if [[ -n $dir && ! -e $dir ]]; then
    log "down: $dir does not exist (already down)"
    if [[ -f $POINTER && $(<"$POINTER") == "$dir" ]]; then rm -f -- "$POINTER"; fi
    return 0
  fi
  dir=$(resolve_dir "$dir")
  do_down "$dir"
}

# --- env / status --------------------------------------------------------------
print_env() { # dir
  local dir=$1 name port var
  printf 'export KUBECONFIG=%q\n' "$dir/admin.kubeconfig"
  printf 'export MUSTER_E2E_DIR=%q\n' "$dir"
  printf 'export MUSTER_KUBECTL=%q\n' "$(state_get "$dir" kubectl)"
  printf 'export MUSTER_K8S_VERSION=%q\n' "$(state_get "$dir" k8s_version || true)"
  printf 'export MUSTER_GENERIC_WORKLOAD=%s\n' "$(generic_workload_of "$dir")"
  while read -r name port; do
    var=${name^^}
    var=${var//-/_}
    printf 'export MUSTER_%s_PORT=%s\n' "$var" "$port"
  done < <(state_ports "$dir")
}

cmd_env() {
  local dir=
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      *) die "env: unknown argument $1" ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  print_env "$dir"
}

cmd_status() {
  local dir='' name pid st port listening rc=0
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      *) die "status: unknown argument $1" ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  echo "cluster $dir"
  while read -r name pid st; do
    if alive "$pid" "$st"; then
      printf '  %-26s pid %-8s alive\n' "$name" "$pid"
    else
      printf '  %-26s pid %-8s DEAD\n' "$name" "$pid"
      rc=1
    fi
  done < <(state_procs "$dir")
  listening=$(listening_ports)
  while read -r name port; do
    if grep -qx "$port" <<<"$listening"; then
      printf '  port %-21s %-12s listening\n' "$name" "$port"
    else
      printf '  port %-21s %-12s -\n' "$name" "$port"
    fi
  done < <(state_ports "$dir")
  return "$rc"
}

# --- replicas ----------------------------------------------------------------------
# See "Replicas" in the header. Replica 0's names are today's.
readonly MAX_REPLICAS=2
cluster_replicas() { state_get "$1" replicas || echo 1; } # dir -> replica count
replica_name() { # role replica -> its process and port name
  if (($2 == 0)); then echo "$1"; else echo "$1-$2"; fi
}
replica_host() { echo "muster-replica-$1"; } # replica -> its hostname and identity
# replica_wrap R: REPLICA_WRAP = the words that run a command with replica R's
# hostname in a UTS namespace of its own. unshare (no --fork) and sh's exec
# keep the PID, so `start` records the final process.
REPLICA_WRAP=()
replica_wrap() {
  # shellcheck disable=SC2016 # expanded by sh -c, not here
  REPLICA_WRAP=(unshare --uts sh -c 'hostname "$0" || exit 1; exec "$@"' "$(replica_host "$1")")
}

# --- the muster sidecars: extender and reconciler -----------------------------------

# start_sidecar ROLE DIR BIN [REPLICA]: run `BIN ROLE` (extender | reconciler)
# on its recorded port (`port NAME`; NAME is ROLE, or ROLE-R for replica R > 0),
# record it, wait until its caches synced (/readyz). Earlier logs are kept,
# numbered. MUSTER_<ROLE>_FLAGS: extra flags for experiments (e.g.
# MUSTER_EXTENDER_FLAGS=--gang-head-of-line-after=0s). On a cluster with
# two replicas it runs with its replica's hostname and leader election.
start_sidecar() {
  local role=$1 dir=$2 bin=$3 replica=${4:-0} name port n=1 flags_var
  name=$(replica_name "$role" "$replica")
  port=$(state_port "$dir" "$name") || true
  [[ -n $port ]] || die "no $name port recorded in $dir/state"
  [[ -x $bin ]] || die "muster binary '$bin' is not an executable file"
  if [[ -f $dir/logs/$name.log ]]; then
    while [[ -e $dir/logs/$name.$n.log ]]; do n=$((n + 1)); done
    mv "$dir/logs/$name.log" "$dir/logs/$name.$n.log"
  fi
  UP_DIR=$dir
  flags_var=MUSTER_${role^^}_FLAGS
  local -a extra=() wrap=() leader=()
  read -ra extra <<<"${!flags_var:-}"
  [[ -f $dir/$role.kubeconfig ]] || die "no $dir/$role.kubeconfig (written by up)"
  if (($(cluster_replicas "$dir") > 1)); then
    replica_wrap "$replica"
    wrap=("${REPLICA_WRAP[@]}")
    local lease=volcano-scheduler
    [[ $role == reconciler ]] && lease=muster-reconciler
    leader=(--leader-elect=true --leader-lease="$SIDECAR_NAMESPACE/$lease"
      --leader-identity="$(replica_host "$replica")")
  fi
  local webhook_port
  webhook_port=$(state_port "$dir" webhook) || true
  if [[ $role == extender && $replica == 0 && -n $webhook_port ]]; then
    extra+=(--webhook-port="$webhook_port" --webhook-listen=127.0.0.1
      --webhook-cert="$dir/pki/webhook.crt" --webhook-key="$dir/pki/webhook.key")
  fi
  start "$name" "${wrap[@]}" "$bin" "$role" --listen=127.0.0.1 --port="$port" \
    --kubeconfig="$dir/$role.kubeconfig" --kube-api-qps="$API_QPS" --kube-api-burst=$((API_QPS * 2)) \
    "${leader[@]}" "${extra[@]}"
  wait_until "muster $name /readyz on port $port" 60 \
    curl -fsS --max-time 2 "http://127.0.0.1:$port/readyz" || die "the muster $name did not become ready"
}
start_extender() { start_sidecar extender "$@"; }
start_reconciler() { start_sidecar reconciler "$@"; }

# stop_sidecar DIR SIGNAL [NAME]: signal every live extender (or NAME: the
# reconciler) of DIR, wait for it to exit, and drop its `proc` line (a dead
# line would make `status` fail).
stop_sidecar() { stop_procs "$1" "$2" "${3:-extender}"; }

cmd_extender() { sidecar_command extender "$@"; }
cmd_reconciler() { sidecar_command reconciler "$@"; }

# sidecar_command extender|reconciler start|stop|restart [flags]
sidecar_command() {
  local which=$1 action=${2:-} dir='' bin='' sig=TERM
  shift
  (($#)) && shift
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      --muster) bin=${2:?--muster needs a value}; shift 2 ;;
      --signal) sig=${2:?--signal needs a value}; shift 2 ;;
      *) die "$which: unknown argument $1" ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  [[ -n $bin ]] || bin=$(state_get "$dir" muster_bin) || true
  case $action in
    start | restart)
      [[ -n $bin ]] || die "$which $action: no --muster BIN given and none recorded by up"
      [[ $action == restart ]] && stop_sidecar "$dir" "$sig" "$which"
      local k name pid st
      while read -r k name pid st; do
        [[ $k == proc && $name == "$which" ]] && alive "$pid" "$st" &&
          die "a $which is already running (pid $pid); use: $which restart"
      done <"$dir/state"
      "start_$which" "$dir" "$bin"
      log "$which ready"
      ;;
    stop) stop_sidecar "$dir" "$sig" "$which" ;;
    *) die "$which: expected start, stop or restart, got '$action'" ;;
  esac
}

# generic_workload_for VERSION: 1 when the cluster runs with the feature gate
# GenericWorkload (see "GenericWorkload" at the top), else 0. Kubernetes
# >= 1.37 (where scheduling.k8s.io/v1beta1 PodGroup exists): 1 with
# MUSTER_GENERIC_WORKLOAD=1. Older versions: always 0 (a requested 1 is
# reported and ignored, so one environment serves every tested version).
generic_workload_for() {
  local v=${1#v} want=${MUSTER_GENERIC_WORKLOAD:-0} major minor
  [[ $want == 0 || $want == 1 ]] || die "MUSTER_GENERIC_WORKLOAD=$want: expected 1 or 0"
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || die "cannot read the Kubernetes version '$1'"
  if ((major == 1 && minor < 37)); then
    if [[ ${MUSTER_GENERIC_WORKLOAD:-} == 1 ]]; then
      log "MUSTER_GENERIC_WORKLOAD=1 ignored: Kubernetes $1 has no scheduling.k8s.io/v1beta1 PodGroup"
    fi
    echo 0
    return 0
  fi
  echo "$want"
}
# generic_workload_of DIR: the recorded choice (0 for a state file from before it was recorded).
generic_workload_of() { state_get "$1" generic_workload 2>/dev/null || echo 0; }

# start_volcano_scheduler DIR REPLICA: replica R's kube-scheduler (profile
# volcano, config scheduler-volcano.yaml or scheduler-volcano-R.yaml) on its
# recorded port; with two replicas under its replica's hostname. A restart
# keeps the previous log, numbered.
start_volcano_scheduler() {
  local dir=$1 replica=$2 name port cfg kubectl n=1
  # The same feature gates as at `up` (a restarted replica must not lose
  # GenericWorkload, or its pod-group cycle would vanish mid-scenario).
  local -a gates=()
  if (($(generic_workload_of "$dir"))); then gates=(--feature-gates=GenericWorkload=true); fi
  name=$(replica_name volcano-scheduler "$replica")
  port=$(state_port "$dir" "$name") || true
  [[ -n $port ]] || die "no $name port recorded in $dir/state"
  cfg=$dir/scheduler-volcano.yaml
  ((replica == 0)) || cfg=$dir/scheduler-volcano-$replica.yaml
  kubectl=$(state_get "$dir" kubectl) || die "no kubectl recorded in $dir/state"
  if [[ -f $dir/logs/$name.log ]]; then
    while [[ -e $dir/logs/$name.$n.log ]]; do n=$((n + 1)); done
    mv "$dir/logs/$name.log" "$dir/logs/$name.$n.log"
  fi
  UP_DIR=$dir
  local -a wrap=()
  if (($(cluster_replicas "$dir") > 1)); then
    replica_wrap "$replica"
    wrap=("${REPLICA_WRAP[@]}")
  fi
  start "$name" "${wrap[@]}" "$(dirname "$kubectl")/kube-scheduler" --config="$cfg" \
    --bind-address=127.0.0.1 --secure-port="$port" "$SCHEDULER_ALLOW_PATHS" "${gates[@]}"
}
wait_volcano_scheduler() { # dir replica: its /healthz answers
  local name port
  name=$(replica_name volcano-scheduler "$2")
  port=$(state_port "$1" "$name") || true
  wait_until "$name /healthz" 60 curl -fsSk --max-time 2 "https://127.0.0.1:$port/healthz" ||
    die "$name not healthy"
}

# stop_procs DIR SIGNAL NAME...: signal every live recorded process of these
# names at once, wait for each to exit (SIGKILL after the stop timeout), drop
# their `proc` lines.
stop_procs() {
  local dir=$1 sig=$2 k name pid st deadline
  shift 2
  local -a pids=() sts=()
  local want=" $* "
  while read -r k name pid st; do
    [[ $k == proc && $want == *" $name "* ]] || continue
    if alive "$pid" "$st"; then
      kill "-$sig" "$pid" 2>/dev/null || true
      pids+=("$pid")
      sts+=("$st")
    fi
  done <"$dir/state"
  local i
  deadline=$(($(now_us) + STOP_TIMEOUT * 1000000))
  for ((i = 0; i < ${#pids[@]}; i++)); do
    while alive "${pids[i]}" "${sts[i]}"; do
      if (($(now_us) > deadline)); then
        log "pid ${pids[i]} still running ${STOP_TIMEOUT}s after SIG$sig: SIGKILL"
        kill -KILL "${pids[i]}" 2>/dev/null || true
        deadline=$(($(now_us) + 5000000))
      fi
      sleep 0.05
    done
  done
  local tmp=$dir/state.tmp
  awk -v w="$want" '!($1 == "proc" && index(w, " " $2 " "))' "$dir/state" >"$tmp" && mv "$tmp" "$dir/state"
  log "$*: stopped ${#pids[@]} process(es) with SIG$sig"
}

# replica kill|start|restart R
cmd_replica() {
  local action=${1:-} replica=${2:-} dir='' bin='' n
  (($# >= 2)) || die "usage: replica kill|start|restart R [--dir DIR] [--muster BIN]"
  shift 2
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      --muster) bin=${2:?--muster needs a value}; shift 2 ;;
      *) die "replica: unknown argument $1" ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  n=$(cluster_replicas "$dir")
  if ! [[ $replica =~ ^[0-9]+$ ]] || ((replica >= n)); then
    die "replica: no replica '$replica' (the cluster in $dir runs $n; up --replicas 2 runs two)"
  fi
  local -a names=()
  local role
  for role in volcano-scheduler extender reconciler; do names+=("$(replica_name "$role" "$replica")"); done
  [[ -n $bin ]] || bin=$(state_get "$dir" muster_bin) || true
  case $action in
    kill) stop_procs "$dir" KILL "${names[@]}" ;;
    start | restart)
      [[ -n $bin ]] || die "replica $action: no --muster BIN given and none recorded by up"
      [[ $action == restart ]] && stop_procs "$dir" TERM "${names[@]}"
      local k name pid st
      while read -r k name pid st; do
        [[ $k == proc && " ${names[*]} " == *" $name "* ]] && alive "$pid" "$st" &&
          die "$name of replica $replica is already running (pid $pid); use: replica restart $replica"
      done <"$dir/state"
      start_volcano_scheduler "$dir" "$replica"
      start_sidecar extender "$dir" "$bin" "$replica"
      start_sidecar reconciler "$dir" "$bin" "$replica"
      wait_volcano_scheduler "$dir" "$replica"
      log "replica $replica ($(replica_host "$replica")) ready"
      ;;
    *) die "replica: expected kill, start or restart, got '$action'" ;;
  esac
}

# leaders: who holds the two Leases (hostname part of the holder identity).
cmd_leaders() {
  local dir='' kubectl holder entry
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      *) die "leaders: unknown argument $1" ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  kubectl=$(state_get "$dir" kubectl)
  for entry in scheduler:volcano-scheduler reconciler:muster-reconciler; do
    holder=$("$kubectl" --kubeconfig "$dir/admin.kubeconfig" --request-timeout=5s get lease \
      -n "$SIDECAR_NAMESPACE" "${entry#*:}" -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null) || holder=
    holder=${holder%%_*} # kube-scheduler's "<hostname>_<uuid>"
    echo "${entry%%:*} ${holder:--}"
  done
}

# --- control-plane components: restart with the same command line -----------------
# See `component` in the header. The command line is read from /proc before
# the stop (so `up` records nothing more) and kept in DIR/NAME.cmdline:
# NUL-separated, the working directory first.
readonly RESTARTABLE=" kube-apiserver etcd "
component_proc() { # dir name -> "pid starttime" of its live proc line
  local k name pid st
  while read -r k name pid st; do
    [[ $k == proc && $name == "$2" ]] && alive "$pid" "$st" && echo "$pid $st" && return 0
  done <"$1/state"
  return 1
}
component_healthy() { # dir name: wait until NAME (and what depends on it) answers
  local dir=$1 port
  if [[ $2 == etcd ]]; then
    port=$(state_port "$dir" etcd) || true
    wait_until "etcd /health" "$APISERVER_TIMEOUT" curl -fsS --max-time 2 "http://127.0.0.1:$port/health" ||
      die "etcd did not become healthy"
  fi
  port=$(state_port "$dir" apiserver) || true
  wait_readyz "$dir" "$port" kube-apiserver "$APISERVER_TIMEOUT"
}
wait_readyz() { # dir port what timeout: the apiserver answers /readyz on port (direct or proxied)
  wait_until "$3 /readyz" "$4" \
    curl -fsS --max-time 2 --cacert "$1/pki/ca.crt" "https://127.0.0.1:$2/readyz" ||
    die "$3 did not become ready"
}
component_stop() { # dir name sig
  local dir=$1 name=$2 pid st cwd
  if read -r pid st < <(component_proc "$dir" "$name"); then
    cwd=$(readlink "/proc/$pid/cwd") || die "cannot read the working directory of $name (pid $pid)"
    { printf '%s\0' "$cwd"; cat "/proc/$pid/cmdline"; } >"$dir/$name.cmdline.tmp" ||
      die "cannot read the command line of $name (pid $pid)"
    [[ $(proc_starttime "$pid") == "$st" ]] || die "$name (pid $pid) exited while its command line was read"
    mv "$dir/$name.cmdline.tmp" "$dir/$name.cmdline"
  else
    log "$name is not running"
  fi
  stop_procs "$dir" "$3" "$name"
}
component_start() { # dir name
  local dir=$1 name=$2 n=1
  local -a words=()
  component_proc "$dir" "$name" >/dev/null && die "$name is already running; use: component restart $name"
  [[ -f $dir/$name.cmdline ]] || die "no saved command line of $name ($dir/$name.cmdline: stop it first)"
  mapfile -d '' -t words <"$dir/$name.cmdline"
  ((${#words[@]} >= 2)) || die "$dir/$name.cmdline holds no command line"
  if [[ -f $dir/logs/$name.log ]]; then
    while [[ -e $dir/logs/$name.$n.log ]]; do n=$((n + 1)); done
    mv "$dir/logs/$name.log" "$dir/logs/$name.$n.log"
  fi
  UP_DIR=$dir
  cd "${words[0]}" 2>/dev/null || {
    log "$name's working directory ${words[0]} is gone: starting it in $dir"
    cd "$dir"
  }
  start "$name" "${words[@]:1}"
  component_healthy "$dir" "$name"
}
cmd_component() {
  local action=${1:-} name=${2:-} dir='' sig=TERM t0
  (($# >= 2)) || die "usage: component stop|start|restart kube-apiserver|etcd [--dir DIR] [--signal SIG] [--stop-timeout S]"
  shift 2
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      --signal) sig=${2:?--signal needs a value}; shift 2 ;;
      --stop-timeout)
        [[ ${2:-} =~ ^[0-9]+$ ]] || die "--stop-timeout: whole seconds"
        STOP_TIMEOUT=$2
        shift 2
        ;;
      *) die "component: unknown argument $1" ;;
    esac
  done
  [[ $RESTARTABLE == *" $name "* ]] || die "component: '$name' is not one of:$RESTARTABLE"
  dir=$(resolve_dir "$dir")
  t0=$(now_us)
  case $action in
    stop) component_stop "$dir" "$name" "$sig" ;;
    start) component_start "$dir" "$name" ;;
    restart)
      component_stop "$dir" "$name" "$sig"
      component_start "$dir" "$name"
      ;;
    *) die "component: expected stop, start or restart, got '$action'" ;;
  esac
  log "$name $action done in $(fmt_secs $(($(now_us) - t0))) s"
  if [[ $action != stop ]]; then
    fmt_secs $(($(now_us) - t0))
    echo
  fi
}

# api-proxy FAULT...: the proxy's control file gets the line (see api_proxy.py).
cmd_api_proxy() {
  local dir='' words=() control
  while (($#)); do
    case $1 in
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      *) words+=("$1"); shift ;;
    esac
  done
  dir=$(resolve_dir "$dir")
  control=$(state_get "$dir" api_proxy_control) || die "the cluster in $dir runs no api proxy (up --api-proxy)"
  case "${words[*]:-}" in
    pass | "delay "[0-9]* | "reset "[0-9]*) ;;
    *) die "api-proxy: expected delay MS, reset SECONDS or pass, got '${words[*]:-}'" ;;
  esac
  printf '%s\n' "${words[*]}" >>"$control"
  log "api-proxy: ${words[*]}"
}

# --- guard -------------------------------------------------------------------------
# Runs `down` when the watched process exits. Started by `up --watch-*`, recorded
# as proc `guard`; `down` stops it before anything else.
cmd_guard() {
  local dir=$1 watch=$2 fifo fd
  local watch_st
  watch_st=$(proc_starttime "$watch") || exit 0
  fifo=$dir/guard.fifo
  mkfifo "$fifo"
  exec {fd}<>"$fifo"
  while alive "$watch" "$watch_st" && [[ -f $dir/state ]]; do
    # A 1 s wait with no child process (a `sleep` would outlive a killed guard).
    read -r -t 1 -u "$fd" _ || true
  done
  [[ -f $dir/state ]] || exit 0
  log "guard: process $watch is gone; tearing the cluster down"
  MUSTER_CLUSTER_GUARD_PID=$$ do_down "$dir"
}

# --- up --------------------------------------------------------------------------
UP_DIR=
UP_DONE=0
UP_STARTED=() # "name pid starttime"
UP_HELPERS=() # background kubectl jobs of `up` (not components)
IN_CRITICAL=0
SIG_PENDING=

record() { printf '%s\n' "$*" >>"$UP_DIR/state"; }

# INT/TERM during `up`: exit (the EXIT trap tears down) - but never between
# starting a process and recording it, or that process would be missed.
on_signal() {
  if ((IN_CRITICAL)); then
    SIG_PENDING=$1
  else
    exit "$1"
  fi
}

# start NAME CMD...: run CMD in its own session (no terminal signals, survives
# this script), stdio to logs/NAME.log, and record it.
start() {
  local name=$1 pid st
  shift
  IN_CRITICAL=1
  setsid "$@" </dev/null >"$UP_DIR/logs/$name.log" 2>&1 &
  pid=$!
  disown "$pid" # not a job of this shell: no "Killed" notices, no SIGHUP
  if st=$(proc_starttime "$pid"); then
    record "proc $name $pid $st"
    UP_STARTED+=("$name $pid $st")
  fi
  IN_CRITICAL=0
  [[ -n $SIG_PENDING ]] && exit "$SIG_PENDING"
  [[ -n ${st:-} ]] || die "$name exited immediately; see $UP_DIR/logs/$name.log"
}

# Fails (and names the component) if any started process has died.
check_started() {
  local entry name pid st
  for entry in "${UP_STARTED[@]}"; do
    read -r name pid st <<<"$entry"
    if ! alive "$pid" "$st"; then
      log "$name (pid $pid) exited; last lines of logs/$name.log:"
      tail -n 25 "$UP_DIR/logs/$name.log" >&2 || true
      return 1
    fi
  done
}

# wait_until DESC TIMEOUT CMD...: poll CMD every 0.2 s until it succeeds;
# fail on timeout or if a started component dies meanwhile.
wait_until() {
  local desc=$1 timeout=$2 deadline out=
  shift 2
  deadline=$(($(now_us) + timeout * 1000000))
  while :; do
    if out=$("$@" 2>&1); then
      return 0
    fi
    check_started || die "a component died while waiting for $desc"
    if (($(now_us) > deadline)); then
      log "timed out after ${timeout}s waiting for $desc; last check said:"
      printf '%s\n' "$out" | tail -n 5 >&2
      return 1
    fi
    sleep 0.2
  done
}

on_up_exit() {
  local rc=$?
  ((UP_DONE)) && return 0
  trap - EXIT INT TERM
  local job
  for job in "${UP_HELPERS[@]}"; do kill "$job" 2>/dev/null || true; done
  if [[ -n $UP_DIR && -f $UP_DIR/state ]]; then
    log "up failed (exit $rc): tearing down what was started"
    local f
    for f in "$UP_DIR"/logs/*.log; do
      [[ -s $f ]] || continue
      log "--- last lines of logs/${f##*/}"
      tail -n 8 "$f" >&2
    done
    # A half-started kube-apiserver ignores SIGTERM until its storage is up;
    # nothing here needs a graceful stop, so do not wait long.
    do_down "$UP_DIR" 3 || log "teardown left something behind (see above)"
  fi
  exit "$rc"
}

# register_webhook DIR KUBECTL...: with a `port webhook` recorded
# (MUSTER_GANG_WEBHOOK=1), the registration of manifests/webhook with the
# API server calling https://127.0.0.1:<port>/mutate-pods, trusting the
# harness's CA, instead of the in-cluster Service. No-op otherwise.
register_webhook() {
  local dir=$1 port
  shift
  port=$(state_port "$dir" webhook) || true
  [[ -n $port ]] || return 0
  "$@" create --dry-run=client -o json -f "$REPO/manifests/webhook/mutating-webhook.yaml" |
    python3 -c '
import base64, json, sys
config = json.load(sys.stdin)
ca = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
for hook in config["webhooks"]:
    hook["clientConfig"] = {"url": f"https://127.0.0.1:{sys.argv[1]}/mutate-pods", "caBundle": ca}
json.dump(config, sys.stdout)
' "$port" "$dir/pki/ca.crt" | "$@" apply -f - >/dev/null
  echo "pod webhook registered: https://127.0.0.1:$port/mutate-pods"
}

# sign_server_cert PKI NAME CN SAN: PKI/NAME.key and PKI/NAME.crt, a
# serving certificate (serverAuth, subjectAltName SAN) signed by PKI/ca.
# Fails when openssl does.
sign_server_cert() {
  local pki=$1 name=$2 cn=$3 san=$4
  (
    cd "$pki" || exit 1
    umask 077
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key" 2>/dev/null &&
      openssl req -new -key "$name.key" -subj "/CN=$cn" -out "$name.csr" 2>/dev/null &&
      printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
        'extendedKeyUsage=serverAuth' "subjectAltName=$san" >"$name.ext" &&
      openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$name.ext" -out "$name.crt" 2>/dev/null
    local rc=$?
    rm -f "$name.csr" "$name.ext" ca.srl
    exit "$rc"
  )
}

write_pki() { # dir
  local pki=$1/pki
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
    key ca.key
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=muster-e2e-ca" -out ca.crt 2>/dev/null
    sign_server_cert . apiserver kube-apiserver \
      IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1
    key admin.key
    # O=system:masters: cluster-admin without any RBAC objects.
    openssl req -new -key admin.key -subj "/O=system:masters/CN=muster-e2e-admin" -out admin.csr 2>/dev/null
    printf '%s\n' 'basicConstraints=CA:FALSE' 'keyUsage=critical,digitalSignature,keyEncipherment' \
      'extendedKeyUsage=clientAuth' >client.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
      -extfile client.ext -out admin.crt 2>/dev/null
    # The extender's pod webhook (MUSTER_GANG_WEBHOOK=1), called by the API
    # server at https://127.0.0.1:<port webhook>.
    sign_server_cert . webhook muster-webhook IP:127.0.0.1
    key sa.key
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext ./*.srl
  ) # set -e: a failing openssl fails `up` (and the EXIT trap tears down)
}

# kubeconfig_file FILE SERVER USER COMMENT CREDENTIAL...: a kubeconfig for
# this cluster (the CA path relative to FILE's directory) as USER, whose
# credential is the CREDENTIAL lines ("key: value"); COMMENT heads the file.
kubeconfig_file() {
  local file=$1 server=$2 user=$3 comment=$4 line
  shift 4
  {
    printf '# %s\n' "${comment//$'\n'/$'\n'# }"
    printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: muster-e2e\n  cluster:\n'
    printf '    server: %s\n    certificate-authority: pki/ca.crt\n' "$server"
    printf 'users:\n- name: %s\n  user:\n' "$user"
    for line in "$@"; do printf '    %s\n' "$line"; done
    printf 'contexts:\n- name: muster-e2e\n  context:\n    cluster: muster-e2e\n    user: %s\n' "$user"
    printf 'current-context: muster-e2e\n'
  } >"$file"
}

write_kubeconfig() { # dir api-port
  kubeconfig_file "$1/admin.kubeconfig" "https://127.0.0.1:$2" admin \
    "Admin credentials for the muster e2e cluster in this directory (paths are
relative to this file). O=system:masters: full access." \
    "client-certificate: pki/admin.crt" "client-key: pki/admin.key"
}

# The sidecars' identities (see "Least privilege" above): the ClusterRoles
# of manifests/rbac, one ServiceAccount per sidecar bound to its own role
# only, and a kubeconfig with a TokenRequest token of each (720 h: a demo
# cluster may stay up for weeks; the apiserver sets no maximum here).
# Server-side apply with kubectl's own field manager, as an admin's install
# (docs/operator-guide.md, e2e/scenarios/deploy.sh): the same manager applying
# the same files later owns these objects, no conflicts.
readonly SIDECAR_NAMESPACE=muster-e2e
readonly SIDECAR_TOKEN_DURATION=720h
write_sidecar_credentials() { # dir api-port kubectl...
  local dir=$1 port=$2 name token
  shift 2
  local kc=("$@")
  "${kc[@]}" apply --server-side \
    -f "$REPO/manifests/rbac/extender-clusterrole.yaml" \
    -f "$REPO/manifests/rbac/reconciler-clusterrole.yaml" || return 1
  {
    printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$SIDECAR_NAMESPACE"
    for name in extender reconciler; do
      printf -- '---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: %s, namespace: %s}\n' \
        "$name" "$SIDECAR_NAMESPACE"
      printf -- '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n'
      printf 'metadata: {name: %s-%s}\n' "$SIDECAR_NAMESPACE" "$name"
      printf 'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: muster-%s}\n' "$name"
      printf 'subjects: [{kind: ServiceAccount, name: %s, namespace: %s}]\n' "$name" "$SIDECAR_NAMESPACE"
    done
  } | "${kc[@]}" apply --server-side -f - || return 1
  if (($(cluster_replicas "$dir") > 1)); then
    leader_election_role | "${kc[@]}" apply --server-side -f - || return 1
  fi
  for name in extender reconciler; do
    token=$("${kc[@]}" create token "$name" -n "$SIDECAR_NAMESPACE" --duration="$SIDECAR_TOKEN_DURATION") ||
      return 1
    (
      umask 077
      kubeconfig_file "$dir/$name.kubeconfig" "https://127.0.0.1:$port" "$name" \
        "The muster $name of this cluster: ServiceAccount $SIDECAR_NAMESPACE/$name,
bound to ClusterRole muster-$name (manifests/rbac) only." "token: $token"
    )
  done
}

# manifests/rbac/leader-election-role.yaml for this cluster: its Role and
# RoleBinding in muster-e2e, bound to the sidecars' two ServiceAccounts
# instead of the install's one (`muster`).
leader_election_role() {
  local manifest=$REPO/manifests/rbac/leader-election-role.yaml out
  local subject='- {kind: ServiceAccount, name: muster, namespace: muster-system}'
  grep -qxF -- "$subject" "$manifest" || {
    echo "cannot render $manifest: its subject line changed (want: $subject)" >&2
    return 1
  }
  out=$(sed -e "s#^  namespace: muster-system\$#  namespace: $SIDECAR_NAMESPACE#" \
    -e "s#^- {kind: ServiceAccount, name: muster, namespace: muster-system}\$#- {kind: ServiceAccount, name: extender, namespace: $SIDECAR_NAMESPACE}\n- {kind: ServiceAccount, name: reconciler, namespace: $SIDECAR_NAMESPACE}#" \
    "$manifest")
  if grep -q muster-system <<<"$out"; then
    echo "cannot render $manifest: muster-system left in it" >&2
    return 1
  fi
  printf '%s\n' "$out"
}

# The two scheduler configurations. The stock one serves schedulerName
# default-scheduler; the `volcano` one serves schedulerName volcano and calls the
# muster extender for every one of its pods: no managedResources, because gang
# and queue decisions concern CPU-only pods too. Its NodeResourcesFit ignores
# nvidia.com/gpu: muster's cache (with its bind-time reservations) is the one
# authority on GPUs, so no second count can disagree with it - and the e2e
# over-commit tests test muster, not the in-tree filter. manifests/scheduler/
# holds the same configuration for real clusters.
# With two replicas: one volcano configuration per replica (the second one
# scheduler-volcano-1.yaml, calling extender-1), leader election on, its Lease
# in muster-e2e.
write_scheduler_configs() { # dir extender-port [replicas extender-1-port]
  local dir=$1
  cat >"$dir/scheduler-default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $dir/admin.kubeconfig
  qps: $API_QPS
  burst: $((API_QPS * 2))
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
EOF
  # The volcano scheduler runs manifests/scheduler/kube-scheduler-config.yaml
  # itself, with this cluster's kubeconfig, extender port and no leader election.
  local manifest=$REPO/manifests/scheduler/kube-scheduler-config.yaml out=$dir/scheduler-volcano.yaml
  {
    printf 'clientConnection:\n  kubeconfig: %s\n  qps: %d\n  burst: %d\n' \
      "$dir/admin.kubeconfig" "$API_QPS" $((API_QPS * 2))
    sed -e "s#http://127.0.0.1:8888/#http://127.0.0.1:$2/#" -e 's/^  leaderElect: true$/  leaderElect: false/' "$manifest"
  } >"$out"
  if ! grep -q "http://127.0.0.1:$2/scheduler" "$out" || ! grep -q '^  leaderElect: false$' "$out"; then
    die "could not render $manifest (its urlPrefix or leaderElect line changed?)"
  fi
  (("${3:-1}" > 1)) || return 0
  local r port
  for r in 0 1; do
    out=$dir/scheduler-volcano.yaml
    port=$2
    if ((r == 1)); then
      out=$dir/scheduler-volcano-1.yaml
      port=$4
    fi
    {
      printf 'clientConnection:\n  kubeconfig: %s\n  qps: %d\n  burst: %d\n' \
        "$dir/admin.kubeconfig" "$API_QPS" $((API_QPS * 2))
      sed -e "s#http://127.0.0.1:8888/#http://127.0.0.1:$port/#" \
        -e "s/^  resourceNamespace: muster-system\$/  resourceNamespace: $SIDECAR_NAMESPACE/" "$manifest"
    } >"$out"
    if ! grep -q "http://127.0.0.1:$port/scheduler" "$out" || ! grep -q '^  leaderElect: true$' "$out" ||
      ! grep -q "^  resourceNamespace: $SIDECAR_NAMESPACE\$" "$out" ||
      ! grep -q '^  resourceName: volcano-scheduler$' "$out"; then
      die "could not render $manifest for replica $r (its urlPrefix or leaderElection lines changed?)"
    fi
  done
}

cmd_up() {
  local cluster_file=$REPO/e2e/clusters/gpu-4.yaml dir='' no_build=0 watch_pid='' muster_bin='' replicas=1
  local api_proxy=0 peer=''
  while (($#)); do
    case $1 in
      --cluster) cluster_file=${2:?--cluster needs a value}; shift 2 ;;
      --dir) dir=${2:?--dir needs a value}; shift 2 ;;
      --no-build) no_build=1; shift ;;
      --muster) muster_bin=${2:?--muster needs a value}; shift 2 ;;
      --watch-pid) watch_pid=${2:?--watch-pid needs a value}; shift 2 ;;
      --watch-parent) watch_pid=$PPID; shift ;;
      --replicas) replicas=${2:?--replicas needs a value}; shift 2 ;;
      --api-proxy) api_proxy=1; shift ;;
      --peer) peer=${2:?--peer needs a value}; shift 2 ;;
      *) die "up: unknown argument $1 (see --help)" ;;
    esac
  done
  if ! [[ $replicas =~ ^[0-9]+$ ]] || ((replicas < 1 || replicas > MAX_REPLICAS)); then
    die "--replicas $replicas: 1 or $MAX_REPLICAS replicas are supported"
  fi
  [[ -z $peer || $peer == kueue ]] || die "--peer $peer: only kueue is supported"
  [[ -f $cluster_file ]] || die "cluster file '$cluster_file' not found"
  if [[ -n $muster_bin ]]; then
    [[ -x $muster_bin ]] || die "--muster $muster_bin: not an executable file"
    muster_bin=$(cd "$(dirname "$muster_bin")" && pwd)/$(basename "$muster_bin")
  fi
  python3 "$HELPER" render-nodes "$cluster_file" /dev/null >/dev/null || die "bad cluster file $cluster_file"
  local tool
  local tools=(openssl python3 ss curl setsid)
  ((replicas == 1)) || tools+=(unshare hostname)
  for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required (tools/install-deps.sh installs it)"
  done

  # 1. Components (built once into the cache; a no-op when present).
  local build_args=(--print-env)
  ((no_build)) && build_args+=(--no-build)
  [[ $peer != kueue ]] || build_args+=(--kueue)
  local envs
  envs=$("$HERE/build-components.sh" "${build_args[@]}") || die "components are not available"
  eval "$envs"
  # Only for this script: etcd would read an exported ETCD_BIN as a flag.
  export -n K8S_VERSION K8S_BIN_DIR ETCD_BIN KWOK_BIN
  [[ $peer != kueue ]] || export -n KUEUE_BIN KUEUE_DIR
  local kubectl=$K8S_BIN_DIR/kubectl
  local t_bins
  t_bins=$(now_us)
  log "components ready: Kubernetes $K8S_VERSION in $K8S_BIN_DIR, $ETCD_BIN, $KWOK_BIN"
  local generic_workload
  generic_workload=$(generic_workload_for "$K8S_VERSION") || die "cannot decide on GenericWorkload"
  log "feature gate GenericWorkload: $( ((generic_workload)) && echo on || echo off) (MUSTER_GENERIC_WORKLOAD)"

  # 2. State directory.
  if [[ -z $dir ]]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/muster-e2e.XXXXXX")
  else
    if [[ -f $dir/state ]]; then
      local name pid st
      while read -r name pid st; do
        [[ -n $name ]] || continue
        alive "$pid" "$st" && die "a cluster is running in $dir ($name pid $pid); run: $SELF down --dir $dir"
      done < <(state_procs "$dir")
      log "removing the dead cluster state in $dir"
      do_down "$dir" || die "could not clean $dir"
    elif [[ -e $dir && -n $(ls -A "$dir" 2>/dev/null) ]]; then
      die "$dir exists and is not empty (and holds no cluster state)"
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
  fi
  UP_DIR=$dir
  mkdir -p "$dir/logs"
  mkdir -m 700 "$dir/etcd"
  {
    echo "$STATE_MAGIC"
    echo "dir $dir"
    echo "kubectl $kubectl"
    echo "k8s_version $K8S_VERSION"
    echo "generic_workload $generic_workload"
    echo "cluster_file $(cd "$(dirname "$cluster_file")" && pwd)/$(basename "$cluster_file")"
    [[ -z $muster_bin ]] || echo "muster_bin $muster_bin"
    ((replicas == 1)) || echo "replicas $replicas"
  } >"$dir/state"
  trap on_up_exit EXIT
  trap 'on_signal 130' INT
  trap 'on_signal 143' TERM
  if [[ -n $watch_pid ]]; then
    # Started first, so it also covers a caller killed while `up` runs.
    kill -0 "$watch_pid" 2>/dev/null || die "--watch-pid $watch_pid: no such process"
    start guard "$SELF" _guard "$dir" "$watch_pid"
    log "guard started: the cluster goes down when process $watch_pid exits"
  fi

  # 3. Ports, certificates, configs.
  local ports
  # 8 ports, 3 more for replica 1, the api proxy's last, and the pod
  # webhook's before it (MUSTER_GANG_WEBHOOK=1).
  local n_ports=$((replicas == 1 ? 8 : 11))
  local webhook=0
  [[ ${MUSTER_GANG_WEBHOOK:-0} == 1 ]] && webhook=1
  n_ports=$((n_ports + api_proxy + webhook))
  local n_kueue=0 kueue_ports=()
  [[ $peer != kueue ]] || n_kueue=2
  read -r -a ports <<<"$(python3 "$HELPER" free-ports $((n_ports + n_kueue)))" || die "could not pick free ports"
  kueue_ports=("${ports[@]:n_ports}") # Kueue's after the rest (picked at once: distinct)
  ports=("${ports[@]:0:n_ports}")
  local p_proxy='' p_sidecar_api p_webhook=''
  if ((api_proxy)); then p_proxy=${ports[-1]}; fi
  if ((webhook)); then p_webhook=${ports[-1 - api_proxy]}; fi
  local p_etcd=${ports[0]} p_peer=${ports[1]} p_api=${ports[2]} p_kcm=${ports[3]}
  local p_sched=${ports[4]} p_vsched=${ports[5]} p_ext=${ports[6]} p_rec=${ports[7]}
  record "port etcd $p_etcd"
  record "port etcd-peer $p_peer"
  record "port apiserver $p_api"
  record "port controller-manager $p_kcm"
  record "port scheduler $p_sched"
  record "port volcano-scheduler $p_vsched"
  record "port extender $p_ext"
  record "port reconciler $p_rec"
  log "dir $dir; ports: etcd $p_etcd/$p_peer, apiserver $p_api, kcm $p_kcm, schedulers $p_sched/$p_vsched, extender $p_ext (reserved)"
  if ((replicas > 1)); then
    record "port volcano-scheduler-1 ${ports[8]}"
    record "port extender-1 ${ports[9]}"
    record "port reconciler-1 ${ports[10]}"
    log "replica 1: volcano-scheduler-1 ${ports[8]}, extender-1 ${ports[9]}, reconciler-1 ${ports[10]}"
  fi
  if ((webhook)); then
    record "port webhook $p_webhook"
    log "pod webhook (MUSTER_GANG_WEBHOOK=1): the extender serves it on port $p_webhook"
  fi
  if ((api_proxy)); then
    record "port api-proxy $p_proxy"
    record "api_proxy_control $dir/api-proxy.control"
    log "api proxy on port $p_proxy (the sidecars' kubeconfigs point at it)"
  fi
  if [[ $peer == kueue ]]; then
    record "port kueue-webhook ${kueue_ports[0]}"
    record "port kueue-health ${kueue_ports[1]}"
  fi
  p_sidecar_api=${p_proxy:-$p_api}
  write_pki "$dir"
  write_kubeconfig "$dir" "$p_api"
  write_scheduler_configs "$dir" "$p_ext" "$replicas" "${ports[9]:-}"
  local nnodes
  nnodes=$(python3 "$HELPER" render-nodes "$cluster_file" "$dir/nodes.json") || die "bad cluster file $cluster_file"
  record "kubeconfig $dir/admin.kubeconfig"
  local kc=("$kubectl" --kubeconfig "$dir/admin.kubeconfig" --request-timeout=10s)

  # Extra kube-apiserver flags for experiments (space-separated), e.g.
  # MUSTER_APISERVER_ARGS="--watch-cache-sizes=pods#0 --v=4".
  local apiserver_extra=()
  read -r -a apiserver_extra <<<"${MUSTER_APISERVER_ARGS:-}"

  # GenericWorkload (see the top of this file): the gate on every component
  # that serves or acts on scheduling.k8s.io/v1beta1 PodGroups, the API
  # served (beta APIs are off by default even with their gate on), and kcm's
  # podgroup-protection-controller - the apiserver's PodGroupProtection
  # admission (on by default) finalizes every new PodGroup and only that
  # controller lets a deleted one go, so scenarios can delete namespaces. Its
  # name is cmd/kube-controller-manager/names' PodGroupProtectionController.
  local gates=() apiserver_gw=() kcm_controllers
  kcm_controllers=serviceaccount-controller,namespace-controller,garbage-collector-controller,node-lifecycle-controller,pod-garbage-collector-controller,job-controller,replicaset-controller,deployment-controller
  if ((generic_workload)); then
    gates=(--feature-gates=GenericWorkload=true)
    apiserver_gw=("${gates[@]}" --runtime-config=scheduling.k8s.io/v1beta1=true)
    kcm_controllers+=,podgroup-protection-controller
  fi

  # 4. etcd + kube-apiserver. The apiserver retries etcd until it answers, so
  # both start at once.
  start etcd "$ETCD_BIN" --name=muster-e2e --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$p_etcd" --advertise-client-urls="http://127.0.0.1:$p_etcd" \
    --listen-peer-urls="http://127.0.0.1:$p_peer" --initial-advertise-peer-urls="http://127.0.0.1:$p_peer" \
    --initial-cluster="muster-e2e=http://127.0.0.1:$p_peer" --unsafe-no-fsync=true --log-level=warn
  # --endpoint-reconciler-type=none: Endpoints may not hold loopback IPs.
  # --advertise-address: with no default route the apiserver cannot pick one.
  # --watch-cache-sizes=events#0: events are watched straight from etcd, so an
  # e2e test can compact etcd and meet a real 410 Gone (kube/client/client_e2e.cc);
  # every other resource keeps the production watch cache.
  start kube-apiserver "$K8S_BIN_DIR/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$p_etcd" \
    --bind-address=127.0.0.1 --secure-port="$p_api" --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --cert-dir="$dir/pki" --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$dir/pki/sa.pub" --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --authorization-mode=RBAC --allow-privileged=true \
    --watch-cache-sizes=events#0 "${apiserver_gw[@]}" "${apiserver_extra[@]}"
  log "started etcd and kube-apiserver; waiting for /readyz"
  wait_readyz "$dir" "$p_api" kube-apiserver "$APISERVER_TIMEOUT"
  log "kube-apiserver ready"
  if ((api_proxy)); then
    printf 'pass\n' >"$dir/api-proxy.control"
    start api-proxy python3 "$HERE/api_proxy.py" --listen "$p_proxy" --upstream "$p_api" \
      --control "$dir/api-proxy.control"
    wait_readyz "$dir" "$p_proxy" "the api proxy" 30
  fi

  # 5. Everything else at once: CRDs + queues, nodes, and the other components.
  # Server-side with kubectl's field manager, as an admin installs them
  # (e2e/scenarios/deploy.sh applies the whole kustomization later: the same
  # manager, so no conflicts on the CRDs' atomic lists).
  local ssa=(apply --server-side)
  (
    # Polled, not `kubectl wait`: on a CRD whose status has no condition yet
    # that fails (".status.conditions accessor error") instead of waiting.
    # shellcheck disable=SC2317 # called through wait_until
    established() {
      local crd
      for crd in jobs.batch.volcano.sh podgroups.scheduling.volcano.sh queues.scheduling.volcano.sh \
        commands.bus.volcano.sh; do
        [[ $("${kc[@]}" get "crd/$crd" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}') == True ]] ||
          return 1
      done
    }
    "${kc[@]}" "${ssa[@]}" -f "$REPO/manifests/crds/" >/dev/null &&
      wait_until "muster's CRDs established" 60 established &&
      "${kc[@]}" "${ssa[@]}" -f "$REPO/manifests/default-queues.yaml" >/dev/null &&
      "${kc[@]}" patch queue root --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null &&
      "${kc[@]}" patch queue default --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null &&
      register_webhook "$dir" "${kc[@]}"
  ) >"$dir/logs/setup-crds.log" 2>&1 &
  local crd_job=$!
  UP_HELPERS+=("$crd_job")
  write_sidecar_credentials "$dir" "$p_sidecar_api" "${kc[@]}" >"$dir/logs/setup-rbac.log" 2>&1 &
  local rbac_job=$!
  UP_HELPERS+=("$rbac_job")
  create_nodes "$dir" "$nnodes" "${kc[@]}" >"$dir/logs/setup-nodes.log" 2>&1 &
  local node_job=$!
  UP_HELPERS+=("$node_job")

  # kcm: its API rate limit is the schedulers' (default 20/s would take the
# not-ready taint off only ~5 nodes/s: minutes for 1000 nodes). A short controller list - default ServiceAccounts, namespace deletion,
  # garbage collection, clearing the not-ready taint off kwok nodes, pod GC,
  # and the workload controllers the examples may use (with GenericWorkload,
# podgroup-protection-controller too: see above). A long grace period
  # keeps nodes Ready if kwok's lease renewals lag on a busy host.
  start kube-controller-manager "$K8S_BIN_DIR/kube-controller-manager" \
    --kubeconfig="$dir/admin.kubeconfig" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port="$p_kcm" \
    --controllers="$kcm_controllers" "${gates[@]}" \
    --root-ca-file="$dir/pki/ca.crt" --service-account-private-key-file="$dir/pki/sa.key" \
    --use-service-account-credentials=false --node-monitor-grace-period="$(node_grace_period "$nnodes")" \
    --kube-api-qps="$API_QPS" --kube-api-burst=$((API_QPS * 2))
  # Both schedulers get the same gates: the stock one schedules upstream
  # PodGroups itself (a comparison with muster sees Kubernetes' own gangs),
  # the volcano one keeps its GangScheduling plugin next to muster's filter.
  start kube-scheduler "$K8S_BIN_DIR/kube-scheduler" --config="$dir/scheduler-default.yaml" \
    --bind-address=127.0.0.1 --secure-port="$p_sched" "$SCHEDULER_ALLOW_PATHS" "${gates[@]}"
  if ((replicas == 1)); then
    start volcano-scheduler "$K8S_BIN_DIR/kube-scheduler" --config="$dir/scheduler-volcano.yaml" \
      --bind-address=127.0.0.1 --secure-port="$p_vsched" "$SCHEDULER_ALLOW_PATHS" "${gates[@]}"
  else
    start_volcano_scheduler "$dir" 0
    start_volcano_scheduler "$dir" 1
  fi
  local stages
  stages=$(kwok_stages "$dir" "$nnodes") || die "could not write kwok's stage file"
  # kwok: only nodes annotated kwok.x-k8s.io/node=fake; serves no port (no
  # --server-address); pod IPs are strings from a large fake range.
  start kwok "$KWOK_BIN" --kubeconfig="$dir/admin.kubeconfig" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 --node-lease-duration-seconds="$(kwok_lease_seconds "$nnodes")" --cidr=10.64.0.1/10 \
    --config="$stages"

  wait "$node_job" || {
    cat "$dir/logs/setup-nodes.log" >&2
    die "creating the nodes from $cluster_file failed"
  }
  log "created $nnodes nodes from ${cluster_file#"$REPO"/}"

  local health=(curl -fsSk --max-time 2)
  wait_until "kube-scheduler /healthz" 60 "${health[@]}" "https://127.0.0.1:$p_sched/healthz" || die "kube-scheduler not healthy"
  wait_until "volcano kube-scheduler /healthz" 60 "${health[@]}" "https://127.0.0.1:$p_vsched/healthz" || die "volcano scheduler not healthy"
  ((replicas == 1)) || wait_volcano_scheduler "$dir" 1
  wait_until "kube-controller-manager /healthz" 60 "${health[@]}" "https://127.0.0.1:$p_kcm/healthz" || die "kube-controller-manager not healthy"
  log "schedulers and controller-manager healthy"
  nodes_ready() { "${kc[@]}" get nodes -o json | python3 "$HELPER" nodes-ready "$nnodes"; }
  wait_until "$nnodes nodes Ready and schedulable" "$READY_TIMEOUT" nodes_ready || die "nodes did not become Ready"
  # The ServiceAccount admission plugin rejects pods until kcm made the
  # namespace's default ServiceAccount.
  wait_until "ServiceAccount default/default" 60 "${kc[@]}" get serviceaccount default -n default -o name ||
    die "the default ServiceAccount was not created"
  wait "$crd_job" || {
    cat "$dir/logs/setup-crds.log" >&2
    die "applying manifests/crds and the default queues failed"
  }
  log "CRDs established; queues default and root created"
  wait "$rbac_job" || {
    cat "$dir/logs/setup-rbac.log" >&2
    die "creating the sidecars' ServiceAccounts, roles and kubeconfigs failed"
  }
  log "sidecar credentials: $SIDECAR_NAMESPACE/extender and $SIDECAR_NAMESPACE/reconciler (manifests/rbac)"
  [[ $peer != kueue ]] || kueue_up "$dir" "${kueue_ports[@]}" "${kc[@]}"
  if [[ -n $muster_bin ]]; then
    start_extender "$dir" "$muster_bin"
    log "muster extender ready on port $p_ext"
    start_reconciler "$dir" "$muster_bin"
    log "muster reconciler ready on port $p_rec"
    if ((replicas > 1)); then
      start_sidecar extender "$dir" "$muster_bin" 1
      start_sidecar reconciler "$dir" "$muster_bin" 1
      log "replica 1: muster extender-1 and reconciler-1 ready on ports ${ports[9]} and ${ports[10]}"
    fi
  fi
  local t_ready
  t_ready=$(now_us)
  log "cluster accepts pods: $(fmt_secs $((t_ready - T0))) s since start, $(fmt_secs $((t_ready - t_bins))) s from built binaries"
  record "up_seconds_from_binaries $(fmt_secs $((t_ready - t_bins)))"

  mkdir -p "$CACHE_ROOT"
  printf '%s\n' "$dir" >"$POINTER"
  UP_DONE=1
  trap - EXIT INT TERM
  print_env "$dir"
}

# Large clusters (more than LARGE_CLUSTER_NODES nodes, e.g. kwok-5000): the
# fake nodes' own traffic is cut so the control plane of a 2-core host is not
# what breaks (figures in e2e/README.md, "Large clusters"). Small clusters
# keep the settings every scenario was written against.
# MUSTER_LARGE_CLUSTER=1 (or 0) forces the choice, e.g. for a cluster that
# starts empty and gets its 5000 nodes later (bench/restart.sh).
readonly LARGE_CLUSTER_NODES=1000
is_large() {
  case ${MUSTER_LARGE_CLUSTER:-} in
    1) return 0 ;;
    0) return 1 ;;
    *) (($1 > LARGE_CLUSTER_NODES)) ;;
  esac
}

# kwok renews each node's Lease every quarter of this. 40 s: 100 Lease PUTs/s
# at 1000 nodes; 600 s at 5000 nodes: ~33/s instead of ~80/s measured.
kwok_lease_seconds() { if is_large "$1"; then echo 600; else echo 40; fi; }

# kcm marks a node NotReady when neither its Lease nor its Ready heartbeat
# moved for this long: well above the Lease renewal and heartbeat intervals.
node_grace_period() { if is_large "$1"; then echo 1200s; else echo 120s; fi; }

# kwok's stage file; for a large cluster a copy whose node heartbeat (a
# status PATCH every node watcher decodes: both kube-schedulers, kcm, the
# extender) comes every 10-15 min instead of every 60-90 s: 72 node status
# PATCHes/s measured at 5000 nodes with the default, ~7/s with this.
kwok_stages() {
  local dir=$1 nnodes=$2
  if ! is_large "$nnodes"; then
    echo "$HERE/kwok-stages.yaml"
    return
  fi
  sed -e 's/durationMilliseconds: 60000$/durationMilliseconds: 600000/' \
    -e 's/jitterDurationMilliseconds: 90000$/jitterDurationMilliseconds: 900000/' \
    "$HERE/kwok-stages.yaml" >"$dir/kwok-stages-large.yaml"
  grep -q 'durationMilliseconds: 600000$' "$dir/kwok-stages-large.yaml" ||
    die "kwok-stages.yaml: the node heartbeat delay to stretch was not found"
  echo "$dir/kwok-stages-large.yaml"
}

# create_nodes DIR N KUBECTL...: creates DIR/nodes.json's N nodes, in 8
# parallel creates above 200 nodes (one kubectl creates its list one object
# at a time: 5000 nodes took 194 s that way, ~40 s in 8 shards).
create_nodes() {
  local dir=$1 nnodes=$2
  shift 2
  local shards=1 part pids=() rc=0
  ((nnodes <= 200)) || shards=8
  for part in $(python3 "$HELPER" split-list "$dir/nodes.json" "$shards" "$dir/nodes-part"); do
    "$@" create -f "$part" >/dev/null &
    pids+=($!)
  done
  for part in "${pids[@]}"; do wait "$part" || rc=1; done
  return "$rc"
}

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$SELF"; }

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    env) cmd_env "$@" ;;
    status) cmd_status "$@" ;;
    extender) cmd_extender "$@" ;;
    reconciler) cmd_reconciler "$@" ;;
    replica) cmd_replica "$@" ;;
    leaders) cmd_leaders "$@" ;;
    component) cmd_component "$@" ;;
    api-proxy) cmd_api_proxy "$@" ;;
    _guard) cmd_guard "$@" ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
