// ClusterState: muster's cache of the cluster, as a pure structure.
//
// The extender decides placements against this cache, never against the node
// list in a request. Watches feed it through event methods (UpsertNode,
// DeletePod, ...); the verb pipeline (pipeline.h) reads it through immutable
// snapshots; bind reserves capacity in it (Assume) until the bound pod is seen.
//
// Accounting, per node name, updated incrementally (O(1) per event):
//
//   allocated = Σ EffectiveRequest() of the pods bound to the node that are
//                 not terminal (Succeeded/Failed); terminating pods still count
//             + Σ assumed placements on the node
//   and allocated["pods"] counts both, like kube-scheduler's NodeInfo.
//
// An assumed placement ends when the pod is seen bound (its bound request
// then counts instead, on whichever node it landed), terminal or deleted; on
// Forget(); or when it expires, `assume_ttl` after the last Assume() of that
// pod by the injected Clock. Expiry is applied by Snapshot(), Assume() and
// ExpireAssumed(); no thread or timer is involved.
//
// Pods may name a node before (or after) the cache holds its Node object:
// their resources still count under that name, so a node that (re)appears
// starts with the right allocation. Such a name is not a known node
// (NodeInfo::known() is false) and fails every fit.
//
// Snapshots share structure with the state: taking one is O(1); the first
// change after a snapshot copies the node table's pointers (O(nodes)), and
// every change to a node replaces that node's NodeInfo (copy-on-write), so a
// snapshot never sees a later change.
//
// Thread-safety: ClusterState is not thread-safe: one owner at a time, or a
// mutex around it (ClusterCache, cluster_cache.h). A ClusterSnapshot is
// immutable and may be read from any thread while the state moves on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/clock.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::extender {

// A string hash that also takes string_view, for lookups without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct NodeInfo;
using NodeSlots = std::vector<std::shared_ptr<const NodeInfo>>;

// Node name -> slot in a NodeSlots table: open addressing with linear
// probing over (hash, slot) pairs, the names being those of the slots. A
// lookup reads one place in a flat array and then the NodeInfo it needs
// anyway, where a node-based hash map chases two more pointers: the filter
// of 5000 candidates does 5000 lookups. Copying it (copy-on-write after a
// snapshot) is one vector copy.
class NodeIndex {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  // The slot named `name`, or kNone.
  uint32_t Find(std::string_view name, const NodeSlots& slots) const;
  // REQUIRES: no slot named `name` in the index; slots[slot]->name == name.
  void Insert(std::string_view name, uint32_t slot);
  // Removes `name` if present. REQUIRES: its slot still holds its NodeInfo.
  void Erase(std::string_view name, const NodeSlots& slots);
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t slot = kNone;  // kNone: empty
  };
  static uint64_t Hash(std::string_view name) { return std::hash<std::string_view>{}(name); }
  size_t Position(std::string_view name, const NodeSlots& slots) const;  // table_.size(): absent
  void Grow();

  std::vector<Entry> table_;  // size a power of two (or 0), at most half full
  size_t size_ = 0;
};

// How many resources ClusterStateOptions::indexed_resources may name.
inline constexpr size_t kMaxIndexedResources = 4;

// One node name's view in the cache.
struct NodeInfo {
  std::string name;
  // The Node as last seen; null while pods name a node the cache has no Node
  // object for (not yet, or no longer).
  std::shared_ptr<const Node> node;
  // node->allocatable, kept here too (empty when !known()): a fit reads it
  // for every candidate, and one pointer less per node counts at 5000 nodes.
  Resources allocatable;
  // Requests of the counted pods and placements, plus "pods" = their number.
  Resources allocated;
  int32_t bound_pods = 0;    // bound, non-terminal pods counted
  int32_t assumed_pods = 0;  // assumed placements counted
  // allocatable and allocated of ClusterStateOptions::indexed_resources[i],
  // kept in step with the two Resources above: a fit over 5000 candidates
  // reads these in place instead of searching two heap-held entry lists per
  // node (ClusterSnapshot::IndexOf gives i).
  std::array<int64_t, kMaxIndexedResources> indexed_allocatable{};
  std::array<int64_t, kMaxIndexedResources> indexed_allocated{};

