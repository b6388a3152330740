# Kueue as a peer in the harness (cluster.sh up --peer kueue; sourced by
# cluster.sh, uses its start/record/wait_until/sign_server_cert/log/die). Kueue's
# controller-manager runs as a plain process against the cluster's apiserver,
# recorded like every other process, so `down` stops it by PID. It admits
# and ungates pods of namespaces labelled kueue-peer=true; the stock
# kube-scheduler places them.
#
# What running it out of a cluster takes (Kueue v0.17, cmd/kueue/main.go):
#   - its CRDs (config/components/crd/bases; server-side: workloads is 1.4 MB);
#   - its webhooks, which cannot be turned off and add the
#     kueue.x-k8s.io/admission gate to every managed pod: served on loopback
#     with a certificate for 127.0.0.1 from the harness's CA, registered by
#     URL (kueue/webhooks.py);
#   - certificates at the fixed path /etc/kueue/metrics/certs, which the
#     binary loads even with its metrics listener off: created here,
#     recorded as `cleanup PATH`, removed by `down`;
#   - kueue/config.yaml (each setting explained there).
# shellcheck shell=bash

readonly KUEUE_METRICS_CERTS=/etc/kueue/metrics/certs

# kueue_certs DIR: a serving certificate for 127.0.0.1 (DIR/pki/kueue) and a
# copy at KUEUE_METRICS_CERTS.
kueue_certs() {
  local pki=$1/pki
  mkdir -p "$pki/kueue"
  sign_server_cert "$pki" kueue/tls kueue-webhook IP:127.0.0.1,DNS:localhost ||
    die "could not make Kueue's serving certificate"
  if [[ -e $KUEUE_METRICS_CERTS ]]; then
    die "$KUEUE_METRICS_CERTS exists: another cluster runs Kueue (or a crashed one left it: remove it)"
  fi
  # The topmost folder this creates is what `down` removes.
  local created=$KUEUE_METRICS_CERTS
  while [[ ! -e $(dirname "$created") ]]; do created=$(dirname "$created"); done
  record "cleanup $created"
  mkdir -p "$KUEUE_METRICS_CERTS"
  cp "$pki/kueue/tls.crt" "$pki/kueue/tls.key" "$KUEUE_METRICS_CERTS/"
}

# kueue_up DIR WEBHOOK_PORT HEALTH_PORT KUBECTL...: CRDs, certificates,
# config, the process, its /readyz, then its webhooks.
kueue_up() {
  local dir=$1 p_webhook=$2 p_health=$3
  shift 3
  [[ -x ${KUEUE_BIN:-} && -d ${KUEUE_DIR:-} ]] || die "Kueue is not built (build-components.sh --kueue)"
  "$@" apply --server-side -f "$KUEUE_DIR/crds/" >"$dir/logs/setup-kueue.log" 2>&1 ||
    die "applying Kueue's CRDs failed (see $dir/logs/setup-kueue.log)"
  "$@" wait --for=condition=Established --timeout=60s -f "$KUEUE_DIR/crds/" >>"$dir/logs/setup-kueue.log" 2>&1 ||
    die "Kueue's CRDs were not established"
  kueue_certs "$dir"
  sed -e "s|@HEALTH_PORT@|$p_health|" -e "s|\"@WEBHOOK_PORT@\"|$p_webhook|" -e "s|@CERT_DIR@|$dir/pki/kueue|" \
    "$HERE/kueue/config.yaml" >"$dir/kueue.yaml"
  # Extra flags for experiments, e.g. MUSTER_KUEUE_ARGS=--zap-log-level=4.
  local extra=()
  read -r -a extra <<<"${MUSTER_KUEUE_ARGS:-}"
  start kueue "$KUEUE_BIN" --config="$dir/kueue.yaml" --kubeconfig="$dir/admin.kubeconfig" "${extra[@]}"
  wait_until "kueue /readyz" 120 curl -fsS --max-time 2 "http://127.0.0.1:$p_health/readyz" ||
    die "Kueue did not become ready"
  "$@" create --dry-run=client -o json -f "$KUEUE_DIR/webhook.yaml" |
    python3 "$HERE/kueue/webhooks.py" "$p_webhook" "$dir/pki/ca.crt" |
    "$@" apply -f - >>"$dir/logs/setup-kueue.log" 2>&1 || die "registering Kueue's webhooks failed"
  log "kueue ready: webhooks on https://127.0.0.1:$p_webhook for namespaces labelled kueue-peer=true"
}
