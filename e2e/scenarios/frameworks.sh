#!/usr/bin/env bash
# Frameworks that create PodGroups themselves (issue 19), on the shared gpu-16
# cluster (16 nodes x 8 GPUs, 96 cpu, 1536Gi), muster as the scheduler. Three
# frameworks make their own Volcano PodGroup and ungated pods (no muster.io/gang
# gate) with schedulerName volcano; fixtures/frameworks/ holds their exact
# shapes (each file's header names the upstream source):
#   KubeRay      PodGroup ray-<cluster>-pg (minMember head + workers,
#                minResources), head and workers created at once (kuberay.yaml)
#   training-op  PodGroup <job> (minMember = sum of replicas, queue, minResources);
#                the pods only once the PodGroup is Inqueue (pytorchjob-*.yaml)
#   Spark        PodGroup <appId>-podgroup from a template (minMember 1,
#                minResources of driver + executors, queue); the driver, whose
#                executors come once it runs (spark-*.yaml)
# The script plays each operator's part: it creates the pods when the operator
# would (the training operator's pods once the phase is set and not Pending,
# Spark's executors once the driver runs).
#  a. All or nothing: 15 blocker pods hold 15 nodes (8 GPUs free); each gang
#     needs 16 GPUs, so none of its pods may bind (the KubeRay head and the
#     Spark driver ask no GPU and would fit alone) and the training operator's
#     PodGroup stays Pending (no pods); once the blocker goes, all bind.
#  b. Queues: the same shapes in a Queue whose capability (8 GPUs) is below the
#     gang (16) wait, with a PodGroup condition (or Event) naming the queue's
#     capability, while in a Queue with room (64) they run. The queues are
#     deleted at the end.
# Checks continue after a failure (each prints ok:/FAIL:); the exit status is 1
# if any failed.
# The Spark shape (minMember 1, ungated pods) holds on two rules of issue 19:
# a PodGroup of minMember 1 with minResources is admitted whole before its
# driver starts (extender/pipeline.cc AdmitByGang, gang/pass.cc), and a
# PodGroup refused admission, pods or not, says why in its condition.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

FIX=$E2E_FIXTURES/frameworks
FAILED=0

