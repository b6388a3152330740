// Conformance (issue 19): the rule itself, and that preemption and reclaim in
// RunPass never take a gang with a kube-system or system-critical member but
// take the next candidate instead.
#include "gang/conformance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gang/feasibility.h"
#include "gang/gang.h"
#include "gang/testing/builders.h"
#include "model/testing/builders.h"

namespace muster::gang {
namespace {

using muster::test::MakeNode;
using muster::test::MakePod;
using muster::test::PodBuilder;
using test::GangBuilder;
using test::MakeGang;
using test::MakeView;
using ::testing::HasSubstr;

const Time kNow = Time::FromUnixSeconds(100'000);

// The four kinds of pod every table below runs through.
struct Kind {
  std::string name;
  std::string namespace_ = "default";
  std::string priority_class;
  bool evictable;
};
const std::vector<Kind> kKinds = {
    {.name = "a kube-system pod", .namespace_ = "kube-system", .evictable = false},
    {.name = "a system-cluster-critical pod",
     .priority_class = "system-cluster-critical",
     .evictable = false},
    {.name = "a system-node-critical pod",
     .priority_class = "system-node-critical",
     .evictable = false},
    {.name = "a normal pod", .priority_class = "research-high", .evictable = true},
};

PodBuilder OfKind(const std::string& name, const Kind& kind) {
  return MakePod(name).Namespace(kind.namespace_).PriorityClass(kind.priority_class);
}

TEST(ConformanceTest, Pods) {
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(Evictable(OfKind("p", k).Build()), k.evictable);
  }
  struct Case {
    std::string name;
    Pod pod;
    bool want;
  };
  // Exact names, as Volcano compares them: near misses are ordinary pods.
  const std::vector<Case> near_misses = {
      {"a namespace that only starts with kube-system", MakePod("p").Namespace("kube-system-tools"),
       true},
      {"kube-public", MakePod("p").Namespace("kube-public"), true},
      {"another case of the class name", MakePod("p").PriorityClass("System-Node-Critical"), true},
      {"no class at all", MakePod("p"), true},
  };
  for (const Case& c : near_misses) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Evictable(c.pod), c.want);
  }
}

TEST(ConformanceTest, AGangWithACriticalMemberInAnyStateIsNotEvictable) {
  const PodBuilder critical = MakePod("g-9").PriorityClass("system-cluster-critical");
  struct Case {
    std::string name;
    Gang gang;
    bool want;
  };
  const std::vector<Case> cases = {
      {"every member normal", MakeGang("g").Bound(MakePod("g-0"), "n1").Pending(MakePod("g-1")),
       true},
      {"no members", MakeGang("g"), true},
      {"a bound critical member", MakeGang("g").Bound(MakePod("g-0"), "n1").Bound(critical, "n1"),
       false},
      {"a pending critical member", MakeGang("g").Bound(MakePod("g-0"), "n1").Pending(critical),
       false},
      {"a reserved critical member",
       MakeGang("g").Bound(MakePod("g-0"), "n1").Reserved(critical, "n2"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Evictable(c.gang), c.want);
  }
}

// ---------------------------------------------------------------------------
// RunPass.

Node GpuNode(const std::string& name) {
  return MakeNode(name).Cpu("64").Memory("512Gi").Gpu(8).Pods(110);
}

// A running gang of whole-node members, the first of them `first`, on `nodes`.
Gang Running(const std::string& name, int32_t priority, int64_t created_s, PodBuilder first,
             const std::vector<std::string>& nodes) {
  GangBuilder b = MakeGang(name)
                      .MinMember(static_cast<int32_t>(nodes.size()))
                      .Priority(priority)
                      .Created(Time::FromUnixSeconds(created_s));
  for (size_t i = 0; i < nodes.size(); ++i) {
    PodBuilder pod = i == 0 ? first : MakePod(name + "-" + std::to_string(i));
    b.Bound(pod.Cpu("4").Gpu(8), nodes[i]);
  }
  return b;
}

// The candidate the gang controller offers for a running gang, in `queue`
// when given.
VictimCandidate VictimOf(const Gang& g, const std::string& queue = "") {
  VictimCandidate v = test::VictimOf(g).value();
  if (!queue.empty()) v.queues = {queue};
  return v;
}

Gang Waiting(const std::string& name, int n, int32_t priority, const std::string& queue = "") {
  GangBuilder b = MakeGang(name).MinMember(n).Priority(priority).Created(Time::FromUnixSeconds(1));
  for (int i = 0; i < n; ++i) b.Pending(MakePod(name + "-" + std::to_string(i)).Cpu("4").Gpu(8));
  Gang g = b;
  if (!queue.empty()) g.queues = {queue};
  return g;
}

// Same queue: "cheap" (8 GPUs, the first choice by fewest GPUs) has one
// member of each kind; "next" (16 GPUs) is all normal. A critical member
// makes preemption take "next" instead.
TEST(ConformanceTest, PreemptionTakesTheNextCandidateOverAGangWithACriticalMember) {
  const std::vector<Node> nodes = {GpuNode("n1"), GpuNode("n2"), GpuNode("n3")};
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    const Gang cheap = Running("cheap", 1, 10, OfKind("cheap-0", k), {"n1"});
    const Gang next = Running("next", 1, 10, MakePod("next-0"), {"n2", "n3"});
    const Gang preemptor = Waiting("p", 1, 5);
    const PassResult r = RunPass(MakeView(nodes, {cheap, next}), {cheap, next, preemptor},
                                 {VictimOf(cheap), VictimOf(next)}, kNow, PassConfig{});
    ASSERT_TRUE(r.preemption.has_value());
    EXPECT_EQ(r.preemption->victims,
              std::vector<std::string>{k.evictable ? "default/cheap" : "default/next"});
  }
}

