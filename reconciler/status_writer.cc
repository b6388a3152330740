#include "reconciler/status_writer.h"

#include <string>
#include <utility>
#include <vector>

#include "kube/codec/volcano_codec.h"

namespace muster::reconciler {
namespace {

// The tasks `before` counts that `after` does not: named as null in the
// patch (a merge patch removes only what it names, and the status must name
// the Job's tasks only).
std::vector<std::string> RemovedTasks(const JobStatus& before, const JobStatus& after) {
  std::vector<std::string> gone;
  for (const auto& [task, counts] : before.task_status_count) {
    if (!after.task_status_count.contains(task)) gone.push_back(task);
  }
  return gone;
}

}  // namespace

bool StatusWriter::MayWriteNow(const std::string& job_key, Time* due) {
  base::MutexLock lock(&mu_);
  const Time now = clock_.Now();
  // Since our last write, or else since the first change we held back.
  auto it = last_write_.find(job_key);
  if (it == last_write_.end()) it = last_write_.emplace(job_key, now).first;
  *due = it->second + kCoalesce;
  return now >= *due;
}

StatusOr<std::shared_ptr<const Job>> StatusWriter::Write(const Job& job, const JobStatus& status) {
  // taskStatusCount holds every task and phase (lifecycle.cc CountPods): a
  // merge patch cannot remove a key it does not name, so a task the status
  // names and the Job no longer has is named as null.
  StatusOr<std::string> r = PatchAtVersion(
      job.meta, kube::EncodeJobStatusPatchAtVersion(job.meta.resource_version, status,
                                                    RemovedTasks(job.status, status)));
  if (!r.ok()) return r.status();
  {
    base::MutexLock lock(&mu_);
    last_write_[job.meta.Key()] = clock_.Now();
  }
  StatusOr<Job> written = kube::DecodeJob(*r);
  if (!written.ok()) return std::shared_ptr<const Job>();
  return std::make_shared<const Job>(std::move(written).value());
}

Status StatusWriter::WriteState(const ObjectMeta& job, const JobState& state,
                                const std::vector<JobCondition>& conditions) {
  return PatchAtVersion(job,
                        kube::EncodeJobStatePatchAtVersion(job.resource_version, state, conditions))
      .status();
}

// Sends `patch` (a status merge patch with `job`'s resourceVersion as its
// precondition) to the Job's status.
StatusOr<std::string> StatusWriter::PatchAtVersion(const ObjectMeta& job,
                                                   const std::string& patch) {
  StatusOr<std::string> r =
      client_->PatchStatus(kube::VolcanoJobsRef().WithNamespace(job.namespace_).WithName(job.name),
                           kube::PatchType::kMerge, patch);
  metrics_->CountWrite("patch", "jobs");
  return r;
}

}  // namespace muster::reconciler
