#!/usr/bin/env bash
# Deploy (issue 9, acceptance 1): the manifests as an admin applies them, on
# the real apiserver of the shared cluster.
#  1. `kubectl kustomize manifests` renders every object once, the
#     ConfigMap of the scheduler configuration with a content hash that the
#     Deployment mounts; an overlay's `images:` sets muster's image and the
#     kube-scheduler version (the kustomization's parameters).
#  2. The install of docs/operator-guide.md, server-side apply: the CRDs,
#     then `kubectl apply --server-side -k manifests` (with the Prometheus
#     Operator's real ServiceMonitor CRD installed first, so the apiserver
#     validates our ServiceMonitor too). A second apply changes nothing
#     (`kubectl diff --server-side` is empty), the namespace's Pod Security
#     "restricted" admits the Deployment's pod, and it rolls out.
#  3. CRD validation: each object of fixtures/deploy/invalid.yaml (one
#     common mistake each) is refused at apply (--dry-run=server) with its
#     rule's message on its field; every Volcano example of examples/ passes.
#  4. Least privilege: the shared cluster's extender and reconciler run as
#     ServiceAccounts bound to manifests/rbac's ClusterRoles and nothing else
#     (cluster.sh writes their token kubeconfigs); the processes use them,
#     the apiserver names them (auth whoami), what each role must not do is
#     refused (auth can-i), and no request of either process was refused
#     (403) over all the scenarios that ran before this one.
# Everything muster-system and the cluster-wide bindings are deleted on exit;
# the CRDs, the default queues and the two ClusterRoles stay (the shared
# cluster's sidecars use them). Artifacts in MUSTER_DEPLOY_OUT (default
# /tmp/muster-deploy). About 15 s. Needs the local cluster (cluster.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

OUT=${MUSTER_DEPLOY_OUT:-/tmp/muster-deploy}
DIR=${MUSTER_E2E_DIR:-}
[[ -n $DIR && -f $DIR/state ]] || fail "needs a cluster of e2e/cluster/cluster.sh (MUSTER_E2E_DIR)"
MANIFESTS=$E2E_REPO/manifests
KC=("$MUSTER_KUBECTL" --request-timeout=30s)

new_namespace
# An earlier run's muster-system may still be terminating.
muster_system_gone() { ! "${KC[@]}" get namespace muster-system -o name >/dev/null 2>&1; }
wait_for "no muster-system namespace from an earlier run" 120 muster_system_gone
rm -rf "$OUT"
mkdir -p "$OUT"
E2E_TMP=$(mktemp -d)
SERVICEMONITOR_CRD=
e2e_before_cleanup() {
  "${KC[@]}" delete namespace muster-system --ignore-not-found --wait=false >/dev/null 2>&1 || true
  "${KC[@]}" delete clusterrolebinding muster-extender muster-reconciler muster-kube-scheduler \
    muster-volume-scheduler --ignore-not-found >/dev/null 2>&1 || true
  "${KC[@]}" -n kube-system delete rolebinding muster-kube-scheduler-auth-reader --ignore-not-found >/dev/null 2>&1 || true
  [[ -z $SERVICEMONITOR_CRD ]] ||
    "${KC[@]}" delete -f "$SERVICEMONITOR_CRD" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}

# --- 1. render --------------------------------------------------------------------
"${KC[@]}" kustomize "$MANIFESTS" >"$OUT/muster.yaml" || fail "kubectl kustomize manifests failed"
python3 - "$OUT/muster.yaml" <<'PY' || fail "the rendered manifests are not what the install needs"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs)
print(f"  {len(docs)} objects: " + ", ".join(kinds))
def one(kind, prefix=""):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].startswith(prefix)]
    assert len(found) == 1, (kind, prefix, [d["metadata"]["name"] for d in found])
    return found[0]
for crd in ("jobs.batch.volcano.sh", "podgroups.scheduling.volcano.sh", "queues.scheduling.volcano.sh",
            "commands.bus.volcano.sh"):
    one("CustomResourceDefinition", crd)
cm = one("ConfigMap", "volcano-scheduler-config-")
deploy = one("Deployment", "volcano-scheduler")
for kind, name in (("Namespace", "muster-system"), ("ServiceAccount", "muster"), ("Service", "muster-metrics"),
                   ("ServiceMonitor", "muster"), ("ClusterRole", "muster-extender"),
                   ("ClusterRole", "muster-reconciler"), ("Role", "volcano-scheduler-lease")):
    one(kind, name)
