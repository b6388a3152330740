#include "extender/gang_inputs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "extender/queue_step.h"
#include "gang/conformance.h"
#include "gang/feasibility.h"
#include "kube/codec/volcano_codec.h"

namespace muster::extender {
namespace {

using gang::MemberState;

gang::Member MemberOf(const std::shared_ptr<const Pod>& pod, const ClusterState& state) {
  // The cache read the pod's request, GPU demand and GPUs when it indexed
  // the pod (it always has: the gang index and the pods change together).
  const PodRecord* record = state.FindPod(pod->meta.uid);
  gang::Member m;
  if (record != nullptr) {
    m = gang::Member{.pod = pod,
                     .request = record->request,
                     .gpu_demand = record->gpu_demand,
                     .gpu_problem = record->gpu_problem,
                     .gpus = record->gpus};
  } else {
    m = gang::Member::Of(pod);
    m.gpus = HoldingOf(pod->meta.annotations);
  }
  m.terminating = pod->meta.deletion_timestamp.has_value();
  if (pod->status.phase == "Succeeded" || pod->status.phase == "Failed") {
    m.state = pod->status.phase == "Succeeded" ? MemberState::kSucceeded : MemberState::kFailed;
    m.node = pod->spec.node_name;
  } else if (!pod->spec.node_name.empty()) {
    m.state = MemberState::kBound;
    m.node = pod->spec.node_name;
  } else if (std::optional<Placement> at = state.PlacementOf(pod->meta.uid); at && at->assumed) {
    m.state = MemberState::kReserved;
    m.node = at->node;
  }
  return m;
}

// The placement a bound member's Binding persisted, if any member has one.
std::map<std::string, std::string> PersistedPlan(const std::vector<gang::Member>& members) {
  for (const gang::Member& m : members) {
    if (m.state == MemberState::kPending || m.state == MemberState::kReserved) continue;
    auto it = m.pod->meta.annotations.find(std::string(kAnnotationGangPlan));
    if (it == m.pod->meta.annotations.end()) continue;
    StatusOr<GangPlacement> plan = kube::DecodeGangPlacement(it->second);
    if (plan.ok()) return plan->members;
    spdlog::warn("gang: pod {}: {}", m.pod->meta.Key(), plan.status().ToString());
  }
  return {};
}

gang::Gang GangOf(const PodGroup& group, const ClusterState::GangPods* pods,
                  const ClusterState& state) {
  gang::Gang g{.key = group.GangKey(),
               .spec = group.spec,
               .created = group.meta.creation_timestamp,
               .phase = group.status.phase};
  std::vector<gang::Member> members;
  if (pods != nullptr) {
    members.reserve(pods->size());
    for (const auto& [uid, pod] : *pods) {
      members.push_back(MemberOf(pod, state));
      g.priority = std::max(g.priority, pod->spec.priority.value_or(0));
    }
  }
  std::sort(members.begin(), members.end(), [](const gang::Member& a, const gang::Member& b) {
    return a.pod->meta.name < b.pod->meta.name;
  });
  g.members = std::move(members);
  // Hints matter only to members still to place: most passes see none, and
  // decoding a 100-member plan per gang per pass would be wasted.
  if (std::ranges::find(g.members, MemberState::kPending, &gang::Member::state) ==
      g.members.end()) {
    return g;
  }
  const std::map<std::string, std::string> plan = PersistedPlan(g.members.all());
  for (gang::Member& m : g.members.Edit()) {
    if (m.state != MemberState::kPending) continue;
    if (auto it = plan.find(m.pod->meta.name); it != plan.end()) m.hint = it->second;
  }
  return g;
}

std::optional<gang::VictimCandidate> VictimOf(const gang::Gang& g) {
  // Conformance: a gang with a kube-system or system-critical member is
  // offered, but marked, so the pass can say why it was spared.
  gang::VictimCandidate v{
      .key = g.key, .priority = g.priority, .created = g.created, .evictable = gang::Evictable(g)};
  for (const gang::Member& m : g.members) {
    if (m.state != MemberState::kBound || m.terminating) continue;
    Resources held = WithPodSlot(m.request);
    v.gpus += held.milli_gpus();
    v.pods.push_back({.uid = m.pod->meta.uid,
                      .namespace_ = m.pod->meta.namespace_,
                      .name = m.pod->meta.name,
                      .node = m.node,
                      .request = std::move(held),
                      .gpus = m.gpus});
  }
  if (v.pods.empty()) return std::nullopt;
  v.holds = g.members.summary().bound_request;  // what the pods above request
  return v;
}

bool Fits(const NodeInfo* node, const Resources& need) {
  if (node == nullptr || !node->known()) return false;
  for (const auto& [resource, amount] : need.entries()) {
    if (amount > 0 && amount > node->Free(resource)) return false;
  }
  return true;
}

// True when every new assignment of `plan` still fits the state now, the
// plan's own members counted together.
bool StillFits(const ClusterState& state, const gang::GangPlan& plan) {
  std::map<std::string, Resources> need;
  for (const gang::Assignment& a : plan.reserve) {
    const PodRecord* pod = state.FindPod(a.pod_uid);
    if (pod == nullptr || !pod->node_name.empty() || pod->terminal || pod->terminating) {
      return false;
    }
    need[a.node] += WithPodSlot(pod->request);
  }
  for (const auto& [node, resources] : need) {
    if (!Fits(state.FindNode(node), resources)) return false;
  }
  return true;
}

std::string PlacementJson(const gang::GangPlan& plan, const PodGroup& group) {
  GangPlacement placement{.pod_group = group.meta.name};
  for (const gang::Assignment& a : plan.placement) placement.members[a.pod_name] = a.node;
  return kube::EncodeGangPlacement(placement);
}

bool Gated(const gang::Member& m) {
  return GangGateIndex(m.pod->spec.scheduling_gates).has_value();
}

// Whether the pass plans a pending member. A member of a gang of one whose
// pod carries no gate goes the usual way: filter fits it anywhere once its
// queue admits it (queue_gate.h), and the pass plans it only when the queue
// turned it away - then in queue order, like any gang.
// A waiting one is planned only while its queue takes new work, as filter
// would admit it: the other pods of its group (a ReplicaSet's) running in a
// queue since deleted or closed do not make room for it.
bool PassPlans(const gang::Gang& g, const gang::Member& m, const WaitingPods& waiting,
               const std::map<std::string, Queue, std::less<>>& queues) {
  if (g.spec.min_member > 1 || Gated(m)) return true;
  if (!waiting.contains(m.pod->meta.uid)) return false;
  const std::string name = QueueName(g.spec);
  const auto queue = queues.find(name);
  return queue == queues.end() ? name == kDefaultQueue : queue->second.IsOpen();
}

// One walk over the nodes: the free capacity of the schedulable ones (what
// queues share) and, when `with_view`, the view the gang pass plans on.
void ScanNodes(const ClusterSnapshot& snapshot, bool with_view, GangInputs& in) {
  if (with_view) in.view.nodes.reserve(snapshot.node_count());
  snapshot.ForEachNode([&](const NodeInfo& info) {
    if (!info.known()) return;
    const bool schedulable = info.node->IsReady() && !info.node->unschedulable;
    Resources free = info.allocatable - info.allocated;
    if (schedulable) in.free += free.ClampedAtZero();
    if (with_view) {
      in.view.nodes.push_back(gang::NodeView{.node = info.node,
                                             .free = std::move(free),
                                             .schedulable = schedulable,
                                             .gpu_layout = info.Gpus().layout,
                                             .free_gpus = info.UnheldGpus(),
                                             .gpu_cards = info.Gpus().cards,
                                             .gpu_uses = info.gpu_holds.uses});
    }
  });
  std::sort(in.view.nodes.begin(), in.view.nodes.end(),
            [](const gang::NodeView& a, const gang::NodeView& b) { return a.name() < b.name(); });
}

// Whether the pass needs the nodes' view for `g`: members to place or
// reservations to keep. Admission (Pending -> Inqueue) weighs
// spec.minResources against the free capacity, before any pod exists: the
// reconciler creates a Job's pods only after it.
bool NeedsView(const gang::Gang& g, const WaitingPods& waiting,
               const std::map<std::string, Queue, std::less<>>& queues) {
  const bool awaits_admission = gang::AwaitsAdmission(g) && g.spec.min_resources.has_value();
  const gang::MemberSummary& s = g.members.summary();
  if (awaits_admission || s.reserved > 0) return true;
  if (s.pending == 0) return false;  // no member to walk for
  return std::any_of(g.members.begin(), g.members.end(), [&](const auto& m) {
    return m.state == MemberState::kPending && PassPlans(g, m, waiting, queues);
  });
}

// Whether the pass would change nothing for `g`: a member is bound or
// finished (so the gang is past admission, and what it holds is in the view
// already), none is reserved (no reservation to expire) and none is left to
// plan. Most gangs of a busy cluster are so (at 5000 running Jobs, copying
// them for the pass was a tenth of it).
bool Settled(const gang::Gang& g, const WaitingPods& waiting,
             const std::map<std::string, Queue, std::less<>>& queues) {
  const gang::MemberSummary& s = g.members.summary();
  if (s.reserved > 0 || s.Scheduled() == 0) return false;
  if (s.awaiting == 0) return true;  // no member to walk for
  return std::ranges::none_of(g.members, [&](const gang::Member& m) {
    return gang::AwaitsPlacement(m) && PassPlans(g, m, waiting, queues);
  });
}

// What the controller remembers of `g`: its reservation's last progress, a
// preemption in flight, and its members it evicted (terminating already).
// True when it marked a member terminating.
bool Remember(const GangRecords& records, const std::map<std::string, Time>& evicted, Time now,
              gang::Gang& g) {
  if (auto it = records.find(g.key); it != records.end()) {
    g.reserved_since = it->second.reserved_since;
    g.preempting = it->second.preempting_until && *it->second.preempting_until > now;
  }
  bool marked = false;
  if (evicted.empty()) return marked;
  for (size_t i = 0; i < g.members.size(); ++i) {
    const gang::Member& m = g.members[i];
    const auto it = evicted.find(m.pod->meta.uid);
    if (it != evicted.end() && it->second > now && m.state == MemberState::kBound &&
        !m.terminating) {
      g.members.Edit()[i].terminating = true;  // this gang's own copy from here on
      marked = true;
    }
  }
  return marked;
}

// Volcano's PodGroup of one of `pods` (ImplicitPodGroup of the first),
// created with the earliest of them.
PodGroup ImplicitGroupOf(const ClusterState::GangPods& pods) {
  PodGroup group = ImplicitPodGroup(*pods.begin()->second);
  for (const auto& [uid, pod] : pods) {
    group.meta.creation_timestamp =
        std::min(group.meta.creation_timestamp, pod->meta.creation_timestamp);
  }
  return group;
}

// Whether `built` is still `group`'s gang: the same object (uid and
// resourceVersion, when the API gave them; else equal) over the same
// members. An implicit group is derived from its members alone.
bool StillBuilt(const BuiltGang& built, const PodGroup& group, bool implicit, uint64_t version) {
  if (built.version != version || built.implicit != implicit) return false;
  if (implicit) return true;
  const ObjectMeta& was = built.group->meta;
  if (!was.resource_version.empty() && !group.meta.resource_version.empty()) {
    return was.uid == group.meta.uid && was.resource_version == group.meta.resource_version;
  }
  return *built.group == group;
}

// Brings the gang `key` up to date: `group` its PodGroup (null: implicit,
// derived from `pods`), `pods` its members (null: none yet).
void Read(const ClusterState& state, const std::string& key, const PodGroup* group,
          const ClusterState::GangMembers* pods, BuiltGangs& built, GangRead& read) {
  const uint64_t version = pods == nullptr ? 0 : pods->version;
  BuiltGang& b = built.gangs[key];
  const bool implicit = group == nullptr;
  if (b.last_read == 0 || !StillBuilt(b, implicit ? *b.group : *group, implicit, version)) {
    b.group = std::make_shared<const PodGroup>(implicit ? ImplicitGroupOf(pods->pods) : *group);
    b.implicit = implicit;
    b.version = version;
    b.gang = GangOf(*b.group, pods == nullptr ? nullptr : &pods->pods, state);
    b.victim = VictimOf(b.gang);
  }
  b.last_read = built.reads;
  read.gangs.push_back(&b);
}

// Whether `members` is a PodGroup of one of Volcano's: plain pods of a
// served scheduler, their group named by no PodGroup object.
bool Implicit(const ClusterState& state, const ClusterState::GangMembers& members) {
  if (members.pods.empty()) return false;
  // (The cache's record says which, as it indexed the pod: no annotation
  // read again per gang and pass.)
  const PodRecord* first = state.FindPod(members.pods.begin()->first);
  return first != nullptr && first->implicit_group;
}

// Adds the members of `g` placed (reserved or bound) or finished that are
// in `tracked` (sorted uids) to `placed`.
void AddTrackedPlaced(const gang::Gang& g, const std::vector<std::string>& tracked,
                      std::set<std::string, std::less<>>& placed) {
  for (const gang::Member& m : g.members) {
    if (m.state != MemberState::kPending && std::ranges::binary_search(tracked, m.pod->meta.uid)) {
      placed.insert(m.pod->meta.uid);
    }
  }
}

}  // namespace

int32_t CountScheduled(const gang::Gang& g) { return g.members.summary().Scheduled(); }

int32_t CountReserved(const gang::Gang& g) { return g.members.summary().reserved; }

// The gangs the pass plans: all but those their queue holds back and the
// settled ones, without the pending members it leaves to filter
// (PassPlans).
std::vector<gang::Gang> PlannedGangs(const std::vector<gang::Gang>& gangs,
                                     const std::vector<gang::Wait>& held,
                                     const WaitingPods& waiting,
                                     const std::map<std::string, Queue, std::less<>>& queues) {
  std::set<std::string> keys;
  for (const gang::Wait& w : held) keys.insert(w.key);
  std::vector<gang::Gang> out;
  for (const gang::Gang& g : gangs) {
    if (keys.contains(g.key) || Settled(g, waiting, queues)) continue;
    out.push_back(g);
    const auto left_to_filter = [&](const gang::Member& m) {
      return m.state == MemberState::kPending && !PassPlans(g, m, waiting, queues);
    };
    if (std::ranges::any_of(g.members, left_to_filter)) {
      std::erase_if(*out.back().members.Edit(), left_to_filter);
    }
  }
  return out;
}

// What the applied plans reserved, per queue of each gang's path.
std::map<std::string, Resources> ReservedPerQueue(const std::vector<gang::Gang>& gangs,
                                                  const gang::PassResult& result,
                                                  const std::vector<std::string>& applied) {
  // Looked up by key, not searched per plan: a pass that plans thousands of
  // plain pods (gangs of one) applies thousands of plans.
  std::unordered_map<std::string_view, const gang::Gang*> by_key;
  for (const gang::Gang& g : gangs) by_key.emplace(g.key, &g);
  const std::unordered_set<std::string_view> was_applied(applied.begin(), applied.end());
  std::map<std::string, Resources> out;
  for (const gang::GangPlan& plan : result.plans) {
    if (!was_applied.contains(plan.key)) continue;
    const auto found = by_key.find(plan.key);
    if (found == by_key.end() || found->second->queues.empty()) continue;
    const gang::Gang& g = *found->second;
    Resources need;
    for (const gang::Assignment& a : plan.reserve) {
      const auto m = std::ranges::find_if(
          g.members, [&](const gang::Member& member) { return member.pod->meta.uid == a.pod_uid; });
      if (m != g.members.end()) need += m->request;
    }
    need.Erase(kPods);
    for (const std::string& queue : g.queues) out[queue] += need;
  }
  return out;
}

GangRead ReadGangs(ClusterState& state, BuiltGangs& built) {
  ++built.reads;
  // The snapshot first: it expires stale reservations (their gangs change).
  GangRead read{.snapshot = state.Snapshot()};
  const QueueGate& gate = state.queue_gate();
  read.waiting = gate.waiting();
  read.charged = gate.charged();
  read.tracked = gate.TrackedPods();
  // The PodGroups and the gangs' members are both sorted by gang key: one
  // walk pairs them, where a lookup per gang was a tenth of this step.
  const auto& members = state.gang_pods();
  auto m = members.begin();
  // Volcano's PodGroups of one (plain pods of a served scheduler): derived
  // from their first pod, kept in no API object. Read after the others.
  std::vector<decltype(m)> implicit;
  const auto pass_members_before = [&](std::string_view key) {
    for (; m != members.end() && m->first < key; ++m) {
      if (Implicit(state, m->second)) implicit.push_back(m);
    }
  };
  for (const auto& [key, group] : read.snapshot.workloads().pod_groups()) {
    pass_members_before(key);
    const ClusterState::GangMembers* pods = nullptr;
    if (m != members.end() && m->first == key) pods = &(m++)->second;
    // A Kubernetes PodGroup is muster's gang only through pods of a served
    // scheduler (GroupOfPod); one without is another scheduler's.
    if (group.api == PodGroupApi::kKubernetes && pods == nullptr) continue;
    Read(state, key, &group, pods, built, read);
  }
  for (; m != members.end(); ++m) {
    if (Implicit(state, m->second)) implicit.push_back(m);
  }
  for (const auto& it : implicit)
    Read(state, it->first, /*group=*/nullptr, &it->second, built, read);
  std::erase_if(built.gangs,
                [&](const auto& entry) { return entry.second.last_read != built.reads; });
  return read;
}

GangInputs AssembleInputs(GangRead read, const GangRecords& records,
                          const std::map<std::string, Time>& evicted, Time now) {
  GangInputs in;
  in.waiting = std::move(read.waiting);
  in.charged = std::move(read.charged);
  const WorkloadView& workloads = read.snapshot.workloads();
  bool needs_view = false;
  in.gangs.reserve(read.gangs.size());
  for (const BuiltGang* built_gang : read.gangs) {
    const BuiltGang& b = *built_gang;
    gang::Gang g = b.gang;
    needs_view = needs_view || NeedsView(g, in.waiting, workloads.queues());
    const bool evicting = Remember(records, evicted, now, g);
    // The queue gate tracks a few pods at most, and most passes none.
    if (!read.tracked.empty()) AddTrackedPlaced(g, read.tracked, in.placed);
    // A member it evicted is terminating now: the victim is smaller.
    if (std::optional<gang::VictimCandidate> v = evicting ? VictimOf(g) : b.victim) {
      in.victims.push_back(*std::move(v));
    }
    // Mostly in key order: the hint makes most insertions O(1).
    in.groups.emplace_hint(in.groups.end(), g.key, b.group);
    if (b.implicit) in.implicit.insert(in.implicit.end(), g.key);
    in.gangs.push_back(std::move(g));
  }
  // The view only matters when some gang has members to place (or
  // reservations to keep): the passes between copy no 1000 nodes.
  ScanNodes(read.snapshot, needs_view, in);
  in.queues = workloads.queues();
  in.broken_groups = workloads.broken_pod_groups();
  in.broken_queues = workloads.broken_queues();
  return in;
}

GangInputs BuildGangInputs(ClusterState& state, const GangRecords& records,
                           const std::map<std::string, Time>& evicted, Time now) {
  BuiltGangs built;
  GangRead read = ReadGangs(state, built);
  return AssembleInputs(std::move(read), records, evicted, now);
}

std::vector<std::string> ApplyPass(ClusterState& state, const GangInputs& inputs,
                                   const gang::PassResult& result, Duration reservation_ttl) {
  for (const std::string& key : result.expired) {
    for (const gang::Gang& g : inputs.gangs) {
      if (g.key != key) continue;
      for (const gang::Member& m : g.members) {
        if (m.state == MemberState::kReserved) state.Forget(m.pod->meta.uid, m.node);
      }
    }
    state.SetGangPlan(key, "");
  }
  std::vector<std::string> applied;
  for (const gang::GangPlan& plan : result.plans) {
    // An expired gang waits a pass: the capacity it let go goes to the gangs
    // behind it first, and members that could not claim their nodes (an
    // in-tree filter muster does not model, say) are not sent back at once.
    if (Contains(result.expired, plan.key) || !StillFits(state, plan)) continue;
    for (const gang::Assignment& a : plan.reserve) {
      state.Assume(a.pod_uid, a.node, state.FindPod(a.pod_uid)->request, reservation_ttl, a.gpus);
    }
    state.SetGangPlan(plan.key, PlacementJson(plan, *inputs.groups.at(plan.key)));
    applied.push_back(plan.key);
  }
  return applied;
}

bool Contains(const std::vector<std::string>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace muster::extender
