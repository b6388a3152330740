#!/usr/bin/env bash
# GPU sharing (issue 18) on the shared gpu-16 cluster (16 nodes x 8 GPUs,
# their GPUs told apart by count), muster as the scheduler.
#  1. The MPI Job users write for half-GPU workers (nvidia.com/gpu: 0.5),
#     applied unchanged (fixtures/gpu_sharing/lm-mpi-job.yaml): both workers
#     are bound to the same GPU of one node, carry the share as
#     muster.io/gpu-fraction (the API refuses a fraction in a container) and
#     NVIDIA_VISIBLE_DEVICES from muster.io/visible-devices; the master's
#     MPI_HOST lists both workers.
#  2. Two more such Jobs: 6 workers on 3 GPUs, two to a GPU (never a worker
#     alone on a GPU while another is half used); /debug/state and the
#     muster_gpus_shared metrics say so.
#  3. The master completes (kwok finishes it once annotated): the Job is
#     Completed, its workers are cleaned up and their GPUs are free again.
#  4. The stock side: the same worker pod sent to the default scheduler is
#     refused by the API (a fractional extended resource); rounded up to a
#     whole GPU, the default scheduler binds the 6 workers of step 2 to 6
#     GPUs, not 3.
#  5. Volcano's vGPU resources: eight kwok nodes that publish the vGPU
#     device plugin's registration (volcano.sh/node-vgpu-register: 2 GPUs of
#     16384 MiB, 4 vGPUs each) take 50 pods asking volcano.sh/vgpu-number,
#     vgpu-memory and vgpu-cores at once; the extender is killed (SIGKILL)
#     once a few are bound and started again; all 50 end bound. 20 more then
#     fill the nodes. At every poll, and at the end, each bound pod carries
#     exactly the annotations that plugin reads and no GPU is given past its
#     memory, its cores or its vGPU count (gpu_share_check.py vgpu);
#     deleting 20 bound pods lets the waiting ones in.
set -euo pipefail
# shellcheck source=e2e/scenarios/lib.sh
source "$(dirname "$0")/lib.sh"

