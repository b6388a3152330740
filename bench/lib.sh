# Shared by the end-to-end benchmarks (bench/*.sh; sourced, not run).
# shellcheck shell=bash

# bench_muster_binary REPO: the muster binary to measure when none was
# given - the Release bench build, else the test build ("" when neither).
bench_muster_binary() {
  local candidate
  for candidate in "$1/build-bench/cmd/muster" "$1/build/cmd/muster"; do
    [[ -x $candidate ]] && echo "$candidate" && return
  done
  echo ""
}
