#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "extender/pipeline.h"
#include "extender/testing/golden.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

const std::vector<std::string> kGpuOnly = {"nvidia.com/gpu"};

kube::ExtenderBindingArgs Args(std::string node = "n1") {
  return {.pod_name = "train-0", .pod_namespace = "ml", .pod_uid = "u1", .node = std::move(node)};
}

PodRecord Pending(int64_t gpus = 4) {
  return PodRecord{.namespace_ = "ml",
                   .name = "train-0",
                   .request = Resources{{"cpu", 1000}, {"nvidia.com/gpu", gpus * kMilliPerGpu}}};
}

NodeInfo GpuNode(int64_t used) {
  const Node node = MakeNode("n1").Gpu(8);
  return NodeInfo{.name = "n1",
                  .node = std::make_shared<const Node>(node),
                  .allocatable = node.allocatable,
                  .allocated = Resources{{"nvidia.com/gpu", used * kMilliPerGpu}}};
}

// Pending() changed by `change`.
PodRecord PendingWith(const std::function<void(PodRecord&)>& change) {
  PodRecord pod = Pending();
  change(pod);
  return pod;
}

struct PlanBindCase {
  std::string name;
  kube::ExtenderBindingArgs args;
  std::optional<PodRecord> pod;
  std::optional<NodeInfo> node;
  std::optional<Placement> own;
  BindAction action;
  std::string_view code;
  std::string error;  // kReject
};

const Placement kOwnHere{
    .node = "n1", .resources = {{"nvidia.com/gpu", 4000}, {"pods", 1}}, .assumed = true};

const std::vector<PlanBindCase> kPlanBindCases = {
    {"fits", Args(), Pending(), GpuNode(4), std::nullopt, BindAction::kPost, kReasonBindPost, ""},
    {"fits thanks to its own reservation (a retried bind)", Args(), Pending(), GpuNode(8), kOwnHere,
     BindAction::kPost, kReasonBindPost, ""},
    {"already bound here: success without a POST", Args(),
     PendingWith([](PodRecord& p) { p.node_name = "n1"; }), GpuNode(8), std::nullopt,
     BindAction::kAlreadyBound, kReasonAlreadyBound, ""},
    {"a field missing",
     [] {
       kube::ExtenderBindingArgs no_uid = Args();
       no_uid.pod_uid.clear();
       return no_uid;
     }(),
     Pending(), GpuNode(0), std::nullopt, BindAction::kReject, kReasonBadRequest,
     "muster: bind request lacks PodUID"},
    {"pod unknown", Args(), std::nullopt, GpuNode(0), std::nullopt, BindAction::kReject,
     kReasonPodUnknown, "muster: pod ml/train-0 (uid u1) not in cache yet"},
    {"uid of another pod", Args(), PendingWith([](PodRecord& p) { p.name = "train-1"; }),
     GpuNode(0), std::nullopt, BindAction::kReject, kReasonPodMismatch,
     "muster: uid u1 is pod ml/train-1, not ml/train-0"},
    {"finished", Args(), PendingWith([](PodRecord& p) {
       p.node_name = "n1";
       p.terminal = true;
     }),
     GpuNode(0), std::nullopt, BindAction::kReject, kReasonPodFinished,
     "muster: pod ml/train-0 has finished"},
    {"being deleted", Args(), PendingWith([](PodRecord& p) { p.terminating = true; }), GpuNode(0),
     std::nullopt, BindAction::kReject, kReasonPodFinished,
     "muster: pod ml/train-0 is being deleted"},
    {"bound elsewhere", Args(), PendingWith([](PodRecord& p) { p.node_name = "n2"; }), GpuNode(0),
     std::nullopt, BindAction::kReject, kReasonBoundElsewhere,
     "muster: pod ml/train-0 is already bound to node n2"},
    {"node unknown", Args(), Pending(), std::nullopt, std::nullopt, BindAction::kReject,
     kReasonNodeUnknown, "muster: node n1 not in cache yet"},
    {"node filled up since filter", Args(), Pending(), GpuNode(6), std::nullopt,
     BindAction::kReject, kReasonInsufficient,
     "muster: node n1: needs 4 nvidia.com/gpu (2 free of 8)"},
    {"pod larger than the node", Args(), Pending(9), GpuNode(0), std::nullopt, BindAction::kReject,
     kReasonExceedsNode, "muster: node n1: needs 9 nvidia.com/gpu (node has 8)"},
};

