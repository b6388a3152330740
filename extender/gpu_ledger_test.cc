// The GPU ledger end to end at the pure level: node topologies read from
// annotations and profiles, GPUs held by bound pods (restart-safe), the set
// bind chooses and writes into the Binding, prioritize's GPU score and the
// gang planner's GPU-aware node choice.
#include "extender/gpu_ledger.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/cluster_state.h"
#include "extender/pipeline.h"
#include "gang/testing/builders.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

const std::vector<std::string> kGpuOnly = {"nvidia.com/gpu"};

// 8 GPUs in two NVLink islands, interleaved so that the lowest indices are
// the wrong answer: {0,2,4,6} and {1,3,5,7}, SYS between them.
std::string TwoIslands(std::string_view uuid_prefix = "GPU-n1-") {
  std::string gpus, link;
  for (int i = 0; i < 8; ++i) {
    gpus += (i ? "," : "") + std::string(R"({"i":)") + std::to_string(i) + R"(,"uuid":")" +
            std::string(uuid_prefix) + std::to_string(i) + R"(","numa":)" + std::to_string(i % 2) +
            "}";
    link += i ? ",[" : "[";
    for (int j = 0; j < 8; ++j) {
      link += j ? "," : "";
      link += i == j ? R"("X")" : (i % 2 == j % 2 ? R"("NV4")" : R"("SYS")");
    }
    link += "]";
  }
  return R"({"v":1,"gpus":[)" + gpus + R"(],"link":[)" + link + "]}";
}

Node IslandNode(const std::string& name) {
  return MakeNode(name).Gpu(8).Cpu("64").Pods(110).Annotation(kAnnotationGpuTopology,
                                                              TwoIslands("GPU-" + name + "-"));
}

Pod BoundPod(const std::string& uid, const std::string& node, int gpus, std::string_view ids) {
  return MakePod(uid).Uid(uid).Namespace("ml").Gpu(gpus).NodeName(node).Annotation(
      kAnnotationGpuIds, ids);
}

