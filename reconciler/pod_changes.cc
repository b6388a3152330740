// The part of lifecycle.h that reads pods: the requests a pod change raises
// (PodChangeRequests) and a pod's task, index and job version.
#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reconciler/lifecycle.h"
#include "reconciler/naming.h"

namespace muster::reconciler {
namespace {

// Container and init container restarts of a pod.
int32_t Restarts(const Pod& pod) {
  int32_t n = 0;
  for (const ContainerStatus& c : pod.status.container_statuses) n += c.restart_count;
  for (const ContainerStatus& c : pod.status.init_container_statuses) n += c.restart_count;
  return n;
}

// A request about `pod`, without its event.
Request PodRequest(const Pod& pod) {
  Request request;
  int index = 0;
  PodTaskAndIndex(pod, &request.task, &index);
  request.pod = pod.meta.name;
  request.pod_uid = pod.meta.uid;
  request.pod_version = PodVersion(pod);
  return request;
}

Request WithEvent(Request request, std::string_view event) {
  request.event = std::string(event);
  return request;
}

// True when this change is the start of the pod's deletion: a delete not seen
// coming, or a deletionTimestamp the pod did not have (also on an add: a pod
// first seen while someone else deletes it).
bool DeletionStarts(const Pod* before, const Pod* after) {
  if (after == nullptr) return !before->meta.deletion_timestamp.has_value();
  return after->meta.deletion_timestamp.has_value() &&
         (before == nullptr || !before->meta.deletion_timestamp.has_value());
}

// The events of the pod's new phase (or of its first sight): PodPending,
// PodFailed with the first container's exit code, TaskCompleted once every
// replica of its task has succeeded.
void AddPhaseEvents(const Job& job, const Pod* before, const Pod& after, const Request& base,
                    const TaskPods& task_pods, std::vector<Request>* out) {
  const std::string old_phase = before == nullptr ? "" : before->status.phase;
  const std::string& phase = after.status.phase;
  if (phase == old_phase && before != nullptr) return;
  if (phase.empty() || phase == "Pending") out->push_back(WithEvent(base, kPodPendingEvent));
  if (phase == "Failed") {
    Request r = WithEvent(base, kPodFailed);
    for (const ContainerStatus& c : after.status.container_statuses) {
      r.exit_code = c.exit_code;
      break;
    }
    out->push_back(std::move(r));
  }
  if (phase == "Succeeded") {
    const TaskSpec* task = FindTask(job, base.task);
    int32_t done = 0;
    if (task != nullptr) {
      for (const Pod* p : task_pods()) done += p->status.phase == "Succeeded";
    }
    if (task != nullptr && done >= task->replicas) out->push_back(WithEvent(base, kTaskCompleted));
  }
}

// True when the pod's restarts rose and the live pods of its task have
// restarted as often as the task's maxRetry allows (-1: unlimited; 0 or
// unset: 3).
bool RetriesUsedUp(const Job& job, const Pod* before, const Pod& after, std::string_view task_name,
                   const TaskPods& task_pods) {
  const TaskSpec* task = FindTask(job, task_name);
  const bool restarted = Restarts(after) > (before == nullptr ? 0 : Restarts(*before));
  if (!restarted || task == nullptr || task->max_retry.value_or(3) == -1) return false;
  int32_t restarts = 0;
  for (const Pod* p : task_pods()) {
    if (p->status.phase == "Running" || p->status.phase == "Pending") restarts += Restarts(*p);
  }
  int32_t limit = task->max_retry.value_or(3) == 0 ? 3 : task->max_retry.value_or(3);
  return restarts >= limit;
}

}  // namespace

std::vector<Request> PodChangeRequests(const Job& job, const Pod* before, const Pod* after,
                                       const TaskPods& task_pods, bool killed_by_us) {
  const Pod* pod = after != nullptr ? after : before;
  std::vector<Request> out;
  if (pod == nullptr || killed_by_us || pod->meta.annotations.count(std::string(kOutOfSyncKey))) {
    out.push_back(Request{});
    return out;
  }
  const Request base = PodRequest(*pod);
  if (DeletionStarts(before, after)) {
    // Also an add: a pod first seen while someone else deletes it (after a
    // restart of the reconciler) was evicted meanwhile.
    out.push_back(WithEvent(base, kPodEvicted));
    return out;
  }
  if (after == nullptr) {
    out.push_back(Request{});  // gone after a deletion already seen
    return out;
  }
  AddPhaseEvents(job, before, *after, base, task_pods, &out);
  if (RetriesUsedUp(job, before, *after, base.task, task_pods)) {
    out.push_back(WithEvent(base, kTaskFailed));
  }
  if (out.empty()) out.push_back(Request{});
  return out;
}

bool PodTaskAndIndex(const Pod& pod, std::string* task, int* index) {
  auto find = [&](std::string_view key) -> const std::string* {
    auto a = pod.meta.annotations.find(std::string(key));
    if (a != pod.meta.annotations.end()) return &a->second;
    auto l = pod.meta.labels.find(std::string(key));
    return l != pod.meta.labels.end() ? &l->second : nullptr;
  };
  const std::string* t = find(kTaskSpecKey);
  if (t == nullptr) return false;
  *task = *t;
  const std::string* i = find(kTaskIndexKey);
  std::string_view digits = i != nullptr ? std::string_view(*i) : std::string_view(pod.meta.name);
  if (i == nullptr) {
    size_t dash = digits.rfind('-');
    digits = dash == std::string_view::npos ? "" : digits.substr(dash + 1);
  }
  *index = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), *index);
  return true;
}

int32_t PodVersion(const Pod& pod) {
  auto it = pod.meta.annotations.find(std::string(kJobVersionKey));
  if (it == pod.meta.annotations.end()) return 0;
  int32_t version = 0;
  std::from_chars(it->second.data(), it->second.data() + it->second.size(), version);
  return version;
}

}  // namespace muster::reconciler
