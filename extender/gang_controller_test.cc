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

using fixture::FilterArgs;
using fixture::TestCluster;
using test::MakeNode;
using test::MakePod;
using test::MakePodGroup;
using test::MakeQueue;
using test::PodBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using namespace std::chrono_literals;

// `n` nodes gpu-0 .. gpu-<n-1> of 8 GPUs.
void AddNodes(TestCluster& cluster, int n) {
  for (int i = 0; i < n; ++i) {
    cluster.Add(MakeNode("gpu-" + std::to_string(i)).Cpu("64").Memory("512Gi").Gpu(8).Pods(110));
  }
}

std::string MemberName(std::string_view group, int i) {
  return std::string(group) + "-" + std::to_string(i);
}

// PodGroup ml/<group> with minMember `members` in `queue`, and its pods of
// `gpus` each, pending or bound to `nodes` (one per member).
void AddGang(TestCluster& cluster, std::string_view group, int members, int gpus, int priority = 0,
             const std::string& queue = "", const std::vector<std::string>& nodes = {}) {
  cluster.Add(MakePodGroup(std::string(group)).Namespace("ml").MinMember(members).Queue(queue));
  for (int i = 0; i < members; ++i) {
    const std::string name = MemberName(group, i);
    PodBuilder pod = MakePod(name)
                         .Namespace("ml")
                         .Uid("uid-" + name)
                         .Group(group)
                         .Priority(priority)
                         .Cpu("1")
                         .Gpu(gpus);
    if (static_cast<size_t>(i) < nodes.size()) pod.NodeName(nodes[i]).Phase("Running");
    cluster.Add(pod);
  }
}

std::optional<Placement> PlacementOf(TestCluster& cluster, std::string_view pod) {
  std::optional<Placement> placement;
  cluster.With(
      [&](ClusterState& state) { placement = state.PlacementOf("uid-" + std::string(pod)); });
  return placement;
}

int ReservedMembers(TestCluster& cluster, std::string_view group, int members) {
  int reserved = 0;
  for (int i = 0; i < members; ++i) {
    std::optional<Placement> p = PlacementOf(cluster, MemberName(group, i));
    reserved += p.has_value() && p->assumed ? 1 : 0;
  }
  return reserved;
}

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

GangController MakeController(TestCluster& cluster, GangControllerOptions options = {}) {
  return GangController(&cluster.cache, /*client=*/nullptr, cluster.clock, options,
                        /*registry=*/nullptr);
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

// A slow API server sees one write per object: later patches and statuses
// replace queued ones; events and evictions are all kept.
TEST(GangControllerTest, PendingWritesCoalescePerObject) {
  PendingWrites pending;
  auto status = [](std::string phase) {
    PodGroupStatus s;
    s.phase = std::move(phase);
    return s;
  };
  GangWrites first;
  first.pod_patches = {{.namespace_ = "ml", .name = "a-0", .uid = "u0", .body = "old"}};
  first.statuses = {{"ml/a", "ml", "a", status("Pending")}};
  first.events.push_back(Event{.reason = "GangReserved"});
  GangWrites second;
  second.pod_patches = {{.namespace_ = "ml", .name = "a-0", .uid = "u0", .body = "new"},
                        {.namespace_ = "ml", .name = "a-1", .uid = "u1", .body = "b"}};
  second.statuses = {{"ml/a", "ml", "a", status("Inqueue")}};
  second.events.push_back(Event{.reason = "GangReservationExpired"});
  second.evictions = {{"ml", "lo-0", "ul"}};
  pending.Add(first);
  pending.Add(second);
  const GangWrites out = pending.Take();
  EXPECT_TRUE(pending.Empty());
  ASSERT_EQ(out.pod_patches.size(), 2u);
  EXPECT_EQ(out.pod_patches[0].body, "new");
  ASSERT_EQ(out.statuses.size(), 1u);
  EXPECT_EQ(out.statuses[0].status.phase, "Inqueue");
  EXPECT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.evictions.size(), 1u);
}