  bool known() const { return node != nullptr; }
  // allocatable - allocated for `resource`; negative when over-committed
  // (pods bound by someone else than muster).
  int64_t Free(std::string_view resource) const {
    return allocatable.Get(resource) - allocated.Get(resource);
  }
};

// Where a pod holds resources in the cache.
struct Placement {
  std::string node;
  Resources resources;   // what it holds there, "pods": 1 included
  bool assumed = false;  // a reservation by Assume(), the bound pod not yet seen
  friend bool operator==(const Placement&, const Placement&) = default;
};

// What the cache keeps of a pod (not the whole Pod: 50k pods must stay small).
struct PodRecord {
  std::string namespace_;
  std::string name;
  std::string node_name;     // spec.nodeName; "" while pending
  Resources request;         // Pod::EffectiveRequest()
  bool terminal = false;     // Succeeded or Failed: holds nothing any more
  bool terminating = false;  // deletionTimestamp set: still holds its resources

  // True when the pod's request counts on node_name.
  bool Counts() const { return !node_name.empty() && !terminal; }
  friend bool operator==(const PodRecord&, const PodRecord&) = default;
};

// The outcome of Assume(). None of them is a fault.
enum class AssumeResult {
  kAssumed,         // a new placement now counts on the node
  kRefreshed,       // already assumed on this node: expiry restarted
  kMoved,           // was assumed on another node; now counts on this one
  kAlreadyBound,    // the cache already sees the pod bound to this node
  kBoundElsewhere,  // the cache sees the pod bound to another node: nothing assumed
};
std::string_view AssumeResultName(AssumeResult result);

// An immutable view of the cache for one scheduling decision. Cheap to copy.
class ClusterSnapshot {
 public:
  ClusterSnapshot() = default;  // an empty cluster

  // The entry for `name`, or null when the cache has never heard of it (or
  // holds nothing under it). The entry may be !known(): see ClusterState.
  const NodeInfo* FindNode(std::string_view name) const;
  // Calls fn(const NodeInfo&) for every entry, known or not, in no order.
  template <typename Fn>
  void ForEachNode(Fn&& fn) const {
    if (slots_ == nullptr) return;
    for (const auto& slot : *slots_) {
      if (slot != nullptr) fn(*slot);
    }
  }
  // Known nodes (Node objects in the cache).
  size_t node_count() const { return known_nodes_; }
  // The Clock's time when the snapshot was taken.
  Time time() const { return time_; }
  // The position of `resource` in NodeInfo::indexed_*, or -1 when not indexed.
  int IndexOf(std::string_view resource) const;
  // Counts the changes made to the state; equal generations mean equal content.
  uint64_t generation() const { return generation_; }
  // Where the pod the snapshot was taken for (Snapshot(pod_uid)) holds
  // resources already, if anywhere: a retried filter or bind credits it back.
  const std::optional<Placement>& pod_placement() const { return pod_placement_; }

 private:
  friend class ClusterState;
  using Slots = NodeSlots;
  using Index = NodeIndex;

  std::shared_ptr<const Slots> slots_;
  std::shared_ptr<const Index> index_;
  std::shared_ptr<const std::vector<std::string>> indexed_resources_;
  size_t known_nodes_ = 0;
  Time time_;
  uint64_t generation_ = 0;
  std::optional<Placement> pod_placement_;
};

struct ClusterStateOptions {
  // How long an assumed placement counts without its bound pod being seen.
  // A successful bind is normally seen within milliseconds; the TTL only
  // frees capacity whose bind outcome was never observed. Too short risks a
  // double booking while the watch lags, too long blocks capacity.
  Duration assume_ttl = std::chrono::seconds(60);
  // Resources whose amounts every NodeInfo also keeps in flat arrays, for the
  // fit and score of every candidate; the verbs fall back to a search for
  // the others. The extender passes its managed resources. At most
  // kMaxIndexedResources are indexed (the first ones); duplicates and ""
  // are ignored.
  std::vector<std::string> indexed_resources = {std::string(kNvidiaGpu)};
};

class ClusterState {
 public:
  // `clock` must outlive the state.
  explicit ClusterState(const Clock& clock, ClusterStateOptions options = {});
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // ---- watch events. Idempotent: replaying an event changes nothing.
  void UpsertNode(Node node);
  void DeleteNode(std::string_view name);
  // Pods are keyed by metadata.uid; a pod without one is ignored (the API
  // server always sets it).
  void UpsertPod(const Pod& pod);
  void DeletePod(std::string_view uid);

