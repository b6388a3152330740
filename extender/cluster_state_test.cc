#include "extender/cluster_state.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr Duration kTtl = std::chrono::seconds(60);

// What a test expects of one node name after a sequence of events.
struct NodeExpectation {
  std::string name;
  bool present = true;  // FindNode() finds an entry
  bool known = true;    // the entry has a Node object
  int64_t gpus = 0;     // allocated nvidia.com/gpu
  int64_t pods = 0;     // allocated "pods"
  int32_t bound = 0;
  int32_t assumed = 0;
};

void ExpectNode(const ClusterSnapshot& snapshot, const NodeExpectation& e) {
  SCOPED_TRACE("node " + e.name);
  const NodeInfo* info = snapshot.FindNode(e.name);
  ASSERT_EQ(info != nullptr, e.present);
  if (info == nullptr) return;
  EXPECT_EQ(info->known(), e.known);
  EXPECT_EQ(info->allocated.gpus(), e.gpus);
  EXPECT_EQ(info->allocated.Get(kPods), e.pods);
  EXPECT_EQ(info->bound_pods, e.bound);
  EXPECT_EQ(info->assumed_pods, e.assumed);
}

Node GpuNode(const std::string& name, int64_t gpus = 8) {
  return MakeNode(name).Cpu("64").Memory("512Gi").Gpu(gpus);
}

test::PodBuilder Bound(const std::string& name, const std::string& node, int64_t gpus) {
  return MakePod(name).Cpu("1").Gpu(gpus).NodeName(node).Phase("Running");
}

struct AccountingCase {
  std::string name;
  std::function<void(ClusterState&, FakeClock&)> events;
  std::vector<NodeExpectation> nodes;
};

// Bound pods, terminal, terminating and deleted ones, and nodes that come
// and go under them.
const std::vector<AccountingCase> kBoundPodCases = {
    {"a bound running pod counts on its node",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a pending pod counts nowhere",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(MakePod("p1").Gpu(4));
     },
     {{.name = "n1"}}},
    {"replaying an event counts the pod once",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.UpsertNode(GpuNode("n1"));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a pod that succeeds releases its resources",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.UpsertPod(Bound("p2", "n1", 2));
       s.UpsertPod(Bound("p1", "n1", 4).Phase("Succeeded"));
     },
     {{.name = "n1", .gpus = 2, .pods = 1, .bound = 1}}},
    {"a pod that fails releases its resources",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4).Phase("Failed"));
     },
     {{.name = "n1"}}},
    {"a terminating pod still holds its resources",
     [](ClusterState& s, FakeClock& clock) {
       s.UpsertNode(GpuNode("n1"));
       Pod pod = Bound("p1", "n1", 4);
       pod.meta.deletion_timestamp = clock.Now();
       s.UpsertPod(pod);
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a deleted pod releases its resources",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.DeletePod("uid-p1");
       s.DeletePod("uid-p1");
     },
     {{.name = "n1"}}},
    {"a changed request is re-accounted",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.UpsertPod(Bound("p1", "n1", 6));
     },
     {{.name = "n1", .gpus = 6, .pods = 1, .bound = 1}}},
    {"a pod bound before its node is seen counts under the name",
     [](ClusterState& s, FakeClock&) { s.UpsertPod(Bound("p1", "n1", 4)); },
     {{.name = "n1", .known = false, .gpus = 4, .pods = 1, .bound = 1}}},
    {"a node that appears late starts with its pods' allocation",
     [](ClusterState& s, FakeClock&) {
       s.UpsertPod(Bound("p1", "n1", 4));
       s.UpsertNode(GpuNode("n1"));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a deleted node keeps its pods' allocation until they go",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.DeleteNode("n1");
     },
     {{.name = "n1", .known = false, .gpus = 4, .pods = 1, .bound = 1}}},
    {"a deleted node without pods is gone",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.DeleteNode("n1");
       s.DeletePod("uid-p1");
     },
     {{.name = "n1", .present = false}}},
};

