// Server-side cost of the extender verbs, in process (no HTTP): the whole
// verb, decode -> snapshot -> gates -> fit/score -> encode, as
// Pipeline::Filter/Prioritize run it for a kube-scheduler request.
//
// Setup: bench/cluster_fixture.h (1000 or 5000 nodes, names-only requests);
// extender_http_bench.cc measures the same calls through the real server.
// BM_FilterSharedGpus / BM_PrioritizeSharedGpus: 1000 nodes, half of them
// with GPUs shared by bound fraction pods (issue 18 acceptance 5: within
// 10 % of the unshared cluster's latency), probed with the 4-GPU pod
// (fraction_probe:0; its fit looks at single GPUs where GPUs are shared)
// and with a pod asking 0.5 of one GPU (fraction_probe:1).
// BM_Bind / BM_BindSharedGpus: the bind verb (ReserveBind + FinishBind, the
// Binding POST itself left out) of the same probes to the first node that
// fits them.
// bench/extender_ab.sh runs these against a commit before GPU sharing
// (the shared-GPU cases skip themselves there).
// Reported: time per call (Google Benchmark), plus p50_us / p99_us counters
// from a manual timing of kSampleCalls calls per run. BM_CacheRss reports the
// RSS growth of filling a cache with 5000 nodes and 50k pods (VmRSS).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/cluster_fixture.h"
#include "extender/cluster_cache.h"
#include "extender/cluster_state.h"
#include "extender/pipeline.h"
#include "kube/codec/extender_types.h"
#include "model/clock.h"
#include "model/pod.h"
#include "model/status.h"

namespace muster::extender {
namespace {

using bench::ClusterFixture;
using bench::FixtureFor;

constexpr int kSampleCalls = 2000;

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
  const bench::Percentiles p = bench::PercentilesOf(std::move(micros));
  state.counters["p50_us"] = p.p50;
  state.counters["p99_us"] = p.p99;
}

// What a 5000-node, 50k-pod cache costs. Registered first, so the process
// holds little else: rss_growth_mib is the VmRSS it adds (the first
// repetition's figure is the honest one: later ones reuse freed memory),
// heap_mib the bytes malloc hands out for it, whichever repetition.
void BM_CacheRss(benchmark::State& state) {
  for (auto _ : state) {
    const int64_t rss_before = bench::RssKib();
    const size_t heap_before = mallinfo2().uordblks;
    FakeClock clock;
    auto cache = std::make_unique<ClusterCache>(clock);
    bench::FillCache(*cache, 5000, bench::kPodsPerNode);
    state.counters["rss_growth_mib"] = static_cast<double>(bench::RssKib() - rss_before) / 1024;
    state.counters["heap_mib"] =
        static_cast<double>(mallinfo2().uordblks - heap_before) / (1024 * 1024);
    state.counters["rss_total_mib"] = static_cast<double>(bench::RssKib()) / 1024;
  }
}
BENCHMARK(BM_CacheRss)->Iterations(1)->Unit(benchmark::kMillisecond);

void RunFilter(benchmark::State& state, ClusterFixture& f, const std::string& body) {
  VerbReply probe = f.pipeline.Filter(body);
  if (probe.outcome != ReplyOutcome::kOk) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline.Filter(body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline.Filter(body)); });
  state.counters["fits"] = static_cast<double>(probe.decisions[kReasonFits]);
  state.counters["req_kb"] = static_cast<double>(body.size()) / 1024;
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}

void RunPrioritize(benchmark::State& state, ClusterFixture& f, const std::string& body) {
  VerbReply probe = f.pipeline.Prioritize(body);
  if (probe.http_status != 200) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline.Prioritize(body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline.Prioritize(body)); });
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}

