#include "reconciler/controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <optional>
#include <utility>

#include "kube/client/parallel.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/gpu_fraction.h"
#include "reconciler/job_admission.h"
#include "reconciler/naming.h"
#include "reconciler/plugins.h"
#include "reconciler/queue_state.h"
#include "reconciler/ssh_keys.h"

namespace muster::reconciler {
namespace {

// A merge patch of the Job's status (`body`, a JSON object) that holds only
// if the Job is still at the resourceVersion it was read at: the API answers
// 409 when a newer version is on its way, whose status must be judged anew.
StatusOr<std::string> PatchStatusAtVersion(kube::Client& client, ReconcilerMetrics& metrics,
                                           const ObjectMeta& job, const std::string& body) {
  const std::string patch =
      "{\"metadata\":{\"resourceVersion\":\"" + job.resource_version + "\"}," + body.substr(1);
  StatusOr<std::string> r =
      client.PatchStatus(kube::VolcanoJobsRef().WithNamespace(job.namespace_).WithName(job.name),
                         kube::PatchType::kMerge, patch);
  metrics.CountWrite("patch", "jobs");
  return r;
}

using PodGroupOp = Plan::PodGroupOp;

// How long a write we made may stay unseen by the informers before the
// expectation is dropped (and the next sync trusts the informers again).
constexpr Duration kExpectationTtl = std::chrono::seconds(30);
constexpr Duration kResyncPeriod = std::chrono::seconds(30);
constexpr Duration kRetryDelay = std::chrono::seconds(1);
// A new Job that asks GPU memory, before the nodes are listed, looks again.
constexpr Duration kNodesWait = std::chrono::milliseconds(200);
// How long such a Job waits for the first list of nodes before a Warning
// Event says why it waits. Long enough that a healthy start never says it
// (the list lands in under a second; a few 5xx retries, the informer's
// backoff doubling from 100 ms, take a couple of seconds); short enough that
// a reconciler that may not list nodes (a ClusterRole kept from before GPU
// memory admission) answers a Job within seconds instead of never.
constexpr Duration kNodesWaitBound = std::chrono::seconds(10);
constexpr int kConflictRetries = 3;
// A status change of the pod counters alone waits this long after the last
// status write, so a job whose pods start one by one writes its status a
// few times, not once per pod (phase, version and retry changes go at once).
constexpr Duration kStatusCoalesce = std::chrono::seconds(2);

std::string JobKeyOfPod(const Pod& pod) {
  auto it = pod.meta.labels.find(std::string(kJobNameKey));
  return it == pod.meta.labels.end() ? "" : ObjectKey(pod.meta.namespace_, it->second);
}

std::string JobKeyOfGroup(const PodGroup& pg) {
  for (const OwnerReference& ref : pg.meta.owner_references) {
    if (ref.kind == kJobKind && ref.api_version == kJobApiVersion) {
      return ObjectKey(pg.meta.namespace_, ref.name);
    }
  }
  return "";
}

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

bool IgnorableCreate(const Status& s) { return s.ok() || s.code() == StatusCode::kAlreadyExists; }
bool IgnorableDelete(const Status& s) { return s.ok() || s.code() == StatusCode::kNotFound; }

kube::ResourceRef PodsIn(const std::string& ns) { return kube::ResourceRef::Core("pods", ns); }

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

constexpr std::string_view kUpdateRefused = "UpdateRefused";
// The reason of the Event of a Job that waits for the nodes (WaitForNodes).
constexpr std::string_view kWaitingForNodes = "WaitingForNodes";

// status.state carries a refused update while it is refused (`why` set),
// unless the lifecycle has a reason of its own (JobFailed, ...); it is
// cleared once the spec is within the rules again.
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

// The status merge patch of `after`, with a null for every taskStatusCount
// key of `before` that `after` does not have: a merge patch removes only
// what it names, and the status must name the Job's tasks only.
std::string StatusPatchBody(const JobStatus& before, const JobStatus& after) {
  std::string body = kube::EncodeJobStatusPatch(after);
  std::vector<std::string> gone;
  for (const auto& [task, counts] : before.task_status_count) {
    if (!after.task_status_count.contains(task)) gone.push_back(task);
  }
  rapidjson::Document doc;
  if (gone.empty() || !kube::ParseDocument(body, &doc).ok()) return body;
  auto& a = doc.GetAllocator();
  rapidjson::Value* status = pod_json::MemberOf(doc, "status");
  if (status == nullptr || !status->IsObject()) return body;
  rapidjson::Value* counts = pod_json::MemberOf(*status, "taskStatusCount");
  if (counts == nullptr || !counts->IsObject()) {
    pod_json::SetMember(*status, "taskStatusCount", rapidjson::Value(rapidjson::kObjectType), a);
    counts = pod_json::MemberOf(*status, "taskStatusCount");
  }
  for (const std::string& task : gone) {
    counts->AddMember(pod_json::Str(task, a), rapidjson::Value(), a);
  }
  return kube::ToCompactJson(doc);
}

}  // namespace

JobController::JobController(kube::Client* client, const Clock& clock, ControllerOptions options,
                             ReconcilerMetrics* metrics)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      metrics_(metrics),
      jobs_(client, kube::VolcanoJobsRef(), kube::DecodeJob, kube::DecodeJobList),
      pods_(client, kube::ResourceRef::Core("pods"), kube::DecodePod, kube::DecodePodList,
            kube::InformerOptions{.label_selector = std::string(kJobNameKey)}),
      groups_(client, kube::PodGroupsRef(), kube::DecodePodGroup, kube::DecodePodGroupList),
      gpu_memory_(client) {
  Wire();
}

JobController::~JobController() { Stop(); }

std::vector<std::string> JobController::PodKeysOf(const std::string& job_key) {
  std::lock_guard lock(mu_);
  const auto it = pods_by_job_.find(job_key);
  return it == pods_by_job_.end() ? std::vector<std::string>()
                                  : std::vector<std::string>(it->second.begin(), it->second.end());
}

// The policy events of one pod change (PodChangeRequests), queued for its
// Job. REQUIRES: `job` is the pod's Job.
void JobController::RaisePodEvents(const std::string& job_key, const Job& job, const Pod* before,
                                   const Pod* after) {
  const Pod& pod = after != nullptr ? *after : *before;
  std::vector<std::shared_ptr<const Pod>> held;  // keeps task_pods' pointers alive
  auto task_pods = [&] {
    std::string task, t;
    int index = 0;
    PodTaskAndIndex(pod, &task, &index);
    std::vector<const Pod*> out;
    for (const std::string& key : PodKeysOf(job_key)) {
      std::shared_ptr<const Pod> p = pods_.Get(key);
      if (p != nullptr && PodTaskAndIndex(*p, &t, &index) && t == task) {
        out.push_back(p.get());
        held.push_back(std::move(p));
      }
    }
    return out;
  };
  for (Request& r : PodChangeRequests(job, before, after, task_pods)) {
    Enqueue(job_key, std::move(r));
  }
}

void JobController::Wire() {
  auto on_job_added = [this](const Job& job) {
    const std::string job_key = job.meta.Key();
    Enqueue(job_key, Request{});
    // Pods seen before their Job (the informers list independently after a
    // restart) raised nothing: what they went through while the reconciler
    // was down (a master Succeeded, a worker Failed) is raised now.
    for (const std::string& key : PodKeysOf(job_key)) {
      if (std::shared_ptr<const Pod> pod = pods_.Get(key)) {
        RaisePodEvents(job_key, job, nullptr, pod.get());
      }
    }
  };
  auto on_job = [this](const Job& job) { Enqueue(job.meta.Key(), Request{}); };
  jobs_.AddHandlers(
      {.on_add = on_job_added,
       .on_update = [on_job](const Job&, const Job& job) { on_job(job); },
       .on_delete =
           [this](const Job& job) {
             std::lock_guard lock(mu_);
             written_jobs_.erase(job.meta.Key());
             pods_complete_.erase(job.meta.uid);
             accepted_.erase(job.meta.Key());
             nodes_waits_.erase(job.meta.Key());
           },
       .on_undecodable =
           [this](const kube::UndecodableObject& job) { Enqueue(job.Key(), Request{}); },
       .on_undecodable_cleared =
           [this](const kube::UndecodableObject& job) {
             std::lock_guard lock(mu_);
             undecodable_said_.erase(job.Key());
           }});
  auto on_pod = [this](const Pod* before, const Pod* after) {
    const Pod& pod = after != nullptr ? *after : *before;
    std::string job_key = JobKeyOfPod(pod);
    if (job_key.empty()) return;
    {
      std::lock_guard lock(mu_);
      if (after != nullptr) {
        pods_by_job_[job_key].insert(pod.meta.Key());
        created_pods_.erase(pod.meta.Key());
      } else {
        pods_by_job_[job_key].erase(pod.meta.Key());
        killed_pods_.erase(pod.meta.uid);
      }
    }
    if (std::shared_ptr<const Job> job = jobs_.Get(job_key)) {
      RaisePodEvents(job_key, *job, before, after);
    }
  };
  pods_.AddHandlers({.on_add = [on_pod](const Pod& p) { on_pod(nullptr, &p); },
                     .on_update = [on_pod](const Pod& a, const Pod& b) { on_pod(&a, &b); },
                     .on_delete = [on_pod](const Pod& p) { on_pod(&p, nullptr); }});
  auto on_group = [this](const PodGroup* before, const PodGroup* after) {
    const PodGroup& pg = after != nullptr ? *after : *before;
    std::string job_key = JobKeyOfGroup(pg);
    if (job_key.empty()) return;
    {
      std::lock_guard lock(mu_);
      if (after == nullptr)
        deleted_group_uids_.erase(pg.meta.uid);
      else
        created_groups_.erase(pg.meta.Key());
    }
    Request request;
    bool to_unknown = after != nullptr && after->status.phase == kPodGroupUnknown &&
                      (before == nullptr || before->status.phase != kPodGroupUnknown);
    if (to_unknown) request.event = std::string(kUnknownEvent);
    Enqueue(job_key, std::move(request));
  };
  groups_.AddHandlers(
      {.on_add = [on_group](const PodGroup& g) { on_group(nullptr, &g); },
       .on_update = [on_group](const PodGroup& a, const PodGroup& b) { on_group(&a, &b); },
       .on_delete = [on_group](const PodGroup& g) { on_group(&g, nullptr); }});
}

void JobController::Start() {
  gpu_memory_.Start();
  pods_.Start();
  groups_.Start();
  jobs_.Start();
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  timer_ = std::thread([this] { TimerLoop(); });
}

void JobController::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_cv_.notify_all();
  timer_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (timer_.joinable()) timer_.join();
  jobs_.Stop();
  pods_.Stop();
  groups_.Stop();
  gpu_memory_.Stop();
}

