#include "gang/settle.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "model/testing/builders.h"

namespace muster::gang {
namespace {

using muster::test::Res;
using std::chrono::milliseconds;

const Time kStart = Time::FromUnixSeconds(100'000);

Resources Gpus(const std::string& n) { return Res({{"nvidia.com/gpu", n}, {"cpu", "64"}}); }

// One pass of a run: the free capacity it sees, whether a gang waits for
// capacity, and what Settle must answer.
struct Step {
  int at_ms;
  std::string free_gpus;
  bool short_of_capacity;
  bool want_hold;
};

struct Case {
  std::string name;
  std::vector<Step> steps;
  SettleConfig config;
};

TEST(SettleTest, HoldsPlansWhileCapacityTricklesIn) {
  const std::vector<Case> cases = {
      {"nothing freed: plans go ahead",
       {{0, "8", true, false}, {100, "8", true, false}, {200, "4", true, false}}},
      {"freed, nobody short of capacity: plans go ahead",
       {{0, "0", false, false}, {100, "8", false, false}}},
      {"freed in pieces: held until 300 ms quiet",
       {{0, "0", true, false},
        {100, "2", true, true},
        {250, "4", true, true},
        {500, "4", true, true},
        {550, "4", true, false}}},
      {"never quiet: released 1.5 s after the first piece",
       {{0, "0", true, false},
        {100, "1", true, true},
        {400, "2", true, true},
        {700, "3", true, true},
        {1000, "4", true, true},
        {1300, "5", true, true},
        {1600, "6", true, false},
        // A new piece after the release starts a new hold.
        {1900, "7", true, true}}},
      {"the waiting gang got its plan: the hold ends at once",
       {{0, "0", true, false}, {100, "8", true, true}, {150, "8", false, false}}},
      {"quiet zero turns settling off",
       {{0, "0", true, false}, {100, "8", true, false}},
       SettleConfig{.quiet = Duration::zero()}},
      {"capacity taken (plans reserved) is not freeing",
       {{0, "8", true, false}, {100, "2", true, false}, {200, "0", true, false}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SettleState state{.free = Gpus(c.steps.front().free_gpus),
                      .holding_since = std::nullopt,
                      .last_freed = kStart};
    for (const Step& s : c.steps) {
      SCOPED_TRACE(s.at_ms);
      const Time now = kStart + milliseconds(s.at_ms);
      const SettleDecision d = Settle(state, Gpus(s.free_gpus), s.short_of_capacity, now, c.config);
      EXPECT_EQ(d.hold, s.want_hold);
      EXPECT_EQ(d.release_at.has_value(), s.want_hold);
      if (d.release_at) {
        EXPECT_GT(*d.release_at, now);
      }
      state = d.next;
    }
  }
}

TEST(SettleTest, ReleaseAtIsTheEarlierOfQuietAndMax) {
  const SettleConfig config;  // 300 ms quiet, 1.5 s max
  SettleState state{.free = Gpus("0"), .holding_since = std::nullopt, .last_freed = kStart};
  SettleDecision d = Settle(state, Gpus("1"), true, kStart, config);
  ASSERT_TRUE(d.release_at);
  EXPECT_EQ(*d.release_at, kStart + milliseconds(300));
  d = Settle(d.next, Gpus("2"), true, kStart + milliseconds(1400), config);
  ASSERT_TRUE(d.release_at);
  EXPECT_EQ(*d.release_at, kStart + milliseconds(1500));
}

TEST(SettleTest, ShortOfCapacityOnlyForGangsWaitingForResources) {
  PassResult result;
  result.waits.push_back({.key = "ns/a", .reason = kWaitMembers});
  result.waits.push_back({.key = "ns/b", .reason = kWaitQueueCapability});
  EXPECT_FALSE(ShortOfCapacity(result));
  result.waits.push_back({.key = "ns/c", .reason = kWaitResources});
  EXPECT_TRUE(ShortOfCapacity(result));
}

TEST(SettleTest, AnyGrewComparesEveryResource) {
  EXPECT_FALSE(AnyGrew(Gpus("4"), Gpus("4")));
  EXPECT_FALSE(AnyGrew(Gpus("4"), Gpus("2")));
  EXPECT_TRUE(AnyGrew(Gpus("4"), Gpus("5")));
  EXPECT_TRUE(AnyGrew(Res({{"cpu", "1"}}), Res({{"cpu", "2"}})));
  EXPECT_TRUE(AnyGrew(Res({}), Res({{"memory", "1Gi"}})));
}

}  // namespace
}  // namespace muster::gang