// Golden JSON patches: the gate is tested before it goes; a pin sets the
// (tested absent) affinity to the reserved node in the same update.
TEST(GangControllerTest, RemoveGatePatchGolden) {
  EXPECT_EQ(RemoveGatePatch(1, kGangGate),
            R"([{"op":"test","path":"/spec/schedulingGates/1/name","value":"muster.io/gang"},)"
            R"({"op":"remove","path":"/spec/schedulingGates/1"}])");
  EXPECT_EQ(
      RemoveGatePatch(0, kGangGate, "gpu-a-3"),
      R"([{"op":"test","path":"/spec/affinity","value":null},)"
      R"({"op":"add","path":"/spec/affinity","value":{"nodeAffinity":)"
      R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
      R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu-a-3"]}]}]}}}},)"
      R"({"op":"test","path":"/spec/schedulingGates/0/name","value":"muster.io/gang"},)"
      R"({"op":"remove","path":"/spec/schedulingGates/0"}])");
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
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics.registry());
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
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics.registry());
  controller.RunPass();
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  auto gangs = [&](const std::string& phase) {
    return fixture::FindSample(samples, "muster_gangs", {{"phase", phase}}).value_or(-1);
  };
  EXPECT_EQ(gangs("Inqueue"), 1);  // "fits": 16 of 16 GPUs
  EXPECT_EQ(gangs("Pending"), 1);  // "too-big": 24 GPUs > 16
}

// Queues (issue #6): gangs are reserved in fair-share order, weight 1:3
// gives 1 node to 3, and gangs of missing or closed queues wait with why.
TEST(GangControllerTest, QueuesShareTheClusterByWeightAndHoldGangsTheyDoNotAdmit) {
  TestCluster cluster;
  AddNodes(cluster, 4);
  cluster.Add(MakeQueue("q1").Weight(1));
  cluster.Add(MakeQueue("q3").Weight(3));
  cluster.Add(MakeQueue("shut").State("Closed"));
  // Gangs of two 4-GPU members: one node each.
  for (std::string g : {"a1", "a2", "a3"}) AddGang(cluster, g, 2, 4, 0, "q1");
  for (std::string g : {"b1", "b2", "b3", "b4"}) AddGang(cluster, g, 2, 4, 0, "q3");
  AddGang(cluster, "lost", 2, 1, 0, "nope");
  AddGang(cluster, "closed", 2, 1, 0, "shut");
  GangController controller = MakeController(cluster);
  controller.RunPass();
  auto reserved = [&](std::vector<std::string> gangs) {
    int n = 0;
    for (const std::string& g : gangs) n += ReservedMembers(cluster, g, 2);
    return n;
  };
  EXPECT_EQ(reserved({"a1", "a2", "a3"}), 2);
  EXPECT_EQ(reserved({"b1", "b2", "b3", "b4"}), 6);
  EXPECT_EQ(reserved({"lost", "closed"}), 0);
  const std::string gangs = controller.DebugJson();
  EXPECT_THAT(gangs,
              ::testing::HasSubstr(
                  R"("waitReason":"QueueNotFound","waitMessage":"queue \"nope\" does not exist)"));
  EXPECT_THAT(gangs, ::testing::HasSubstr(R"("waitReason":"QueueClosed")"));
  EXPECT_THAT(gangs, ::testing::HasSubstr(R"("queue":"q3","position":)"));
  EXPECT_THAT(controller.QueuesDebugJson(),
              ::testing::HasSubstr(
                  R"("name":"q3","deserved":{"cpu":"8","memory":"0","nvidia.com/gpu":"24"})"));
}