bool JobController::Synced() const {
  return jobs_.HasSynced() && pods_.HasSynced() && groups_.HasSynced();
}

std::map<std::string, std::vector<std::shared_ptr<const kube::UndecodableObject>>>
JobController::Undecodable() const {
  return {{"jobs", jobs_.ListUndecodable()},
          {"pods", pods_.ListUndecodable()},
          {"podgroups", groups_.ListUndecodable()}};
}

std::map<std::string, int64_t> JobController::JobsByPhase() const {
  std::map<std::string, int64_t> out;
  auto count = [&out](const std::string& phase) {
    ++out[phase.empty() ? std::string(kPending) : phase];
  };
  // A Job that does not decode counts by its status as stored (the Failed
  // it was answered with), not by the older version the cache may hold.
  std::set<std::string> undecodable;
  for (const auto& record : jobs_.ListUndecodable()) {
    undecodable.insert(record->Key());
    StatusOr<JobStatus> status = kube::DecodeJobStatusOf(record->json);
    count(status.ok() ? status->state.phase : "");
  }
  for (const auto& job : jobs_.List()) {
    if (!undecodable.contains(job->meta.Key())) count(job->status.state.phase);
  }
  return out;
}

// --- Queue -----------------------------------------------------------------

void JobController::Enqueue(const std::string& job_key, Request request) {
  {
    std::lock_guard lock(mu_);
    bool was_waiting = waiting_.count(job_key) > 0;
    waiting_[job_key].push_back(std::move(request));
    if (was_waiting || busy_.count(job_key)) return;
    ready_.push_back(job_key);
  }
  work_cv_.notify_one();
}

