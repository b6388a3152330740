#include "extender/pipeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extender/testing/golden.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

TEST(PipelineTest, ManagedResourcesAlwaysIncludeGpus) {
  struct Case {
    std::string name;
    std::vector<std::string> extra;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"default", {}, {"nvidia.com/gpu"}},
      {"extra, sorted",
       {"rdma/hca", "example.com/fpga"},
       {"example.com/fpga", "nvidia.com/gpu", "rdma/hca"}},
      {"duplicates and empties dropped",
       {"nvidia.com/gpu", "rdma/hca", "rdma/hca", ""},
       {"nvidia.com/gpu", "rdma/hca"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ManagedResources({.extra_managed_resources = c.extra}), c.want);
  }
}

TEST(PipelineTest, DecodeExtenderRequestTakesTheCandidatesInOrder) {
  const Pod pod = MakePod("p").Gpu(1);
  const std::vector<Node> nodes = {MakeNode("b").Gpu(8), MakeNode("a").Gpu(8)};
  struct Case {
    std::string name;
    std::string body;
    bool cache_mode;
    std::vector<std::string> names;
    bool plain_names = true;  // nothing in the body was escaped
  };
  const std::vector<Case> cases = {
      {"names", fixture::FilterArgs(pod, {"z", "a", "m"}), true, {"z", "a", "m"}},
      {"no names", fixture::FilterArgs(pod, {}), true, {}},
      {"nodes", fixture::FilterArgsWithNodes(pod, nodes), false, {"b", "a"}},
      {"kube-scheduler's lower-case keys",
       fixture::CodecFixture("filter_args_lowercase.json"),
       true,
       {"gpu-a1", "gpu-a2", "gpu-b1", "gpu-b2"}},
      {"an escaped name", fixture::FilterArgs(pod, {"a\"b", "c"}), true, {"a\"b", "c"}, false},
      {"an escape elsewhere",
       R"({"Pod": {"metadata": {"name": "p\u0041"}}, "NodeNames": ["a"]})",
       true,
       {"a"},
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<ExtenderRequest> request = DecodeExtenderRequest(c.body);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->candidates.cache_mode, c.cache_mode);
    EXPECT_EQ(std::vector<std::string>(request->candidates.names.begin(),
                                       request->candidates.names.end()),
              c.names);
    EXPECT_EQ(request->candidates.nodes.size(), c.cache_mode ? 0u : c.names.size());
    EXPECT_EQ(request->candidates.plain_names, c.plain_names);
  }
}

TEST(PipelineTest, DecodeExtenderRequestFaultsAreReadable) {
  struct Case {
    std::string name;
    std::string body;
    std::string want_substring;
  };
  const std::vector<Case> cases = {
      {"neither nodes nor names", R"({"Pod": {"metadata": {"name": "p"}}, "Nodes": null,
         "NodeNames": null})",
       "neither Nodes nor NodeNames is set"},
      {"truncated", R"({"Pod": {"metadata": {"name": "p")", "decode ExtenderArgs"},
      {"wrong type", R"({"Pod": {}, "NodeNames": "gpu-a1"})", "NodeNames"},
      {"not an object", "[]", "decode ExtenderArgs"},
      {"empty", "", "decode ExtenderArgs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<ExtenderRequest> request = DecodeExtenderRequest(c.body);
    ASSERT_FALSE(request.ok());
    EXPECT_EQ(request.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(request.status().message().find(c.want_substring), std::string::npos)
        << request.status();
  }
}

