#include "extender/cluster_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "gang/conformance.h"

namespace muster::extender {
namespace {

// What a bound pod holds of its node's GPUs by its annotations; nothing when
// they name none or cannot be read (the pod then holds a count of GPUs, not
// which).
GpuHolding GpusOf(const Pod& pod) {
  if (pod.spec.node_name.empty()) return {};
  std::string problem;
  GpuHolding holding = HoldingOf(pod.meta.annotations, &problem);
  if (!problem.empty()) spdlog::warn("pod {}: {}", pod.meta.Key(), problem);
  return holding;
}

PodRecord RecordOf(const Pod& pod, const std::vector<std::string>& gang_schedulers) {
  GroupRef group = GroupOfPod(pod, gang_schedulers);
  StatusOr<GpuDemand> demand = GpuDemandOf(pod);
  return PodRecord{.namespace_ = pod.meta.namespace_,
                   .name = pod.meta.name,
                   .node_name = pod.spec.node_name,
                   .request = pod.EffectiveRequest(),
                   .terminal = pod.IsTerminal(),
                   .terminating = pod.meta.deletion_timestamp.has_value(),
                   .group = std::move(group.key),
                   .implicit_group = group.implicit,
                   .gpus = GpusOf(pod),
                   .gpu_demand = demand.ok() ? *std::move(demand) : GpuDemand{},
                   .gpu_problem = demand.ok() ? std::string() : demand.status().message(),
                   .evictable = gang::Evictable(pod)};
}

// True when the two records hold the same resources on the same node.
bool SameContribution(const PodRecord& a, const PodRecord& b) {
  if (a.Counts() != b.Counts()) return false;
  if (!a.Counts()) return true;
  return a.node_name == b.node_name && a.request == b.request && a.gpus == b.gpus;
}

// True when `next` differs from `before` only in what kubelet (or kwok)
// renews on every status update and nothing muster decides on reads: the
// resourceVersion and the conditions' heartbeat times. Such an update keeps
// the cached Node and the cache's generation, so the gang controller plans
// no pass for it: a cluster of 5000 nodes sends several a second.
bool OnlyHeartbeat(const Node& before, const Node& next) {
  const ObjectMeta& a = before.meta;
  const ObjectMeta& b = next.meta;
  const bool same_meta = std::tie(a.name, a.uid, a.generation, a.deletion_timestamp, a.labels,
                                  a.annotations, a.owner_references, a.finalizers) ==
                         std::tie(b.name, b.uid, b.generation, b.deletion_timestamp, b.labels,
                                  b.annotations, b.owner_references, b.finalizers);
  auto same_condition = [](const Condition& x, const Condition& y) {
    return std::tie(x.type, x.status, x.reason, x.message, x.last_transition_time) ==
           std::tie(y.type, y.status, y.reason, y.message, y.last_transition_time);
  };
  return same_meta && before.unschedulable == next.unschedulable && before.taints == next.taints &&
         before.provider_id == next.provider_id && before.capacity == next.capacity &&
         before.allocatable == next.allocatable && before.addresses == next.addresses &&
         std::equal(before.conditions.begin(), before.conditions.end(), next.conditions.begin(),
                    next.conditions.end(), same_condition);
}

// The indexed resources: the first kMaxIndexedResources distinct non-empty names.
std::vector<std::string> IndexedResources(const std::vector<std::string>& wanted) {
  std::vector<std::string> out;
  for (const std::string& name : wanted) {
    if (name.empty() || std::find(out.begin(), out.end(), name) != out.end()) continue;
    if (out.size() == kMaxIndexedResources) break;
    out.push_back(name);
  }
  return out;
}

}  // namespace

std::string_view AssumeResultName(AssumeResult result) {
  switch (result) {
    case AssumeResult::kAssumed:
      return "assumed";
    case AssumeResult::kRefreshed:
      return "refreshed";
    case AssumeResult::kMoved:
      return "moved";
    case AssumeResult::kAlreadyBound:
      return "already_bound";
    case AssumeResult::kBoundElsewhere:
      return "bound_elsewhere";
  }
  return "unknown";
}

// ---- ClusterSnapshot ----

int ClusterSnapshot::IndexOf(std::string_view resource) const {
  if (indexed_resources_ == nullptr) return -1;
  const auto& names = *indexed_resources_;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == resource) return static_cast<int>(i);
  }
  return -1;
}

