#!/usr/bin/env bash
# Runs every benchmark binary in <build dir>/bench with 5 repetitions and
# prints the median rows (what notes and docs quote).
set -euo pipefail
dir=${1:-build-bench}
for b in "${dir}"/bench/*_bench; do
  [ -x "$b" ] || continue
  echo "=== $(basename "$b") ==="
  "$b" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
       --benchmark_min_time=0.5 2>&1 | grep -E '^(Benchmark|-|.*_median)'
done