TEST(GpuIdsTest, ParseAndFormat) {
  struct Case {
    std::string text;
    std::optional<GpuMask> want;  // nothing: refused
  };
  const std::vector<Case> cases = {
      {"0,2,4,6", 0b01010101}, {"7", 0b10000000},     {"15,0", 0x8001},     {"", std::nullopt},
      {"0,", std::nullopt},    {"1,1", std::nullopt}, {"16", std::nullopt}, {"-1", std::nullopt},
      {"a", std::nullopt},     {" 1", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<GpuMask> got = ParseGpuIds(c.text);
    if (!c.want) {
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.status().message().find("muster.io/gpu-ids"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, *c.want);
  }
  EXPECT_EQ(FormatGpuIds(0b01010101), "0,2,4,6");
  const auto cards = [](std::vector<std::string> uuids) {
    std::vector<GpuCard> out;
    for (std::string& uuid : uuids) out.push_back(GpuCard{.uuid = std::move(uuid)});
    return out;
  };
  EXPECT_EQ(FormatGpuUuids(0b101, cards({"GPU-a", "GPU-b", "GPU-c"})), "GPU-a,GPU-c");
  EXPECT_EQ(FormatGpuUuids(0b101, cards({"GPU-a", "GPU-b", ""})), "") << "an unknown UUID: none";
}

TEST(GpuTopologiesTest, WhereANodesTopologyComesFrom) {
  GpuTopologySpec pcie;
  for (int i = 0; i < 2; ++i) pcie.gpus.push_back({.index = i});
  pcie.link = {{"X", "PIX"}, {"PIX", "X"}};
  GpuTopologies topologies(GpuProfiles{{"Fake-GPU/2", pcie}});
  struct Case {
    std::string name;
    Node node;
    GpuTopologySource want;
    std::string problem;  // part of it
  };
  const std::vector<Case> cases = {
      {"annotation", IslandNode("a"), GpuTopologySource::kAnnotation, ""},
      {"profile by GPU model",
       MakeNode("p").Gpu(2).Label(kLabelGpuProduct, "Fake-GPU").Label(kLabelGpuCount, "2"),
       GpuTopologySource::kProfile, ""},
      {"no annotation, unknown model",
       MakeNode("u").Gpu(2).Label(kLabelGpuProduct, "Other").Label(kLabelGpuCount, "2"),
       GpuTopologySource::kNone, ""},
      {"not JSON", MakeNode("j").Annotation(kAnnotationGpuTopology, "{"),
       GpuTopologySource::kInvalid, "decode muster.io/gpu-topology"},
      {"a field of the wrong type",
       MakeNode("t").Annotation(kAnnotationGpuTopology, R"({"v":1,"gpus":[{"i":0,"numa":"x"}]})"),
       GpuTopologySource::kInvalid, "gpus[0].numa"},
      {"an asymmetric matrix (the annotation wins over the profile)",
       MakeNode("s")
           .Label(kLabelGpuProduct, "Fake-GPU")
           .Label(kLabelGpuCount, "2")
           .Annotation(kAnnotationGpuTopology,
                       R"({"v":1,"gpus":[{"i":0},{"i":1}],"link":[["X","NV1"],["PIX","X"]]})"),
       GpuTopologySource::kInvalid, "symmetric"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const NodeGpus gpus = topologies.Resolve(c.node);
    EXPECT_EQ(gpus.source, c.want);
    EXPECT_EQ(gpus.index() != nullptr,
              c.want == GpuTopologySource::kAnnotation || c.want == GpuTopologySource::kProfile);
    EXPECT_NE(gpus.problem.find(c.problem), std::string::npos) << gpus.problem;
  }
}

TEST(GpuTopologiesTest, NodesOfOneModelShareTheirTablesButNotTheirUuids) {
  GpuTopologies topologies;
  const NodeGpus a = topologies.Resolve(IslandNode("a"));
  const NodeGpus b = topologies.Resolve(IslandNode("b"));
  EXPECT_EQ(a.index(), b.index());
  EXPECT_EQ((*a.cards)[3].uuid, "GPU-a-3");
  EXPECT_EQ((*b.cards)[3].uuid, "GPU-b-3");
}

TEST(GpuProfilesTest, ABadProfileIsRefusedNamingItsKey) {
  StatusOr<GpuProfiles> ok = ParseGpuProfiles(R"({"A100/8": )" + TwoIslands() + "}");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->count("A100/8"), 1u);
  StatusOr<GpuProfiles> bad = ParseGpuProfiles(
      R"({"H100/2": {"v":1,"gpus":[{"i":0},{"i":1}],"link":[["X","NV"],["NV","X"]]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("H100/2"), std::string::npos) << bad.status();
}

// ---- the ledger in the cache.

TEST(GpuLedgerTest, BoundPodsHoldTheirGpusAndARestartRebuildsThem) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertNode(IslandNode("n1"));
  state.UpsertPod(BoundPod("p1", "n1", 2, "0,2"));
  state.UpsertPod(BoundPod("p2", "n1", 1, "5"));
  state.UpsertPod(MakePod("p3").Uid("p3").Gpu(1).NodeName("n1"));  // named no GPUs
  EXPECT_EQ(state.FindNode("n1")->gpu_holds.Held(), 0b100101u);
  EXPECT_TRUE(state.CheckAccounting().ok()) << state.CheckAccounting();
  state.DeletePod("p1");
  EXPECT_EQ(state.FindNode("n1")->gpu_holds.Held(), 0b100000u);
  EXPECT_TRUE(state.CheckAccounting().ok()) << state.CheckAccounting();
  // A restart is a fresh cache fed the same objects, in any order.
  ClusterState restarted(clock);
  restarted.UpsertPod(BoundPod("p2", "n1", 1, "5"));
  restarted.UpsertNode(IslandNode("n1"));
  EXPECT_EQ(restarted.FindNode("n1")->gpu_holds.Held(), 0b100000u);
  EXPECT_EQ(restarted.FindNode("n1")->Gpus().source, GpuTopologySource::kAnnotation);
}

TEST(GpuLedgerTest, CountsNodesBySourceAsAnnotationsChange) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertNode(IslandNode("n1"));
  state.UpsertNode(MakeNode("n2").Gpu(8));
  const auto count = [&](GpuTopologySource s) {
    return state.gpu_topology_nodes()[static_cast<size_t>(s)];
  };
  EXPECT_EQ(count(GpuTopologySource::kAnnotation), 1u);
  EXPECT_EQ(count(GpuTopologySource::kNone), 1u);
  state.UpsertNode(MakeNode("n1").Gpu(8).Annotation(kAnnotationGpuTopology, "[]"));
  EXPECT_EQ(count(GpuTopologySource::kAnnotation), 0u);
  EXPECT_EQ(count(GpuTopologySource::kInvalid), 1u);
  EXPECT_EQ(state.FindNode("n1")->Gpus().index(), nullptr) << "invalid: topology-unknown";
  state.DeleteNode("n1");
  EXPECT_EQ(count(GpuTopologySource::kInvalid), 0u);
}

// What the muster_gpus* gauges show an operator: GPUs allocated and free,
// the free ones stranded (no free partner on their node's best link), and
// nodes by use. One table row per node state.
TEST(GpuUsageTest, SumsNodesAndCountsStrandedGpus) {
  struct Case {
    std::string name;
    Node node;
    std::vector<Pod> pods;
    GpuUsage want;
  };
  const std::vector<Case> cases = {
      {"idle island node: nothing stranded", IslandNode("n1"), {}, {.free = 8, .idle_nodes = 1}},
      {"3 of one island held: its last GPU is stranded",
       IslandNode("n1"),
       {BoundPod("a", "n1", 3, "0,2,4")},
       {.allocated = 3, .free = 5, .stranded = 1, .partial_nodes = 1}},
      {"one GPU left on each island: both stranded",
       IslandNode("n1"),
       {BoundPod("a", "n1", 3, "0,2,4"), BoundPod("b", "n1", 3, "1,3,5")},
       {.allocated = 6, .free = 2, .stranded = 2, .partial_nodes = 1}},
      {"full node",
       IslandNode("n1"),
       {BoundPod("a", "n1", 8, "0,1,2,3,4,5,6,7")},
       {.allocated = 8, .full_nodes = 1}},
      {"no topology: counts only",
       MakeNode("n1").Gpu(4),
       {MakePod("a").Uid("a").Gpu(1).NodeName("n1")},
       {.allocated = 1, .free = 3, .partial_nodes = 1}},
      {"bound by count, GPUs unnamed: stranded never exceeds free",
       IslandNode("n1"),
       {MakePod("a").Uid("a").Gpu(7).NodeName("n1")},
       {.allocated = 7, .free = 1, .stranded = 0, .partial_nodes = 1}},
      {"CPU-only node: not counted", MakeNode("n1").Cpu("64"), {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ClusterState state(clock);
    state.UpsertNode(c.node);
    for (const Pod& p : c.pods) state.UpsertPod(p);
    GpuUsage got;
    state.Snapshot().ForEachNode([&got](const NodeInfo& n) { got.Add(n); });
    EXPECT_EQ(got.allocated, c.want.allocated * kMilliPerGpu) << "thousandths";
    EXPECT_EQ(got.free, c.want.free * kMilliPerGpu);
    EXPECT_EQ(got.stranded, c.want.stranded);
    EXPECT_EQ(got.idle_nodes, c.want.idle_nodes);
    EXPECT_EQ(got.partial_nodes, c.want.partial_nodes);
    EXPECT_EQ(got.full_nodes, c.want.full_nodes);
  }
}

// A deleted node's GPUs are no longer the cluster's: the pods still bound
// there (until the pod garbage collector removes them) must not keep its
// GPUs in muster_gpus_shared.
TEST(GpuUsageTest, ADeletedNodesSharedGpusLeaveTheCount) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertNode(MakeNode("n1").Gpu(4).Label("nvidia.com/gpu.memory", "81920"));
  state.UpsertPod(MakePod("a")
                      .Uid("a")
                      .NodeName("n1")
                      .Annotation(kAnnotationGpuFraction, "0.5")
                      .Annotation("muster.io/gpu-shares", "0:500:40960"));
  const auto usage = [&state] {
    GpuUsage got;
    state.Snapshot().ForEachNode([&got](const NodeInfo& n) { got.Add(n); });
    return got;
  };
  EXPECT_EQ(usage().shared_gpus, 1);
  EXPECT_EQ(usage().partly_used_gpus, 1);
  state.DeleteNode("n1");
  EXPECT_EQ(usage().shared_gpus, 0);
  EXPECT_EQ(usage().partly_used_gpus, 0);
  EXPECT_EQ(usage().shared_compute, 0);
}

// ---- bind.

struct GpuCluster {
  FakeClock clock;
  ClusterCache cache{clock};
  Pipeline pipeline{PolicyConfig{}, &cache};

  std::string BindBody(const std::string& uid, const std::string& node = "n1") {
    return R"({"PodName":")" + uid + R"(","PodNamespace":"ml","PodUID":")" + uid + R"(","Node":")" +
           node + R"("})";
  }
  void Pending(const std::string& uid, int gpus) {
    cache.UpsertPod(MakePod(uid).Uid(uid).Namespace("ml").Gpu(gpus));
  }
  // Reserves and "posts" the bind; the annotations it would write.
  std::map<std::string, std::string> Bind(const std::string& uid, const std::string& node = "n1") {
    const BindPlan plan = pipeline.ReserveBind(BindBody(uid, node));
    EXPECT_EQ(plan.action, BindAction::kPost) << plan.error;
    return plan.binding.meta.annotations;
  }
};

