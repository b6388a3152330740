#include "extender/cluster_cache.h"

#include <utility>

namespace muster::extender {

ClusterCache::ClusterCache(const Clock& clock, ClusterStateOptions options)
    : state_(clock, options) {}

void ClusterCache::UpsertNode(Node node) {
  base::MutexLock lock(&mu_);
  state_.UpsertNode(std::move(node));
}

void ClusterCache::DeleteNode(std::string_view name) {
  base::MutexLock lock(&mu_);
  state_.DeleteNode(name);
}

void ClusterCache::UpsertPod(const Pod& pod) {
  base::MutexLock lock(&mu_);
  state_.UpsertPod(pod);
}

void ClusterCache::DeletePod(std::string_view uid) {
  base::MutexLock lock(&mu_);
  state_.DeletePod(uid);
}

void ClusterCache::UpsertPodGroup(PodGroup group) {
  base::MutexLock lock(&mu_);
  state_.workloads().UpsertPodGroup(std::move(group));
}

void ClusterCache::DeletePodGroup(std::string_view key) {
  base::MutexLock lock(&mu_);
  state_.workloads().DeletePodGroup(key);
}

void ClusterCache::UpsertQueue(Queue queue) {
  base::MutexLock lock(&mu_);
  state_.workloads().UpsertQueue(std::move(queue));
}

void ClusterCache::DeleteQueue(std::string_view name) {
  base::MutexLock lock(&mu_);
  state_.workloads().DeleteQueue(name);
}

void ClusterCache::MarkPodGroupBroken(BrokenObject broken) {
  base::MutexLock lock(&mu_);
  state_.workloads().MarkPodGroupBroken(std::move(broken));
}

void ClusterCache::ClearBrokenPodGroup(std::string_view key) {
  base::MutexLock lock(&mu_);
  state_.workloads().ClearBrokenPodGroup(key);
}

void ClusterCache::MarkQueueBroken(BrokenObject broken) {
  base::MutexLock lock(&mu_);
  state_.workloads().MarkQueueBroken(std::move(broken));
}

void ClusterCache::ClearBrokenQueue(std::string_view name) {
  base::MutexLock lock(&mu_);
  state_.workloads().ClearBrokenQueue(name);
}

std::vector<std::string> ClusterCache::ExpireAssumed() {
  base::MutexLock lock(&mu_);
  return state_.ExpireAssumed();
}

ClusterSnapshot ClusterCache::Snapshot(std::string_view pod_uid) {
  base::MutexLock lock(&mu_);
  return state_.Snapshot(pod_uid);
}

void ClusterCache::Exclusive(const std::function<void(ClusterState&)>& fn) {
  base::MutexLock lock(&mu_);
  fn(state_);
}

}  // namespace muster::extender
