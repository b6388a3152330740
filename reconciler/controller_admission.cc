// JobController and the Jobs it must not simply run (controller.h): the
// update rules (job_admission.h ValidateJobUpdate) against the spec last
// accepted, a Job refused as invalid, and a Job that does not decode.
#include <spdlog/spdlog.h>

#include <utility>

#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/controller_internal.h"

namespace muster::reconciler {

using controller_internal::kRetryDelay;
using controller_internal::kUpdateRefused;
using controller_internal::MarkRefusal;
using controller_internal::StoredAcceptedSpec;

namespace controller_internal {

void MarkRefusal(JobStatus& status, const Status* why) {
  JobState& state = status.state;
  if (why != nullptr && (state.reason.empty() || state.reason == kUpdateRefused)) {
    state.reason = std::string(kUpdateRefused);
    state.message = why->message();
  } else if (why == nullptr && state.reason == kUpdateRefused) {
    state.reason.clear();
    state.message.clear();
  }
}

std::optional<AcceptedSpec> StoredAcceptedSpec(const JobStatus& status) {
  auto it = status.controlled_resources.find(std::string(kAcceptedSpecKey));
  if (it == status.controlled_resources.end()) return std::nullopt;
  return DecodeAcceptedSpec(it->second);
}

}  // namespace controller_internal

bool JobController::Admit(Job* job, SpecVerdict* verdict) {
  *job = WithDefaults(std::move(*job), options_.default_scheduler);
  *verdict = JudgeSpec(job);
  switch (verdict->kind) {
    case SpecVerdict::Kind::kAccepted:
      return true;
    case SpecVerdict::Kind::kRefused:
      ReportRefused(*job, verdict->why);
      return true;
    case SpecVerdict::Kind::kInvalid:
      RejectInvalid(*job, verdict->why);
      return false;
    case SpecVerdict::Kind::kHold:
      break;
  }
  // Held: the status says why; nothing else is written.
  ReportRefused(*job, verdict->why);
  JobStatus status = job->status;
  MarkRefusal(status, &verdict->why);
  if (status != job->status) {
    Status s = WriteStatus(*job, status);
    if (!s.ok()) spdlog::warn("reconciler: job {}: status: {}", job->meta.Key(), s.ToString());
  }
  return false;
}

JobController::SpecVerdict JobController::JudgeSpec(Job* job) {
  const std::optional<AcceptedJob> mem = AcceptedOf(*job);
  const std::optional<AcceptedSpec> stored = StoredAcceptedSpec(job->status);
  const AcceptedSpec* baseline = mem ? &mem->record : stored ? &*stored : nullptr;
  if (baseline == nullptr) {
    // First sight (a new Job, or one from before the digest): the spec as
    // it is now is the accepted one, when it is valid at all.
    if (Status valid = ValidateJob(*job); !valid.ok()) {
      return {SpecVerdict::Kind::kInvalid, valid, {}};
    }
    return Accept(*job);
  }
  // The generation accepted last: the same spec (the API server bumps
  // metadata.generation on every spec change).
  if (job->meta.generation != 0 && baseline->generation == job->meta.generation) {
    return mem ? SpecVerdict{SpecVerdict::Kind::kAccepted, Status::Ok(), mem->record}
               : Accept(*job);
  }
  Status update = ValidateJobUpdate(*baseline, *job);
  if (update.ok()) return Accept(*job);
  if (!mem) return {SpecVerdict::Kind::kHold, update, *baseline};
  job->spec = *mem->spec;
  return {SpecVerdict::Kind::kRefused, update, mem->record};
}

std::optional<JobController::AcceptedJob> JobController::AcceptedOf(const Job& job) {
  base::MutexLock lock(&mu_);
  JobRecord* record = FindRecord(job.meta.Key());
  if (record == nullptr || !record->accepted.has_value()) return std::nullopt;
  std::optional<AcceptedJob>& accepted = record->accepted;
  if (accepted->uid == job.meta.uid) return accepted;
  accepted.reset();  // an earlier Job of the same name
  return std::nullopt;
}

JobController::SpecVerdict JobController::Accept(const Job& job) {
  AcceptedSpec record = AcceptedSpecOf(job);
  base::MutexLock lock(&mu_);
  records_[job.meta.Key()].accepted =
      AcceptedJob{job.meta.uid, std::make_shared<const JobSpec>(job.spec), record, ""};
  return {SpecVerdict::Kind::kAccepted, Status::Ok(), std::move(record)};
}

void JobController::ReportRefused(const Job& job, const Status& why) {
  {
    base::MutexLock lock(&mu_);
    JobRecord* record = FindRecord(job.meta.Key());
    if (record != nullptr && record->accepted && record->accepted->uid == job.meta.uid) {
      AcceptedJob& accepted = *record->accepted;
      if (accepted.refused == why.message()) return;
      accepted.refused = why.message();
    }
  }
  const JobState& state = job.status.state;
  if (state.reason == kUpdateRefused && state.message == why.message()) return;  // said already
  spdlog::warn("reconciler: job {}: update refused: {}", job.meta.Key(), why.message());
  RecordEvent(job, {"Warning", std::string(kUpdateRefused), why.message()});
}

void JobController::RejectInvalid(const Job& job, const Status& why) {
  if (job.status.state.phase == kFailed && job.status.state.reason == "InvalidSpec" &&
      job.status.state.message == why.message()) {
    return;  // already said
  }
  spdlog::warn("reconciler: job {} is invalid: {}", job.meta.Key(), why.message());
  metrics_->CountInvalidJob();
  JobStatus status = job.status;
  Time now = clock_.Now();
  status.state = JobState{std::string(kFailed), "InvalidSpec", why.message(), now};
  std::erase_if(status.conditions, [](const JobCondition& c) { return c.status == kFailed; });
  status.conditions.push_back(JobCondition{std::string(kFailed), now});
  Status s = WriteStatus(job, status);
  if (!s.ok()) spdlog::warn("reconciler: job {}: status: {}", job.meta.Key(), s.ToString());
  RecordEvent(job, {"Warning", "InvalidSpec", why.message()});
}

void JobController::AnswerUndecodable(const kube::UndecodableObject& job) {
  const std::string key = job.Key();
  const std::string said = job.meta.uid + "\n" + job.problem;
  if (UndecodableSaid(key, said)) return;
  // What the Job says already, when its status reads on its own.
  StatusOr<JobStatus> stored = kube::DecodeJobStatusOf(job.json);
  const JobStatus status = stored.ok() ? *stored : JobStatus{};
  const JobState& state = status.state;
  const Time now = clock_.Now();
  const bool rejected = state.phase == kFailed && state.reason == "InvalidSpec";
  JobState want;
  std::vector<JobCondition> conditions;
  if (state.phase.empty() || rejected) {
    // New (or refused before): it never ran, and never will as it is.
    want = JobState{std::string(kFailed), "InvalidSpec", job.problem, now};
    conditions = status.conditions;
    std::erase_if(conditions, [](const JobCondition& c) { return c.status == kFailed; });
    conditions.push_back(JobCondition{std::string(kFailed), now});
  } else if (!IsFinished(state.phase)) {
    // Started: held as a refused update is, until its spec decodes again.
    want =
        JobState{state.phase, std::string(kUpdateRefused), job.problem, state.last_transition_time};
  } else {
    return;  // finished: its phase is its answer; there is nothing to hold
  }
  if (state.phase == want.phase && state.reason == want.reason && state.message == want.message) {
    SetUndecodableSaid(key, said);
    return;  // said already (before a restart)
  }
  spdlog::warn("reconciler: job {} does not decode: {}", key, job.problem);
  if (Status s = status_writer_.WriteState(job.meta, want, conditions); !s.ok()) {
    // A newer version is on its way (409), or the API failed: try again.
    spdlog::warn("reconciler: job {}: status: {}", key, s.ToString());
    if (s.code() != StatusCode::kNotFound) EnqueueAt(key, Request{}, clock_.Now() + kRetryDelay);
    return;
  }
  SetUndecodableSaid(key, said);
  if (want.reason == "InvalidSpec") metrics_->CountInvalidJob();
  Job named;
  named.meta = job.meta;
  RecordEvent(named, {"Warning", want.reason, job.problem});
}

bool JobController::UndecodableSaid(const std::string& job_key, const std::string& said) {
  base::MutexLock lock(&mu_);
  const JobRecord* record = FindRecord(job_key);
  return record != nullptr && record->undecodable_said == said;
}

void JobController::SetUndecodableSaid(const std::string& job_key, const std::string& said) {
  base::MutexLock lock(&mu_);
  records_[job_key].undecodable_said = said;
}

}  // namespace muster::reconciler