TEST(GpuBindTest, AFourGpuPodGetsOneWholeIslandAndTheNextOneTheOther) {
  GpuCluster c;
  c.cache.UpsertNode(IslandNode("n1"));
  c.Pending("a", 4);
  c.Pending("b", 4);
  const auto a = c.Bind("a");
  EXPECT_EQ(a.at("muster.io/gpu-ids"), "0,2,4,6");
  EXPECT_EQ(a.at("muster.io/gpu-uuids"), "GPU-n1-0,GPU-n1-2,GPU-n1-4,GPU-n1-6");
  EXPECT_EQ(c.Bind("b").at("muster.io/gpu-ids"), "1,3,5,7") << "the reservation holds island A";
}

TEST(GpuBindTest, ARestartedExtenderKnowsWhichGpusAreTaken) {
  GpuCluster c;
  c.cache.UpsertNode(IslandNode("n1"));
  c.cache.UpsertPod(BoundPod("old", "n1", 4, "1,3,5,7"));  // bound before the restart
  c.Pending("new", 4);
  EXPECT_EQ(c.Bind("new").at("muster.io/gpu-ids"), "0,2,4,6");
}

TEST(GpuBindTest, SingleGpusFillABrokenIslandFirst) {
  GpuCluster c;
  c.cache.UpsertNode(IslandNode("n1"));
  c.cache.UpsertPod(BoundPod("old", "n1", 1, "0"));
  // Island A has 3 free: a 1-GPU pod that took from island B would leave no
  // free 4-GPU island at all.
  for (const std::string uid : {"s1", "s2", "s3"}) {
    c.Pending(uid, 1);
    const std::string ids = c.Bind(uid).at("muster.io/gpu-ids");
    EXPECT_EQ(std::stoi(ids) % 2, 0) << uid << " took GPU " << ids;
  }
  c.Pending("four", 4);
  EXPECT_EQ(c.Bind("four").at("muster.io/gpu-ids"), "1,3,5,7");
}