// A queue below its deserved share for 5 s takes back a whole gang from a
// queue above its own, never pushing that queue below its share.
TEST(GangControllerTest, ReclaimEvictsWholeGangsOfAnOverShareQueue) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  cluster.Add(MakeQueue("busy"));
  cluster.Add(MakeQueue("late"));
  AddGang(cluster, "x", 2, 4, 0, "busy", {"gpu-0", "gpu-0"});
  AddGang(cluster, "y", 2, 4, 0, "busy", {"gpu-1", "gpu-1"});
  AddGang(cluster, "z", 2, 4, 0, "late");
  ExtenderMetrics metrics;
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics.registry());
  // Short of its share for less than --queue-reclaim-after: the order alone
  // may serve it yet.
  controller.RunPass();
  EXPECT_EQ(fixture::FindSample(fixture::ParseMetricsText(metrics.Text()),
                                "muster_gang_preemptions_total", {})
                .value_or(-1),
            0);
  cluster.clock.Advance(5s);
  controller.RunPass();
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  auto sample = [&](const std::string& name, std::map<std::string, std::string> labels = {}) {
    return fixture::FindSample(samples, name, labels).value_or(-1);
  };
  EXPECT_EQ(sample("muster_queue_reclaims_total", {{"queue", "busy"}}), 1);
  EXPECT_EQ(sample("muster_gang_preemptions_total"), 1);
  EXPECT_EQ(sample("muster_queue_deserved", {{"queue", "late"}, {"resource", "nvidia.com/gpu"}}),
            8);
  EXPECT_EQ(sample("muster_queue_allocated", {{"queue", "busy"}, {"resource", "nvidia.com/gpu"}}),
            16);
  EXPECT_EQ(
      sample("muster_queue_pending_demand", {{"queue", "late"}, {"resource", "nvidia.com/gpu"}}),
      8);
  EXPECT_EQ(sample("muster_queue_share", {{"queue", "busy"}}), 2);
  EXPECT_EQ(sample("muster_queue_share", {{"queue", "late"}}), 0);
  // The grace period: no second eviction while the first victim goes.
  controller.RunPass();
  EXPECT_EQ(fixture::FindSample(fixture::ParseMetricsText(metrics.Text()),
                                "muster_gang_preemptions_total", {})
                .value_or(-1),
            1);
}

// Two gangs of an owed queue reclaim in consecutive passes, before the watch
// shows the first one's victims going: the second takes other victims, and
// the evicted pods no longer count as their queue's.
TEST(GangControllerTest, ConsecutiveReclaimsTakeDistinctVictims) {
  TestCluster cluster;
  AddNodes(cluster, 4);
  cluster.Add(MakeQueue("busy"));
  cluster.Add(MakeQueue("late"));
  for (int i = 0; i < 4; ++i) {
    const std::string node = "gpu-" + std::to_string(i);
    AddGang(cluster, "b" + std::to_string(i), 2, 4, 0, "busy", {node, node});
  }
  AddGang(cluster, "z1", 2, 4, 0, "late");
  AddGang(cluster, "z2", 2, 4, 0, "late");
  ExtenderMetrics metrics;
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics.registry());
  controller.RunPass();
  cluster.clock.Advance(5s);
  controller.RunPass();  // z1 reclaims one of busy's gangs
  controller.RunPass();  // z2 another: the cache still shows z1's victims bound
  controller.RunPass();  // nothing more: busy is down to its deserved share
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  auto sample = [&](const std::string& name, std::map<std::string, std::string> labels = {}) {
    return fixture::FindSample(samples, name, labels).value_or(-1);
  };
  EXPECT_EQ(sample("muster_gang_preemptions_total"), 2);
  EXPECT_EQ(sample("muster_queue_reclaims_total", {{"queue", "busy"}}), 2);
  EXPECT_EQ(sample("muster_queue_deserved", {{"queue", "busy"}, {"resource", "nvidia.com/gpu"}}),
            16);
  // 32 bound, two distinct gangs of 8 on their way out.
  EXPECT_EQ(sample("muster_queue_allocated", {{"queue", "busy"}, {"resource", "nvidia.com/gpu"}}),
            16);
}

