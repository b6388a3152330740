// Server-side cost of the extender verbs, in process (no HTTP): the whole
// verb, decode -> snapshot -> gates -> fit/score -> encode, as
// Pipeline::Filter/Prioritize run it for a kube-scheduler request.
//
// Setup, as issue 4 acceptance 5 describes it:
//  - 1000 or 5000 nodes in a ClusterCache, 8 GPUs each, with ~10 bound pods
//    per node holding 0-2 GPUs each (so some nodes cannot take the pod);
//  - names-only requests (nodeCacheCapable) as kube-scheduler sends them:
//    the full pod (kube/codec/testdata/pod_full.json, 4 GPUs) in compact
//    JSON and every node name.
// Reported: time per call (Google Benchmark), plus p50_us / p99_us counters
// from a manual timing of kSampleCalls calls per run. BM_CacheRss reports the
// RSS growth of filling a cache with 5000 nodes and 50k pods (VmRSS).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/extender_types.h"
#include "model/clock.h"

namespace muster::extender {
namespace {

constexpr int kGpusPerNode = 8;
constexpr int kPodsPerNode = 10;
constexpr int kSampleCalls = 2000;

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string NodeName(int i) { return "gpu-node-" + std::to_string(i); }

Node MakeNode(int i) {
  Node node;
  node.meta.name = NodeName(i);
  node.meta.uid = "node-uid-" + std::to_string(i);
  node.meta.labels = {{"kubernetes.io/hostname", node.meta.name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {"network.muster.io/rack", "rack-" + std::to_string(i / 32)}};
  node.capacity = Resources{{"cpu", 96000},
                            {"memory", int64_t{1152} << 30},
                            {"nvidia.com/gpu", kGpusPerNode},
                            {"pods", 110}};
  node.allocatable = Resources{{"cpu", 95500},
                               {"memory", int64_t{1140} << 30},
                               {"nvidia.com/gpu", kGpusPerNode},
                               {"pods", 110}};
  return node;
}

Pod MakeBoundPod(int node, int k, int64_t gpus) {
  Pod pod;
  pod.meta.namespace_ = "team-" + std::to_string(node % 16);
  pod.meta.name = "job-" + std::to_string(node) + "-worker-" + std::to_string(k);
  pod.meta.uid = "pod-uid-" + std::to_string(node) + "-" + std::to_string(k);
  pod.spec.node_name = NodeName(node);
  pod.spec.scheduler_name = "volcano";
  Container c;
  c.name = "trainer";
  c.image = "registry.example.com/ml/trainer:v1.4";
  c.resources.requests = Resources{{"cpu", 4000}, {"memory", int64_t{32} << 30}};
  if (gpus > 0) c.resources.requests.Set(kNvidiaGpu, gpus);
  c.resources.limits = c.resources.requests;
  pod.spec.containers.push_back(std::move(c));
  pod.status.phase = "Running";
  return pod;
}

// Fills `cache` with `nodes` nodes and `pods_per_node` bound pods on each.
// GPUs per pod are 0 or 1, capped at what the node has left: the 4-GPU probe
// pod fits on about a third of the nodes, so both reply paths are exercised.
void FillCache(ClusterCache& cache, int nodes, int pods_per_node) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> gpus_of(0, 1);
  for (int i = 0; i < nodes; ++i) {
    cache.UpsertNode(MakeNode(i));
    int64_t used = 0;
    for (int k = 0; k < pods_per_node; ++k) {
      const int64_t gpus = std::min<int64_t>(gpus_of(rng), kGpusPerNode - used);
      used += gpus;
      cache.UpsertPod(MakeBoundPod(i, k, gpus));
    }
  }
}

// A names-only ExtenderArgs for every node, as kube-scheduler encodes it.
std::string NamesOnlyRequest(int nodes) {
  StatusOr<Pod> pod = kube::DecodePod(ReadTestdata("pod_full.json"));
  kube::ExtenderArgs args;
  if (pod.ok()) args.pod = std::move(*pod);
  args.node_names.emplace();
  for (int i = 0; i < nodes; ++i) args.node_names->push_back(NodeName(i));
  return kube::EncodeExtenderArgs(args);
}

struct Fixture {
  FakeClock clock;
  ClusterCache cache{clock};
  std::unique_ptr<Pipeline> pipeline;
  std::string body;

