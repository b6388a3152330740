// PlanWrites tables: what a pass writes, per kind; the slots that coalesce
// writes to one object; a gang gone leaves nothing behind; a write that
// failed is planned again; a settled gang is planned again once its PodGroup
// or members change.
#include "extender/gang_writes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using gang::MemberState;
using test::MakePod;
using test::MakePodGroup;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using namespace std::chrono_literals;

// One member: its pod (gated or not, with an affinity of its own or not) and
// its state before the pass.
struct MemberSpec {
  std::string name;
  MemberState state = MemberState::kPending;
  std::string node;
  bool gated = true;
  bool affinity = false;
};

// What one pass saw and decided, built gang by gang.
struct Pass {
  GangInputs inputs;
  QueueStep queues;
  gang::PassResult result;
  std::vector<std::string> applied;
  Time now = Time() + 1000s;

  // PodGroup ml/<name> (minMember = members) in queue "default".
  gang::Gang& AddGang(const std::string& name, const std::vector<MemberSpec>& members,
                      PodGroupApi api = PodGroupApi::kVolcano) {
    PodGroup group =
        MakePodGroup(name).Namespace("ml").MinMember(static_cast<int32_t>(members.size()));
    group.api = api;
    const std::string key = group.GangKey();
    gang::Gang g{.key = key, .spec = group.spec, .created = group.meta.creation_timestamp};
    for (const MemberSpec& m : members) {
      Pod pod = MakePod(m.name).Namespace("ml").Uid("uid-" + m.name).Group(name);
      if (m.gated) pod.spec.scheduling_gates.emplace_back(kGangSchedulingGate);
      if (m.affinity) pod.spec.affinity.emplace();
      g.members.push_back(
          {.pod = std::make_shared<const Pod>(std::move(pod)), .state = m.state, .node = m.node});
    }
    inputs.groups.emplace(key, std::make_shared<const PodGroup>(group));
    queues.queue_of[key] = "default";
    inputs.gangs.push_back(std::move(g));
    return inputs.gangs.back();
  }
  // The pass reserves `members` of the gang on `node` (applied).
  void Reserve(const std::string& name, const std::vector<std::string>& members,
               const std::string& node, PodGroupApi api = PodGroupApi::kVolcano) {
    gang::GangPlan plan{.key = GangKey(api, "ml", name)};
    for (const std::string& m : members) {
      plan.reserve.push_back({.pod_uid = "uid-" + m, .pod_name = m, .node = node});
    }
    result.plans.push_back(plan);
    applied.push_back(plan.key);
  }
  WritePlan Plan(WriteMemory& memory, const WriteOptions& options = {}) const {
    return PlanWrites(
        {.inputs = inputs, .queues = queues, .result = result, .applied = applied, .now = now},
        options, memory);
  }
};

template <typename T>
std::vector<T> Of(const WritePlan& plan) {
  std::vector<T> out;
  for (const GangWrite& w : plan.writes) {
    if (const T* t = std::get_if<T>(&w)) out.push_back(*t);
  }
  return out;
}

std::vector<std::string> EventReasons(const WritePlan& plan) {
  std::vector<std::string> out;
  for (const CreateEvent& e : Of<CreateEvent>(plan)) out.push_back(e.event.reason);
  return out;
}

// Waking a reserved member, by its pod and the options.
struct WakeCase {
  std::string name;
  MemberSpec member;
  bool pin_members;
  std::string want;  // "lift", "lift+pin" or "annotate"
};
const std::vector<WakeCase> kWakeCases = {
    {"gated, no affinity: lifted and pinned", {.name = "a-0"}, true, "lift+pin"},
    {"pinning off", {.name = "a-0"}, false, "lift"},
    {"an affinity of its own is kept", {.name = "a-0", .affinity = true}, true, "lift"},
    {"ungated: touched", {.name = "a-0", .gated = false}, true, "annotate"},
};

