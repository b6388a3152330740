// ClusterState: muster's cache of the cluster, as a pure structure. The
// extender decides placements against it, never against the node list in a
// request.
//
// What it holds:
//   - per node name, a NodeInfo: the Node as last seen, what the counted pods
//     and placements take of its allocatable (the accounting below), its GPUs
//     and what of them each holds (gpu_ledger.h);
//   - per pod uid, a PodRecord (not the whole Pod: 50k pods must stay small),
//     and the whole pods of gangs (gang_pods(), the gang controller's input)
//     with each gang's plan (SetGangPlan);
//   - the assumed placements (reservations, below);
//   - the PodGroups and Queues (workloads(), workload_index.h) and the queue
//     gate of the pods no gang pass releases (queue_gate(), queue_gate.h).
//
// Who writes: the watches, through the event methods (UpsertNode, DeletePod,
// ..., workloads()), which are idempotent; bind, which reserves the node it
// chose (Assume) and drops the reservation when the Binding fails (Forget);
// the gang controller, which reserves whole gangs (Assume with its own TTL,
// SetGangPlan) and releases them (Forget); filter and the gang controller,
// through queue_gate(). The verb pipeline (pipeline.h) only reads, through
// immutable snapshots (Snapshot()).
//
// Reservations: Assume(pod, node, request) counts the request (and one
// "pods") on the node for a pod the cache does not yet see bound, so the next
// decision sees that capacity taken before the watch reports the Binding. A
// pod has at most one placement: assuming it again refreshes or moves it,
// and a pod seen bound is never assumed. The placement ends when the pod is
// seen bound (its bound request then counts instead, on whichever node it
// landed), terminal or deleted; on Forget() (optionally only if still on a
// given node); or when it expires, `assume_ttl` (or the TTL given to Assume)
// after the last Assume() of that pod by the injected Clock. Expiry is
// applied by Snapshot(), Assume() and ExpireAssumed(); no thread or timer is
// involved.
//
// Accounting, per node name, updated incrementally (O(1) per event):
//
//   allocated = Σ EffectiveRequest() of the pods bound to the node that are
//                 not terminal (Succeeded/Failed); terminating pods still count
//             + Σ assumed placements on the node
//   and allocated["pods"] counts both, like kube-scheduler's NodeInfo.
//
// Pods may name a node before (or after) the cache holds its Node object:
// their resources still count under that name, so a node that (re)appears
// starts with the right allocation. Such a name is not a known node
// (NodeInfo::known() is false) and fails every fit.
//
// Snapshots share structure with the state: taking one is O(1); the first
// change after a snapshot copies the node table's pointers (O(nodes)), and
// every change to a node replaces that node's NodeInfo (copy-on-write), so a
// snapshot never sees a later change. How a name finds its NodeInfo fast
// (the name index, pipelined lookups, pooled NodeInfos) is node_index.h.
//
// Thread-safety: ClusterState is not thread-safe: one owner at a time, or a
// mutex around it (ClusterCache, cluster_cache.h, which the watch threads
// and the HTTP workers share). A ClusterSnapshot is immutable and may be
// read from any thread while the state moves on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/string_hash.h"
#include "extender/gpu_ledger.h"
#include "extender/node_index.h"
#include "extender/queue_gate.h"
#include "extender/workload_index.h"
#include "model/clock.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::extender {

// How many resources ClusterStateOptions::indexed_resources may name.
inline constexpr size_t kMaxIndexedResources = 4;

