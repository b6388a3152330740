// The gang controller over a real cache and pipeline (no API client): what a
// pass reserves, what filter and bind then answer, and what a restarted
// extender rebuilds from the Binding annotations.
#include "extender/gang_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "extender/metrics.h"
#include "extender/pipeline.h"
#include "extender/testing/gang_cluster.h"
#include "extender/testing/golden.h"
#include "extender/testing/metrics_text.h"
#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/volcano_codec.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using fixture::AddGang;
using fixture::AddNodes;
using fixture::FilterArgs;
using fixture::MakeController;
using fixture::MemberName;
using fixture::PlacementOf;
using fixture::ReservedMembers;
using fixture::TestCluster;
using test::MakeNode;
using test::MakePod;
using test::MakePodGroup;
using test::MakeQueue;
using test::PodBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using namespace std::chrono_literals;

// A plain pod of schedulerName volcano (no PodGroup named) in `queue`
// ("" for none), asking `cores` cpu.
Pod PlainPod(std::string_view name, std::string_view queue, int cores) {
  PodBuilder pod = MakePod(std::string(name))
                       .Namespace("ml")
                       .Uid("uid-" + std::string(name))
                       .SchedulerName("volcano")
                       .Cpu(std::to_string(cores));
  if (!queue.empty()) pod.Queue(queue);
  return pod;
}

// Filter of a whole pod: the nodes it passes, or the reason it is held.
std::string FilterPod(TestCluster& cluster, const Pod& pod) {
  StatusOr<kube::ExtenderFilterResult> result = kube::DecodeExtenderFilterResult(
      cluster.pipeline.Filter(FilterArgs(pod, {"gpu-0", "gpu-1"})).body);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return "";
  if (result->node_names && !result->node_names->empty()) {
    std::string nodes;
    for (const std::string& n : *result->node_names) nodes += (nodes.empty() ? "" : ",") + n;
    return nodes;
  }
  return result->failed_and_unresolvable_nodes.empty()
             ? "none"
             : result->failed_and_unresolvable_nodes.begin()->second;
}

// The pod, bound to `node` and Running (as the watch shows it after bind).
Pod BoundTo(Pod pod, std::string node) {
  pod.spec.node_name = std::move(node);
  pod.status.phase = "Running";
  return pod;
}

kube::ExtenderFilterResult Filter(TestCluster& cluster, std::string_view pod_name,
                                  std::vector<std::string> nodes) {
  Pod pod = MakePod(std::string(pod_name)).Namespace("ml").Uid("uid-" + std::string(pod_name));
  pod.meta.annotations[std::string(kGroupNameAnnotation)] =
      std::string(pod_name.substr(0, pod_name.rfind('-')));
  StatusOr<kube::ExtenderFilterResult> result = kube::DecodeExtenderFilterResult(
      cluster.pipeline.Filter(FilterArgs(pod, std::move(nodes))).body);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : kube::ExtenderFilterResult{};
}

BindPlan Bind(TestCluster& cluster, std::string_view pod, std::string_view node) {
  kube::ExtenderBindingArgs args{.pod_name = std::string(pod),
                                 .pod_namespace = "ml",
                                 .pod_uid = "uid-" + std::string(pod),
                                 .node = std::string(node)};
  return cluster.pipeline.ReserveBind(kube::EncodeExtenderBindingArgs(args));
}

// Two gangs that each need the whole cluster (the deadlock of Volcano #3373
// under a pod-by-pod scheduler): one is reserved whole, the other not at all.
TEST(GangControllerTest, ReservesOneWholeGangNeverTwoHalves) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  AddGang(cluster, "a", 16, 1);
  AddGang(cluster, "b", 16, 1);
  GangController controller = MakeController(cluster);
  controller.RunPass();
  const int a = ReservedMembers(cluster, "a", 16);
  const int b = ReservedMembers(cluster, "b", 16);
  EXPECT_EQ(a + b, 16);
  EXPECT_TRUE((a == 16) != (b == 16)) << "a=" << a << " b=" << b;
  cluster.With([](ClusterState& state) { EXPECT_TRUE(state.CheckAccounting().ok()); });
  // A second pass changes nothing.
  controller.RunPass();
  EXPECT_EQ(ReservedMembers(cluster, "a", 16) + ReservedMembers(cluster, "b", 16), 16);
}

