// Server-side cost of the extender verbs, in process (no HTTP): the whole
// verb, decode -> snapshot -> gates -> fit/score -> encode, as
// Pipeline::Filter/Prioritize run it for a kube-scheduler request.
//
// Setup: bench/cluster_fixture.h (1000 or 5000 nodes, names-only requests);
// extender_http_bench.cc measures the same calls through the real server.
// Reported: time per call (Google Benchmark), plus p50_us / p99_us counters
// from a manual timing of kSampleCalls calls per run. BM_CacheRss reports the
// RSS growth of filling a cache with 5000 nodes and 50k pods (VmRSS).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "bench/cluster_fixture.h"
#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "model/clock.h"

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

// range(1) = 1: the nodes publish their GPU topology and the pods their GPU
// ids (the extra work topology adds: GPU sets scored in prioritize).
void BM_Filter(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  VerbReply probe = f.pipeline.Filter(f.body);
  if (probe.outcome != ReplyOutcome::kOk) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline.Filter(f.body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline.Filter(f.body)); });
  state.counters["fits"] = static_cast<double>(probe.decisions[kReasonFits]);
  state.counters["req_kb"] = static_cast<double>(f.body.size()) / 1024;
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}
BENCHMARK(BM_Filter)
    ->ArgsProduct({{1000, 5000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
    ->Unit(benchmark::kMicrosecond);

void BM_Prioritize(benchmark::State& state) {
  ClusterFixture& f = FixtureFor(static_cast<int>(state.range(0)), state.range(1) != 0);
  VerbReply probe = f.pipeline.Prioritize(f.body);
  if (probe.http_status != 200) {
    state.SkipWithError(probe.body.c_str());
    return;
  }
  for (auto _ : state) {
    VerbReply reply = f.pipeline.Prioritize(f.body);
    benchmark::DoNotOptimize(reply);
  }
  SetPercentiles(state, [&] { benchmark::DoNotOptimize(f.pipeline.Prioritize(f.body)); });
  state.counters["reply_kb"] = static_cast<double>(probe.body.size()) / 1024;
}
BENCHMARK(BM_Prioritize)
    ->ArgsProduct({{1000, 5000}, {0, 1}})
    ->ArgNames({"nodes", "gpu_topology"})
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