// One node name's view in the cache. The fields a lookup, a fit and a GPU
// score read for every candidate (name, node, indexed_*, gpu_shares,
// gpu_unheld, gpu_layout) come first, together: 128 bytes, two cache lines
// at a cache-line-aligned address, that ClusterSnapshot::FindEach prefetches.
struct alignas(64) NodeInfo {
  std::string name;
  // The Node as last seen; null while pods name a node the cache has no Node
  // object for (not yet, or no longer).
  std::shared_ptr<const Node> node;
  // allocatable and allocated of ClusterStateOptions::indexed_resources[i],
  // kept in step with the two Resources below: a fit over 5000 candidates
  // reads these in place instead of searching two heap-held entry lists per
  // node (ClusterSnapshot::IndexOf gives i).
  std::array<int64_t, kMaxIndexedResources> indexed_allocatable{};
  std::array<int64_t, kMaxIndexedResources> indexed_allocated{};
  // Shares its GPUs give (GPU sharing), kept in step with gpu_holds: whether
  // a whole-GPU pod's fit must look at single GPUs, read for every
  // candidate, so here among the hot fields.
  int32_t gpu_shares = 0;
  // Kept in step with `gpus` and `gpu_holds` below on every change: the
  // healthy GPUs no pod holds, and gpus->layout (null: topology unknown).
  // Hot, so a GPU score reads no gpu_holds (3 lines) nor NodeGpus (2 more).
  GpuMask gpu_unheld = 0;
  const TopologyGpuLayout* gpu_layout = nullptr;
  // node->allocatable, kept here too (empty when !known()): a fit reads it
  // for every candidate, and one pointer less per node counts at 5000 nodes.
  Resources allocatable;
  // Requests of the counted pods and placements, plus "pods" = their number.
  Resources allocated;
  int32_t bound_pods = 0;    // bound, non-terminal pods counted
  int32_t assumed_pods = 0;  // assumed placements counted
  // The node's GPUs (gpu_ledger.h; null: none told apart, no topology) and
  // what the counted pods and placements hold of them, by their
  // muster.io/gpu-ids and muster.io/gpu-shares.
  std::shared_ptr<const NodeGpus> gpus;
  GpuHolds gpu_holds;

  bool known() const { return node != nullptr; }
  // Asks for the fields every candidate's lookup, fit and GPU score read,
  // which the layout keeps together from `name` to the end of gpu_layout:
  // two cache lines (NodeInfo is cache-line aligned). NodeIndex::FindEach
  // calls it.
  void PrefetchHotFields() const {
    static_assert(alignof(NodeInfo) >= 64);
    internal::PrefetchLine(&name);
    internal::PrefetchLine(reinterpret_cast<const char*>(&gpu_layout + 1) - 1);
  }
  const NodeGpus& Gpus() const {
    static const NodeGpus kNone;
    return gpus != nullptr ? *gpus : kNone;
  }
  // FreeGpus of this node's GPUs: the healthy ones no pod holds, but for
  // those `own` holds (a retried bind's reservation, free to its pod). Reads
  // gpu_unheld, and gpu_holds only for a credit.
  GpuMask UnheldGpus(const GpuHolding& own = {}) const {
    return own.empty() ? gpu_unheld : FreeGpus(Gpus(), gpu_holds, own);
  }
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
  GpuHolding gpus;       // the GPUs it holds there, whole or shared, when known
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
  std::string group;         // "namespace/podgroup" of a gang member, "" otherwise
  // The group is Volcano's PodGroup of one for a plain pod of a served
  // scheduler (Pod::ImplicitGroupName): no API object, derived from the pod.
  bool implicit_group = false;
  // Its GPUs by its muster.io/gpu-ids or muster.io/gpu-shares (empty: none,
  // or unreadable).
  GpuHolding gpus;
  // What it asks of GPUs (GpuDemandOf), for bind; `gpu_problem` says why
  // that does not read ("" when it does).
  GpuDemand gpu_demand;
  std::string gpu_problem;
  // gang::Evictable(pod) (conformance): false for kube-system and
  // system-critical pods, which /preempt never agrees to evict.
  bool evictable = true;

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
  // Calls fn(i, FindNode(names[i])) for every name, in order: the same
  // answers, several times faster for the thousands of candidates of a
  // filter or prioritize (pipelined with prefetches, NodeIndex::FindEach).
  // fn should do its reads of the NodeInfo right there, while it is cached.
  template <typename Fn>
  void FindEach(std::span<const std::string_view> names, Fn&& fn) const {
    if (index_ == nullptr) {
      for (size_t i = 0; i < names.size(); ++i) fn(i, static_cast<const NodeInfo*>(nullptr));
      return;
    }
    index_->FindEach(names, *slots_, fn);
  }
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
  // Counts the changes made to the nodes and pods; equal generations mean
  // equal content (workloads().generation() counts PodGroups and Queues).
  uint64_t generation() const { return generation_; }
  // Where the pod the snapshot was taken for (Snapshot(pod_uid)) holds
  // resources already, if anywhere: a retried filter or bind credits it back.
  const std::optional<Placement>& pod_placement() const { return pod_placement_; }
  // The PodGroups and Queues at the time of the snapshot (gang, queue steps).
  const WorkloadView& workloads() const { return workloads_; }

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
  WorkloadView workloads_;
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
  // GPU topologies of nodes without the muster.io/gpu-topology annotation,
  // by GPU model (gpu_ledger.h).
  GpuProfiles gpu_profiles;
  // The schedulerNames muster's profile serves: their pods naming no
  // PodGroup are each in Volcano's PodGroup of one (ImplicitPodGroup,
  // workload_index.h) and so in a queue. Pods of other schedulers are in
  // none.
  std::vector<std::string> gang_schedulers = {std::string(kVolcanoSchedulerName)};
};

