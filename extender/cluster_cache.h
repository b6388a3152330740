// ClusterCache: the one ClusterState of a running extender, behind a mutex.
//
// Informer handlers (one thread per watched collection) write through the
// event methods; HTTP workers read through Snapshot() and reserve through
// Exclusive(). Every method holds the mutex only for the O(1) (or, after a
// change, O(nodes) pointer-copy) work of the pure structure, never across I/O.
//
// Thread-safety: thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "extender/cluster_state.h"
#include "model/clock.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/queue.h"

namespace muster::extender {

class ClusterCache final : public ClusterAccess {
 public:
  // `clock` must outlive the cache.
  explicit ClusterCache(const Clock& clock, ClusterStateOptions options = {});

  void UpsertNode(Node node) MUSTER_EXCLUDES(mu_);
  void DeleteNode(std::string_view name) MUSTER_EXCLUDES(mu_);
  void UpsertPod(const Pod& pod) MUSTER_EXCLUDES(mu_);
  void DeletePod(std::string_view uid) MUSTER_EXCLUDES(mu_);
  void UpsertPodGroup(PodGroup group) MUSTER_EXCLUDES(mu_);
  // By gang key (PodGroup::GangKey()).
  void DeletePodGroup(std::string_view key) MUSTER_EXCLUDES(mu_);
  void UpsertQueue(Queue queue) MUSTER_EXCLUDES(mu_);
  void DeleteQueue(std::string_view name) MUSTER_EXCLUDES(mu_);
  // WorkloadIndex's broken entries: a PodGroup or Queue that does not decode.
  void MarkPodGroupBroken(BrokenObject broken) MUSTER_EXCLUDES(mu_);
  void ClearBrokenPodGroup(std::string_view key) MUSTER_EXCLUDES(mu_);
  void MarkQueueBroken(BrokenObject broken) MUSTER_EXCLUDES(mu_);
  void ClearBrokenQueue(std::string_view name) MUSTER_EXCLUDES(mu_);
  // ClusterState::ExpireAssumed(), for a periodic sweep that logs the uids.
  std::vector<std::string> ExpireAssumed() MUSTER_EXCLUDES(mu_);

  ClusterSnapshot Snapshot(std::string_view pod_uid) override MUSTER_EXCLUDES(mu_);
  void Exclusive(const std::function<void(ClusterState&)>& fn) override MUSTER_EXCLUDES(mu_);

 private:
  base::Mutex mu_;
  ClusterState state_ MUSTER_GUARDED_BY(mu_);
};

}  // namespace muster::extender