// Assumed placements (reservations): how they count, move, expire and end.
const std::vector<AccountingCase> kAssumedPlacementCases = {
    {"an assumed placement counts on its node",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertPod(MakePod("p1").Gpu(4));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"the bound pod replaces its assumption",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.UpsertPod(Bound("p1", "n1", 4));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a pod bound elsewhere than assumed counts where it is",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertNode(GpuNode("n2"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.UpsertPod(Bound("p1", "n2", 4));
     },
     {{.name = "n1"}, {.name = "n2", .gpus = 4, .pods = 1, .bound = 1}}},
    {"a deleted pod drops its assumption",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.DeletePod("uid-p1");
     },
     {{.name = "n1"}}},
    {"a pod that fails while assumed drops its assumption",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.UpsertPod(MakePod("p1").Gpu(4).Phase("Failed"));
     },
     {{.name = "n1"}}},
    {"a pending pod keeps its assumption",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.UpsertPod(MakePod("p1").Gpu(4));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"an assumption moved to another node leaves the first",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertNode(GpuNode("n2"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.Assume("uid-p1", "n2", test::Res({{"nvidia.com/gpu", "4"}}));
     },
     {{.name = "n1"}, {.name = "n2", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"an assumption expires after the TTL",
     [](ClusterState& s, FakeClock& clock) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       clock.Advance(kTtl);
     },
     {{.name = "n1"}}},
    {"an assumption counts until just before the TTL",
     [](ClusterState& s, FakeClock& clock) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       clock.Advance(kTtl - Duration(1));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"assuming again restarts the TTL",
     [](ClusterState& s, FakeClock& clock) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       clock.Advance(kTtl / 2);
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       clock.Advance(kTtl / 2);
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"forget releases the placement",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.Forget("uid-p1");
     },
     {{.name = "n1"}}},
    {"forget on another node keeps the placement",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.Forget("uid-p1", "n2");
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .assumed = 1}}},
    {"assuming a pod seen bound holds nothing more",
     [](ClusterState& s, FakeClock&) {
       s.UpsertNode(GpuNode("n1"));
       s.UpsertNode(GpuNode("n2"));
       s.UpsertPod(Bound("p1", "n1", 4));
       s.Assume("uid-p1", "n1", test::Res({{"nvidia.com/gpu", "4"}}));
       s.Assume("uid-p1", "n2", test::Res({{"nvidia.com/gpu", "4"}}));
     },
     {{.name = "n1", .gpus = 4, .pods = 1, .bound = 1}, {.name = "n2"}}},
};

void ExpectAccounting(const AccountingCase& c) {
  SCOPED_TRACE(c.name);
  FakeClock clock;
  ClusterState state(clock, {.assume_ttl = kTtl});
  c.events(state, clock);
  const ClusterSnapshot snapshot = state.Snapshot();
  for (const NodeExpectation& e : c.nodes) ExpectNode(snapshot, e);
  EXPECT_TRUE(state.CheckAccounting().ok()) << state.CheckAccounting();
}

TEST(ClusterStateTest, AccountsPodsPerNode) {
  for (const AccountingCase& c : kBoundPodCases) ExpectAccounting(c);
}

TEST(ClusterStateTest, AccountsAssumedPlacements) {
  for (const AccountingCase& c : kAssumedPlacementCases) ExpectAccounting(c);
}

