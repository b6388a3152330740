// JobController's sync of one Job (controller.h): the Job as last seen or
// written, its admission, a snapshot of what exists of it (the informers'
// view plus the expectations), Reconcile's Plan, carried out by Apply
// (controller_writes.cc), again on a fresh read when the status write meets
// a newer Job.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>
#include <utility>

#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/controller_internal.h"
#include "reconciler/gpu_fraction.h"
#include "reconciler/naming.h"
#include "reconciler/queue_state.h"

namespace muster::reconciler {

using controller_internal::kConflictRetries;
using controller_internal::kNodesWait;
using controller_internal::kNodesWaitBound;
using controller_internal::kRetryDelay;
using controller_internal::MarkRefusal;
using controller_internal::StoredAcceptedSpec;

namespace {

// The reason of the Event of a Job that waits for the nodes (WaitForNodes).
constexpr std::string_view kWaitingForNodes = "WaitingForNodes";

// The message of the Warning Event of a Job that still waits for the nodes
// after kNodesWaitBound; `list_error`: the Node informer's latest.
std::string NodesWaitMessage(const Status& list_error) {
  std::string why = list_error.ok() ? "the first list of nodes has not answered"
                                    : "listing nodes failed: " + list_error.message();
  if (list_error.code() == StatusCode::kPermissionDenied) {
    why += " (the reconciler's ClusterRole needs list and watch on nodes)";
  }
  return "waits to check its GPU memory against the cluster's nodes, not listed after " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kNodesWaitBound).count()) +
         " s: " + why;
}

int64_t ParseVersion(const std::string& rv) {
  int64_t v = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), v);
  return v;
}

// The pod, as the snapshot should hold it once our kill is seen.
std::shared_ptr<const Pod> AsDeleting(const Pod& pod, Time when) {
  auto copy = std::make_shared<Pod>(pod);
  copy->meta.deletion_timestamp = when;
  return copy;
}

// A pod we created (replica `index` of `task`) that the informer has not
// delivered yet.
std::shared_ptr<const Pod> Unseen(const Job& job, const std::string& task, int index, Time when) {
  auto pod = std::make_shared<Pod>();
  pod->meta.name = PodName(job.meta.name, task, index);
  pod->meta.namespace_ = job.meta.namespace_;
  pod->meta.creation_timestamp = when;
  pod->meta.annotations[std::string(kTaskSpecKey)] = task;
  pod->meta.annotations[std::string(kTaskIndexKey)] = std::to_string(index);
  pod->meta.annotations[std::string(kJobVersionKey)] = std::to_string(job.status.version);
  pod->status.phase = "Pending";
  return pod;
}

}  // namespace

void JobController::Sync(const std::string& job_key, std::vector<Request> requests) {
  auto started = std::chrono::steady_clock::now();
  // The Job as it is now does not decode: the cache's copy (if any) is an
  // older version, and nothing is done on it.
  if (std::shared_ptr<const kube::UndecodableObject> broken = jobs_.Undecodable(job_key)) {
    AnswerUndecodable(*broken);
    return;
  }
  std::shared_ptr<const Job> latest = LatestJob(job_key);
  if (latest == nullptr) return;
  Job job = *latest;
  SpecVerdict verdict;
  if (!Admit(&job, &verdict)) return;
  // "New": no phase and no PodGroup yet - a Job that has started keeps
  // running when its queue closes or the nodes change.
  if (job.status.state.phase.empty() && groups_.Get(PodGroupKey(job)) == nullptr &&
      !AdmitNew(job)) {
    return;
  }
  // Only requests that run a policy need a pass of their own; everything
  // else is covered by the one plain sync at the end.
  std::erase_if(requests, [&](const Request& r) {
    return ResolveAction(job, r).action == kSync && !r.timeout_elapsed;
  });
  requests.push_back(Request{});
  std::optional<std::string_view> result = RunRequests(job_key, &job, &verdict, requests);
  if (!result.has_value()) return;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_->CountSync(*result, seconds);
}

std::shared_ptr<const Job> JobController::LatestJob(const std::string& job_key) {
  std::shared_ptr<const Job> cached = jobs_.Get(job_key);
  if (cached == nullptr || cached->meta.deletion_timestamp.has_value()) return nullptr;
  base::MutexLock lock(&mu_);
  JobRecord* record = FindRecord(job_key);
  if (record == nullptr || record->written == nullptr) return cached;
  const std::shared_ptr<const Job>& written = record->written;
  if (written->meta.uid == cached->meta.uid &&
      ParseVersion(written->meta.resource_version) > ParseVersion(cached->meta.resource_version)) {
    return written;
  }
  record->written.reset();  // the informer caught up (or another Job of that name)
  return cached;
}

std::shared_ptr<const Job> JobController::WrittenJob(const std::string& job_key) {
  base::MutexLock lock(&mu_);
  const JobRecord* record = FindRecord(job_key);
  return record == nullptr ? nullptr : record->written;
}

