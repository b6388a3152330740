// The queue step over gang inputs (pure): default queue, held gangs,
// capability room, ranking and the victims' queues.
#include "extender/queue_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gang/testing/builders.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using gang::test::MakeGang;
using test::MakePod;
using test::MakeQueue;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Queues = std::map<std::string, Queue, std::less<>>;

Queues QueuesOf(std::vector<Queue> list) {
  Queues out;
  for (Queue& q : list) out.emplace(q.meta.name, std::move(q));
  return out;
}

gang::Gang InQueue(gang::Gang g, std::string queue, std::string phase = "") {
  g.spec.queue = std::move(queue);
  g.phase = std::move(phase);
  return g;
}

std::vector<std::string> HeldKeys(const QueueStep& step) {
  std::vector<std::string> out;
  for (const gang::Wait& w : step.held) out.push_back(w.key + ":" + std::string(w.reason));
  return out;
}

TEST(QueueStepTest, WhoIsHeld) {
  struct Case {
    std::string name;
    gang::Gang gang;
    std::vector<std::string> want_held;
  };
  const Queues queues = QueuesOf({MakeQueue("open"), MakeQueue("shut").State("Closed")});
  const std::vector<Case> cases = {
      {"no queue: default, implicit when missing",
       MakeGang("g").Pending(MakePod("g-0").Gpu(1)),
       {}},
      {"an open queue admits", InQueue(MakeGang("g").Pending(MakePod("g-0").Gpu(1)), "open"), {}},
      {"a missing queue holds a new gang",
       InQueue(MakeGang("g").Pending(MakePod("g-0").Gpu(1)), "gone"),
       {"default/g:QueueNotFound"}},
      {"a closed queue holds a new gang",
       InQueue(MakeGang("g").Pending(MakePod("g-0").Gpu(1)), "shut"),
       {"default/g:QueueClosed"}},
      {"a closed queue keeps an admitted gang",
       InQueue(MakeGang("g").Pending(MakePod("g-0").Gpu(1)), "shut", "Inqueue"),
       {}},
      {"a closed queue keeps a running gang",
       InQueue(MakeGang("g").Bound(MakePod("g-0").Gpu(1), "n1").Pending(MakePod("g-1").Gpu(1)),
               "shut"),
       {}},
  };
  for (const Case& c : cases) {
    std::vector<gang::Gang> gangs = {c.gang};
    std::vector<gang::VictimCandidate> victims;
    const QueueStep step = RunQueueStep(queues, Resources{{"nvidia.com/gpu", 8}}, gangs, victims);
    EXPECT_EQ(HeldKeys(step), c.want_held) << c.name;
    EXPECT_EQ(gangs.size(), 1u) << c.name << ": held gangs stay in the list";
  }
}

TEST(QueueStepTest, RanksFillsPathsRoomAndVictims) {
  const Queues queues =
      QueuesOf({MakeQueue("parent"),
                MakeQueue("small").Parent("parent").Capability(Resources{{"nvidia.com/gpu", 10}}),
                MakeQueue("big").Weight(3)});
  std::vector<gang::Gang> gangs = {
      InQueue(MakeGang("s1").Bound(MakePod("s1-0").Gpu(4), "n1"), "small"),
      InQueue(MakeGang("s2").Pending(MakePod("s2-0").Gpu(4)), "small"),
      InQueue(MakeGang("b1").Pending(MakePod("b1-0").Gpu(4)), "big"),
  };
  std::vector<gang::VictimCandidate> victims = {gang::VictimCandidate{
      .key = "default/s1", .pods = {{.request = Resources{{"nvidia.com/gpu", 4}, {"pods", 1}}}}}};
  const QueueStep step = RunQueueStep(queues, Resources{{"nvidia.com/gpu", 12}}, gangs, victims);
  // 16 GPUs (12 free + 4 held): big (weight 3) wants only 4, so parent and
  // its child small get all they want, 8.
  EXPECT_EQ(step.shares.queues.at("small").deserved.gpus(), 8);
  EXPECT_EQ(step.shares.queues.at("big").deserved.gpus(), 4);
  EXPECT_THAT(gangs[1].queues, ElementsAre("small", "parent"));
  EXPECT_THAT(gangs[2].queues, ElementsAre("big"));
  // small holds half its share, big nothing: big's gang goes first.
  EXPECT_LT(gangs[2].queue_rank, gangs[1].queue_rank);
  EXPECT_EQ(step.limits.at("small").room, (Resources{{"nvidia.com/gpu", 6}}));
  EXPECT_FALSE(step.limits.at("big").room.has_value());
  EXPECT_THAT(victims[0].queues, ElementsAre("small", "parent"));
  EXPECT_EQ(victims[0].holds, (Resources{{"nvidia.com/gpu", 4}}));
  EXPECT_THAT(step.held, IsEmpty());
}

