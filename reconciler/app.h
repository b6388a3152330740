// `muster reconciler`: the sidecar that runs Volcano Jobs. RunReconciler()
// parses the flags, starts the JobController (controller.h) and the
// QueueController (queue_controller.h: vcctl's Commands, queue state) and
// serves /metrics, /healthz and /readyz until SIGTERM or SIGINT.
//
// Flags (each also as --flag=value):
//   --kubeconfig PATH        kubeconfig (default: kubectl's lookup order,
//                            then in-cluster)
//   --listen ADDR --port N   metrics/health address (default 127.0.0.1:8889)
//   --scheduler-name NAME    schedulerName of Jobs that name none (volcano)
//   --gated-scheduler NAME   pods for this scheduler are created behind the
//                            muster.io/gang gate (repeatable; default volcano)
//   --workers N              jobs synced in parallel (default 16)
//   --gpu-fraction-mode annotation|vgpu   what a task template's share of
//                            one GPU becomes (gpu_fraction.h; annotation)
//   --vgpu-gpu-memory-mib N  vgpu mode: one GPU's memory, MiB (required
//                            there: the start is refused without it)
//   --kube-api-qps N --kube-api-burst N   client rate limit (default 100/200)
//
// Thread-safety: as RunExtender (extender/app.h): call from the main thread
// before any other thread exists.
#pragma once

#include <string>
#include <vector>

#include "kube/client/leader_flags.h"
#include "model/status.h"
#include "reconciler/controller.h"

namespace muster::reconciler {

// kAcquire on muster-system/muster-reconciler, a Lease of its own.
kube::LeaderFlags DefaultLeaderFlags();

struct ReconcilerFlags {
  std::string kubeconfig;
  std::string listen_address = "127.0.0.1";
  int port = 8889;
  double kube_api_qps = 100;
  int kube_api_burst = 200;
  ControllerOptions controller;
  bool gated_schedulers_set = false;  // --gated-scheduler seen (replaces the default)
  // --leader-*: with two replicas, only the Lease holder syncs.
  kube::LeaderFlags leader = DefaultLeaderFlags();
  bool help = false;
};

// InvalidArgument naming the flag for an unknown flag or a bad value.
StatusOr<ReconcilerFlags> ParseReconcilerFlags(const std::vector<std::string>& args);
std::string ReconcilerUsage();
// The `reconciler` subcommand: the process exit code (0 after a clean
// shutdown, 2 for bad flags, 1 when it cannot start).
int RunReconciler(const std::vector<std::string>& args);

}  // namespace muster::reconciler
