#include "reconciler/app.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "base/ops_server.h"
#include "base/server_malloc.h"
#include "base/signals.h"
#include "kube/client/informer.h"
#include "kube/client/kubeconfig.h"
#include "model/flags.h"
#include "reconciler/gpu_fraction.h"
#include "reconciler/queue_controller.h"

namespace muster::reconciler {
namespace {

using Flags = ReconcilerFlags;

FlagTable<ReconcilerFlags> Setters() {
  return FlagTable<ReconcilerFlags>{
      {"kubeconfig", StringInto<Flags>([](Flags & f) -> auto& { return f.kubeconfig; })},
      {"listen", StringInto<Flags>([](Flags & f) -> auto& { return f.listen_address; })},
      {"port", IntInto<Flags, int>(
                   "port", 0, 65535, [](Flags & f) -> auto& { return f.port; })},
      {"kube-api-qps",
       IntInto<Flags, double>(
           "kube-api-qps", 1, 100000, [](Flags & f) -> auto& { return f.kube_api_qps; })},
      {"kube-api-burst",
       IntInto<Flags, int>(
           "kube-api-burst", 1, 100000, [](Flags & f) -> auto& { return f.kube_api_burst; })},
      {"scheduler-name",
       StringInto<Flags>([](Flags & f) -> auto& { return f.controller.default_scheduler; })},
      {"gated-scheduler",
       [](const std::string& v, ReconcilerFlags& f) {
         // The first use replaces the default list.
         if (!f.gated_schedulers_set) f.controller.pods.gated_schedulers.clear();
         f.gated_schedulers_set = true;
         f.controller.pods.gated_schedulers.push_back(v);
         return Status::Ok();
       }},
      {"workers", IntInto<Flags, int>(
                      "workers", 1, 256, [](Flags & f) -> auto& { return f.controller.workers; })},
      {"gpu-fraction-mode",
       [](const std::string& v, ReconcilerFlags& f) {
         GpuFractionMode& mode = f.controller.pods.gpu_fraction.mode;
         if (v == "annotation") {
           mode = GpuFractionMode::kAnnotation;
         } else if (v == "vgpu") {
           mode = GpuFractionMode::kVgpu;
         } else {
           return FlagError("gpu-fraction-mode", "\"" + v + "\" is not one of annotation, vgpu");
         }
         return Status::Ok();
       }},
      // Up to 16 TiB of GPU memory per GPU: far above any GPU made.
      {"vgpu-gpu-memory-mib",
       IntInto<Flags, int64_t>(
           "vgpu-gpu-memory-mib", 1, int64_t{1} << 24,
           [](Flags & f) -> auto& { return f.controller.pods.gpu_fraction.vgpu_gpu_memory_mib; })},
  };
}

const FlagTable<ReconcilerFlags>& AllSetters() {
  static const auto* setters = [] {
    auto* table = new FlagTable<ReconcilerFlags>(Setters());
    kube::AddLeaderFlags<Flags>(*table, [](Flags& f) -> kube::LeaderFlags& { return f.leader; });
    return table;
  }();
  return *setters;
}

// Sets the undecodable-objects gauge of every kind the controllers watch,
// zeros included (an object fixed or deleted leaves the count).
void PublishUndecodable(const JobController& jobs, const QueueController& queues,
                        ReconcilerMetrics& metrics) {
  auto by_kind = jobs.Undecodable();
  by_kind.merge(queues.Undecodable());
  for (const auto& [kind, records] : by_kind) {
    std::map<std::string_view, int64_t> counts;
    for (const auto& record : records) ++counts[kube::UndecodableReason(*record)];
    for (std::string_view reason : kube::kUndecodableReasons) {
      metrics.SetUndecodable(kind, reason, counts[reason]);
    }
  }
}

// Publishes the jobs-by-phase and undecodable-objects gauges once a second
// until a signal arrives.
void PublishJobs(const JobController& controller, ReconcilerMetrics& metrics) {
  static constexpr std::string_view kPhases[] = {
      "Pending",    "Running",   "Restarting",  "Aborting",   "Aborted",
      "Completing", "Completed", "Terminating", "Terminated", "Failed"};
  std::map<std::string, int64_t> by_phase = controller.JobsByPhase();
  for (std::string_view phase : kPhases) {
    auto it = by_phase.find(std::string(phase));
    metrics.SetJobs(phase, it == by_phase.end() ? 0 : it->second);
  }
}

// What the main thread watches while the reconciler runs.
struct MainLoop {
  const base::SignalWaiter& signals;
  JobController& jobs;
  QueueController& queues;
  ReconcilerMetrics& metrics;
  const kube::Election* election = nullptr;  // null: this replica always leads