  explicit Fixture(int nodes) : body(NamesOnlyRequest(nodes)) {
    FillCache(cache, nodes, kPodsPerNode);
    pipeline = std::make_unique<Pipeline>(PolicyConfig{}, &cache);
  }
};

Fixture& FixtureFor(int nodes) {
  // One cache per size for the whole process: filling 5000 nodes is slow.
  static Fixture* small = nullptr;
  static Fixture* large = nullptr;
  Fixture*& f = nodes <= 1000 ? small : large;
  if (f == nullptr) f = new Fixture(nodes);
  return *f;
}

// Times kSampleCalls calls one by one and sets p50_us / p99_us.
template <typename Call>
void SetPercentiles(benchmark::State& state, Call&& call) {
  std::vector<double> micros;
  micros.reserve(kSampleCalls);
  for (int i = 0; i < kSampleCalls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[micros.size() * 99 / 100];
}

// VmRSS of this process in KiB, 0 when /proc is not readable.
int64_t RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

// What a 5000-node, 50k-pod cache costs. Registered first, so the process
// holds little else: rss_growth_mib is the VmRSS it adds (the first
// repetition's figure is the honest one: later ones reuse freed memory),
// heap_mib the bytes malloc hands out for it, whichever repetition.
void BM_CacheRss(benchmark::State& state) {
  for (auto _ : state) {
    const int64_t rss_before = RssKib();
    const size_t heap_before = mallinfo2().uordblks;
    FakeClock clock;
    auto cache = std::make_unique<ClusterCache>(clock);
    FillCache(*cache, 5000, 10);
    state.counters["rss_growth_mib"] = static_cast<double>(RssKib() - rss_before) / 1024;
    state.counters["heap_mib"] =
        static_cast<double>(mallinfo2().uordblks - heap_before) / (1024 * 1024);
    state.counters["rss_total_mib"] = static_cast<double>(RssKib()) / 1024;
  }
}
BENCHMARK(BM_CacheRss)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_Filter(benchmark::State& state) {
  Fixture& f = FixtureFor(static_cast<int>(state.range(0)));
  VerbReply probe = f.pipeline->Filter(f.body);
  if (probe.outcome != ReplyOutcome::kOk) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline->Filter(f.body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline->Filter(f.body)); });
  state.counters["fits"] = static_cast<double>(probe.decisions[kReasonFits]);
  state.counters["req_kb"] = static_cast<double>(f.body.size()) / 1024;
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}
BENCHMARK(BM_Filter)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

void BM_Prioritize(benchmark::State& state) {
  Fixture& f = FixtureFor(static_cast<int>(state.range(0)));
  VerbReply probe = f.pipeline->Prioritize(f.body);
  if (probe.http_status != 200) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline->Prioritize(f.body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline->Prioritize(f.body)); });
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}
BENCHMARK(BM_Prioritize)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

// The breakdown of a filter call: decode alone, and snapshot + the fit
// verdicts alone (no messages: the filter builds one per distinct state).
void BM_DecodeRequest(benchmark::State& state) {
  Fixture& f = FixtureFor(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    StatusOr<ExtenderRequest> request = DecodeExtenderRequest(f.body);
    benchmark::DoNotOptimize(request);
  }
}
BENCHMARK(BM_DecodeRequest)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

void BM_SnapshotAndFitVerdicts(benchmark::State& state) {
  Fixture& f = FixtureFor(static_cast<int>(state.range(0)));
  StatusOr<ExtenderRequest> request = DecodeExtenderRequest(f.body);
  if (!request.ok()) {
    state.SkipWithError(request.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    const ClusterSnapshot snapshot = f.cache.Snapshot(request->pod.meta.uid);
    const PodDemand demand = DemandOf(request->pod, f.pipeline->managed_resources(), snapshot);
    for (const std::string& name : request->candidates.names) {
      benchmark::DoNotOptimize(FitVerdictOnNode(demand, snapshot.FindNode(name)));
    }
  }
}
BENCHMARK(BM_SnapshotAndFitVerdicts)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace muster::extender