CLUSTER=$E2E_REPO/e2e/cluster/cluster.sh
CHECK=$E2E_LIB_DIR/gpu_share_check.py
FIX=$E2E_FIXTURES/gpu_sharing
new_namespace
# shellcheck source=e2e/scenarios/extender_lib.sh
source "$E2E_LIB_DIR/extender_lib.sh"
require_extender
SUFFIX=${E2E_NS##*-}
VNODES=()
for i in 0 1 2 3 4 5 6 7; do VNODES+=("vgpu-$SUFFIX-$i"); done
# The extender must run again and the vGPU nodes go, whatever happens.
e2e_before_cleanup() {
  curl -fsS --max-time 2 "$EXT_URL/readyz" >/dev/null 2>&1 ||
    "$CLUSTER" extender start ${MUSTER_E2E_DIR:+--dir "$MUSTER_E2E_DIR"} >/dev/null 2>&1 || true
  # Pods first, while kwok still runs their nodes and finalizes them: pods
  # left on a deleted node stay Terminating until kcm's pod garbage
  # collector takes them (about a minute), holding this namespace and the
  # next scenario, which waits for it.
  k delete pods --all --wait=true --timeout=60s >/dev/null 2>&1 || true
  "$MUSTER_KUBECTL" delete node "${VNODES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

job_phase_is() { [[ $(field "vcjob/$1" '{.status.state.phase}') == "$2" ]]; }
pods_of() { k get pods -l "volcano.sh/job-name=$1" -o name; }
# placed JOB: "pod node gpu-ids" of the job's workers bound.
workers_placed() {
  k get pods -l "volcano.sh/task-spec=mpiworker" -o \
    'jsonpath={range .items[?(@.spec.nodeName)]}{.metadata.name} {.spec.nodeName} {.metadata.annotations.muster\.io/gpu-ids}{"\n"}{end}'
}
workers_bound_is() { (($(workers_placed | grep -c .) == $1)); }
all_running() {
  local n
  n=$(k get pods -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$' || true)
  ((n == $1))
}
fractions() { k get pods -o json | python3 -c 'import json,sys; print(json.dumps({"pods": json.load(sys.stdin)}))' | python3 "$CHECK" fractions; }

# ---- 1. the Job of the issue, unchanged.
k apply -f "$FIX/lm-mpi-job.yaml" >/dev/null || fail "the MPI Job of the issue did not apply"
wait_for "lm-mpi-job: its 2 workers bound" 60 workers_bound_is 2
mapfile -t placed < <(workers_placed)
read -r _ node0 gpu0 <<<"${placed[0]}"
read -r _ node1 gpu1 <<<"${placed[1]}"
[[ -n $gpu0 ]] || fail "worker ${placed[0]} has no muster.io/gpu-ids"
expect_eq "lm-mpi-job's workers: node and GPU" "$node1 GPU $gpu1" "$node0 GPU $gpu0"
w0=lm-mpi-job-mpiworker-0
expect_eq "$w0 share (muster.io/gpu-fraction)" \
  "$(field "pod/$w0" '{.metadata.annotations.muster\.io/gpu-fraction}')" 0.5
expect_eq "$w0 container's nvidia.com/gpu (the API takes no fraction)" \
  "$(field "pod/$w0" '{.spec.containers[0].resources.limits.nvidia\.com/gpu}')" ""
expect_eq "$w0 NVIDIA_VISIBLE_DEVICES source" \
  "$(field "pod/$w0" '{.spec.containers[0].env[?(@.name=="NVIDIA_VISIBLE_DEVICES")].valueFrom.fieldRef.fieldPath}')" \
  "metadata.annotations['muster.io/visible-devices']"
expect_eq "$w0 muster.io/visible-devices" \
  "$(field "pod/$w0" '{.metadata.annotations.muster\.io/visible-devices}')" "$gpu0"
wait_for "lm-mpi-job: 3 pods Running" 60 all_running 3
expect_eq "master MPI_HOST" \
  "$(k get pod lm-mpi-job-mpimaster-0 -o 'jsonpath={.spec.containers[0].env[?(@.name=="MPI_HOST")].value}')" \
  "lm-mpi-job-mpiworker-0.lm-mpi-job,lm-mpi-job-mpiworker-1.lm-mpi-job"
pass "the Job of the issue runs: both workers on GPU $gpu0 of $node0"

# ---- 2. two more: two workers to a GPU.
for job in lm-mpi-job-2 lm-mpi-job-3; do
  sed "s/name: lm-mpi-job}/name: $job}/" "$FIX/lm-mpi-job.yaml" | k apply -f - >/dev/null ||
    fail "$job did not apply"
done
wait_for "6 workers bound" 90 workers_bound_is 6
summary=$(fractions) || fail "a GPU's shares add up past 1: $summary"
gpus=$(python3 -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"]; print(len(g), sorted(len(p) for p in g.values()))' "$summary")
expect_eq "GPUs the 6 half-GPU workers hold, and workers per GPU" "$gpus" "3 [2, 2, 2]"
wait_for "9 pods Running" 60 all_running 9
# The gauges are set by the gang controller's pass, which can run up to a
# pass behind the cache that /debug/state reads (a pass busy with the
# gangs' writes): wait for them rather than read them once.
gauges_are() {
  local shared partly
  shared=$(metric 'muster_gpus_shared{use="shared"}')
  partly=$(metric 'muster_gpus_shared{use="partly_used"}')
  echo "got $shared $partly"
  [[ "$shared $partly" == "$1" ]]
}
wait_for "muster_gpus_shared{shared, partly_used} = 3 0" 10 gauges_are "3 0"
curl -fsS --max-time 5 "$EXT_URL/debug/state" >"$E2E_TMP/state.json" || fail "cannot read /debug/state"
listed=$(python3 -c '
import json, sys
state = json.load(open(sys.argv[1]))
print(sum(1 for n in state["nodes"] for g in n.get("gpus", []) if g["sharers"] == 2 and g["freeShare"] == "0"))' \
  "$E2E_TMP/state.json")
expect_eq "/debug/state: GPUs with 2 sharers and no share left" "$listed" 3
pass "6 half-GPU workers on 3 GPUs: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["gpus"])' "$summary")"

# ---- 3. the master completes: the Job completes, the workers go, the GPUs free.
k annotate pod lm-mpi-job-mpimaster-0 muster.io/run-seconds=1 >/dev/null
wait_for "lm-mpi-job Completed" 60 job_phase_is lm-mpi-job Completed
workers_of_job1_gone() {
  local names
  names=$(k get pods -o name) || return 1
  ! grep -q 'lm-mpi-job-mpiworker' <<<"$names"
}
wait_for "lm-mpi-job's workers cleaned up" 60 workers_of_job1_gone
shared_is() { [[ $(metric 'muster_gpus_shared{use="shared"}') == "$1" ]]; }
wait_for "muster_gpus_shared{shared} back to 2" 30 shared_is 2
pass "lm-mpi-job Completed with its master; its workers' GPU is free again"
k delete vcjob lm-mpi-job-2 lm-mpi-job-3 --wait=false >/dev/null

# ---- 4. the stock side: the same worker pod to the default scheduler.
stock=$(k apply -f - 2>&1 <<'YAML' || true
apiVersion: v1
kind: Pod
metadata: {name: stock-mpiworker}
spec:
  containers:
  - name: mpiworker
    image: example-mpi:0.0.1
    resources: {limits: {nvidia.com/gpu: 0.5}}
YAML
)
expect_contains "the API's answer to a stock pod asking nvidia.com/gpu: 0.5" "$stock" "must be an integer"
# The stock scheduler, given what it can take (the share rounded up to a
# whole GPU), binds the 6 workers of step 2 to 6 GPUs.
for i in 0 1 2 3 4 5; do
  k create -f - >/dev/null <<YAML || fail "cannot create stock-worker-$i"
apiVersion: v1
kind: Pod
metadata: {name: stock-worker-$i, labels: {e2e: stock-worker}}
spec:
  schedulerName: default-scheduler
  containers:
  - name: mpiworker
    image: example-mpi:0.0.1
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
done
stock_bound_is() {
  (($(k get pods -l e2e=stock-worker -o 'jsonpath={range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' | grep -c .) == $1))
}
wait_for "the stock scheduler binds its 6 whole-GPU workers" 60 stock_bound_is 6
stock_gpus=$(k get pods -l e2e=stock-worker -o \
  'jsonpath={range .items[?(@.spec.nodeName)]}{.spec.containers[0].resources.limits.nvidia\.com/gpu}{"\n"}{end}' |
  awk '{s += $1} END {print s}')
expect_eq "GPUs the stock scheduler's 6 bound rounded-up workers hold" "$stock_gpus" 6
k delete pods -l e2e=stock-worker --wait=false >/dev/null
e2e_log "side by side, 3 MPI Jobs of 2 half-GPU workers:"
e2e_log "  muster: 6 workers on 3 GPUs (shares, packed two to a GPU)"
e2e_log "  stock:  the worker pod is refused by the API ($(tr '\n' ' ' <<<"$stock" | cut -c1-160));"
e2e_log "          rounded up to nvidia.com/gpu: 1, the stock scheduler bound the 6 workers to $stock_gpus GPUs"
pass "stock side: the API refuses the share; rounded up, 6 workers take $stock_gpus GPUs against muster's 3"

# ---- 5. Volcano's vGPU resources on nodes its device plugin registered.
for node in "${VNODES[@]}"; do
  "$MUSTER_KUBECTL" create -f - >/dev/null <<YAML || fail "cannot create node $node"
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels: {type: kwok, kubernetes.io/hostname: $node, e2e.muster.io/vgpu: "$SUFFIX"}
  annotations:
    kwok.x-k8s.io/node: fake
    volcano.sh/node-vgpu-register: "GPU-$node-a,4,16384,NVIDIA-Tesla T4,true,hami-core:GPU-$node-b,4,16384,NVIDIA-Tesla T4,true,hami-core:"
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", volcano.sh/vgpu-number: "8", volcano.sh/vgpu-memory: "32768", volcano.sh/vgpu-cores: "200"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", volcano.sh/vgpu-number: "8", volcano.sh/vgpu-memory: "32768", volcano.sh/vgpu-cores: "200"}
YAML
done
node_ready() { [[ $("$MUSTER_KUBECTL" get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
for node in "${VNODES[@]}"; do wait_for "$node Ready" 60 node_ready "$node"; done
# vgpu_pods PREFIX COUNT: pods of 1 vGPU, memory 2000/3000/5000 MiB and
# cores 0/20/40 by index, on the vGPU nodes only.
vgpu_pods() {
  python3 - "$SUFFIX" "$1" "$2" <<'PY'
import json, sys
suffix, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
items = []
for i in range(count):
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": str([2000, 3000, 5000][i % 3]),
              "volcano.sh/vgpu-cores": str([0, 20, 40][(i // 3) % 3])}
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{prefix}-{i:02d}"},
                  "spec": {"schedulerName": "volcano", "nodeSelector": {"e2e.muster.io/vgpu": suffix},
                           "containers": [{"name": "infer", "image": "example-infer:1",
                                           "resources": {"limits": limits}}]}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)
PY
}
vgpu_check() {
  { printf '{"pods": '; k get pods -o json; printf ', "nodes": '; "$MUSTER_KUBECTL" get nodes "${VNODES[@]}" -o json; printf '}'; } |
    python3 "$CHECK" vgpu
}
# checked: the vGPU invariants hold now (the scenario fails at once if not).
checked() {
  local summary
  summary=$(vgpu_check) || fail "vGPU invariants broken: $summary"
  echo "$summary"
}
vgpu_bound() { k get pods -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' | grep -c '^vgpu-' || true; }
vgpu_bound_at_least() { (($(vgpu_bound) >= $1)); }
checked_bound_at_least() {
  checked >/dev/null
  vgpu_bound_at_least "$1"
}
# 8 nodes x 2 GPUs x 4 vGPUs: the 50 fit; the extender dies after the first few.
vgpu_pods vgpu 50 >"$E2E_TMP/vgpu-pods.json"
k create -f "$E2E_TMP/vgpu-pods.json" >"$E2E_TMP/create.log" 2>&1 &
creator=$!
wait_for "3 vGPU pods bound" 60 vgpu_bound_at_least 3
"$CLUSTER" extender stop --signal KILL --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
killed_at=$(vgpu_bound)
e2e_log "extender killed (SIGKILL) with $killed_at of 50 vGPU pods bound"
checked >/dev/null
sleep 2
wait "$creator" || fail "creating the vGPU pods failed: $(tail -n 3 "$E2E_TMP/create.log")"
"$CLUSTER" extender start --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
require_extender
wait_for "all 50 vGPU pods bound after the restart" 120 checked_bound_at_least 50
pass "50 vGPU requests, $killed_at bound before a SIGKILL of the extender: $(checked)"
# 20 more: 14 vGPUs are left, and less memory than that on some GPUs.
vgpu_pods vgpu-more 20 | k create -f - >/dev/null || fail "creating 20 more vGPU pods failed"
stable() {
  local before
  before=$(vgpu_bound)
  checked >/dev/null
  sleep 3
  (($(vgpu_bound) == before))
}
wait_for "the vGPU nodes full (no more bound for 3 s)" 120 stable
summary=$(checked)
pending=$(json_field "$summary" pending)
((pending > 0)) || fail "every vGPU pod fit: the nodes were meant to fill ($summary)"
pass "the vGPU nodes filled, nothing oversubscribed: $summary"
waiting=$(k get pods --field-selector=status.phase=Pending -o jsonpath='{.items[0].metadata.name}')
failed=$(failed_scheduling "$waiting" | sed -n 1p)
e2e_log "$waiting waits: ${failed:0:240}"
# The shares come back: delete 20 bound pods, the waiting ones are placed.
mapfile -t gone < <(k get pods -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' | grep '^vgpu-' | sed -n 1,20p)
k delete pod "${gone[@]}" --wait=false >/dev/null
all_placed() {
  checked >/dev/null
  (($(json_field "$(checked)" pending) == 0))
}
wait_for "the waiting vGPU pods placed once 20 went" 120 all_placed
pass "after 20 deletions every waiting vGPU pod was placed: $(checked)"
