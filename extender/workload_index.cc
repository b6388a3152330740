#include "extender/workload_index.h"

#include <algorithm>
#include <atomic>
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

// Copy-on-write. `map` may be shared with views handed out earlier
// (snapshots outlive the cache's lock): then a change edits a private copy.
// When this index is its only holder, the change is made in place: no other
// holder can appear meanwhile, since a new one is copied from an existing
// holder (the count would be at least 2) or from this index, which the
// caller's lock guards (ClusterCache). Copying on every change made a relist
// of 5000 PodGroups copy the whole map once per object (12.5 M PodGroup
// copies, 20 s of an extender's restart).
template <typename T>
std::map<std::string, T, std::less<>>& Writable(
    std::shared_ptr<std::map<std::string, T, std::less<>>>& map) {
  if (map.use_count() != 1) {
    map = std::make_shared<std::map<std::string, T, std::less<>>>(*map);
  }
  // The last other holder's reads happen before these writes: it dropped its
  // reference with a release decrement, which this load observed.
  std::atomic_thread_fence(std::memory_order_acquire);
  return *map;
}

// Removes `key` from `map`, copying it (Writable) only when it holds the
// key. True when it did.
template <typename T>
bool Erase(std::shared_ptr<std::map<std::string, T, std::less<>>>& map, std::string_view key) {
  if (map->find(key) == map->end()) return false;
  auto& writable = Writable(map);
  writable.erase(writable.find(key));
  return true;
}

}  // namespace

WorkloadView::WorkloadView()
    : pod_groups_(std::make_shared<std::map<std::string, PodGroup, std::less<>>>()),
      queues_(std::make_shared<std::map<std::string, Queue, std::less<>>>()),
      broken_pod_groups_(std::make_shared<std::map<std::string, BrokenObject, std::less<>>>()),
      broken_queues_(std::make_shared<std::map<std::string, BrokenObject, std::less<>>>()) {}

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
  std::string key = group.GangKey();
  Erase(view_.broken_pod_groups_, key);
  Writable(view_.pod_groups_)[std::move(key)] = std::move(group);
  ++view_.generation_;
}

void WorkloadIndex::DeletePodGroup(std::string_view key) {
  const bool object = Erase(view_.pod_groups_, key);
  const bool broken = Erase(view_.broken_pod_groups_, key);
  if (object || broken) ++view_.generation_;
}

void WorkloadIndex::UpsertQueue(Queue queue) {
  std::string key = queue.meta.name;
  Erase(view_.broken_queues_, key);
  Writable(view_.queues_)[std::move(key)] = std::move(queue);
  ++view_.generation_;
}

void WorkloadIndex::DeleteQueue(std::string_view name) {
  const bool object = Erase(view_.queues_, name);
  const bool broken = Erase(view_.broken_queues_, name);
  if (object || broken) ++view_.generation_;
}

void WorkloadIndex::MarkPodGroupBroken(BrokenObject broken) {
  std::string key = broken.Key();
  Erase(view_.pod_groups_, key);
  Writable(view_.broken_pod_groups_)[std::move(key)] = std::move(broken);
  ++view_.generation_;
}

void WorkloadIndex::MarkQueueBroken(BrokenObject broken) {
  std::string key = broken.name;
  Erase(view_.queues_, key);
  Writable(view_.broken_queues_)[std::move(key)] = std::move(broken);
  ++view_.generation_;
}

void WorkloadIndex::ClearBrokenPodGroup(std::string_view key) {
  if (Erase(view_.broken_pod_groups_, key)) ++view_.generation_;
}

void WorkloadIndex::ClearBrokenQueue(std::string_view name) {
  if (Erase(view_.broken_queues_, name)) ++view_.generation_;
}

}  // namespace muster::extender
