#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "extender/pipeline.h"
#include "extender/testing/golden.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakePod;
using test::PodBuilder;
using VictimMap = std::map<std::string, kube::MetaVictims>;

kube::MetaVictims Meta(std::vector<std::string> uids, int64_t pdb = 0) {
  kube::MetaVictims m{.num_pdb_violations = pdb};
  for (std::string& uid : uids) m.pods.push_back({.uid = std::move(uid)});
  return m;
}

TEST(PreemptTest, ProposedVictimsInTheMetaForm) {
  const Pod preemptor = MakePod("hi").Priority(1000);
  struct Case {
    std::string name;
    kube::ExtenderPreemptionArgs args;
    VictimMap want;
  };
  const std::vector<Case> cases = {
      {"meta form kept",
       {.pod = preemptor, .node_name_to_meta_victims = VictimMap{{"n1", Meta({"a", "b"}, 1)}}},
       {{"n1", Meta({"a", "b"}, 1)}}},
      {"full pods become their UIDs, in order",
       {.pod = preemptor,
        .node_name_to_victims =
            std::map<std::string, kube::Victims>{
                {"n1",
                 {.pods = {MakePod("x").Uid("ux"), MakePod("y").Uid("uy")},
                  .num_pdb_violations = 2}},
                {"n2", {.pods = {MakePod("z").Uid("uz")}}}}},
       {{"n1", Meta({"ux", "uy"}, 2)}, {"n2", Meta({"uz"})}}},
      {"neither form", {.pod = preemptor}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ProposedVictims(c.args), c.want);
  }
}

TEST(PreemptTest, NarrowKeepsEveryVictimAndDropsEmptyNodes) {
  const VictimMap proposed = {{"n1", Meta({"a", "b"})}, {"n2", Meta({})}, {"n3", Meta({"c"}, 1)}};
  const VictimMap kept = NarrowVictims(proposed, VictimGangs());
  EXPECT_EQ(kept, (VictimMap{{"n1", Meta({"a", "b"})}, {"n3", Meta({"c"}, 1)}}));
}

TEST(PreemptTest, RepliesInTheMetaFormWithDecisions) {
  fixture::TestCluster cluster;
  kube::ExtenderPreemptionArgs args{
      .pod = MakePod("hi").Gpu(8).Priority(1000),
      .node_name_to_victims = std::map<std::string, kube::Victims>{
          {"n1", {.pods = {MakePod("lo").Uid("u-lo").NodeName("n1")}}}, {"n2", {}}}};
  const VerbReply reply = cluster.pipeline.Preempt(kube::EncodeExtenderPreemptionArgs(args));
  EXPECT_EQ(reply.http_status, 200);
  EXPECT_EQ(reply.decisions, (DecisionCounts{{kReasonVictimsKept, 1}, {kReasonNoVictims, 1}}));
  StatusOr<kube::ExtenderPreemptionResult> result =
      kube::DecodeExtenderPreemptionResult(reply.body);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->node_name_to_meta_victims, (VictimMap{{"n1", Meta({"u-lo"})}}));
}

