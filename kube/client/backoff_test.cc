#include "kube/client/backoff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(BackoffTest, GrowsJittersAndCaps) {
  struct Case {
    std::string name;
    BackoffOptions options;
    double random;  // what the random source returns
    std::vector<Duration> waits;
  };
  const std::vector<Case> cases = {
      {"doubles without jitter",
       {milliseconds(100), seconds(10), 2.0, 0.0, Duration(0)},
       0.5,
       {milliseconds(100), milliseconds(200), milliseconds(400), milliseconds(800)}},
      {"caps at max",
       {milliseconds(100), milliseconds(300), 2.0, 0.0, Duration(0)},
       0.0,
       {milliseconds(100), milliseconds(200), milliseconds(300), milliseconds(300)}},
      {"jitter stretches the wait",
       {milliseconds(100), seconds(10), 2.0, 0.5, Duration(0)},
       0.5,
       {milliseconds(125), milliseconds(250), milliseconds(500)}},
      {"jitter never exceeds max",
       {milliseconds(100), milliseconds(200), 2.0, 1.0, Duration(0)},
       0.99,
       {milliseconds(199), milliseconds(200), milliseconds(200)}},
      {"multiplier three",
       {seconds(1), seconds(100), 3.0, 0.0, Duration(0)},
       0.0,
       {seconds(1), seconds(3), seconds(9), seconds(27), seconds(81), seconds(100)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    Backoff backoff(c.options, clock, [&] { return c.random; });
    std::vector<Duration> got;
    for (size_t i = 0; i < c.waits.size(); ++i) got.push_back(backoff.Next());
    EXPECT_EQ(got, c.waits);
  }
}

TEST(BackoffTest, ManyAttemptsStayAtTheCap) {
  FakeClock clock;
  Backoff backoff({milliseconds(1), seconds(30), 2.0, 0.0, Duration(0)}, clock, [] { return 0.0; });
  Duration last{0};
  for (int i = 0; i < 10'000; ++i) last = backoff.Next();
  EXPECT_EQ(last, seconds(30));
  EXPECT_EQ(backoff.attempts(), 10'000);
}

TEST(BackoffTest, ResetStartsOver) {
  FakeClock clock;
  Backoff backoff({milliseconds(100), seconds(10), 2.0, 0.0, Duration(0)}, clock,
                  [] { return 0.0; });
  backoff.Next();
  backoff.Next();
  backoff.Reset();
  EXPECT_EQ(backoff.Next(), milliseconds(100));
}

TEST(BackoffTest, ResetsItselfAfterAQuietPeriod) {
  FakeClock clock;
  Backoff backoff({milliseconds(100), seconds(10), 2.0, 0.0, seconds(60)}, clock,
                  [] { return 0.0; });
  EXPECT_EQ(backoff.Next(), milliseconds(100));
  clock.Advance(seconds(59));
  EXPECT_EQ(backoff.Next(), milliseconds(200));  // still failing: keeps growing
  clock.Advance(seconds(60));
  EXPECT_EQ(backoff.Next(), milliseconds(100));  // a quiet minute: forgiven
}

TEST(BackoffTest, DefaultRandomSourceStaysInRange) {
  RandomSource random = DefaultRandomSource();
  for (int i = 0; i < 1000; ++i) {
    const double r = random();
    ASSERT_GE(r, 0.0);
    ASSERT_LT(r, 1.0);
  }
}

}  // namespace
}  // namespace muster::kube
