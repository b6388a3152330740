#!/usr/bin/env bash
# Build the pinned control-plane components for the e2e cluster into a cache
# outside the repo, keyed by version:
#
#   ${MUSTER_CACHE:-$HOME/.cache/muster}/k8s-<version>/bin/{kube-apiserver,kube-scheduler,kube-controller-manager,kubectl}
#   ${MUSTER_CACHE:-$HOME/.cache/muster}/etcd-v3.6.4/bin/etcd
#   ${MUSTER_CACHE:-$HOME/.cache/muster}/kwok-v0.7.0/bin/kwok
#   ${MUSTER_CACHE:-$HOME/.cache/muster}/kueue-v0.17.0/{bin/kueue,crds/,webhook.yaml}   (--kueue only)
#
# Idempotent: a binary that is present and reports the pinned version is not
# rebuilt. Needs only the Go toolchain and the Go module proxy. Kubernetes and
# etcd are built from the wrapper modules next to this script
# (k8s-bins/<version>/, etcd-bin/) with their committed go.sum (-mod=readonly: nothing is resolved
# afresh); kwok has no replace directives, so `go install ...@version` builds
# it from its own go.mod. GOMODCACHE and GOCACHE stay at the Go defaults so
# later runs on the same host reuse them.
#
# Usage: build-components.sh [--print-env] [--no-build] [--force] [--kueue]
#   --print-env  after building, print `export K8S_VERSION=... K8S_BIN_DIR=... ETCD_BIN=... KWOK_BIN=...`
#                on stdout, for: eval "$(e2e/cluster/build-components.sh --print-env)"
#                (progress always goes to stderr)
#   --no-build   build nothing; exit 1 if a component is missing or stale
#   --force      rebuild even what is already built
#   --kueue      also Kueue (the peer of `make bench-peers`; never in CI: its
#                dependency tree is large): the controller-manager, its CRDs
#                and webhook manifest copied out of the module; --print-env
#                adds KUEUE_BIN and KUEUE_DIR
# Environment: MUSTER_K8S_VERSION (the Kubernetes version: one that has a
# wrapper module k8s-bins/<version>/, "v" optional; default below), MUSTER_CACHE
# (cache root), GO (go command), GOFLAGS (passed on; e.g. GOFLAGS=-p=1 under
# `nice -n 19` to use idle CPU only).
set -euo pipefail

# Pinned versions. K8S_VERSION and ETCD_VERSION must match the require lines
# of k8s-bins/<version>/go.mod and etcd-bin/go.mod (checked below). Each
# Kubernetes version has its own wrapper module and its own cache directory,
# so several versions live side by side. etcd v3.6.4 serves every version we
# test (v1.34 and v1.37 both link the v3.6 client).
readonly DEFAULT_K8S_VERSION=v1.37.2
K8S_VERSION=${MUSTER_K8S_VERSION:-$DEFAULT_K8S_VERSION}
K8S_VERSION=v${K8S_VERSION#v}
readonly K8S_VERSION
readonly K8S_WRAPPER=k8s-bins/$K8S_VERSION
readonly ETCD_VERSION=v3.6.4
readonly KWOK_VERSION=v0.7.0
# Kueue: the newest release the module proxy serves (v0.17.8 is refused).
readonly KUEUE_VERSION=v0.17.0

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
if [[ ! -f $HERE/$K8S_WRAPPER/go.mod ]]; then
  echo "build-components.sh: Kubernetes $K8S_VERSION is not supported (no $K8S_WRAPPER/go.mod); supported: $(cd "$HERE/k8s-bins" && echo v*)" >&2
  exit 2
fi
readonly CACHE_ROOT=${MUSTER_CACHE:-$HOME/.cache/muster}
readonly K8S_BIN_DIR=$CACHE_ROOT/k8s-$K8S_VERSION/bin
readonly ETCD_BIN_DIR=$CACHE_ROOT/etcd-$ETCD_VERSION/bin
readonly KWOK_BIN_DIR=$CACHE_ROOT/kwok-$KWOK_VERSION/bin
readonly KUEUE_DIR=$CACHE_ROOT/kueue-$KUEUE_VERSION
readonly K8S_CMDS=(kube-apiserver kube-scheduler kube-controller-manager kubectl)

print_env=0
no_build=0
force=0
kueue=0
for arg in "$@"; do
  case $arg in
    --print-env) print_env=1 ;;
    --no-build) no_build=1 ;;
    --force) force=1 ;;
    --kueue) kueue=1 ;;
    -h | --help)
      sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "build-components.sh: unknown argument: $arg (try --help)" >&2
      exit 2
      ;;
  esac