TEST(GpuBindTest, NodesOfUnknownTopologyBindByCountWithoutGpuIds) {
  GpuCluster c;
  c.cache.UpsertNode(MakeNode("n1").Gpu(8).Annotation(kAnnotationGpuTopology, "not json"));
  c.Pending("a", 4);
  const BindPlan plan = c.pipeline.ReserveBind(c.BindBody("a"));
  ASSERT_EQ(plan.action, BindAction::kPost) << plan.error;
  EXPECT_EQ(plan.binding.meta.annotations.count("muster.io/gpu-ids"), 0u);
  EXPECT_EQ(plan.gpu_set, "unchosen");
  EXPECT_EQ(c.pipeline.FinishBind(plan, Status::Ok()).gpu_set, "unchosen");
}

// ---- prioritize and the gang planner.

std::vector<int64_t> GpuScores(ClusterState& state, int gpus,
                               const std::vector<std::string>& names) {
  const ClusterSnapshot snapshot = state.Snapshot();
  const PodDemand demand{.request = Resources{{"nvidia.com/gpu", gpus * kMilliPerGpu}}};
  std::vector<const NodeInfo*> nodes;
  for (const std::string& name : names) nodes.push_back(snapshot.FindNode(name));
  return ScoreGpuNodes(demand, nodes, std::vector<int64_t>(names.size(), 0));
}

