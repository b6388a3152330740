// GangObserver: what a gang controller pass and its writes tell an operator
// - the metrics (extender/metrics.h, the gang controller's) and the
// /debug/state JSON - apart from planning (gang_writes.h) and sending
// (gang_write_sender.h).
//
// Thread-safety: ObservePass() and ObservePassDuration() run on the pass
// thread, ObserveBatch() on the thread that ran a batch of writes;
// DebugJson() and QueuesDebugJson() may be called from any thread.
#pragma once

#include <string>

#include "base/mutex.h"
#include "base/write_executor.h"
#include "extender/gang_record.h"
#include "extender/gang_writes.h"
#include "model/time.h"

namespace muster::extender {

class ExtenderMetrics;

class GangObserver {
 public:
  // `metrics` (null: none) must outlive the observer.
  explicit GangObserver(ExtenderMetrics* metrics) : metrics_(metrics) {}
  GangObserver(const GangObserver&) = delete;
  GangObserver& operator=(const GangObserver&) = delete;

  // One pass, once its writes are planned: reservations made and expired,
  // the preemption started and the gangs it reclaims, the waits that ended,
  // the PodGroups by phase (as last written, else as the watch saw them),
  // the GPU-seconds gangs short of minMember held over `since_last_pass`,
  // the queues' shares; and the debug JSON of the gangs and queues.
  void ObservePass(const PassFacts& facts, const WritePlan& plan, const GangRecords& records,
                   Duration since_last_pass) MUSTER_EXCLUDES(mu_);
  // The wall time of a pass (a cost, not a decision).
  void ObservePassDuration(double seconds);
  // A batch of writes sent (ranks of gang_writes.h): the pods evicted.
  void ObserveBatch(const base::WriteExecutor::BatchReport& report);

  // Per gang: phase, members, queue, place in the planning order, wait
  // reason (JSON array).
  std::string DebugJson() const MUSTER_EXCLUDES(mu_);
  // Per queue: deserved, allocated, pending demand, share; the problems met
  // reading the queue tree (JSON object).
  std::string QueuesDebugJson() const MUSTER_EXCLUDES(mu_);

 private:
  void CountPass(const PassFacts& facts, const WritePlan& plan, const GangRecords& records,
                 Duration since_last_pass);

  ExtenderMetrics* const metrics_;
  mutable base::Mutex mu_;
  std::string debug_json_ MUSTER_GUARDED_BY(mu_) = "[]";
  std::string queues_debug_json_ MUSTER_GUARDED_BY(mu_) = "{}";
};

}  // namespace muster::extender
