#include "extender/app.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "base/ops_server.h"
#include "base/server_malloc.h"
#include "base/signals.h"
#include "extender/cluster_cache.h"
#include "extender/gang_controller.h"
#include "extender/metrics.h"
#include "kube/client/client.h"
#include "kube/client/informer.h"
#include "kube/client/kubeconfig.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "kube/codec/workload_codec.h"
#include "model/clock.h"
#include "model/time.h"

namespace muster::extender {
namespace {

// The API clients: one for the watches, one for binds whose every call,
// retries included, fits within kube-scheduler's 5 s extender timeout.
struct Clients {
  std::unique_ptr<kube::Client> watch;
  std::unique_ptr<kube::Client> bind;
  std::unique_ptr<kube::Client> gang;  // gates, PodGroup status, events, evictions
};

// The gang controller's options, its binds_ahead opening `bind`'s
// connections: a gang's members reach bind together once their gates are
// lifted, and a Binding on a connection opened for it waits for the TCP and
// TLS handshakes first. On a 2-core host, 17 Bindings posted at once landed
// within 31 ms (median of 8) on new connections and 15 ms on open ones; 100
// within 162 and 47 ms (median of 3).
GangControllerOptions GangOptions(GangControllerOptions options, kube::Client* bind) {
  options.binds_ahead = [bind](int members) { bind->Prewarm(members); };
  return options;
}

// `write_fence`: null, or leader election's (binds and the gang
// controller's writes go out only while it holds).
StatusOr<Clients> MakeClients(const ExtenderFlags& flags, const kube::ClientConfig& base_config,
                              const std::function<bool()>& write_fence) {
  StatusOr<kube::ClientConfig> config = base_config;
  config->qps = flags.kube_api_qps;
  config->burst = flags.kube_api_burst;
  Clients clients;
  StatusOr<std::unique_ptr<kube::Client>> watch = kube::Client::New(*config);
  if (!watch.ok()) return watch.status();
  clients.watch = std::move(watch).value();
  kube::ClientConfig bind_config = *config;
  bind_config.timeout = std::chrono::seconds(2);
  // kube-scheduler binds in parallel (a goroutine per pod) over HTTP/2; here
  // each HTTP/1.1 connection carries one request at a time, so binds in
  // flight need a connection each. The bind barrier lets a whole gang's
  // binds go at once (bind_barrier.h): the 100 Bindings of a 100-pod gang
  // landed in 165 ms over 128 connections, 220 ms over 48 (gang_deadlock).
  bind_config.max_connections = 128;
  kube::ClientOptions bind_options;
  bind_options.retry.max_attempts = 2;
  bind_options.retry.max_retry_after = std::chrono::seconds(1);
  bind_options.retry.backoff.max = std::chrono::milliseconds(500);
  bind_options.write_fence = write_fence;
  StatusOr<std::unique_ptr<kube::Client>> bind = kube::Client::New(bind_config, bind_options);
  if (!bind.ok()) return bind.status();
  clients.bind = std::move(bind).value();
  kube::ClientConfig gang_config = *config;
  gang_config.max_connections = 16;  // GangControllerOptions::io_parallelism
  // A write that hangs must not hold up the gates behind it: it fails fast
  // and the next pass writes it again (gang_writes.h ForgetUnwritten).
  gang_config.timeout = std::chrono::seconds(5);
  kube::ClientOptions gang_options;
  gang_options.retry.max_attempts = 2;
  gang_options.write_fence = write_fence;
  StatusOr<std::unique_ptr<kube::Client>> gang = kube::Client::New(gang_config, gang_options);
  if (!gang.ok()) return gang.status();
  clients.gang = std::move(gang).value();
  return clients;
}

// Feeds the cache from the watches. A pod recreated under the same name
// arrives as an update with another uid: the old incarnation goes first.
// Old and deleted objects are read for their identity only: the informers
// keep no more (Watches).
void Wire(kube::Informer<Node>& nodes, kube::Informer<Pod>& pods, ClusterCache& cache) {
  nodes.AddHandlers({
      .on_add = [&cache](const Node& n) { cache.UpsertNode(n); },
      .on_update = [&cache](const Node&, const Node& n) { cache.UpsertNode(n); },
      .on_delete = [&cache](const Node& n) { cache.DeleteNode(n.meta.name); },
  });
  pods.AddHandlers({
      .on_add = [&cache](const Pod& p) { cache.UpsertPod(p); },
      .on_update =
          [&cache](const Pod& old_pod, const Pod& p) {
            if (old_pod.meta.uid != p.meta.uid) cache.DeletePod(old_pod.meta.uid);
            cache.UpsertPod(p);
          },
      .on_delete = [&cache](const Pod& p) { cache.DeletePod(p.meta.uid); },
  });
}

// What the index keeps of a Queue that does not decode.
BrokenObject BrokenQueueOf(const kube::UndecodableObject& obj) {
  return {.namespace_ = obj.meta.namespace_,
          .name = obj.meta.name,
          .uid = obj.meta.uid,
          .resource_version = obj.meta.resource_version,
          .problem = obj.problem};
}

// What the index keeps of a PodGroup of `api` that does not decode: with its
// status when that part decodes (a restarted extender does not answer the
// same problem again).
BrokenObject BrokenPodGroupOf(const kube::UndecodableObject& obj, PodGroupApi api) {
  BrokenObject broken = BrokenQueueOf(obj);
  broken.api = api;
  StatusOr<PodGroupStatus> status = kube::DecodePodGroupStatusOf(obj.json);
  if (status.ok()) broken.status = *std::move(status);
  return broken;
}

// The PodGroups of one API into the cache, keyed by their gang key.
void WirePodGroups(kube::Informer<PodGroup>& groups, PodGroupApi api, ClusterCache& cache) {
  groups.AddHandlers({
      .on_add = [&cache](const PodGroup& g) { cache.UpsertPodGroup(g); },
      .on_update = [&cache](const PodGroup&, const PodGroup& g) { cache.UpsertPodGroup(g); },
      // By `api`, not g.GangKey(): after a relist, `g` is a stub (metadata only).
      .on_delete =
          [&cache, api](const PodGroup& g) {
            cache.DeletePodGroup(GangKey(api, g.meta.namespace_, g.meta.name));
          },
      .on_undecodable =
          [&cache, api](const kube::UndecodableObject& g) {
            cache.MarkPodGroupBroken(BrokenPodGroupOf(g, api));
          },
      .on_undecodable_cleared =
          [&cache, api](const kube::UndecodableObject& g) {
            cache.ClearBrokenPodGroup(GangKey(api, g.meta.namespace_, g.meta.name));
          },
  });
}

void WireQueues(kube::Informer<Queue>& queues, ClusterCache& cache) {
  queues.AddHandlers({
      .on_add = [&cache](const Queue& q) { cache.UpsertQueue(q); },
      .on_update = [&cache](const Queue&, const Queue& q) { cache.UpsertQueue(q); },
      .on_delete = [&cache](const Queue& q) { cache.DeleteQueue(q.meta.name); },
      .on_undecodable =
          [&cache](const kube::UndecodableObject& q) { cache.MarkQueueBroken(BrokenQueueOf(q)); },
      .on_undecodable_cleared =
          [&cache](const kube::UndecodableObject& q) { cache.ClearBrokenQueue(q.meta.name); },
  });
}

// The informer's records of objects that do not decode, for /debug/state
// and the undecodable-objects gauge.
template <typename T>
void AddUndecodable(std::string_view kind, const kube::Informer<T>& informer,
                    std::vector<UndecodableEntry>* out) {
  for (const auto& record : informer.ListUndecodable()) {
    out->push_back({.kind = std::string(kind),
                    .key = record->Key(),
                    .problem = record->problem,
                    .reason = std::string(kube::UndecodableReason(*record))});
  }
}

void PublishUndecodable(const std::vector<UndecodableEntry>& entries, ExtenderMetrics& metrics) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (const UndecodableEntry& e : entries) ++counts[{e.kind, e.reason}];
  for (std::string_view kind : kUndecodableKinds) {
    for (std::string_view reason : kube::kUndecodableReasons) {
      auto it = counts.find({std::string(kind), std::string(reason)});
      metrics.SetUndecodable(kind, reason, it == counts.end() ? 0 : it->second);
    }
  }
}

void PublishCache(ClusterCache& cache, ExtenderMetrics& metrics, bool synced) {
  size_t nodes = 0, pods = 0, assumed = 0, groups = 0, queues = 0;
  std::array<size_t, kGpuTopologySources> gpu_nodes{};
  std::optional<ClusterSnapshot> snapshot;  // read after the lock is released
  cache.Exclusive([&](ClusterState& state) {
    gpu_nodes = state.gpu_topology_nodes();
    snapshot.emplace(state.Snapshot());
    nodes = state.node_count();
    pods = state.pod_count();
    assumed = state.assumed_count();
    groups = state.workloads().View().pod_group_count();
    queues = state.workloads().View().queue_count();
  });
  metrics.SetCacheObjects("nodes", static_cast<int64_t>(nodes));
  metrics.SetCacheObjects("pods", static_cast<int64_t>(pods));
  metrics.SetCacheObjects("assumed", static_cast<int64_t>(assumed));
  metrics.SetCacheObjects("podgroups", static_cast<int64_t>(groups));
  metrics.SetCacheObjects("queues", static_cast<int64_t>(queues));
  metrics.SetCacheSynced(synced);
  for (size_t i = 0; i < gpu_nodes.size(); ++i) {
    metrics.SetGpuTopologyNodes(GpuTopologySourceName(static_cast<GpuTopologySource>(i)),
                                static_cast<int64_t>(gpu_nodes[i]));
  }
  GpuUsage gpus;
  snapshot->ForEachNode([&gpus](const NodeInfo& node) { gpus.Add(node); });
  metrics.SetGpuUsage(gpus);
}

// What the main thread watches while the extender serves.
struct MainLoop {
  const base::SignalWaiter& signals;
  ClusterCache& cache;
  ExtenderMetrics& metrics;
  std::function<bool()> synced;
  // Leader election (kube::Election); null: this replica always leads.
  const kube::Election* election = nullptr;
  std::function<void()> start_gangs;
  std::function<std::vector<UndecodableEntry>()> undecodable;