class ClusterState {
 public:
  // `clock` must outlive the state.
  explicit ClusterState(const Clock& clock, ClusterStateOptions options = {});
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // ---- watch events. Idempotent: replaying an event changes nothing.
  // A node update that changes only its resourceVersion and heartbeat times
  // is dropped: the cached Node and the generation stay.
  void UpsertNode(Node node);
  void DeleteNode(std::string_view name);
  // Pods are keyed by metadata.uid; a pod without one is ignored (the API
  // server always sets it).
  void UpsertPod(const Pod& pod);
  void DeletePod(std::string_view uid);
  // PodGroups (by namespace/name) and Queues (by name): no accounting, kept
  // for the gang and queue steps.
  WorkloadIndex& workloads() { return workloads_; }
  const WorkloadIndex& workloads() const { return workloads_; }

  // ---- the queue gate of pods no gang pass releases (queue_gate.h).
  QueueGate& queue_gate() { return queue_gate_; }
  const QueueGate& queue_gate() const { return queue_gate_; }
  const std::vector<std::string>& gang_schedulers() const { return options_.gang_schedulers; }

  // ---- gang members (the gang controller's input).
  // The pods naming a PodGroup (Pod::GroupName()), and those in an implicit
  // one (PodRecord::implicit_group), by uid; keyed by "namespace/podgroup".
  // Whole but for their status, of which only the phase is kept: nothing
  // reads a member's conditions or container statuses (the gang controller
  // reads the phase, extender/gang_inputs.cc and gang/gang.cc), and they were
  // ~0.7 KB of every member. Kept from the first sight of a pod to its
  // deletion, finished ones included (the PodGroup's counts need them).
  using GangPods = std::map<std::string, std::shared_ptr<const Pod>, std::less<>>;
  struct GangMembers {
    GangPods pods;
    // gang_generation() at the last change of a member (added, updated,
    // removed) or of a member's reservation (assumed, moved, dropped,
    // expired): the gang controller reads nothing else of a gang but its
    // PodGroup, so a gang whose version and PodGroup are the same as at the
    // last pass need not be read again (extender/gang_inputs.h, BuiltGangs).
    uint64_t version = 0;
  };
  const std::map<std::string, GangMembers, std::less<>>& gang_pods() const { return gang_pods_; }
  // Counts every change to gang_pods(), gates and annotations included.
  uint64_t gang_generation() const { return gang_generation_; }
  // The whole-gang placement bind persists in the Binding of each member
  // (muster.io/gang-plan), set by the gang controller with the reservation.
  // An empty `plan_json` erases it; so does the deletion of the gang's last
  // pod (a gang that left the cache keeps no plan).
  void SetGangPlan(std::string_view group, std::string plan_json);
  // Null when none.
  const std::string* GangPlanOf(std::string_view group) const;