// What counts as a queue's allocation: bound and reserved members; not
// finished or terminating ones (evictions in flight); and, for reclaim
// only, what a gang whose victims are going waits for.
TEST(QueueStepTest, AllocationCountsWhatStaysAndWhatIsOnItsWay) {
  struct Case {
    std::string name;
    gang::Gang gang;
    int64_t want_allocated;
    int64_t want_pending;
    int64_t want_claimed = 0;  // counted as held for reclaim only
  };
  gang::Gang evicted =
      MakeGang("g").Bound(MakePod("g-0").Gpu(2), "n1").Bound(MakePod("g-1").Gpu(2), "n1");
  evicted.members[1].terminating = true;
  gang::Gang preempting = MakeGang("g").Pending(MakePod("g-0").Gpu(4));
  preempting.preempting = true;
  const std::vector<Case> cases = {
      {"bound and reserved hold, pending waits",
       MakeGang("g")
           .Bound(MakePod("g-0").Gpu(1), "n1")
           .Reserved(MakePod("g-1").Gpu(2), "n1")
           .Pending(MakePod("g-2").Gpu(4)),
       3, 4},
      {"finished members hold nothing",
       MakeGang("g").Succeeded(MakePod("g-0").Gpu(8), "n1").Pending(MakePod("g-1").Gpu(1)), 0, 1},
      {"a terminating member no longer counts", evicted, 2, 0},
      {"a gang evicting for itself: held for reclaim, still waiting for the order", preempting, 0,
       4, 4},
  };
  for (const Case& c : cases) {
    std::vector<gang::Gang> gangs = {c.gang};
    std::vector<gang::VictimCandidate> victims;
    const QueueStep step = RunQueueStep({}, Resources{{"nvidia.com/gpu", 16}}, gangs, victims);
    const queue::QueueShare& q = step.shares.queues.at("default");
    EXPECT_EQ(q.allocated.gpus(), c.want_allocated) << c.name;
    EXPECT_EQ((q.demand - q.allocated).gpus(), c.want_pending) << c.name;
    EXPECT_EQ(step.limits.at("default").allocated.gpus(), c.want_allocated + c.want_claimed)
        << c.name;
  }
}

// Reclaim hysteresis over passes: a queue reclaims once it has been short of
// its share for `after`, and spares a queue that reclaimed from it for
// `cooldown`.
TEST(QueueStepTest, ReclaimHysteresisOverPasses) {
  const ReclaimTiming timing{.after = std::chrono::seconds(5),
                             .cooldown = std::chrono::seconds(60)};
  ReclaimMemory memory;
  const Time t0 = Time::FromUnixSeconds(1000);
  // q holds 2 of the 8 GPUs it deserves (short); r holds 8 of 8.
  auto step_at = [&](Time now, int64_t q_holds) {
    std::vector<gang::Gang> gangs = {
        InQueue(MakeGang("q")
                    .Bound(MakePod("q-0").Gpu(q_holds), "n1")
                    .Pending(MakePod("q-1").Gpu(8 - q_holds)),
                "q"),
        InQueue(MakeGang("r").Bound(MakePod("r-0").Gpu(8), "n2").Pending(MakePod("r-1").Gpu(8)),
                "r")};
    std::vector<gang::VictimCandidate> victims;
    QueueStep step = RunQueueStep(QueuesOf({MakeQueue("q"), MakeQueue("r")}),
                                  Resources{{"nvidia.com/gpu", 6}}, gangs, victims);
    ApplyReclaimHysteresis(step, memory, now, timing);
    return step;
  };
  EXPECT_FALSE(step_at(t0, 2).limits.at("q").reclaim_allowed) << "just became short";
  EXPECT_FALSE(step_at(t0 + std::chrono::seconds(4), 2).limits.at("q").reclaim_allowed);
  EXPECT_TRUE(step_at(t0 + std::chrono::seconds(5), 2).limits.at("q").reclaim_allowed);
  EXPECT_FALSE(step_at(t0 + std::chrono::seconds(6), 8).limits.at("q").reclaim_allowed)
      << "got its due";
  EXPECT_FALSE(step_at(t0 + std::chrono::seconds(7), 2).limits.at("q").reclaim_allowed)
      << "the clock restarts";

  RecordReclaim(memory, "q", {"r"}, t0 + std::chrono::seconds(7));
  EXPECT_THAT(step_at(t0 + std::chrono::seconds(8), 2).limits.at("r").spare, ElementsAre("q"));
  EXPECT_THAT(step_at(t0 + std::chrono::seconds(67), 2).limits.at("r").spare, IsEmpty());
}

}  // namespace
}  // namespace muster::extender