const NodeInfo* ClusterSnapshot::FindNode(std::string_view name) const {
  if (index_ == nullptr) return nullptr;
  const uint32_t slot = index_->Find(name, *slots_);
  return slot == NodeIndex::kNone ? nullptr : (*slots_)[slot].get();
}

ClusterState::ClusterState(const Clock& clock, ClusterStateOptions options)
    : clock_(clock),
      options_(options),
      indexed_resources_(std::make_shared<const std::vector<std::string>>(
          IndexedResources(options_.indexed_resources))),
      slots_(std::make_shared<Slots>()),
      index_(std::make_shared<Index>()),
      gpu_topologies_(options_.gpu_profiles) {}

// ---- node table ----

ClusterState::Slots& ClusterState::MutableSlots() {
  if (slots_shared_) {
    slots_ = std::make_shared<Slots>(*slots_);  // pointers only: O(nodes)
    slots_shared_ = false;
  }
  return *slots_;
}

ClusterState::Index& ClusterState::MutableIndex() {
  if (index_shared_) {
    index_ = std::make_shared<Index>(*index_);
    index_shared_ = false;
  }
  return *index_;
}

uint32_t ClusterState::SlotOf(std::string_view name) const { return index_->Find(name, *slots_); }

uint32_t ClusterState::SlotOrCreate(std::string_view name) {
  uint32_t slot = SlotOf(name);
  if (slot != kNoSlot) return slot;
  std::shared_ptr<NodeInfo> info = NewNodeInfo(NodeInfo{.name = std::string(name)});
  Slots& slots = MutableSlots();
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(slots.size());
    slots.push_back(std::move(info));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots[slot] = std::move(info);
  }
  MutableIndex().Insert(name, slot);
  return slot;
}

template <typename Fn>
void ClusterState::ChangeNode(uint32_t slot, Fn&& change) {
  Slots& slots = MutableSlots();
  // Copy-on-write: snapshots keep the NodeInfo they saw.
  std::shared_ptr<NodeInfo> info = NewNodeInfo(*slots[slot]);
  change(*info);
  RefreshDerived(*info);
  slots[slot] = std::move(info);
  ++generation_;
  FreeSlotIfEmpty(slot);
}

void ClusterState::RefreshDerived(NodeInfo& info) const {
  const std::vector<std::string>& names = *indexed_resources_;
  for (size_t i = 0; i < names.size(); ++i) {
    info.indexed_allocatable[i] = info.allocatable.Get(names[i]);
    info.indexed_allocated[i] = info.allocated.Get(names[i]);
  }
  info.gpu_unheld = info.gpus != nullptr ? FreeGpus(*info.gpus, info.gpu_holds, {}) : 0;
  info.gpu_layout = info.gpus != nullptr ? info.gpus->layout.get() : nullptr;
}

void ClusterState::FreeSlotIfEmpty(uint32_t slot) {
  const NodeInfo& info = *(*slots_)[slot];
  if (info.known() || info.bound_pods != 0 || info.assumed_pods != 0) return;
  MutableIndex().Erase(info.name, *slots_);
  MutableSlots()[slot] = nullptr;
  free_slots_.push_back(slot);
}

void ClusterState::Account(std::string_view node, const Resources& resources, int sign,
                           bool assumed, const GpuHolding& gpus) {
  ChangeNode(SlotOrCreate(node), [&](NodeInfo& info) {
    if (sign > 0) {
      info.allocated += resources;
    } else {
      info.allocated -= resources;
    }
    (assumed ? info.assumed_pods : info.bound_pods) += sign;
    info.gpu_holds.Add(gpus, sign);
    if (!gpus.slices.empty()) {
      info.gpu_shares = 0;
      for (const GpuCardUse& use : info.gpu_holds.uses) info.gpu_shares += use.sharers;
    }
  });
}

void ClusterState::ResolveGpus(const Node* before, NodeInfo& info) {
  if (before != nullptr && GpuTopologies::SameInputs(*before, *info.node)) return;
  if (before != nullptr) --gpu_topology_nodes_[static_cast<size_t>(info.Gpus().source)];
  auto gpus = std::make_shared<const NodeGpus>(gpu_topologies_.Resolve(*info.node));
  ++gpu_topology_nodes_[static_cast<size_t>(gpus->source)];
  if (gpus->source == GpuTopologySource::kInvalid) {
    spdlog::warn("node {}: GPU topology unknown, GPUs are counted but not chosen: {}", info.name,
                 gpus->problem);
  }
  if (!gpus->vgpu_problem.empty()) {
    spdlog::warn("node {}: vGPU registration not used: {}", info.name, gpus->vgpu_problem);
  }
  const bool nothing = gpus->source == GpuTopologySource::kNone && gpus->cards == nullptr &&
                       gpus->vgpu_problem.empty();
  info.gpus = nothing ? nullptr : std::move(gpus);
}

