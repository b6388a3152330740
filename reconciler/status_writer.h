// StatusWriter: the one way JobController (controller.h) sends a Job's
// status, and the coalescing window of the status changes that may wait.
//
// Every write is a merge patch of the Job's status subresource with the
// Job's resourceVersion as a precondition: the API server answers 409
// (kConflict) when a newer version of the Job exists, whose status must be
// judged anew, instead of overwriting it.
//
// Coalescing: a status change that may wait (lifecycle.h StatusWriteOf
// kMayWait: the pod counters alone, a new Job's first status) is written
// once kCoalesce (2 s) have passed since this process's last status write of
// that Job - or, when there was none, since the first change held back - so
// a job whose pods start one by one writes its status a few times, not once
// per pod. The change held back is not kept here: the caller syncs the Job
// again when it is due and plans the status afresh.
//
// Not base::WriteExecutor (the gang controller's): the sync waits for each
// status write's answer - a 409 makes it read the Job and plan again, and
// the kills that follow must not go before the status that records them -
// and a change held back is planned afresh when due, not queued, so a queue
// would have nothing to coalesce. A sync's pod writes are likewise one
// ordered batch with unique objects (base::ParallelFor).
//
// Thread-safety: thread-safe; no lock is held during a write.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "kube/client/client.h"
#include "model/clock.h"
#include "model/job.h"
#include "model/status.h"
#include "reconciler/metrics.h"

namespace muster::reconciler {

class StatusWriter {
 public:
  // How long a status change that may wait is held (see above).
  static constexpr Duration kCoalesce = std::chrono::seconds(2);

  // `client` and `metrics` must outlive this.
  StatusWriter(kube::Client* client, const Clock& clock, ReconcilerMetrics* metrics)
      : client_(client), clock_(clock), metrics_(metrics) {}

  // True when a status change of the Job `job_key` that may wait is to be
  // written now; else `*due` is when it may be. The first call for a Job
  // this process has not written opens its window.
  bool MayWriteNow(const std::string& job_key, Time* due) MUSTER_EXCLUDES(mu_);

  // Writes `status` over `job.status` at `job`'s resourceVersion; a task
  // that `job.status` counts and `status` does not is removed. Returns the
  // Job as the API server answered (null when that does not decode).
  // Counts as the Job's last write for the window.
  StatusOr<std::shared_ptr<const Job>> Write(const Job& job, const JobStatus& status)
      MUSTER_EXCLUDES(mu_);

  // Writes status.state and `conditions` (left as they are when empty)
  // alone, at `job`'s resourceVersion: the answer to a Job whose spec does
  // not decode, whose counters are unknown. Not counted for the window.
  Status WriteState(const ObjectMeta& job, const JobState& state,
                    const std::vector<JobCondition>& conditions);

 private:
  StatusOr<std::string> PatchAtVersion(const ObjectMeta& job, const std::string& patch);

  kube::Client* const client_;
  const Clock& clock_;
  ReconcilerMetrics* const metrics_;

  base::Mutex mu_;
  // job key -> this process's last status write of the Job (or the first
  // change held back, before any). Entries stay after the Job is deleted:
  // a Job re-created under the same name finds its predecessor's time.
  std::map<std::string, Time> last_write_ MUSTER_GUARDED_BY(mu_);
};

}  // namespace muster::reconciler