assert {q["metadata"]["name"] for q in docs if q["kind"] == "Queue"} == {"default", "root"}
# The Deployment mounts the generated ConfigMap by its hashed name, and the
# configuration inside elects its own lease in muster-system.
volumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
assert volumes["config"]["configMap"]["name"] == cm["metadata"]["name"], volumes
config = yaml.safe_load(next(iter(cm["data"].values())))
le = config["leaderElection"]
assert (le["leaderElect"], le["resourceName"], le["resourceNamespace"]) == (True, "volcano-scheduler", "muster-system"), le
assert [p["schedulerName"] for p in config["profiles"]] == ["volcano"], config["profiles"]
for d in docs:
    ns = d["metadata"].get("namespace")
    if d["kind"] in ("Namespace", "CustomResourceDefinition", "Queue", "ClusterRole", "ClusterRoleBinding"):
        assert ns is None, (d["kind"], d["metadata"]["name"], ns)
    elif (d["kind"], d["metadata"]["name"]) != ("RoleBinding", "muster-kube-scheduler-auth-reader"):
        assert ns == "muster-system", (d["kind"], d["metadata"]["name"], ns)
print(f"  ConfigMap {cm['metadata']['name']} mounted by Deployment volcano-scheduler; lease muster-system/volcano-scheduler")
PY
pass "kubectl kustomize manifests: every object once, in muster-system"

