#include "extender/workload_index.h"

#include <algorithm>
#include <utility>

namespace muster::extender {

GroupRef GroupOfPod(const Pod& pod, const std::vector<std::string>& gang_schedulers) {
  const bool served =
      std::ranges::find(gang_schedulers, pod.spec.scheduler_name) != gang_schedulers.end();
  if (served && !pod.spec.scheduling_group.empty()) {
    return GroupRef{
        .key = GangKey(PodGroupApi::kKubernetes, pod.meta.namespace_, pod.spec.scheduling_group)};
  }
  if (std::string named = pod.GroupName(); !named.empty()) {
    return GroupRef{.key = ObjectKey(pod.meta.namespace_, named)};
  }
  if (!served) return GroupRef{};
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

// Removes `key` from the shared `map`, copying it only when it holds the
// key. True when it did.
template <typename T>
bool EraseShared(std::shared_ptr<const std::map<std::string, T, std::less<>>>& map,
                 std::string_view key) {
  if (map->find(key) == map->end()) return false;
  auto copy = Copy(map);
  copy->erase(copy->find(key));
  map = std::move(copy);
  return true;
}

}  // namespace

WorkloadView::WorkloadView()
    : pod_groups_(std::make_shared<const std::map<std::string, PodGroup, std::less<>>>()),
      queues_(std::make_shared<const std::map<std::string, Queue, std::less<>>>()),
      broken_pod_groups_(
          std::make_shared<const std::map<std::string, BrokenObject, std::less<>>>()),
      broken_queues_(std::make_shared<const std::map<std::string, BrokenObject, std::less<>>>()) {}

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

const BrokenObject* WorkloadView::FindBrokenPodGroup(std::string_view key) const {
  auto it = broken_pod_groups_->find(key);
  return it == broken_pod_groups_->end() ? nullptr : &it->second;
}

const BrokenObject* WorkloadView::FindBrokenQueue(std::string_view name) const {
  auto it = broken_queues_->find(name);
  return it == broken_queues_->end() ? nullptr : &it->second;
}

void WorkloadIndex::UpsertPodGroup(PodGroup group) {
  auto groups = Copy(view_.pod_groups_);
  std::string key = group.GangKey();
  EraseShared(view_.broken_pod_groups_, key);
  (*groups)[std::move(key)] = std::move(group);
  view_.pod_groups_ = std::move(groups);
  ++view_.generation_;
}

void WorkloadIndex::DeletePodGroup(std::string_view key) {
  const bool object = EraseShared(view_.pod_groups_, key);
  const bool broken = EraseShared(view_.broken_pod_groups_, key);
  if (object || broken) ++view_.generation_;
}

void WorkloadIndex::UpsertQueue(Queue queue) {
  auto queues = Copy(view_.queues_);
  std::string key = queue.meta.name;
  EraseShared(view_.broken_queues_, key);
  (*queues)[std::move(key)] = std::move(queue);
  view_.queues_ = std::move(queues);
  ++view_.generation_;
}

void WorkloadIndex::DeleteQueue(std::string_view name) {
  const bool object = EraseShared(view_.queues_, name);
  const bool broken = EraseShared(view_.broken_queues_, name);
  if (object || broken) ++view_.generation_;
}

void WorkloadIndex::MarkPodGroupBroken(BrokenObject broken) {
  std::string key = broken.Key();
  EraseShared(view_.pod_groups_, key);
  auto map = Copy(view_.broken_pod_groups_);
  (*map)[std::move(key)] = std::move(broken);
  view_.broken_pod_groups_ = std::move(map);
  ++view_.generation_;
}

void WorkloadIndex::MarkQueueBroken(BrokenObject broken) {
  std::string key = broken.name;
  EraseShared(view_.queues_, key);
  auto map = Copy(view_.broken_queues_);
  (*map)[std::move(key)] = std::move(broken);
  view_.broken_queues_ = std::move(map);
  ++view_.generation_;
}

void WorkloadIndex::ClearBrokenPodGroup(std::string_view key) {
  if (EraseShared(view_.broken_pod_groups_, key)) ++view_.generation_;
}

void WorkloadIndex::ClearBrokenQueue(std::string_view name) {
  if (EraseShared(view_.broken_queues_, name)) ++view_.generation_;
}

}  // namespace muster::extender
