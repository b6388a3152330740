#!/usr/bin/env bash
# `make demo`: a local Kubernetes control plane with 16 fake 8-GPU nodes
# (e2e/clusters/gpu-16.yaml, via e2e/cluster/cluster.sh), the examples in
# examples/ submitted to it, live progress every 2 s, a summary - and the
# cluster left running for your own `kubectl apply -f`. `make demo-down` (or
# tools/demo.sh down) stops it.
#
# What runs today: the stock kube-scheduler schedules the plain pods of
# examples/pods/batch.yaml and gpu-pod.yaml; the `volcano` kube-scheduler
# schedules examples/pods/volcano-pods.yaml through the muster extender (built
# here, started by cluster.sh --muster), which binds them with its placement
# annotations, and the pods of examples/pods/queued-pods.yaml two at a time
# through a Queue capped at 4 GPUs (plain pods in a queue, as Volcano's
# PodGroups of one); kwok plays every pod's lifecycle (Running, then
# Succeeded/Failed after its muster.io/run-seconds). The Volcano Jobs of
# examples/volcano/ (CTR parameter server, MPI, the MPI Job whose workers ask
# half a GPU each, PyTorch, an LLM pretraining gang, a three-stage dependsOn
# chain) run through the muster reconciler
# (also started by cluster.sh --muster): PodGroup, gated pods, plugins,
# completion. The demo ends when every pod and every Job has finished.
#
# Usage: tools/demo.sh [up] | down
# Environment: MUSTER_DEMO_DIR (cluster directory, default
# ${TMPDIR:-/tmp}/muster-demo), MUSTER_DEMO_SECONDS (progress bound, default 240).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
readonly REPO
readonly CLUSTER=$REPO/e2e/cluster/cluster.sh
readonly DEMO_DIR=${MUSTER_DEMO_DIR:-${TMPDIR:-/tmp}/muster-demo}
readonly NS=muster-demo
readonly BOUND=${MUSTER_DEMO_SECONDS:-240}

say() { printf '[demo] %s\n' "$*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

down() {
  if [[ -e $DEMO_DIR ]]; then
    "$CLUSTER" down --dir "$DEMO_DIR"
  else
    say "no demo cluster at $DEMO_DIR"
  fi
}

up() {
  if [[ -f $DEMO_DIR/state ]] && "$CLUSTER" status --dir "$DEMO_DIR" >/dev/null 2>&1; then
    die "a demo cluster is already running in $DEMO_DIR; stop it first: make demo-down"
  fi
  say "building muster (build/)"
  cmake -S "$REPO" -B "$REPO/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
    die "cmake configure failed"
  cmake --build "$REPO/build" --target muster -j"$(nproc)" >/dev/null || die "building muster failed"
  say "starting the local cluster (16 nodes x 8 GPUs), the muster extender and reconciler in $DEMO_DIR"
  local env
  env=$("$CLUSTER" up --cluster "$REPO/e2e/clusters/gpu-16.yaml" --dir "$DEMO_DIR" \
    --muster "$REPO/build/cmd/muster")
  eval "$env"
  k() { "$MUSTER_KUBECTL" --request-timeout=20s "$@"; }

  k create namespace "$NS" >/dev/null
  local deadline=$((SECONDS + 60))
  until k -n "$NS" get serviceaccount default >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "namespace $NS got no default ServiceAccount within 60s"
    sleep 0.3
  done
  say "submitting examples/pods/ (stock scheduler, and volcano via muster) and examples/volcano/ into namespace $NS"
  k -n "$NS" apply -f examples/pods/ | sed 's/^/  /' >&2
  k -n "$NS" apply -f examples/volcano/ | sed 's/^/  /' >&2

  local t0=$SECONDS elapsed snap tty=0 tick wait_us
  tick=${EPOCHREALTIME//[.,]/}
  [[ -t 1 ]] && tty=1
  snapshot() {
    k get pods -n "$NS" -o json >"$DEMO_DIR/.demo-pods.json" &&
      k get nodes,jobs.batch.volcano.sh -A -o json >"$DEMO_DIR/.demo-rest.json" &&
      python3 -c 'import json,sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
print(json.dumps({"items": a["items"] + b["items"]}))' "$DEMO_DIR/.demo-pods.json" "$DEMO_DIR/.demo-rest.json"
  }
  while :; do
    elapsed=$((SECONDS - t0))
    snap=$(snapshot) || die "cannot read the cluster"
    if ((tty)); then
      printf '\033[H\033[2J'
      python3 tools/demo_view.py frame "$elapsed" <<<"$snap"
    else
      python3 tools/demo_view.py line "$elapsed" <<<"$snap"
    fi
    if python3 tools/demo_view.py finished <<<"$snap"; then
      break
    fi
    if ((elapsed >= BOUND)); then
      say "stopped watching after ${BOUND}s (MUSTER_DEMO_SECONDS); pods keep going"
      break
    fi
    # Next frame 2 s after this one started (reading the cluster takes a while).
    tick=$((tick + 2000000))
    wait_us=$((tick - ${EPOCHREALTIME//[.,]/}))
    ((wait_us <= 0)) || sleep "$((wait_us / 1000000)).$(printf '%06d' $((wait_us % 1000000)))"
  done
  ((tty)) || python3 tools/demo_view.py frame "$((SECONDS - t0))" <<<"$snap"
  python3 tools/demo_view.py summary <<<"$snap"
  rm -f "$DEMO_DIR"/.demo-*.json
  cat <<EOF

The cluster keeps running. Use it with:
  export KUBECONFIG=$KUBECONFIG
  alias kubectl=$MUSTER_KUBECTL   # $MUSTER_K8S_VERSION, the version the cluster runs
  kubectl -n $NS get pods -o wide
  kubectl apply -f <your Volcano Job>.yaml      # CRDs: manifests/crds/
Stop it with: make demo-down
EOF
}

case ${1:-up} in
  up) up ;;
  down) down ;;
  *)
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
    ;;
esac
