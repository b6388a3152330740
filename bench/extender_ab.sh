#!/usr/bin/env bash
# Extender verb latency against an earlier commit (issue 18 acceptance 5:
# filter and prioritize within 10 % of the code before GPU sharing): the
# in-process microbenchmarks of bench/extender_bench.cc (filter, prioritize,
# bind on 1000- and 5000-node whole-GPU clusters; bench/cluster_fixture.h),
# built at BASE and at the working tree, run in alternating rounds on the
# same machine, and bench/extender_ab.py's tables: per benchmark each side's
# median and spread (min-max) over the rounds and current/base (ratio of
# the medians, and the rounds' paired ratios). The shared-GPU cases exist
# only in the current build; they are compared with the whole-GPU probe on
# the unshared cluster in the same runs.
#
# Both builds compile the SAME benchmark sources: the working tree's
# bench/extender_bench.cc and bench/cluster_fixture.{h,cc} are copied over
# BASE's in a scratch worktree (they build without GPU sharing: see
# cluster_fixture.h), so only the library code differs.
#
# usage: bench/extender_ab.sh [--base REV] [--base-dir DIR] [--rounds N]
#                             [--filter REGEX] [--min-time S] [--out DIR]
#                             [--callgrind] [--target NAME]
#   REV         the base commit (default 265a81c: the code before GPU sharing)
#   NAME        the benchmark binary of bench/ (default extender_bench;
#               gang_bench: the gang pass, its filter default '.'): its
#               sources are copied over BASE's too
#   --base-dir  its scratch worktree, added when missing (default
#               ${TMPDIR:-/tmp}/muster-bench-base); its bench/ is overwritten
#   N           rounds (default 5); round r runs base then current when r is
#               odd, current then base when even (ABBA: drift cancels)
#   REGEX       --benchmark_filter (default: filter, prioritize and bind,
#               whole and shared GPUs, not the 5000-node shared cases)
#   S           --benchmark_min_time per benchmark (default 0.5)
#   --out       where each run's JSON and the report go (default
#               ${TMPDIR:-/tmp}/muster-extender-ab)
#   --callgrind instead of timed rounds, one run per benchmark and side
#               under valgrind's callgrind with its cache simulation:
#               instructions and simulated cache misses per verb call
#               (deterministic, so a busy host cannot blur them; no stall
#               nor real cache counted). Slow: give it --filter with the
#               1000-node cases and --min-time 2 (~15 min).
# About 1.3 min per run on 2 cores, so 13-15 min for 5 rounds, plus the
# two builds (the base one from scratch the first time: ~4 min with -j2).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

base=265a81c
base_dir=${TMPDIR:-/tmp}/muster-bench-base
rounds=5
filter='^BM_(Filter|Prioritize|Bind)(SharedGpus)?/'
min_time=0.5
out=${TMPDIR:-/tmp}/muster-extender-ab
jobs=${JOBS:-2}
callgrind=0
target=extender_bench
filter_given=0
while (($#)); do
  case $1 in
    --base) base=$2; shift 2 ;;
    --base-dir) base_dir=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --filter) filter=$2; filter_given=1; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    --target) target=$2; shift 2 ;;
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
    *) echo "extender_ab.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [[ $target != extender_bench ]] && ((!filter_given)); then filter=.; fi
[[ -f $REPO/bench/$target.cc ]] || { echo "extender_ab.sh: no bench/$target.cc" >&2; exit 2; }

base_commit=$(git -C "$REPO" rev-parse --verify "$base^{commit}")
if [[ ! -e $base_dir/.git ]]; then
  git -C "$REPO" worktree add --detach "$base_dir" "$base_commit" >/dev/null
fi
if [[ $(git -C "$base_dir" rev-parse HEAD) != "$base_commit" ]]; then
  echo "extender_ab.sh: $base_dir is not at $base ($base_commit)" >&2
  exit 2
fi
# The same benchmark sources on both sides (see the top).
git -C "$base_dir" checkout --quiet -- bench
cp "$REPO/bench/$target.cc" "$REPO"/bench/cluster_fixture.h "$REPO"/bench/cluster_fixture.cc \
  "$base_dir"/bench/

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
for tree in "$base_dir" "$REPO"; do
  echo "=== building $target in $tree"
  cmake -S "$tree" -B "$tree/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMUSTER_BUILD_BENCH=ON -DMUSTER_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
  cmake --build "$tree/build-bench" -j"$jobs" --target "$target" | tail -1
done

rm -rf "$out"
mkdir -p "$out"
current_desc="$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- . || echo +changes)"
{
  mode="$rounds rounds"
  ((callgrind)) && mode="callgrind, one run per benchmark"
  echo "$target: base $base ($base_commit), current $current_desc, $mode, filter $filter, min_time $min_time"
  echo "host: $(nproc) cores, $(uname -r), load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/context.txt"
binary() {  # binary SIDE
  if [[ $1 == base ]]; then
    echo "$base_dir/build-bench/bench/$target"
  else
    echo "$REPO/build-bench/bench/$target"
  fi
}
if ((callgrind)); then
  command -v valgrind >/dev/null || { echo "extender_ab.sh: --callgrind needs valgrind" >&2; exit 2; }
  : >"$out/index.tsv"
  for side in base current; do
    bin=$(binary "$side")
    mapfile -t names < <("$bin" --benchmark_filter="$filter" --benchmark_list_tests=true)
    for name in "${names[@]}"; do
      file="$side-${name//[^A-Za-z0-9_]/_}.callgrind"
      echo "callgrind: $side $name"
      valgrind --tool=callgrind --cache-sim=yes --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$out/$file" "$bin" --benchmark_filter="^$name\$" \
        --benchmark_min_time="$min_time" >"$out/$file.log" 2>&1
      printf '%s\t%s\t%s\n' "$side" "$name" "$file" >>"$out/index.tsv"
    done
  done
  echo
  python3 "$HERE/extender_ab.py" --callgrind "$out" | tee "$out/report.md"
  exit 0
fi
run() {  # run SIDE ROUND
  local bin
  bin=$(binary "$1")
  echo "round $2: $1 (load $(cut -d' ' -f1 /proc/loadavg))"
  "$bin" --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
    --benchmark_out="$out/$1-$2.json" --benchmark_out_format=json >"$out/$1-$2.log" 2>&1
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2 == 1)); then
    run base "$r"; run current "$r"
  else
    run current "$r"; run base "$r"
  fi
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/context.txt"
echo
python3 "$HERE/extender_ab.py" "$out" | tee "$out/report.md"