TEST(ClusterStateTest, AssumeReportsWhatItDid) {
  struct Case {
    std::string name;
    std::function<void(ClusterState&)> before;
    std::string node;
    AssumeResult want;
  };
  const Resources four = test::Res({{"nvidia.com/gpu", "4"}});
  const std::vector<Case> cases = {
      {"first reservation", [](ClusterState&) {}, "n1", AssumeResult::kAssumed},
      {"same node again", [&](ClusterState& s) { s.Assume("uid-p1", "n1", four); }, "n1",
       AssumeResult::kRefreshed},
      {"another node", [&](ClusterState& s) { s.Assume("uid-p1", "n1", four); }, "n2",
       AssumeResult::kMoved},
      {"already bound here", [](ClusterState& s) { s.UpsertPod(Bound("p1", "n1", 4)); }, "n1",
       AssumeResult::kAlreadyBound},
      {"bound elsewhere", [](ClusterState& s) { s.UpsertPod(Bound("p1", "n2", 4)); }, "n1",
       AssumeResult::kBoundElsewhere},
      {"bound, but finished: assumable",
       [](ClusterState& s) { s.UpsertPod(Bound("p1", "n2", 4).Phase("Succeeded")); }, "n1",
       AssumeResult::kAssumed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ClusterState state(clock);
    state.UpsertNode(GpuNode("n1"));
    state.UpsertNode(GpuNode("n2"));
    c.before(state);
    EXPECT_EQ(state.Assume("uid-p1", c.node, four), c.want);
    EXPECT_TRUE(state.CheckAccounting().ok()) << state.CheckAccounting();
  }
}

TEST(ClusterStateTest, ExpireAssumedNamesTheExpiredPods) {
  FakeClock clock;
  ClusterState state(clock, {.assume_ttl = kTtl});
  state.Assume("uid-a", "n1", {});
  clock.Advance(std::chrono::seconds(30));
  state.Assume("uid-b", "n1", {});
  clock.Advance(std::chrono::seconds(30));
  EXPECT_EQ(state.ExpireAssumed(), std::vector<std::string>{"uid-a"});
  EXPECT_EQ(state.assumed_count(), 1u);
  clock.Advance(std::chrono::seconds(30));
  EXPECT_EQ(state.ExpireAssumed(), std::vector<std::string>{"uid-b"});
  EXPECT_EQ(state.FindNode("n1"), nullptr) << "an entry holding nothing is freed";
}

TEST(ClusterStateTest, SnapshotTellsWhereThePodHoldsResources) {
  struct Case {
    std::string name;
    std::function<void(ClusterState&)> events;
    std::optional<Placement> want;
  };
  const Resources four = test::Res({{"nvidia.com/gpu", "4"}});
  const Resources four_held = test::Res({{"nvidia.com/gpu", "4"}, {"pods", "1"}});
  const std::vector<Case> cases = {
      {"unknown pod", [](ClusterState&) {}, std::nullopt},
      {"pending pod", [](ClusterState& s) { s.UpsertPod(MakePod("p1").Gpu(4)); }, std::nullopt},
      {"assumed", [&](ClusterState& s) { s.Assume("uid-p1", "n1", four); },
       Placement{.node = "n1", .resources = four_held, .assumed = true}},
      {"bound",
       [](ClusterState& s) { s.UpsertPod(MakePod("p1").Gpu(4).NodeName("n2").Phase("Running")); },
       Placement{.node = "n2", .resources = four_held, .assumed = false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ClusterState state(clock);
    c.events(state);
    EXPECT_EQ(state.Snapshot("uid-p1").pod_placement(), c.want);
    EXPECT_EQ(state.Snapshot().pod_placement(), std::nullopt) << "no pod asked about";
  }
}

TEST(ClusterStateTest, SnapshotsDoNotSeeLaterChanges) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertNode(GpuNode("n1"));
  state.UpsertPod(Bound("p1", "n1", 2));
  const ClusterSnapshot before = state.Snapshot();
  EXPECT_EQ(state.Snapshot().generation(), before.generation()) << "no change, same generation";

  state.UpsertPod(Bound("p2", "n1", 4));
  state.UpsertNode(GpuNode("n2"));
  state.DeleteNode("n1");
  state.Assume("uid-p3", "n2", test::Res({{"nvidia.com/gpu", "1"}}));
  const ClusterSnapshot after = state.Snapshot();

  ExpectNode(before, {.name = "n1", .gpus = 2, .pods = 1, .bound = 1});
  ExpectNode(before, {.name = "n2", .present = false});
  EXPECT_EQ(before.node_count(), 1u);
  ExpectNode(after, {.name = "n1", .known = false, .gpus = 6, .pods = 2, .bound = 2});
  ExpectNode(after, {.name = "n2", .gpus = 1, .pods = 1, .assumed = 1});
  EXPECT_EQ(after.node_count(), 1u);
  EXPECT_GT(after.generation(), before.generation());
  EXPECT_EQ(after.time(), clock.Now());
}

// kubelet (kwok) renews every node's status: a heartbeat alone must not make
// a new generation (the gang controller plans a pass per generation), while
// any change a decision reads must.
TEST(ClusterStateTest, NodeHeartbeatsKeepTheGeneration) {
  const Time t0 = Time::FromUnixSeconds(1'800'000'000);
  auto heartbeat = [](Node node, Time at, std::string rv) {
    for (Condition& c : node.conditions) c.last_heartbeat_time = at;
    node.meta.resource_version = std::move(rv);
    return node;
  };
  const Node base = heartbeat(GpuNode("n1"), t0, "10");
  const struct {
    std::string name;
    Node next;
    bool new_generation;
  } cases[] = {
      {"heartbeat only", heartbeat(base, t0 + std::chrono::seconds(40), "11"), false},
      {"the same node again", base, false},
      {"not ready",
       heartbeat(MakeNode("n1").Cpu("64").Memory("512Gi").Gpu(8).Ready(false), t0, "11"), true},
      {"fewer GPUs", heartbeat(GpuNode("n1", 4), t0, "11"), true},
      {"a label",
       heartbeat(MakeNode("n1").Cpu("64").Memory("512Gi").Gpu(8).Label("rack", "r1"), t0, "11"),
       true},
      {"cordoned",
       heartbeat(MakeNode("n1").Cpu("64").Memory("512Gi").Gpu(8).Unschedulable(), t0, "11"), true},
      {"a taint",
       heartbeat(MakeNode("n1").Cpu("64").Memory("512Gi").Gpu(8).Taint("k", "v"), t0, "11"), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ClusterState state(clock);
    state.UpsertNode(base);
    const ClusterSnapshot before = state.Snapshot();
    state.UpsertNode(c.next);
    const ClusterSnapshot after = state.Snapshot();
    EXPECT_EQ(after.generation() != before.generation(), c.new_generation);
    const NodeInfo* info = after.FindNode("n1");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->node->IsReady(), c.next.IsReady());
    EXPECT_EQ(info->allocatable, c.next.allocatable);
  }
}

TEST(ClusterStateTest, NodeUpdatesReplaceAllocatable) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertPod(Bound("p1", "n1", 2));
  EXPECT_TRUE(state.FindNode("n1")->allocatable.empty()) << "no Node object yet";
  state.UpsertNode(GpuNode("n1", 8));
  EXPECT_EQ(state.FindNode("n1")->allocatable.gpus(), 8);
  EXPECT_EQ(state.FindNode("n1")->Free(kNvidiaGpu), 6 * kMilliPerGpu);
  state.UpsertNode(GpuNode("n1", 4));  // a GPU went bad: the device plugin reports fewer
  EXPECT_EQ(state.FindNode("n1")->Free(kNvidiaGpu), 2 * kMilliPerGpu);
  state.DeleteNode("n1");
  EXPECT_TRUE(state.FindNode("n1")->allocatable.empty());
  EXPECT_EQ(state.FindNode("n1")->Free(kNvidiaGpu), -2 * kMilliPerGpu) << "its pods still count";
}

TEST(ClusterStateTest, ForEachNodeVisitsEveryEntryOnce) {
  FakeClock clock;
  ClusterState state(clock);
  for (int i = 0; i < 50; ++i) state.UpsertNode(GpuNode("n" + std::to_string(i)));
  for (int i = 0; i < 50; i += 2) state.DeleteNode("n" + std::to_string(i));        // frees slots
  for (int i = 0; i < 10; ++i) state.UpsertNode(GpuNode("m" + std::to_string(i)));  // reuses
  state.UpsertPod(Bound("p", "ghost", 1));  // an entry without a Node object

  std::multiset<std::string> seen;
  const ClusterSnapshot snapshot = state.Snapshot();
  snapshot.ForEachNode([&](const NodeInfo& info) { seen.insert(info.name); });
  EXPECT_EQ(seen.size(), 25u + 10u + 1u);
  EXPECT_EQ(snapshot.node_count(), 35u);
  EXPECT_EQ(seen.count("n1"), 1u);
  EXPECT_EQ(seen.count("n0"), 0u);
  EXPECT_EQ(seen.count("m9"), 1u);
  EXPECT_EQ(seen.count("ghost"), 1u);
  ASSERT_NE(snapshot.FindNode("m9"), nullptr);
  EXPECT_EQ(snapshot.FindNode("m9")->name, "m9");
}

TEST(ClusterStateTest, PodsWithoutUidAreIgnored) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertPod(Bound("p1", "n1", 4).Uid(""));
  EXPECT_EQ(state.pod_count(), 0u);
  EXPECT_EQ(state.Snapshot().FindNode("n1"), nullptr);
}

// Random event sequences: the incremental accounting always equals a
// recomputation, and once every pod and node is gone nothing is left.
TEST(ClusterStateTest, RandomEventsKeepAccountingExact) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    FakeClock clock;
    ClusterState state(clock, {.assume_ttl = kTtl});
    const std::vector<std::string> phases = {"Pending", "Running", "Succeeded", "Failed"};
    for (int step = 0; step < 400; ++step) {
      const std::string node = "n" + std::to_string(pick(4));
      const std::string pod = "p" + std::to_string(pick(12));
      switch (pick(8)) {
        case 0:
          state.UpsertNode(GpuNode(node));
          break;
        case 1:
          state.DeleteNode(node);
          break;
        case 2:
        case 3: {
          test::PodBuilder b = MakePod(pod).Gpu(1 + pick(4)).Phase(phases[pick(4)]);
          if (pick(2) == 0) b.NodeName(node);
          state.UpsertPod(b);
          break;
        }
        case 4:
          state.DeletePod("uid-" + pod);
          break;
        case 5:
          state.Assume("uid-" + pod, node, test::Res({{"nvidia.com/gpu", "2"}}));
          break;
        case 6:
          state.Forget("uid-" + pod, pick(2) == 0 ? node : "");
          break;
        case 7:
          clock.Advance(std::chrono::seconds(pick(40)));
          state.Snapshot();
          break;
      }
      ASSERT_TRUE(state.CheckAccounting().ok())
          << "step " << step << ": " << state.CheckAccounting();
    }
    for (int i = 0; i < 12; ++i) state.DeletePod("uid-p" + std::to_string(i));
    for (int i = 0; i < 4; ++i) state.DeleteNode("n" + std::to_string(i));
    EXPECT_EQ(state.assumed_count(), 0u);
    EXPECT_EQ(state.node_count(), 0u);
    int entries = 0;
    state.Snapshot().ForEachNode([&](const NodeInfo&) { ++entries; });
    EXPECT_EQ(entries, 0);
  }
}