void JobController::EnqueueAt(const std::string& job_key, Request request, Time due) {
  std::lock_guard lock(mu_);
  for (auto it = timers_.lower_bound(due); it != timers_.end() && it->first == due; ++it) {
    if (it->second.first == job_key && it->second.second == request) return;
  }
  timers_.emplace(due, std::make_pair(job_key, std::move(request)));
}

void JobController::WorkerLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
    if (stopping_) return;
    std::string key = std::move(ready_.front());
    ready_.pop_front();
    std::vector<Request> requests = std::move(waiting_[key]);
    waiting_.erase(key);
    busy_.insert(key);
    lock.unlock();
    Sync(key, std::move(requests));
    lock.lock();
    busy_.erase(key);
    if (waiting_.count(key)) {
      ready_.push_back(key);
      work_cv_.notify_one();
    }
  }
}

// Moves due timers into the queue; every kResyncPeriod, queues every Job
// (a safety net for anything an event did not cover).
void JobController::TimerLoop() {
  Time next_resync = clock_.Now() + kResyncPeriod;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    timer_cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; });
    if (stopping_) return;
    Time now = clock_.Now();
    std::vector<std::pair<std::string, Request>> due;
    while (!timers_.empty() && timers_.begin()->first <= now) {
      due.push_back(std::move(timers_.begin()->second));
      timers_.erase(timers_.begin());
    }
    std::erase_if(created_pods_, [&](const auto& e) { return now - e.second > kExpectationTtl; });
    std::erase_if(killed_pods_, [&](const auto& e) { return now - e.second > kExpectationTtl; });
    std::erase_if(created_groups_, [&](const auto& e) { return now - e.second > kExpectationTtl; });
    lock.unlock();
    for (auto& [key, request] : due) Enqueue(key, std::move(request));
    if (now >= next_resync && Synced()) {
      next_resync = now + kResyncPeriod;
      for (const auto& job : jobs_.List()) Enqueue(job->meta.Key(), Request{});
    }
    lock.lock();
  }
}

