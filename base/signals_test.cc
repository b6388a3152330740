#include "base/signals.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>

namespace muster::base {
namespace {

using std::chrono::milliseconds;

// The signals are sent with pthread_kill to this thread, which has them
// blocked: they stay pending for Wait() whatever other threads exist, and
// never reach a default handler.
TEST(SignalWaiterTest, ReturnsThePendingSignalOrZeroAfterTheTick) {
  const SignalWaiter waiter({SIGUSR1, SIGUSR2});
  const struct {
    const char* name;
    int send;  // 0: nothing sent
    int want;
  } cases[] = {
      {"nothing pending: the tick passes", 0, 0},
      {"SIGUSR1", SIGUSR1, SIGUSR1},
      {"SIGUSR2", SIGUSR2, SIGUSR2},
  };
  for (const auto& c : cases) {
    if (c.send != 0) {
      ASSERT_EQ(pthread_kill(pthread_self(), c.send), 0) << c.name;
    }
    EXPECT_EQ(waiter.Wait(milliseconds(20)), c.want) << c.name;
  }
}

TEST(SignalWaiterTest, WaitsAboutOneTickWhenNothingArrives) {
  const SignalWaiter waiter({SIGUSR1});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(waiter.Wait(milliseconds(1050)), 0);  // tv_sec and tv_nsec both used
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

TEST(SignalWaiterTest, TakesEachSignalOnce) {
  const SignalWaiter waiter({SIGUSR1});
  ASSERT_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
  EXPECT_EQ(waiter.Wait(milliseconds(20)), SIGUSR1);
  EXPECT_EQ(waiter.Wait(milliseconds(20)), 0);
}

}  // namespace
}  // namespace muster::base