// ---- events ----

void ClusterState::UpsertNode(Node node) {
  if (const uint32_t known = SlotOf(node.meta.name); known != kNoSlot) {
    const std::shared_ptr<const Node>& before = (*slots_)[known]->node;
    if (before != nullptr && OnlyHeartbeat(*before, node)) return;
  }
  const uint32_t slot = SlotOrCreate(node.meta.name);
  auto shared = std::make_shared<const Node>(std::move(node));
  ChangeNode(slot, [&](NodeInfo& info) {
    const std::shared_ptr<const Node> before = std::move(info.node);
    if (before == nullptr) ++known_nodes_;
    info.allocatable = shared->allocatable;
    info.node = std::move(shared);
    ResolveGpus(before.get(), info);
  });
}

void ClusterState::DeleteNode(std::string_view name) {
  const uint32_t slot = SlotOf(name);
  if (slot == kNoSlot || !(*slots_)[slot]->known()) return;
  // The pods still bound to it keep counting under its name.
  ChangeNode(slot, [&](NodeInfo& info) {
    info.node = nullptr;
    info.allocatable = Resources();
    --gpu_topology_nodes_[static_cast<size_t>(info.Gpus().source)];
    info.gpus = nullptr;
    --known_nodes_;
  });
}

void ClusterState::UpsertPod(const Pod& pod) {
  if (pod.meta.uid.empty()) return;
  PodRecord next = RecordOf(pod, options_.gang_schedulers);
  auto [it, inserted] = pods_.try_emplace(pod.meta.uid);
  PodRecord& current = it->second;
  if (inserted || !SameContribution(current, next)) {
    if (!inserted && current.Counts()) {
      Account(current.node_name, WithPodSlot(current.request), -1, false, current.gpus);
    }
    if (next.Counts()) Account(next.node_name, WithPodSlot(next.request), +1, false, next.gpus);
  }
  const bool changed = inserted || current != next;
  const std::string old_group = inserted ? std::string() : current.group;
  current = std::move(next);
  if (!current.group.empty() || !old_group.empty()) IndexGangPod(pod, old_group);
  // A bound or finished pod holds what its record says: the reservation made
  // for it has done its job.
  if (!current.node_name.empty() || current.terminal) DropAssumption(pod.meta.uid);
  if (changed) ++generation_;
}

void ClusterState::DeletePod(std::string_view uid) {
  queue_gate_.Forget(uid);
  auto it = pods_.find(uid);
  if (it != pods_.end()) {
    if (it->second.Counts()) {
      Account(it->second.node_name, WithPodSlot(it->second.request), -1, false, it->second.gpus);
    }
    if (!it->second.group.empty()) UnindexGangPod(uid, it->second.group);
    pods_.erase(it);
    ++generation_;
  }
  DropAssumption(uid);
}

// ---- gang members ----

void ClusterState::IndexGangPod(const Pod& pod, const std::string& old_group) {
  const std::string& group = pods_.at(pod.meta.uid).group;
  if (!old_group.empty() && old_group != group) UnindexGangPod(pod.meta.uid, old_group);
  ++gang_generation_;
  if (group.empty()) return;
  GangMembers& gang = gang_pods_[group];
  gang.pods[pod.meta.uid] = std::make_shared<const Pod>(
      Pod{.meta = pod.meta, .spec = pod.spec, .status = {.phase = pod.status.phase}});
  gang.version = gang_generation_;
}

void ClusterState::UnindexGangPod(std::string_view uid, const std::string& group) {
  auto it = gang_pods_.find(group);
  if (it == gang_pods_.end()) return;
  ++gang_generation_;
  GangPods& pods = it->second.pods;
  if (auto member = pods.find(uid); member != pods.end()) pods.erase(member);
  it->second.version = gang_generation_;
  if (pods.empty()) {
    // The gang is gone: its plan would otherwise outlive it (and be handed
    // to a later gang of the same name).
    gang_pods_.erase(it);
    gang_plans_.erase(group);
  }
}