// --- Sync ------------------------------------------------------------------

void JobController::Sync(const std::string& job_key, std::vector<Request> requests) {
  auto started = std::chrono::steady_clock::now();
  // The Job as it is now does not decode: the cache's copy (if any) is an
  // older version, and nothing is done on it.
  if (std::shared_ptr<const kube::UndecodableObject> broken = jobs_.Undecodable(job_key)) {
    AnswerUndecodable(*broken);
    return;
  }
  std::shared_ptr<const Job> cached = jobs_.Get(job_key);
  if (cached == nullptr || cached->meta.deletion_timestamp.has_value()) return;
  {
    std::lock_guard lock(mu_);
    auto it = written_jobs_.find(job_key);
    if (it != written_jobs_.end()) {
      if (it->second->meta.uid == cached->meta.uid &&
          ParseVersion(it->second->meta.resource_version) >
              ParseVersion(cached->meta.resource_version)) {
        cached = it->second;
      } else {
        written_jobs_.erase(it);
      }
    }
  }
  Job job = *cached;
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
  std::string_view result = "ok";
  for (size_t next = 0; next < requests.size(); ++next) {
    const Request& request = requests[next];
    bool conflict = false;
    bool recorded = false;
    Status s = SyncOnce(job, verdict, request, &conflict, &recorded);
    for (int attempt = 0; conflict && attempt < kConflictRetries; ++attempt) {
      result = "conflict";
      StatusOr<std::string> fresh = client_->Get(
          kube::VolcanoJobsRef().WithNamespace(job.meta.namespace_).WithName(job.meta.name));
      if (!fresh.ok()) break;
      StatusOr<Job> decoded = kube::DecodeJob(*fresh);
      if (!decoded.ok()) break;
      job = *std::move(decoded);
      if (!Admit(&job, &verdict)) return;
      conflict = false;
      recorded = false;
      s = SyncOnce(job, verdict, request, &conflict, &recorded);
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
    std::shared_ptr<const Job> written;
    {
      std::lock_guard lock(mu_);
      auto it = written_jobs_.find(job_key);
      if (it != written_jobs_.end()) written = it->second;
    }
    if (written != nullptr) {
      job = *written;
      if (!Admit(&job, &verdict)) break;
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_->CountSync(result, seconds);
}

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
    std::lock_guard lock(mu_);
    nodes_waits_.erase(job.meta.Key());
  }
  if (Status memory = CheckGpuMemory(job, gpu, gpu_memory_.LargestMib()); !memory.ok()) {
    RejectInvalid(job, memory);
    return false;
  }
  return true;
}

void JobController::WaitForNodes(const Job& job) {
  const Time now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    NodesWait& wait =
        nodes_waits_.try_emplace(job.meta.Key(), NodesWait{job.meta.uid, now}).first->second;
    if (wait.uid != job.meta.uid) wait = NodesWait{job.meta.uid, now};  // a new Job, same name
    if (wait.said || now - wait.since < kNodesWaitBound) return;
    wait.said = true;
  }
  const std::string message = NodesWaitMessage(gpu_memory_.ListError());
  spdlog::warn("reconciler: job {} {}", job.meta.Key(), message);
  RecordEvent(job, {"Warning", std::string(kWaitingForNodes), message});
}

// --- Update rules ------------------------------------------------------------

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
  const std::string key = job->meta.Key();
  std::optional<AcceptedJob> mem;
  {
    std::lock_guard lock(mu_);
    auto it = accepted_.find(key);
    if (it != accepted_.end() && it->second.uid == job->meta.uid) {
      mem = it->second;
    } else if (it != accepted_.end()) {
      accepted_.erase(it);  // an earlier Job of the same name
    }
  }
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