std::optional<std::string_view> JobController::RunRequests(const std::string& job_key, Job* job,
                                                           SpecVerdict* verdict,
                                                           const std::vector<Request>& requests) {
  std::string_view result = "ok";
  for (size_t next = 0; next < requests.size(); ++next) {
    Status s;
    bool recorded = false;
    if (!SyncRetryingConflicts(job, verdict, requests[next], &s, &recorded, &result)) {
      return std::nullopt;
    }
    if (!s.ok()) {
      result = "error";
      spdlog::warn("reconciler: job {}: {}", job_key, s.ToString());
      // A Command's or a pod event's action that failed before its status
      // was written runs again, and so do the requests after it; one whose
      // status is written is done (a plain sync finishes the rest).
      const Time due = clock_.Now() + kRetryDelay;
      for (size_t i = recorded ? next + 1 : next; i < requests.size(); ++i) {
        EnqueueAt(job_key, requests[i], due);
      }
      EnqueueAt(job_key, Request{}, due);
      break;
    }
    if (std::shared_ptr<const Job> written = WrittenJob(job_key)) {
      *job = *written;
      if (!Admit(job, verdict)) break;
    }
  }
  return result;
}

bool JobController::SyncRetryingConflicts(Job* job, SpecVerdict* verdict, const Request& request,
                                          Status* s, bool* recorded, std::string_view* result) {
  bool conflict = false;
  *recorded = false;
  *s = SyncOnce(*job, *verdict, request, &conflict, recorded);
  for (int attempt = 0; conflict && attempt < kConflictRetries; ++attempt) {
    *result = "conflict";
    StatusOr<std::string> fresh = client_->Get(
        kube::VolcanoJobsRef().WithNamespace(job->meta.namespace_).WithName(job->meta.name));
    if (!fresh.ok()) break;
    StatusOr<Job> decoded = kube::DecodeJob(*fresh);
    if (!decoded.ok()) break;
    *job = *std::move(decoded);
    if (!Admit(job, verdict)) return false;
    conflict = false;
    *recorded = false;
    *s = SyncOnce(*job, *verdict, request, &conflict, recorded);
  }
  return true;
}

Status JobController::SyncOnce(const Job& job, const SpecVerdict& verdict, const Request& request,
                               bool* conflict, bool* recorded) {
  std::vector<std::shared_ptr<const Pod>> held;
  std::shared_ptr<const PodGroup> group;
  // The pods as built (a share of one GPU becomes an annotation or vGPU
  // resources): what the PodGroup's minResources count.
  std::optional<Job> built;
  if (AsksGpuShare(job)) built = JobAsBuilt(job, options_.pods.gpu_fraction);
  JobSnapshot snap = Snapshot(built ? *built : job, &held, &group);
  Time now = clock_.Now();
  Plan plan = Reconcile(snap, request, now);
  // The accepted spec's digest and the refusal, if any, go with the status
  // of what was done on it.
  plan.status.controlled_resources[std::string(kAcceptedSpecKey)] =
      EncodeAcceptedSpec(verdict.record);
  MarkRefusal(plan.status, verdict.kind == SpecVerdict::Kind::kRefused ? &verdict.why : nullptr);
  // svc's OnJobUpdate: the hosts ConfigMap follows the replicas (one made
  // by this plan is made with them).
  const std::optional<AcceptedSpec> stored = StoredAcceptedSpec(job.status);
  const bool rewrite_hosts = verdict.record.svc_hosts != 0 && !plan.ensure_job_objects &&
                             !IsFinished(plan.status.state.phase) &&
                             (!stored || stored->svc_hosts != verdict.record.svc_hosts);
  Status applied = Apply(job, plan, rewrite_hosts, recorded);
  if (applied.code() == StatusCode::kConflict) {
    *conflict = true;
    return Status::Ok();
  }
  MUSTER_RETURN_IF_ERROR(applied);
  if (plan.action != kSync) metrics_->CountAction(plan.action);
  for (int32_t r = job.status.retry_count; r < plan.status.retry_count; ++r) metrics_->CountRetry();
  std::string key = job.meta.Key();
  if (plan.delayed.has_value()) EnqueueAt(key, *plan.delayed, plan.delayed_due);
  if (plan.recheck_at.has_value()) EnqueueAt(key, Request{}, *plan.recheck_at);
  ObserveJobToPods(job, snap, plan, now);
  return Status::Ok();
}

void JobController::ObserveJobToPods(const Job& job, const JobSnapshot& snap, const Plan& plan,
                                     Time now) {
  if (plan.status.version != 0 || job.meta.creation_timestamp.is_zero()) return;
  int32_t total = 0;
  for (const TaskSpec& t : job.spec.tasks) total += t.replicas;
  size_t have = snap.pods.size() + plan.create_pods.size();
  if (total <= 0 || have < static_cast<size_t>(total)) return;
  base::MutexLock lock(&mu_);
  std::string& complete = records_[job.meta.Key()].pods_complete_uid;
  if (complete == job.meta.uid) return;
  complete = job.meta.uid;
  metrics_->ObserveJobToPods(
      std::chrono::duration<double>(now - job.meta.creation_timestamp).count());
}

// --- Snapshot ------------------------------------------------------------------

