#!/usr/bin/env bash
# The Grafana dashboards (dashboards/*.json, issue 9) against a real Prometheus
# scraping the shared cluster's extender and reconciler during a gang + queue
# workload: every query of every panel must return data, and each dashboard is
# rendered to a PNG from that run's data.
#
#  1. Prometheus (the Debian package; MUSTER_PROMETHEUS names another binary)
#     as a plain process on a free port, its TSDB in a scratch directory,
#     scraping both /metrics every second with the target labels a Prometheus
#     Operator ServiceMonitor gives them (namespace muster-system, job
#     muster-metrics, pod, container).
#  2. The nodes get a GPU topology (two interleaved 4-GPU NVLink islands, the
#     annotation of clusters/gpu-racks-2x4.yaml) so GPU sets are chosen and
#     fragmentation is measured; it is removed on exit.
#  3. Queues obs-low (weight 1) and obs-high (weight 3). obs-low fills most of
#     the 128 GPUs with Volcano Jobs (gangs of 4 x 4, 2 x 8, 4 x 3 and 2 x 1
#     GPUs; the last completes); then obs-high arrives with 3 gangs of 4 x 4
#     GPUs: it deserves 48 GPUs, finds 20 free, and reclaims whole gangs from
#     obs-low, whose evicted Jobs restart (PodEvicted -> RestartJob, a retry).
#     Meanwhile a CPU Job that fails every run (PodFailed -> RestartJob,
#     maxRetry 2) ends Failed, an invalid Job is rejected, and a bind for a pod
#     that does not exist (what a stale kube-scheduler cache sends) fails.
#  4. dashboards/check.py lint, then query over the run's window (fails on any
#     query without data, naming dashboard / panel / refId), then render.
# Artifacts in MUSTER_OBSERVE_OUT (default /tmp/muster-observe): <dashboard>.png,
# results.json (every query's result), query.txt, prometheus.yml and its log.
# About 1 min. Needs the local cluster (cluster.sh): the ports of the
# extender and the reconciler come from its state.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

OUT=${MUSTER_OBSERVE_OUT:-/tmp/muster-observe}
PROMETHEUS=${MUSTER_PROMETHEUS:-prometheus}
CHECK=$E2E_REPO/dashboards/check.py
QUEUES=(obs-low obs-high)
TOPOLOGY_ANNOTATION=muster.io/gpu-topology

command -v "$PROMETHEUS" >/dev/null || fail "no prometheus binary (tools/install-deps.sh installs the Debian package)"
[[ -n ${MUSTER_EXTENDER_PORT:-} && -n ${MUSTER_RECONCILER_PORT:-} ]] ||
  fail "needs a cluster of e2e/cluster/cluster.sh (extender and reconciler ports)"
# render needs matplotlib: this python3, else Debian's (python3-matplotlib).
RENDER_PY=python3
python3 -c 'import matplotlib' 2>/dev/null || RENDER_PY=/usr/bin/python3
"$RENDER_PY" -c 'import matplotlib' 2>/dev/null || fail "matplotlib is not installed (python3-matplotlib)"