// kube-scheduler's victims are per node; a node whose victims would leave a
// gang running below its minMember is vetoed, whole-gang victims are fine.
TEST(PreemptTest, VetoesVictimsThatWouldBreakAGang) {
  fixture::TestCluster cluster;
  cluster.Add(test::MakePodGroup("g4").Namespace("ml").MinMember(4));       // 2 per node, n1 and n2
  cluster.Add(test::MakePodGroup("g2").Namespace("ml").MinMember(2));       // both on n3
  cluster.Add(test::MakePodGroup("elastic").Namespace("ml").MinMember(1));  // 2 on n4
  auto member = [&](std::string name, std::string group, std::string node) {
    cluster.Add(MakePod(name)
                    .Namespace("ml")
                    .Uid("u-" + name)
                    .Group(group)
                    .Gpu(1)
                    .NodeName(node)
                    .Phase("Running"));
  };
  member("g4-0", "g4", "n1");
  member("g4-1", "g4", "n1");
  member("g4-2", "g4", "n2");
  member("g4-3", "g4", "n2");
  member("g2-0", "g2", "n3");
  member("g2-1", "g2", "n3");
  member("el-0", "elastic", "n4");
  member("el-1", "elastic", "n4");
  cluster.Add(MakePod("solo").Namespace("ml").Uid("u-solo").Gpu(1).NodeName("n5").Phase("Running"));
  kube::ExtenderPreemptionArgs args{.pod = MakePod("hi").Gpu(2).Priority(1000),
                                    .node_name_to_meta_victims = VictimMap{
                                        {"n1", Meta({"u-g4-0", "u-g4-1"})},  // half of g4: vetoed
                                        {"n3", Meta({"u-g2-0", "u-g2-1"})},  // all of g2: kept
                                        {"n4", Meta({"u-el-0"})},    // elastic keeps its 1: kept
                                        {"n5", Meta({"u-solo"})}}};  // no gang: kept
  const VerbReply reply = cluster.pipeline.Preempt(kube::EncodeExtenderPreemptionArgs(args));
  EXPECT_EQ(reply.decisions, (DecisionCounts{{kReasonVictimsKept, 3}, {kReasonBreaksGang, 1}}));
  StatusOr<kube::ExtenderPreemptionResult> result =
      kube::DecodeExtenderPreemptionResult(reply.body);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->node_name_to_meta_victims, (VictimMap{{"n3", Meta({"u-g2-0", "u-g2-1"})},
                                                          {"n4", Meta({"u-el-0"})},
                                                          {"n5", Meta({"u-solo"})}}));
}

struct ConformanceCase {
  std::string name;
  VictimMap proposed;
  VictimMap want;
  DecisionCounts decisions;
};

const std::vector<ConformanceCase> kConformanceCases = {
    {"a kube-system pod", {{"n1", Meta({"u-sys"})}}, {}, {{kReasonConformance, 1}}},
    {"a system-cluster-critical pod",
     {{"n2", Meta({"u-cluster-critical"})}},
     {},
     {{kReasonConformance, 1}}},
    {"a system-node-critical pod",
     {{"n3", Meta({"u-node-critical"})}},
     {},
     {{kReasonConformance, 1}}},
    {"a normal pod",
     {{"n4", Meta({"u-normal"})}},
     {{"n4", Meta({"u-normal"})}},
     {{kReasonVictimsKept, 1}}},
    {"a normal member of a gang with a critical member",
     {{"n5", Meta({"u-mixed-0"})}},
     {},
     {{kReasonConformance, 1}}},
    {"one critical victim vetoes its node only: the next node is kept",
     {{"n3", Meta({"u-node-critical"})},
      {"n4", Meta({"u-normal"})},
      {"n7", Meta({"u-plain-0", "u-plain-1"})}},
     {{"n4", Meta({"u-normal"})}, {"n7", Meta({"u-plain-0", "u-plain-1"})}},
     {{kReasonVictimsKept, 2}, {kReasonConformance, 1}}},
    {"a normal pod beside a critical one on the same node",
     {{"n1", Meta({"u-normal", "u-sys"})}},
     {},
     {{kReasonConformance, 1}}},
};

