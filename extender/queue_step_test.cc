// The queue step over gang inputs (pure): default queue, held gangs,
// capability room, ranking and the victims' queues.
#include "extender/queue_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

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
    const QueueStep step =
        RunQueueStep(queues, Resources{{"nvidia.com/gpu", 8000}}, gangs, victims);
    EXPECT_EQ(HeldKeys(step), c.want_held) << c.name;
    EXPECT_EQ(gangs.size(), 1u) << c.name << ": held gangs stay in the list";
  }
}

TEST(QueueStepTest, RanksFillsPathsRoomAndVictims) {
  const Queues queues = QueuesOf(
      {MakeQueue("parent"),
       MakeQueue("small").Parent("parent").Capability(Resources{{"nvidia.com/gpu", 10000}}),
       MakeQueue("big").Weight(3)});
  std::vector<gang::Gang> gangs = {
      InQueue(MakeGang("s1").Bound(MakePod("s1-0").Gpu(4), "n1"), "small"),
      InQueue(MakeGang("s2").Pending(MakePod("s2-0").Gpu(4)), "small"),
      InQueue(MakeGang("b1").Pending(MakePod("b1-0").Gpu(4)), "big"),
  };
  std::vector<gang::VictimCandidate> victims = {gang::VictimCandidate{
      .key = "default/s1",
      .pods = {{.request = Resources{{"nvidia.com/gpu", 4000}, {"pods", 1}}}}}};
  const QueueStep step = RunQueueStep(queues, Resources{{"nvidia.com/gpu", 12000}}, gangs, victims);
  // 16 GPUs (12 free + 4 held): big (weight 3) wants only 4, so parent and
  // its child small get all they want, 8.
  EXPECT_EQ(step.shares.queues.at("small").deserved.gpus(), 8);
  EXPECT_EQ(step.shares.queues.at("big").deserved.gpus(), 4);
  EXPECT_THAT(gangs[1].queues, ElementsAre("small", "parent"));
  EXPECT_THAT(gangs[2].queues, ElementsAre("big"));
  // small holds half its share, big nothing: big's gang goes first.
  EXPECT_LT(gangs[2].queue_rank, gangs[1].queue_rank);
  EXPECT_EQ(step.limits.at("small").room, (Resources{{"nvidia.com/gpu", 6000}}));
  EXPECT_EQ(step.limits.at("small").Bound().gpus(), 4) << "s1's bound member";
  EXPECT_EQ(step.limits.at("parent").Bound().gpus(), 4) << "its child's, summed up";
  EXPECT_EQ(step.limits.at("big").Bound().gpus(), 0);
  EXPECT_FALSE(step.limits.at("big").room.has_value());
  EXPECT_THAT(victims[0].queues, ElementsAre("small", "parent"));
  EXPECT_THAT(step.held, IsEmpty());

  // Once s2 evicts victims for itself it goes first, to take what they free.
  gangs[1].preempting = true;
  RunQueueStep(queues, Resources{{"nvidia.com/gpu", 12000}}, gangs, victims);
  EXPECT_LT(gangs[1].queue_rank, gangs[2].queue_rank);
}

// What counts as a queue's allocation: bound and reserved members; not
// finished or terminating ones (evictions in flight); and, for reclaim (and
// the order), what a gang whose victims are going waits for.
TEST(QueueStepTest, AllocationCountsWhatStaysAndWhatIsOnItsWay) {
  struct Case {
    std::string name;
    gang::Gang gang;
    int64_t want_allocated;
    int64_t want_pending;
    int64_t want_claimed = 0;  // counted as held for reclaim (not in the deserved shares)
  };
  gang::Gang evicted =
      MakeGang("g").Bound(MakePod("g-0").Gpu(2), "n1").Bound(MakePod("g-1").Gpu(2), "n1");
  evicted.members.Edit()[1].terminating = true;
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
      {"a Volcano Job not admitted yet has no pods: its minResources is its queue's demand",
       MakeGang("g").MinResources(Resources{{"nvidia.com/gpu", 8000}}), 0, 8},
      {"not admitted, pods asking more than minResources: what the pods ask",
       MakeGang("g")
           .MinResources(Resources{{"nvidia.com/gpu", 2000}})
           .Pending(MakePod("g-0").Gpu(4)),
       0, 4},
      {"admitted (Inqueue): only its pods count",
       MakeGang("g").Phase(kPodGroupInqueue).MinResources(Resources{{"nvidia.com/gpu", 8000}}), 0,
       0},
  };
  for (const Case& c : cases) {
    std::vector<gang::Gang> gangs = {c.gang};
    std::vector<gang::VictimCandidate> victims;
    const QueueStep step = RunQueueStep({}, Resources{{"nvidia.com/gpu", 16000}}, gangs, victims);
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
                                  Resources{{"nvidia.com/gpu", 6000}}, gangs, victims);
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

