#include "base/write_executor.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/parallel.h"

namespace muster::base {
WriteExecutor::WriteExecutor(Options options) : options_(std::move(options)) {}

WriteExecutor::~WriteExecutor() { Stop(); }

void WriteExecutor::Enqueue(std::vector<Write> writes) {
  for (Write& w : writes) {
    const bool unkeyed = w.key.empty();
    Slot slot{w.rank, unkeyed, std::move(w.key), unkeyed ? next_seq_++ : 0};
    queued_.insert_or_assign(std::move(slot), std::move(w.run));
  }
}

void WriteExecutor::Submit(std::vector<Write> writes) {
  Queue batch;
  {
    MutexLock lock(&mu_);
    Enqueue(std::move(writes));
    if (running_) {
      cv_.SignalAll();
      return;
    }
    batch.swap(queued_);
  }
  RunBatch(std::move(batch));
}

std::vector<WriteExecutor::Unwritten> WriteExecutor::TakeUnwritten() {
  MutexLock lock(&mu_);
  return std::exchange(unwritten_, {});
}

void WriteExecutor::WaitIdle() {
  MutexLock lock(&mu_);
  while (running_ && !(queued_.empty() && !busy_)) cv_.Wait(&mu_);
}

void WriteExecutor::Start() {
  MutexLock lock(&mu_);
  if (running_) return;
  running_ = true;
  stopping_ = false;
  writer_ = std::thread([this] { WriterLoop(); });
}

void WriteExecutor::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  if (writer_.joinable()) writer_.join();
  MutexLock lock(&mu_);
  running_ = false;
  // What the writer did not get to is the next pass's to plan again.
  for (auto& [slot, run] : queued_) {
    if (!std::get<1>(slot)) unwritten_.push_back({std::get<0>(slot), std::get<2>(slot)});
  }
  queued_.clear();
  cv_.SignalAll();
}

void WriteExecutor::WriterLoop() {
  for (;;) {
    Queue batch;
    {
      MutexLock lock(&mu_);
      busy_ = false;
      cv_.SignalAll();  // WaitIdle
      while (!stopping_ && queued_.empty()) cv_.Wait(&mu_);
      if (stopping_) return;
      batch.swap(queued_);
      busy_ = true;
    }
    RunBatch(std::move(batch));
  }
}

void WriteExecutor::RunBatch(Queue batch) {
  if (batch.empty()) return;
  std::vector<std::pair<const Slot*, const std::function<bool()>*>> order;
  order.reserve(batch.size());
  for (const auto& [slot, run] : batch) order.emplace_back(&slot, &run);
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options_.batch_timeout.count() > 0) {
    deadline = std::chrono::steady_clock::now() + options_.batch_timeout;
  }
  // 1: written; 0: failed or not run.
  std::vector<char> written(order.size(), 0);
  ParallelFor(order.size(), options_.parallelism, [&](size_t i) {
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return;
    written[i] = (*order[i].second)() ? 1 : 0;
  });
  BatchReport report;
  std::vector<Unwritten> unwritten;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& [rank, unkeyed, key, seq] = *order[i].first;
    RankCount& count = report[rank];
    ++count.queued;
    count.written += written[i];
    if (!written[i] && !unkeyed) unwritten.push_back({rank, key});
  }
  {
    MutexLock lock(&mu_);
    std::move(unwritten.begin(), unwritten.end(), std::back_inserter(unwritten_));
  }
  if (options_.on_batch) options_.on_batch(report);
}

}  // namespace muster::base