TEST(GangControllerTest, FilterPinsReservedMembersAndHoldsTheOthers) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  AddGang(cluster, "a", 16, 1);
  AddGang(cluster, "b", 16, 1);
  MakeController(cluster).RunPass();
  const bool a_first = ReservedMembers(cluster, "a", 16) == 16;
  const std::string placed = a_first ? "a-3" : "b-3";
  const std::string waiting = a_first ? "b-3" : "a-3";
  const std::string node = PlacementOf(cluster, placed)->node;

  const kube::ExtenderFilterResult pinned = Filter(cluster, placed, {"gpu-0", "gpu-1"});
  EXPECT_THAT(*pinned.node_names, ElementsAre(node));
  EXPECT_EQ(pinned.failed_and_unresolvable_nodes.size(), 1u);

  const kube::ExtenderFilterResult held = Filter(cluster, waiting, {"gpu-0", "gpu-1"});
  EXPECT_THAT(*held.node_names, IsEmpty());
  ASSERT_EQ(held.failed_and_unresolvable_nodes.size(), 2u);
  EXPECT_THAT(held.failed_and_unresolvable_nodes.begin()->second,
              ::testing::HasSubstr("waits until all its members can be placed together"));
}

TEST(GangControllerTest, BindsOnlyOntoTheReservationAndPersistsTheWholePlan) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  AddGang(cluster, "a", 4, 4);  // 16 GPUs: both nodes full
  MakeController(cluster).RunPass();
  const std::string node = PlacementOf(cluster, "a-0")->node;
  const std::string other = node == "gpu-0" ? "gpu-1" : "gpu-0";

  const BindPlan elsewhere = Bind(cluster, "a-0", other);
  EXPECT_EQ(elsewhere.action, BindAction::kReject);
  EXPECT_EQ(elsewhere.code, kReasonGangWaiting);

  const BindPlan plan = Bind(cluster, "a-0", node);
  ASSERT_EQ(plan.action, BindAction::kPost) << plan.error;
  const auto& annotations = plan.binding.meta.annotations;
  ASSERT_EQ(annotations.count(std::string(kAnnotationGangPlan)), 1u);
  StatusOr<GangPlacement> persisted =
      kube::DecodeGangPlacement(annotations.at(std::string(kAnnotationGangPlan)));
  ASSERT_TRUE(persisted.ok()) << persisted.status();
  EXPECT_EQ(persisted->pod_group, "a");
  ASSERT_EQ(persisted->members.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const std::string member = MemberName("a", i);
    EXPECT_EQ(persisted->members[member], PlacementOf(cluster, member)->node) << member;
  }
}

TEST(GangControllerTest, AMemberOfAnUnreservedGangIsNeverBound) {
  TestCluster cluster;
  AddNodes(cluster, 1);
  AddGang(cluster, "big", 3, 4);  // 12 GPUs on 8: never reserved
  MakeController(cluster).RunPass();
  EXPECT_EQ(ReservedMembers(cluster, "big", 3), 0);
  const BindPlan plan = Bind(cluster, "big-0", "gpu-0");
  EXPECT_EQ(plan.action, BindAction::kReject);
  EXPECT_EQ(plan.code, kReasonGangWaiting);
}

// A restarted extender has no reservations; a bound member's Binding
// annotation says where its predecessor placed the others.
TEST(GangControllerTest, RestartRebuildsReservationsFromABoundMembersPlan) {
  TestCluster cluster;
  AddNodes(cluster, 4);
  cluster.Add(MakePodGroup("r").Namespace("ml").MinMember(3));
  const GangPlacement plan{.pod_group = "r",
                           .members = {{"r-0", "gpu-3"}, {"r-1", "gpu-2"}, {"r-2", "gpu-3"}}};
  cluster.Add(MakePod("r-0")
                  .Namespace("ml")
                  .Uid("uid-r-0")
                  .Group("r")
                  .Gpu(4)
                  .NodeName("gpu-3")
                  .Phase("Running")
                  .Annotation(kAnnotationGangPlan, kube::EncodeGangPlacement(plan)));
  for (const char* name : {"r-1", "r-2"}) {
    cluster.Add(MakePod(name).Namespace("ml").Uid(std::string("uid-") + name).Group("r").Gpu(4));
  }
  MakeController(cluster).RunPass();
  ASSERT_TRUE(PlacementOf(cluster, "r-1").has_value());
  EXPECT_EQ(PlacementOf(cluster, "r-1")->node, "gpu-2");
  ASSERT_TRUE(PlacementOf(cluster, "r-2").has_value());
  EXPECT_EQ(PlacementOf(cluster, "r-2")->node, "gpu-3");
}