std::string JobController::PodGroupKey(const Job& job) const {
  return ObjectKey(job.meta.namespace_, PodGroupName(job));
}

JobSnapshot JobController::Snapshot(const Job& job, std::vector<std::shared_ptr<const Pod>>* held,
                                    std::shared_ptr<const PodGroup>* group) {
  JobSnapshot snap;
  snap.job = &job;
  *group = groups_.Get(PodGroupKey(job));
  const ExpectedOfJob expected = ExpectationsOf(job, group->get());
  std::set<std::string> seen;
  for (const std::string& key : expected.pod_keys) {
    std::shared_ptr<const Pod> pod = pods_.Get(key);
    if (pod == nullptr) continue;
    bool owned = std::any_of(pod->meta.owner_references.begin(), pod->meta.owner_references.end(),
                             [&](const OwnerReference& r) { return r.uid == job.meta.uid; });
    if (!owned) continue;
    seen.insert(key);
    held->push_back(std::move(pod));
  }
  ShowKills(held);
  for (const ExpectedOfJob::CreatedPod& c : expected.created) {
    if (seen.count(c.key)) continue;
    held->push_back(Unseen(job, *c.task, c.index, c.when));
  }
  for (const auto& pod : *held) snap.pods.push_back(pod.get());
  if (expected.group_deleted) group->reset();
  if (*group == nullptr && expected.group_created) {
    // Created, not seen yet: stands in as not admitted.
    *group = std::make_shared<PodGroup>(DesiredPodGroup(job));
  }
  snap.pod_group = group->get();
  return snap;
}

JobController::ExpectedOfJob JobController::ExpectationsOf(const Job& job,
                                                           const PodGroup* cached_group) {
  ExpectedOfJob out;
  base::MutexLock lock(&mu_);
  auto it = pods_by_job_.find(job.meta.Key());
  if (it != pods_by_job_.end()) out.pod_keys.assign(it->second.begin(), it->second.end());
  for (const TaskSpec& task : job.spec.tasks) {
    for (int i = 0; i < task.replicas; ++i) {
      std::string key = ObjectKey(job.meta.namespace_, PodName(job.meta.name, task.name, i));
      auto c = expected_.created_pods.find(key);
      if (c != expected_.created_pods.end()) out.created.push_back({key, &task.name, i, c->second});
    }
  }
  out.group_deleted =
      cached_group != nullptr && expected_.deleted_group_uids.count(cached_group->meta.uid);
  out.group_created = expected_.created_groups.count(PodGroupKey(job)) > 0;
  return out;
}

void JobController::ShowKills(std::vector<std::shared_ptr<const Pod>>* pods) {
  base::MutexLock lock(&mu_);
  for (auto& pod : *pods) {
    auto k = expected_.killed_pods.find(pod->meta.uid);
    if (k != expected_.killed_pods.end()) pod = AsDeleting(*pod, k->second);
  }
}

// --- Admission of a new Job ----------------------------------------------------

bool JobController::AdmitNew(const Job& job) {
  // Volcano's admission refuses a new Job in a queue that is not Open, or
  // not a leaf (queue_state.h).
  if (options_.queue_of) {
    std::shared_ptr<const Queue> queue = options_.queue_of(job.spec.queue);
    const std::vector<std::string> children =
        options_.children_of ? options_.children_of(job.spec.queue) : std::vector<std::string>{};
    if (Status open = AdmitToQueue(job, queue.get(), children); !open.ok()) {
      RejectInvalid(job, open);
      return false;
    }
  }
  const GpuFractionOptions& gpu = options_.pods.gpu_fraction;
  if (!AsksGpuMemory(job, gpu)) return true;
  if (!gpu_memory_.Synced()) {
    WaitForNodes(job);
    EnqueueAt(job.meta.Key(), Request{}, clock_.Now() + kNodesWait);
    return false;
  }
  {
    base::MutexLock lock(&mu_);
    if (JobRecord* record = FindRecord(job.meta.Key())) record->nodes_wait.reset();
  }
  if (Status memory = CheckGpuMemory(job, gpu, gpu_memory_.LargestMib()); !memory.ok()) {
    RejectInvalid(job, memory);
    return false;
  }
  return true;
}

void JobController::WaitForNodes(const Job& job) {
  if (!NodesWaitToSay(job)) return;
  const std::string message = NodesWaitMessage(gpu_memory_.ListError());
  spdlog::warn("reconciler: job {} {}", job.meta.Key(), message);
  RecordEvent(job, {"Warning", std::string(kWaitingForNodes), message});
}

bool JobController::NodesWaitToSay(const Job& job) {
  const Time now = clock_.Now();
  base::MutexLock lock(&mu_);
  std::optional<NodesWait>& wait = records_[job.meta.Key()].nodes_wait;
  // A new Job of the same name waits anew.
  if (!wait.has_value() || wait->uid != job.meta.uid) wait = NodesWait{job.meta.uid, now};
  if (wait->said || now - wait->since < kNodesWaitBound) return false;
  wait->said = true;
  return true;
}

}  // namespace muster::reconciler
