#!/usr/bin/env bash
# muster on a kind cluster, for developers who have Docker (the build hosts do
# not: there this script is only linted, by ctest e2e_lint).
#
# Usage: e2e/kind/deploy.sh up | test | down | kubeconfig
#   up     create the kind cluster (kind-config.yaml), apply our CRDs and the
#          default queues, run kwok in-cluster with our stages
#          (e2e/cluster/kwok-stages.yaml as Stage objects), create the fake GPU
#          nodes of MUSTER_CLUSTER_FILE, and install muster from manifests/
#          (docs/operator-guide.md) through an overlay: MUSTER_IMAGE, the
#          scheduler on the kind node, no ServiceMonitor (no Prometheus
#          Operator) - when the MUSTER_IMAGE image exists locally (else it
#          says so and skips it)
#   test   run the e2e scenarios against it (MUSTER_E2E_KUBECONFIG)
#   down   delete the kind cluster
#   kubeconfig  print the path of the cluster's kubeconfig
# Environment: MUSTER_IMAGE (default muster:dev), MUSTER_CLUSTER_FILE (default
# e2e/clusters/gpu-4.yaml), KIND (default kind), KUBECTL (default kubectl),
# KWOK_VERSION (default v0.7.0, same as the local cluster).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
readonly HERE REPO
readonly NAME=muster-e2e
readonly KIND=${KIND:-kind}
readonly KUBECTL=${KUBECTL:-kubectl}
readonly IMAGE=${MUSTER_IMAGE:-muster:dev}
readonly CLUSTER_FILE=${MUSTER_CLUSTER_FILE:-$REPO/e2e/clusters/gpu-4.yaml}
readonly KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
# The kube-scheduler of manifests/kustomization.yaml (`images:`).
readonly SCHEDULER_IMAGE=registry.k8s.io/kube-scheduler:v1.34.4
KUBECONFIG_FILE=${XDG_CACHE_HOME:-$HOME/.cache}/muster/kind-$NAME.kubeconfig
readonly KUBECONFIG_FILE

log() { printf '[kind] %s\n' "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required"; }
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

cmd_up() {
  need "$KIND"
  need "$KUBECTL"
  need docker
  need python3
  mkdir -p "$(dirname "$KUBECONFIG_FILE")"
  if grep -qx "$NAME" <<<"$("$KIND" get clusters 2>/dev/null)"; then
    log "kind cluster $NAME exists; reusing it"
    "$KIND" get kubeconfig --name "$NAME" >"$KUBECONFIG_FILE"
  else
    "$KIND" create cluster --config "$HERE/kind-config.yaml" --kubeconfig "$KUBECONFIG_FILE" --wait 120s
  fi
  # Real (kind) nodes get type=kind-node; the system pods we add stay on them.
  kc label nodes --all --overwrite type=kind-node >/dev/null

  log "CRDs and default queues"
  kc apply --server-side -f "$REPO/manifests/crds/" >/dev/null
  kc wait --for=condition=Established --timeout=60s \
    crd/jobs.batch.volcano.sh crd/podgroups.scheduling.volcano.sh crd/queues.scheduling.volcano.sh \
    crd/commands.bus.volcano.sh >/dev/null
  kc apply --server-side -f "$REPO/manifests/default-queues.yaml" >/dev/null
  local q
  for q in root default; do
    kc patch queue "$q" --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null
  done

  log "kwok $KWOK_VERSION in-cluster, with muster's stages"
  kc apply -f "https://github.com/kubernetes-sigs/kwok/releases/download/$KWOK_VERSION/kwok.yaml" >/dev/null
  kc -n kube-system patch deployment kwok-controller --type=merge \
    -p '{"spec":{"template":{"spec":{"nodeSelector":{"type":"kind-node"}}}}}' >/dev/null
  kc wait --for=condition=Established --timeout=60s crd/stages.kwok.x-k8s.io >/dev/null
  kc apply -f "$REPO/e2e/cluster/kwok-stages.yaml" >/dev/null
  kc -n kube-system rollout status deployment/kwok-controller --timeout=180s

  if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    log "muster from manifests/ ($IMAGE): volcano scheduler, extender, reconciler"
    docker image inspect "$SCHEDULER_IMAGE" >/dev/null 2>&1 || docker pull "$SCHEDULER_IMAGE"
    "$KIND" load docker-image --name "$NAME" "$IMAGE" "$SCHEDULER_IMAGE"
    local overlay
    overlay=$(kind_overlay)
    kc apply --server-side -k "$overlay" >/dev/null
    rm -rf "$overlay"
    kc -n muster-system rollout status deployment/volcano-scheduler --timeout=180s
  else
    log "image $IMAGE not found locally: skipping the volcano scheduler (build the image, then rerun up)"
  fi

  log "fake GPU nodes from ${CLUSTER_FILE#"$REPO"/}"
  local nodes n
  nodes=$(mktemp)
  n=$(python3 "$REPO/e2e/cluster/cluster_helper.py" render-nodes "$CLUSTER_FILE" "$nodes")
  kc apply -f "$nodes" >/dev/null
  rm -f "$nodes"
  local deadline=$((SECONDS + 120))
  until kc get nodes -l type=kwok -o json | python3 "$REPO/e2e/cluster/cluster_helper.py" nodes-ready "$n" >/dev/null; do
    ((SECONDS < deadline)) || die "the $n kwok nodes did not become Ready within 120s"
    sleep 1
  done
  log "ready: export KUBECONFIG=$KUBECONFIG_FILE"
}

# kind_overlay: a kustomization over manifests/ for this cluster, in a new
# temporary directory (printed): MUSTER_IMAGE, the pod on the kind node (not
# a kwok node, which runs nothing), and no ServiceMonitor.
kind_overlay() {
  local dir
  dir=$(mktemp -d)
  cat >"$dir/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$REPO/manifests" "$dir")
images:
- {name: muster, newName: ${IMAGE%:*}, newTag: ${IMAGE##*:}}
patches:
- target: {kind: Deployment, name: volcano-scheduler}
  patch: |-
    - {op: add, path: /spec/template/spec/nodeSelector, value: {type: kind-node}}
- patch: |-
    \$patch: delete
    apiVersion: monitoring.coreos.com/v1
    kind: ServiceMonitor
    metadata: {name: muster, namespace: muster-system}
EOF
  echo "$dir"
}

cmd_test() {
  [[ -f $KUBECONFIG_FILE ]] || die "no kind cluster (run: $0 up)"
  local s rc=0
  for s in smoke crds; do
    MUSTER_E2E_KUBECONFIG=$KUBECONFIG_FILE MUSTER_KUBECTL=$KUBECTL "$REPO/e2e/scenarios/$s.sh" || rc=1
  done
  return "$rc"
}

cmd_down() {
  need "$KIND"
  "$KIND" delete cluster --name "$NAME"
  rm -f "$KUBECONFIG_FILE"
}

case ${1:-} in
  up) cmd_up ;;
  test) cmd_test ;;
  down) cmd_down ;;
  kubeconfig) echo "$KUBECONFIG_FILE" ;;
  *)
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
