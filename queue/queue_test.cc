#include "queue/queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace muster::queue {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

Resources Gpu(int64_t n) { return Resources{{std::string(kNvidiaGpu), n * kMilliPerGpu}}; }

// A queue wanting `pending` GPUs more than it holds.
struct QueueBuilder {
  QueueState q;
  explicit QueueBuilder(std::string name, int32_t weight = 1) {
    q.name = std::move(name);
    q.weight = weight;
  }
  QueueBuilder& Parent(std::string p) { return q.parent = std::move(p), *this; }
  QueueBuilder& Holds(Resources r) { return q.allocated = std::move(r), *this; }
  QueueBuilder& Wants(Resources r) { return q.pending = std::move(r), *this; }
  QueueBuilder& Capability(Resources r) { return q.capability = std::move(r), *this; }
  QueueBuilder& Guarantee(Resources r) { return q.guarantee = std::move(r), *this; }
  QueueBuilder& Deserved(Resources r) { return q.deserved = std::move(r), *this; }
  QueueBuilder& Priority(int32_t p) { return q.priority = p, *this; }
  operator QueueState() const { return q; }  // NOLINT: builder
};

std::map<std::string, int64_t> DeservedGpus(const Shares& shares) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, q] : shares.queues) out[name] = q.deserved.gpus();
  return out;
}

TEST(WaterFillTest, Table) {
  struct Case {
    std::string name;
    int64_t capacity;
    std::vector<Claimant> claimants;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"weights 1:2:4 split by weight", 70, {{1, 0, 100}, {2, 0, 100}, {4, 0, 100}}, {10, 20, 40}},
      {"a capped claimant's rest goes to the others",
       70,
       {{1, 0, 100}, {2, 0, 100}, {4, 0, 20}},
       {16, 33, 20}},
      {"demand below the fair share", 70, {{1, 0, 5}, {2, 0, 100}, {4, 0, 100}}, {5, 21, 43}},
      {"everyone satisfied: caps", 70, {{1, 0, 5}, {2, 0, 6}, {4, 0, 7}}, {5, 6, 7}},
      {"a guarantee is a floor", 70, {{1, 30, 100}, {2, 0, 100}, {4, 0, 100}}, {30, 13, 26}},
      {"a guarantee above demand still holds", 70, {{1, 30, 10}, {2, 0, 100}}, {30, 40}},
      {"guarantees beyond capacity scale down together",
       60,
       {{1, 40, 100}, {1, 80, 100}},
       {20, 40}},
      {"zero and negative weights read as 1",
       30,
       {{0, 0, 100}, {-3, 0, 100}, {1, 0, 100}},
       {10, 10, 10}},
      {"nothing to split", 0, {{1, 0, 5}, {2, 0, 5}}, {0, 0}},
      {"no claimants", 10, {}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(WaterFill(c.capacity, c.claimants), c.want) << c.name;
  }
}

