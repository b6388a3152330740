#!/usr/bin/env bash
# Four early-quitting pipes under pipefail, and three forms that are fine.
set -euo pipefail
kubectl api-resources -o name | grep -qx podgroups.scheduling.k8s.io
kubectl get events | grep -m 1 FailedScheduling
kubectl get pods -o name | grep --quiet pod/a
# kubectl get pods | grep -q in a comment
grep -q podgroups <<<"$(kubectl api-resources -o name)"
kubectl get pods || grep -q x /dev/null
kubectl get pods -o name | grep -c pod/
kubectl get events -o name | head -n 1
