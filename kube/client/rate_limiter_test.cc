#include "kube/client/rate_limiter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A sleeper that records each wait and moves the fake clock instead of sleeping.
struct FakeSleep {
  FakeClock* clock;
  std::vector<Duration>* waits;
  bool operator()(Duration d, CancelToken* cancel) const {
    if (IsCancelled(cancel)) return false;
    waits->push_back(d);
    clock->Advance(d);
    return true;
  }
};

TEST(RateLimiterTest, ReservesAccordingToQpsAndBurst) {
  struct Step {
    Duration advance;  // clock movement before the reservation
    Duration wait;     // expected wait
  };
  struct Case {
    std::string name;
    double qps;
    int burst;
    std::vector<Step> steps;
  };
  const std::vector<Case> cases = {
      {"burst is free, then 1/qps each",
       10,
       3,
       {{Duration(0), Duration(0)},
        {Duration(0), Duration(0)},
        {Duration(0), Duration(0)},
        {Duration(0), milliseconds(100)},
        {Duration(0), milliseconds(200)}}},
      {"refill over time, capped at burst",
       2,
       2,
       {{Duration(0), Duration(0)},
        {Duration(0), Duration(0)},
        {seconds(10), Duration(0)},  // refilled to 2, not 20
        {Duration(0), Duration(0)},
        {Duration(0), milliseconds(500)}}},
      {"partial refill shortens the wait",
       1,
       1,
       {{Duration(0), Duration(0)}, {milliseconds(400), milliseconds(600)}}},
      {"zero qps disables limiting",
       0,
       1,
       {{Duration(0), Duration(0)}, {Duration(0), Duration(0)}, {Duration(0), Duration(0)}}},
      {"burst below one acts as one",
       4,
       0,
       {{Duration(0), Duration(0)}, {Duration(0), milliseconds(250)}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    RateLimiter limiter(c.qps, c.burst, clock, nullptr);
    for (size_t i = 0; i < c.steps.size(); ++i) {
      SCOPED_TRACE(i);
      clock.Advance(c.steps[i].advance);
      EXPECT_EQ(limiter.Reserve(), c.steps[i].wait);
    }
  }
}

TEST(RateLimiterTest, WaitSleepsForTheReservedTime) {
  FakeClock clock;
  std::vector<Duration> waits;
  RateLimiter limiter(5, 1, clock, FakeSleep{&clock, &waits});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(limiter.Wait());
  // Each sleep moved the clock, so every later call waits exactly 1/qps.
  EXPECT_THAT(waits,
              ::testing::ElementsAre(milliseconds(200), milliseconds(200), milliseconds(200)));
}

TEST(RateLimiterTest, WaitReportsCancellation) {
  FakeClock clock;
  std::vector<Duration> waits;
  RateLimiter limiter(1, 1, clock, FakeSleep{&clock, &waits});
  CancelToken cancel;
  EXPECT_TRUE(limiter.Wait(&cancel));
  cancel.Cancel();
  EXPECT_FALSE(limiter.Wait(&cancel));  // would wait: the sleeper sees the token
  EXPECT_TRUE(waits.empty());
}

TEST(RateLimiterTest, TryAcquireNeverWaits) {
  FakeClock clock;
  RateLimiter limiter(1, 2, clock, nullptr);
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
  clock.Advance(seconds(1));
  EXPECT_TRUE(limiter.TryAcquire());
  EXPECT_FALSE(limiter.TryAcquire());
}

TEST(RateLimiterTest, IgnoresAClockSteppingBackwards) {
  FakeClock clock;
  RateLimiter limiter(1, 1, clock, nullptr);
  EXPECT_EQ(limiter.Reserve(), Duration(0));
  clock.Advance(-seconds(100));
  EXPECT_EQ(limiter.Reserve(), seconds(1));
}

}  // namespace
}  // namespace muster::kube
