// `muster extender`: the process kube-scheduler calls. RunExtender() parses
// the flags, builds the cluster cache from Node and Pod informers, serves the
// extender protocol (server.h) and sweeps expired reservations until SIGTERM
// or SIGINT, then shuts down cleanly (stop accepting, finish the requests in
// flight, stop the watches).
//
// Flags (each also as --flag=value):
//   --listen ADDR            listen address (default 127.0.0.1: the sidecar case)
//   --port N                 listen port (default 8888)
//   --prefix PATH            URL prefix of the verbs (default /scheduler)
//   --kubeconfig PATH        kubeconfig (default: kubectl's lookup order)
//   --tls-cert PATH --tls-key PATH   serve HTTPS
//   --client-ca PATH         require client certificates signed by this CA
//   --max-body-bytes N       request body limit (default 16 MiB)
//   --kube-api-qps N --kube-api-burst N   each API client's rate limit (default
//                            50/100, as kube-scheduler's clientConnection)
//   --managed-resource NAME  a resource fitted besides nvidia.com/gpu (repeatable)
//   --score-mode binpack|spread
//   --gang-reservation-timeout D   (default 60s) --gang-preemption true|false
//   --gang-head-of-line-after D    (default 10s)
//   --gang-settle-quiet D --gang-settle-max D   (default 300ms, 1.5s)
//
// Thread-safety: RunExtender blocks SIGTERM/SIGINT in the calling thread
// (and so in every thread it starts) and waits for them itself; call it
// from the main thread before any other thread exists.
#pragma once

#include <string>
#include <vector>

#include "extender/gang_controller.h"
#include "extender/gpu_ledger.h"
#include "extender/pipeline.h"
#include "extender/pod_webhook.h"
#include "extender/server.h"
#include "kube/client/leader_flags.h"
#include "model/status.h"

namespace muster::extender {

// kFollow on kube-scheduler's Lease, muster-system/volcano-scheduler
// (manifests/scheduler/kube-scheduler-config.yaml).
kube::LeaderFlags DefaultLeaderFlags();

struct ExtenderFlags {
  ServerOptions server;
  std::string kubeconfig;
  // --metrics-listen / --metrics-port: a second listener with only /metrics,
  // /healthz and /readyz (base::OpsServer), so Prometheus and the kubelet's
  // probes reach them on the Pod's IP while the verbs stay on loopback.
  // Port 0: none.
  std::string metrics_listen = "0.0.0.0";
  int metrics_port = 0;
  // --webhook-port / --webhook-listen / --webhook-cert / --webhook-key: the
  // pods' admission webhook (pod_webhook.h) on HTTPS; port 0: none.
  PodWebhookOptions webhook{.port = 0};
  // Token bucket of each API client (watches; binds). Binds are one POST per
  // pod, so the qps bounds the pods/s muster can bind.
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  PolicyConfig policy;
  bool scheduler_names_given = false;  // a --scheduler-name replaced the default
  GangControllerOptions gang;
  // --gpu-topology-profiles: GPU topologies by model, for nodes without the
  // muster.io/gpu-topology annotation (read once at start).
  GpuProfiles gpu_profiles;
  // --leader-*: with two replicas, act only beside the kube-scheduler that
  // holds its Lease (kube/client/leader_flags.h).
  kube::LeaderFlags leader = DefaultLeaderFlags();
  bool help = false;  // --help / -h: print the usage and exit 0
};

// InvalidArgument naming the flag for an unknown flag, a missing or bad
// value, TLS half-configured, or a stray positional argument.
StatusOr<ExtenderFlags> ParseExtenderFlags(const std::vector<std::string>& args);

// The usage text of the subcommand.
std::string ExtenderUsage();

// The `extender` subcommand: returns the process exit code (0 after a clean
// shutdown, 2 for bad flags, 1 when it cannot start).
int RunExtender(const std::vector<std::string>& args);

}  // namespace muster::extender