TEST(PlanWritesTest, WakesTheMembersAPassReserved) {
  for (const WakeCase& c : kWakeCases) {
    SCOPED_TRACE(c.name);
    Pass pass;
    pass.AddGang("a", {c.member});
    pass.Reserve("a", {"a-0"}, "gpu-3");
    WriteMemory memory;
    const WritePlan plan = pass.Plan(memory, {.pin_members = c.pin_members});
    const auto lifts = Of<LiftGate>(plan);
    const auto touches = Of<AnnotateReservedNode>(plan);
    if (c.want == "annotate") {
      ASSERT_THAT(lifts, IsEmpty());
      ASSERT_EQ(touches.size(), 1u);
      EXPECT_EQ(touches[0].node, "gpu-3");
      EXPECT_EQ(touches[0].uid, "uid-a-0");
    } else {
      ASSERT_THAT(touches, IsEmpty());
      ASSERT_EQ(lifts.size(), 1u);
      EXPECT_EQ(lifts[0].node, "gpu-3");
      EXPECT_EQ(lifts[0].gate_index, 0u);
      EXPECT_EQ(lifts[0].pin, c.want == "lift+pin");
    }
    EXPECT_EQ(memory.gangs.at("ml/a").members.at("uid-a-0").woken_on, "gpu-3");
    // One bind to come (the PodGroup status and Event writes are not binds).
    EXPECT_EQ(BindsAhead(plan.writes), 1);
    // Once woken, not again.
    pass.result.plans.clear();
    pass.applied.clear();
    gang::Member& member = pass.inputs.gangs[0].members.Edit()[0];
    member.state = MemberState::kReserved;
    member.node = "gpu-3";
    const WritePlan next = pass.Plan(memory);
    EXPECT_THAT(Of<LiftGate>(next), IsEmpty());
    EXPECT_THAT(Of<AnnotateReservedNode>(next), IsEmpty());
    EXPECT_EQ(BindsAhead(next.writes), 0);
  }
}

TEST(PlanWritesTest, AReservationWritesTheStatusAndAnEventAndExpiryAnother) {
  Pass pass;
  pass.AddGang("a", {{.name = "a-0"}, {.name = "a-1"}});
  pass.Reserve("a", {"a-0", "a-1"}, "gpu-0");
  WriteMemory memory;
  const WritePlan plan = pass.Plan(memory, {.reservation_timeout = 60s});
  const auto statuses = Of<PodGroupStatusWrite>(plan);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].key, "ml/a");
  EXPECT_EQ(statuses[0].status.phase, kPodGroupInqueue);
  EXPECT_THAT(EventReasons(plan), ElementsAre("GangReserved"));
  EXPECT_EQ(Of<CreateEvent>(plan)[0].event.message, "reserved 2 members: gpu-0 x2");
  ASSERT_EQ(plan.gangs.size(), 1u);
  EXPECT_EQ(plan.gangs[0].reserved, 2);
  EXPECT_EQ(memory.gangs.at("ml/a").reserved_since, pass.now);

  Pass expired;
  expired.AddGang("a", {{.name = "a-0", .state = MemberState::kReserved, .node = "gpu-0"},
                        {.name = "a-1", .state = MemberState::kReserved, .node = "gpu-0"}});
  expired.result.expired = {"ml/a"};
  const WritePlan after = expired.Plan(memory, {.reservation_timeout = 60s});
  EXPECT_THAT(EventReasons(after), ElementsAre("GangReservationExpired"));
  EXPECT_THAT(Of<CreateEvent>(after)[0].event.message, ::testing::HasSubstr("within 1m0s"));
  EXPECT_FALSE(memory.gangs.at("ml/a").reserved_since.has_value());
}

