#!/usr/bin/env bash
# muster's pod webhook (issue 22, acceptance 5; extender/pod_webhook.h,
# manifests/webhook): a cluster of its own (gpu-25x4: 100 GPUs) brought up
# with MUSTER_GANG_WEBHOOK=1, so the extender serves the webhook and the API
# server calls it as manifests/webhook/mutating-webhook.yaml registers it
# (failurePolicy Ignore; matchConditions: volcano pods naming a Volcano
# PodGroup), at https://127.0.0.1:<port>.
#   a. What is not muster's never reaches it: a default-scheduler pod naming a
#      PodGroup and a volcano pod naming none are created ungated, and
#      muster_webhook_pods_total does not move.
#   b. The webhook down (extender stopped): a 4-pod volcano gang is created
#      at once and ungated - the failure policy Ignore - and once the
#      extender is back muster places it whole (through filter, as any
#      ungated gang).
#   c. The deadlock workload (2 gangs x 100 pods x 1 GPU, pods created
#      without gates as users apply them): every member is gated at creation
#      (muster_webhook_pods_total{outcome="gated"} 200, the recorder sees each
#      pod gated when ADDED), muster's filter rejects none (no scheduling cycle
#      is spent on a member before its gang is reserved), and the gang
#      deadlock scenario's checks hold: one gang after the other, no partial
#      gang, no over-commit.
set -euo pipefail
# shellcheck disable=SC2034 # read by gang_lib.sh
GANG_CLUSTER_FILE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../clusters" && pwd)/gpu-25x4.yaml
export MUSTER_GANG_WEBHOOK=1
GANG_SIDES=muster
# shellcheck source=e2e/scenarios/gang_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/gang_lib.sh"

# webhook_count [OUTCOME]: muster_webhook_pods_total, summed over outcomes
# or of OUTCOME.
webhook_count() {
  curl -fsS --max-time 5 "$EXT_URL/metrics" | awk -v o="${1:-}" '
    /^muster_webhook_pods_total\{/ && (o == "" || index($0, "outcome=\"" o "\"")) {s += $2}
    END {print s + 0}'
}
gates_of() { k get pod "$1" -o 'jsonpath={.spec.schedulingGates[*].name}'; }

# probe_items: a default-scheduler pod naming PodGroup probe, a volcano pod
# naming none, the PodGroup.
probe_items() {
  python3 - "$GANG_LIB_DIR" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gang_report as g
from placement import fake_gpu_pod_spec
other = g.gang_pod("probe", 0, 1, 1, "default-scheduler")
other["metadata"]["name"] = "other-scheduler"
plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain-volcano"},
         "spec": fake_gpu_pod_spec("volcano", 1)}
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [g.pod_group("probe", 1), other, plain]}))
PY
}

# gang_items NAME N: a Volcano PodGroup of minMember N and its N ungated
# volcano pods of 1 GPU.
gang_items() {
  python3 - "$GANG_LIB_DIR" "$1" "$2" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import gang_report as g
name, n = sys.argv[2], int(sys.argv[3])
items = [g.pod_group(name, n)] + [g.gang_pod(name, i, 1, n, "volcano") for i in range(n)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
}

gang_start_muster

# a. Not muster's pods.
E2E_NS=gang-webhook-probe
"$MUSTER_KUBECTL" create namespace "$E2E_NS" >/dev/null
wait_for "ServiceAccount $E2E_NS/default" 60 k get serviceaccount default -o name
before=$(webhook_count)
probe_items | k create -f - >/dev/null
expect_eq "a default-scheduler pod naming a PodGroup: not gated" "$(gates_of other-scheduler)" ""
expect_eq "a volcano pod naming no PodGroup: not gated" "$(gates_of plain-volcano)" ""
expect_eq "neither reached the webhook (muster_webhook_pods_total)" "$(webhook_count)" "$before"
wait_for "the default-scheduler pod bound" 60 nonempty field pod/other-scheduler '{.spec.nodeName}'
wait_for "the plain volcano pod bound" 60 nonempty field pod/plain-volcano '{.spec.nodeName}'
pass "pods not for muster were created untouched and never called the webhook"

# b. The webhook down.
"$GANG_CLUSTER" extender stop --dir "$MUSTER_E2E_DIR" 2>>"$GANG_OUT/cluster-up.log" ||
  fail "could not stop the extender"
t0=$EPOCHREALTIME
gang_items down 4 | k create -f - >/dev/null
created_ms=$(python3 -c "import sys; print(round((float(sys.argv[2]) - float(sys.argv[1])) * 1000))" "$t0" "$EPOCHREALTIME")
for i in 0 1 2 3; do expect_eq "down-$i created while the webhook is down: ungated" "$(gates_of "down-$i")" ""; done
e2e_log "4 pods and their PodGroup created in ${created_ms} ms with the webhook down (failurePolicy Ignore)"
gang_start_muster
down_bound() { (($(k get pods -l e2e.muster.io/gang=down -o 'jsonpath={.items[*].spec.nodeName}' | wc -w) == 4)); }
wait_for "gang down bound whole" 60 down_bound
pass "the gang created while the webhook was down was placed whole"
"$MUSTER_KUBECTL" delete namespace "$E2E_NS" --wait=true --timeout=60s >/dev/null

# c. The deadlock workload, gated at creation.
gated_before=$(webhook_count gated)
rejected_before=$(curl -fsS --max-time 5 "$EXT_URL/metrics" |
  awk '/^muster_extender_decisions_total\{reason="gang_waiting",verb="filter"\}/ {print $2}')
gang_side muster
gang_submit deadlock --scheduler volcano
outcome=$(gang_wait 120 30)
gang_metrics
expect_eq "every member gated by the webhook" "$(($(webhook_count gated) - gated_before))" 200
ungated_at_creation=$(python3 - "$GANG_OUT/muster.jsonl" <<'PY'
import json, sys
print(sum(1 for line in open(sys.argv[1]) for e in [json.loads(line)]
          if e.get("kind") == "pod" and e.get("ev") == "ADDED" and not e.get("gated")))
PY
)
expect_eq "members seen ungated at creation" "$ungated_at_creation" 0
rejected=$(awk '/^muster_extender_decisions_total\{reason="gang_waiting",verb="filter"\}/ {print $2}' \
  "$GANG_OUT/muster-metrics.txt")
expect_eq "filter rejections of members waiting for their gang" "$rejected" "$rejected_before"
gang_end_side
gang_report --check overcommit --check complete --check no-partial --check annotations --check serial \
  --check podgroup --max-assembly 10
[[ $outcome == "done" ]] || fail "muster did not finish both gangs: $outcome"
