// The gang controller's decision (gang::RunPass): the part of every pass
// that grows with nodes and gangs. Each state is measured as the gang wait
// bench (bench/gang_wait.sh) meets it: gangs of 2..100 pods, some bound
// round-robin over the nodes, others waiting to be planned.
//
//   RunPass/<nodes>/<gangs>/<waiting>: `gangs` PodGroups on `nodes` nodes
//   of 8 GPUs, the first `waiting` of them pending (the others bound).
//   5000 x 1000 x 1000 is issue 22's worst case: a pass over 1000 pending
//   gangs on 5000 nodes (target 20 ms).
//   RunPassPreempting/<nodes>/<gangs>/<waiting>: the same, the pending
//   gangs one priority above the bound ones, which are victim candidates:
//   the pass also searches for the whole gangs to evict.
//   RunPassDistinct/<nodes>/<gangs>/<waiting>: RunPass with no two gangs
//   alike (each asks its own memory), so the planner cannot answer a gang
//   with what it worked out for one of the same shape (RunPass's gangs come
//   in 21 shapes, as a queue cut from a few Job templates does).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gang/gang.h"
#include "gang/testing/builders.h"
#include "model/testing/builders.h"

namespace muster::gang {
namespace {

using ::muster::test::MakeNode;
using ::muster::test::MakePod;
using test::MakeGang;
using test::MakeView;
using test::VictimsOf;

const Time kNow = Time::FromUnixSeconds(10'000);

std::vector<Node> Nodes(int count) {
  std::vector<Node> nodes;
  for (int i = 0; i < count; ++i) {
    nodes.push_back(MakeNode("node-" + std::to_string(i))
                        .Cpu("96")
                        .Memory("1536Gi")
                        .Gpu(8)
                        .Pods(110)
                        .Label("network.muster.io/rack", "rack-" + std::to_string(i / 125)));
  }
  return nodes;
}

// Gang g: `size` members of `gpus` GPUs; running ones bound round-robin.
// `distinct`: its members ask 4Gi + g MiB of memory, no other gang's amount.
Gang GangOf(int g, int size, int gpus, bool running, int nodes, bool distinct) {
  const std::string name = "g" + std::to_string(g);
  auto b = MakeGang(name).MinMember(size).Created(kNow - std::chrono::seconds(g % 7));
  for (int i = 0; i < size; ++i) {
    Pod pod = MakePod(name + "-" + std::to_string(i))
                  .Uid(name + "-uid-" + std::to_string(i))
                  .Cpu("1")
                  .Memory(distinct ? std::to_string(4096 + g) + "Mi" : "4Gi")
                  .Gpu(gpus);
    if (running) {
      b.Bound(pod, "node-" + std::to_string((g * 131 + i * 7) % nodes));
    } else {
      b.Pending(pod);
    }
  }
  return b;
}

void RunPasses(benchmark::State& state, bool preempting, bool distinct = false) {
  const int nodes = static_cast<int>(state.range(0));
  const int gangs = static_cast<int>(state.range(1));
  const int waiting = static_cast<int>(state.range(2));
  constexpr int kSizes[] = {2, 4, 8, 16, 32, 64, 100};
  std::vector<Gang> all;
  for (int g = 0; g < gangs; ++g) {
    const bool running = g >= waiting;
    Gang gang = GangOf(g, kSizes[g % 7], 1 + g % 3, running, nodes, distinct);
    if (preempting && !running) gang.priority = 1;  // above its victims
    all.push_back(std::move(gang));
  }
  const ClusterView view = MakeView(Nodes(nodes), all);
  const std::vector<VictimCandidate> victims =
      preempting ? VictimsOf(all) : std::vector<VictimCandidate>{};
  int64_t planned = 0;
  int64_t evicted = 0;
  for (auto _ : state) {
    PassResult result = RunPass(view, all, victims, kNow, PassConfig{.preemption = preempting});
    planned += static_cast<int64_t>(result.plans.size());
    if (result.preemption) evicted += static_cast<int64_t>(result.preemption->victims.size());
    benchmark::DoNotOptimize(result);
  }
  const auto per_pass = [&](int64_t n) {
    return benchmark::Counter(static_cast<double>(n) / static_cast<double>(state.iterations()));
  };
  state.counters["plans/pass"] = per_pass(planned);
  if (preempting) state.counters["victims/pass"] = per_pass(evicted);
}

void BM_RunPass(benchmark::State& state) { RunPasses(state, /*preempting=*/false); }
BENCHMARK(BM_RunPass)
    ->ArgNames({"nodes", "gangs", "waiting"})
    ->Args({1000, 60, 0})
    ->Args({1000, 60, 1})
    ->Args({1000, 60, 5})
    ->Args({1000, 200, 5})
    ->Args({5000, 1000, 100})
    ->Args({5000, 1000, 1000})
    ->Unit(benchmark::kMillisecond);

void BM_RunPassDistinct(benchmark::State& state) {
  RunPasses(state, /*preempting=*/false, /*distinct=*/true);
}
BENCHMARK(BM_RunPassDistinct)
    ->ArgNames({"nodes", "gangs", "waiting"})
    ->Args({5000, 1000, 100})
    ->Args({5000, 1000, 1000})
    ->Unit(benchmark::kMillisecond);

void BM_RunPassPreempting(benchmark::State& state) { RunPasses(state, /*preempting=*/true); }
BENCHMARK(BM_RunPassPreempting)
    ->ArgNames({"nodes", "gangs", "waiting"})
    ->Args({1000, 60, 5})
    ->Args({5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster::gang