TEST(GangControllerTest, UnclaimedReservationsExpireAndFreeTheCapacity) {
  TestCluster cluster;
  AddNodes(cluster, 1);
  AddGang(cluster, "slow", 2, 4);
  GangControllerOptions options;
  options.pass.reservation_timeout = 30s;
  GangController controller = MakeController(cluster, options);
  controller.RunPass();
  ASSERT_EQ(ReservedMembers(cluster, "slow", 2), 2);
  cluster.clock.Advance(10s);
  controller.RunPass();
  EXPECT_EQ(ReservedMembers(cluster, "slow", 2), 2) << "within the timeout";
  cluster.clock.Advance(25s);
  controller.RunPass();
  EXPECT_EQ(ReservedMembers(cluster, "slow", 2), 0) << "released after 30s without progress";
  cluster.With([](ClusterState& state) {
    EXPECT_EQ(state.FindNode("gpu-0")->allocated.gpus(), 0);
    EXPECT_EQ(state.GangPlanOf("ml/slow"), nullptr);
  });
  controller.RunPass();
  EXPECT_EQ(ReservedMembers(cluster, "slow", 2), 2) << "planned again on the next pass";
}

// The soak found plans of finished gangs kept forever: a gang whose pods
// are all deleted leaves no plan behind, and a new gang of the same name
// does not inherit its predecessor's placement.
TEST(GangControllerTest, AGangsPlanGoesWithItsLastPod) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  AddGang(cluster, "done", 2, 4);
  MakeController(cluster).RunPass();
  ASSERT_EQ(ReservedMembers(cluster, "done", 2), 2);
  cluster.With([](ClusterState& state) {
    ASSERT_NE(state.GangPlanOf("ml/done"), nullptr);
    state.DeletePod("uid-" + MemberName("done", 0));
    EXPECT_NE(state.GangPlanOf("ml/done"), nullptr) << "one member is left";
    state.DeletePod("uid-" + MemberName("done", 1));
    EXPECT_EQ(state.GangPlanOf("ml/done"), nullptr);
  });
}

// Plain pods of schedulerName volcano (Deployments, Argo steps) are each in
// Volcano's PodGroup of one (pkg/controllers/podgroup/pg_controller_handler.go)
// in the queue their scheduling.volcano.sh/queue-name annotation names: the
// queue's capability holds them back at filter, with no API write for those
// it admits; one it turned away is planned by the pass once there is room,
// reserved and woken (one annotation patch), and filter pins it there.
TEST(GangControllerTest, PlainPodsAreGangsOfOneInTheirQueue) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  cluster.Add(MakeQueue("small").Capability(test::Res({{"cpu", "2"}})));
  const Pod p1 = PlainPod("p1", "small", 1), p2 = PlainPod("p2", "small", 1),
            p3 = PlainPod("p3", "small", 1);
  for (const Pod& p : {p1, p2, p3}) cluster.Add(p);
  GangController controller = MakeController(cluster);
  controller.RunPass();

  EXPECT_EQ(FilterPod(cluster, p1), "gpu-0,gpu-1");
  EXPECT_EQ(FilterPod(cluster, p2), "gpu-0,gpu-1");
  EXPECT_EQ(FilterPod(cluster, p3),
            "muster: queue small is at its capability: needs cpu=1 (0 left)");
  EXPECT_EQ(FilterPod(cluster, PlainPod("lost", "nope", 1)),
            "muster: queue \"nope\" does not exist: create it, or name another in the "
            "scheduling.volcano.sh/queue-name annotation");
  EXPECT_EQ(FilterPod(cluster, PlainPod("free", "", 8)), "gpu-0,gpu-1") << "default: no limit";
  Pod other = PlainPod("other", "small", 8);
  other.spec.scheduler_name = "default-scheduler";
  EXPECT_EQ(FilterPod(cluster, other), "gpu-0,gpu-1") << "another scheduler's pod: in no queue";

  // p1 and p2 bind; the pass holds p3 back while the queue is full.
  cluster.Add(BoundTo(p1, "gpu-0"));
  cluster.Add(BoundTo(p2, "gpu-1"));
  controller.RunPass();
  EXPECT_FALSE(PlacementOf(cluster, "p3").has_value());
  EXPECT_EQ(FilterPod(cluster, p3),
            "muster: queue small is at its capability: needs cpu=1 (0 left)");
  EXPECT_THAT(controller.DebugJson(), ::testing::HasSubstr(R"("waitReason":"QueueCapability")"));

  // p1 completes: the pass reserves p3 and filter pins it to that node.
  Pod done = BoundTo(p1, "gpu-0");
  done.status.phase = "Succeeded";
  cluster.Add(done);
  controller.RunPass();
  ASSERT_TRUE(PlacementOf(cluster, "p3").has_value());
  EXPECT_EQ(FilterPod(cluster, p3), PlacementOf(cluster, "p3")->node);
  cluster.With([](ClusterState& state) { EXPECT_TRUE(state.CheckAccounting().ok()); });
}