TEST(PlanBindTest, Decisions) {
  for (const PlanBindCase& c : kPlanBindCases) {
    SCOPED_TRACE(c.name);
    const BindPlan plan =
        PlanBind(c.args, c.pod ? &*c.pod : nullptr, c.node ? &*c.node : nullptr, c.own, kGpuOnly);
    EXPECT_EQ(plan.action, c.action);
    EXPECT_EQ(plan.code, c.code);
    EXPECT_EQ(plan.error, c.error);
    EXPECT_EQ(plan.outcome, c.action == BindAction::kReject
                                ? (c.code == kReasonBadRequest || c.code == kReasonPodMismatch
                                       ? ReplyOutcome::kBadRequest
                                       : ReplyOutcome::kFault)
                                : ReplyOutcome::kOk);
  }
}

TEST(PlanBindTest, TheBindingCarriesIdentityAndPlacement) {
  struct Case {
    std::string name;
    PodRecord pod;
    std::string want_resources;
  };
  PodRecord cpu_only = Pending();
  cpu_only.request = Resources{{"cpu", 1000}};
  const std::vector<Case> cases = {
      {"gpu pod", Pending(4), "nvidia.com/gpu=4"},
      {"cpu-only pod", cpu_only, "none"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const NodeInfo node = GpuNode(0);
    const BindPlan plan = PlanBind(Args(), &c.pod, &node, std::nullopt, kGpuOnly);
    ASSERT_EQ(plan.action, BindAction::kPost);
    EXPECT_EQ(plan.binding.meta.name, "train-0");
    EXPECT_EQ(plan.binding.meta.namespace_, "ml");
    EXPECT_EQ(plan.binding.meta.uid, "u1") << "the API server checks it as a precondition";
    EXPECT_EQ(plan.binding.target_node, "n1");
    EXPECT_EQ(plan.binding.meta.annotations,
              (std::map<std::string, std::string>{{"muster.io/node", "n1"},
                                                  {"muster.io/resources", c.want_resources}}));
  }
}

TEST(BindPostTest, OnlyAProvenFailureReleasesTheReservation) {
  struct Case {
    std::string name;
    Status post;
    bool surely_failed;
    bool already_assigned_to_n1;
  };
  const std::string conflict_n1 =
      "Operation cannot be fulfilled on pods/binding \"train-0\": pod train-0 is already "
      "assigned to node \"n1\"";
  const std::string conflict_n2 =
      "Operation cannot be fulfilled on pods/binding \"train-0\": pod train-0 is already "
      "assigned to node \"n2\"";
  const std::vector<Case> cases = {
      {"404 pod gone", Status(StatusCode::kNotFound, "pods \"train-0\" not found"), true, false},
      {"403", Status(StatusCode::kPermissionDenied, "forbidden"), true, false},
      {"422", Status(StatusCode::kInvalidArgument, "invalid"), true, false},
      {"429", Status(StatusCode::kResourceExhausted, "slow down"), true, false},
      {"503 may have bound", Status(StatusCode::kUnavailable, "connection reset"), false, false},
      {"timeout may have bound", Status(StatusCode::kDeadlineExceeded, "timeout"), false, false},
      {"500 may have bound", Status(StatusCode::kInternal, "etcd"), false, false},
      {"409 on this node: an earlier attempt won", Status(StatusCode::kConflict, conflict_n1),
       false, true},
      {"409 on another node", Status(StatusCode::kConflict, conflict_n2), false, false},
      {"409 from a similarly named node",
       Status(StatusCode::kConflict, "pod train-0 is already assigned to node \"n10\""), false,
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(BindPostSurelyFailed(c.post), c.surely_failed);
    EXPECT_EQ(AlreadyAssignedTo(c.post, "n1"), c.already_assigned_to_n1);
  }
}

// bind through the pipeline: decode -> reserve -> (POST) -> finish.
struct BindCluster : fixture::TestCluster {
  BindCluster() {
    Add(MakeNode("n1").Gpu(8));
    Add(MakePod("train-0").Namespace("ml").Uid("u1").Gpu(4));
  }
  std::string Body(std::string node = "n1") {
    return kube::EncodeExtenderBindingArgs(Args(std::move(node)));
  }
  int64_t Allocated(std::string_view node) {
    const NodeInfo* info = cache.Snapshot("").FindNode(node);
    return info == nullptr ? 0 : info->allocated.gpus();
  }
};

TEST(BindTest, ReserveThenFinish) {
  struct Case {
    std::string name;
    Status post;
    std::string want_error;
    int64_t gpus_held_after;
  };
  const std::vector<Case> cases = {
      {"bound: the reservation holds until the pod is seen", Status::Ok(), "", 4},
      {"a proven failure frees the GPUs", Status(StatusCode::kNotFound, "pod gone"),
       "muster: binding ml/train-0 to node n1: NotFound: pod gone", 0},
      {"an uncertain failure keeps them", Status(StatusCode::kUnavailable, "reset"),
       "muster: binding ml/train-0 to node n1: Unavailable: reset", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BindCluster cluster;
    const BindPlan plan = cluster.pipeline.ReserveBind(cluster.Body());
    ASSERT_EQ(plan.action, BindAction::kPost) << plan.error;
    EXPECT_EQ(plan.assumed, AssumeResult::kAssumed);
    EXPECT_EQ(cluster.Allocated("n1"), 4) << "reserved before the POST";
    const VerbReply reply = cluster.pipeline.FinishBind(plan, c.post);
    EXPECT_EQ(reply.http_status, 200);
    EXPECT_EQ(reply.outcome, c.want_error.empty() ? ReplyOutcome::kOk : ReplyOutcome::kFault);
    StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(reply.body);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->error, c.want_error);
    EXPECT_EQ(cluster.Allocated("n1"), c.gpus_held_after);
  }
}

TEST(BindTest, ARetriedBindRefreshesItsReservation) {
  BindCluster cluster;
  ASSERT_EQ(cluster.pipeline.ReserveBind(cluster.Body()).assumed, AssumeResult::kAssumed);
  const BindPlan again = cluster.pipeline.ReserveBind(cluster.Body());
  EXPECT_EQ(again.action, BindAction::kPost);
  EXPECT_EQ(again.assumed, AssumeResult::kRefreshed);
  EXPECT_EQ(cluster.Allocated("n1"), 4) << "counted once";
}

TEST(BindTest, TheWatchedBindEndsTheReservationAndLaterBindsSucceed) {
  BindCluster cluster;
  const BindPlan plan = cluster.pipeline.ReserveBind(cluster.Body());
  cluster.pipeline.FinishBind(plan, Status::Ok());
  cluster.Add(MakePod("train-0").Namespace("ml").Uid("u1").Gpu(4).NodeName("n1").Phase("Running"));
  EXPECT_EQ(cluster.Allocated("n1"), 4);
  const BindPlan retry = cluster.pipeline.ReserveBind(cluster.Body());
  EXPECT_EQ(retry.action, BindAction::kAlreadyBound);
  const VerbReply reply = cluster.pipeline.AnswerBind(retry);
  EXPECT_EQ(reply.outcome, ReplyOutcome::kOk);
  fixture::ExpectSameJson(reply.body, R"({"Error": ""})");
  EXPECT_EQ(cluster.pipeline.AnswerBind(cluster.pipeline.ReserveBind(cluster.Body("n2"))).body,
            R"({"Error":"muster: pod ml/train-0 is already bound to node n1"})");
}

TEST(BindTest, ABodyThatDoesNotDecodeIsRejectedReadably) {
  BindCluster cluster;
  const BindPlan plan = cluster.pipeline.ReserveBind(R"({"PodName": 3})");
  EXPECT_EQ(plan.action, BindAction::kReject);
  EXPECT_EQ(plan.outcome, ReplyOutcome::kBadRequest);
  EXPECT_TRUE(plan.error.starts_with("muster: decode ExtenderBindingArgs: PodName")) << plan.error;
  EXPECT_EQ(cluster.pipeline.AnswerBind(plan).http_status, 200) << "bind errors travel in Error";
}

// A gang member's bind names the members the bind barrier waits for: those
// with a reservation and not bound (itself included); a member bound
// already, or without a reservation, is not waited for.
TEST(BindTest, AGangMembersBindNamesItsGangsReservedUnboundMembers) {
  fixture::TestCluster cluster;
  cluster.Add(MakeNode("n1").Gpu(8));
  cluster.Add(test::MakePodGroup("train").Namespace("ml").MinMember(3));
  const auto member = [](std::string name, std::string uid) {
    return MakePod(name).Namespace("ml").Uid(uid).Gpu(1).Group("train");
  };
  cluster.Add(member("train-0", "u0"));
  cluster.Add(member("train-1", "u1"));
  cluster.Add(member("train-2", "u2").NodeName("n1").Phase("Running"));
  cluster.Add(member("train-3", "u3"));  // no reservation
  cluster.With([](ClusterState& s) {
    s.Assume("u0", "n1", Resources{{"nvidia.com/gpu", 1000}});
    s.Assume("u1", "n1", Resources{{"nvidia.com/gpu", 1000}});
  });
  const BindPlan plan = cluster.pipeline.ReserveBind(kube::EncodeExtenderBindingArgs(
      {.pod_name = "train-0", .pod_namespace = "ml", .pod_uid = "u0", .node = "n1"}));
  ASSERT_EQ(plan.action, BindAction::kPost) << plan.error;
  EXPECT_EQ(plan.gang, "ml/train");
  EXPECT_EQ(plan.gang_reserved, (std::vector<std::string>{"u0", "u1"}));

  // A plain pod's bind waits for nobody.
  cluster.Add(MakePod("solo").Namespace("ml").Uid("s").Gpu(1));
  const BindPlan solo = cluster.pipeline.ReserveBind(kube::EncodeExtenderBindingArgs(
      {.pod_name = "solo", .pod_namespace = "ml", .pod_uid = "s", .node = "n1"}));
  ASSERT_EQ(solo.action, BindAction::kPost) << solo.error;
  EXPECT_EQ(solo.gang, "");
}

// 16 binds race for one 8-GPU node, 2 GPUs each: exactly 4 may win, and the
// node's allocation never exceeds its GPUs.
TEST(BindTest, ConcurrentBindsNeverOvercommit) {
  fixture::TestCluster cluster;
  cluster.Add(MakeNode("n1").Gpu(8));
  constexpr int kPodCount = 16;
  for (int i = 0; i < kPodCount; ++i) cluster.Add(MakePod("p" + std::to_string(i)).Gpu(2));
  std::atomic<int> posted{0};
  std::atomic<int> rejected{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kPodCount; ++i) {
    threads.emplace_back([&, i] {
      const std::string name = "p" + std::to_string(i);
      const BindPlan plan = cluster.pipeline.ReserveBind(kube::EncodeExtenderBindingArgs(
          {.pod_name = name, .pod_namespace = "default", .pod_uid = "uid-" + name, .node = "n1"}));
      if (plan.action == BindAction::kPost) {
        ++posted;
      } else if (plan.code == kReasonInsufficient) {
        ++rejected;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(posted, 4);
  EXPECT_EQ(rejected, kPodCount - 4);
  EXPECT_EQ(cluster.cache.Snapshot("").FindNode("n1")->allocated.gpus(), 8);
}

}  // namespace
}  // namespace muster::extender