TEST(ComputeSharesTest, DeservedTable) {
  struct Case {
    std::string name;
    std::vector<QueueState> queues;
    int64_t total_gpus;
    std::map<std::string, int64_t> want;
  };
  const Resources lots = Gpu(1000);
  const std::vector<Case> cases = {
      {"weighted 1:2:4, all want more than the cluster",
       {QueueBuilder("q1", 1).Wants(lots), QueueBuilder("q2", 2).Wants(lots),
        QueueBuilder("q4", 4).Wants(lots)},
       70,
       {{"q1", 10}, {"q2", 20}, {"q4", 40}}},
      {"capability caps, the rest is shared",
       {QueueBuilder("q1", 1).Wants(lots), QueueBuilder("q2", 2).Wants(lots),
        QueueBuilder("q4", 4).Wants(lots).Capability(Gpu(20))},
       70,
       {{"q1", 16}, {"q2", 33}, {"q4", 20}}},
      {"demand (held + pending) caps",
       {QueueBuilder("q1", 1).Holds(Gpu(3)).Wants(Gpu(2)), QueueBuilder("q2", 2).Wants(lots),
        QueueBuilder("q4", 4).Wants(lots)},
       70,
       {{"q1", 5}, {"q2", 21}, {"q4", 43}}},
      {"an idle queue deserves nothing",
       {QueueBuilder("q1", 1).Wants(lots), QueueBuilder("q2", 2).Wants(lots),
        QueueBuilder("q4", 4)},
       60,
       {{"q1", 20}, {"q2", 40}, {"q4", 0}}},
      {"guarantee first",
       {QueueBuilder("q1", 1).Wants(lots).Guarantee(Gpu(30)), QueueBuilder("q2", 2).Wants(lots),
        QueueBuilder("q4", 4).Wants(lots)},
       70,
       {{"q1", 30}, {"q2", 13}, {"q4", 26}}},
      {"explicit deserved is taken as given",
       {QueueBuilder("q1", 1).Wants(lots).Deserved(Gpu(50)), QueueBuilder("q2", 1).Wants(lots),
        QueueBuilder("q4", 3).Wants(lots)},
       70,
       {{"q1", 50}, {"q2", 5}, {"q4", 15}}},
      {"hierarchy: the parent's share is split by the children's weights",
       {QueueBuilder("a", 1), QueueBuilder("a1", 1).Parent("a").Wants(lots),
        QueueBuilder("a2", 3).Parent("a").Wants(lots),
        QueueBuilder("b", 1).Parent("root").Wants(lots)},
       80,
       {{"a", 40}, {"a1", 10}, {"a2", 30}, {"b", 40}}},
      {"hierarchy: a child's capability returns the rest to its sibling",
       {QueueBuilder("a", 1), QueueBuilder("a1", 1).Parent("a").Wants(lots).Capability(Gpu(4)),
        QueueBuilder("a2", 1).Parent("a").Wants(lots), QueueBuilder("b", 1).Wants(lots)},
       80,
       {{"a", 40}, {"a1", 4}, {"a2", 36}, {"b", 40}}},
      {"a root queue's capability caps the cluster",
       {QueueBuilder("root").Capability(Gpu(40)), QueueBuilder("q1", 1).Wants(lots),
        QueueBuilder("q2", 1).Wants(lots)},
       80,
       {{"q1", 20}, {"q2", 20}}},
  };
  for (const Case& c : cases) {
    const Shares shares = ComputeShares(c.queues, Gpu(c.total_gpus));
    EXPECT_EQ(DeservedGpus(shares), c.want) << c.name;
    EXPECT_THAT(shares.problems, ::testing::IsEmpty()) << c.name;
  }
}