new_namespace
E2E_TMP=$(mktemp -d)
rm -rf "$OUT"
mkdir -p "$OUT"
PROM_PID=
ANNOTATED=()
e2e_before_cleanup() {
  if [[ -n $PROM_PID ]]; then
    kill "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
  fi
  ((${#ANNOTATED[@]} == 0)) || "$MUSTER_KUBECTL" annotate nodes "${ANNOTATED[@]}" "$TOPOLOGY_ANNOTATION-" >/dev/null 2>&1 || true
  "$MUSTER_KUBECTL" delete queues "${QUEUES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# --- 1. Prometheus ------------------------------------------------------------------
prom_port=$(python3 "$E2E_REPO/e2e/cluster/cluster_helper.py" free-ports 1)
PROM=http://127.0.0.1:$prom_port
target() { # JOB_NAME PORT CONTAINER
  cat <<EOF
- job_name: $1
  static_configs:
  - targets: ['127.0.0.1:$2']
    labels: {namespace: muster-system, job: muster-metrics, pod: muster-0, container: $3}
EOF
}
{
  printf 'global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\nscrape_configs:\n'
  target muster-extender "$MUSTER_EXTENDER_PORT" extender
  target muster-reconciler "$MUSTER_RECONCILER_PORT" reconciler
} >"$OUT/prometheus.yml"
"$PROMETHEUS" --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$E2E_TMP/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$OUT/prometheus.log" 2>&1 &
PROM_PID=$!
e2e_log "prometheus (pid $PROM_PID) on $PROM scraping extender :$MUSTER_EXTENDER_PORT, reconciler :$MUSTER_RECONCILER_PORT"

# prom_value EXPR: the value of an instant query (the first series), or nothing.
prom_value() {
  curl -fsS --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
prom_at_least() { # EXPR N: the query's value is >= N
  local v
  v=$(prom_value "$1") && [[ -n $v ]] && python3 -c "import sys; sys.exit(0 if float('$v') >= $2 else 1)"
}
wait_for "prometheus ready" 30 curl -fsS --max-time 2 "$PROM/-/ready"
wait_for "both targets up (container=extender|reconciler)" 30 prom_at_least 'sum(up{namespace="muster-system"})' 2
START=$(date +%s)

# --- 2. GPU topology on the nodes --------------------------------------------------
topology=$(sed -n "s|^ *$TOPOLOGY_ANNOTATION: '\(.*\"link\".*\)'\$|\1|p" "$E2E_REPO/e2e/clusters/gpu-racks-2x4.yaml" | sed -n 1p)
[[ -n $topology ]] || fail "no GPU topology annotation found in e2e/clusters/gpu-racks-2x4.yaml"
# Only nodes without one (others' annotations are not ours to change or remove).
mapfile -t ANNOTATED < <("$MUSTER_KUBECTL" get nodes -o json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["items"]:
    a = n["metadata"].get("annotations", {})
    if "muster.io/gpu-topology" not in a and n["status"].get("allocatable", {}).get("nvidia.com/gpu"):
        print(n["metadata"]["name"])')
((${#ANNOTATED[@]} > 0)) || fail "no GPU node without a topology annotation"
"$MUSTER_KUBECTL" annotate nodes "${ANNOTATED[@]}" "$TOPOLOGY_ANNOTATION=$topology" >/dev/null
wait_for "extender sees the topology of ${#ANNOTATED[@]} nodes" 30 \
  prom_at_least 'sum(muster_gpu_topology_nodes{source="annotation"})' "${#ANNOTATED[@]}"
pass "${#ANNOTATED[@]} nodes publish two 4-GPU NVLink islands"

# --- 3. queues and the workload ----------------------------------------------------
for q in obs-low:1 obs-high:3; do
  printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {weight: %s, reclaimable: true, parent: root}\n' \
    "${q%%:*}" "${q##*:}" | "$MUSTER_KUBECTL" apply -f - >/dev/null
  "$MUSTER_KUBECTL" patch queue "${q%%:*}" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null
done

# vcjob NAME QUEUE REPLICAS GPUS [RUN_SECONDS [EXIT_CODE [MAX_RETRY]]]: a
# Volcano Job of one task, a gang of REPLICAS pods with GPUS GPUs each (0: cpu
# only) restarted whole when a pod is evicted or fails; without RUN_SECONDS
# its pods run until deleted.
vcjob() {
  local name=$1 queue=$2 replicas=$3 gpus=$4 run=${5:-} code=${6:-0} retries=${7:-5} res ann=
  res="requests: {cpu: \"1\", memory: 1Gi}"
  [[ -z $run ]] || ann="muster.io/run-seconds: \"$run\", muster.io/exit-code: \"$code\""
  ((gpus == 0)) || res="requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"$gpus\"}, limits: {nvidia.com/gpu: \"$gpus\"}"
  cat <<EOF
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $name}
spec:
  schedulerName: volcano
  queue: $queue
  minAvailable: $replicas
  maxRetry: $retries
  policies:
  - {event: PodEvicted, action: RestartJob}
  - {event: PodFailed, action: RestartJob}
  tasks:
  - name: worker
    replicas: $replicas
    template:
      metadata:
        annotations: {$ann}
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: registry.invalid/fake:1
          resources: {$res}
EOF
}
job_phase() { field "vcjob/$1" '{.status.state.phase}'; }
job_phase_is() { [[ $(job_phase "$1") == "$2" ]]; }
jobs_in_phase() { # N PHASE JOB...: at least N of the JOBs are in PHASE
  local want=$1 phase=$2 n=0 j
  shift 2
  for j in "$@"; do [[ $(job_phase "$j") != "$phase" ]] || n=$((n + 1)); done
  ((n >= want))
}

# obs-low: 5 x 16 + 16 + 12 + 2 = 110 GPUs. The 8-GPU pods first, while whole
# nodes are free.
vcjob low-wide obs-low 2 8 | k apply -f - >/dev/null
wait_for "low-wide Running" 60 job_phase_is low-wide Running
{
  for i in 0 1 2 3 4; do vcjob "low-$i" obs-low 4 4; done
  vcjob low-frag obs-low 4 3
  vcjob low-single obs-low 2 1 8
} | k apply -f - >/dev/null
low_jobs=(low-wide low-0 low-1 low-2 low-3 low-4 low-frag)
wait_for "obs-low's 7 long Jobs Running" 90 jobs_in_phase 7 Running "${low_jobs[@]}"
pass "obs-low holds $(prom_value 'sum(muster_queue_allocated{queue="obs-low", resource="nvidia.com/gpu"})') GPUs," \
  "stranded GPUs $(prom_value 'sum(muster_gpus_stranded)')"
# One Job completes (before obs-high arrives: it would be the youngest victim).
wait_for "low-single Completed" 60 job_phase_is low-single Completed

# Failures of other kinds, while obs-low runs.
vcjob flaky default 2 0 1 1 2 | k apply -f - >/dev/null
# Invalid in a way the CRD cannot see (a dependsOn cycle): the reconciler
# refuses it (manifests/crds refuse the common mistakes at apply already).
k apply -f - >/dev/null <<'EOF'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: invalid-dep-cycle}
spec:
  schedulerName: volcano
  tasks:
  - {name: a, replicas: 1, dependsOn: {name: [b]}, template: {spec: {containers: [{name: main, image: registry.invalid/fake:1}]}}}
  - {name: b, replicas: 1, dependsOn: {name: [a]}, template: {spec: {containers: [{name: main, image: registry.invalid/fake:1}]}}}
EOF
reply=$(curl -sS --max-time 10 -H 'Content-Type: application/json' \
  -d "{\"PodName\":\"no-such-pod\",\"PodNamespace\":\"$E2E_NS\",\"PodUID\":\"00000000-0000-0000-0000-000000000000\",\"Node\":\"gpu-a-0\"}" \
  "http://127.0.0.1:$MUSTER_EXTENDER_PORT/scheduler/bind")
expect_contains "bind of a pod that does not exist" "$reply" '"Error"'

# obs-high arrives: 48 GPUs of demand, its deserved share (3/4 of 128 capped
# by its demand), 20 free. Its Jobs are admitted although they do not fit what
# is free (its queue is owed them), their pods reclaim whole gangs of obs-low.
high_jobs=(high-0 high-1 high-2)
for j in "${high_jobs[@]}"; do vcjob "$j" obs-high 4 4; done | k apply -f - >/dev/null
e2e_log "obs-high: 3 Jobs of 4 x 4 GPUs"
wait_for "a reclaim from obs-low" 60 prom_at_least 'sum(muster_queue_reclaims_total{queue="obs-low"})' 1
wait_for "obs-high's 3 Jobs Running" 90 jobs_in_phase 3 Running "${high_jobs[@]}"
wait_for "obs-high holds its 48 GPUs" 60 \
  prom_at_least 'sum(muster_queue_allocated{queue="obs-high", resource="nvidia.com/gpu"})' 48
pass "obs-high holds $(prom_value 'sum(muster_queue_allocated{queue="obs-high", resource="nvidia.com/gpu"})') GPUs," \
  "obs-low $(prom_value 'sum(muster_queue_allocated{queue="obs-low", resource="nvidia.com/gpu"})');" \
  "reclaims $(prom_value 'sum(muster_queue_reclaims_total{queue="obs-low"})')," \
  "retries $(prom_value 'sum(muster_reconciler_job_retries_total)')"
wait_for "flaky Failed (maxRetry 2)" 60 job_phase_is flaky Failed
wait_for "invalid-dep-cycle Failed" 30 job_phase_is invalid-dep-cycle Failed
# Rates over $__rate_interval (4 scrapes) see the last changes.
sleep 5
END=$(date +%s)

# --- 4. the dashboards against this run ---------------------------------------------
python3 "$CHECK" lint "$E2E_REPO/dashboards" | tee "$OUT/lint.txt" | tail -n 1
python3 "$CHECK" query --prometheus "$PROM" --namespace muster-system --start "$START" --end "$END" \
  --scrape-interval 1 --save "$OUT/results.json" "$E2E_REPO/dashboards" >"$OUT/query.txt" ||
  { cat "$OUT/query.txt"; fail "dashboard queries without data (above; $OUT/query.txt)"; }
grep '^query:' "$OUT/query.txt"
"$RENDER_PY" "$CHECK" render --results "$OUT/results.json" --out "$OUT" | sed 's/^/  /'
pass "every panel query has data over $((END - START)) s; PNGs in $OUT"
