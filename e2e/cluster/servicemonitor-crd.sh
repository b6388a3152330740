#!/usr/bin/env bash
# Prints the path of the Prometheus Operator's own ServiceMonitor CRD
# (monitoring.coreos.com/v1), so e2e/scenarios/deploy.sh can apply
# manifests/monitoring/servicemonitor.yaml to a real apiserver that validates
# it. The CRD is taken from the operator's Go module (the module proxy is our
# only registry) once, into ${MUSTER_CACHE:-~/.cache/muster}/prometheus-operator-<version>/.
# Environment: MUSTER_CACHE, GO (go command).
set -euo pipefail
readonly VERSION=v0.85.0
readonly MODULE=github.com/prometheus-operator/prometheus-operator
readonly FILE=monitoring.coreos.com_servicemonitors.yaml

cache=${MUSTER_CACHE:-$HOME/.cache/muster}/prometheus-operator-$VERSION
crd=$cache/$FILE
if [[ ! -s $crd ]]; then
  go=${GO:-go}
  command -v "$go" >/dev/null || go=/usr/local/go/bin/go
  dir=$(cd / && "$go" mod download -json "$MODULE@$VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
  [[ -s $dir/example/prometheus-operator-crd/$FILE ]] || {
    echo "servicemonitor-crd: no example/prometheus-operator-crd/$FILE in $MODULE@$VERSION ($dir)" >&2
    exit 1
  }
  mkdir -p "$cache"
  cp "$dir/example/prometheus-operator-crd/$FILE" "$crd.tmp"
  mv "$crd.tmp" "$crd"
fi
echo "$crd"