JobController::SpecVerdict JobController::Accept(const Job& job) {
  AcceptedSpec record = AcceptedSpecOf(job);
  std::lock_guard lock(mu_);
  accepted_[job.meta.Key()] =
      AcceptedJob{job.meta.uid, std::make_shared<const JobSpec>(job.spec), record, ""};
  return {SpecVerdict::Kind::kAccepted, Status::Ok(), std::move(record)};
}

void JobController::ReportRefused(const Job& job, const Status& why) {
  {
    std::lock_guard lock(mu_);
    auto it = accepted_.find(job.meta.Key());
    if (it != accepted_.end() && it->second.uid == job.meta.uid) {
      if (it->second.refused == why.message()) return;
      it->second.refused = why.message();
    }
  }
  const JobState& state = job.status.state;
  if (state.reason == kUpdateRefused && state.message == why.message()) return;  // said already
  spdlog::warn("reconciler: job {}: update refused: {}", job.meta.Key(), why.message());
  RecordEvent(job, {"Warning", std::string(kUpdateRefused), why.message()});
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
  // Job-to-pods latency: the first time every pod of version 0 exists.
  if (plan.status.version == 0 && !job.meta.creation_timestamp.is_zero()) {
    int32_t total = 0;
    for (const TaskSpec& t : job.spec.tasks) total += t.replicas;
    size_t have = snap.pods.size() + plan.create_pods.size();
    std::lock_guard lock(mu_);
    if (total > 0 && have >= static_cast<size_t>(total) &&
        pods_complete_.insert(job.meta.uid).second) {
      metrics_->ObserveJobToPods(
          std::chrono::duration<double>(now - job.meta.creation_timestamp).count());
    }
  }
  return Status::Ok();
}

std::string JobController::PodGroupKey(const Job& job) const {
  return ObjectKey(job.meta.namespace_, PodGroupName(job));
}

JobSnapshot JobController::Snapshot(const Job& job, std::vector<std::shared_ptr<const Pod>>* held,
                                    std::shared_ptr<const PodGroup>* group) {
  JobSnapshot snap;
  snap.job = &job;
  std::string job_key = job.meta.Key();
  std::vector<std::string> keys;
  struct Created {
    std::string key;
    const std::string* task;
    int index;
    Time when;
  };
  std::vector<Created> created;
  bool group_deleted = false, group_created = false;
  *group = groups_.Get(PodGroupKey(job));
  {
    std::lock_guard lock(mu_);
    auto it = pods_by_job_.find(job_key);
    if (it != pods_by_job_.end()) keys.assign(it->second.begin(), it->second.end());
    for (const TaskSpec& task : job.spec.tasks) {
      for (int i = 0; i < task.replicas; ++i) {
        std::string key = ObjectKey(job.meta.namespace_, PodName(job.meta.name, task.name, i));
        auto c = created_pods_.find(key);
        if (c != created_pods_.end()) created.push_back({key, &task.name, i, c->second});
      }
    }
    group_deleted = *group != nullptr && deleted_group_uids_.count((*group)->meta.uid);
    group_created = created_groups_.count(PodGroupKey(job)) > 0;
  }
  std::set<std::string> seen;
  for (const std::string& key : keys) {
    std::shared_ptr<const Pod> pod = pods_.Get(key);
    if (pod == nullptr) continue;
    bool owned = std::any_of(pod->meta.owner_references.begin(), pod->meta.owner_references.end(),
                             [&](const OwnerReference& r) { return r.uid == job.meta.uid; });
    if (!owned) continue;
    seen.insert(key);
    held->push_back(std::move(pod));
  }
  {
    // Pods we deleted, as the informer will show them.
    std::lock_guard lock(mu_);
    for (auto& pod : *held) {
      auto k = killed_pods_.find(pod->meta.uid);
      if (k != killed_pods_.end()) pod = AsDeleting(*pod, k->second);
    }
  }
  for (const Created& c : created) {
    if (seen.count(c.key)) continue;
    held->push_back(Unseen(job, *c.task, c.index, c.when));
  }
  for (const auto& pod : *held) snap.pods.push_back(pod.get());
  if (group_deleted) group->reset();
  if (*group == nullptr && group_created) {
    // Created, not seen yet: stands in as not admitted.
    auto pending = std::make_shared<PodGroup>(DesiredPodGroup(job));
    *group = pending;
  }
  snap.pod_group = group->get();
  return snap;
}

