// The gang controller's pass at scale (issue 22): 5000 nodes of 8 GPUs and
// 1000 pending gangs, the pass the extender runs and the pure decision in it.
//
// The cluster is bench/cluster_fixture.h's FillCache with GPU topology: 10
// bound pods per node of 0-1 GPU each (about 3 GPUs left per node, a few
// nodes whole), every one of them a plain volcano pod, so Volcano's PodGroup
// of one each (50 000 running gangs the pass reads and preemption may pick
// from); `pods` sets how many per node. On top, seeded: 1000 pending gangs in namespace "ml", half
// of them gangs of one (a plain pod carrying the muster.io/gang gate, as every plain volcano pod
// will), the others PodGroups (Inqueue) of 2-8 gated members; each member asks 1, 2, 4 or 8 GPUs
// with 4 cpu and 32Gi per GPU, created over the last 10 minutes (so a head of the line exists);
// with `high_priority` percent of them at priority 100 above the running pods (preemption then
// searches victims every pass).
//
//   ControllerPass: GangController::RunPass, everything the histogram
//     muster_gang_pass_duration_seconds times (inputs under the lock, the
//     queue step, gang::RunPass, ApplyPass, write planning, metrics), on a
//     cache whose reservations are undone between iterations (not timed);
//   BuildGangInputs: step 1 alone, under the cache's lock;
//   RunPass: gang::RunPass alone on the inputs and queue limits the
//     controller gives it;
//   ApplyPass: the reservations of one pass (undone between iterations).
//
// Each takes (nodes, pending gangs, high_priority %, bound pods per node).
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/cluster_fixture.h"
#include "extender/gang_controller.h"
#include "extender/gang_inputs.h"
#include "extender/queue_step.h"
#include "gang/gang.h"
#include "model/testing/builders.h"

namespace muster::extender::bench {
namespace {

using ::muster::test::MakePod;
using ::muster::test::MakePodGroup;

// A filled cache with its pending gangs, and what undoes a pass on it.
struct PassFixture {
  PassFixture(int nodes, int gangs, int high_priority, int pods_per_node);

  // Drops every reservation and gang plan a pass made (not timed).
  void Undo();
  GangInputs Inputs(Time now);

