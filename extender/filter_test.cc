#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "extender/pipeline.h"
#include "extender/testing/golden.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

NodeInfo Info(const Node& node, Resources allocated = {}) {
  return NodeInfo{.name = node.meta.name,
                  .node = std::make_shared<const Node>(node),
                  .allocatable = node.allocatable,
                  .allocated = std::move(allocated)};
}

const Resources kGpus4{{"nvidia.com/gpu", 4000}};
const Placement kOwnOnN1{.node = "n1", .resources = {{"nvidia.com/gpu", 4000}, {"pods", 1}}};

struct FitCase {
  std::string name;
  PodDemand demand;
  std::optional<NodeInfo> node;  // nullopt: unknown to the cache
  NodeVerdict want;
};

const std::vector<FitCase> kFitCases = {
    {"unknown node",
     {.request = kGpus4},
     std::nullopt,
     {Verdict::kUnresolvable, kReasonNodeUnknown, "muster: node not in cache yet"}},
    {"entry without a Node object",
     {.request = kGpus4},
     NodeInfo{.name = "n1", .allocated = kGpus4, .bound_pods = 1},
     {Verdict::kUnresolvable, kReasonNodeUnknown, "muster: node not in cache yet"}},
    {"fits an empty node", {.request = kGpus4}, Info(MakeNode("n1").Gpu(8)), {}},
    {"fits exactly what is free",
     {.request = kGpus4},
     Info(MakeNode("n1").Gpu(8), {{"nvidia.com/gpu", 4000}}),
     {}},
    {"not enough free now",
     {.request = kGpus4},
     Info(MakeNode("n1").Gpu(8), {{"nvidia.com/gpu", 6000}}),
     {Verdict::kUnschedulable, kReasonInsufficient,
      "muster: needs 4 nvidia.com/gpu (2 free of 8)"}},
    {"over-committed node shows 0 free",
     {.request = kGpus4},
     Info(MakeNode("n1").Gpu(8), {{"nvidia.com/gpu", 10000}}),
     {Verdict::kUnschedulable, kReasonInsufficient,
      "muster: needs 4 nvidia.com/gpu (0 free of 8)"}},
    {"more than the node has",
     {.request = Resources{{"nvidia.com/gpu", 16000}}},
     Info(MakeNode("n1").Gpu(8)),
     {Verdict::kUnresolvable, kReasonExceedsNode, "muster: needs 16 nvidia.com/gpu (node has 8)"}},
    {"a node without GPUs",
     {.request = kGpus4},
     Info(MakeNode("cpu-1").Cpu("64")),
     {Verdict::kUnresolvable, kReasonExceedsNode, "muster: needs 4 nvidia.com/gpu (node has 0)"}},
    {"no managed demand fits anywhere", {}, Info(MakeNode("cpu-1").Cpu("64")), {}},
    {"the pod's own placement is credited back",
     {.request = kGpus4, .own = kOwnOnN1},
     Info(MakeNode("n1").Gpu(8), {{"nvidia.com/gpu", 8000}}),
     {}},
    {"...on its own node only",
     {.request = kGpus4, .own = kOwnOnN1},
     Info(MakeNode("n2").Gpu(8), {{"nvidia.com/gpu", 8000}}),
     {Verdict::kUnschedulable, kReasonInsufficient,
      "muster: needs 4 nvidia.com/gpu (0 free of 8)"}},
    {"every short resource is named",
     {.request = Resources{{"nvidia.com/gpu", 4000}, {"rdma/hca", 2}}},
     Info(MakeNode("n1").Gpu(8).AllocatableAmount("rdma/hca", 2),
          {{"nvidia.com/gpu", 6000}, {"rdma/hca", 1}}),
     {Verdict::kUnschedulable, kReasonInsufficient,
      "muster: needs 4 nvidia.com/gpu (2 free of 8); needs 2 rdma/hca (1 free of 2)"}},
    {"too big wins over short now",
     {.request = Resources{{"nvidia.com/gpu", 4000}, {"rdma/hca", 4}}},
     Info(MakeNode("n1").Gpu(8).AllocatableAmount("rdma/hca", 2), {{"nvidia.com/gpu", 6000}}),
     {Verdict::kUnresolvable, kReasonExceedsNode, "muster: needs 4 rdma/hca (node has 2)"}},
    {"quantities read as Kubernetes writes them",
     {.request = test::Res({{"memory", "64Gi"}})},
     Info(MakeNode("n1").Memory("64Gi"), test::Res({{"memory", "32Gi"}})),
     {Verdict::kUnschedulable, kReasonInsufficient,
      "muster: needs 64Gi memory (32Gi free of 64Gi)"}},
};