// --- Apply -----------------------------------------------------------------

Status JobController::Apply(const Job& job, const Plan& plan, bool rewrite_hosts, bool* recorded) {
  // Each kill names the pod's UID: a replacement of the same name is never
  // marked or deleted by mistake.
  std::vector<PodRef> kills;
  for (const std::string& name : plan.kill_pods) {
    std::shared_ptr<const Pod> pod = pods_.Get(ObjectKey(job.meta.namespace_, name));
    if (pod == nullptr) continue;  // not seen yet: the next sync kills it
    std::lock_guard lock(mu_);
    if (!killed_pods_.count(pod->meta.uid)) kills.push_back({name, pod->meta.uid});
  }
  // Marked first: a marked pod raises no event again (controller.h).
  kube::ParallelFor(kills.size(), options_.writes_per_sync, [&](size_t i) {
    std::string patch = "{\"metadata\":{\"uid\":\"" + kills[i].uid + "\",\"annotations\":{\"" +
                        std::string(kOutOfSyncKey) + "\":\"true\"}}}";
    StatusOr<std::string> r = client_->Patch(PodsIn(job.meta.namespace_).WithName(kills[i].name),
                                             kube::PatchType::kMerge, patch);
    metrics_->CountWrite("patch", "pods");
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
      spdlog::warn("reconciler: mark pod {}/{}: {}", job.meta.namespace_, kills[i].name,
                   r.status().ToString());
    }
  });
  // Before the status that records them (controlledResources): a crash in
  // between must leave them to be created again, not marked done.
  if (plan.ensure_job_objects) MUSTER_RETURN_IF_ERROR(EnsureJobObjects(job));
  if (rewrite_hosts) MUSTER_RETURN_IF_ERROR(RewriteHostsConfigMap(job));
  // What may wait waits for the coalescing window (StatusWriteOf says what).
  const StatusWrite write = StatusWriteOf(job, plan);
  Time due;
  if (write == StatusWrite::kMayWait && !StatusWriteDue(job, &due)) {
    EnqueueAt(job.meta.Key(), Request{}, due);  // coalesced with later changes
  } else if (write != StatusWrite::kNone) {
    MUSTER_RETURN_IF_ERROR(WriteStatus(job, plan.status));
  }
  if (recorded != nullptr) *recorded = true;
  KillPods(job, kills);
  MUSTER_RETURN_IF_ERROR(ApplyPodGroup(job, plan));
  Status created = CreatePods(job, plan.create_pods);
  for (const JobEventRecord& event : plan.events) RecordEvent(job, event);
  MUSTER_RETURN_IF_ERROR(created);  // logged and retried in a second (Sync)
  if (plan.delete_job) {
    kube::DeleteOptions options{.precondition_uid = job.meta.uid,
                                .propagation_policy = "Background"};
    Status s =
        client_
            ->Delete(
                kube::VolcanoJobsRef().WithNamespace(job.meta.namespace_).WithName(job.meta.name),
                options)
            .status();
    metrics_->CountWrite("delete", "jobs");
    if (IgnorableDelete(s))
      spdlog::info("reconciler: job {} deleted (ttlSecondsAfterFinished)", job.meta.Key());
    else
      return s;
  }
  return Status::Ok();
}

bool JobController::StatusWriteDue(const Job& job, Time* due) {
  std::lock_guard lock(mu_);
  const Time now = clock_.Now();
  // Since our last write, or else since the first change we held back.
  auto it = status_written_at_.find(job.meta.Key());
  if (it == status_written_at_.end()) it = status_written_at_.emplace(job.meta.Key(), now).first;
  *due = it->second + kStatusCoalesce;
  return now >= *due;
}

Status JobController::WriteStatus(const Job& job, const JobStatus& status) {
  // taskStatusCount holds every task and phase (lifecycle.cc CountPods): a
  // merge patch cannot remove a key it does not name, so a task the status
  // names and the Job no longer has is named as null (StatusPatchBody).
  StatusOr<std::string> r =
      PatchStatusAtVersion(*client_, *metrics_, job.meta, StatusPatchBody(job.status, status));
  if (!r.ok()) return r.status();
  {
    std::lock_guard lock(mu_);
    status_written_at_[job.meta.Key()] = clock_.Now();
  }
  StatusOr<Job> written = kube::DecodeJob(*r);
  if (written.ok()) {
    std::lock_guard lock(mu_);
    written_jobs_[job.meta.Key()] = std::make_shared<const Job>(std::move(written).value());
  }
  return Status::Ok();
}

