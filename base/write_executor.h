// WriteExecutor: runs a controller's writes - callables keyed by the object
// they write - a bounded number at a time, coalescing the ones not yet sent
// and leaving those that failed for the controller's next pass.
//
// A controller plans its writes each pass and Submit()s them. Queued writes
// are run in batches:
//   - order: by rank (lower first: a controller puts the writes that decide
//     how soon work starts first), then by key, then the unkeyed writes in
//     the order submitted;
//   - coalescing: a write whose (rank, key) matches one queued and not yet
//     started replaces it (the latest write per object wins; a slow server
//     then sees one write per object, not a backlog). A write with an empty
//     key is never coalesced (an event, an eviction): every one runs;
//   - concurrency: up to `parallelism` writes at once (the submitting or
//     writer thread included);
//   - timeout: a batch starts no write once `batch_timeout` has passed since
//     it began; a write in flight is its callable's to bound (a client's
//     request timeout);
//   - retry next pass: a keyed write whose callable returned false, or that
//     did not get to run (the batch timed out, or Stop() came first), is
//     reported by TakeUnwritten(), so the controller forgets having written
//     it and plans it again. An unkeyed write is never retried.
//
// Without Start(), Submit() runs the batch on the caller's thread and
// returns when it is done. After Start(), a writer thread runs the batches
// and Submit() only queues: the controller's next pass need not wait for the
// writes of this one.
//
// Thread-safety: Submit(), TakeUnwritten() and WaitIdle() may be called
// from any thread; Start() and Stop() from the owner's. Callables run on the
// writer thread and up to parallelism - 1 helper threads, so they must be
// thread-safe, and must not call back into the executor.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/mutex.h"

namespace muster::base {

class WriteExecutor {
 public:
  struct Write {
    int rank = 0;
    // The object written, unique within the rank; empty: never coalesced.
    std::string key;
    // Sends the write: true once written (or when there is nothing to
    // retry), false to leave it for the next pass.
    std::function<bool()> run;
  };
  // A keyed write left for the next pass.
  struct Unwritten {
    int rank = 0;
    std::string key;
    bool operator==(const Unwritten&) const = default;
  };
  // What one batch did, per rank.
  struct RankCount {
    size_t queued = 0;
    size_t written = 0;
  };
  using BatchReport = std::map<int, RankCount>;

  struct Options {
    int parallelism = 16;
    // Zero: no limit.
    std::chrono::milliseconds batch_timeout{0};
    // Called after each batch, on the thread that ran it.
    std::function<void(const BatchReport&)> on_batch;
  };

  explicit WriteExecutor(Options options);
  ~WriteExecutor();  // Stop()
  WriteExecutor(const WriteExecutor&) = delete;
  WriteExecutor& operator=(const WriteExecutor&) = delete;

  // Queues `writes` (coalescing as above); without Start(), runs them now.
  void Submit(std::vector<Write> writes);
  // The keyed writes left for the next pass since the last call.
  std::vector<Unwritten> TakeUnwritten();
  // Blocks until nothing is queued or running (after Start()).
  void WaitIdle();

  // Starts the writer thread. Stop() (or the destructor) finishes the batch
  // in progress and ends it; writes still queued are left for the next pass
  // (TakeUnwritten), and Submit() runs on the caller's thread again.
  void Start();
  void Stop();

 private:
  // Batch order: rank, keyed before unkeyed, key, submission.
  using Slot = std::tuple<int, bool, std::string, uint64_t>;
  using Queue = std::map<Slot, std::function<bool()>>;

  void Enqueue(std::vector<Write> writes) MUSTER_REQUIRES(mu_);
  void WriterLoop();
  // Runs `batch` and records what it left unwritten.
  void RunBatch(Queue batch);

  const Options options_;
  Mutex mu_;
  CondVar cv_;
  Queue queued_ MUSTER_GUARDED_BY(mu_);
  std::vector<Unwritten> unwritten_ MUSTER_GUARDED_BY(mu_);
  uint64_t next_seq_ MUSTER_GUARDED_BY(mu_) = 0;
  bool running_ MUSTER_GUARDED_BY(mu_) = false;  // the writer thread runs
  bool stopping_ MUSTER_GUARDED_BY(mu_) = false;
  bool busy_ MUSTER_GUARDED_BY(mu_) = false;  // a batch is in progress
  std::thread writer_;
};

}  // namespace muster::base
