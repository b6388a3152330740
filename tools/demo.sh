#!/usr/bin/env bash
# `make demo`: the local-cluster demo. The local control plane (real
# kube-apiserver, two kube-schedulers, etcd, kwok GPU nodes) lands with issue
# #3; until then this says what the demo will do and fails. It never fakes a
# result.
cat <<'MSG'
muster demo — not available yet.

When the local-cluster work (issue #3) lands, `make demo` will:
  1. build kube-apiserver, kube-scheduler, kube-controller-manager, etcd and
     kwok from their Go modules into ~/.cache/muster/ (once);
  2. start them on 127.0.0.1 with 16 fake nodes x 8 GPUs in 2 racks;
  3. run muster as the extender of a second kube-scheduler (profile volcano);
  4. submit the Volcano Jobs in examples/ and show where their pods landed.

Today only the foundation exists: `make test` builds and tests it.
MSG
exit 1