// range(1) = 1: the nodes publish their GPU topology and the pods their GPU
// ids (the extra work topology adds: GPU sets scored in prioritize).
void BM_Filter(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  RunFilter(state, f, f.body);
}
BENCHMARK(BM_Filter)
    ->ArgsProduct({{1000, 5000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
    ->Unit(benchmark::kMicrosecond);

void BM_Prioritize(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  RunPrioritize(state, f, f.body);
}
BENCHMARK(BM_Prioritize)
    ->ArgsProduct({{1000, 5000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
    ->Unit(benchmark::kMicrosecond);

// The prioritize request a scheduling cycle sends: kube-scheduler scores
// only the nodes that passed every filter, the extender's included
// (prioritizeNodes runs on the feasible nodes, pkg/scheduler/schedule_one.go),
// here the 1884 of 5000 (369 of 1000) the probe fits. BM_Prioritize sends
// every node: an upper bound no cycle reaches.
std::string FeasibleRequest(ClusterFixture& f) {
  StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(f.body);
  StatusOr<kube::ExtenderFilterResult> passed =
      kube::DecodeExtenderFilterResult(f.pipeline.Filter(f.body).body);
  if (!args.ok() || !passed.ok() || !passed->node_names.has_value()) return "";
  args->node_names = passed->node_names;
  return kube::EncodeExtenderArgs(*args);
}

void BM_PrioritizeFeasible(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  const std::string body = FeasibleRequest(f);
  if (body.empty()) {
    state.SkipWithError("the probe's filter passes no node");
    return;
  }
  RunPrioritize(state, f, body);
  state.counters["req_kb"] = static_cast<double>(body.size()) / 1024;
}
BENCHMARK(BM_PrioritizeFeasible)
    ->ArgsProduct({{1000, 5000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
    ->Unit(benchmark::kMicrosecond);

// bind of the probe pod, pending in the cache, to the first node that
// `filter_body`'s filter passes: ReserveBind (decode, fit, GPU pick, the
// Binding with its annotations, the reservation) and FinishBind after a
// successful POST, the two calls the server makes around its Binding POST
// (the POST itself is not timed). Every iteration binds the same pod to the
// same node: its reservation is forgotten after each, untimed (manual time;
// p50_us / p99_us are over the timed iterations). The pod leaves the cache
// at the end, so the other benchmarks' fixture is as it was.
void RunBind(benchmark::State& state, ClusterFixture& f, const std::string& filter_body) {
  StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(filter_body);
  StatusOr<kube::ExtenderFilterResult> passed =
      kube::DecodeExtenderFilterResult(f.pipeline.Filter(filter_body).body);
  if (!args.ok() || !passed.ok() || !passed->node_names.has_value() ||
      passed->node_names->empty()) {
    state.SkipWithError("the probe does not decode, or filter passes no node");
    return;
  }
  Pod pending = std::move(args->pod);
  pending.spec.node_name.clear();
  pending.status.phase = "Pending";
  f.cache.UpsertPod(pending);  // the pod informer saw it pending
  const std::string body =
      kube::EncodeExtenderBindingArgs({.pod_name = pending.meta.name,
                                       .pod_namespace = pending.meta.namespace_,
                                       .pod_uid = pending.meta.uid,
                                       .node = passed->node_names->front()});
  std::vector<double> micros;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const BindPlan plan = f.pipeline.ReserveBind(body);
    VerbReply reply = f.pipeline.FinishBind(plan, Status::Ok());
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(reply);
    const std::chrono::duration<double> took = end - start;
    state.SetIterationTime(took.count());
    micros.push_back(took.count() * 1e6);
    if (plan.action != BindAction::kPost) {
      state.SkipWithError(("bind: " + plan.error).c_str());
      break;
    }
    f.cache.Exclusive([&](ClusterState& cluster) { cluster.Forget(pending.meta.uid); });
  }
  f.cache.DeletePod(pending.meta.uid);
  if (!micros.empty()) {
    const bench::Percentiles p = bench::PercentilesOf(std::move(micros));
    state.counters["p50_us"] = p.p50;
    state.counters["p99_us"] = p.p99;
  }
}

// range(1) = 1: GPU topology, as above (bind then picks the GPU set).
void BM_Bind(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  RunBind(state, f, f.body);
}
BENCHMARK(BM_Bind)
    ->ArgsProduct({{1000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// GPU sharing (see the top): range(1) = 1 probes with the 0.5 share. A build
// without GPU sharing (the A/B's base commit) skips these.
ClusterFixture* SharedFixture(benchmark::State& state) {
  if (!bench::kGpuSharing) {
    state.SkipWithError("no GPU sharing in this build");
    return nullptr;
  }
  return &FixtureFor(static_cast<int>(state.range(0)), /*gpu_topology=*/false,
                     /*shared_gpus=*/true);
}
const std::string& ProbeOf(const benchmark::State& state, const ClusterFixture& f) {
  return state.range(1) != 0 ? f.share_body : f.body;
}

void BM_FilterSharedGpus(benchmark::State& state) {
  if (ClusterFixture* f = SharedFixture(state)) RunFilter(state, *f, ProbeOf(state, *f));
}
BENCHMARK(BM_FilterSharedGpus)
    ->ArgsProduct({{1000}, {0, 1}})
    ->ArgNames({"nodes", "fraction_probe"})
    ->Unit(benchmark::kMicrosecond);

void BM_PrioritizeSharedGpus(benchmark::State& state) {
  if (ClusterFixture* f = SharedFixture(state)) RunPrioritize(state, *f, ProbeOf(state, *f));
}
BENCHMARK(BM_PrioritizeSharedGpus)
    ->ArgsProduct({{1000}, {0, 1}})
    ->ArgNames({"nodes", "fraction_probe"})
    ->Unit(benchmark::kMicrosecond);

void BM_BindSharedGpus(benchmark::State& state) {
  if (ClusterFixture* f = SharedFixture(state)) RunBind(state, *f, ProbeOf(state, *f));
}
BENCHMARK(BM_BindSharedGpus)
    ->ArgsProduct({{1000}, {0, 1}})
    ->ArgNames({"nodes", "fraction_probe"})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// The breakdown of a filter call: decode alone, and snapshot + the fit
// verdicts alone (no messages: the filter builds one per distinct state).
void BM_DecodeRequest(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    StatusOr<ExtenderRequest> request = DecodeExtenderRequest(f.body);
    benchmark::DoNotOptimize(request);
  }
}
BENCHMARK(BM_DecodeRequest)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

// The same request with cloud-style node names (EC2's private DNS names,
// 40 characters): longer than std::string's small buffer, so a decoder that
// copies each name allocates for each.
void BM_DecodeRequestCloudNames(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)));
  StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(f.body);
  if (!args.ok() || !args->node_names.has_value()) {
    state.SkipWithError("the fixture's request does not decode");
    return;
  }
  for (size_t i = 0; i < args->node_names->size(); ++i) {
    (*args->node_names)[i] = "ip-10-0-" + std::to_string(i / 250) + "-" + std::to_string(i % 250) +
                             ".us-west-2.compute.internal";
  }
  const std::string body = kube::EncodeExtenderArgs(*args);
  if (!DecodeExtenderRequest(body).ok()) {
    state.SkipWithError("the cloud-named request does not decode");
    return;
  }
  for (auto _ : state) {
    StatusOr<ExtenderRequest> request = DecodeExtenderRequest(body);
    benchmark::DoNotOptimize(request);
  }
  state.counters["req_kb"] = static_cast<double>(body.size()) / 1024;
}
BENCHMARK(BM_DecodeRequestCloudNames)->Arg(5000)->Unit(benchmark::kMicrosecond);

void BM_SnapshotAndFitVerdicts(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)));
  StatusOr<ExtenderRequest> request = DecodeExtenderRequest(f.body);
  if (!request.ok()) {
    state.SkipWithError(request.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    const ClusterSnapshot snapshot = f.cache.Snapshot(request->pod.meta.uid);
    const PodDemand demand = DemandOf(request->pod, f.pipeline.managed_resources(), snapshot);
    snapshot.FindEach(request->candidates.names, [&](size_t, const NodeInfo* node) {
      benchmark::DoNotOptimize(FitVerdictOnNode(demand, node));
    });
  }
}
BENCHMARK(BM_SnapshotAndFitVerdicts)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace muster::extender
