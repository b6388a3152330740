#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "extender/pipeline.h"
#include "extender/testing/golden.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

NodeInfo GpuInfo(int64_t gpus, int64_t used, int64_t hca = 0, int64_t hca_used = 0) {
  Node node = MakeNode("n1").Gpu(gpus);
  if (hca > 0) node = MakeNode("n1").Gpu(gpus).AllocatableAmount("rdma/hca", hca);
  Resources allocated{{"nvidia.com/gpu", used * kMilliPerGpu}};
  if (hca_used > 0) allocated.Set("rdma/hca", hca_used);
  return NodeInfo{.name = "n1",
                  .node = std::make_shared<const Node>(node),
                  .allocatable = node.allocatable,
                  .allocated = allocated};
}

TEST(ScoreNodeTest, BinpackAndSpread) {
  const Placement own{.node = "n1", .resources = {{"nvidia.com/gpu", 4000}, {"pods", 1}}};
  struct Case {
    std::string name;
    PodDemand demand;
    std::optional<NodeInfo> node;
    int64_t binpack;
    int64_t spread;
  };
  const std::vector<Case> cases = {
      {"1 of 8 on an empty node", {.request = {{"nvidia.com/gpu", 1000}}}, GpuInfo(8, 0), 1, 9},
      {"fills the node", {.request = {{"nvidia.com/gpu", 4000}}}, GpuInfo(8, 4), 10, 0},
      {"half used, one more", {.request = {{"nvidia.com/gpu", 1000}}}, GpuInfo(8, 4), 6, 4},
      {"8 of 8 on an empty node", {.request = {{"nvidia.com/gpu", 8000}}}, GpuInfo(8, 0), 10, 0},
      {"does not fit", {.request = {{"nvidia.com/gpu", 4000}}}, GpuInfo(8, 6), 0, 0},
      {"unknown node", {.request = {{"nvidia.com/gpu", 1000}}}, std::nullopt, 0, 0},
      {"no managed demand: neutral", {}, GpuInfo(8, 4), 0, 0},
      {"own placement not counted twice",
       {.request = {{"nvidia.com/gpu", 4000}}, .own = own},
       GpuInfo(8, 8),
       10,
       0},
      {"mean over the requested resources",
       {.request = {{"nvidia.com/gpu", 4000}, {"rdma/hca", 1}}},
       GpuInfo(8, 4, 2, 0),
       8,
       3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const NodeInfo* node = c.node.has_value() ? &*c.node : nullptr;
    EXPECT_EQ(ScoreNode(c.demand, node, ScoreStrategy::kBinpack), c.binpack);
    EXPECT_EQ(ScoreNode(c.demand, node, ScoreStrategy::kSpread), c.spread);
  }
}

void AddCluster(fixture::TestCluster& cluster) {
  for (const char* name : {"free", "half", "full"}) cluster.Add(MakeNode(name).Gpu(8));
  cluster.Add(MakePod("half-user").Gpu(4).NodeName("half").Phase("Running"));
  cluster.Add(MakePod("full-user").Gpu(8).NodeName("full").Phase("Running"));
}

kube::HostPriorityList DecodeReply(const VerbReply& reply) {
  EXPECT_EQ(reply.http_status, 200);
  StatusOr<kube::HostPriorityList> list = kube::DecodeHostPriorityList(reply.body);
  EXPECT_TRUE(list.ok()) << list.status() << "\n" << reply.body;
  return list.ok() ? *list : kube::HostPriorityList{};
}

TEST(PrioritizeTest, ScoresEveryNameSentInOrder) {
  struct Case {
    std::string name;
    ScoreStrategy strategy;
    Pod pod;
    kube::HostPriorityList want;
  };
  const std::vector<Case> cases = {
      {"binpack prefers the partly used node",
       ScoreStrategy::kBinpack,
       MakePod("p").Gpu(2),
       {{"full", 0}, {"free", 3}, {"gone", 0}, {"half", 8}}},
      {"spread prefers the empty node",
       ScoreStrategy::kSpread,
       MakePod("p").Gpu(2),
       {{"full", 0}, {"free", 8}, {"gone", 0}, {"half", 3}}},
      {"a pod without GPUs is neutral",
       ScoreStrategy::kBinpack,
       MakePod("p").Cpu("1"),
       {{"full", 0}, {"free", 0}, {"gone", 0}, {"half", 0}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fixture::TestCluster cluster({.score_strategy = c.strategy});
    AddCluster(cluster);
    const VerbReply reply =
        cluster.pipeline.Prioritize(fixture::FilterArgs(c.pod, {"full", "free", "gone", "half"}));
    EXPECT_EQ(reply.outcome, ReplyOutcome::kOk);
    EXPECT_EQ(DecodeReply(reply), c.want);
  }
}

TEST(PrioritizeTest, ANameThatNeedsEscapingComesBackAsSent) {
  fixture::TestCluster cluster;
  AddCluster(cluster);
  const std::string odd = "gone \"quoted\" \\ \n";
  const VerbReply reply =
      cluster.pipeline.Prioritize(fixture::FilterArgs(MakePod("p").Gpu(2), {"free", odd}));
  EXPECT_EQ(DecodeReply(reply), (kube::HostPriorityList{{"free", 3}, {odd, 0}}));
}

TEST(PrioritizeTest, NonCacheModeScoresTheNodesSent) {
  fixture::TestCluster cluster;
  AddCluster(cluster);
  const VerbReply reply = cluster.pipeline.Prioritize(
      fixture::FilterArgsWithNodes(MakePod("p").Gpu(4), {MakeNode("half"), MakeNode("free")}));
  EXPECT_EQ(DecodeReply(reply), (kube::HostPriorityList{{"half", 10}, {"free", 5}}));
}

TEST(PrioritizeTest, ABodyThatDoesNotDecodeIsABadRequest) {
  fixture::TestCluster cluster;
  const VerbReply reply = cluster.pipeline.Prioritize(R"({"Pod": [], "NodeNames": ["a"]})");
  EXPECT_EQ(reply.http_status, 400) << "prioritize has no Error field";
  EXPECT_EQ(reply.outcome, ReplyOutcome::kBadRequest);
  EXPECT_EQ(reply.content_type, "text/plain; charset=utf-8");
  EXPECT_TRUE(reply.body.starts_with("muster: decode ExtenderArgs: Pod: ")) << reply.body;
}

}  // namespace
}  // namespace muster::extender