// Network tiers (issue #7): with --network-tiers, a gang is packed into one
// rack even when best fit alone would split it over two.
TEST(GangControllerTest, NetworkTiersPackAGangIntoOneRack) {
  auto rack_of = [](const std::optional<Placement>& p) { return p ? p->node.substr(0, 1) : "?"; };
  for (const bool tiers : {false, true}) {
    TestCluster cluster;
    for (std::string name : {"a1", "a2", "b1", "b2"}) {
      cluster.Add(MakeNode(name).Cpu("64").Memory("512Gi").Gpu(8).Pods(110).Label(
          "net/rack", name.substr(0, 1)));
    }
    // Half of a1 and of b1 is busy: best fit alone puts the two members there.
    AddGang(cluster, "busy", 2, 4, 0, "", {"a1", "b1"});
    AddGang(cluster, "g", 2, 4);
    GangControllerOptions options;
    if (tiers) options.network_tiers = *topology::ParseNetworkTiers("rack=net/rack").tiers;
    GangController controller = MakeController(cluster, options);
    controller.RunPass();
    const std::string r0 = rack_of(PlacementOf(cluster, "g-0"));
    const std::string r1 = rack_of(PlacementOf(cluster, "g-1"));
    if (tiers) {
      EXPECT_EQ(r0, r1) << "one rack";
    } else {
      EXPECT_NE(r0, r1) << "best fit alone splits it (what the tiers fix)";
    }
  }
}

// Conformance (issue 19): one member of each kind in the gang preemption (and
// reclaim) would take first. A kube-system or system-critical member keeps
// the whole gang running, and the next candidate is evicted instead. (The
// API server would also give a system-critical pod its class's priority;
// here the class alone decides.)
struct ConformanceKind {
  std::string name;
  std::string namespace_;
  std::string priority_class;
  bool evictable;
};
const std::vector<ConformanceKind> kConformanceKinds = {
    {"a kube-system pod", "kube-system", "", false},
    {"a system-cluster-critical pod", "ml", "system-cluster-critical", false},
    {"a system-node-critical pod", "ml", "system-node-critical", false},
    {"a normal pod", "ml", "", true},
};

// PodGroup <ns>/<group> of whole-node members bound to `nodes`, the first of
// them of `first`'s class, in `queue`.
void AddRunningGang(TestCluster& cluster, const std::string& ns, std::string_view group,
                    int priority, const std::string& queue, const std::vector<std::string>& nodes,
                    const std::string& first_class = "") {
  cluster.Add(MakePodGroup(std::string(group))
                  .Namespace(ns)
                  .MinMember(static_cast<int32_t>(nodes.size()))
                  .Queue(queue));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string name = MemberName(group, static_cast<int>(i));
    cluster.Add(MakePod(name)
                    .Namespace(ns)
                    .Uid("uid-" + name)
                    .Group(group)
                    .Priority(priority)
                    .PriorityClass(i == 0 ? first_class : "")
                    .Cpu("1")
                    .Gpu(8)
                    .NodeName(nodes[i])
                    .Phase("Running"));
  }
}

// PodGroup ml/<group> of one gated 8-GPU pod (an ungated single is left to
// kube-scheduler, gated it is the gang controller's to place).
void AddGatedSingle(TestCluster& cluster, std::string_view group, int priority,
                    const std::string& queue = "") {
  cluster.Add(MakePodGroup(std::string(group)).Namespace("ml").MinMember(1).Queue(queue));
  const std::string name = MemberName(group, 0);
  Pod pod = MakePod(name).Namespace("ml").Uid("uid-" + name).Group(group).Priority(priority).Gpu(8);
  pod.spec.scheduling_gates.emplace_back(kGangGate);
  cluster.Add(pod);
}

