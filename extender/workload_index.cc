#include "extender/workload_index.h"

#include <algorithm>
#include <utility>

namespace muster::extender {

GroupRef GroupOfPod(const Pod& pod, const std::vector<std::string>& gang_schedulers) {
  if (std::string named = pod.GroupName(); !named.empty()) {
    return GroupRef{.key = ObjectKey(pod.meta.namespace_, named)};
  }
  if (std::ranges::find(gang_schedulers, pod.spec.scheduler_name) == gang_schedulers.end()) {
    return GroupRef{};
  }
  const std::string implicit = pod.ImplicitGroupName();
  if (implicit.empty()) return GroupRef{};
  return GroupRef{.key = ObjectKey(pod.meta.namespace_, implicit), .implicit = true};
}

PodGroup ImplicitPodGroup(const Pod& pod) {
  PodGroup group;
  group.meta.name = pod.ImplicitGroupName();
  group.meta.namespace_ = pod.meta.namespace_;
  group.meta.creation_timestamp = pod.meta.creation_timestamp;
  group.spec.min_member = 1;
  group.spec.queue = pod.QueueAnnotation();
  group.spec.priority_class_name = pod.spec.priority_class_name;
  return group;
}

namespace {

// Copy-on-write: `map` is shared with earlier views; edit a private copy.
template <typename T>
std::shared_ptr<std::map<std::string, T, std::less<>>> Copy(
    const std::shared_ptr<const std::map<std::string, T, std::less<>>>& map) {
  return std::make_shared<std::map<std::string, T, std::less<>>>(*map);
}

}  // namespace

WorkloadView::WorkloadView()
    : pod_groups_(std::make_shared<const std::map<std::string, PodGroup, std::less<>>>()),
      queues_(std::make_shared<const std::map<std::string, Queue, std::less<>>>()) {}

const PodGroup* WorkloadView::FindPodGroup(std::string_view ns, std::string_view name) const {
  return FindPodGroup(ObjectKey(ns, name));
}

const PodGroup* WorkloadView::FindPodGroup(std::string_view key) const {
  auto it = pod_groups_->find(key);
  return it == pod_groups_->end() ? nullptr : &it->second;
}

const Queue* WorkloadView::FindQueue(std::string_view name) const {
  auto it = queues_->find(name);
  return it == queues_->end() ? nullptr : &it->second;
}

void WorkloadIndex::UpsertPodGroup(PodGroup group) {
  auto groups = Copy(view_.pod_groups_);
  std::string key = group.meta.Key();
  (*groups)[std::move(key)] = std::move(group);
  view_.pod_groups_ = std::move(groups);
  ++view_.generation_;
}

void WorkloadIndex::DeletePodGroup(std::string_view ns, std::string_view name) {
  const std::string key = ObjectKey(ns, name);
  if (view_.pod_groups_->find(key) == view_.pod_groups_->end()) return;
  auto groups = Copy(view_.pod_groups_);
  groups->erase(key);
  view_.pod_groups_ = std::move(groups);
  ++view_.generation_;
}

void WorkloadIndex::UpsertQueue(Queue queue) {
  auto queues = Copy(view_.queues_);
  std::string key = queue.meta.name;
  (*queues)[std::move(key)] = std::move(queue);
  view_.queues_ = std::move(queues);
  ++view_.generation_;
}

void WorkloadIndex::DeleteQueue(std::string_view name) {
  auto it = view_.queues_->find(name);
  if (it == view_.queues_->end()) return;
  auto queues = Copy(view_.queues_);
  queues->erase(std::string(name));
  view_.queues_ = std::move(queues);
  ++view_.generation_;
}

}  // namespace muster::extender