void ClusterState::TouchGang(std::string_view uid) {
  const PodRecord* pod = FindPod(uid);
  if (pod == nullptr || pod->group.empty()) return;
  if (auto it = gang_pods_.find(pod->group); it != gang_pods_.end()) {
    it->second.version = ++gang_generation_;
  }
}

void ClusterState::SetGangPlan(std::string_view group, std::string plan_json) {
  if (plan_json.empty()) {
    if (auto it = gang_plans_.find(group); it != gang_plans_.end()) gang_plans_.erase(it);
    return;
  }
  gang_plans_.insert_or_assign(std::string(group), std::move(plan_json));
}

const std::string* ClusterState::GangPlanOf(std::string_view group) const {
  auto it = gang_plans_.find(group);
  return it == gang_plans_.end() ? nullptr : &it->second;
}

// ---- reservations ----

AssumeResult ClusterState::Assume(std::string_view pod_uid, std::string_view node,
                                  const Resources& request, std::optional<Duration> ttl,
                                  GpuHolding gpus) {
  ExpireAssumed();
  if (const PodRecord* pod = FindPod(pod_uid); pod != nullptr && pod->Counts()) {
    return pod->node_name == node ? AssumeResult::kAlreadyBound : AssumeResult::kBoundElsewhere;
  }
  AssumeResult result = AssumeResult::kAssumed;
  if (auto it = assumed_.find(pod_uid); it != assumed_.end()) {
    result = it->second.node == node ? AssumeResult::kRefreshed : AssumeResult::kMoved;
    DropAssumption(pod_uid);
  }
  Assumption assumption{.node = std::string(node),
                        .resources = WithPodSlot(request),
                        .expires = clock_.Now() + ttl.value_or(options_.assume_ttl),
                        .gpus = std::move(gpus)};
  Account(node, assumption.resources, +1, true, assumption.gpus);
  expiry_.emplace(assumption.expires, std::string(pod_uid));
  assumed_.emplace(std::string(pod_uid), std::move(assumption));
  TouchGang(pod_uid);
  return result;
}

void ClusterState::DropAssumption(std::string_view uid) {
  auto it = assumed_.find(uid);
  if (it == assumed_.end()) return;
  Account(it->second.node, it->second.resources, -1, true, it->second.gpus);
  expiry_.erase({it->second.expires, it->first});
  assumed_.erase(it);
  TouchGang(uid);
}

bool ClusterState::Forget(std::string_view pod_uid, std::string_view only_on_node) {
  auto it = assumed_.find(pod_uid);
  if (it == assumed_.end()) return false;
  if (!only_on_node.empty() && it->second.node != only_on_node) return false;
  DropAssumption(pod_uid);
  return true;
}

std::vector<std::string> ClusterState::ExpireAssumed() {
  std::vector<std::string> expired;
  const Time now = clock_.Now();
  while (!expiry_.empty() && expiry_.begin()->first <= now) {
    std::string uid = expiry_.begin()->second;
    DropAssumption(uid);
    expired.push_back(std::move(uid));
  }
  return expired;
}

// ---- reads ----

ClusterSnapshot ClusterState::Snapshot(std::string_view pod_uid) {
  ExpireAssumed();
  slots_shared_ = true;
  index_shared_ = true;
  ClusterSnapshot snapshot;
  snapshot.slots_ = slots_;
  snapshot.index_ = index_;
  snapshot.indexed_resources_ = indexed_resources_;
  snapshot.known_nodes_ = known_nodes_;
  snapshot.time_ = clock_.Now();
  snapshot.generation_ = generation_;
  if (!pod_uid.empty()) snapshot.pod_placement_ = PlacementOf(pod_uid);
  snapshot.workloads_ = workloads_.View();
  return snapshot;
}

const NodeInfo* ClusterState::FindNode(std::string_view name) const {
  const uint32_t slot = SlotOf(name);
  return slot == kNoSlot ? nullptr : (*slots_)[slot].get();
}

