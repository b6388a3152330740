// JobController's informers (controller.h): every change of a Job, of a pod
// with the volcano.sh/job-name label or of a PodGroup a Job owns becomes a
// Request queued on its Job; the pods' and PodGroups' handlers also drop the
// expectations their event fulfils.
#include <spdlog/spdlog.h>

#include <memory>
#include <utility>

#include "reconciler/controller.h"
#include "reconciler/naming.h"

namespace muster::reconciler {
namespace {

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

}  // namespace

void JobController::Wire() {
  WireJobs();
  WirePods();
  WireGroups();
}

void JobController::WireJobs() {
  jobs_.AddHandlers(
      {.on_add = [this](const Job& job) { OnJobAdded(job); },
       .on_update = [this](const Job&, const Job& job) { Enqueue(job.meta.Key(), Request{}); },
       .on_delete = [this](const Job& job) { OnJobDeleted(job); },
       .on_undecodable =
           [this](const kube::UndecodableObject& job) { Enqueue(job.Key(), Request{}); },
       .on_undecodable_cleared =
           [this](const kube::UndecodableObject& job) {
             base::MutexLock lock(&mu_);
             if (JobRecord* record = FindRecord(job.Key())) record->undecodable_said.clear();
           }});
}

void JobController::OnJobAdded(const Job& job) {
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
}

// What this process remembers of the Job goes with it; its expectations
// expire on their own (they name pods and PodGroups, which outlive it).
void JobController::OnJobDeleted(const Job& job) {
  base::MutexLock lock(&mu_);
  records_.erase(job.meta.Key());
}

void JobController::WirePods() {
  pods_.AddHandlers({.on_add = [this](const Pod& p) { OnPod(nullptr, &p); },
                     .on_update = [this](const Pod& a, const Pod& b) { OnPod(&a, &b); },
                     .on_delete = [this](const Pod& p) { OnPod(&p, nullptr); }});
}

void JobController::OnPod(const Pod* before, const Pod* after) {
  const Pod& pod = after != nullptr ? *after : *before;
  std::string job_key = JobKeyOfPod(pod);
  if (job_key.empty()) return;
  {
    base::MutexLock lock(&mu_);
    if (after != nullptr) {
      pods_by_job_[job_key].insert(pod.meta.Key());
      expected_.created_pods.erase(pod.meta.Key());
    } else if (auto it = pods_by_job_.find(job_key); it != pods_by_job_.end()) {
      it->second.erase(pod.meta.Key());
      if (it->second.empty()) pods_by_job_.erase(it);  // its Job's last pod
    }
  }
  if (std::shared_ptr<const Job> job = jobs_.Get(job_key)) {
    RaisePodEvents(job_key, *job, before, after);
  }
  // A deleted pod's kill is done; its expectation goes only now, after its
  // deletion was read against it (RaisePodEvents).
  if (after == nullptr) {
    base::MutexLock lock(&mu_);
    expected_.killed_pods.erase(pod.meta.uid);
  }
}

void JobController::WireGroups() {
  groups_.AddHandlers(
      {.on_add = [this](const PodGroup& g) { OnGroup(nullptr, &g); },
       .on_update = [this](const PodGroup& a, const PodGroup& b) { OnGroup(&a, &b); },
       .on_delete = [this](const PodGroup& g) { OnGroup(&g, nullptr); }});
}

void JobController::OnGroup(const PodGroup* before, const PodGroup* after) {
  const PodGroup& pg = after != nullptr ? *after : *before;
  std::string job_key = JobKeyOfGroup(pg);
  if (job_key.empty()) return;
  {
    base::MutexLock lock(&mu_);
    if (after == nullptr) {
      expected_.deleted_group_uids.erase(pg.meta.uid);
    } else {
      expected_.created_groups.erase(pg.meta.Key());
    }
  }
  Request request;
  bool to_unknown = after != nullptr && after->status.phase == kPodGroupUnknown &&
                    (before == nullptr || before->status.phase != kPodGroupUnknown);
  if (to_unknown) request.event = std::string(kUnknownEvent);
  Enqueue(job_key, std::move(request));
}

std::vector<std::string> JobController::PodKeysOf(const std::string& job_key) {
  base::MutexLock lock(&mu_);
  const auto it = pods_by_job_.find(job_key);
  return it == pods_by_job_.end() ? std::vector<std::string>()
                                  : std::vector<std::string>(it->second.begin(), it->second.end());
}

void JobController::RaisePodEvents(const std::string& job_key, const Job& job, const Pod* before,
                                   const Pod* after) {
  const Pod& pod = after != nullptr ? *after : *before;
  // A pod this process is killing raises no event (PodChangeRequests),
  // whether or not this copy shows its out-of-sync mark: a relist after a
  // broken watch delivers the deletion with the copy from before the mark,
  // and a mark may have failed. Read as an eviction, a RestartTask's own
  // kills would restart the task again and spend its maxRetry. Looked up
  // here, for every caller (a pod change, or pods seen before their Job).
  bool killed_by_us = false;
  {
    base::MutexLock lock(&mu_);
    killed_by_us = expected_.killed_pods.count(pod.meta.uid) > 0;
  }
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
  // An eviction is logged only where it may act: not for a finished Job's
  // pods, nor for those of a Job being deleted (a namespace's deletion
  // deletes every pod).
  const bool may_act = !IsFinished(job.status.state.phase) && !job.meta.deletion_timestamp;
  for (Request& r : PodChangeRequests(job, before, after, task_pods, killed_by_us)) {
    if (r.event == kPodEvicted && may_act) LogEviction(job_key, pod);
    Enqueue(job_key, std::move(r));
  }
}

// Who deleted a pod is not in the deletion itself; the DisruptionTarget
// condition, when the deleter set one (kube-scheduler's preemption, the
// taint manager, the pod GC, the eviction API), says it.
void JobController::LogEviction(const std::string& job_key, const Pod& pod) {
  std::string by = "no DisruptionTarget condition";
  for (const Condition& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget") by = "DisruptionTarget " + c.reason + ": " + c.message;
  }
  spdlog::info("reconciler: job {}: pod {} (uid {}, version {}) deleted by another party ({})",
               job_key, pod.meta.name, pod.meta.uid, PodVersion(pod), by);
}

}  // namespace muster::reconciler