// Running pods on n1..n7 for the conformance cases: a kube-system pod (n1),
// a system-cluster-critical (n2) and a system-node-critical one (n3), a
// normal one (n4), the gang "mixed" of minMember 1 with one critical member
// (n5, n6), and the gang "plain" of minMember 2 (both on n7).
void AddConformanceVictims(fixture::TestCluster& cluster) {
  auto running = [&](std::string name, std::string ns, std::string priority_class, std::string node,
                     std::string group = "") {
    PodBuilder pod = MakePod(name)
                         .Namespace(ns)
                         .Uid("u-" + name)
                         .PriorityClass(priority_class)
                         .Gpu(1)
                         .NodeName(node)
                         .Phase("Running");
    if (!group.empty()) pod.Group(group);
    cluster.Add(pod);
  };
  running("sys", "kube-system", "", "n1");
  running("cluster-critical", "ml", "system-cluster-critical", "n2");
  running("node-critical", "ml", "system-node-critical", "n3");
  running("normal", "ml", "", "n4");
  // A gang with one critical member: no member is a victim, even one whose
  // eviction would leave the gang at its minMember.
  cluster.Add(test::MakePodGroup("mixed").Namespace("ml").MinMember(1));
  running("mixed-0", "ml", "", "n5", "mixed");
  running("mixed-1", "ml", "system-node-critical", "n6", "mixed");
  cluster.Add(test::MakePodGroup("plain").Namespace("ml").MinMember(2));
  running("plain-0", "ml", "", "n7", "plain");
  running("plain-1", "ml", "", "n7", "plain");
}

// Conformance (issue 19): a node whose victims include a kube-system or
// system-critical pod, or a member of a gang that has one, is vetoed whole.
TEST(PreemptTest, VetoesNodesWithKubeSystemOrCriticalVictims) {
  fixture::TestCluster cluster;
  AddConformanceVictims(cluster);
  for (const ConformanceCase& c : kConformanceCases) {
    SCOPED_TRACE(c.name);
    kube::ExtenderPreemptionArgs args{.pod = MakePod("hi").Gpu(1).Priority(1000),
                                      .node_name_to_meta_victims = c.proposed};
    const VerbReply reply = cluster.pipeline.Preempt(kube::EncodeExtenderPreemptionArgs(args));
    EXPECT_EQ(reply.http_status, 200);
    EXPECT_EQ(reply.decisions, c.decisions);
    StatusOr<kube::ExtenderPreemptionResult> result =
        kube::DecodeExtenderPreemptionResult(reply.body);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->node_name_to_meta_victims.value_or(VictimMap{}), c.want);
  }
}

// The full form names each victim: one the cache has not seen yet is judged
// by what kube-scheduler sent.
TEST(PreemptTest, VetoesCriticalVictimsTheCacheDoesNotKnowYet) {
  fixture::TestCluster cluster;
  kube::ExtenderPreemptionArgs args{
      .pod = MakePod("hi").Gpu(8).Priority(1000),
      .node_name_to_victims = std::map<std::string, kube::Victims>{
          {"n1", {.pods = {MakePod("dns").Namespace("kube-system").Uid("u-dns").NodeName("n1")}}},
          {"n2", {.pods = {MakePod("lo").Uid("u-lo").NodeName("n2")}}}}};
  const VerbReply reply = cluster.pipeline.Preempt(kube::EncodeExtenderPreemptionArgs(args));
  EXPECT_EQ(reply.decisions, (DecisionCounts{{kReasonVictimsKept, 1}, {kReasonConformance, 1}}));
  StatusOr<kube::ExtenderPreemptionResult> result =
      kube::DecodeExtenderPreemptionResult(reply.body);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->node_name_to_meta_victims, (VictimMap{{"n2", Meta({"u-lo"})}}));
}

TEST(PreemptTest, ABodyThatDoesNotDecodeIsABadRequest) {
  fixture::TestCluster cluster;
  const VerbReply reply =
      cluster.pipeline.Preempt(R"({"Pod": {}, "NodeNameToMetaVictims": {"n1": {"Pods": 3}}})");
  EXPECT_EQ(reply.http_status, 400) << "preempt has no Error field";
  EXPECT_EQ(reply.outcome, ReplyOutcome::kBadRequest);
  EXPECT_TRUE(reply.body.starts_with("muster: decode ExtenderPreemptionArgs")) << reply.body;
  EXPECT_NE(reply.body.find("Pods"), std::string::npos) << "names the field: " << reply.body;
}

}  // namespace
}  // namespace muster::extender
