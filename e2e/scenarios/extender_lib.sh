# Helpers for the scenarios that drive pods through the muster extender
# (sourced after lib.sh and new_namespace). The extender's port comes from the
# cluster's env (MUSTER_EXTENDER_PORT); its /metrics and /debug/state are read
# over loopback, the pods through kubectl.
# shellcheck shell=bash

PLACEMENT=$E2E_LIB_DIR/placement.py
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/muster-$E2E_NAME.XXXXXX") # removed by e2e_cleanup
EXT_URL=http://127.0.0.1:${MUSTER_EXTENDER_PORT:-}

# The extender answers /readyz (its caches synced).
require_extender() {
  [[ -n ${MUSTER_EXTENDER_PORT:-} ]] || fail "the cluster records no extender port"
  wait_for "muster extender /readyz at $EXT_URL" 60 curl -fsS --max-time 2 "$EXT_URL/readyz"
}

# metric SERIES: the value of one exact series of /metrics (0 when absent), as an integer.
metric() {
  curl -fsS --max-time 5 "$EXT_URL/metrics" | awk -v s="$1" '$1 == s {printf "%d\n", $2; f = 1} END {if (!f) print 0}'
}
# metric_sum NAME: the sum over every series of metric NAME, as an integer.
metric_sum() {
  curl -fsS --max-time 5 "$EXT_URL/metrics" |
    awk -v n="$1" 'index($1, n "{") == 1 || $1 == n {s += $2} END {printf "%d\n", s}'
}

no_pods_left() { k_none pods; }

# json_field JSON KEY: a top-level field of a one-line JSON object.
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# check_placements: placement.py check over every pod and node; prints the
# summary; fails (status 1) on an over-committed node or a missing annotation.
check_placements() {
  local pods nodes
  pods=$("$MUSTER_KUBECTL" get pods -A -o json) || return 2
  nodes=$("$MUSTER_KUBECTL" get nodes -o json) || return 2
  printf '{"pods": %s, "nodes": %s}' "$pods" "$nodes" | python3 "$PLACEMENT" check "$E2E_NS"
}
# gpus_used_is N: the cluster's pods hold exactly N GPUs (for wait_for); also
# fails fast (exit) on a broken invariant, so a violation is never waited out.
gpus_used_is() {
  local summary rc=0
  summary=$(check_placements) || rc=$?
  ((rc == 1)) && fail "placement invariants broken: $summary"
  ((rc == 0)) || return 1
  echo "$summary"
  [[ $(json_field "$summary" gpusUsed) == "$1" ]]
}

# check_debug_state: the extender's /debug/state shows, for every node, the
# GPUs the API's live pods hold there, and no reservation left over.
check_debug_state() {
  local pods out
  pods=$("$MUSTER_KUBECTL" get pods -A -o json) || fail "cannot list pods"
  curl -fsS --max-time 5 "$EXT_URL/debug/state" >"$E2E_TMP/debug-state.json" ||
    fail "cannot read $EXT_URL/debug/state"
  out=$(python3 "$PLACEMENT" cache-check "$E2E_TMP/debug-state.json" <<<"$pods") ||
    fail "the extender's cache disagrees with the API: $out"
  pass "$out"
}