// The contention burst's loss (issue 24): when a wave ends its members
// finish one by one, and a pass at each finish gives the first GPUs freed to
// whatever fits them. Here "big" (2 x 4 GPUs) is first in line and "small"
// (2 x 2 GPUs) behind it; the two members on gpu-0 finish 100 ms apart.
// Planning at once, small takes half of gpu-0 and big waits for the next
// wave; settling holds the plans until the freeing pauses, and big gets
// gpu-0 whole. (The head of the line, which would keep gpu-0 for big too
// once it has waited 10 s, is off here.)
TEST(GangControllerTest, SettlingGivesTheFirstGangTheCapacityFreedInPieces) {
  struct Case {
    std::string name;
    Duration quiet;
    int want_big, want_small;
  };
  const std::vector<Case> cases = {
      {"settling off", Duration::zero(), 0, 2},
      {"settling on", std::chrono::milliseconds(300), 2, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TestCluster cluster;
    AddNodes(cluster, 2);
    AddGang(cluster, "wave", 4, 4, 0, "", {"gpu-0", "gpu-0", "gpu-1", "gpu-1"});
    AddGang(cluster, "big", 2, 4);  // first in line by name (same priority and age)
    AddGang(cluster, "small", 2, 2);
    GangControllerOptions options;
    options.pass.head_of_line_after = Duration::max();
    options.settle.quiet = c.quiet;
    GangController controller = MakeController(cluster, options);
    controller.RunPass();
    for (int i : {0, 1}) {
      Pod done = MakePod(MemberName("wave", i))
                     .Namespace("ml")
                     .Uid("uid-" + MemberName("wave", i))
                     .Group("wave")
                     .Cpu("1")
                     .Gpu(4)
                     .NodeName("gpu-0")
                     .Phase("Succeeded");
      cluster.Add(done);
      controller.RunPass();
      cluster.clock.Advance(100ms);
    }
    cluster.clock.Advance(300ms);
    controller.RunPass();
    EXPECT_EQ(ReservedMembers(cluster, "big", 2), c.want_big);
    EXPECT_EQ(ReservedMembers(cluster, "small", 2), c.want_small);
    cluster.With([](ClusterState& state) { EXPECT_TRUE(state.CheckAccounting().ok()); });
  }
}

// Pods of schedulerName volcano joining a Kubernetes PodGroup
// (spec.schedulingGroup) are one muster gang, placed whole, in the queue its
// annotation names. The same kind of group for pods of another scheduler is
// that scheduler's, and a member whose PodGroup is missing waits for it
// rather than running as a gang of one.
TEST(GangControllerTest, AKubernetesPodGroupIsAGangOfItsVolcanoPods) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  cluster.Add(MakeQueue("research"));
  cluster.Add(MakePodGroup("train").Namespace("ml").MinMember(3).Queue("research").Kubernetes());
  cluster.Add(MakePodGroup("stock").Namespace("ml").MinMember(2).Kubernetes());
  auto member = [](std::string name, std::string group, std::string scheduler) {
    return MakePod(name)
        .Namespace("ml")
        .Uid("uid-" + name)
        .SchedulerName(scheduler)
        .Gpu(4)
        .SchedulingGroup(group);
  };
  for (int i = 0; i < 3; ++i) cluster.Add(member(MemberName("train", i), "train", "volcano"));
  for (int i = 0; i < 2; ++i) {
    cluster.Add(member(MemberName("stock", i), "stock", "default-scheduler"));
  }
  const Pod orphan = member("orphan-0", "missing", "volcano");
  cluster.Add(orphan);
  GangController controller = MakeController(cluster);
  controller.RunPass();

  EXPECT_EQ(ReservedMembers(cluster, "train", 3), 3) << "the whole gang";
  EXPECT_EQ(ReservedMembers(cluster, "stock", 2), 0) << "another scheduler's gang";
  EXPECT_FALSE(PlacementOf(cluster, "orphan-0").has_value());
  EXPECT_EQ(FilterPod(cluster, orphan),
            "muster: PodGroup scheduling.k8s.io/ml/missing does not exist: the pod waits for it");
  const std::string debug = controller.DebugJson();
  EXPECT_THAT(debug, ::testing::HasSubstr(R"("scheduling.k8s.io/ml/train")"));
  EXPECT_THAT(debug, ::testing::Not(::testing::HasSubstr("ml/stock")));
  EXPECT_THAT(debug, ::testing::Not(::testing::HasSubstr("podgroup-uid-orphan")));
  EXPECT_THAT(controller.QueuesDebugJson(),
              ::testing::HasSubstr(R"("name":"research","deserved":{"cpu":"0","memory":"0",)"
                                   R"("nvidia.com/gpu":"12"})"))
      << "its 12 GPUs count in queue research";
  cluster.With([](ClusterState& state) { EXPECT_TRUE(state.CheckAccounting().ok()); });
}