// The keys of the gangs a pass over the controller's inputs would evict
// (the queue step, then gang::RunPass, as GangController::RunPass does, but
// without the reclaim hysteresis), and whether the controller offered `key`
// as evictable.
struct Chosen {
  std::vector<std::string> victims;
  std::optional<bool> evictable;
};
Chosen ChooseVictims(TestCluster& cluster, const std::string& key) {
  Chosen out;
  cluster.With([&](ClusterState& state) {
    GangInputs in = BuildGangInputs(state, {}, {}, {}, cluster.clock.Now());
    for (const gang::VictimCandidate& v : in.victims) {
      if (v.key == key) out.evictable = v.evictable;
    }
    QueueStep queues = RunQueueStep(in.queues, in.free, in.gangs, in.victims);
    const gang::PassResult r =
        gang::RunPass(in.view, in.gangs, in.victims, cluster.clock.Now(), {}, queues.limits);
    if (r.preemption) out.victims = r.preemption->victims;
  });
  return out;
}

TEST(GangControllerTest, PreemptionNeverEvictsAGangWithAKubeSystemOrCriticalMember) {
  for (const ConformanceKind& k : kConformanceKinds) {
    SCOPED_TRACE(k.name);
    TestCluster cluster;
    AddNodes(cluster, 3);
    // "cheap" (8 GPUs) goes before "next" (16): the fewest GPUs first.
    AddRunningGang(cluster, k.namespace_, "cheap", 1, "", {"gpu-0"}, k.priority_class);
    AddRunningGang(cluster, "ml", "next", 1, "", {"gpu-1", "gpu-2"});
    AddGatedSingle(cluster, "hi", 5);
    const std::string cheap = k.namespace_ + "/cheap";
    const Chosen chosen = ChooseVictims(cluster, cheap);
    EXPECT_EQ(chosen.evictable, k.evictable);
    EXPECT_EQ(chosen.victims, std::vector<std::string>{k.evictable ? cheap : "ml/next"});
    // The controller itself evicts the same. Without an API client nothing
    // is written, but the next pass no longer counts the evicted pods in
    // the queue: 8 of cheap's GPUs leave, or 16 of next's.
    ExtenderMetrics metrics;
    GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics.registry());
    controller.RunPass();
    controller.RunPass();
    const auto samples = fixture::ParseMetricsText(metrics.Text());
    EXPECT_EQ(fixture::FindSample(samples, "muster_gang_preemptions_total", {}).value_or(-1), 1);
    EXPECT_EQ(fixture::FindSample(samples, "muster_queue_allocated",
                                  {{"queue", "default"}, {"resource", "nvidia.com/gpu"}})
                  .value_or(-1),
              k.evictable ? 16 : 8);
  }
}

TEST(GangControllerTest, ReclaimNeverTakesAGangWithAKubeSystemOrCriticalMember) {
  for (const ConformanceKind& k : kConformanceKinds) {
    SCOPED_TRACE(k.name);
    TestCluster cluster;
    AddNodes(cluster, 3);
    cluster.Add(MakeQueue("busy"));
    cluster.Add(MakeQueue("late"));
    // Same priority and age: reclaim takes "a" before "b" (by key; so does
    // "kube-system/a"). busy deserves 16 of 24 GPUs: one gang may go.
    AddRunningGang(cluster, k.namespace_, "a", 0, "busy", {"gpu-0"}, k.priority_class);
    AddRunningGang(cluster, "ml", "b", 0, "busy", {"gpu-1"});
    AddRunningGang(cluster, "ml", "c", 0, "busy", {"gpu-2"});
    AddGatedSingle(cluster, "z", 0, "late");
    const std::string a = k.namespace_ + "/a";
    const Chosen chosen = ChooseVictims(cluster, a);
    EXPECT_EQ(chosen.evictable, k.evictable);
    EXPECT_EQ(chosen.victims, std::vector<std::string>{k.evictable ? a : "ml/b"});
  }
}

