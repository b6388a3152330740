// WorkloadIndex: the PodGroups and Queues of the cluster, as the watches last
// reported them - the inputs of the gang and queue steps of the pipeline.
//
// Copy-on-write: View() hands out the current maps by shared pointer, so a
// copy of the view (a request's snapshot) stays valid and unchanged while
// the watches go on. A change bumps the generation and edits the affected
// map in place when the index is its only holder, else a copy of it: a
// burst of changes between two snapshots copies each map at most once.
//
// Thread-safety: none (a plain value). ClusterCache guards its instance; a
// copy of the view may be read and dropped on any thread, but copied only
// from another copy or under that guard (the in-place edit relies on it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pod.h"
#include "model/pod_group.h"
#include "model/queue.h"

namespace muster::extender {

// The schedulerName of the kube-scheduler profile that calls muster.
inline constexpr std::string_view kVolcanoSchedulerName = "volcano";

// The PodGroup a pod belongs to, as the cache keys it.
struct GroupRef {
  std::string key;        // "namespace/name"; "" for none
  bool implicit = false;  // Volcano's PodGroup of one (ImplicitPodGroup)
};
// The pod's group. For a pod of one of `gang_schedulers`: the Kubernetes
// PodGroup it joins (spec.schedulingGroup), else the Volcano PodGroup it
// names (Pod::GroupName), else the one Volcano's podgroup controller would
// make for it (Pod::ImplicitGroupName). For any other pod: the Volcano
// PodGroup it names, else none - a pod of another scheduler joining a
// Kubernetes PodGroup is that scheduler's gang (its GangScheduling plugin's),
// not muster's.
GroupRef GroupOfPod(const Pod& pod, const std::vector<std::string>& gang_schedulers);

// The PodGroup Volcano's podgroup controller makes for a plain pod
// (pkg/controllers/podgroup/pg_controller_handler.go): minMember 1, the
// queue of the pod's scheduling.volcano.sh/queue-name annotation, the pod's
// priority class, created with the pod; no minResources (Volcano sets the
// pod's own request: admitting it is the queue gate's call, queue_gate.h).
// muster writes no such object: it lives in the cache only, derived from the
// pod whenever needed, so a restart rebuilds it and no API write is spent
// per pod. (Volcano reads minMember from the owner's
// scheduling.volcano.sh/group-min-member annotation; muster does not read
// owners: always 1.)
PodGroup ImplicitPodGroup(const Pod& pod);

// A PodGroup or Queue the watch delivered that muster cannot decode
// (kube::UndecodableObject): what the gang gate and the gang controller
// answer it with. It stands in for the object: the index holds either the
// object or this, whichever the watch reported last.
struct BrokenObject {
  std::string namespace_;  // "" for Queues
  std::string name;
  PodGroupApi api = PodGroupApi::kVolcano;  // PodGroups: whose object it is
  std::string uid;
  std::string resource_version;
  std::string problem;  // "<JSON path>: <why>" of the first bad field
  // PodGroups: the status, when it decodes on its own (what was said already).
  std::optional<PodGroupStatus> status;
  // PodGroups: their gang key; Queues: their name.
  std::string Key() const { return GangKey(api, namespace_, name); }
  friend bool operator==(const BrokenObject&, const BrokenObject&) = default;
};

// An immutable view of the index at one generation. Cheap to copy.
class WorkloadView {
 public:
  WorkloadView();

  // The Volcano PodGroup `name` in namespace `ns`; null when unknown.
  const PodGroup* FindPodGroup(std::string_view ns, std::string_view name) const;
  // The PodGroup of gang key `key` (model GangKey(), as PodRecord::group).
  const PodGroup* FindPodGroup(std::string_view key) const;
  // The cluster-scoped Queue `name`; null when unknown.
  const Queue* FindQueue(std::string_view name) const;
  // The PodGroup (by cache key) or Queue (by name) that does not decode;
  // null when it decodes or is unknown.
  const BrokenObject* FindBrokenPodGroup(std::string_view key) const;
  const BrokenObject* FindBrokenQueue(std::string_view name) const;

  size_t pod_group_count() const { return pod_groups_->size(); }
  size_t queue_count() const { return queues_->size(); }
  uint64_t generation() const { return generation_; }

  // Sorted by key ("ns/name" for PodGroups, name for Queues).
  const std::map<std::string, PodGroup, std::less<>>& pod_groups() const { return *pod_groups_; }
  const std::map<std::string, Queue, std::less<>>& queues() const { return *queues_; }
  const std::map<std::string, BrokenObject, std::less<>>& broken_pod_groups() const {
    return *broken_pod_groups_;
  }
  const std::map<std::string, BrokenObject, std::less<>>& broken_queues() const {
    return *broken_queues_;
  }

 private:
  friend class WorkloadIndex;
  // Shared with earlier copies of the view; only WorkloadIndex writes them,
  // and only when it is their one holder (copy-on-write).
  std::shared_ptr<std::map<std::string, PodGroup, std::less<>>> pod_groups_;
  std::shared_ptr<std::map<std::string, Queue, std::less<>>> queues_;
  std::shared_ptr<std::map<std::string, BrokenObject, std::less<>>> broken_pod_groups_;
  std::shared_ptr<std::map<std::string, BrokenObject, std::less<>>> broken_queues_;
  uint64_t generation_ = 0;
};

class WorkloadIndex {
 public:
  // Adds or replaces the object (PodGroups by PodGroup::GangKey(), Queues by
  // name), and drops its broken entry.
  void UpsertPodGroup(PodGroup group);
  // Drops the object and its broken entry (PodGroups by gang key).
  void DeletePodGroup(std::string_view key);
  void UpsertQueue(Queue queue);
  void DeleteQueue(std::string_view name);
  // The object as it is now does not decode: its broken entry replaces it
  // (a stale decoded version would be acted on as if it were current).
  void MarkPodGroupBroken(BrokenObject broken);
  void MarkQueueBroken(BrokenObject broken);
  // The object no longer has a broken version (deleted, or decodes: its
  // Upsert follows).
  void ClearBrokenPodGroup(std::string_view key);
  void ClearBrokenQueue(std::string_view name);

  const WorkloadView& View() const { return view_; }

 private:
  WorkloadView view_;
};

}  // namespace muster::extender