TEST(GpuScoreTest, TheBestLinkFirstThenTheFullestNodeThenTheFewestBrokenGroups) {
  FakeClock clock;
  ClusterState state(clock);
  for (const std::string name : {"whole", "island-b-free", "two-per-island", "pair-free"}) {
    state.UpsertNode(IslandNode(name));
  }
  state.UpsertPod(BoundPod("x1", "island-b-free", 4, "0,2,4,6"));
  state.UpsertPod(BoundPod("x2", "two-per-island", 4, "0,1,2,3"));
  state.UpsertPod(BoundPod("x3", "pair-free", 6, "0,1,2,3,5,7"));
  const std::vector<std::string> names = {"whole", "island-b-free", "two-per-island", "pair-free"};
  // 4 GPUs: island-b-free (NVLink, full after) > whole (NVLink) > two-per-island
  // (SYS only); pair-free cannot hold it.
  const std::vector<int64_t> four = GpuScores(state, 4, names);
  EXPECT_GT(four[1], four[0]);
  EXPECT_GT(four[0], four[2]);
  EXPECT_LE(four[2], 2);
  EXPECT_EQ(four[3], 0);
  // 2 GPUs: the node with exactly an NVLink pair free first.
  const std::vector<int64_t> two = GpuScores(state, 2, names);
  EXPECT_EQ(two[3], 10);
  EXPECT_GT(two[3], two[1]);
  EXPECT_GT(two[1], two[0]);
}

// kube-scheduler sends hundreds of candidates, some not in the cache yet:
// each node scores as it does in a short list, and an unknown one scores 0
// (its lookup is null) wherever it sits among them.
TEST(GpuScoreTest, ALongListWithUnknownNodesScoresEachNodeAsAShortOne) {
  FakeClock clock;
  ClusterState state(clock);
  const std::vector<std::string> known = {"whole", "island-b-free", "two-per-island"};
  for (const std::string& name : known) state.UpsertNode(IslandNode(name));
  state.UpsertPod(BoundPod("x1", "island-b-free", 4, "0,2,4,6"));
  state.UpsertPod(BoundPod("x2", "two-per-island", 4, "0,1,2,3"));
  const std::vector<int64_t> alone = GpuScores(state, 4, known);
  std::vector<std::string> names;
  for (int round = 0; round < 20; ++round) {
    names.push_back("unknown-" + std::to_string(round));
    for (const std::string& name : known) names.push_back(name);
  }
  const std::vector<int64_t> scores = GpuScores(state, 4, names);
  ASSERT_EQ(scores.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t k = i % (known.size() + 1);
    EXPECT_EQ(scores[i], k == 0 ? 0 : alone[k - 1]) << names[i] << " at " << i;
  }
}

TEST(GpuGangPlanTest, MembersGoWhereTheirGpuSetIsBestAndTheirGpusAreReserved) {
  FakeClock clock;
  ClusterState state(clock);
  state.UpsertNode(IslandNode("a-split"));  // 4 free, 2 per island: best fit by count alone
  state.UpsertNode(IslandNode("b-whole"));
  state.UpsertPod(BoundPod("x", "a-split", 4, "0,1,2,3"));
  gang::ClusterView view;
  state.Snapshot().ForEachNode([&](const NodeInfo& info) {
    view.nodes.push_back(gang::NodeView{.node = info.node,
                                        .free = info.allocatable - info.allocated,
                                        .gpu_layout = info.Gpus().layout,
                                        .free_gpus = FreeGpus(info.Gpus(), info.gpu_holds)});
  });
  std::ranges::sort(view.nodes, {}, [](const gang::NodeView& n) { return n.name(); });
  const gang::Gang g = gang::test::MakeGang("train")
                           .MinMember(2)
                           .Pending(MakePod("train-0").Uid("t0").Gpu(4))
                           .Pending(MakePod("train-1").Uid("t1").Gpu(4));
  const auto planned = gang::PlanGang(g, view);
  ASSERT_TRUE(std::holds_alternative<gang::GangPlan>(planned));
  const gang::GangPlan& plan = std::get<gang::GangPlan>(planned);
  ASSERT_EQ(plan.reserve.size(), 2u);
  EXPECT_EQ(plan.reserve[0].node, "b-whole");
  EXPECT_EQ(plan.reserve[1].node, "b-whole");
  EXPECT_EQ(plan.reserve[0].gpus.whole | plan.reserve[1].gpus.whole, 0xFFu);
  EXPECT_EQ(plan.reserve[0].gpus.whole & plan.reserve[1].gpus.whole, 0u);
}

}  // namespace
}  // namespace muster::extender