  FakeClock clock;
  ClusterCache cache{clock};
  std::vector<std::string> pending;  // uids of the pending members
  std::vector<std::string> keys;     // keys of the pending gangs
};

// Member `i` of the gang `group` ("" for a gang of one named `name`): gated,
// `gpus` GPUs with 4 cpu and 32Gi each.
Pod PendingPod(const std::string& name, const std::string& group, int gpus, int priority,
               Time created) {
  test::PodBuilder b = MakePod(name)
                           .Namespace("ml")
                           .Uid("uid-" + name)
                           .SchedulerName("volcano")
                           .Priority(priority)
                           .Cpu(std::to_string(4 * gpus))
                           .Memory(std::to_string(32 * gpus) + "Gi")
                           .Gpu(gpus)
                           .CreatedAt(created);
  if (!group.empty()) b.Group(group);
  Pod pod = b;
  pod.spec.scheduling_gates.push_back(std::string(kGangSchedulingGate));
  return pod;
}

PassFixture::PassFixture(int nodes, int gangs, int high_priority, int pods_per_node) {
  FillCache(cache, nodes, pods_per_node, /*gpu_topology=*/true);
  // FillCache's nodes say no condition (the verbs do not read it): the
  // gang pass plans on Ready ones only.
  for (int i = 0; i < nodes; ++i) {
    Node node;
    cache.Exclusive([&](ClusterState& state) { node = *state.FindNode(NodeName(i))->node; });
    node.conditions.push_back(Condition{.type = "Ready", .status = "True"});
    cache.UpsertNode(std::move(node));
  }
  std::mt19937 rng(22);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> size_of(2, 8);
  std::uniform_int_distribution<int> gpus_of(0, 3);
  std::uniform_int_distribution<int> age_of(0, 599);
  const Time now = clock.Now();
  for (int g = 0; g < gangs; ++g) {
    const bool one = percent(rng) < 50;
    const int members = one ? 1 : size_of(rng);
    const int gpus = 1 << gpus_of(rng);
    const int priority = percent(rng) < high_priority ? 100 : 0;
    const Time created = now - std::chrono::seconds(age_of(rng));
    const std::string name = (one ? "solo-" : "train-") + std::to_string(g);
    if (!one) {
      PodGroup group = MakePodGroup(name).Namespace("ml").MinMember(members).Phase("Inqueue");
      group.meta.creation_timestamp = created;
      cache.UpsertPodGroup(group);
      keys.push_back("ml/" + name);
    }
    for (int i = 0; i < members; ++i) {
      const Pod pod = PendingPod(one ? name : name + "-" + std::to_string(i), one ? "" : name, gpus,
                                 priority, created);
      pending.push_back(pod.meta.uid);
      cache.UpsertPod(pod);
    }
  }
  // Gangs of one are keyed by their implicit group: read the keys back.
  cache.Exclusive([&](ClusterState& state) {
    for (const auto& [key, pods] : state.gang_pods()) {
      if (key.starts_with("ml/solo-")) keys.push_back(key);
    }
  });
}

void PassFixture::Undo() {
  cache.Exclusive([&](ClusterState& state) {
    for (const std::string& uid : pending) state.Forget(uid);
    for (const std::string& key : keys) state.SetGangPlan(key, "");
  });
}

GangInputs PassFixture::Inputs(Time now) {
  GangInputs inputs;
  cache.Exclusive([&](ClusterState& state) { inputs = BuildGangInputs(state, {}, {}, now); });
  return inputs;
}

// One fixture per shape for the whole process (filling 5000 nodes takes a
// while); never freed.
PassFixture& FixtureOf(const benchmark::State& state) {
  static auto* fixtures =
      new std::map<std::tuple<int, int, int, int>, std::unique_ptr<PassFixture>>();
  const int nodes = static_cast<int>(state.range(0));
  const int gangs = static_cast<int>(state.range(1));
  const int high = static_cast<int>(state.range(2));
  const int pods = static_cast<int>(state.range(3));
  std::unique_ptr<PassFixture>& f = (*fixtures)[{nodes, gangs, high, pods}];
  if (f == nullptr) f = std::make_unique<PassFixture>(nodes, gangs, high, pods);
  return *f;
}

// The pass's outcome, as counters (the same every iteration: deterministic).
void Report(benchmark::State& state, const gang::PassResult& result) {
  state.counters["plans"] = static_cast<double>(result.plans.size());
  state.counters["waits"] = static_cast<double>(result.waits.size());
  state.counters["victims"] =
      result.preemption ? static_cast<double>(result.preemption->victims.size()) : 0;
}

void BM_ControllerPass(benchmark::State& state) {
  PassFixture& f = FixtureOf(state);
  for (auto _ : state) {
    state.PauseTiming();
    f.Undo();
    auto controller = std::make_unique<GangController>(&f.cache, /*client=*/nullptr, f.clock,
                                                       GangControllerOptions{},
                                                       /*metrics=*/nullptr);
    state.ResumeTiming();
    controller->RunPass();
    state.PauseTiming();
    controller.reset();
    state.ResumeTiming();
  }
  f.Undo();
}

void BM_BuildGangInputs(benchmark::State& state) {
  PassFixture& f = FixtureOf(state);
  const Time now = f.clock.Now();
  for (auto _ : state) {
    GangInputs inputs = f.Inputs(now);
    benchmark::DoNotOptimize(inputs);
  }
}

// The controller's Decide (gang_controller.cc) without the timing.
struct Decision {
  GangInputs inputs;
  QueueStep queues;
  std::vector<gang::Gang> gangs;
  gang::QueueLimits limits;
};

Decision Prepare(PassFixture& f, Time now) {
  Decision d{.inputs = f.Inputs(now)};
  d.queues = RunQueueStep(d.inputs.queues, d.inputs.free, d.inputs.gangs, d.inputs.victims);
  d.gangs = PlannedGangs(d.inputs.gangs, d.queues.held, d.inputs.waiting, d.inputs.queues);
  d.limits = d.queues.limits;
  ChargeLimits(d.limits, d.inputs.charged);
  return d;
}

void BM_RunPass(benchmark::State& state) {
  PassFixture& f = FixtureOf(state);
  const Time now = f.clock.Now();
  const Decision d = Prepare(f, now);
  gang::PassResult result;
  for (auto _ : state) {
    // RunPass takes its gangs by value; the controller hands them over
    // (PlannedGangs), so the copy is not RunPass's.
    state.PauseTiming();
    std::vector<gang::Gang> gangs = d.gangs;
    state.ResumeTiming();
    result = gang::RunPass(d.inputs.view, std::move(gangs), d.inputs.victims, now,
                           gang::PassConfig{}, d.limits);
    benchmark::DoNotOptimize(result);
  }
  Report(state, result);
  state.counters["gangs"] = static_cast<double>(d.gangs.size());
}

void BM_ApplyPass(benchmark::State& state) {
  PassFixture& f = FixtureOf(state);
  const Time now = f.clock.Now();
  const Decision d = Prepare(f, now);
  const gang::PassResult result =
      gang::RunPass(d.inputs.view, d.gangs, d.inputs.victims, now, gang::PassConfig{}, d.limits);
  size_t applied = 0;
  for (auto _ : state) {
    state.PauseTiming();
    f.Undo();
    state.ResumeTiming();
    f.cache.Exclusive([&](ClusterState& cluster) {
      applied = ApplyPass(cluster, d.inputs, result, std::chrono::seconds(120)).size();
    });
  }
  f.Undo();
  state.counters["applied"] = static_cast<double>(applied);
}

// (nodes, pending gangs, high-priority %, bound pods per node): the
// acceptance shape (50 000 running gangs of one) with and without
// preemption, the same cluster running a fifth as many pods, and a tenth of
// the acceptance shape.
void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "gangs", "high", "pods"});
  b->Args({5000, 1000, 10, kPodsPerNode});
  b->Args({5000, 1000, 0, kPodsPerNode});
  b->Args({5000, 1000, 0, 2});
  b->Args({500, 100, 10, kPodsPerNode});
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_ControllerPass)->Apply(Shapes);
BENCHMARK(BM_BuildGangInputs)->Apply(Shapes);
BENCHMARK(BM_RunPass)->Apply(Shapes);
BENCHMARK(BM_ApplyPass)->Apply(Shapes);

}  // namespace
}  // namespace muster::extender::bench