new_namespace
TIGHT=fw-tight-${E2E_NS##*-}
ROOMY=fw-roomy-${E2E_NS##*-}

e2e_before_cleanup() {
  k delete pods,podgroups --all --wait=false >/dev/null 2>&1 || true
  "$MUSTER_KUBECTL" delete queue "$TIGHT" "$ROOMY" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# --- helpers ---------------------------------------------------------------
# soft_fail MSG: a failed check; the scenario goes on.
soft_fail() {
  e2e_log "FAIL: $*"
  FAILED=$((FAILED + 1))
}
# check DESC CMD...
check() {
  local desc=$1
  shift
  if "$@"; then pass "$desc"; else soft_fail "$desc"; fi
}
# await DESC TIMEOUT CMD...: wait_for that records a failure instead of exiting.
await() {
  local desc=$1 timeout=$2 out='' deadline
  shift 2
  deadline=$((${EPOCHREALTIME//[.,]/} + timeout * 1000000))
  until out=$("$@" 2>&1); do
    if ((${EPOCHREALTIME//[.,]/} > deadline)); then
      e2e_log "last check output: ${out:0:400}"
      soft_fail "timed out after ${timeout}s waiting for: $desc"
      return 0
    fi
    sleep 0.25
  done
  pass "$desc"
}

# render FILE KEY=VALUE...: the fixture with each __KEY__ replaced.
render() {
  local file=$1 kv
  shift
  local subst=(-e '')
  for kv in "$@"; do subst+=(-e "s|__${kv%%=*}__|${kv#*=}|g"); done
  sed "${subst[@]}" "$file"
}
create() {
  render "$@" | k apply -f - >/dev/null || fail "creating $(basename "$1") ($*) failed"
}

node_of() { k get pod "$1" -o 'jsonpath={.spec.nodeName}' 2>/dev/null; }
pod_exists() { k get pod "$1" -o name >/dev/null 2>&1; }
# none_bound PODS...: none has a node (a missing pod is not bound); prints the
# bound ones.
none_bound() {
  local p ok=0
  for p in "$@"; do
    local node
    node=$(node_of "$p")
    if [[ -n $node ]]; then
      echo "$p bound to $node"
      ok=1
    fi
  done
  return "$ok"
}
# all_running PODS...: every one exists, is bound and Running.
all_running() {
  local p
  for p in "$@"; do
    [[ $(k get pod "$p" -o 'jsonpath={.spec.nodeName}/{.status.phase}' 2>/dev/null) == ?*/Running ]] ||
      {
        echo "$p: $(k get pod "$p" -o 'jsonpath={.spec.nodeName}/{.status.phase}' 2>&1)"
        return 1
      }
  done
}
# decided POD: kube-scheduler has tried it: bound, or a FailedScheduling event.
decided() { [[ -n $(node_of "$1") || -n $(failed_scheduling "$1") ]]; }
all_decided() {
  local p
  for p in "$@"; do decided "$p" || return 1; done
}
pg_phase() { k get podgroups.scheduling.volcano.sh "$1" -o 'jsonpath={.status.phase}' 2>/dev/null; }
pg_phase_is() { [[ $(pg_phase "$1") == "$2" ]]; }
pg_conditions() {
  k get podgroups.scheduling.volcano.sh "$1" -o 'jsonpath={range .status.conditions[*]}{.type}/{.reason}: {.message}{"\n"}{end}' 2>/dev/null
}
# pg_says PG TEXT: a condition's message contains TEXT.
pg_says() { [[ $(pg_conditions "$1") == *"$2"* ]]; }
pg_has_condition() { [[ -n $(pg_conditions "$1") ]]; }
# pg_explains PG TEXT: a condition or an Event of the PodGroup says TEXT
# (Volcano records an Unschedulable Event "queue resource quota insufficient"
# on a PodGroup its queue does not admit).
pg_explains() {
  pg_says "$1" "$2" ||
    [[ $(k get events --field-selector "involvedObject.kind=PodGroup,involvedObject.name=$1" \
      -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}' 2>/dev/null) == *"$2"* ]]
}

# KubeRay: RayCluster NAME -> PodGroup ray-NAME-pg and three pods at once.
ray_pods() { echo "$1-head-x7k2p $1-gpu-group-worker-4qz8m $1-gpu-group-worker-9tw2d"; }
ray_create() { create "$FIX/kuberay.yaml" "NAME=$1" "QUEUE=$2"; }

# Training operator: PyTorchJob NAME -> PodGroup NAME; the pods once the
# phase is set and not Pending. tfo_sync is one reconcile of the operator.
tfo_pods() { echo "$1-master-0 $1-worker-0"; }
tfo_create() { create "$FIX/pytorchjob-podgroup.yaml" "NAME=$1" "QUEUE=$2"; }
tfo_sync() {
  local phase
  phase=$(pg_phase "$1")
  if [[ -n $phase && $phase != Pending ]] && ! pod_exists "$1-master-0"; then
    e2e_log "training operator: PodGroup $1 is $phase: creating its pods"
    create "$FIX/pytorchjob-pods.yaml" "NAME=$1"
  fi
}

# Spark: application NAME -> appId spark-<32 hex>, resource prefix
# NAME-<16 hex>; spark_sync is the driver creating its executors once it runs.
spark_hash() { printf '%s' "$E2E_NS/$1" | md5sum | cut -c1-32; }
spark_appid() { echo "spark-$(spark_hash "$1")"; }
spark_prefix() { echo "$1-$(spark_hash "$1" | cut -c1-16)"; }
spark_pg() { echo "$(spark_appid "$1")-podgroup"; }
spark_driver() { echo "$(spark_prefix "$1")-driver"; }
spark_pods() {
  local p
  p=$(spark_prefix "$1")
  echo "$p-driver $p-exec-1 $p-exec-2"
}
spark_vars() { echo "APPID=$(spark_appid "$1") APPNAME=$1 PREFIX=$(spark_prefix "$1") NS=$E2E_NS"; }
spark_create() {
  local vars
  read -ra vars <<<"$(spark_vars "$1")"
  create "$FIX/spark-driver.yaml" "${vars[@]}" "QUEUE=$2"
}
spark_sync() {
  local driver prefix vars uid
  driver=$(spark_driver "$1")
  prefix=$(spark_prefix "$1")
  if [[ $(k get pod "$driver" -o 'jsonpath={.status.phase}' 2>/dev/null) == Running ]] &&
    ! pod_exists "$prefix-exec-1"; then
    uid=$(k get pod "$driver" -o 'jsonpath={.metadata.uid}')
    read -ra vars <<<"$(spark_vars "$1")"
    e2e_log "spark driver $driver runs: creating its executors"
    create "$FIX/spark-executors.yaml" "${vars[@]}" "DRIVER_UID=$uid"
  fi
}

# The operators' loops while waiting: one reconcile of each, then CMD.
synced() {
  local n
  for n in "${TFO_JOBS[@]}"; do tfo_sync "$n"; done
  for n in "${SPARK_APPS[@]}"; do spark_sync "$n"; done
  "$@"
}
TFO_JOBS=()
SPARK_APPS=()

# running_whole FRAMEWORK NAME PG: all members Running, PodGroup Running.
running_whole() {
  local pods pg=$3
  read -ra pods <<<"$("${1}_pods" "$2")"
  all_running "${pods[@]}" && pg_phase_is "$pg" Running
}

# --- a. all or nothing ---------------------------------------------------------
create "$FIX/blocker.yaml"
blockers_running() { [[ $(k get pods -l app=blocker --field-selector=status.phase=Running -o name | wc -l) -eq 15 ]]; }
wait_for "15 blocker pods Running (15 nodes full, 8 GPUs free)" 90 blockers_running
pass "blocker holds 120 of 128 GPUs"

ray_create rc-a default
tfo_create pt-a default
spark_create sp-a default
TFO_JOBS=(pt-a)
SPARK_APPS=(sp-a)
read -ra ray_a <<<"$(ray_pods rc-a)"
read -ra spark_a <<<"$(spark_pods sp-a)"

# Positive signals that muster and kube-scheduler looked at them: every pod
# has been tried (bound or FailedScheduling) and each PodGroup has a condition.
await "KubeRay rc-a: kube-scheduler tried head and workers" 30 all_decided "${ray_a[@]}"
await "Spark sp-a: kube-scheduler tried the driver" 30 decided "${spark_a[0]}"
await "KubeRay PodGroup ray-rc-a-pg has a condition" 30 pg_has_condition ray-rc-a-pg
await "PyTorchJob PodGroup pt-a: muster wrote its phase" 30 synced pg_phase_is pt-a Pending
await "Spark PodGroup $(spark_pg sp-a) has a condition" 30 pg_has_condition "$(spark_pg sp-a)"
sleep 2 # two more gang passes: a late bind would show
synced true
e2e_log "PodGroup ray-rc-a-pg: $(pg_conditions ray-rc-a-pg)"
e2e_log "PodGroup pt-a: phase '$(pg_phase pt-a)' $(pg_conditions pt-a)"
e2e_log "PodGroup $(spark_pg sp-a): phase '$(pg_phase "$(spark_pg sp-a)")' $(pg_conditions "$(spark_pg sp-a)")"
check "KubeRay rc-a: no member bound while the gang cannot fit (head alone would)" none_bound "${ray_a[@]}"
tfo_held_back() { pg_phase_is "$1" Pending && ! pod_exists "$1-master-0" && ! pod_exists "$1-worker-0"; }
check "PyTorchJob pt-a: PodGroup Pending, so the operator created no pods" tfo_held_back pt-a
check "Spark sp-a: driver not bound while minResources (16 GPUs) cannot be met" none_bound "${spark_a[0]}"
k get pods -o wide --no-headers | grep -v '^blocker' | sed 's/^/  /' || true

# Room frees: the blocker goes.
k delete deployment blocker --wait=false >/dev/null
blockers_gone() { k_none pods -l app=blocker; }
wait_for "blocker pods gone" 60 blockers_gone
await "KubeRay rc-a: head + 2 workers Running, PodGroup Running" 60 running_whole ray rc-a ray-rc-a-pg
await "PyTorchJob pt-a: Inqueue, then master + worker Running, PodGroup Running" 60 \
  synced running_whole tfo pt-a pt-a
await "Spark sp-a: driver, then 2 executors Running, PodGroup Running" 60 \
  synced running_whole spark sp-a "$(spark_pg sp-a)"
k get pods -o wide --no-headers | sed 's/^/  /' || true

k delete pods,podgroups --all --wait=false >/dev/null
no_pods() { k_none pods; }
wait_for "part a's pods gone" 60 no_pods

# --- b. queues -------------------------------------------------------------------
render "$FIX/queues.yaml" "TIGHT=$TIGHT" "ROOMY=$ROOMY" | "$MUSTER_KUBECTL" apply -f - >/dev/null ||
  fail "creating queues $TIGHT and $ROOMY failed"
for q in "$TIGHT" "$ROOMY"; do
  "$MUSTER_KUBECTL" patch queue "$q" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' \
    >/dev/null || fail "opening queue $q failed"
done
e2e_log "queues: $TIGHT (capability nvidia.com/gpu=8), $ROOMY (capability nvidia.com/gpu=64)"

ray_create rc-tight "$TIGHT"
ray_create rc-roomy "$ROOMY"
tfo_create pt-tight "$TIGHT"
tfo_create pt-roomy "$ROOMY"
spark_create sp-tight "$TIGHT"
spark_create sp-roomy "$ROOMY"
TFO_JOBS=(pt-tight pt-roomy)
SPARK_APPS=(sp-tight sp-roomy)

await "KubeRay rc-roomy in $ROOMY: all Running" 60 running_whole ray rc-roomy ray-rc-roomy-pg
await "PyTorchJob pt-roomy in $ROOMY: all Running" 60 synced running_whole tfo pt-roomy pt-roomy
await "Spark sp-roomy in $ROOMY: all Running" 60 synced running_whole spark sp-roomy "$(spark_pg sp-roomy)"

capability_msg="queue $TIGHT is at its capability"
await "KubeRay ray-rc-tight-pg: its condition names $TIGHT's capability" 20 \
  synced pg_explains ray-rc-tight-pg "$capability_msg"
await "PyTorchJob pt-tight: a condition or Event names $TIGHT's capability" 20 \
  synced pg_explains pt-tight "$capability_msg"
await "Spark $(spark_pg sp-tight): a condition or Event names $TIGHT's capability" 20 \
  synced pg_explains "$(spark_pg sp-tight)" "$capability_msg"
sleep 2 # two more gang passes: a late bind would show
synced true
for pg in ray-rc-tight-pg pt-tight "$(spark_pg sp-tight)"; do
  e2e_log "PodGroup $pg: phase '$(pg_phase "$pg")' $(pg_conditions "$pg")"
done
read -ra ray_t <<<"$(ray_pods rc-tight)"
read -ra spark_t <<<"$(spark_pods sp-tight)"
check "KubeRay rc-tight in $TIGHT: no member bound" none_bound "${ray_t[@]}"
check "PyTorchJob pt-tight in $TIGHT: PodGroup Pending, so the operator created no pods" tfo_held_back pt-tight
check "Spark sp-tight in $TIGHT: driver and executors not bound" none_bound "${spark_t[@]}"
allocated=$("$MUSTER_KUBECTL" get queue "$TIGHT" -o 'jsonpath={.status.allocated.nvidia\.com/gpu}')
is_zero() { [[ ${1:-0} == 0 ]]; }
check "queue $TIGHT holds no GPU (status.allocated nvidia.com/gpu '${allocated:-}')" is_zero "$allocated"
k get pods -o wide --no-headers | sed 's/^/  /' || true

((FAILED == 0)) || fail "$FAILED check(s) failed"