# The parameters: an overlay that sets both images.
mkdir -p "$E2E_TMP/overlay"
cat >"$E2E_TMP/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$MANIFESTS" "$E2E_TMP/overlay")
images:
- {name: muster, newName: registry.example.com/ml/muster, newTag: v1.2.3}
- {name: registry.k8s.io/kube-scheduler, newTag: v1.33.7}
EOF
images=$("${KC[@]}" kustomize "$E2E_TMP/overlay" | python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Deployment":
        print(" ".join(c["image"] for c in d["spec"]["template"]["spec"]["containers"]))')
expect_eq "an overlay's images" "$images" \
  "registry.k8s.io/kube-scheduler:v1.33.7 registry.example.com/ml/muster:v1.2.3 registry.example.com/ml/muster:v1.2.3"

# --- 2. install (server-side apply) ------------------------------------------------
SERVICEMONITOR_CRD=$("$E2E_REPO/e2e/cluster/servicemonitor-crd.sh") || fail "no ServiceMonitor CRD"
"${KC[@]}" apply --server-side -f "$SERVICEMONITOR_CRD" >/dev/null || fail "the ServiceMonitor CRD did not apply"
# established CRD...: every CRD named has condition Established=True. (Not
# `kubectl wait`: on a CRD created a moment ago, before its status has any
# condition, it fails with ".status.conditions accessor error" instead of
# waiting.)
established() {
  local crd
  for crd in "$@"; do
    [[ $("${KC[@]}" get "crd/$crd" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' 2>/dev/null) == True ]] ||
      return 1
  done
}
wait_for "the ServiceMonitor CRD established" 60 established servicemonitors.monitoring.coreos.com
# docs/operator-guide.md, "Install": the CRDs, then everything.
"${KC[@]}" apply --server-side -f "$MANIFESTS/crds/" >"$OUT/apply-crds.txt" 2>&1 ||
  { cat "$OUT/apply-crds.txt"; fail "server-side apply of manifests/crds failed"; }
wait_for "muster's CRDs established" 60 established jobs.batch.volcano.sh \
  podgroups.scheduling.volcano.sh queues.scheduling.volcano.sh commands.bus.volcano.sh
"${KC[@]}" apply --server-side -k "$MANIFESTS" >"$OUT/apply.txt" 2>&1 ||
  { cat "$OUT/apply.txt"; fail "kubectl apply --server-side -k manifests failed"; }
pass "kubectl apply --server-side -k manifests: $(wc -l <"$OUT/apply.txt") objects applied"
if ! "${KC[@]}" diff --server-side -k "$MANIFESTS" >"$OUT/diff.txt" 2>&1; then
  cat "$OUT/diff.txt"
  fail "a second server-side apply would change the objects above"
fi
pass "kubectl diff --server-side -k manifests: no changes after the apply"
expect_eq "ServiceMonitor endpoints" \
  "$("${KC[@]}" -n muster-system get servicemonitor muster -o jsonpath='{.spec.endpoints[*].port}')" \
  "extender-metrics reconciler-metrics"
expect_eq "Service ports" "$("${KC[@]}" -n muster-system get service muster-metrics -o jsonpath='{.spec.ports[*].port}')" \
  "8080 8889"
# Pod Security "restricted" is enforced on muster-system: the pod exists only
# if its securityContext passes; kwok runs it.
"${KC[@]}" -n muster-system rollout status deployment/volcano-scheduler --timeout=90s >"$OUT/rollout.txt" 2>&1 || {
  cat "$OUT/rollout.txt"
  "${KC[@]}" -n muster-system get events 2>&1 | tail -n 10
  fail "the volcano-scheduler Deployment did not roll out"
}
pod=$("${KC[@]}" -n muster-system get pods -l app.kubernetes.io/component=volcano-scheduler \
  -o jsonpath='{.items[0].metadata.name} {.items[0].status.phase} {.items[0].spec.serviceAccountName} {.items[0].spec.containers[*].name}')
expect_eq "the Deployment's pod (restricted Pod Security)" "${pod#* }" "Running muster kube-scheduler extender reconciler"
# ... and the namespace does enforce it.
if out=$("${KC[@]}" -n muster-system run psa-probe --image=registry.invalid/x:1 --privileged --dry-run=server 2>&1); then
  fail "muster-system admitted a privileged pod: Pod Security restricted is not enforced"
fi
expect_contains "a privileged pod in muster-system" "$out" 'violates PodSecurity "restricted'

# --- 3. CRD validation -------------------------------------------------------------
mkdir -p "$E2E_TMP/invalid"
python3 - "$E2E_FIXTURES/deploy/invalid.yaml" "$E2E_TMP/invalid" <<'PY'
import sys, yaml
for i, d in enumerate(d for d in yaml.safe_load_all(open(sys.argv[1])) if d):
    a = d["metadata"]["annotations"]
    with open(f"{sys.argv[2]}/{i:02d}.yaml", "w") as f:
        yaml.safe_dump(d, f)
    with open(f"{sys.argv[2]}/{i:02d}.want", "w") as f:
        f.write(f"{d['kind']}/{d['metadata']['name']}\n{a['e2e.muster.io/field']}\n{a['e2e.muster.io/rejected-with']}\n")
PY
refused=0
for obj in "$E2E_TMP"/invalid/*.yaml; do
  {
    read -r what
    read -r path
    read -r message
  } <"${obj%.yaml}.want"
  if out=$(k apply --dry-run=server -f "$obj" 2>&1); then
    fail "$what was accepted; want it refused with: $message"
  fi
  expect_contains "$what refused on its field" "$out" "$path"
  expect_contains "$what refused with the rule's message" "$out" "$message"
  printf '%s\t%s\n' "$what" "$out" >>"$OUT/refused.txt"
  refused=$((refused + 1))
done
pass "$refused invalid objects refused by the CRDs with their rules' messages ($OUT/refused.txt)"
examples=0
for f in "$E2E_REPO"/examples/volcano/*.yaml; do
  out=$(k apply --dry-run=server -f "$f" 2>&1) || fail "example $f refused: $out"
  examples=$((examples + $(grep -c 'created (server dry run)' <<<"$out")))
done
pass "$examples objects of examples/volcano accepted"

# --- 4. least privilege ------------------------------------------------------------
# as NAME ARGS...: kubectl with the token of the shared cluster's muster NAME.
as() {
  local name=$1
  shift
  (cd "$DIR" && "$MUSTER_KUBECTL" --kubeconfig "$DIR/$name.kubeconfig" --request-timeout=20s "$@")
}
for name in extender reconciler; do
  pid=$(awk -v n="$name" '$1 == "proc" && $2 == n {print $3}' "$DIR/state" | tail -n 1)
  [[ -n $pid && -r /proc/$pid/cmdline ]] || fail "the muster $name of the cluster is not running"
  expect_contains "the running $name's kubeconfig" "$(tr '\0' ' ' <"/proc/$pid/cmdline")" \
    "--kubeconfig=$DIR/$name.kubeconfig"
  expect_eq "$name identity" "$(as "$name" auth whoami -o jsonpath='{.status.userInfo.username}')" \
    "system:serviceaccount:muster-e2e:$name"
  expect_eq "$name ClusterRoleBindings" "$("${KC[@]}" get clusterrolebindings -o json | python3 -c '
import json, sys
name = sys.argv[1]
print(" ".join(b["roleRef"]["name"] for b in json.load(sys.stdin)["items"]
               if any(s.get("kind") == "ServiceAccount" and s.get("name") == name and
                      s.get("namespace") == "muster-e2e" for s in b.get("subjects") or [])))' "$name")" \
    "muster-$name"
done
# can NAME yes|no VERB RESOURCE [FLAGS...]
can() {
  local name=$1 want=$2 got
  shift 2
  got=$(as "$name" auth can-i "$@" 2>/dev/null || true)
  [[ $got == "$want" ]] || fail "$name can-i $*: $got, want $want"
  printf '%s\t%s\t%s\n' "$name" "$want" "$*" >>"$OUT/can-i.txt"
}
# What the roles grant (a sample of each rule)...
can extender yes create pods --subresource=binding -n "$E2E_NS"
can extender yes create pods --subresource=eviction -n "$E2E_NS"
can extender yes patch pods -n "$E2E_NS"
can extender yes list nodes
can extender yes patch queues.scheduling.volcano.sh --subresource=status
can extender yes patch podgroups.scheduling.volcano.sh -n "$E2E_NS"
can reconciler yes create pods -n "$E2E_NS"
can reconciler yes delete pods -n "$E2E_NS"
can reconciler yes patch jobs.batch.volcano.sh --subresource=status -n "$E2E_NS"
can reconciler yes create podgroups.scheduling.volcano.sh -n "$E2E_NS"
can reconciler yes create secrets -n "$E2E_NS"
can reconciler yes delete commands.bus.volcano.sh -n "$E2E_NS"
can reconciler yes patch queues.scheduling.volcano.sh --subresource=status
can reconciler yes list nodes
can reconciler yes watch nodes
# ... and what neither process needs.
can extender no create pods -n "$E2E_NS"
can extender no delete pods -n "$E2E_NS"
can extender no get secrets -n "$E2E_NS"
can extender no update nodes
can extender no patch queues.scheduling.volcano.sh
can extender no create jobs.batch.volcano.sh -n "$E2E_NS"
can extender no delete podgroups.scheduling.volcano.sh -n "$E2E_NS"
can reconciler no get secrets -n "$E2E_NS"
can reconciler no list configmaps -n "$E2E_NS"
can reconciler no create pods --subresource=binding -n "$E2E_NS"
can reconciler no create pods --subresource=eviction -n "$E2E_NS"
can reconciler no get nodes
can reconciler no patch nodes
can reconciler no patch queues.scheduling.volcano.sh
can reconciler no create commands.bus.volcano.sh -n "$E2E_NS"
can reconciler no update jobs.batch.volcano.sh -n "$E2E_NS"
can reconciler no create clusterrolebindings
pass "$(wc -l <"$OUT/can-i.txt") auth can-i checks of the two roles ($OUT/can-i.txt)"
# The Deployment's ServiceAccount: the kube-scheduler's own lease, no other.
as_muster() { "${KC[@]}" --as=system:serviceaccount:muster-system:muster auth can-i "$@" 2>/dev/null || true; }
expect_eq "muster-system/muster may update its lease" \
  "$(as_muster update leases.coordination.k8s.io/volcano-scheduler -n muster-system)" yes
expect_eq "muster-system/muster may not update another lease" \
  "$(as_muster update leases.coordination.k8s.io/other -n muster-system)" no
expect_eq "muster-system/muster may not read secrets" "$(as_muster get secrets -A)" no
# RBAC's refusal, not other 403s (a namespace being deleted refuses creates).
for name in extender reconciler; do
  denied=$(grep -cE 'forbidden: User "[^"]*" cannot ' "$DIR/logs/$name.log" || true)
  expect_eq "requests of the $name refused over the run so far ($DIR/logs/$name.log)" "$denied" 0
done
pass "extender and reconciler ran every scenario so far with only manifests/rbac's roles"
