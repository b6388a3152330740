// The gang controller's whole pass (GangController::RunPass: the inputs
// read from the cache under its exclusive lock, the queue step, the
// decision, the reservations, the writes planned and observed; no API
// client, so nothing is sent) at issue 22's scale, where gang_bench times the
// decision alone.
//
//   ControllerPass/<nodes>/<running>/<waiting>: `nodes` nodes of 8 GPUs;
//   `running` Volcano PodGroups of 11 bound pods each (round-robin over the
//   nodes: the 5000-node bench cluster's 5000 Jobs and 55 000 pods, their
//   PodGroups showing the status the controller computes); and
//   `waiting` PodGroups of 8 one-GPU pods. The first pass reserves the
//   waiting ones; every pass timed keeps those reservations, as passes do
//   while a burst's members bind. No pass may take over 100 ms (issue 22).
//   PlainPodsPass/<nodes>/<bound>/<pending>: plain pods of the volcano
//   scheduler (no PodGroup: each is Volcano's PodGroup of one), one GPU
//   each, as bench/scheduling_throughput.sh leaves the cache mid-run:
//   `bound` running, `pending` not yet through filter. Every pass timed
//   finds nothing changed, as most passes of such a run find little.
//   ReadGangs/<nodes>/<running>/<waiting>/<changed>: the part of a pass that
//   holds the cache's exclusive lock (filter and bind wait on it), with
//   `changed` gangs changed since the pass before (see BM_ReadGangs).
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <tuple>

#include "extender/cluster_cache.h"
#include "extender/gang_controller.h"
#include "extender/gang_inputs.h"
#include "gang/gang.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using ::muster::test::MakeNode;
using ::muster::test::MakePod;
using ::muster::test::MakePodGroup;

constexpr int kRunningPods = 11;
constexpr int kWaitingPods = 8;

std::string NodeName(int i) { return "node-" + std::to_string(i); }

void AddGroup(ClusterCache& cache, const std::string& name, int pods, int nodes, int first_node) {
  PodGroup group = MakePodGroup(name).Namespace("ml").MinMember(pods);
  group.meta.uid = "uid-" + name;  // as the API gives every object
  group.meta.resource_version = "1";
  if (first_node >= 0) {
    // Running: its PodGroup shows the status the controller wrote (the
    // watch brought it back), as a running Job's does.
    group.status = PodGroupStatus{
        .phase = std::string(kPodGroupRunning),
        .conditions = {Condition{.type = "Scheduled",
                                 .status = "True",
                                 .reason = std::string(gang::kScheduledReason),
                                 .last_transition_time = Time::FromUnixSeconds(1'000'000)}},
        .running = pods};
  }
  cache.UpsertPodGroup(group);
  for (int i = 0; i < pods; ++i) {
    const std::string pod = name + "-" + std::to_string(i);
    test::PodBuilder b =
        MakePod(pod).Namespace("ml").Uid("uid-" + pod).Group(name).Cpu("1").Memory("4Gi");
    if (first_node >= 0) {
      b.NodeName(NodeName((first_node + i) % nodes)).Phase("Running");
    } else {
      b.Gpu(1);
    }
    cache.UpsertPod(b);
  }
}

// One cluster per size for the whole process (filling it takes seconds).
struct Cluster {
  Cluster(int nodes, int running, int waiting) : nodes(nodes) {
    for (int i = 0; i < nodes; ++i) {
      cache.UpsertNode(MakeNode(NodeName(i))
                           .Cpu("96")
                           .Memory("1536Gi")
                           .Gpu(8)
                           .Pods(110)
                           .Label("network.muster.io/rack", "rack-" + std::to_string(i / 125)));
    }
    for (int g = 0; g < running; ++g) {
      AddGroup(cache, "job-" + std::to_string(g), kRunningPods, nodes, g * kRunningPods);
    }
    for (int g = 0; g < waiting; ++g) {
      AddGroup(cache, "wait-" + std::to_string(g), kWaitingPods, nodes, -1);
    }
  }
  const int nodes;
  FakeClock clock;
  ClusterCache cache{clock};
};

