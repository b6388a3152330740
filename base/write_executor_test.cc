#include "base/write_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace muster::base {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using Unwritten = WriteExecutor::Unwritten;

// What the writes ran, in order (thread-safe).
class Log {
 public:
  WriteExecutor::Write Entry(int rank, std::string key, std::string text, bool ok = true) {
    return {rank, std::move(key), [this, text, ok] {
              std::lock_guard<std::mutex> lock(mu_);
              lines_.push_back(text);
              return ok;
            }};
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// A write that blocks the writer until Release(): later submissions queue
// behind it, as they do behind a slow API server.
class Gate {
 public:
  WriteExecutor::Write Entry() {
    return {0, "", [this] {
              std::unique_lock<std::mutex> lock(mu_);
              entered_ = true;
              cv_.notify_all();
              cv_.wait(lock, [this] { return released_; });
              return true;
            }};
  }
  void AwaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
};

TEST(WriteExecutorTest, RunsByRankThenKeyThenUnkeyedInSubmissionOrder) {
  Log log;
  WriteExecutor executor({.parallelism = 1});
  executor.Submit({log.Entry(2, "", "event 1"), log.Entry(1, "b", "status b"),
                   log.Entry(0, "z", "gate z"), log.Entry(2, "", "event 2"),
                   log.Entry(0, "a", "gate a"), log.Entry(2, "k", "keyed in rank 2")});
  EXPECT_THAT(log.lines(),
              ElementsAre("gate a", "gate z", "status b", "keyed in rank 2", "event 1", "event 2"));
}

// While the writer is busy, a later write to the same object replaces the
// queued one; unkeyed writes all run.
TEST(WriteExecutorTest, TheLatestWritePerObjectWinsWhileNotYetSent) {
  Log log;
  Gate gate;
  WriteExecutor executor({.parallelism = 1});
  executor.Start();
  executor.Submit({gate.Entry()});
  gate.AwaitEntered();
  executor.Submit({log.Entry(0, "pod/u0", "old"), log.Entry(1, "group/a", "Pending"),
                   log.Entry(2, "", "GangReserved")});
  executor.Submit({log.Entry(0, "pod/u0", "new"), log.Entry(0, "pod/u1", "b"),
                   log.Entry(1, "group/a", "Inqueue"), log.Entry(2, "", "GangReservationExpired"),
                   log.Entry(3, "", "evict lo-0")});
  gate.Release();
  executor.WaitIdle();
  EXPECT_THAT(log.lines(), ElementsAre("new", "b", "Inqueue", "GangReserved",
                                       "GangReservationExpired", "evict lo-0"));
  EXPECT_THAT(executor.TakeUnwritten(), IsEmpty());
}

TEST(WriteExecutorTest, RunsAtMostParallelismWritesAtOnce) {
  constexpr int kParallelism = 3;
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  std::vector<WriteExecutor::Write> writes;
  for (int i = 0; i < 12; ++i) {
    writes.push_back({0, "w" + std::to_string(i), [&] {
                        const int now = ++in_flight;
                        for (int seen = most;
                             now > seen && !most.compare_exchange_weak(seen, now);) {
                        }
                        // Wait (bounded) for the others to overlap.
                        const auto until = std::chrono::steady_clock::now() + 1s;
                        while (most < kParallelism && std::chrono::steady_clock::now() < until) {
                          std::this_thread::sleep_for(1ms);
                        }
                        --in_flight;
                        return true;
                      }});
  }
  WriteExecutor executor({.parallelism = kParallelism});
  executor.Submit(std::move(writes));
  EXPECT_EQ(most, kParallelism);
}

// A batch starts no write after its timeout: those left are the next pass's.
TEST(WriteExecutorTest, ABatchPastItsTimeoutLeavesTheRestForTheNextPass) {
  Log log;
  std::vector<WriteExecutor::BatchReport> reports;
  WriteExecutor executor(
      {.parallelism = 1,
       .batch_timeout = 20ms,
       .on_batch = [&](const WriteExecutor::BatchReport& r) { reports.push_back(r); }});
  executor.Submit({{0, "slow",
                    [] {
                      std::this_thread::sleep_for(60ms);
                      return true;
                    }},
                   log.Entry(0, "t1", "t1"),
                   log.Entry(1, "t2", "t2"),
                   log.Entry(2, "", "event")});
  EXPECT_THAT(log.lines(), IsEmpty());
  EXPECT_THAT(executor.TakeUnwritten(), ElementsAre(Unwritten{0, "t1"}, Unwritten{1, "t2"}))
      << "the unkeyed event is not retried";
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0][0].queued, 2u);
  EXPECT_EQ(reports[0][0].written, 1u);
  EXPECT_EQ(reports[0][2].written, 0u);
}

TEST(WriteExecutorTest, AFailedKeyedWriteIsReportedOnceForTheNextPass) {
  Log log;
  WriteExecutor executor({.parallelism = 4});
  executor.Submit({log.Entry(0, "ok", "ok"), log.Entry(0, "bad", "bad", /*ok=*/false),
                   log.Entry(1, "", "event", /*ok=*/false)});
  EXPECT_THAT(log.lines(), UnorderedElementsAre("ok", "bad", "event"));
  EXPECT_THAT(executor.TakeUnwritten(), ElementsAre(Unwritten{0, "bad"}));
  EXPECT_THAT(executor.TakeUnwritten(), IsEmpty());
}

// Stop() finishes the batch in flight; what was still queued is left for
// the next pass, and Submit() runs on the caller's thread again.
TEST(WriteExecutorTest, StopLeavesQueuedWritesForTheNextPass) {
  Log log;
  Gate gate;
  WriteExecutor executor({.parallelism = 1});
  executor.Start();
  executor.Submit({gate.Entry()});
  gate.AwaitEntered();
  executor.Submit({log.Entry(0, "queued", "queued"), log.Entry(1, "", "event")});
  std::thread release([&] {
    std::this_thread::sleep_for(20ms);
    gate.Release();
  });
  executor.Stop();
  release.join();
  EXPECT_THAT(log.lines(), IsEmpty());
  EXPECT_THAT(executor.TakeUnwritten(), ElementsAre(Unwritten{0, "queued"}));
  executor.Submit({log.Entry(0, "now", "now")});
  EXPECT_THAT(log.lines(), ElementsAre("now"));
}

}  // namespace
}  // namespace muster::base