// FindEach's answers collected in order.
std::vector<const NodeInfo*> FindAll(const ClusterSnapshot& snapshot,
                                     const std::vector<std::string>& names) {
  std::vector<const NodeInfo*> nodes(names.size(), nullptr);
  const std::vector<std::string_view> views(names.begin(), names.end());
  snapshot.FindEach(views, [&nodes](size_t i, const NodeInfo* node) { nodes[i] = node; });
  return nodes;
}

// FindEach (the verbs' batch lookup) against FindNode, one name at a time,
// as the state changes under it; NodeInfos stay cache-line aligned (the
// batch lookup prefetches two lines per node, assuming it).
TEST(ClusterStateTest, FindEachAnswersAsFindNode) {
  FakeClock clock;
  ClusterState state(clock);
  std::mt19937 rng(7);
  std::vector<std::string> names;
  for (int i = 0; i < 400; ++i) names.push_back("n" + std::to_string(i));
  names.push_back("never-seen");
  names.push_back("");
  EXPECT_EQ(FindAll(ClusterSnapshot(), names), std::vector<const NodeInfo*>(names.size()));
  for (int step = 0; step < 2000; ++step) {
    const std::string node = "n" + std::to_string(rng() % 300);
    switch (rng() % 4) {
      case 0:
        state.UpsertNode(MakeNode(node).Gpu(8));
        break;
      case 1:
        state.DeleteNode(node);
        break;
      case 2:
        state.UpsertPod(Bound("p" + std::to_string(rng() % 500), node, 1));
        break;
      default:
        state.DeletePod("uid-p" + std::to_string(rng() % 500));
        break;
    }
    if (step % 250 != 0) continue;
    const ClusterSnapshot snapshot = state.Snapshot();
    const std::vector<const NodeInfo*> found = FindAll(snapshot, names);
    ASSERT_EQ(found.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      ASSERT_EQ(found[i], snapshot.FindNode(names[i])) << names[i];
      if (found[i] != nullptr) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(found[i]) % 64, 0u);
      }
    }
  }
}