  bool Leading() const { return election == nullptr || election->Leading(); }
};

// Waits for SIGTERM/SIGINT (blocked in every thread); returns the exit
// code. The gang controller starts once the caches are synced and this
// replica leads - a plan from half a cache could double-book, and a standby
// must not write. A replica deposed after leading ends (1): its reservations
// and plans may be stale, and restarted it re-derives them from the API as
// a standby. Once a second: expired reservations swept, gauges published.
int ServeUntilSignal(const MainLoop& loop) {
  bool started = false;
  auto published = std::chrono::steady_clock::time_point{};
  for (;;) {
    if (!started && loop.synced() && loop.Leading()) {
      loop.start_gangs();
      started = true;
    }
    if (loop.election != nullptr && loop.election->Deposed()) {
      spdlog::error(
          "extender: no longer beside the leading kube-scheduler (Lease {} held by "
          "\"{}\"); exiting, to start again as a standby",
          kube::LeaseKey(loop.election->options()), loop.election->LeaseHolder());
      return 1;
    }
    if (const int sig = loop.signals.Wait(std::chrono::milliseconds(50)); sig != 0) {
      spdlog::info("extender: signal {}, shutting down", sig);
      return 0;
    }
    if (std::chrono::steady_clock::now() - published < std::chrono::seconds(1)) continue;
    published = std::chrono::steady_clock::now();
    for (const std::string& uid : loop.cache.ExpireAssumed()) {
      spdlog::warn("extender: reservation of pod {} expired without its bound pod being seen", uid);
    }
    PublishCache(loop.cache, loop.metrics, loop.synced());
    PublishUndecodable(loop.undecodable(), loop.metrics);
    loop.metrics.SetLeader(loop.Leading());
  }
}

// The watches that feed the cache. PodGroups and Queues: the CRDs of
// manifests/crds must be installed, or these lists fail (logged, retried)
// and the extender never gets ready. Kubernetes' own PodGroups
// (scheduling.k8s.io/v1beta1) are served only by Kubernetes 1.37+ with the
// GenericWorkload gate and that version in --runtime-config: an optional
// collection (InformerOptions::optional_collection), synced with none while
// the list answers 404 and followed once the API server serves it.
//
// Nothing reads the informers' own caches: the handlers feed ClusterCache,
// which keeps its compact records. So the informers keep metadata only
// (CacheMode::kMetadataOnly; a decoded copy of 50 000 pods was ~150 MB,
// kube/client/informer_memory_main.cc), and a handler's old or
// relist-deleted object is a stub holding only its key, uid and
// resourceVersion - all the handlers above read of it.
kube::InformerOptions MetadataOnly(bool optional_collection = false) {
  return kube::InformerOptions{.cache_mode = kube::CacheMode::kMetadataOnly,
                               .optional_collection = optional_collection};
}
struct Watches {
  explicit Watches(kube::Client* client)
      : nodes(client, kube::ResourceRef::Core("nodes"), kube::DecodeNode, kube::DecodeNodeList,
              MetadataOnly()),
        pods(client, kube::ResourceRef::Core("pods"), kube::DecodePod, kube::DecodePodList,
             MetadataOnly()),
        groups(client, kube::PodGroupsRef(), kube::DecodePodGroup, kube::DecodePodGroupList,
               MetadataOnly()),
        queues(client, kube::QueuesRef(), kube::DecodeQueue, kube::DecodeQueueList, MetadataOnly()),
        k8s_groups(client, kube::KubernetesPodGroupsRef(), kube::DecodeKubernetesPodGroup,
                   kube::DecodeKubernetesPodGroupList, MetadataOnly(/*optional_collection=*/true)) {
  }