done
if ((no_build && force)); then
  echo "build-components.sh: --no-build and --force conflict" >&2
  exit 2
fi

START=$SECONDS
log() { printf '[build-components %4ds] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

# --- Go toolchain -----------------------------------------------------------
if [[ -z ${GO:-} ]]; then
  if command -v go >/dev/null 2>&1; then
    GO=go
  elif [[ -x /usr/local/go/bin/go ]]; then
    GO=/usr/local/go/bin/go
  else
    GO=
  fi
fi

GO_READY=0
need_go() {
  ((GO_READY)) && return 0
  GO_READY=1
  [[ -n $GO ]] || die "no Go toolchain found (set GO=/path/to/go)"
  # Never download a toolchain; the wrapper modules need go >= 1.24.
  export GOTOOLCHAIN=local
  # Static binaries, as upstream ships the control plane.
  export CGO_ENABLED=0
  case " ${GOFLAGS:-} " in
    *" -mod=mod "* | *" -mod mod "*)
      die "GOFLAGS contains -mod=mod; the builds must use the committed go.sum"
      ;;
  esac
  local v
  v=$("$GO" env GOVERSION) || die "'$GO env GOVERSION' failed"
  log "using $v ($(command -v "$GO")), GOMODCACHE=$("$GO" env GOMODCACHE), GOCACHE=$("$GO" env GOCACHE), GOFLAGS='${GOFLAGS:-}'"
}

# Fail early if a wrapper go.mod and the version pinned here disagree.
check_pin() { # dir module version
  local got
  got=$(sed -nE "s#^[[:space:]]*(require[[:space:]]+)?$2[[:space:]]+(v[^[:space:]]+).*#\2#p" "$HERE/$1/go.mod" | sed -n 1p)
  [[ $got == "$3" ]] || die "$1/go.mod requires $2 '${got:-?}', this script pins $3"
}

# --- version checks (what "already built" means) -----------------------------
# Succeeds when $1 exists, runs, and its version output contains $2.
runs_with_version() { # binary expected-substring version-args...
  local bin=$1 want=$2 out
  shift 2
  [[ -x $bin ]] || return 1
  out=$("$bin" "$@" 2>&1) || return 1
  [[ $out == *"$want"* ]]
}
k8s_ok() { # cmd
  if [[ $1 == kubectl ]]; then
    runs_with_version "$K8S_BIN_DIR/kubectl" "$K8S_VERSION" version --client
  else
    runs_with_version "$K8S_BIN_DIR/$1" "$K8S_VERSION" --version
  fi
}
etcd_ok() { runs_with_version "$ETCD_BIN_DIR/etcd" "etcd Version: ${ETCD_VERSION#v}" --version; }
kwok_ok() { runs_with_version "$KWOK_BIN_DIR/kwok" "${KWOK_VERSION#v}" --version; }
# Kueue built by `go install` reports no version (it comes from ldflags): the
# stamp written after a complete build says which one it is.
kueue_ok() {
  [[ -x $KUEUE_DIR/bin/kueue && -f $KUEUE_DIR/webhook.yaml && -d $KUEUE_DIR/crds &&
    $(cat "$KUEUE_DIR/VERSION" 2>/dev/null) == "$KUEUE_VERSION" ]]
}