TEST(FitOnNodeTest, VerdictsAndReasons) {
  for (const FitCase& c : kFitCases) {
    SCOPED_TRACE(c.name);
    const NodeInfo* node = c.node.has_value() ? &*c.node : nullptr;
    EXPECT_EQ(FitOnNode(c.demand, node), c.want);
    EXPECT_EQ(FitVerdictOnNode(c.demand, node), c.want.verdict);
  }
}

// The cache keeps some resources' amounts in flat arrays (DemandOf points
// the demand at them); fit decides exactly as when it searches the entries.
TEST(FitOnNodeTest, IndexedAndSearchedAmountsDecideAlike) {
  FakeClock clock;
  ClusterState state(clock, {.indexed_resources = {"nvidia.com/gpu", "rdma/hca"}});
  state.UpsertNode(MakeNode("free").Gpu(8).AllocatableAmount("rdma/hca", 2));
  state.UpsertNode(MakeNode("short").Gpu(8).AllocatableAmount("rdma/hca", 2));
  state.UpsertNode(MakeNode("small").Gpu(2).AllocatableAmount("rdma/hca", 2));
  state.UpsertPod(MakePod("user").Gpu(6).NodeName("short").Phase("Running"));
  state.UpsertPod(MakePod("me").Gpu(4).NodeName("short").Phase("Running"));
  const ClusterSnapshot snapshot = state.Snapshot("uid-me");
  const std::vector<std::string> managed = {"nvidia.com/gpu", "rdma/hca"};
  const std::vector<std::pair<std::string, Pod>> pods = {
      {"gpus only", MakePod("me").Gpu(4)},
      {"gpus and hcas", MakePod("me").Gpu(4).Request("rdma/hca", "1")},
      {"more hcas than any node has", MakePod("me").Gpu(1).Request("rdma/hca", "3")},
  };
  for (const auto& [name, pod] : pods) {
    SCOPED_TRACE(name);
    const PodDemand indexed = DemandOf(pod, managed, snapshot);
    ASSERT_EQ(indexed.indexed.size(), indexed.request.entries().size());
    PodDemand searched = indexed;
    searched.indexed.clear();
    for (const char* node_name : {"free", "short", "small", "unknown"}) {
      SCOPED_TRACE(node_name);
      const NodeInfo* node = snapshot.FindNode(node_name);
      EXPECT_EQ(FitOnNode(indexed, node), FitOnNode(searched, node));
      EXPECT_EQ(FitVerdictOnNode(indexed, node), FitVerdictOnNode(searched, node));
      EXPECT_EQ(ScoreNode(indexed, node, ScoreStrategy::kBinpack),
                ScoreNode(searched, node, ScoreStrategy::kBinpack));
    }
  }
}

// A cluster of four 8-GPU nodes in different states, one 4-GPU node, and a
// node kube-scheduler does not ask about.
void AddCluster(fixture::TestCluster& cluster) {
  for (const char* name : {"free", "half", "full", "other"}) {
    cluster.Add(MakeNode(name).Cpu("64").Gpu(8));
  }
  cluster.Add(MakeNode("small").Cpu("64").Gpu(4));
  cluster.Add(MakePod("half-user").Gpu(4).NodeName("half").Phase("Running"));
  cluster.Add(MakePod("full-user").Gpu(8).NodeName("full").Phase("Running"));
}

