#!/usr/bin/env bash
# Restart (issue 4, acceptance 3): kill -9 the muster extender while 200 GPU
# pods are being scheduled through it, start it again, and check that it
# rebuilt its cache from the API, that scheduling resumed until the cluster is
# full, and that no GPU was ever double-booked - from the final placements,
# the Binding annotations, and the restarted cache compared with the API.
set -euo pipefail
# shellcheck source=e2e/scenarios/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=e2e/scenarios/extender_lib.sh
source "$E2E_LIB_DIR/extender_lib.sh"
CLUSTER=$E2E_REPO/e2e/cluster/cluster.sh

new_namespace
require_extender
[[ -n ${MUSTER_E2E_DIR:-} ]] || fail "restart needs the local cluster (MUSTER_E2E_DIR)"
gpus=$(json_field "$(check_placements)" gpusAllocatable)
# The extender comes back even if an assertion below fails.
e2e_before_cleanup() {
  curl -fsS --max-time 2 "$EXT_URL/readyz" >/dev/null 2>&1 ||
    "$CLUSTER" extender start --dir "$MUSTER_E2E_DIR" >/dev/null 2>&1 || true
}
bound_in_ns() { k get pods -o jsonpath='{range .items[?(@.spec.nodeName)]}{.metadata.name}{"\n"}{end}' | grep -c . || true; }
at_least_bound() { (($(bound_in_ns) >= $1)); }

# The first 10 pods go to the live extender, which dies once 5 of them are
# bound (the rest of those 10 are mid-scheduling); the other 190 are created
# while it is down, then meet the restarted one. Killing it "when 5 are bound"
# of one 200-pod burst raced the poll: on a loaded host the burst had filled
# all GPUs (67 pods bound) before the poll saw 5, leaving nothing to bind
# after the restart. 10 pods ask at most 40 of the cluster's GPUs.
python3 "$PLACEMENT" pods wave 200 1,1,2,4 >"$E2E_TMP/wave.json"
python3 - "$E2E_TMP/wave.json" "$E2E_TMP/first.json" "$E2E_TMP/rest.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for path, items in ((sys.argv[2], doc["items"][:10]), (sys.argv[3], doc["items"][10:])):
    json.dump(dict(doc, items=items), open(path, "w"))
PY
k create -f "$E2E_TMP/first.json" >"$E2E_TMP/create.log" 2>&1 ||
  fail "creating the first 10 pods failed: $(tail -n 3 "$E2E_TMP/create.log")"
wait_for "5 pods bound" 120 at_least_bound 5
before=$(bound_in_ns)
"$CLUSTER" extender stop --signal KILL --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
e2e_log "extender killed (SIGKILL) with $before pods bound"
summary=$(check_placements) || fail "placement invariants broken right after the kill: $summary"
k create -f "$E2E_TMP/rest.json" >>"$E2E_TMP/create.log" 2>&1 ||
  fail "creating the other 190 pods failed: $(tail -n 3 "$E2E_TMP/create.log")"
sleep 3 # kube-scheduler's calls fail meanwhile; its volcano pods back off
during=$(bound_in_ns)
((during <= 10)) || fail "pods were bound without the extender: $during"
e2e_log "$during pods bound after 3 s without the extender"

"$CLUSTER" extender start --dir "$MUSTER_E2E_DIR" 2>&1 | sed 's/^/  /'
require_extender
e2e_log "extender restarted; cache rebuilt from the API"
wait_for "all $gpus GPUs handed out after the restart" 300 gpus_used_is "$gpus"
summary=$(check_placements) || fail "placement invariants broken: $summary"
pass "placements after the restart: $summary"
after=$(bound_in_ns)
((after > during)) || fail "no pod was bound after the restart ($during -> $after)"
pass "scheduling resumed: $before bound at the kill, $during while down, $after at the end"
check_debug_state