  void Feed(ClusterCache& cache) {
    Wire(nodes, pods, cache);
    WirePodGroups(groups, PodGroupApi::kVolcano, cache);
    WirePodGroups(k8s_groups, PodGroupApi::kKubernetes, cache);
    WireQueues(queues, cache);
  }
  bool Synced() const {
    return nodes.HasSynced() && pods.HasSynced() && groups.HasSynced() && queues.HasSynced() &&
           k8s_groups.HasSynced();
  }
  std::vector<UndecodableEntry> Undecodable() const {
    std::vector<UndecodableEntry> out;
    AddUndecodable("nodes", nodes, &out);
    AddUndecodable("pods", pods, &out);
    AddUndecodable("podgroups", groups, &out);
    AddUndecodable("queues", queues, &out);
    AddUndecodable("podgroups.scheduling.k8s.io", k8s_groups, &out);
    return out;
  }
  void Start() {
    nodes.Start();
    pods.Start();
    groups.Start();
    queues.Start();
    k8s_groups.Start();
  }
  void Stop() {
    nodes.Stop();
    pods.Stop();
    groups.Stop();
    queues.Stop();
    k8s_groups.Stop();
  }

  kube::Informer<Node> nodes;
  kube::Informer<Pod> pods;
  kube::Informer<PodGroup> groups;
  kube::Informer<Queue> queues;
  kube::Informer<PodGroup> k8s_groups;
};

ClusterStateOptions CacheOptions(const ExtenderFlags& flags) {
  ClusterStateOptions options;
  options.gpu_profiles = flags.gpu_profiles;
  options.gang_schedulers = flags.policy.gang_schedulers;
  return options;
}

// Starts the verbs' server and, with --metrics-port, the ops server, and with
// --webhook-port the pod webhook (made into `webhook`); false (logged) when
// one cannot serve.
bool StartServing(const ExtenderFlags& flags, Server& server, base::OpsServer& ops,
                  ExtenderMetrics& metrics, std::unique_ptr<PodWebhook>& webhook) {
  if (Status started = server.Start(); !started.ok()) {
    spdlog::error("extender: {}", started.ToString());
    return false;
  }
  spdlog::info("extender: serving {}:{}{} ({})", flags.server.listen_address, server.port(),
               flags.server.prefix, flags.server.tls_cert_path.empty() ? "http" : "https");
  if (flags.webhook.port != 0) {
    // It answers on every replica, leader or standby: it only reads the pod
    // it is asked about.
    webhook = std::make_unique<PodWebhook>(flags.webhook, flags.policy.gang_schedulers, &metrics);
    if (Status started = webhook->Start(); !started.ok()) {
      spdlog::error("extender: {}", started.ToString());
      return false;
    }
    spdlog::info("extender: pod webhook on https://{}:{}{}", flags.webhook.listen_address,
                 webhook->port(), flags.webhook.path);
  }
  if (flags.metrics_port == 0) return true;
  if (std::string error; !ops.Start(flags.metrics_listen, flags.metrics_port, &error)) {
    spdlog::error("extender: metrics: {}", UnavailableError(error).ToString());
    return false;
  }
  spdlog::info("extender: metrics on {}:{}", flags.metrics_listen, ops.port());
  return true;
}

// With --leader-elect, the election on kube-scheduler's Lease; else null.
StatusOr<std::unique_ptr<kube::Election>> StartElection(const ExtenderFlags& flags,
                                                        const kube::ClientConfig& config) {
  if (!flags.leader.enabled) return std::unique_ptr<kube::Election>();
  spdlog::info("extender: acting only while kube-scheduler's Lease {} is held by pod {}",
               kube::LeaseKey(flags.leader.election), flags.leader.election.identity);
  return kube::Election::Start(config, flags.leader.election);
}

int Serve(const ExtenderFlags& flags, const base::SignalWaiter& signals) {
  StatusOr<kube::ClientConfig> config = kube::ResolveConfig(flags.kubeconfig);
  if (!config.ok()) {
    spdlog::error("extender: loading the client config: {}", config.status().ToString());
    return 1;
  }
  StatusOr<std::unique_ptr<kube::Election>> election = StartElection(flags, *config);
  if (!election.ok()) {
    spdlog::error("extender: leader election: {}", election.status().ToString());
    return 1;
  }
  const kube::Election* elected = election->get();
  std::function<bool()> fence;
  if (elected != nullptr) fence = [elected] { return elected->Leading(); };
  StatusOr<Clients> clients = MakeClients(flags, *config, fence);
  if (!clients.ok()) {
    spdlog::error("extender: {}", clients.status().ToString());
    return 1;
  }
  ClusterCache cache(RealClock(), CacheOptions(flags));
  Watches watches(clients->watch.get());
  watches.Feed(cache);
  const Pipeline pipeline(flags.policy, &cache);
  ExtenderMetrics metrics;
  KubeBinder binder(clients->bind.get());
  const std::function<bool()> synced = [&watches] { return watches.Synced(); };
  const auto undecodable = [&watches] { return watches.Undecodable(); };
  // Gangs: planned and reserved whole by a controller thread, which starts
  // once the cache is synced (a plan from half a cache could double-book).
  GangController gangs(&cache, clients->gang.get(), RealClock(),
                       GangOptions(flags.gang, clients->bind.get()), &metrics);
  Server server(flags.server, ServerDeps{.pipeline = &pipeline,
                                         .binder = &binder,
                                         .metrics = &metrics,
                                         .cluster = &cache,
                                         .ready = synced,
                                         .role = kube::RoleOf(elected),
                                         .gangs = [&gangs] { return gangs.DebugJson(); },
                                         .queues = [&gangs] { return gangs.QueuesDebugJson(); },
                                         .undecodable = undecodable});
  watches.Start();
  base::OpsServer ops({.metrics = [&metrics] { return metrics.Text(); },
                       .ready = synced,
                       .role = kube::RoleOf(elected),
                       .debug_state = [&server] { return server.DebugState(); }});
  std::unique_ptr<PodWebhook> webhook;  // stopped when it goes, after the gangs
  if (!StartServing(flags, server, ops, metrics, webhook)) return 1;
  const int code = ServeUntilSignal({.signals = signals,
                                     .cache = cache,
                                     .metrics = metrics,
                                     .synced = synced,
                                     .election = elected,
                                     .start_gangs = [&gangs] { gangs.Start(); },
                                     .undecodable = undecodable});
  gangs.Stop();
  ops.Stop();
  server.Stop();  // finishes the requests in flight
  watches.Stop();
  return code;
}

}  // namespace

int RunExtender(const std::vector<std::string>& args) {
  StatusOr<ExtenderFlags> flags = ParseExtenderFlags(args);
  if (!flags.ok()) {
    std::fprintf(stderr, "muster extender: %s\n%s", flags.status().message().c_str(),
                 ExtenderUsage().c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(ExtenderUsage().c_str(), stdout);
    return 0;
  }
  base::ConfigureServerMalloc();
  // Blocked before any thread starts, so every thread inherits the mask and
  // only the wait in this thread receives them.
  const base::SignalWaiter signals;
  return Serve(*flags, signals);
}

}  // namespace muster::extender