kube::ExtenderFilterResult DecodeReply(const VerbReply& reply) {
  EXPECT_EQ(reply.http_status, 200);
  StatusOr<kube::ExtenderFilterResult> result = kube::DecodeExtenderFilterResult(reply.body);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << reply.body;
  return result.ok() ? *result : kube::ExtenderFilterResult{};
}

TEST(FilterTest, DecidesOnTheCacheForTheNamesSent) {
  struct Case {
    std::string name;
    Pod pod;
    std::vector<std::string> sent;
    std::vector<std::string> want_names;
    kube::FailedNodesMap want_failed;
    kube::FailedNodesMap want_unresolvable;
  };
  const std::vector<Case> cases = {
      {"six GPUs",
       MakePod("p").Gpu(6),
       {"small", "full", "free", "gone", "half"},
       {"free"},
       {{"full", "muster: needs 6 nvidia.com/gpu (0 free of 8)"},
        {"half", "muster: needs 6 nvidia.com/gpu (4 free of 8)"}},
       {{"small", "muster: needs 6 nvidia.com/gpu (node has 4)"},
        {"gone", "muster: node not in cache yet"}}},
      {"four GPUs, order kept",
       MakePod("p").Gpu(4),
       {"small", "half", "free", "full"},
       {"small", "half", "free"},
       {{"full", "muster: needs 4 nvidia.com/gpu (0 free of 8)"}},
       {}},
      {"no GPUs: every known node",
       MakePod("p").Cpu("1"),
       {"full", "gone"},
       {"full"},
       {},
       {{"gone", "muster: node not in cache yet"}}},
      {"nothing sent", MakePod("p").Gpu(1), {}, {}, {}, {}},
      {"a name that needs escaping comes back as sent",
       MakePod("p").Gpu(4),
       {"free", "gone \"quoted\" \\ \n"},
       {"free"},
       {},
       {{"gone \"quoted\" \\ \n", "muster: node not in cache yet"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fixture::TestCluster cluster;
    AddCluster(cluster);
    const kube::ExtenderFilterResult result =
        DecodeReply(cluster.pipeline.Filter(fixture::FilterArgs(c.pod, c.sent)));
    EXPECT_EQ(result.node_names, c.want_names);
    EXPECT_EQ(result.nodes, std::nullopt) << "names in, names out";
    EXPECT_EQ(result.failed_nodes, c.want_failed);
    EXPECT_EQ(result.failed_and_unresolvable_nodes, c.want_unresolvable);
    EXPECT_EQ(result.error, "");
  }
}

TEST(FilterTest, CountsDecisionsByReason) {
  fixture::TestCluster cluster;
  AddCluster(cluster);
  const VerbReply reply = cluster.pipeline.Filter(
      fixture::FilterArgs(MakePod("p").Gpu(6), {"small", "full", "free", "gone", "half"}));
  EXPECT_EQ(reply.outcome, ReplyOutcome::kOk);
  EXPECT_EQ(reply.decisions, (DecisionCounts{{kReasonFits, 1},
                                             {kReasonInsufficient, 2},
                                             {kReasonExceedsNode, 1},
                                             {kReasonNodeUnknown, 1}}));
}

TEST(FilterTest, NonCacheModeEchoesTheNodesSentVerbatim) {
  fixture::TestCluster cluster;
  AddCluster(cluster);
  // The request's Node objects disagree with the cache: the cache decides.
  const std::vector<Node> sent = {MakeNode("full").Gpu(8).Label("zone", "a"),
                                  MakeNode("free").Gpu(1).Label("zone", "b"),
                                  MakeNode("gone").Gpu(8)};
  const std::string body = fixture::FilterArgsWithNodes(MakePod("p").Gpu(2), sent);
  const kube::ExtenderFilterResult result = DecodeReply(cluster.pipeline.Filter(body));

  EXPECT_EQ(result.node_names, std::nullopt) << "nodes in, nodes out";
  ASSERT_TRUE(result.nodes.has_value());
  ASSERT_EQ(result.nodes->size(), 1u);
  const StatusOr<kube::ExtenderArgs> request = kube::DecodeExtenderArgs(body);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ((*result.nodes)[0].raw_json, (*request->nodes)[1].raw_json)
      << "the passing node is the object kube-scheduler sent, byte for byte";
  EXPECT_EQ(result.failed_nodes,
            (kube::FailedNodesMap{{"full", "muster: needs 2 nvidia.com/gpu (0 free of 8)"}}));
  EXPECT_EQ(result.failed_and_unresolvable_nodes,
            (kube::FailedNodesMap{{"gone", "muster: node not in cache yet"}}));
}

TEST(FilterTest, ARetriedFilterDoesNotCountThePodAgainstItself) {
  fixture::TestCluster cluster;
  AddCluster(cluster);
  // p was reserved on "half" by a bind whose outcome kube-scheduler has not
  // seen yet: "half" is now full, but still right for p itself.
  cluster.With([](ClusterState& s) {
    s.Assume("uid-p", "half", Resources{{"nvidia.com/gpu", 4000}});
  });
  const std::vector<std::string> sent = {"half"};
  EXPECT_EQ(DecodeReply(cluster.pipeline.Filter(fixture::FilterArgs(MakePod("p").Gpu(4), sent)))
                .node_names,
            sent);
  EXPECT_EQ(DecodeReply(cluster.pipeline.Filter(fixture::FilterArgs(MakePod("q").Gpu(4), sent)))
                .failed_nodes,
            (kube::FailedNodesMap{{"half", "muster: needs 4 nvidia.com/gpu (0 free of 8)"}}));
}

TEST(FilterTest, ExtraManagedResourcesAreFitToo) {
  fixture::TestCluster cluster({.extra_managed_resources = {"rdma/hca"}});
  cluster.Add(MakeNode("ib").Gpu(8).AllocatableAmount("rdma/hca", 1));
  cluster.Add(MakeNode("eth").Gpu(8));
  const Pod pod = MakePod("p").Gpu(1).Request("rdma/hca", "1");
  const kube::ExtenderFilterResult result =
      DecodeReply(cluster.pipeline.Filter(fixture::FilterArgs(pod, {"ib", "eth"})));
  EXPECT_EQ(result.node_names, std::vector<std::string>{"ib"});
  EXPECT_EQ(result.failed_and_unresolvable_nodes,
            (kube::FailedNodesMap{{"eth", "muster: needs 1 rdma/hca (node has 0)"}}));
}

TEST(FilterTest, ABodyThatDoesNotDecodeFailsTheCycleReadably) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["a", )"},
      {"wrong type", R"({"Pod": {"metadata": {"name": 7}}, "NodeNames": []})"},
      {"neither form", R"({"Pod": {}, "Nodes": null, "NodeNames": null})"},
  };
  for (const auto& [name, body] : cases) {
    SCOPED_TRACE(name);
    fixture::TestCluster cluster;
    const VerbReply reply = cluster.pipeline.Filter(body);
    EXPECT_EQ(reply.outcome, ReplyOutcome::kBadRequest);
    EXPECT_EQ(reply.decisions, (DecisionCounts{{kReasonBadRequest, 1}}));
    const kube::ExtenderFilterResult result = DecodeReply(reply);
    EXPECT_TRUE(result.error.starts_with("muster: decode ExtenderArgs")) << result.error;
    EXPECT_EQ(result.node_names, std::nullopt);
    EXPECT_TRUE(result.failed_nodes.empty());
  }
}

}  // namespace
}  // namespace muster::extender