TEST(ClusterStateTest, IndexedAmountsFollowTheResources) {
  FakeClock clock;
  // A duplicate and "" are ignored; the order given is the index order.
  ClusterState state(clock, {.indexed_resources = {"rdma/hca", "", "nvidia.com/gpu", "rdma/hca"}});
  state.UpsertNode(MakeNode("n1").Gpu(8).AllocatableAmount("rdma/hca", 4));
  state.UpsertPod(Bound("a", "n1", 3));
  state.UpsertPod(Bound("b", "n1", 2));
  state.DeletePod("uid-a");
  state.Assume("uid-c", "n1", Resources{{"nvidia.com/gpu", 1000}, {"rdma/hca", 1}});
  ASSERT_TRUE(state.CheckAccounting().ok()) << state.CheckAccounting();
  const ClusterSnapshot snapshot = state.Snapshot();
  struct Case {
    std::string resource;
    int index;
    int64_t allocatable;
    int64_t allocated;
  };
  const std::vector<Case> cases = {
      {"rdma/hca", 0, 4, 1}, {"nvidia.com/gpu", 1, 8000, 3000}, {"cpu", -1, 0, 0}};
  const NodeInfo* node = snapshot.FindNode("n1");
  ASSERT_NE(node, nullptr);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource);
    ASSERT_EQ(snapshot.IndexOf(c.resource), c.index);
    if (c.index < 0) continue;
    EXPECT_EQ(node->indexed_allocatable[static_cast<size_t>(c.index)], c.allocatable);
    EXPECT_EQ(node->indexed_allocated[static_cast<size_t>(c.index)], c.allocated);
  }
  EXPECT_EQ(ClusterSnapshot().IndexOf("nvidia.com/gpu"), -1);
}

}  // namespace
}  // namespace muster::extender