// One C per benchmark's first three arguments, for the whole process.
template <typename C>
C& CachedFor(const benchmark::State& state) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, C*> clusters;
  C*& c = clusters[{state.range(0), state.range(1), state.range(2)}];
  if (c == nullptr) {  // never freed
    c = new C(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
              static_cast<int>(state.range(2)));
  }
  return *c;
}

Cluster& ClusterOf(const benchmark::State& state) { return CachedFor<Cluster>(state); }

void BM_ControllerPass(benchmark::State& state) {
  Cluster& cluster = ClusterOf(state);
  GangController controller(&cluster.cache, /*client=*/nullptr, cluster.clock, {},
                            /*metrics=*/nullptr);
  controller.RunPass();  // reserves the waiting gangs
  for (auto _ : state) controller.RunPass();
}
BENCHMARK(BM_ControllerPass)
    ->ArgNames({"nodes", "running", "waiting"})
    ->Args({1000, 1000, 0})
    ->Args({5000, 5000, 0})
    ->Args({5000, 5000, 1000})
    ->Unit(benchmark::kMillisecond);

// Plain pods of the volcano scheduler: `bound` on nodes round-robin,
// `pending` not.
struct PlainCluster {
  PlainCluster(int nodes, int bound, int pending) {
    for (int i = 0; i < nodes; ++i) {
      cache.UpsertNode(MakeNode(NodeName(i)).Cpu("96").Memory("1536Gi").Gpu(8).Pods(110));
    }
    for (int i = 0; i < bound + pending; ++i) {
      const std::string pod = "p-" + std::to_string(i);
      test::PodBuilder b = MakePod(pod)
                               .Namespace("bench")
                               .Uid("uid-" + pod)
                               .SchedulerName(std::string(kVolcanoSchedulerName))
                               .Cpu("100m")
                               .Gpu(1);
      if (i < bound) b.NodeName(NodeName(i % nodes)).Phase("Running");
      cache.UpsertPod(b);
    }
  }
  FakeClock clock;
  ClusterCache cache{clock};
};

void BM_PlainPodsPass(benchmark::State& state) {
  PlainCluster& cluster = CachedFor<PlainCluster>(state);
  GangController controller(&cluster.cache, /*client=*/nullptr, cluster.clock, {},
                            /*metrics=*/nullptr);
  controller.RunPass();
  for (auto _ : state) controller.RunPass();
}
BENCHMARK(BM_PlainPodsPass)
    ->ArgNames({"nodes", "bound", "pending"})
    ->Args({1000, 1000, 2000})
    ->Args({5000, 5000, 5000})
    ->Unit(benchmark::kMillisecond);

// The part of a pass under the cache's exclusive lock (ReadGangs), with
// `changed` of the running gangs changed before each pass (a pod of each
// upserted again, as a status update from its kubelet would be): the gangs
// are built again only where they changed. changed = running is a pass that
// finds every gang new (the first after a restart).
void BM_ReadGangs(benchmark::State& state) {
  Cluster& cluster = ClusterOf(state);
  const int running = static_cast<int>(state.range(1));
  const int changed = static_cast<int>(state.range(3));
  BuiltGangs built;
  cluster.cache.Exclusive([&](ClusterState& s) { ReadGangs(s, built); });
  int next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    if (changed >= running) built = BuiltGangs();
    for (int i = 0; i < changed && changed < running; ++i, next = (next + 1) % running) {
      const std::string pod = "job-" + std::to_string(next) + "-0";
      cluster.cache.UpsertPod(MakePod(pod)
                                  .Namespace("ml")
                                  .Uid("uid-" + pod)
                                  .Group("job-" + std::to_string(next))
                                  .Cpu("1")
                                  .Memory("4Gi")
                                  .NodeName(NodeName((next * kRunningPods) % cluster.nodes))
                                  .Phase("Running"));
    }
    state.ResumeTiming();
    cluster.cache.Exclusive(
        [&](ClusterState& s) { benchmark::DoNotOptimize(ReadGangs(s, built)); });
  }
}
BENCHMARK(BM_ReadGangs)
    ->ArgNames({"nodes", "running", "waiting", "changed"})
    ->Args({5000, 5000, 0, 0})
    ->Args({5000, 5000, 0, 100})
    ->Args({5000, 5000, 0, 5000})
    ->Args({5000, 5000, 1000, 100})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster::extender