// Expectations are registered before the write: the informer may deliver
// its event before the call returns.
void JobController::KillPods(const Job& job, const std::vector<PodRef>& pods) {
  Time now = clock_.Now();
  kube::ParallelFor(pods.size(), options_.writes_per_sync, [&](size_t i) {
    {
      std::lock_guard lock(mu_);
      killed_pods_[pods[i].uid] = now;
    }
    Status s = client_
                   ->Delete(PodsIn(job.meta.namespace_).WithName(pods[i].name),
                            {.precondition_uid = pods[i].uid})
                   .status();
    metrics_->CountWrite("delete", "pods");
    if (IgnorableDelete(s) || s.code() == StatusCode::kConflict) return;  // gone or replaced
    spdlog::warn("reconciler: delete pod {}/{}: {}", job.meta.namespace_, pods[i].name,
                 s.ToString());
    std::lock_guard lock(mu_);
    killed_pods_.erase(pods[i].uid);
  });
}

Status JobController::CreatePods(const Job& job, const std::vector<PodSlot>& slots) {
  std::vector<PodSlot> todo;
  {
    std::lock_guard lock(mu_);
    for (const PodSlot& slot : slots) {
      std::string name = PodName(job.meta.name, job.spec.tasks[slot.task].name, slot.index);
      if (!created_pods_.count(ObjectKey(job.meta.namespace_, name))) todo.push_back(slot);
    }
  }
  Time now = clock_.Now();
  std::mutex failed_mu;
  int failed = 0;
  Status first;  // the first failure, for the one Event and the requeue
  auto fail = [&](const std::string& name, const Status& why) {
    std::lock_guard lock(failed_mu);
    if (failed++ == 0) first = why.Annotate("pod " + name);
  };
  kube::ParallelFor(todo.size(), options_.writes_per_sync, [&](size_t i) {
    const PodSlot& slot = todo[i];
    std::string name = PodName(job.meta.name, job.spec.tasks[slot.task].name, slot.index);
    StatusOr<std::string> body = BuildPod(job, slot.task, slot.index, options_.pods);
    if (!body.ok()) return fail(name, body.status());
    const std::string key = ObjectKey(job.meta.namespace_, name);
    {
      std::lock_guard lock(mu_);
      created_pods_[key] = now;
    }
    Status s = client_->Create(PodsIn(job.meta.namespace_), *body).status();
    metrics_->CountWrite("create", "pods");
    if (s.ok()) return;
    std::lock_guard lock(mu_);
    created_pods_.erase(key);  // AlreadyExists too: the informer has (or will have) it
    if (s.code() == StatusCode::kAlreadyExists) return;
    fail(name, s);
  });
  if (failed == 0) return Status::Ok();
  std::string what =
      first.message() +
      (failed > 1 ? " (and " + std::to_string(failed - 1) + " more pods failed)" : "");
  RecordEvent(job, {"Warning", "FailedCreate", what});
  return Status(first.code(), what);
}

Status JobController::ApplyPodGroup(const Job& job, const Plan& plan) {
  kube::ResourceRef ref = kube::PodGroupsRef().WithNamespace(job.meta.namespace_);
  std::string name = PodGroupName(job);
  switch (plan.pod_group_op) {
    case PodGroupOp::kNone:
      return Status::Ok();
    case PodGroupOp::kCreate: {
      {
        std::lock_guard lock(mu_);
        created_groups_[PodGroupKey(job)] = clock_.Now();
      }
      Status s = client_->Create(ref, kube::EncodePodGroup(plan.pod_group)).status();
      metrics_->CountWrite("create", "podgroups");
      if (s.ok()) return s;
      std::lock_guard lock(mu_);
      created_groups_.erase(PodGroupKey(job));
      return IgnorableCreate(s) ? Status::Ok() : s;
    }
    case PodGroupOp::kUpdate: {
      std::string body = kube::EncodePodGroup(plan.pod_group);
      Status s = client_->Patch(ref.WithName(name), kube::PatchType::kMerge, body).status();
      metrics_->CountWrite("patch", "podgroups");
      return s;
    }
    case PodGroupOp::kDelete: {
      std::shared_ptr<const PodGroup> have = groups_.Get(PodGroupKey(job));
      if (have == nullptr) return Status::Ok();
      {
        std::lock_guard lock(mu_);
        deleted_group_uids_.insert(have->meta.uid);
        created_groups_.erase(PodGroupKey(job));
      }
      Status s = client_->Delete(ref.WithName(name), {.precondition_uid = have->meta.uid}).status();
      metrics_->CountWrite("delete", "podgroups");
      if (IgnorableDelete(s) || s.code() == StatusCode::kConflict) return Status::Ok();
      std::lock_guard lock(mu_);
      deleted_group_uids_.erase(have->meta.uid);
      return s;
    }
  }
  return Status::Ok();
}

