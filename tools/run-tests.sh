#!/usr/bin/env bash
# Builds and runs every test tier that exists, then prints one closing line
# "tests: N passed, M failed". Tiers:
#   unit      g++, RelWithDebInfo        ctest -L unit
#   sanitize  g++, Debug, ASan+UBSan     ctest -L unit
#   fuzz      clang, libFuzzer+ASan+UBSan, ctest -L fuzz: each JSON decoder
#             (kube/codec/fuzz), each extender verb (extender/fuzz) and the
#             reconciler's Job and Node paths (reconciler/fuzz) and the watch
#             stream framer (kube/client/fuzz) for
#             MUSTER_FUZZ_SECONDS
#   e2e       the real control plane on 127.0.0.1 (e2e/): builds or reuses the
#             Go components, then ctest -L e2e (cluster up, scenarios, down)
# Environment: TIERS (default "unit sanitize fuzz e2e"), JOBS (default nproc),
# MUSTER_K8S_VERSION / MUSTER_K8S_SMOKE_VERSION (e2e: see K8S_MAIN below),
# MUSTER_FUZZ_SECONDS (default 10), MUSTER_CCACHE (default 1: compile through
# ccache when it is installed, its cache in ${MUSTER_CACHE:-~/.cache/muster}/ccache).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# ccache across clones: paths relative to the checkout (CCACHE_BASEDIR) and
# not hashed (CCACHE_NOHASHDIR), so a clean clone elsewhere hits the cache
# that the previous run filled; its debug info then names that run's paths.
launcher=()
if [[ ${MUSTER_CCACHE:-1} == 1 ]] && command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-${MUSTER_CACHE:-$HOME/.cache/muster}/ccache}
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  ccache --zero-stats >/dev/null 2>&1 || true
fi

TIERS=${TIERS:-"unit sanitize fuzz e2e"}
# Kubernetes versions of the e2e tier: the whole tier on K8S_MAIN, a smoke
# subset on K8S_SMOKE (e2e/CMakeLists.txt). The newest tested version by
# default; `MUSTER_K8S_VERSION=v1.34.4 make test` (or `make e2e K8S=v1.34.4`)
# swaps the two.
K8S_NEWEST=v1.37.2 K8S_OLDEST=v1.34.4
K8S_MAIN=${MUSTER_K8S_VERSION:-$K8S_NEWEST}
K8S_MAIN=v${K8S_MAIN#v}
if [[ -z ${MUSTER_K8S_SMOKE_VERSION+set} ]]; then
  if [[ $K8S_MAIN == "$K8S_OLDEST" ]]; then K8S_SMOKE=$K8S_NEWEST; else K8S_SMOKE=$K8S_OLDEST; fi
else
  K8S_SMOKE=${MUSTER_K8S_SMOKE_VERSION:+v${MUSTER_K8S_SMOKE_VERSION#v}}
fi
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${MUSTER_FUZZ_SECONDS:-10}
passed=0
failed=0
failed_tiers=()

log() { printf '\n=== %s ===\n' "$*"; }

# run_tier <name> <build dir> <ctest label> <cmake args...>
run_tier() {
  local name=$1 dir=$2 label=$3
  shift 3
  log "tier ${name}: configure + build (${dir})"
  if ! cmake -S . -B "${dir}" -G Ninja "${launcher[@]}" "$@" >"${dir}.configure.log" 2>&1; then
    cat "${dir}.configure.log"
    failed=$((failed + 1)); failed_tiers+=("${name}(configure)"); return
  fi
  if ! cmake --build "${dir}" -j"${JOBS}"; then
    failed=$((failed + 1)); failed_tiers+=("${name}(build)"); return
  fi
  log "tier ${name}: ctest -L ${label}"
  local out
  out=$(ctest --test-dir "${dir}" -L "${label}" -j"${JOBS}" --output-on-failure 2>&1)
  local rc=$?
  echo "${out}" | tail -n 40
  local summary
  summary=$(echo "${out}" | grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' | tail -1)
  if [ -z "${summary}" ]; then
    echo "tier ${name}: no tests ran" >&2
    failed=$((failed + 1)); failed_tiers+=("${name}(no tests)"); return
  fi
  local nfail ntotal
  nfail=$(echo "${summary}" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
  ntotal=$(echo "${summary}" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/')
  passed=$((passed + ntotal - nfail))
  failed=$((failed + nfail))
  if [ "${rc}" -ne 0 ] || [ "${nfail}" -ne 0 ]; then failed_tiers+=("${name}"); fi
}

for tier in ${TIERS}; do
  case "${tier}" in
    unit)
      run_tier unit build unit -DCMAKE_BUILD_TYPE=RelWithDebInfo ;;
    sanitize)
      run_tier sanitize build-asan unit -DCMAKE_BUILD_TYPE=Debug -DMUSTER_SANITIZE=ON ;;
    tsan)
      run_tier tsan build-tsan unit -DCMAKE_BUILD_TYPE=Debug -DMUSTER_TSAN=ON ;;
    fuzz)
      CC=clang CXX=clang++ run_tier fuzz build-fuzz fuzz -DCMAKE_BUILD_TYPE=Debug \
        -DMUSTER_BUILD_FUZZ=ON -DMUSTER_FUZZ_SECONDS="${FUZZ_SECONDS}" ;;
    e2e)
      # The pinned kube-apiserver/scheduler/kcm/kubectl of both Kubernetes
      # versions, etcd and kwok: built once into ~/.cache/muster (15-40 min
      # per version cold on 2 cores), then reused.
      log "tier e2e: control-plane components, Kubernetes ${K8S_MAIN} (whole tier) and ${K8S_SMOKE:-none} (smoke subset)"
      components_ok=1
      for version in ${K8S_MAIN} ${K8S_SMOKE}; do
        MUSTER_K8S_VERSION=${version} e2e/cluster/build-components.sh || components_ok=0
      done
      if ((!components_ok)); then
        failed=$((failed + 1)); failed_tiers+=("e2e(components)")
      else
        run_tier e2e build e2e -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMUSTER_BUILD_E2E=ON \
          -DMUSTER_K8S_VERSION="${K8S_MAIN}" -DMUSTER_K8S_SMOKE_VERSION="${K8S_SMOKE}"
      fi ;;
    *) echo "unknown tier ${tier}" >&2; exit 2 ;;
  esac
done

log "summary"
((${#launcher[@]} == 0)) || ccache --show-stats 2>/dev/null | grep -iE '^ *(hits|misses)|cache hit' | sed -n 1,4p
[ ${#failed_tiers[@]} -eq 0 ] || echo "failed tiers: ${failed_tiers[*]}"
echo "tests: ${passed} passed, ${failed} failed"
[ "${failed}" -eq 0 ] && [ "${passed}" -gt 0 ]