  bool Leading() const { return election == nullptr || election->Leading(); }
};

// Waits for SIGTERM/SIGINT; returns the exit code. The controllers sync
// (and write) only once this replica leads; until then they only watch. A
// replica deposed after leading ends (1): restarted, it re-reads everything
// as a standby. Once a second: the gauges.
int ServeUntilSignal(const MainLoop& loop) {
  bool working = false;
  auto published = std::chrono::steady_clock::time_point{};
  for (;;) {
    if (!working && loop.Leading()) {
      loop.queues.StartWorking();
      loop.jobs.StartWorking();
      working = true;
      spdlog::info("reconciler: leading; syncing Jobs and Queues");
    }
    if (loop.election != nullptr && loop.election->Deposed()) {
      spdlog::error(
          "reconciler: lost the Lease {} (held by \"{}\"); exiting, to start again as "
          "a standby",
          kube::LeaseKey(loop.election->options()), loop.election->LeaseHolder());
      return 1;
    }
    if (const int sig = loop.signals.Wait(std::chrono::milliseconds(50)); sig != 0) {
      spdlog::info("reconciler: signal {}, shutting down", sig);
      return 0;
    }
    if (std::chrono::steady_clock::now() - published < std::chrono::seconds(1)) continue;
    published = std::chrono::steady_clock::now();
    PublishJobs(loop.jobs, loop.metrics);
    PublishUndecodable(loop.jobs, loop.queues, loop.metrics);
    loop.metrics.SetLeader(loop.Leading());
  }
}

// The reconciler's API connection: with --leader-elect, the election on its
// own Lease, and a client whose writes go out only while it leads.
struct Api {
  std::unique_ptr<kube::Election> election;  // null without --leader-elect
  std::unique_ptr<kube::Client> client;
};

StatusOr<Api> ConnectApi(const ReconcilerFlags& flags) {
  StatusOr<kube::ClientConfig> config = kube::ResolveConfig(flags.kubeconfig);
  if (!config.ok()) return config.status().Annotate("loading the client config");
  config->qps = flags.kube_api_qps;
  config->burst = flags.kube_api_burst;
  config->max_connections = flags.controller.workers * flags.controller.writes_per_sync + 4;
  Api api;
  kube::ClientOptions client_options;
  if (flags.leader.enabled) {
    spdlog::info("reconciler: electing on Lease {} as {}", kube::LeaseKey(flags.leader.election),
                 flags.leader.election.identity);
    StatusOr<std::unique_ptr<kube::Election>> election =
        kube::Election::Start(*config, flags.leader.election);
    if (!election.ok()) return election.status().Annotate("leader election");
    api.election = std::move(election).value();
    client_options.write_fence = [elected = api.election.get()] { return elected->Leading(); };
  }
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::New(*config, client_options);
  if (!client.ok()) return client.status();
  api.client = std::move(client).value();
  return api;
}

void LogGpuFractionMode(const GpuFractionOptions& gpu) {
  if (gpu.mode == GpuFractionMode::kVgpu) {
    spdlog::info("reconciler: a share of one GPU becomes volcano.sh/vgpu-* (one GPU: {} MiB)",
                 gpu.vgpu_gpu_memory_mib);
  } else {
    spdlog::info("reconciler: a share of one GPU becomes the annotation muster.io/gpu-fraction");
  }
}

int Serve(const ReconcilerFlags& flags, const base::SignalWaiter& signals) {
  StatusOr<Api> api = ConnectApi(flags);
  if (!api.ok()) {
    spdlog::error("reconciler: {}", api.status().ToString());
    return 1;
  }
  kube::Client* client = api->client.get();
  ReconcilerMetrics metrics;
  // The job controller and the queue controller (Commands, queue state)
  // lend each other a little: a new Job's queue, and job Commands' actions.
  const QueueController* queues = nullptr;
  ControllerOptions options = flags.controller;
  options.queue_of = [&queues](const std::string& name) { return queues->GetQueue(name); };
  options.children_of = [&queues](const std::string& name) { return queues->ChildQueues(name); };
  JobController controller(client, RealClock(), options, &metrics);
  JobCommandHooks hooks;
  hooks.synced = [&controller] { return controller.Synced(); };
  hooks.job = [&controller](const std::string& key) { return controller.CachedJob(key); };
  hooks.submit = [&controller](const std::string& key, Request request) {
    controller.Submit(key, std::move(request));
  };
  QueueController queue_controller(client, RealClock(), &metrics, std::move(hooks));
  queues = &queue_controller;
  auto ready = [&controller, &queue_controller] {
    return controller.Synced() && queue_controller.Synced();
  };
  base::OpsServer ops({.metrics = [&metrics] { return metrics.Serialize(); },
                       .ready = ready,
                       .not_ready_reason = "informers not synced",
                       .role = kube::RoleOf(api->election.get())});
  if (std::string error; !ops.Start(flags.listen_address, flags.port, &error)) {
    spdlog::error("reconciler: {}", UnavailableError(error).ToString());
    return 1;
  }
  queue_controller.StartWatching();
  controller.StartWatching();
  spdlog::info("reconciler: running; metrics on {}:{}", flags.listen_address, flags.port);
  LogGpuFractionMode(flags.controller.pods.gpu_fraction);
  const int code = ServeUntilSignal({.signals = signals,
                                     .jobs = controller,
                                     .queues = queue_controller,
                                     .metrics = metrics,
                                     .election = api->election.get()});
  controller.Stop();
  queue_controller.Stop();
  ops.Stop();
  client->Shutdown();
  return code;
}

}  // namespace

StatusOr<ReconcilerFlags> ParseReconcilerFlags(const std::vector<std::string>& args) {
  ReconcilerFlags flags;
  MUSTER_RETURN_IF_ERROR(ParseFlagArgs(args, AllSetters(), flags, &flags.help));
  // vgpu mode without the GPU memory cannot build a pod: refused at start.
  if (!flags.help) {
    MUSTER_RETURN_IF_ERROR(ValidateGpuFractionOptions(flags.controller.pods.gpu_fraction));
    MUSTER_RETURN_IF_ERROR(kube::FinishLeaderFlags(&flags.leader));
  }
  return flags;
}

std::string ReconcilerUsage() {
  return "usage: muster reconciler [flags]\n"
         "  --kubeconfig PATH        kubeconfig (default: $KUBECONFIG, ~/.kube/config, "
         "in-cluster)\n"
         "  --listen ADDR            metrics/health address (default 127.0.0.1)\n"
         "  --port N                 metrics/health port (default 8889)\n"
         "  --scheduler-name NAME    schedulerName for Jobs that set none (default volcano)\n"
         "  --gated-scheduler NAME   create pods of this scheduler behind the muster.io/gang\n"
         "                           gate (repeatable; default volcano)\n"
         "  --workers N              jobs synced in parallel (default 16)\n"
         "  --gpu-fraction-mode MODE what a task template's nvidia.com/gpu: 0.5 becomes:\n"
         "                           annotation (muster.io/gpu-fraction, no isolation;\n"
         "                           default) or vgpu (volcano.sh/vgpu-* for Volcano's vGPU\n"
         "                           device plugin, isolated by HAMi-core)\n"
         "  --vgpu-gpu-memory-mib N  vgpu mode (required there): the memory of one GPU, MiB\n"
         "                           (the smallest GPU's with mixed models)\n"
         "  --kube-api-qps N --kube-api-burst N   API rate limit (default 100/200)\n" +
         kube::LeaderFlagsUsage(DefaultLeaderFlags().election);
}

kube::LeaderFlags DefaultLeaderFlags() {
  return kube::LeaderFlags{.enabled = false,
                           .election = {.mode = kube::LeaderMode::kAcquire,
                                        .lease_namespace = "muster-system",
                                        .lease_name = "muster-reconciler"}};
}

int RunReconciler(const std::vector<std::string>& args) {
  StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags(args);
  if (!flags.ok()) {
    std::fprintf(stderr, "muster reconciler: %s\n%s", flags.status().message().c_str(),
                 ReconcilerUsage().c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(ReconcilerUsage().c_str(), stdout);
    return 0;
  }
  base::ConfigureServerMalloc();
  // Blocked before any thread starts, so every thread inherits the mask and
  // only the wait in this thread receives them.
  const base::SignalWaiter signals;
  return Serve(*flags, signals);
}

}  // namespace muster::reconciler