// The only candidate has a critical member: nothing is evicted, and the
// preemptor's wait says why preemption does not help.
TEST(ConformanceTest, NoPreemptionWhenOnlyCriticalGangsCouldMakeRoom) {
  const std::vector<Node> nodes = {GpuNode("n1"), GpuNode("n2")};
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    const Gang victim = Running("v", 1, 10, OfKind("v-0", k), {"n1", "n2"});
    const Gang preemptor = Waiting("p", 2, 5);
    const PassResult r = RunPass(MakeView(nodes, {victim}), {victim, preemptor}, {VictimOf(victim)},
                                 kNow, PassConfig{});
    EXPECT_EQ(r.preemption.has_value(), k.evictable);
    ASSERT_EQ(r.waits.size(), 1u);
    EXPECT_EQ(r.waits[0].reason, kWaitResources);
    if (k.evictable) {
      EXPECT_THAT(r.waits[0].message, ::testing::Not(HasSubstr("spares")));
    } else {
      EXPECT_THAT(r.waits[0].message,
                  HasSubstr("; preemption spares 1 gang with kube-system or system-critical pods"));
    }
  }
}

// Reclaim: queue a is owed 8 GPUs, queue b holds 24 and deserves 8. Reclaim
// takes b's youngest first ("young", with one member of each kind); a
// critical member makes it take "old" instead.
TEST(ConformanceTest, ReclaimTakesTheNextCandidateOverAGangWithACriticalMember) {
  const std::vector<Node> nodes = {GpuNode("n1"), GpuNode("n2"), GpuNode("n3")};
  const Resources gpus16{{std::string(kNvidiaGpu), 16000}, {"cpu", 1'000'000}};
  const QueueLimits queues = {
      {"a", QueueLimit{.allocated = Resources(), .deserved = gpus16}},
      {"b", QueueLimit{.allocated = Resources{{std::string(kNvidiaGpu), 24000}},
                       .deserved = Resources{{std::string(kNvidiaGpu), 8000}, {"cpu", 1'000'000}}}},
  };
  for (const Kind& k : kKinds) {
    SCOPED_TRACE(k.name);
    const Gang young = Running("young", 0, 20, OfKind("young-0", k), {"n1"});
    const Gang old = Running("old", 0, 10, MakePod("old-0"), {"n2"});
    const Gang other = Running("other", 0, 5, MakePod("other-0"), {"n3"});
    const Gang preemptor = Waiting("p", 1, 0, "a");
    const PassResult r =
        RunPass(MakeView(nodes, {young, old, other}), {young, old, other, preemptor},
                {VictimOf(young, "b"), VictimOf(old, "b"), VictimOf(other, "b")}, kNow,
                PassConfig{}, queues);
    ASSERT_TRUE(r.preemption.has_value());
    const std::vector<std::string> want = {k.evictable ? "default/young" : "default/old"};
    EXPECT_EQ(r.preemption->victims, want);
    EXPECT_EQ(r.preemption->reclaimed, want);
  }
}

}  // namespace
}  // namespace muster::gang