TEST(ComputeSharesTest, EachResourceIsFilledOnItsOwn) {
  const Resources total{{"cpu", 90'000}, {std::string(kNvidiaGpu), 30000}, {"pods", 330}};
  const Shares shares = ComputeShares(
      {QueueBuilder("cpu-team", 2).Wants({{"cpu", 500'000}}),
       QueueBuilder("gpu-team", 1).Wants({{"cpu", 10'000}, {std::string(kNvidiaGpu), 100000}})},
      total);
  // gpu-team wants little cpu: cpu-team gets the rest; all GPUs go to the
  // only queue that wants any. Pods slots are not shared out.
  EXPECT_EQ(shares.queues.at("cpu-team").deserved,
            (Resources{{"cpu", 80'000}, {"nvidia.com/gpu", 0}}));
  EXPECT_EQ(shares.queues.at("gpu-team").deserved,
            (Resources{{"cpu", 10'000}, {std::string(kNvidiaGpu), 30000}}));
  EXPECT_FALSE(shares.total.Has(kPods));
}

TEST(ComputeSharesTest, ShareIsAllocatedOverDeservedOnTheDominantResource) {
  const Resources total{{"cpu", 100'000}, {std::string(kNvidiaGpu), 40000}};
  const Shares shares = ComputeShares(
      {QueueBuilder("a", 1)
           .Holds({{"cpu", 10'000}, {std::string(kNvidiaGpu), 30000}})
           .Wants({{"cpu", 100'000}, {std::string(kNvidiaGpu), 100000}}),
       QueueBuilder("b", 1).Wants({{"cpu", 100'000}, {std::string(kNvidiaGpu), 100000}})},
      total);
  const QueueShare& a = shares.queues.at("a");
  EXPECT_DOUBLE_EQ(a.share, 30.0 / 20.0);
  EXPECT_EQ(a.dominant, kNvidiaGpu);
  EXPECT_EQ(shares.queues.at("b").share, 0);
}

TEST(ComputeSharesTest, BadParentsAreReportedAndReadAsTopLevel) {
  const Shares shares = ComputeShares({QueueBuilder("orphan").Parent("gone").Wants(Gpu(100)),
                                       QueueBuilder("x").Parent("y").Wants(Gpu(100)),
                                       QueueBuilder("y").Parent("x").Wants(Gpu(100))},
                                      Gpu(30));
  EXPECT_EQ(DeservedGpus(shares),
            (std::map<std::string, int64_t>{{"orphan", 10}, {"x", 10}, {"y", 10}}));
  EXPECT_THAT(shares.problems, ElementsAre(HasSubstr("orphan: parent gone does not exist"),
                                           HasSubstr("x: its parents form a cycle"),
                                           HasSubstr("y: its parents form a cycle")));
}

// --- ranking ---------------------------------------------------------------

PendingGang MakePending(std::string key, std::string queue, Resources request,
                        int64_t created = 0) {
  return PendingGang{.key = std::move(key),
                     .queue = std::move(queue),
                     .created = Time::FromUnixSeconds(1000 + created),
                     .request = std::move(request)};
}

// The DRF paper (Ghodsi et al., NSDI'11, section 4): 9 CPUs, 18 GB; job A's
// tasks need <1 CPU, 4 GB>, job B's <3 CPUs, 1 GB>, both with unbounded
// demand. Progressive filling by RankGangs' order - each round the first job
// in order whose next task still fits gets it - gives A 3 tasks and B 2,
// equal dominant shares of 2/3.
TEST(RankGangsTest, WithinAQueueJobsGoByDrfShareAsInTheDrfPaper) {
  const Resources total{{"cpu", 9'000}, {"memory", 18}};
  const Resources task_a{{"cpu", 1'000}, {"memory", 4}};
  const Resources task_b{{"cpu", 3'000}, {"memory", 1}};
  std::map<std::string, int> tasks = {{"ns/a", 0}, {"ns/b", 0}};
  Resources used;
  const auto task_of = [&](const std::string& key) { return key == "ns/a" ? task_a : task_b; };
  for (int round = 0; round < 20; ++round) {
    const Shares shares = ComputeShares(
        {QueueBuilder("team").Wants({{"cpu", 1'000'000}, {"memory", 1'000'000}})}, total);
    std::vector<PendingGang> gangs;
    for (const auto& [key, n] : tasks) {
      PendingGang g = MakePending(key, "team", task_of(key), key == "ns/a" ? 0 : 1);
      g.allocated = task_of(key);
      g.allocated *= n;
      g.minimum_met = n > 0;
      gangs.push_back(g);
    }
    bool placed = false;
    for (const std::string& key : RankGangs(shares, gangs)) {
      if ((used + task_of(key)).FitsIn(total)) {
        used += task_of(key);
        ++tasks[key];
        placed = true;
        break;
      }
    }
    if (!placed) break;
  }
  EXPECT_EQ(tasks, (std::map<std::string, int>{{"ns/a", 3}, {"ns/b", 2}}));
}

TEST(RankGangsTest, Table) {
  struct Case {
    std::string name;
    std::vector<QueueState> queues;
    std::vector<PendingGang> gangs;
    std::vector<std::string> want;
  };
  const Resources lots = Gpu(1000);
  auto gang = [](std::string key, std::string queue, int64_t gpus, int64_t created = 0) {
    return MakePending(std::move(key), std::move(queue), Gpu(gpus), created);
  };
  auto with_priority = [](PendingGang g, int32_t p) { return g.priority = p, g; };
  auto claiming = [](PendingGang g) { return g.claims = true, g; };
  auto holding = [](PendingGang g, int64_t gpus, bool minimum_met) {
    g.allocated = Gpu(gpus);
    g.minimum_met = minimum_met;
    return g;
  };
  const std::vector<Case> cases = {
      {"queues take turns by share: q2 (weight 2) gets two for q1's one",
       {QueueBuilder("q1", 1).Wants(lots), QueueBuilder("q2", 2).Wants(lots)},
       {gang("a1", "q1", 5, 0), gang("a2", "q1", 5, 1), gang("b1", "q2", 5, 2),
        gang("b2", "q2", 5, 3), gang("b3", "q2", 5, 4), gang("b4", "q2", 5, 5)},
       {"a1", "b1", "b2", "a2", "b3", "b4"}},
      {"the queue furthest below its share goes first",
       {QueueBuilder("q1", 1).Holds(Gpu(10)).Wants(lots), QueueBuilder("q2", 1).Wants(lots)},
       {gang("a1", "q1", 5, 0), gang("b1", "q2", 5, 9)},
       {"b1", "a1"}},
      {"queue priority before share",
       {QueueBuilder("q1", 1).Holds(Gpu(10)).Wants(lots).Priority(5),
        QueueBuilder("q2", 1).Wants(lots)},
       {gang("a1", "q1", 5, 0), gang("b1", "q2", 5, 9)},
       {"a1", "b1"}},
      {"within a queue: priority, then age",
       {QueueBuilder("q1", 1).Wants(lots)},
       {gang("old", "q1", 1, 0), gang("young", "q1", 1, 5),
        with_priority(gang("urgent", "q1", 1, 9), 10)},
       {"urgent", "old", "young"}},
      {"within a queue: a job holding more goes after one holding less",
       {QueueBuilder("q1", 1).Wants(lots)},
       {holding(gang("big", "q1", 1, 0), 8, true), holding(gang("small", "q1", 1, 5), 2, true)},
       {"small", "big"}},
      {"a gang still assembling its minimum is not pushed back by what it holds",
       {QueueBuilder("q1", 1).Wants(lots)},
       {holding(gang("partial", "q1", 1, 0), 8, false), gang("fresh", "q1", 1, 5)},
       {"partial", "fresh"}},
      {"hierarchy: siblings compete inside their parent's turn",
       {QueueBuilder("a", 1), QueueBuilder("a1", 1).Parent("a").Wants(lots),
        QueueBuilder("a2", 1).Parent("a").Wants(lots), QueueBuilder("b", 1).Wants(lots)},
       {gang("x1", "a1", 10, 0), gang("x2", "a1", 10, 1), gang("y1", "a2", 10, 2),
        gang("y2", "a2", 10, 3), gang("z1", "b", 10, 4), gang("z2", "b", 10, 5)},
       {"x1", "z1", "y1", "z2", "x2", "y2"}},
      {"a gang whose victims are being evicted for it goes first, even from the fullest queue",
       {QueueBuilder("q1", 1).Holds(Gpu(10)).Wants(lots), QueueBuilder("q2", 1).Wants(lots)},
       {gang("b1", "q2", 5, 0), claiming(gang("a1", "q1", 5, 9))},
       {"a1", "b1"}},
      {"what a claim waits for counts in its queue's share: its other gangs wait their turn",
       // q1 holds 10 of its 20 and claims 10 more: at its share, behind q2
       // (0 of 20) until q2 is at its share too.
       {QueueBuilder("q1", 1).Holds(Gpu(10)).Wants(lots), QueueBuilder("q2", 1).Wants(lots)},
       {claiming(gang("a1", "q1", 10, 0)), gang("a2", "q1", 5, 1), gang("b1", "q2", 5, 2),
        gang("b2", "q2", 5, 3), gang("b3", "q2", 5, 4), gang("b4", "q2", 5, 5)},
       {"a1", "b1", "b2", "b3", "b4", "a2"}},
      {"gangs of unknown queues go last",
       {QueueBuilder("q1", 1).Wants(lots)},
       {gang("lost", "nope", 1, 0), gang("a1", "q1", 1, 9)},
       {"a1", "lost"}},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(RankGangs(ComputeShares(c.queues, Gpu(40)), c.gangs), ElementsAreArray(c.want))
        << c.name;
  }
}

}  // namespace
}  // namespace muster::queue