// Kubernetes' own PodGroup: kube-scheduler owns its status, so a pass
// writes none; its Events name the scheduling.k8s.io object.
TEST(PlanWritesTest, AKubernetesPodGroupGetsEventsButNoStatusWrite) {
  Pass pass;
  pass.AddGang("a", {{.name = "a-0", .gated = false}, {.name = "a-1", .gated = false}},
               PodGroupApi::kKubernetes);
  pass.Reserve("a", {"a-0", "a-1"}, "gpu-0", PodGroupApi::kKubernetes);
  WriteMemory memory;
  const WritePlan plan = pass.Plan(memory);
  EXPECT_THAT(Of<PodGroupStatusWrite>(plan), IsEmpty());
  EXPECT_EQ(Of<AnnotateReservedNode>(plan).size(), 2u) << "its members are woken all the same";
  ASSERT_THAT(EventReasons(plan), ElementsAre("GangReserved"));
  const ObjectReference about = Of<CreateEvent>(plan)[0].event.involved_object;
  EXPECT_EQ(about.api_version, "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(about.kind, "PodGroup");
  EXPECT_EQ(about.name, "a");
  ASSERT_EQ(plan.gangs.size(), 1u);
  EXPECT_EQ(plan.gangs[0].key, "scheduling.k8s.io/ml/a");
  EXPECT_EQ(plan.gangs[0].reserved, 2);

  // One that does not decode: the Event alone, no condition patch.
  Pass broken;
  broken.inputs.broken_groups.emplace(
      "scheduling.k8s.io/ml/b", BrokenObject{.namespace_ = "ml",
                                             .name = "b",
                                             .api = PodGroupApi::kKubernetes,
                                             .uid = "uid-b",
                                             .problem = "spec.schedulingPolicy: is required"});
  const WritePlan answered = broken.Plan(memory);
  EXPECT_THAT(Of<AnswerBrokenPodGroup>(answered), IsEmpty());
  ASSERT_THAT(EventReasons(answered), ElementsAre("InvalidSpec"));
  EXPECT_EQ(Of<CreateEvent>(answered)[0].event.involved_object.api_version,
            "scheduling.k8s.io/v1beta1");
}

TEST(PlanWritesTest, APreemptionEvictsEveryVictimPodWithEvents) {
  Pass pass;
  pass.AddGang("hi", {{.name = "hi-0"}});
  pass.AddGang("lo", {{.name = "lo-0", .state = MemberState::kBound, .node = "gpu-0"}});
  pass.result.preemption = gang::Preemption{
      .preemptor = "ml/hi",
      .victims = {"ml/lo"},
      .pods = {{.uid = "uid-lo-0", .namespace_ = "ml", .name = "lo-0", .node = "gpu-0"}}};
  WriteMemory memory;
  const WritePlan plan = pass.Plan(memory, {.preemption_grace = 30s});
  const auto evictions = Of<EvictPod>(plan);
  ASSERT_EQ(evictions.size(), 1u);
  EXPECT_EQ(evictions[0].uid, "uid-lo-0");
  EXPECT_THAT(EventReasons(plan), ElementsAre("GangPreempting", "GangPreempted"));
  EXPECT_EQ(memory.gangs.at("ml/hi").preempting_until, pass.now + 30s);
  EXPECT_EQ(memory.evicted.at("uid-lo-0"), pass.now + 30s);
}

TEST(PlanWritesTest, QueueStatusAndBrokenObjectsAreAnswered) {
  Pass pass;
  pass.AddGang("a", {{.name = "a-0", .state = MemberState::kBound, .node = "gpu-0"}});
  pass.inputs.queues.emplace("default", test::MakeQueue("default").Build());
  pass.inputs.broken_groups.emplace("ml/bad", BrokenObject{.namespace_ = "ml",
                                                           .name = "bad",
                                                           .uid = "u",
                                                           .problem = "spec: x",
                                                           .status = PodGroupStatus{}});
  pass.inputs.broken_queues.emplace("neg",
                                    BrokenObject{.name = "neg", .uid = "q", .problem = "spec: y"});
  WriteMemory memory;
  const WritePlan plan = pass.Plan(memory);
  const auto queues = Of<QueueStatusWrite>(plan);
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues[0].name, "default");
  const QueueStatus& st = queues[0].status;
  EXPECT_EQ(st.pending + st.inqueue + st.running + st.unknown + st.completed, 1);
  const auto answers = Of<AnswerBrokenPodGroup>(plan);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].phase, kPodGroupPending);
  EXPECT_EQ(answers[0].condition.reason, "InvalidSpec");
  EXPECT_THAT(EventReasons(plan), ElementsAre("InvalidSpec", "InvalidSpec"));
  // Once per problem.
  EXPECT_THAT(Of<AnswerBrokenPodGroup>(pass.Plan(memory)), IsEmpty());
}

// Writes to one object share a slot (the latest wins while unsent); gates
// go first; events and evictions are never coalesced.
TEST(PlanWritesTest, SlotsCoalescePerObjectAndOrderGatesFirst) {
  const WriteSlot lift = SlotOf(LiftGate{.gang = "ml/a", .uid = "u0", .node = "n1"});
  const WriteSlot touch = SlotOf(AnnotateReservedNode{.gang = "ml/a", .uid = "u0", .node = "n2"});
  EXPECT_EQ(lift.rank, touch.rank);
  EXPECT_EQ(lift.key, touch.key) << "one pod, one slot";
  EXPECT_NE(lift.key, SlotOf(LiftGate{.gang = "ml/a", .uid = "u1"}).key);
  const WriteSlot status = SlotOf(PodGroupStatusWrite{.key = "ml/a"});
  EXPECT_EQ(status.key, "ml/a");
  EXPECT_LT(lift.rank, status.rank);
  EXPECT_LT(status.rank, SlotOf(QueueStatusWrite{.name = "q"}).rank);
  EXPECT_EQ(SlotOf(CreateEvent{}).key, "");
  EXPECT_EQ(SlotOf(EvictPod{}).key, "");
  EXPECT_LT(SlotOf(CreateEvent{}).rank, SlotOf(EvictPod{}).rank);
}