# --- builders ------------------------------------------------------------------
# `go mod download` for a wrapper module, timed: fetches (or verifies against
# go.sum) every module the build needs, so the build steps do no network I/O.
download() { # wrapper-dir label
  local t0=$SECONDS
  log "$2: downloading modules for $1 (go.sum-verified)"
  (cd "$HERE/$1" && "$GO" mod download) || die "$2: go mod download failed"
  log "$2: modules ready in $((SECONDS - t0))s"
}

# go build into a temporary name, then rename: an interrupted build never
# leaves a binary that looks complete.
build_to() { # wrapper-dir output package ldflags
  local dir=$1 out=$2 pkg=$3 ldflags=$4 tmp
  tmp="$(dirname "$out")/.$(basename "$out").tmp.$$"
  rm -f "$tmp"
  if ! (cd "$HERE/$dir" && "$GO" build -mod=readonly -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg"); then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$out"
}

build_k8s() {
  local minor todo=() cmd t0
  for cmd in "${K8S_CMDS[@]}"; do
    if ((force)) || ! k8s_ok "$cmd"; then todo+=("$cmd"); fi
  done
  if ((${#todo[@]} == 0)); then
    log "k8s $K8S_VERSION: up to date in $K8S_BIN_DIR (skipped)"
    return 0
  fi
  ((no_build)) && die "k8s $K8S_VERSION: missing or stale: ${todo[*]} (run without --no-build)"
  need_go
  check_pin "$K8S_WRAPPER" k8s.io/kubernetes "$K8S_VERSION"
  mkdir -p "$K8S_BIN_DIR"
  download "$K8S_WRAPPER" "k8s $K8S_VERSION"
  minor=${K8S_VERSION#v1.}
  minor=${minor%%.*}
  # What upstream's hack/lib/version.sh stamps (no git commit: we build from
  # the module zip). Without it /version and `kubectl version` say v0.0.0.
  local ld="-s -w" pkgvar
  for pkgvar in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkgvar.gitVersion=$K8S_VERSION -X $pkgvar.gitMajor=1 -X $pkgvar.gitMinor=$minor"
  done
  for cmd in "${todo[@]}"; do
    t0=$SECONDS
    log "k8s $K8S_VERSION: building $cmd"
    build_to "$K8S_WRAPPER" "$K8S_BIN_DIR/$cmd" "k8s.io/kubernetes/cmd/$cmd" "$ld" ||
      die "k8s $K8S_VERSION: building $cmd failed"
    k8s_ok "$cmd" || die "k8s $K8S_VERSION: $cmd was built but does not report $K8S_VERSION"
    log "k8s $K8S_VERSION: built $cmd in $((SECONDS - t0))s ($(du -h "$K8S_BIN_DIR/$cmd" | cut -f1))"
  done
}

build_etcd() {
  if ((!force)) && etcd_ok; then
    log "etcd $ETCD_VERSION: up to date in $ETCD_BIN_DIR (skipped)"
    return 0
  fi
  ((no_build)) && die "etcd $ETCD_VERSION: missing or stale (run without --no-build)"
  need_go
  check_pin etcd-bin go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
  mkdir -p "$ETCD_BIN_DIR"
  download etcd-bin "etcd $ETCD_VERSION"
  local t0=$SECONDS
  log "etcd $ETCD_VERSION: building etcd"
  build_to etcd-bin "$ETCD_BIN_DIR/etcd" go.etcd.io/etcd/server/v3 "-s -w" ||
    die "etcd $ETCD_VERSION: build failed"
  etcd_ok || die "etcd $ETCD_VERSION: etcd was built but does not report ${ETCD_VERSION#v}"
  log "etcd $ETCD_VERSION: built etcd in $((SECONDS - t0))s ($(du -h "$ETCD_BIN_DIR/etcd" | cut -f1))"
}

# go_install_to WHAT PKG@VERSION DIR: `go install` one command into DIR.
# Used for modules without replace directives (kwok, Kueue): `go install
# pkg@version` then uses the module's own pinned dependencies (checksums
# verified against the checksum database through the proxy). go install has
# no -o, so it installs into a scratch GOBIN and renames into place.
go_install_to() {
  local what=$1 pkg=$2 dir=$3 stage
  need_go
  mkdir -p "$dir"
  stage=$(mktemp -d "$dir/.stage.XXXXXX")
  log "$what: downloading and building $pkg"
  # Run outside any module so the repo's wrapper modules play no part.
  if ! (cd "$stage" && GOBIN=$stage "$GO" install -trimpath -ldflags "-s -w" "$pkg"); then
    rm -rf "$stage"
    die "$what: go install failed"
  fi
  local built=${pkg%@*}
  built=${built##*/}
  mv -f "$stage/$built" "$dir/$built"
  rm -rf "$stage"
}

build_kwok() {
  if ((!force)) && kwok_ok; then
    log "kwok $KWOK_VERSION: up to date in $KWOK_BIN_DIR (skipped)"
    return 0
  fi
  ((no_build)) && die "kwok $KWOK_VERSION: missing or stale (run without --no-build)"
  local t0=$SECONDS
  go_install_to "kwok $KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "$KWOK_BIN_DIR"
  kwok_ok || die "kwok $KWOK_VERSION: kwok was built but does not report ${KWOK_VERSION#v}"
  log "kwok $KWOK_VERSION: built kwok in $((SECONDS - t0))s ($(du -h "$KWOK_BIN_DIR/kwok" | cut -f1))"
}

# Kueue: the binary, and from the same module (config/ is in its zip) the
# CRDs and the webhook manifest whose paths the harness registers.
build_kueue() {
  if ((!force)) && kueue_ok; then
    log "kueue $KUEUE_VERSION: up to date in $KUEUE_DIR (skipped)"
    return 0
  fi
  ((no_build)) && die "kueue $KUEUE_VERSION: missing or stale (run without --no-build)"
  local t0=$SECONDS module
  rm -f "$KUEUE_DIR/VERSION"
  go_install_to "kueue $KUEUE_VERSION" "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION" "$KUEUE_DIR/bin"
  module=$(cd "$KUEUE_DIR" && "$GO" mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])') || die "kueue: go mod download failed"
  rm -rf "$KUEUE_DIR/crds"
  mkdir -p "$KUEUE_DIR/crds"
  cp "$module"/config/components/crd/bases/*.yaml "$KUEUE_DIR/crds/"
  cp "$module/config/components/webhook/manifests.yaml" "$KUEUE_DIR/webhook.yaml"
  chmod -R u+w "$KUEUE_DIR/crds" "$KUEUE_DIR/webhook.yaml" # the module cache is read-only
  echo "$KUEUE_VERSION" >"$KUEUE_DIR/VERSION"
  log "kueue $KUEUE_VERSION: built in $((SECONDS - t0))s ($(du -h "$KUEUE_DIR/bin/kueue" | cut -f1)), $(find "$KUEUE_DIR/crds" -name '*.yaml' | wc -l) CRDs"
}

log "cache: $CACHE_ROOT"
build_etcd
build_kwok
build_k8s
((!kueue)) || build_kueue
log "all components ready"

if ((print_env)); then
  printf 'export K8S_VERSION=%q\n' "$K8S_VERSION"
  printf 'export K8S_BIN_DIR=%q\n' "$K8S_BIN_DIR"
  printf 'export ETCD_BIN=%q\n' "$ETCD_BIN_DIR/etcd"
  printf 'export KWOK_BIN=%q\n' "$KWOK_BIN_DIR/kwok"
  if ((kueue)); then
    printf 'export KUEUE_BIN=%q\n' "$KUEUE_DIR/bin/kueue"
    printf 'export KUEUE_DIR=%q\n' "$KUEUE_DIR"
  fi
fi