const PodRecord* ClusterState::FindPod(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

std::optional<Placement> ClusterState::PlacementOf(std::string_view uid) const {
  if (auto it = assumed_.find(uid); it != assumed_.end()) {
    return Placement{.node = it->second.node,
                     .resources = it->second.resources,
                     .assumed = true,
                     .gpus = it->second.gpus};
  }
  if (const PodRecord* pod = FindPod(uid); pod != nullptr && pod->Counts()) {
    return Placement{
        .node = pod->node_name, .resources = WithPodSlot(pod->request), .gpus = pod->gpus};
  }
  return std::nullopt;
}

Status ClusterState::CheckAccounting() const {
  struct Expected {
    Resources allocated;
    int32_t bound = 0;
    int32_t assumed = 0;
    GpuHolds gpus;
  };
  std::map<std::string, Expected> expected;
  for (const auto& [uid, pod] : pods_) {
    if (!pod.Counts()) continue;
    Expected& e = expected[pod.node_name];
    e.allocated += WithPodSlot(pod.request);
    ++e.bound;
    e.gpus.Add(pod.gpus, +1);
  }
  for (const auto& [uid, a] : assumed_) {
    Expected& e = expected[a.node];
    e.allocated += a.resources;
    ++e.assumed;
    e.gpus.Add(a.gpus, +1);
  }
  size_t entries = 0;
  for (const auto& slot : *slots_) {
    if (slot == nullptr) continue;
    ++entries;
    const Expected e = expected.count(slot->name) ? expected[slot->name] : Expected{};
    NodeInfo refreshed = *slot;
    RefreshDerived(refreshed);
    if (refreshed.indexed_allocatable != slot->indexed_allocatable ||
        refreshed.indexed_allocated != slot->indexed_allocated ||
        refreshed.gpu_unheld != slot->gpu_unheld || refreshed.gpu_layout != slot->gpu_layout) {
      return InternalError("node " + slot->name + ": indexed amounts or GPU summary out of step");
    }
    int32_t shares = 0;
    for (const GpuCardUse& use : slot->gpu_holds.uses) shares += use.sharers;
    if (slot->gpu_shares != shares) {
      return InternalError("node " + slot->name + ": " + std::to_string(slot->gpu_shares) +
                           " GPU shares counted, " + std::to_string(shares) + " held");
    }
    if (slot->gpu_holds != e.gpus) {
      return InternalError("node " + slot->name + ": GPUs held " +
                           FormatGpuIds(slot->gpu_holds.Held()) + ", recomputed " +
                           FormatGpuIds(e.gpus.Held()));
    }
    if (!(slot->allocated == e.allocated) || slot->bound_pods != e.bound ||
        slot->assumed_pods != e.assumed) {
      return InternalError("node " + slot->name + ": allocated " + slot->allocated.ToString() +
                           " (" + std::to_string(slot->bound_pods) + " bound, " +
                           std::to_string(slot->assumed_pods) + " assumed), recomputed " +
                           e.allocated.ToString() + " (" + std::to_string(e.bound) + " bound, " +
                           std::to_string(e.assumed) + " assumed)");
    }
  }
  for (const auto& [name, e] : expected) {
    if (SlotOf(name) == kNoSlot) return InternalError("node " + name + ": holds pods, no entry");
  }
  if (index_->size() != entries) return InternalError("node index and table differ in size");
  return Status::Ok();
}

void GpuUsage::Add(const NodeInfo& node) {
  // A node that is gone (its pods not yet collected) has no GPUs to report.
  if (!node.known()) return;
  for (const GpuCardUse& use : node.gpu_holds.uses) {
    if (use.sharers == 0) continue;
    ++shared_gpus;
    if (use.compute < kGpuCompute) ++partly_used_gpus;
    shared_compute += use.compute;
  }
  const int64_t capacity = node.allocatable.Get(kNvidiaGpu);
  if (capacity <= 0) return;
  const int64_t free = std::clamp<int64_t>(node.Free(kNvidiaGpu), 0, capacity);
  allocated += capacity - free;
  this->free += free;
  if (const topology::TopologyIndex* index = node.Gpus().index(); index != nullptr) {
    // Pods bound by count only (no muster.io/gpu-ids) hold GPUs the mask
    // cannot name: never count more stranded GPUs than are free.
    const GpuMask unheld = index->healthy() & ~node.gpu_holds.Held();
    stranded += std::min<int64_t>(index->Stranded(unheld), free / kMilliPerGpu);
  }
  if (free == capacity) {
    ++idle_nodes;
  } else if (free == 0) {
    ++full_nodes;
  } else {
    ++partial_nodes;
  }
}

}  // namespace muster::extender