TEST(PipelineTest, DemandCountsOnlyManagedResources) {
  struct Case {
    std::string name;
    Pod pod;
    std::vector<std::string> managed;
    Resources want;
  };
  const std::vector<Case> cases = {
      {"gpus only",
       MakePod("p").Cpu("4").Memory("8Gi").Gpu(2),
       {"nvidia.com/gpu"},
       Resources{{"nvidia.com/gpu", 2000}}},
      {"no gpus: empty demand", MakePod("p").Cpu("4"), {"nvidia.com/gpu"}, Resources{}},
      {"an extra resource",
       MakePod("p").Gpu(1).Request("rdma/hca", "1"),
       {"nvidia.com/gpu", "rdma/hca"},
       Resources{{"nvidia.com/gpu", 1000}, {"rdma/hca", 1}}},
      {"init container peak counts",
       MakePod("p").Gpu(1).InitContainer(Resources{{"nvidia.com/gpu", 4000}}),
       {"nvidia.com/gpu"},
       Resources{{"nvidia.com/gpu", 4000}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PodDemand demand = DemandOf(c.pod, c.managed, ClusterSnapshot());
    EXPECT_EQ(demand.request, c.want);
    EXPECT_EQ(demand.request.entries().size(), c.want.entries().size()) << "no zero entries";
    EXPECT_FALSE(demand.own.has_value());
  }
}

TEST(PipelineTest, DemandCreditsThePodsOwnPlacementOnItsNodeOnly) {
  FakeClock clock;
  ClusterState state(clock);
  state.Assume("uid-p", "n1", Resources{{"nvidia.com/gpu", 2000}});
  const PodDemand demand =
      DemandOf(MakePod("p").Gpu(2), {"nvidia.com/gpu"}, state.Snapshot("uid-p"));
  EXPECT_EQ(demand.Credit("n1", "nvidia.com/gpu"), 2 * kMilliPerGpu);
  EXPECT_EQ(demand.Credit("n1", "pods"), 1);
  EXPECT_EQ(demand.Credit("n2", "nvidia.com/gpu"), 0);
}

struct GangGateCase {
  std::string name;
  Pod pod;
  bool reserved = false;  // the pod holds a reservation on gpu-1
  GateAction action;
  std::string_view code;
  std::string pinned;
};

const std::vector<GangGateCase> kGangGateCases = {
    {"no group, another scheduler: usual path",
     MakePod("single").Namespace("ml").SchedulerName("default-scheduler").Gpu(1), false,
     GateAction::kAdmit, kReasonAdmitted, ""},
    {"plain pod of volcano, Volcano's PodGroup of one: usual path (its queue decides later)",
     MakePod("plain").Namespace("ml").SchedulerName("volcano").Gpu(1), false, GateAction::kAdmit,
     kReasonAdmitted, ""},
    {"reserved plain pod pinned to its node",
     MakePod("plain").Namespace("ml").SchedulerName("volcano").Gpu(1), true, GateAction::kAdmit,
     kReasonAdmitted, "gpu-1"},
    // Volcano's enqueue admits a PodGroup whole, by its minResources, before
    // any member is allocated (pkg/scheduler/actions/enqueue/enqueue.go):
    // Spark's driver waits until its PodGroup is Inqueue.
    {"minMember 1 with minResources, still Pending: waits for admission",
     MakePod("spark-driver").Namespace("ml").Group("spark-pending"), false, GateAction::kReject,
     kReasonAwaitingAdmission, ""},
    {"minMember 1 with minResources, Inqueue: usual path",
     MakePod("spark-exec-1").Namespace("ml").Group("spark-inqueue"), false, GateAction::kAdmit,
     kReasonAdmitted, ""},
    {"group of one: usual path", MakePod("solo-0").Namespace("ml").Group("solo").Gpu(1), false,
     GateAction::kAdmit, kReasonAdmitted, ""},
    {"gang member without reservation waits", MakePod("dist-0").Namespace("ml").Group("dist"),
     false, GateAction::kReject, kReasonGangWaiting, ""},
    {"reserved member pinned to its node", MakePod("dist-1").Namespace("ml").Group("dist"), true,
     GateAction::kAdmit, kReasonAdmitted, "gpu-1"},
    {"missing PodGroup waits", MakePod("lost-0").Namespace("ml").Group("lost"), false,
     GateAction::kReject, kReasonNoPodGroup, ""},
    {"same name in another namespace is another group",
     MakePod("dist-0").Namespace("other").Group("dist"), false, GateAction::kReject,
     kReasonNoPodGroup, ""},
};

// The PodGroups of the gang gate's cases: "solo" (minMember 1), "dist"
// (4), and two of minMember 1 with minResources, "spark-pending" (not yet
// admitted) and "spark-inqueue" (admitted), all in "ml".
void AddGatePodGroups(ClusterState& state) {
  state.workloads().UpsertPodGroup(test::MakePodGroup("solo").Namespace("ml").MinMember(1));
  state.workloads().UpsertPodGroup(test::MakePodGroup("dist").Namespace("ml").MinMember(4));
  PodGroup pending = test::MakePodGroup("spark-pending")
                         .Namespace("ml")
                         .MinMember(1)
                         .MinResources(Resources{{"cpu", 4000}});
  state.workloads().UpsertPodGroup(pending);
  PodGroup inqueue = test::MakePodGroup("spark-inqueue")
                         .Namespace("ml")
                         .MinMember(1)
                         .MinResources(Resources{{"cpu", 4000}})
                         .Phase("Inqueue");
  state.workloads().UpsertPodGroup(inqueue);
}

// The gang gate: who goes on to fit, who waits (Unresolvable, so
// kube-scheduler's preemption never tries), who is pinned to a reservation.
TEST(PipelineTest, GangGateHoldsMembersUntilTheirGangIsReserved) {
  for (const GangGateCase& c : kGangGateCases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ClusterState state(clock);
    AddGatePodGroups(state);
    Pod pod = c.pod;
    pod.meta.uid = "uid-" + pod.meta.name;
    state.UpsertPod(pod);
    if (c.reserved) state.Assume(pod.meta.uid, "gpu-1", pod.EffectiveRequest());
    const GateVerdict verdict = AdmitByGang(pod, state.Snapshot(pod.meta.uid), {"volcano"});
    EXPECT_EQ(verdict.action, c.action);
    EXPECT_EQ(verdict.code, c.code);
    EXPECT_EQ(verdict.pinned_node, c.pinned);
    if (c.action != GateAction::kAdmit) {
      EXPECT_TRUE(verdict.reason.starts_with(kReasonPrefix));
    }
  }
}

// A PodGroup the watch delivered that does not decode: its pods wait,
// told what is wrong with it (not that it is missing); fixed, they go on.
TEST(PipelineTest, PodsOfAPodGroupThatDoesNotDecodeWaitNamingTheField) {
  FakeClock clock;
  ClusterState state(clock);
  state.workloads().UpsertPodGroup(test::MakePodGroup("train").Namespace("ml").MinMember(1));
  state.workloads().MarkPodGroupBroken(
      {.namespace_ = "ml",
       .name = "train",
       .uid = "u",
       .problem = R"(spec.minResources.cpu: quantity "1.2.3" of cpu is invalid)"});
  Pod pod = MakePod("train-0").Namespace("ml").Group("train").Gpu(1);
  pod.meta.uid = "uid-train-0";
  state.UpsertPod(pod);
  GateVerdict verdict = AdmitByGang(pod, state.Snapshot(pod.meta.uid), {"volcano"});
  EXPECT_EQ(verdict.action, GateAction::kReject);
  EXPECT_EQ(verdict.code, kReasonPodGroupInvalid);
  EXPECT_EQ(verdict.reason,
            R"(muster: PodGroup ml/train cannot be read: spec.minResources.cpu: quantity "1.2.3" )"
            R"(of cpu is invalid (the pod waits until it is fixed))");
  // The broken version replaced the decoded one; a fixed one replaces it.
  state.workloads().UpsertPodGroup(test::MakePodGroup("train").Namespace("ml").MinMember(1));
  verdict = AdmitByGang(pod, state.Snapshot(pod.meta.uid), {"volcano"});
  EXPECT_EQ(verdict.action, GateAction::kAdmit);
}

TEST(PipelineTest, ReplyOutcomeNamesAreMetricLabels) {
  EXPECT_EQ(ReplyOutcomeName(ReplyOutcome::kOk), "ok");
  EXPECT_EQ(ReplyOutcomeName(ReplyOutcome::kBadRequest), "bad_request");
  EXPECT_EQ(ReplyOutcomeName(ReplyOutcome::kFault), "fault");
}

}  // namespace
}  // namespace muster::extender