// A waiting plain pod is planned only while its queue takes new work: the
// other pods of its ReplicaSet running in a queue since deleted (or closed)
// make no room for it.
TEST(GangControllerTest, AWaitingPlainPodOfAQueueGoneOrClosedIsNotPlanned) {
  for (const bool closed : {false, true}) {
    SCOPED_TRACE(closed ? "closed" : "deleted");
    TestCluster cluster;
    AddNodes(cluster, 2);
    cluster.Add(MakeQueue("small").Capability(test::Res({{"cpu", "1"}})));
    auto owned = [](Pod pod) {
      pod.meta.owner_references.push_back(
          OwnerReference{.kind = "ReplicaSet", .name = "rs", .uid = "rs-uid", .controller = true});
      return pod;
    };
    const Pod running = owned(BoundTo(PlainPod("rs-a", "small", 1), "gpu-0"));
    const Pod waiting = owned(PlainPod("rs-b", "small", 1));
    cluster.Add(running);
    cluster.Add(waiting);
    GangController controller = MakeController(cluster);
    controller.RunPass();
    ASSERT_THAT(FilterPod(cluster, waiting), ::testing::HasSubstr("at its capability"));
    if (closed) {
      cluster.Add(MakeQueue("small").State("Closed"));
    } else {
      cluster.cache.DeleteQueue("small");
    }
    controller.RunPass();
    EXPECT_FALSE(PlacementOf(cluster, "rs-b").has_value());
    EXPECT_THAT(FilterPod(cluster, waiting),
                ::testing::HasSubstr(closed ? "is not Open" : "does not exist"));
  }
}

// A Volcano PodGroup of minMember 1 with minResources (Spark's, from its
// template) is admitted whole before any member starts: the driver waits
// while the PodGroup is Pending - its status says why - and is reserved by
// the pass that admits it.
TEST(GangControllerTest, ASparkPodGroupOfOneStartsOnlyOnceAdmitted) {
  TestCluster cluster;
  AddNodes(cluster, 1);  // 8 GPUs
  cluster.Add(MakePodGroup("spark").Namespace("ml").MinMember(1).MinResources(
      test::Res({{"cpu", "2"}, {"nvidia.com/gpu", "16"}})));
  const Pod driver = MakePod("spark-driver")
                         .Namespace("ml")
                         .Uid("uid-spark-driver")
                         .SchedulerName("volcano")
                         .Group("spark")
                         .Cpu("1");
  cluster.Add(driver);
  GangController controller = MakeController(cluster);
  controller.RunPass();
  EXPECT_THAT(FilterPod(cluster, driver),
              ::testing::HasSubstr("waits for admission to queue default"));
  controller.RunPass();
  EXPECT_FALSE(PlacementOf(cluster, "spark-driver").has_value()) << "16 GPUs do not fit 8";
  EXPECT_THAT(
      controller.DebugJson(),
      ::testing::HasSubstr(
          R"x("waitMessage":"not admitted: spec.minResources needs nvidia.com/gpu=16 (8 free)")x"));

  // The cluster grows: the PodGroup is admitted and its driver reserved.
  cluster.Add(MakeNode("gpu-1").Cpu("64").Memory("512Gi").Gpu(8).Pods(110));
  controller.RunPass();
  ASSERT_TRUE(PlacementOf(cluster, "spark-driver").has_value());
  EXPECT_EQ(FilterPod(cluster, driver), PlacementOf(cluster, "spark-driver")->node);
}