Status JobController::EnsureJobObjects(const Job& job) {
  SshKeyPair keys;
  if (NeedsSshKeys(job)) {
    StatusOr<SshKeyPair> generated = GenerateSshKeyPair();
    if (!generated.ok()) return generated.status();
    keys = std::move(generated).value();
  }
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, keys);
  if (!objects.ok()) return objects.status();
  for (const JobObject& object : *objects) {
    std::string group, version = object.api_version;
    if (size_t slash = version.find('/'); slash != std::string::npos) {
      group = version.substr(0, slash);
      version = version.substr(slash + 1);
    }
    kube::ResourceRef ref{.group = group,
                          .version = version,
                          .resource = object.resource,
                          .namespace_ = job.meta.namespace_};
    Status s = client_->Create(ref, object.json).status();
    metrics_->CountWrite("create", object.resource);
    if (!IgnorableCreate(s)) return s.Annotate(object.resource + " " + object.name);
    // Made before a crash, maybe for other replicas: rewritten to these.
    if (s.code() == StatusCode::kAlreadyExists && object.resource == "configmaps" &&
        object.name == HostsConfigMapName(job)) {
      MUSTER_RETURN_IF_ERROR(RewriteHostsConfigMap(job));
    }
  }
  return Status::Ok();
}

// Volcano's svc OnJobUpdate: ConfigMap <job>-svc holds the hosts of the
// replicas as they are now (created again if someone deleted it).
Status JobController::RewriteHostsConfigMap(const Job& job) {
  const kube::ResourceRef ref = kube::ResourceRef::Core("configmaps", job.meta.namespace_);
  const std::string name = HostsConfigMapName(job);
  Status s =
      client_->Patch(ref.WithName(name), kube::PatchType::kMerge, SvcHostsPatch(job)).status();
  metrics_->CountWrite("patch", "configmaps");
  if (s.code() == StatusCode::kNotFound) {
    s = client_->Create(ref, SvcHostsConfigMap(job).json).status();
    metrics_->CountWrite("create", "configmaps");
  }
  if (!s.ok()) return s.Annotate("configmaps " + name);
  spdlog::info("reconciler: job {}: hosts ConfigMap {} rewritten", job.meta.Key(), name);
  return Status::Ok();
}

void JobController::RecordEvent(const Job& job, const JobEventRecord& record) {
  Event event =
      NewEvent(ObjectReference{.api_version = std::string(kJobApiVersion),
                               .kind = std::string(kJobKind),
                               .namespace_ = job.meta.namespace_,
                               .name = job.meta.name,
                               .uid = job.meta.uid},
               record.type, record.reason, record.message, "muster-reconciler", clock_.Now());
  Status s =
      client_
          ->Create(kube::ResourceRef::Core("events", job.meta.namespace_), kube::EncodeEvent(event))
          .status();
  metrics_->CountWrite("create", "events");
  if (!s.ok()) spdlog::warn("reconciler: event on job {}: {}", job.meta.Key(), s.ToString());
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
  {
    std::lock_guard lock(mu_);
    auto it = undecodable_said_.find(key);
    if (it != undecodable_said_.end() && it->second == said) return;
  }
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
    std::lock_guard lock(mu_);
    undecodable_said_[key] = said;
    return;  // said already (before a restart)
  }
  spdlog::warn("reconciler: job {} does not decode: {}", key, job.problem);
  StatusOr<std::string> r = PatchStatusAtVersion(*client_, *metrics_, job.meta,
                                                 kube::EncodeJobStatePatch(want, conditions));
  if (!r.ok()) {
    // A newer version is on its way (409), or the API failed: try again.
    spdlog::warn("reconciler: job {}: status: {}", key, r.status().ToString());
    if (r.status().code() != StatusCode::kNotFound) {
      EnqueueAt(key, Request{}, clock_.Now() + kRetryDelay);
    }
    return;
  }
  {
    std::lock_guard lock(mu_);
    undecodable_said_[key] = said;
  }
  if (want.reason == "InvalidSpec") metrics_->CountInvalidJob();
  Job named;
  named.meta = job.meta;
  RecordEvent(named, {"Warning", want.reason, job.problem});
}

}  // namespace muster::reconciler