// A PodGroup and a Queue the CRDs accept and muster cannot decode: each
// is answered on the object once (the PodGroup's status and an Event, the
// Queue an Event in "default"), a gang of the Queue waits naming its
// problem, and a restarted extender whose PodGroup already says it writes
// nothing again.
TEST(GangControllerTest, AnswersAPodGroupAndAQueueThatDoNotDecodeOnce) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  auto api = std::make_shared<kube::testing::FakeApi>();
  const auto group_ref = kube::PodGroupsRef().WithNamespace("ml").WithName("bad");
  api->Put(group_ref, R"({"metadata":{"name":"bad","namespace":"ml","uid":"uid-bad"},)"
                      R"("spec":{"minMember":2,"minResources":{"nvidia.com/gpu":"lots"}}})");
  const std::string group_problem =
      R"(spec.minResources["nvidia.com/gpu"]: quantity "lots" of nvidia.com/gpu is invalid)";
  const std::string queue_problem = R"(spec.capability.cpu: quantity "-1" of cpu is negative)";
  BrokenObject group{.namespace_ = "ml",
                     .name = "bad",
                     .uid = "uid-bad",
                     .resource_version = "5",
                     .problem = group_problem,
                     .status = PodGroupStatus{}};
  cluster.cache.MarkPodGroupBroken(group);
  cluster.cache.MarkQueueBroken(
      {.name = "negative", .uid = "uid-q", .resource_version = "6", .problem = queue_problem});
  AddGang(cluster, "waits", 2, 1, 0, "negative");
  kube::Client client(api, kube::ClientConfig{});
  auto events = [&] {
    std::vector<std::string> out;
    for (const std::string& json : api->List(kube::ResourceRef::Core("events"))) {
      StatusOr<Event> e = kube::DecodeEvent(json);
      if (!e.ok()) continue;
      out.push_back(e->meta.namespace_ + " " + e->involved_object.kind + " " +
                    e->involved_object.name + " " + e->type + " " + e->reason + ": " + e->message);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  {
    GangController controller(&cluster.cache, &client, cluster.clock, {}, nullptr);
    controller.RunPass();
    controller.RunPass();  // nothing again
    EXPECT_THAT(events(),
                ElementsAre("default Queue negative Warning InvalidSpec: " + queue_problem,
                            "ml PodGroup bad Warning InvalidSpec: " + group_problem));
    StatusOr<PodGroupStatus> status = kube::DecodePodGroupStatusOf(*api->Get(group_ref));
    ASSERT_TRUE(status.ok()) << status.status();
    EXPECT_EQ(status->phase, "Pending");
    ASSERT_EQ(status->conditions.size(), 1u);
    EXPECT_EQ(status->conditions[0].type, "Unschedulable");
    EXPECT_EQ(status->conditions[0].reason, "InvalidSpec");
    EXPECT_EQ(status->conditions[0].message, group_problem);
    EXPECT_THAT(controller.DebugJson(),
                ::testing::HasSubstr(R"("waitMessage":"queue \"negative\" cannot be read: )" +
                                     std::string(R"(spec.capability.cpu: quantity \"-1\")")));
  }
  // A restarted extender: the PodGroup says it already; the Queue's Event
  // (kept nowhere on the Queue) is told once per process.
  group.status = *kube::DecodePodGroupStatusOf(*api->Get(group_ref));
  cluster.cache.MarkPodGroupBroken(group);
  GangController restarted(&cluster.cache, &client, cluster.clock, {}, nullptr);
  restarted.RunPass();
  EXPECT_EQ(events().size(), 3u);
  // A new problem is a new answer.
  group.problem = "spec.minMember: integer 3000000000 out of range";
  cluster.cache.MarkPodGroupBroken(group);
  restarted.RunPass();
  EXPECT_EQ(events().size(), 4u);
  EXPECT_EQ(kube::DecodePodGroupStatusOf(*api->Get(group_ref))->conditions[0].message,
            group.problem);
}

}  // namespace
}  // namespace muster::extender
