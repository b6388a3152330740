#!/usr/bin/env bash
# Upstream gangs: Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1, feature
# gate GenericWorkload, Kubernetes >= 1.37; MUSTER_GENERIC_WORKLOAD=1 at
# cluster.sh up, CMake's e2e_gw_ cluster) whose pods
# use schedulerName volcano are muster gangs: minMember = gang.minCount, queue =
# the PodGroup's annotation scheduling.volcano.sh/queue-name, muster's GPU
# topology and preemption. Division of work ("cooperate"): the volcano
# kube-scheduler keeps its GangScheduling plugin (PreEnqueue, the pod-group
# cycle, Permit); muster's filter rejects every member until muster reserved
# the whole gang, then answers each member exactly its reserved node. muster
# writes no status to upstream PodGroups, only Events.
#
#  a. An upstream PodGroup gang of 8 pods x 4 GPUs (schedulerName volcano) in a
#     queue of its own is placed all or nothing by muster, in its queue, on the
#     best GPUs: every node is annotated with two interleaved 4-GPU NVLink
#     islands (as in e2e/clusters/gpu-racks-2x4.yaml; observe.sh does the
#     same), so each member must get one whole island (0,2,4,6 or 1,3,5,7).
#     Checked: all 8 bound; from the first member bound to the last at most
#     PARTIAL_MAX_MS (a watch records each bind); muster's /debug/state lists
#     the gang under UPSTREAM_KEY in that queue with minMember 8; a
#     GangReserved Event on the PodGroup (apiVersion scheduling.k8s.io/v1beta1);
#     the PodGroup's status holds no Volcano-style fields and no field manager
#     of muster's touched it (kube-scheduler's conditions are fine).
#  b. The division of work holds for a gang that does not fit: 9 whole-node
#     pods of the stock scheduler leave 7 of 16 nodes free; an upstream gang of
#     8 pods x 8 GPUs waits ~WAIT_SECONDS: none bound, muster's /debug/state
#     shows it waiting with nothing reserved, and the volcano kube-scheduler's
#     scheduler_permit_wait_duration_seconds_count did not move (upstream holds
#     no member at Permit while muster has not reserved). One blocker deleted:
#     all 8 bind together.
#  Across the scenario every Permit wait of the volcano kube-scheduler was
#  short (bucket le=PERMIT_WAIT_MAX_S) and successful: GangScheduling's Permit
#  makes minCount-1 members of a gang wait for the last one even in the
#  pod-group cycle (measured on 1.37.2: a gang of 8 on the stock scheduler adds
#  7 waits), so their number is not zero by design - their length is the check.
#  scheduler_podgroup_schedule_attempts_total is printed (the pod-group cycle ran).
# Runs on the shared cluster (gpu-16: 16 nodes x 8 GPUs, no topology of their own).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

GANG_A=train-a                  # test a's PodGroup
GANG_B=train-b                  # test b's PodGroup
QUEUE=e2e-upstream-gang         # test a's and b's Volcano Queue (cluster-scoped)
GANG_LABEL=e2e.muster.io/upstream-gang
# muster's key of an upstream PodGroup in /debug/state: PREFIX/<namespace>/<name>
# (Volcano's PodGroups are <namespace>/<name>).
UPSTREAM_KEY_PREFIX=scheduling.k8s.io
PARTIAL_MAX_MS=2000             # longest time a gang may be partly bound
WAIT_SECONDS=15                 # test b: how long the gang that does not fit is watched
PERMIT_WAIT_MAX_S=1.024         # a bucket bound of scheduler_permit_wait_duration_seconds
TOPOLOGY_ANNOTATION=muster.io/gpu-topology
PG_RESOURCE=podgroups.scheduling.k8s.io
EXT_URL=http://127.0.0.1:${MUSTER_EXTENDER_PORT:-}
VSCHED_URL=https://127.0.0.1:${MUSTER_VOLCANO_SCHEDULER_PORT:-}

