#include "extender/bind_barrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace muster::extender {
namespace {

using std::chrono::milliseconds;

TEST(ReleaseOnArrivalTest, Rule) {
  struct Case {
    std::string name;
    int missing;
    int held_after;
    std::optional<BarrierRelease> want;
  };
  const BindBarrierOptions options{.max_hold = milliseconds(1500), .max_held = 4};
  const std::vector<Case> cases = {
      {"the last member releases the round", 0, 3, BarrierRelease::kAllArrived},
      {"the last member releases it even with every worker held", 0, 9,
       BarrierRelease::kAllArrived},
      {"a member still missing: hold", 2, 3, std::nullopt},
      {"holding up to max_held", 1, 4, std::nullopt},
      {"one more than max_held would be held: release", 1, 5, BarrierRelease::kCapacity},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ReleaseOnArrival(c.missing, c.held_after, options), c.want);
  }
}

// Hold() on a thread of its own; the future is ready once it returned.
std::future<BarrierOutcome> Arrive(BindBarrier& barrier, std::string gang, std::string uid,
                                   std::vector<std::string> reserved) {
  return std::async(std::launch::async,
                    [&barrier, gang, uid, reserved] { return barrier.Hold(gang, uid, reserved); });
}

// Waits (bounded) until `n` binds are held.
void AwaitHeld(const BindBarrier& barrier, int n) {
  for (int i = 0; i < 2000 && barrier.held() != n; ++i)
    std::this_thread::sleep_for(milliseconds(1));
  ASSERT_EQ(barrier.held(), n);
}

bool Returned(std::future<BarrierOutcome>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

const std::vector<std::string> kGang = {"a", "b", "c"};

TEST(BindBarrierTest, AGangsBindsGoTogetherWhenTheLastMemberArrives) {
  BindBarrier barrier({.max_hold = std::chrono::seconds(30), .max_held = 10});
  auto a = Arrive(barrier, "ml/train", "a", kGang);
  auto b = Arrive(barrier, "ml/train", "b", kGang);
  AwaitHeld(barrier, 2);
  EXPECT_FALSE(Returned(a)) << "a member is missing: nothing is POSTed yet";
  EXPECT_FALSE(Returned(b));
  const BarrierOutcome c = barrier.Hold("ml/train", "c", kGang);
  EXPECT_EQ(c.release, BarrierRelease::kAllArrived);
  EXPECT_EQ(c.held.count(), 0) << "the last one waits for nobody";
  EXPECT_EQ(a.get().release, BarrierRelease::kAllArrived);
  EXPECT_EQ(b.get().release, BarrierRelease::kAllArrived);
  EXPECT_EQ(barrier.held(), 0);
}

TEST(BindBarrierTest, AMemberThatNeverArrivesHoldsTheOthersOnlyUntilTheDeadline) {
  BindBarrier barrier({.max_hold = milliseconds(50), .max_held = 10});
  auto a = Arrive(barrier, "ml/train", "a", kGang);
  const BarrierOutcome b = barrier.Hold("ml/train", "b", kGang);
  EXPECT_EQ(b.release, BarrierRelease::kDeadline);
  EXPECT_EQ(a.get().release, BarrierRelease::kDeadline);
  EXPECT_GE(b.held, milliseconds(1));
  // The late member waits for nobody released before it.
  const BarrierOutcome c = barrier.Hold("ml/train", "c", kGang);
  EXPECT_EQ(c.release, BarrierRelease::kAllArrived);
  EXPECT_EQ(c.held.count(), 0);
}

TEST(BindBarrierTest, MembersBoundAlreadyOrUnreservedAreNotWaitedFor) {
  BindBarrier barrier({.max_hold = std::chrono::seconds(30), .max_held = 10});
  // The pipeline names only the reserved, unbound members: here the pod alone.
  EXPECT_EQ(barrier.Hold("ml/train", "c", {"c"}).release, BarrierRelease::kAllArrived);
  EXPECT_EQ(barrier.Hold("ml/solo", "x", {}).release, BarrierRelease::kAllArrived);
}

TEST(BindBarrierTest, OverItsWorkerBudgetTheArrivingGangGoesAtOnce) {
  BindBarrier barrier({.max_hold = std::chrono::seconds(30), .max_held = 2});
  const std::vector<std::string> big = {"a", "b", "c", "d"};
  auto a = Arrive(barrier, "ml/big", "a", big);
  auto b = Arrive(barrier, "ml/big", "b", big);
  AwaitHeld(barrier, 2);
  const BarrierOutcome c = barrier.Hold("ml/big", "c", big);
  EXPECT_EQ(c.release, BarrierRelease::kCapacity);
  EXPECT_EQ(a.get().release, BarrierRelease::kCapacity);
  EXPECT_EQ(b.get().release, BarrierRelease::kCapacity);
  EXPECT_EQ(barrier.held(), 0);
}

TEST(BindBarrierTest, GangsAreHeldApart) {
  BindBarrier barrier({.max_hold = std::chrono::seconds(30), .max_held = 10});
  auto a = Arrive(barrier, "ml/one", "a", kGang);
  auto x = Arrive(barrier, "ml/two", "x", {"x", "y"});
  AwaitHeld(barrier, 2);
  EXPECT_EQ(barrier.Hold("ml/two", "y", {"x", "y"}).release, BarrierRelease::kAllArrived);
  EXPECT_EQ(x.get().release, BarrierRelease::kAllArrived);
  EXPECT_FALSE(Returned(a)) << "another gang's arrival releases nothing of ml/one";
  EXPECT_EQ(barrier.held(), 1);
  auto b = Arrive(barrier, "ml/one", "b", kGang);
  AwaitHeld(barrier, 2);
  EXPECT_EQ(barrier.Hold("ml/one", "c", kGang).release, BarrierRelease::kAllArrived);
  EXPECT_EQ(a.get().release, BarrierRelease::kAllArrived);
  EXPECT_EQ(b.get().release, BarrierRelease::kAllArrived);
}

}  // namespace
}  // namespace muster::extender
