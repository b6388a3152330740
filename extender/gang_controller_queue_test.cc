// The gang controller over a real cache (no API client unless said) with
// queues: fair share by weight, reclaim, network tiers, conformance of
// preemption and reclaim, and the answers to PodGroups and Queues that do
// not decode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "extender/gang_controller.h"
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
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics);
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
  GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics);
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
    GangInputs in = BuildGangInputs(state, {}, {}, cluster.clock.Now());
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

// Each member carries its pod's request as the cache computed it when it
// indexed the pod (the pass reads it for queue shares, victims and slots,
// and no longer computes it per member per pass): init containers above
// the containers, overhead, GPUs, bound or pending alike.
TEST(GangControllerTest, MembersCarryTheirPodsRequests) {
  TestCluster cluster;
  AddNodes(cluster, 2);
  cluster.Add(MakePodGroup("mixed").Namespace("ml").MinMember(3));
  const Resources big_init{{std::string(kCpu), 4000}};
  const std::vector<Pod> pods = {
      MakePod("mixed-0")
          .Namespace("ml")
          .Uid("u0")
          .Group("mixed")
          .Cpu("1")
          .Gpu(2)
          .NodeName("gpu-0")
          .Phase("Running"),
      MakePod("mixed-1").Namespace("ml").Uid("u1").Group("mixed").Cpu("1").InitContainer(big_init),
      MakePod("mixed-2").Namespace("ml").Uid("u2").Group("mixed").Memory("1Gi").Overhead(
          Resources{{std::string(kCpu), 250}}),
  };
  for (const Pod& pod : pods) cluster.Add(pod);
  cluster.With([&](ClusterState& state) {
    GangInputs in = BuildGangInputs(state, {}, {}, cluster.clock.Now());
    const auto g = std::ranges::find(in.gangs, "ml/mixed", &gang::Gang::key);
    ASSERT_NE(g, in.gangs.end());
    ASSERT_EQ(g->members.size(), pods.size());
    for (size_t i = 0; i < pods.size(); ++i) {
      SCOPED_TRACE(pods[i].meta.name);
      EXPECT_EQ(g->members[i].request, pods[i].EffectiveRequest());
      EXPECT_FALSE(g->members[i].request.empty());
    }
    EXPECT_EQ(g->members[1].request.Get(kCpu), 4000) << "the init container's 4 CPUs";
  });
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
    GangController controller(&cluster.cache, nullptr, cluster.clock, {}, &metrics);
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

// The Events `api` holds, one line each ("namespace kind name type reason:
// message"), sorted.
std::vector<std::string> EventLines(const kube::testing::FakeApi& api) {
  std::vector<std::string> out;
  for (const std::string& json : api.List(kube::ResourceRef::Core("events"))) {
    StatusOr<Event> e = kube::DecodeEvent(json);
    if (!e.ok()) continue;
    out.push_back(e->meta.namespace_ + " " + e->involved_object.kind + " " +
                  e->involved_object.name + " " + e->type + " " + e->reason + ": " + e->message);
  }
  std::sort(out.begin(), out.end());
  return out;
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
  auto events = [&] { return EventLines(*api); };
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