[[ -n ${MUSTER_EXTENDER_PORT:-} && -n ${MUSTER_VOLCANO_SCHEDULER_PORT:-} ]] ||
  fail "needs a cluster of e2e/cluster/cluster.sh (extender and volcano scheduler ports)"
[[ ${MUSTER_GENERIC_WORKLOAD:-0} == 1 ]] ||
  fail "the cluster runs without the feature gate GenericWorkload (MUSTER_GENERIC_WORKLOAD=${MUSTER_GENERIC_WORKLOAD:-unset}; Kubernetes >= 1.37 and MUSTER_GENERIC_WORKLOAD=1 at cluster.sh up)"
# Read the whole list before matching: `kubectl ... | grep -q` fails under
# pipefail whenever grep quits before kubectl's last write (SIGPIPE, 141).
served=$("$MUSTER_KUBECTL" api-resources --api-group=scheduling.k8s.io -o name) ||
  fail "kubectl api-resources failed"
grep -qx "$PG_RESOURCE" <<<"$served" ||
  fail "the API server does not serve $PG_RESOURCE (scheduling.k8s.io/v1beta1)"

new_namespace
E2E_TMP=$(mktemp -d)
ANNOTATED=()
RECORDERS=()
DONE=0
e2e_before_cleanup() {
  local pid
  for pid in ${RECORDERS[@]+"${RECORDERS[@]}"}; do kill "$pid" 2>/dev/null || true; done
  if ((!DONE)); then
    # lib.sh prints the namespace's pods after this, once they are gone: now.
    e2e_log "state at failure (namespace $E2E_NS):"
    k get pods -o wide 2>&1 | sed 's/^/  /' || true
    k get "$PG_RESOURCE" -o yaml 2>&1 | grep -v '^ *\(uid\|resourceVersion\|creationTimestamp\):' | sed 's/^/  /' || true
    k get events --sort-by=.lastTimestamp 2>&1 | tail -n 20 | sed 's/^/  /' || true
    e2e_log "muster's /debug/state gangs:"
    curl -fsS --max-time 5 "$EXT_URL/debug/state" 2>&1 |
      python3 -c 'import json, sys; [print("  ", json.dumps(g)) for g in json.load(sys.stdin).get("gangs", [])]' 2>&1 || true
  fi
  # The pods go before the nodes lose their topology: no ledger is rebuilt
  # under a pod holding GPU ids of an island that no longer exists.
  "$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=true --timeout=60s >/dev/null 2>&1 || true
  ((${#ANNOTATED[@]} == 0)) || "$MUSTER_KUBECTL" annotate nodes "${ANNOTATED[@]}" "$TOPOLOGY_ANNOTATION-" >/dev/null 2>&1 || true
  "$MUSTER_KUBECTL" delete queue "$QUEUE" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# --- helpers -------------------------------------------------------------------------
# upstream_gang NAME MIN_COUNT PODS GPUS: an upstream PodGroup (gang policy, in
# $QUEUE by annotation) and PODS pods of schedulerName volcano joining it, each
# asking GPUS nvidia.com/gpu and running until deleted. YAML on stdout.
upstream_gang() {
  local name=$1 min=$2 pods=$3 gpus=$4 i
  cat <<EOF
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: $name
  annotations:
    scheduling.volcano.sh/queue-name: $QUEUE
spec:
  schedulingPolicy:
    gang:
      minCount: $min
EOF
  for ((i = 0; i < pods; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $name-$i
  labels:
    $GANG_LABEL: $name
spec:
  schedulerName: volcano
  schedulingGroup:
    podGroupName: $name
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: registry.invalid/muster/fake:1
    resources:
      limits:
        nvidia.com/gpu: "$gpus"
      requests:
        cpu: 100m
EOF
  done
}

# record_binds GANG FILE: in the background, one line "<epoch us> <pod> <node|->"
# per watch event of GANG's pods, into FILE (the time each member was bound).
record_binds() {
  : >"$2"
  "$MUSTER_KUBECTL" --namespace "$E2E_NS" get pods -l "$GANG_LABEL=$1" --watch \
    -o 'jsonpath={.metadata.name}{" "}{.spec.nodeName}{"\n"}' \
    > >(while read -r pod node; do printf '%s %s %s\n' "${EPOCHREALTIME//[.,]/}" "$pod" "${node:--}"; done >>"$2") \
    2>"$2.err" &
  RECORDERS+=("$!")
}
# bound_members FILE: how many pods FILE saw bound.
bound_members() { awk '$3 != "-" {b[$2] = 1} END {print length(b)}' "$1"; }
# watch_saw FILE N: FILE saw N pods bound (for wait_for).
watch_saw() { (($(bound_members "$1") == $2)); }
# partial_ms FILE N: milliseconds from the first member bound to the N-th
# (fails, printing how many were bound, when fewer than N were).
partial_ms() {
  awk -v n="$2" '$3 != "-" && !($2 in b) {
      b[$2] = 1; c++
      if (c == 1) first = $1
      if (c == n) { printf "%d\n", ($1 - first) / 1000; done = 1; exit }
    }
    END { if (!done) { print c + 0; exit 1 } }' "$1"
}
bound_count() {
  k get pods -l "$GANG_LABEL=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}
all_bound() { [[ $(bound_count "$1") -eq $2 ]]; }

# gang_debug KEY: muster's /debug/state entry of that gang (one JSON object;
# fails when it is not listed).
gang_debug() {
  curl -fsS --max-time 5 "$EXT_URL/debug/state" | python3 -c '
import json, sys
key = sys.argv[1]
for g in json.load(sys.stdin).get("gangs", []):
    if g.get("podGroup") == key:
        print(json.dumps(g, sort_keys=True))
        sys.exit(0)
sys.exit(1)' "$1"
}
# gang_field JSON FIELD: one field of a gang_debug object ("" when absent).
gang_field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"; }
# poll_gang KEY FILE: in the background, every 0.25 s, the gang's /debug/state
# entry appended to FILE while it is listed (a gang muster placed may leave
# the list once its pods run); POLLER is its PID.
POLLER=
poll_gang() {
  (
    while :; do
      gang_debug "$1" >>"$2" 2>/dev/null || true
      sleep 0.25
    done
  ) &
  POLLER=$!
  RECORDERS+=("$POLLER")
}

# sched_metric NAME [LABEL=VALUE...]: the sum of the volcano kube-scheduler's
# series NAME whose labels include those (0 when there is none: a histogram
# or counter vector shows no series before its first observation).
sched_metric() {
  curl -fsSk --max-time 5 "$VSCHED_URL/metrics" | python3 -c '
import re, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
total = 0.0
for line in sys.stdin:
    m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
    if not m or m.group(1) != name:
        continue
    labels = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(2) or ""))
    if all(labels.get(k) == v for k, v in want.items()):
        total += float(m.group(3))
print(int(total) if total == int(total) else total)' "$@"
}
ext_metric() { curl -fsS --max-time 5 "$EXT_URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# The volcano kube-scheduler's Permit waits before anything of this scenario.
sched_metric scheduler_permit_wait_duration_seconds_count >/dev/null ||
  fail "cannot read the volcano kube-scheduler's $VSCHED_URL/metrics (cluster.sh serves it to 127.0.0.1)"
permit0=$(sched_metric scheduler_permit_wait_duration_seconds_count)
permit_ok0=$(sched_metric scheduler_permit_wait_duration_seconds_count result=Success)
permit_short0=$(sched_metric scheduler_permit_wait_duration_seconds_bucket le="$PERMIT_WAIT_MAX_S")
attempts0=$(sched_metric scheduler_podgroup_schedule_attempts_total profile=volcano)
unschedulable0=$(sched_metric scheduler_podgroup_schedule_attempts_total profile=volcano result=unschedulable)
e2e_log "volcano kube-scheduler before: $permit0 Permit waits, $attempts0 pod-group scheduling attempts"

# --- setup: the queue, GPU topology on every node --------------------------------------
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {weight: 1, reclaimable: true, parent: root}\n' \
  "$QUEUE" | "$MUSTER_KUBECTL" apply -f - >/dev/null || fail "cannot create the queue $QUEUE"
"$MUSTER_KUBECTL" patch queue "$QUEUE" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null ||
  fail "cannot open the queue $QUEUE"

topology=$(sed -n "s|^ *$TOPOLOGY_ANNOTATION: '\(.*\"link\".*\)'\$|\1|p" "$E2E_REPO/e2e/clusters/gpu-racks-2x4.yaml" | sed -n 1p)
[[ -n $topology ]] || fail "no GPU topology annotation found in e2e/clusters/gpu-racks-2x4.yaml"
# Only nodes without one (others' annotations are not ours to change or remove).
mapfile -t ANNOTATED < <("$MUSTER_KUBECTL" get nodes -o json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["items"]:
    a = n["metadata"].get("annotations", {})
    if "muster.io/gpu-topology" not in a and n["status"].get("allocatable", {}).get("nvidia.com/gpu") == "8":
        print(n["metadata"]["name"])')
((${#ANNOTATED[@]} >= 16)) || fail "want 16 nodes of 8 GPUs without a topology annotation, found ${#ANNOTATED[@]}"
"$MUSTER_KUBECTL" annotate nodes "${ANNOTATED[@]}" "$TOPOLOGY_ANNOTATION=$topology" >/dev/null ||
  fail "cannot annotate the nodes with a GPU topology"
topology_seen() { [[ $(ext_metric 'muster_gpu_topology_nodes{source="annotation"}') -ge ${#ANNOTATED[@]} ]]; }
wait_for "the extender sees the topology of ${#ANNOTATED[@]} nodes" 30 topology_seen
pass "${#ANNOTATED[@]} nodes publish two interleaved 4-GPU NVLink islands (0,2,4,6 and 1,3,5,7)"

# --- a. 8 x 4 GPUs: all or nothing, in its queue, on the best GPUs ------------------------
key_a=$UPSTREAM_KEY_PREFIX/$E2E_NS/$GANG_A
record_binds "$GANG_A" "$E2E_TMP/binds-a"
poll_gang "$key_a" "$E2E_TMP/debug-a"
upstream_gang "$GANG_A" 8 8 4 >"$E2E_TMP/gang-a.yaml"
k apply -f "$E2E_TMP/gang-a.yaml" >/dev/null || fail "the API server refused the upstream PodGroup $GANG_A or its pods"
e2e_log "created PodGroup $PG_RESOURCE/$GANG_A (gang minCount 8, queue $QUEUE) and 8 pods x 4 GPUs"
wait_for "all 8 members of $GANG_A bound" 60 all_bound "$GANG_A" 8
wait_for "the watch saw 8 members of $GANG_A bound" 10 watch_saw "$E2E_TMP/binds-a" 8
spread=$(partial_ms "$E2E_TMP/binds-a" 8) || fail "the watch saw only $spread members of $GANG_A bound"
((spread <= PARTIAL_MAX_MS)) ||
  fail "$GANG_A was partly bound for ${spread} ms (first member to the 8th), over ${PARTIAL_MAX_MS} ms: not all or nothing"
pass "$GANG_A all or nothing: 0 -> 8 members bound within ${spread} ms"

# The best GPUs: each member one whole NVLink island, no GPU given twice.
k get pods -l "$GANG_LABEL=$GANG_A" -o json | python3 -c '
import json, sys
islands = ("0,2,4,6", "1,3,5,7")
held, bad, nodes = {}, [], set()
for p in json.load(sys.stdin)["items"]:
    name, node = p["metadata"]["name"], p["spec"].get("nodeName", "")
    ids = p["metadata"].get("annotations", {}).get("muster.io/gpu-ids", "")
    nodes.add(node)
    if ids not in islands:
        bad.append(f"{name} on {node}: GPUs \"{ids}\"")
    for g in ids.split(","):
        if g and (node, g) in held:
            bad.append(f"{name} and {held[(node, g)]} both hold GPU {g} of {node}")
        held[(node, g)] = name
if bad:
    print("not one NVLink island each: " + "; ".join(bad))
    sys.exit(1)
print(f"every member got one NVLink island, on {len(nodes)} nodes")' >"$E2E_TMP/islands" ||
  fail "$GANG_A: $(cat "$E2E_TMP/islands")"
pass "$GANG_A on the best GPUs: $(cat "$E2E_TMP/islands")"

# muster saw it as a gang of 8 in its queue.
[[ -s $E2E_TMP/debug-a ]] || sleep 1
kill "$POLLER" 2>/dev/null || true
seen=$(grep -m 1 '"reserved": [1-9]' "$E2E_TMP/debug-a" || tail -n 1 "$E2E_TMP/debug-a" 2>/dev/null || true)
[[ -n $seen ]] || seen=$(gang_debug "$key_a") ||
  fail "muster's /debug/state never listed the gang $key_a (UPSTREAM_KEY_PREFIX $UPSTREAM_KEY_PREFIX)"
expect_eq "muster's queue of $key_a" "$(gang_field "$seen" queue)" "$QUEUE"
expect_eq "muster's minMember of $key_a" "$(gang_field "$seen" minMember)" 8
e2e_log "muster's view of $key_a: $seen"

# A GangReserved Event on the upstream PodGroup.
reserved_events() {
  k get events --field-selector "reason=GangReserved,involvedObject.name=$GANG_A,involvedObject.kind=PodGroup" \
    -o 'jsonpath={range .items[*]}{.involvedObject.apiVersion}{" "}{.message}{"\n"}{end}'
}
wait_for "a GangReserved Event on PodGroup $GANG_A" 20 nonempty reserved_events
api_versions=$(reserved_events | awk '{print $1}' | sort -u | tr '\n' ' ')
expect_eq "the GangReserved Event's involvedObject apiVersion" "$api_versions" "scheduling.k8s.io/v1beta1 "
e2e_log "GangReserved: $(reserved_events | sed -n 1p)"

# muster wrote nothing to the PodGroup: no Volcano-style status, no field manager of its own.
k get "$PG_RESOURCE" "$GANG_A" -o json --show-managed-fields | python3 -c '
import json, sys
pg = json.load(sys.stdin)
status = pg.get("status") or {}
problems = []
extra = sorted(set(status) - {"conditions", "resourceClaimStatuses"})
if extra:
    problems.append(f"status has {extra} (Volcano-style fields)")
managers = sorted({m.get("manager", "") for m in pg["metadata"].get("managedFields", [])})
ours = [m for m in managers if m.startswith("muster")]
if ours:
    problems.append(f"field managers {ours} wrote to it")
conditions = [c.get("type") for c in status.get("conditions", [])]
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(f"status conditions {conditions}, field managers {managers}")' >"$E2E_TMP/pg-a" ||
  fail "muster wrote to the upstream PodGroup $GANG_A: $(cat "$E2E_TMP/pg-a")"
pass "PodGroup $GANG_A untouched by muster: $(cat "$E2E_TMP/pg-a")"

# --- b. a gang that does not fit waits with nothing held, then binds whole -----------------
k delete pods -l "$GANG_LABEL=$GANG_A" --wait=true --timeout=60s >/dev/null || fail "cannot delete $GANG_A's pods"
k delete "$PG_RESOURCE" "$GANG_A" --wait=true --timeout=60s >/dev/null || fail "cannot delete PodGroup $GANG_A"
python3 "$E2E_LIB_DIR/placement.py" pods blocker 9 8 default-scheduler | k apply -f - >/dev/null ||
  fail "cannot create the blocker pods"
blockers_bound() { [[ $(k get pods -l batch=blocker -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .) -eq 9 ]]; }
wait_for "9 blocker pods x 8 GPUs bound by the stock scheduler" 60 blockers_bound
pass "9 of 16 nodes full: 7 whole nodes free for a gang of 8 x 8 GPUs"

key_b=$UPSTREAM_KEY_PREFIX/$E2E_NS/$GANG_B
permit_b0=$(sched_metric scheduler_permit_wait_duration_seconds_count)
record_binds "$GANG_B" "$E2E_TMP/binds-b"
upstream_gang "$GANG_B" 8 8 8 | k apply -f - >/dev/null || fail "the API server refused the upstream PodGroup $GANG_B or its pods"
e2e_log "created PodGroup $PG_RESOURCE/$GANG_B (gang minCount 8) and 8 pods x 8 GPUs; watching ${WAIT_SECONDS}s"
wait_for "muster lists $key_b" 20 gang_debug "$key_b"
end=$((SECONDS + WAIT_SECONDS))
while ((SECONDS < end)); do
  n=$(bound_count "$GANG_B")
  ((n == 0)) || fail "$n members of $GANG_B bound while the gang does not fit (7 free nodes for 8)"
  sleep 1
done
(($(bound_members "$E2E_TMP/binds-b") == 0)) || fail "the watch saw members of $GANG_B bound while it did not fit"
waiting=$(gang_debug "$key_b") || fail "muster's /debug/state no longer lists $key_b"
expect_eq "muster's reserved members of the waiting $key_b" "$(gang_field "$waiting" reserved)" 0
expect_eq "muster's scheduled members of the waiting $key_b" "$(gang_field "$waiting" scheduled)" 0
[[ -n $(gang_field "$waiting" waitReason) ]] || fail "muster's /debug/state gives no waitReason for $key_b: $waiting"
pass "$GANG_B waits, nothing bound or reserved: $(gang_field "$waiting" waitReason): $(gang_field "$waiting" waitMessage)"
permit_b1=$(sched_metric scheduler_permit_wait_duration_seconds_count)
expect_eq "new volcano kube-scheduler Permit waits while $GANG_B did not fit" $((permit_b1 - permit_b0)) 0
e2e_log "volcano kube-scheduler pod-group scheduling attempts in this scenario so far:" \
  "$(($(sched_metric scheduler_podgroup_schedule_attempts_total profile=volcano) - attempts0))," \
  "unschedulable $(($(sched_metric scheduler_podgroup_schedule_attempts_total profile=volcano result=unschedulable) - unschedulable0))"

k delete pod blocker-0 --wait=true --timeout=60s >/dev/null || fail "cannot delete blocker-0"
e2e_log "deleted blocker-0: 8 whole nodes free"
wait_for "all 8 members of $GANG_B bound" 60 all_bound "$GANG_B" 8
wait_for "the watch saw 8 members of $GANG_B bound" 10 watch_saw "$E2E_TMP/binds-b" 8
spread=$(partial_ms "$E2E_TMP/binds-b" 8) || fail "the watch saw only $spread members of $GANG_B bound"
((spread <= PARTIAL_MAX_MS)) || fail "$GANG_B was partly bound for ${spread} ms, over ${PARTIAL_MAX_MS} ms"
pass "$GANG_B bound whole once it fit: 0 -> 8 within ${spread} ms"

# --- the volcano kube-scheduler's Permit over the whole scenario ---------------------------
permit1=$(sched_metric scheduler_permit_wait_duration_seconds_count)
permit_ok1=$(sched_metric scheduler_permit_wait_duration_seconds_count result=Success)
permit_short1=$(sched_metric scheduler_permit_wait_duration_seconds_bucket le="$PERMIT_WAIT_MAX_S")
attempts1=$(sched_metric scheduler_podgroup_schedule_attempts_total profile=volcano)
waits=$((permit1 - permit0))
e2e_log "volcano kube-scheduler: $waits Permit waits, $((attempts1 - attempts0)) pod-group scheduling attempts in this scenario"
expect_eq "Permit waits that did not end in Success" $((waits - (permit_ok1 - permit_ok0))) 0
expect_eq "Permit waits longer than ${PERMIT_WAIT_MAX_S}s" $((waits - (permit_short1 - permit_short0))) 0
((attempts1 > attempts0)) || fail "the volcano kube-scheduler ran no pod-group scheduling cycle (scheduler_podgroup_schedule_attempts_total)"
pass "no member was held at Permit: $waits brief waits (each under ${PERMIT_WAIT_MAX_S}s, the gang's last member releasing the others)"
DONE=1