TEST(GangControllerTest, DebugJsonExplainsWaitingGangs) {
  TestCluster cluster;
  AddNodes(cluster, 1);
  AddGang(cluster, "big", 3, 4);
  GangController controller = MakeController(cluster);
  controller.RunPass();
  const std::string json = controller.DebugJson();
  EXPECT_THAT(json, ::testing::HasSubstr(R"("podGroup":"ml/big")"));
  EXPECT_THAT(json, ::testing::HasSubstr(R"("waitReason":"Unplaceable")"));
  EXPECT_THAT(json, ::testing::HasSubstr("on an empty cluster"));
}

// What an operator watches: reservations made and expired, gangs by phase,
// the admission-to-start wait, and partial-gang GPU-seconds (zero).
TEST(GangControllerTest, MetricsCountReservationsPhasesAndWaits) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  AddGang(cluster, "a", 2, 8);
  AddGang(cluster, "b", 2, 8);  // waits behind a
  ExtenderMetrics metrics;
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics);
  controller.RunPass();
  // a's members bind 300 ms after the reservation.
  cluster.clock.Advance(300ms);
  for (int i = 0; i < 2; ++i) {
    const std::string name = MemberName("a", i);
    cluster.Add(MakePod(name)
                    .Namespace("ml")
                    .Uid("uid-" + name)
                    .Group("a")
                    .Cpu("1")
                    .Gpu(8)
                    .NodeName(PlacementOf(cluster, name)->node)
                    .Phase("Running"));
  }
  controller.RunPass();
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  auto sample = [&](const std::string& name, std::map<std::string, std::string> labels = {}) {
    return fixture::FindSample(samples, name, labels).value_or(-1);
  };
  EXPECT_EQ(sample("muster_gang_reservations_total", {{"outcome", "made"}}), 1);
  EXPECT_EQ(sample("muster_gang_reservations_total", {{"outcome", "expired"}}), 0);
  EXPECT_EQ(sample("muster_gangs", {{"phase", "Running"}}), 1);
  EXPECT_EQ(sample("muster_gangs", {{"phase", "Inqueue"}}), 1);
  EXPECT_EQ(sample("muster_gang_wait_seconds_count"), 1);
  EXPECT_DOUBLE_EQ(sample("muster_gang_wait_seconds_sum"), 0.3);
  EXPECT_EQ(sample("muster_gang_partial_gpu_seconds_total"), 0);
}

// A Volcano Job's PodGroup comes before its pods: muster's reconciler
// creates them only once the PodGroup is Inqueue. Admission weighs
// spec.minResources against the free capacity with no pod in the cache.
TEST(GangControllerTest, AdmitsAPodGroupWithoutPodsWhenItsMinimumFits) {
  TestCluster cluster;
  AddNodes(cluster, 2);  // 16 GPUs
  cluster.Add(MakePodGroup("fits").Namespace("ml").MinMember(2).MinResources(
      test::Res({{"cpu", "2"}, {"nvidia.com/gpu", "16"}})));
  cluster.Add(MakePodGroup("too-big").Namespace("ml").MinMember(3).MinResources(
      test::Res({{"cpu", "3"}, {"nvidia.com/gpu", "24"}})));
  ExtenderMetrics metrics;
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics);
  controller.RunPass();
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  auto gangs = [&](const std::string& phase) {
    return fixture::FindSample(samples, "muster_gangs", {{"phase", phase}}).value_or(-1);
  };
  EXPECT_EQ(gangs("Inqueue"), 1);  // "fits": 16 of 16 GPUs
  EXPECT_EQ(gangs("Pending"), 1);  // "too-big": 24 GPUs > 16
}

}  // namespace
}  // namespace muster::extender