  // ---- reservations (bind, gang).
  // Counts `request` (plus one "pods") on `node` for the pod until it is seen
  // bound, terminal or deleted, Forget()-ten or expired `ttl` (default
  // ClusterStateOptions::assume_ttl) after this call. Expires stale
  // placements first. REQUIRES: pod_uid and node non-empty.
  // `gpus`: the GPUs of the node it takes (bind's choice, whole or shared),
  // empty when none or not chosen.
  AssumeResult Assume(std::string_view pod_uid, std::string_view node, const Resources& request,
                      std::optional<Duration> ttl = std::nullopt, GpuHolding gpus = {});
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
  // Calls fn(const PodRecord&) for every pod, in no order.
  template <typename Fn>
  void ForEachPod(Fn&& fn) const {
    for (const auto& [uid, pod] : pods_) fn(pod);
  }
  std::optional<Placement> PlacementOf(std::string_view uid) const;
  size_t node_count() const { return known_nodes_; }
  // The injected clock's time.
  Time now() const { return clock_.Now(); }
  size_t pod_count() const { return pods_.size(); }
  size_t assumed_count() const { return assumed_.size(); }
  uint64_t generation() const { return generation_; }
  // Known nodes by where their GPU topology came from (GpuTopologySource).
  const std::array<size_t, kGpuTopologySources>& gpu_topology_nodes() const {
    return gpu_topology_nodes_;
  }

  // Recomputes every node's allocation from the pods and placements and
  // compares it with the incremental accounting (GPU holds included).
  // O(pods + nodes): for tests and debugging. Internal (naming the first node that differs) on
  // mismatch.
  Status CheckAccounting() const;

 private:
  using Slots = ClusterSnapshot::Slots;
  using Index = ClusterSnapshot::Index;
  struct Assumption {
    std::string node;
    Resources resources;  // "pods": 1 included
    Time expires;
    GpuHolding gpus;
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
  // Sets the fields kept in step with others (indexed_*, gpu_unheld,
  // gpu_layout) from them.
  void RefreshDerived(NodeInfo& info) const;
  // Adds (sign +1) or removes (sign -1) a contribution on `node`.
  void Account(std::string_view node, const Resources& resources, int sign, bool assumed,
               const GpuHolding& gpus);
  // Resolves the node's GPU topology when what it is read from changed
  // since `before` (null: the node is new).
  void ResolveGpus(const Node* before, NodeInfo& info);
  void DropAssumption(std::string_view uid);
  void IndexGangPod(const Pod& pod, const std::string& old_group);
  void UnindexGangPod(std::string_view uid, const std::string& group);
  // Bumps the version of the gang the pod is a member of (GangMembers).
  void TouchGang(std::string_view uid);

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
  WorkloadIndex workloads_;
  QueueGate queue_gate_;
  std::unordered_map<std::string, PodRecord, base::StringHash, std::equal_to<>> pods_;
  std::unordered_map<std::string, Assumption, base::StringHash, std::equal_to<>> assumed_;
  std::set<std::pair<Time, std::string>> expiry_;  // (expires, uid) of assumed_
  std::map<std::string, GangMembers, std::less<>> gang_pods_;
  uint64_t gang_generation_ = 0;
  std::map<std::string, std::string, std::less<>> gang_plans_;
  GpuTopologies gpu_topologies_;
  std::array<size_t, kGpuTopologySources> gpu_topology_nodes_{};
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

// Cluster-wide GPU use, for the muster_gpus* gauges: the nvidia.com/gpu of
// known nodes, requested (by counted pods and placements) or free, and how
// fragmented the free ones are.
struct GpuUsage {
  // In thousandths of a GPU (a shared GPU's sharers count their fractions).
  int64_t allocated = 0;
  int64_t free = 0;
  // Free GPUs that no other free GPU of their node is joined to by the
  // node's best link class (topology::TopologyIndex::Stranded): a multi-GPU
  // pod cannot use them well. 0 on nodes whose topology is unknown.
  int64_t stranded = 0;
  // GPU sharing: GPUs with sharers, those of them with compute left, and
  // the compute the sharers hold (thousandths).
  int64_t shared_gpus = 0;
  int64_t partly_used_gpus = 0;
  int64_t shared_compute = 0;
  // Nodes with GPUs by use: none requested, some, all.
  int64_t idle_nodes = 0;
  int64_t partial_nodes = 0;
  int64_t full_nodes = 0;

  // Adds one node (nothing for an unknown one or one without GPUs).
  void Add(const NodeInfo& node);
};

}  // namespace muster::extender