// A settled gang's pass reuses the last one's outcome (GangRecord::settled)
// only while its PodGroup object and members are the ones it was computed
// from: whatever changes either is answered as on a first pass.
TEST(PlanWritesTest, ASettledGangIsAnsweredAgainWhenItsPodGroupOrMembersChange) {
  Pass pass;
  pass.AddGang("a", {{"a-0", MemberState::kBound, "n1"}, {"a-1", MemberState::kBound, "n1"}});
  const std::string key = pass.inputs.gangs[0].key;
  const auto show = [&](const PodGroupStatus& status) {
    PodGroup group = *pass.inputs.groups.at(key);
    group.status = status;
    pass.inputs.groups[key] = std::make_shared<const PodGroup>(std::move(group));
  };
  WriteMemory memory;

  const std::vector<PodGroupStatusWrite> first = Of<PodGroupStatusWrite>(pass.Plan(memory));
  ASSERT_EQ(first.size(), 1u) << "a new PodGroup gets its status";
  EXPECT_EQ(first[0].status.phase, kPodGroupRunning);
  show(first[0].status);  // the watch brings the written status back
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("settled, pass " + std::to_string(i));
    const WritePlan plan = pass.Plan(memory);
    EXPECT_THAT(plan.writes, IsEmpty());
    ASSERT_EQ(plan.gangs.size(), 1u);
    EXPECT_EQ(plan.gangs[0].phase, kPodGroupRunning);
    EXPECT_EQ(plan.gangs[0].scheduled, 2);
  }

  // Someone else dropped the Scheduled condition: a new PodGroup object.
  pass.now = pass.now + 10s;
  show(PodGroupStatus{.phase = std::string(kPodGroupRunning)});
  std::vector<PodGroupStatusWrite> again = Of<PodGroupStatusWrite>(pass.Plan(memory));
  ASSERT_EQ(again.size(), 1u) << "a new PodGroup object is looked at again";
  ASSERT_EQ(again[0].status.conditions.size(), 1u);
  EXPECT_EQ(again[0].status.conditions[0].type, "Scheduled");

  show(again[0].status);
  EXPECT_THAT(pass.Plan(memory).writes, IsEmpty());
  pass.inputs.gangs[0].members.Edit()[0].state = MemberState::kSucceeded;
  again = Of<PodGroupStatusWrite>(pass.Plan(memory));
  ASSERT_EQ(again.size(), 1u) << "changed members are looked at again";
  EXPECT_EQ(again[0].status.succeeded, 1);
}

// A gang that finished and was deleted: its record goes, whole, and no
// write refers to it.
TEST(PlanWritesTest, AGangGoneLeavesNothingBehind) {
  Pass first;
  first.AddGang("done", {{.name = "done-0"}});
  first.AddGang("stays", {{.name = "stays-0"}});
  first.Reserve("done", {"done-0"}, "gpu-0");
  first.result.preemption = gang::Preemption{.preemptor = "ml/done"};
  WriteMemory memory;
  first.Plan(memory);
  ASSERT_TRUE(memory.gangs.contains("ml/done"));

  Pass next;
  next.now = first.now + 1s;
  next.AddGang("stays", {{.name = "stays-0"}});
  const WritePlan plan = next.Plan(memory);
  EXPECT_FALSE(memory.gangs.contains("ml/done"));
  EXPECT_TRUE(memory.gangs.contains("ml/stays"));
  for (const GangWrite& w : plan.writes) {
    EXPECT_EQ(SlotOf(w).key.find("ml/done"), std::string::npos) << SlotOf(w).key;
  }
  for (const GangOutcome& g : plan.gangs) EXPECT_NE(g.key, "ml/done");
}

// A write that failed (or was not sent) is forgotten, and so planned again.
TEST(PlanWritesTest, AnUnwrittenWriteIsPlannedAgain) {
  Pass pass;
  pass.AddGang("a", {{.name = "a-0"}});
  pass.Reserve("a", {"a-0"}, "gpu-0");
  WriteMemory memory;
  const WritePlan plan = pass.Plan(memory);
  for (const GangWrite& w : plan.writes) ForgetUnwritten(SlotOf(w), memory);

  Pass again;
  again.now = pass.now + 1s;
  again.AddGang("a", {{.name = "a-0", .state = MemberState::kReserved, .node = "gpu-0"}});
  const WritePlan retry = again.Plan(memory);
  EXPECT_EQ(Of<LiftGate>(retry).size(), 1u);
  EXPECT_EQ(Of<PodGroupStatusWrite>(retry).size(), 1u);
  EXPECT_THAT(EventReasons(retry), IsEmpty()) << "events are not retried";
}

// The wait clock: from admission (Inqueue) to minMember scheduled, once.
TEST(PlanWritesTest, TheWaitEndsOnceWhenMinMemberAreScheduled) {
  Pass admitted;
  admitted.AddGang("a", {{.name = "a-0"}});
  admitted.Reserve("a", {"a-0"}, "gpu-0");
  WriteMemory memory;
  EXPECT_FALSE(admitted.Plan(memory).gangs[0].waited.has_value());

  Pass bound;
  bound.now = admitted.now + 300ms;
  bound.AddGang("a", {{.name = "a-0", .state = MemberState::kBound, .node = "gpu-0"}});
  EXPECT_EQ(bound.Plan(memory).gangs[0].waited, Duration(300ms));
  EXPECT_FALSE(bound.Plan(memory).gangs[0].waited.has_value());
}

}  // namespace
}  // namespace muster::extender