  // ---- reservations (bind).
  // Counts `request` (plus one "pods") on `node` for the pod until it is seen
  // bound, terminal or deleted, Forget()-ten or expired. Expires stale
  // placements first. REQUIRES: pod_uid and node non-empty.
  AssumeResult Assume(std::string_view pod_uid, std::string_view node, const Resources& request);
  // Drops the pod's assumed placement; with `only_on_node` set, only if it is
  // on that node (a later bind may have moved it). True when one was dropped.
  bool Forget(std::string_view pod_uid, std::string_view only_on_node = {});
  // Drops every placement whose time is up; returns their pod uids.
  std::vector<std::string> ExpireAssumed();

  // ---- reads.
  // An immutable view (expires stale placements first). With `pod_uid`, the
  // snapshot also tells where that pod already holds resources.
  ClusterSnapshot Snapshot(std::string_view pod_uid = {});
  // Valid until the next change of the state.
  const NodeInfo* FindNode(std::string_view name) const;
  const PodRecord* FindPod(std::string_view uid) const;
  std::optional<Placement> PlacementOf(std::string_view uid) const;
  size_t node_count() const { return known_nodes_; }
  size_t pod_count() const { return pods_.size(); }
  size_t assumed_count() const { return assumed_.size(); }
  uint64_t generation() const { return generation_; }

  // Recomputes every node's allocation from the pods and placements and
  // compares it with the incremental accounting. O(pods + nodes): for tests
  // and debugging. Internal (naming the first node that differs) on mismatch.
  Status CheckAccounting() const;

 private:
  using Slots = ClusterSnapshot::Slots;
  using Index = ClusterSnapshot::Index;
  struct Assumption {
    std::string node;
    Resources resources;  // "pods": 1 included
    Time expires;
  };
  static constexpr uint32_t kNoSlot = ~uint32_t{0};

  // Copy-on-write access to the node table shared with snapshots.
  Slots& MutableSlots();
  Index& MutableIndex();
  uint32_t SlotOf(std::string_view name) const;
  uint32_t SlotOrCreate(std::string_view name);
  // Replaces the slot's NodeInfo by a changed copy, then frees the slot if
  // it holds nothing any more.
  template <typename Fn>
  void ChangeNode(uint32_t slot, Fn&& change);
  void FreeSlotIfEmpty(uint32_t slot);
  void RefreshIndexed(NodeInfo& info) const;
  // Adds (sign +1) or removes (sign -1) a contribution on `node`.
  void Account(std::string_view node, const Resources& resources, int sign, bool assumed);
  void DropAssumption(std::string_view uid);

  const Clock& clock_;
  const ClusterStateOptions options_;
  const std::shared_ptr<const std::vector<std::string>> indexed_resources_;
  std::shared_ptr<Slots> slots_;
  std::shared_ptr<Index> index_;
  bool slots_shared_ = false;  // a snapshot holds slots_: copy before writing
  bool index_shared_ = false;
  std::vector<uint32_t> free_slots_;
  size_t known_nodes_ = 0;
  uint64_t generation_ = 0;
  std::unordered_map<std::string, PodRecord, StringHash, std::equal_to<>> pods_;
  std::unordered_map<std::string, Assumption, StringHash, std::equal_to<>> assumed_;
  std::set<std::pair<Time, std::string>> expiry_;  // (expires, uid) of assumed_
};

// How the verb pipeline reaches the cluster state. ClusterCache implements it
// over a mutex; implementations must be thread-safe if the pipeline is used
// from several threads.
class ClusterAccess {
 public:
  virtual ~ClusterAccess() = default;
  // ClusterState::Snapshot(pod_uid), consistent with concurrent changes.
  virtual ClusterSnapshot Snapshot(std::string_view pod_uid) = 0;
  // Runs `fn` with exclusive access to the state: nothing else reads or
  // changes it meanwhile, so a decision and its Assume() are one step.
  // `fn` must be quick, do no I/O and not call back into this object.
  virtual void Exclusive(const std::function<void(ClusterState&)>& fn) = 0;
};

}  // namespace muster::extender