// The starvation bound, over time: a 2 x 8-GPU gang against a stream of
// 1-GPU gangs (4 arrive each second, each works 8 s) on a full cluster of
// 4 x 8 GPUs. In one queue the big gang goes first (the oldest), but it fits
// nowhere and the small gangs behind it backfill every GPU that frees, so no
// node ever empties. With the head of the line it gets two nodes kept
// draining once 10 s old, and starts within the bound plus the longest
// work; without it, never. In a queue of its own it needs no bound: its
// queue is owed its share, so the stream's queue may not backfill past its
// own while the big gang waits.
std::optional<int> BigGangStart(Duration head_of_line_after, const std::string& big_queue) {
  const Queues queues = QueuesOf({MakeQueue("big"), MakeQueue("small")});
  std::vector<Node> nodes;
  for (int n = 0; n < 4; ++n)
    nodes.push_back(test::MakeNode("n" + std::to_string(n)).Cpu("64").Gpu(8).Pods(110));
  struct Running {
    gang::Gang gang;
    int ends;  // second
  };
  std::vector<Running> running;
  std::vector<gang::Gang> waiting;
  int serial = 0;
  auto small = [&](int now) {
    const std::string name = "s" + std::to_string(serial++);
    return InQueue(
        MakeGang(name).Created(Time::FromUnixSeconds(now)).Pending(MakePod(name + "-0").Gpu(1)),
        "small");
  };
  for (int i = 0; i < 32; ++i) {  // the cluster starts full, work ending over 8 s
    gang::Gang g = small(0);
    g.members.Edit()[0].state = gang::MemberState::kBound;
    g.members.Edit()[0].node = "n" + std::to_string(i / 8);
    running.push_back({g, 1 + i % 8});
  }
  gang::Gang big = InQueue(MakeGang("big")
                               .MinMember(2)
                               .Created(Time::FromUnixSeconds(0))
                               .Pending(MakePod("big-0").Gpu(8))
                               .Pending(MakePod("big-1").Gpu(8)),
                           big_queue);
  waiting.push_back(big);
  gang::PassConfig config;
  config.head_of_line_after = head_of_line_after;
  for (int now = 1; now <= 120; ++now) {
    std::erase_if(running, [&](const Running& r) { return r.ends <= now; });
    for (int i = 0; i < 4; ++i) waiting.push_back(small(now));
    std::vector<gang::Gang> gangs;
    for (const Running& r : running) gangs.push_back(r.gang);
    gangs.insert(gangs.end(), waiting.begin(), waiting.end());
    const gang::ClusterView view = gang::test::MakeView(nodes, gangs);
    std::vector<gang::VictimCandidate> victims;
    const QueueStep step = RunQueueStep(queues, Resources(), gangs, victims);
    const gang::PassResult result =
        gang::RunPass(view, gangs, victims, Time::FromUnixSeconds(now), config, step.limits);
    for (const gang::GangPlan& plan : result.plans) {
      if (plan.key == "default/big") return now;
      const auto it = std::ranges::find(waiting, plan.key, &gang::Gang::key);
      gang::Gang placed = *it;
      placed.members.Edit()[0].state = gang::MemberState::kBound;
      placed.members.Edit()[0].node = plan.reserve[0].node;
      running.push_back({placed, now + 8});
      waiting.erase(it);
    }
  }
  return std::nullopt;
}

TEST(QueueStepTest, StarvationBoundAgainstAStreamOfSmallGangs) {
  const std::optional<int> bounded = BigGangStart(std::chrono::seconds(10), "small");
  ASSERT_TRUE(bounded.has_value());
  EXPECT_LE(*bounded, 10 + 8 + 1);
  EXPECT_EQ(BigGangStart(std::chrono::hours(1), "small"), std::nullopt)
      << "the stream starves it without the bound";
  const std::optional<int> own_queue = BigGangStart(std::chrono::hours(1), "big");
  ASSERT_TRUE(own_queue.has_value()) << "another queue's stream starves it";
  EXPECT_LE(*own_queue, 8 + 1);
}

}  // namespace
}  // namespace muster::extender
