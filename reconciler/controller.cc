// JobController: construction, start and stop, what it reports, and its
// work queue (one job synced at a time, timers, the periodic resync). The
// sync is in controller_sync.cc, the update rules and answers to invalid
// Jobs in controller_admission.cc, the writes in controller_writes.cc, the
// informers' handlers in controller_informers.cc.
#include "reconciler/controller.h"

#include <chrono>
#include <utility>

#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller_internal.h"
#include "reconciler/naming.h"

namespace muster::reconciler {

using controller_internal::kExpectationTtl;
using controller_internal::kResyncPeriod;

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
      gpu_memory_(client),
      status_writer_(client, clock, metrics) {
  Wire();
}

JobController::~JobController() { Stop(); }

void JobController::Start() {
  StartWatching();
  StartWorking();
}

void JobController::StartWatching() {
  gpu_memory_.Start();
  pods_.Start();
  groups_.Start();
  jobs_.Start();
}

void JobController::StartWorking() {
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  timer_ = std::thread([this] { TimerLoop(); });
}

void JobController::Stop() {
  {
    base::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_cv_.SignalAll();
  timer_cv_.SignalAll();
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

// --- Work queue --------------------------------------------------------------

void JobController::Enqueue(const std::string& job_key, Request request) {
  {
    base::MutexLock lock(&mu_);
    bool was_waiting = waiting_.count(job_key) > 0;
    waiting_[job_key].push_back(std::move(request));
    if (was_waiting || busy_.count(job_key)) return;
    ready_.push_back(job_key);
  }
  work_cv_.Signal();
}

void JobController::EnqueueAt(const std::string& job_key, Request request, Time due) {
  base::MutexLock lock(&mu_);
  for (auto it = timers_.lower_bound(due); it != timers_.end() && it->first == due; ++it) {
    if (it->second.first == job_key && it->second.second == request) return;
  }
  timers_.emplace(due, std::make_pair(job_key, std::move(request)));
}

void JobController::WorkerLoop() {
  std::string job_key;
  std::vector<Request> requests;
  while (TakeReady(&job_key, &requests)) {
    Sync(job_key, std::move(requests));
    FinishSync(job_key);
  }
}

bool JobController::TakeReady(std::string* job_key, std::vector<Request>* requests) {
  base::MutexLock lock(&mu_);
  while (!stopping_ && ready_.empty()) work_cv_.Wait(&mu_);
  if (stopping_) return false;
  *job_key = std::move(ready_.front());
  ready_.pop_front();
  *requests = std::move(waiting_[*job_key]);
  waiting_.erase(*job_key);
  busy_.insert(*job_key);
  return true;
}

void JobController::FinishSync(const std::string& job_key) {
  base::MutexLock lock(&mu_);
  busy_.erase(job_key);
  if (waiting_.count(job_key)) {
    ready_.push_back(job_key);
    work_cv_.Signal();
  }
}

// Moves due timers into the queue; every kResyncPeriod, queues every Job
// (a safety net for anything an event did not cover).
void JobController::TimerLoop() {
  Time next_resync = clock_.Now() + kResyncPeriod;
  Time now;
  std::vector<std::pair<std::string, Request>> due;
  while (NextTick(&now, &due)) {
    for (auto& [key, request] : due) Enqueue(key, std::move(request));
    if (now >= next_resync && Synced()) {
      next_resync = now + kResyncPeriod;
      for (const auto& job : jobs_.List()) Enqueue(job->meta.Key(), Request{});
    }
  }
}

bool JobController::NextTick(Time* now, std::vector<std::pair<std::string, Request>>* due) {
  base::MutexLock lock(&mu_);
  // A tick of 100 ms; only Stop signals (spurious wakes wait on).
  const auto tick_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (!stopping_ && timer_cv_.WaitUntil(&mu_, tick_end)) {
  }
  if (stopping_) return false;
  *now = clock_.Now();
  due->clear();
  while (!timers_.empty() && timers_.begin()->first <= *now) {
    due->push_back(std::move(timers_.begin()->second));
    timers_.erase(timers_.begin());
  }
  expected_.Expire(*now, kExpectationTtl);
  return true;
}

JobController::JobRecord* JobController::FindRecord(const std::string& job_key) {
  auto it = records_.find(job_key);
  return it == records_.end() ? nullptr : &it->second;
}

void JobController::Expectations::Expire(Time now, Duration ttl) {
  auto old = [&](const auto& e) { return now - e.second > ttl; };
  std::erase_if(created_pods, old);
  std::erase_if(killed_pods, old);
  std::erase_if(created_groups, old);
}

}  // namespace muster::reconciler
