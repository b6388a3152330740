#!/usr/bin/env bash
# Installs the Debian packages muster builds and tests with, when missing.
# As root it installs them; otherwise it names what is missing and fails.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make pkg-config python3
  libcpp-httplib-dev rapidjson-dev prometheus-cpp-dev libspdlog-dev libyaml-cpp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  # Compiler cache for tools/run-tests.sh's three builds (unit, sanitize, fuzz):
  # kept in ~/.cache/muster/ccache across clean clones, so a warm CI run
  # recompiles only what changed.
  ccache
  # e2e tier (e2e/cluster): certificates, port checks, health probes, lint.
  # Go (>= 1.24) is preinstalled on the build hosts; Debian's golang is too old.
  openssl iproute2 curl shellcheck python3-yaml
  # e2e_observe (issue 9): the dashboards' queries against a real Prometheus,
  # one PNG per dashboard. The package's service is never started: the test
  # runs /usr/bin/prometheus itself, on loopback.
  prometheus python3-matplotlib
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} Debian packages present"
  exit 0
fi
echo "deps: missing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: run as root (or: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
