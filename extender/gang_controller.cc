#include "extender/gang_controller.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <set>
#include <utility>

#include "extender/topology_step.h"
#include "gang/conformance.h"
#include "kube/client/client.h"
#include "kube/client/parallel.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "model/quantity.h"

namespace muster::extender {
namespace {

// The reason of the answer to a PodGroup or Queue that does not decode, as
// the reconciler's for a Job.
constexpr std::string_view kReasonInvalidSpec = "InvalidSpec";

using gang::MemberState;
using kube::PodGroupsRef;
using kube::QueuesRef;

gang::Member MemberOf(const std::shared_ptr<const Pod>& pod, const ClusterState& state) {
  gang::Member m{.pod = pod, .terminating = pod->meta.deletion_timestamp.has_value()};
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
  gang::Gang g{.key = group.meta.Key(),
               .spec = group.spec,
               .created = group.meta.creation_timestamp,
               .phase = group.status.phase};
  if (pods != nullptr) {
    for (const auto& [uid, pod] : *pods) {
      g.members.push_back(MemberOf(pod, state));
      g.priority = std::max(g.priority, pod->spec.priority.value_or(0));
    }
  }
  std::sort(g.members.begin(), g.members.end(), [](const gang::Member& a, const gang::Member& b) {
    return a.pod->meta.name < b.pod->meta.name;
  });
  // Hints matter only to members still to place: most passes see none, and
  // decoding a 100-member plan per gang per pass would be wasted.
  if (std::ranges::find(g.members, MemberState::kPending, &gang::Member::state) ==
      g.members.end()) {
    return g;
  }
  const std::map<std::string, std::string> plan = PersistedPlan(g.members);
  for (gang::Member& m : g.members) {
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
    Resources held = WithPodSlot(m.pod->EffectiveRequest());
    v.gpus += held.milli_gpus();
    v.pods.push_back({.uid = m.pod->meta.uid,
                      .namespace_ = m.pod->meta.namespace_,
                      .name = m.pod->meta.name,
                      .node = m.node,
                      .request = std::move(held),
                      .gpus = HoldingOf(m.pod->meta.annotations)});
  }
  if (v.pods.empty()) return std::nullopt;
  return v;
}

int32_t Scheduled(const gang::Gang& g) {
  return static_cast<int32_t>(std::ranges::count_if(g.members, &gang::Member::Scheduled));
}

int32_t Reserved(const gang::Gang& g) {
  return static_cast<int32_t>(
      std::ranges::count(g.members, MemberState::kReserved, &gang::Member::state));
}

// What tells the controller the cluster changed: the cache's pods and nodes,
// gang members (gates and annotations too), PodGroups and Queues.
uint64_t ChangeCount(const ClusterState& state) {
  return state.generation() + state.gang_generation() + state.workloads().View().generation();
}

// Forgets what `memory` (a map or set) holds under keys not in `keys`.
template <typename Memory>
void KeepOnly(Memory& memory, const std::set<std::string>& keys) {
  std::erase_if(memory, [&](const auto& entry) {
    if constexpr (requires { entry.first; }) {
      return !keys.contains(entry.first);
    } else {
      return !keys.contains(entry);
    }
  });
}

// The GPUs the gang's bound members hold (a shared GPU counts its fraction).
double BoundGpus(const gang::Gang& g) {
  int64_t milli = 0;
  for (const gang::Member& m : g.members) {
    if (m.state == MemberState::kBound) milli += m.pod->EffectiveRequest().milli_gpus();
  }
  return static_cast<double>(milli) / kMilliPerGpu;
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

const gang::Wait* WaitOf(const gang::PassResult& result, std::string_view key) {
  for (const gang::Wait& w : result.waits) {
    if (w.key == key) return &w;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// The gang as it is after the pass: planned members reserved, expired ones
// pending again.
gang::Gang AfterPass(gang::Gang g, const gang::PassResult& result, bool applied) {
  const bool expired = Contains(result.expired, g.key);
  const gang::GangPlan* plan = nullptr;
  for (const gang::GangPlan& p : result.plans) {
    if (p.key == g.key) plan = &p;
  }
  for (gang::Member& m : g.members) {
    if (expired && m.state == MemberState::kReserved) m.state = MemberState::kPending;
    if (!applied || plan == nullptr) continue;
    for (const gang::Assignment& a : plan->reserve) {
      if (a.pod_uid == m.pod->meta.uid) {
        m.state = MemberState::kReserved;
        m.node = a.node;
      }
    }
  }
  return g;
}

Event GroupEvent(const PodGroup& group, std::string_view type, std::string_view reason,
                 std::string message, Time now) {
  return NewEvent(ObjectReference{.api_version = "scheduling.volcano.sh/v1beta1",
                                  .kind = "PodGroup",
                                  .namespace_ = group.meta.namespace_,
                                  .name = group.meta.name,
                                  .uid = group.meta.uid},
                  type, reason, std::move(message), "muster", now);
}

std::string Summary(const std::vector<gang::Assignment>& assignments) {
  std::map<std::string, int> per_node;
  for (const gang::Assignment& a : assignments) ++per_node[a.node];
  std::string out;
  for (const auto& [node, count] : per_node) {
    if (!out.empty()) out += ", ";
    out += node + " x" + std::to_string(count);
  }
  return out;
}

bool Gated(const gang::Member& m) {
  const auto& gates = m.pod->spec.scheduling_gates;
  return std::find(gates.begin(), gates.end(), kGangGate) != gates.end();
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
                                             .free_gpus = FreeGpus(info.Gpus(), info.gpu_holds),
                                             .gpu_cards = info.Gpus().cards,
                                             .gpu_uses = info.gpu_holds.uses});
    }
  });
  std::sort(in.view.nodes.begin(), in.view.nodes.end(),
            [](const gang::NodeView& a, const gang::NodeView& b) { return a.name() < b.name(); });
}

double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

// The gangs the pass plans: all but those their queue holds back, without
// the pending members it leaves to filter (PassPlans).
std::vector<gang::Gang> PlannedGangs(const std::vector<gang::Gang>& gangs,
                                     const std::vector<gang::Wait>& held,
                                     const WaitingPods& waiting,
                                     const std::map<std::string, Queue, std::less<>>& queues) {
  std::set<std::string> keys;
  for (const gang::Wait& w : held) keys.insert(w.key);
  std::vector<gang::Gang> out;
  out.reserve(gangs.size());
  for (const gang::Gang& g : gangs) {
    if (keys.contains(g.key)) continue;
    out.push_back(g);
    std::erase_if(out.back().members, [&](const gang::Member& m) {
      return m.state == MemberState::kPending && !PassPlans(g, m, waiting, queues);
    });
  }
  return out;
}

// What the applied plans reserved, per queue of each gang's path.
std::map<std::string, Resources> ReservedPerQueue(const std::vector<gang::Gang>& gangs,
                                                  const gang::PassResult& result,
                                                  const std::vector<std::string>& applied) {
  std::map<std::string, Resources> out;
  for (const gang::GangPlan& plan : result.plans) {
    if (!Contains(applied, plan.key)) continue;
    const auto g = std::ranges::find(gangs, plan.key, &gang::Gang::key);
    if (g == gangs.end() || g->queues.empty()) continue;
    Resources need;
    for (const gang::Assignment& a : plan.reserve) {
      const auto m = std::ranges::find_if(g->members, [&](const gang::Member& member) {
        return member.pod->meta.uid == a.pod_uid;
      });
      if (m != g->members.end()) need += m->pod->EffectiveRequest();
    }
    need.Erase(kPods);
    for (const std::string& queue : g->queues) out[queue] += need;
  }
  return out;
}

// How a gang or pod in a queue that does not decode is told why it waits.
std::string BrokenQueueMessage(const BrokenObject& queue) {
  return "queue \"" + queue.name + "\" cannot be read: " + queue.problem +
         " (fix the Queue; nothing new is admitted to it meanwhile)";
}

// A queue that exists but does not decode is not "missing": the gangs it
// holds (QueueNotFound) are told what is wrong with it.
void NameBrokenQueues(const std::map<std::string, BrokenObject, std::less<>>& broken,
                      QueueStep& queues) {
  for (gang::Wait& w : queues.held) {
    if (w.reason != kWaitQueueNotFound) continue;
    const auto name = queues.queue_of.find(w.key);
    if (name == queues.queue_of.end()) continue;
    if (const auto b = broken.find(name->second); b != broken.end()) {
      w.message = BrokenQueueMessage(b->second);
    }
  }
}

// The condition an undecodable PodGroup gets; its transition time kept
// from an Unschedulable condition it has already.
Condition BrokenCondition(const BrokenObject& group, Time now) {
  Condition c{.type = "Unschedulable",
              .status = "True",
              .reason = std::string(kReasonInvalidSpec),
              .message = group.problem,
              .last_transition_time = now};
  if (!group.status) return c;
  for (const Condition& old : group.status->conditions) {
    if (old.type == c.type && old.status == c.status) {
      c.last_transition_time = old.last_transition_time;
    }
  }
  return c;
}

// True when the PodGroup's status says its problem already.
bool SaysBroken(const BrokenObject& group) {
  if (!group.status) return false;
  return std::ranges::any_of(group.status->conditions, [&](const Condition& c) {
    return c.type == "Unschedulable" && c.status == "True" && c.reason == kReasonInvalidSpec &&
           c.message == group.problem;
  });
}

// A metric value of `resource`: cpu in cores, the rest in its unit.
// In the resource's own unit: cores and GPUs, not muster's thousandths.
double MetricValue(std::string_view resource, int64_t amount) {
  return IsMilliResource(resource) ? static_cast<double>(amount) / 1000.0
                                   : static_cast<double>(amount);
}

}  // namespace

// ---------------------------------------------------------------------------
// Inputs and application (pure over the state).

GangInputs BuildGangInputs(ClusterState& state, const std::map<std::string, Time>& reserved_since,
                           const std::map<std::string, Time>& preempting,
                           const std::map<std::string, Time>& evicted, Time now) {
  GangInputs in;
  const ClusterSnapshot snapshot = state.Snapshot();
  bool needs_view = false;
  const QueueGate& gate = state.queue_gate();
  in.waiting = gate.waiting();
  in.charged = gate.charged();
  auto add = [&](const std::string& key, const PodGroup& group) {
    auto pods = state.gang_pods().find(key);
    gang::Gang g = GangOf(group, pods == state.gang_pods().end() ? nullptr : &pods->second, state);
    // Admission (Pending -> Inqueue) weighs spec.minResources against the
    // free capacity, before any pod exists: the reconciler creates a Job's
    // pods only after it.
    const bool awaits_admission = gang::AwaitsAdmission(g) && g.spec.min_resources.has_value();
    needs_view = needs_view || awaits_admission ||
                 std::any_of(g.members.begin(), g.members.end(), [&](const auto& m) {
                   return m.state == MemberState::kReserved ||
                          (m.state == MemberState::kPending &&
                           PassPlans(g, m, in.waiting, snapshot.workloads().queues()));
                 });
    if (auto it = reserved_since.find(key); it != reserved_since.end()) {
      g.reserved_since = it->second;
    }
    if (auto it = preempting.find(key); it != preempting.end()) g.preempting = it->second > now;
    for (gang::Member& m : g.members) {
      const auto it = evicted.find(m.pod->meta.uid);
      if (it != evicted.end() && it->second > now && m.state == MemberState::kBound) {
        m.terminating = true;
      }
    }
    for (const gang::Member& m : g.members) {
      if (m.state != MemberState::kPending) in.placed.insert(m.pod->meta.uid);
    }
    if (std::optional<gang::VictimCandidate> v = VictimOf(g)) in.victims.push_back(*std::move(v));
    in.gangs.push_back(std::move(g));
    in.groups.emplace(key, group);
  };
  for (const auto& [key, group] : snapshot.workloads().pod_groups()) add(key, group);
  // Volcano's PodGroups of one (plain pods of a served scheduler): derived
  // from their first pod, kept in no API object.
  for (const auto& [key, pods] : state.gang_pods()) {
    if (pods.empty() || in.groups.contains(key)) continue;
    const Pod& first = *pods.begin()->second;
    if (!first.GroupName().empty()) continue;  // names a PodGroup not created yet
    PodGroup group = ImplicitPodGroup(first);
    for (const auto& [uid, pod] : pods) {
      group.meta.creation_timestamp =
          std::min(group.meta.creation_timestamp, pod->meta.creation_timestamp);
    }
    in.implicit.insert(key);
    add(key, group);
  }
  // The view only matters when some gang has members to place (or
  // reservations to keep): the passes between copy no 1000 nodes.
  ScanNodes(snapshot, needs_view, in);
  in.queues = snapshot.workloads().queues();
  in.broken_groups = snapshot.workloads().broken_pod_groups();
  in.broken_queues = snapshot.workloads().broken_queues();
  return in;
}

std::string RemoveGatePatch(size_t index, std::string_view gate, std::string_view pin_node) {
  const std::string path = "/spec/schedulingGates/" + std::to_string(index);
  kube::JsonWriter w;
  w.StartArray();
  if (!pin_node.empty()) {
    // A test that there is no affinity yet: "add" would replace one.
    w.StartObject();
    w.StringField("op", "test");
    w.StringField("path", "/spec/affinity");
    w.Key("value");
    w.Null();
    w.EndObject();
    w.StartObject();
    w.StringField("op", "add");
    w.StringField("path", "/spec/affinity");
    w.Key("value");
    w.StartObject();
    w.Key("nodeAffinity");
    w.StartObject();
    w.Key("requiredDuringSchedulingIgnoredDuringExecution");
    w.StartObject();
    w.Key("nodeSelectorTerms");
    w.StartArray();
    w.StartObject();
    w.Key("matchFields");
    w.StartArray();
    w.StartObject();
    w.StringField("key", "metadata.name");
    w.StringField("operator", "In");
    w.Key("values");
    w.StartArray();
    w.String(pin_node);
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
  }
  w.StartObject();
  w.StringField("op", "test");
  w.StringField("path", path + "/name");
  w.StringField("value", gate);
  w.EndObject();
  w.StartObject();
  w.StringField("op", "remove");
  w.StringField("path", path);
  w.EndObject();
  w.EndArray();
  return w.TakeString();
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
    state.SetGangPlan(plan.key, PlacementJson(plan, inputs.groups.at(plan.key)));
    applied.push_back(plan.key);
  }
  return applied;
}

void PendingWrites::Add(GangWrites writes) {
  for (GangWrites::PodPatch& p : writes.pod_patches) pod_patches[p.uid] = std::move(p);
  for (GangWrites::GroupStatus& s : writes.statuses) statuses[s.key] = std::move(s);
  for (GangWrites::GroupPatch& p : writes.group_patches) group_patches[p.key] = std::move(p);
  for (GangWrites::QueueStatusWrite& q : writes.queue_statuses)
    queue_statuses[q.name] = std::move(q);
  std::move(writes.events.begin(), writes.events.end(), std::back_inserter(events));
  std::move(writes.evictions.begin(), writes.evictions.end(), std::back_inserter(evictions));
}

GangWrites PendingWrites::Take() {
  GangWrites out;
  for (auto& [uid, p] : pod_patches) out.pod_patches.push_back(std::move(p));
  for (auto& [key, s] : statuses) out.statuses.push_back(std::move(s));
  for (auto& [key, p] : group_patches) out.group_patches.push_back(std::move(p));
  for (auto& [name, q] : queue_statuses) out.queue_statuses.push_back(std::move(q));
  out.events = std::move(events);
  out.evictions = std::move(evictions);
  *this = PendingWrites();
  return out;
}

// ---------------------------------------------------------------------------
// The controller.

struct GangController::Memory {
  std::map<std::string, Time> reserved_since;        // gang key -> last progress
  std::map<std::string, int32_t> scheduled;          // gang key -> scheduled at the last pass
  std::map<std::string, Time> preempting;            // gang key -> no new eviction before
  std::map<std::string, Time> evicted;               // pod uid -> counted as terminating until
  std::map<std::string, Time> admitted_at;           // gang key -> admission, until minMember bound
  std::set<std::string> started;                     // gangs that reached minMember once
  std::map<std::string, std::string> woken;          // pod uid -> node it was woken/ungated for
  std::set<std::string> planned;                     // pod uids a pass reserved (not bind)
  std::map<std::string, PodGroupStatus> written;     // gang key -> status last written
  std::map<std::string, Time> written_at;            // gang key -> when
  std::map<std::string, QueueStatus> queue_written;  // queue -> status last written
  std::map<std::string, Time> queue_written_at;      // queue -> when
  // PodGroup key / Queue name -> "uid\nproblem" answered (BrokenWrites).
  std::map<std::string, std::string> broken_groups_said;
  std::map<std::string, std::string> broken_queues_said;
  ReclaimMemory reclaim;
  std::optional<Time> last_pass;
  uint64_t last_generation = ~uint64_t{0};
};

struct GangController::Metrics {
  prometheus::Histogram* wait = nullptr;
  prometheus::Histogram* pass = nullptr;
  prometheus::Counter* partial_gpu_seconds = nullptr;
  prometheus::Counter* made = nullptr;
  prometheus::Counter* expired = nullptr;
  prometheus::Counter* evictions = nullptr;
  prometheus::Counter* preemptions = nullptr;
  std::map<std::string, prometheus::Gauge*, std::less<>> phases;
  // Per queue (and resource): muster_queue_*.
  prometheus::Family<prometheus::Gauge>* deserved = nullptr;
  prometheus::Family<prometheus::Gauge>* allocated = nullptr;
  prometheus::Family<prometheus::Gauge>* pending = nullptr;
  prometheus::Family<prometheus::Gauge>* share = nullptr;
  prometheus::Family<prometheus::Counter>* reclaims = nullptr;
  // The queues (and their resources) set last pass: those not set again
  // are removed.
  std::map<std::string, std::set<std::string>> labelled;
};

GangController::GangController(ClusterAccess* cluster, kube::Client* client, const Clock& clock,
                               GangControllerOptions options, prometheus::Registry* registry)
    : cluster_(cluster),
      client_(client),
      clock_(clock),
      options_(std::move(options)),
      memory_(std::make_unique<Memory>()),
      metrics_(std::make_unique<Metrics>()) {
  if (registry == nullptr) return;
  metrics_->wait = &prometheus::BuildHistogram()
                        .Name("muster_gang_wait_seconds")
                        .Help("Gang admission to minMember members bound.")
                        .Register(*registry)
                        .Add({}, prometheus::Histogram::BucketBoundaries{
                                     0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 30,
                                     60, 120, 300, 600});
  metrics_->pass =
      &prometheus::BuildHistogram()
           .Name("muster_gang_pass_duration_seconds")
           .Help(
               "One gang controller pass: inputs, decision, reservation (not the "
               "API writes, which run on their own thread).")
           .Register(*registry)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                            0.025, 0.05, 0.1, 0.25, 0.5, 1});
  metrics_->partial_gpu_seconds =
      &prometheus::BuildCounter()
           .Name("muster_gang_partial_gpu_seconds_total")
           .Help(
               "GPU-seconds held by bound members of gangs whose bound and reserved members "
               "are short of minMember (should stay 0).")
           .Register(*registry)
           .Add({});
  auto& reservations = prometheus::BuildCounter()
                           .Name("muster_gang_reservations_total")
                           .Help("Whole-gang reservations, by outcome.")
                           .Register(*registry);
  metrics_->made = &reservations.Add({{"outcome", "made"}});
  metrics_->expired = &reservations.Add({{"outcome", "expired"}});
  auto& preemption = prometheus::BuildCounter()
                         .Name("muster_gang_preemptions_total")
                         .Help("Gang preemptions started (victim sets chosen).")
                         .Register(*registry);
  metrics_->preemptions = &preemption.Add({});
  metrics_->evictions = &prometheus::BuildCounter()
                             .Name("muster_gang_evictions_total")
                             .Help("Pods evicted as preemption victims.")
                             .Register(*registry)
                             .Add({});
  auto& phases =
      prometheus::BuildGauge().Name("muster_gangs").Help("PodGroups by phase.").Register(*registry);
  for (std::string_view phase : {kPodGroupPending, kPodGroupInqueue, kPodGroupRunning,
                                 kPodGroupCompleted, kPodGroupUnknown}) {
    metrics_->phases[std::string(phase)] = &phases.Add({{"phase", std::string(phase)}});
  }
  metrics_->deserved =
      &prometheus::BuildGauge()
           .Name("muster_queue_deserved")
           .Help("A queue's deserved share, per resource (cpu in cores, GPUs in GPUs).")
           .Register(*registry);
  metrics_->allocated = &prometheus::BuildGauge()
                             .Name("muster_queue_allocated")
                             .Help("What a queue's gangs hold (bound or reserved), per resource.")
                             .Register(*registry);
  metrics_->pending = &prometheus::BuildGauge()
                           .Name("muster_queue_pending_demand")
                           .Help("What a queue's gangs wait for, per resource.")
                           .Register(*registry);
  metrics_->share = &prometheus::BuildGauge()
                         .Name("muster_queue_share")
                         .Help(
                             "A queue's dominant share: max over resources of allocated / "
                             "deserved (1 = exactly its due).")
                         .Register(*registry);
  metrics_->reclaims = &prometheus::BuildCounter()
                            .Name("muster_queue_reclaims_total")
                            .Help(
                                "Gangs evicted from a queue to give other queues their "
                                "deserved share (label: the victim's queue).")
                            .Register(*registry);
}

GangController::~GangController() { Stop(); }

void GangController::Start() {
  stop_ = false;
  {
    std::lock_guard<std::mutex> lock(writes_mu_);
    writer_running_ = true;
  }
  writer_ = std::thread([this] { WriterLoop(); });
  thread_ = std::thread([this] { Loop(); });
}

void GangController::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  writes_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  std::lock_guard<std::mutex> lock(writes_mu_);
  writer_running_ = false;
}

void GangController::WriterLoop() {
  for (;;) {
    GangWrites batch;
    {
      std::unique_lock<std::mutex> lock(writes_mu_);
      writes_cv_.wait(lock, [this] { return stop_ || !queued_writes_.Empty(); });
      // Unwritten writes are dropped on stop: a restarted extender plans
      // and writes everything again.
      if (stop_) return;
      batch = queued_writes_.Take();
    }
    Failed failed = Execute(batch);
    std::lock_guard<std::mutex> lock(writes_mu_);
    auto append = [](std::vector<std::string>& to, std::vector<std::string>& from) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    };
    append(failed_writes_.woken, failed.woken);
    append(failed_writes_.written, failed.written);
    append(failed_writes_.queues, failed.queues);
    append(failed_writes_.broken, failed.broken);
  }
}

void GangController::Forget(const Failed& failed) {
  for (const std::string& uid : failed.woken) memory_->woken.erase(uid);
  for (const std::string& key : failed.written) memory_->written.erase(key);
  for (const std::string& key : failed.broken) memory_->broken_groups_said.erase(key);
  for (const std::string& name : failed.queues) {
    memory_->queue_written.erase(name);
    memory_->queue_written_at.erase(name);
  }
}

void GangController::Loop() {
  while (!stop_) {
    std::this_thread::sleep_for(options_.poll_interval);
    if (ShouldRun(clock_.Now())) RunPass();
  }
}

bool GangController::ShouldRun(Time now) {
  uint64_t generation = 0;
  cluster_->Exclusive([&](ClusterState& state) { generation = ChangeCount(state); });
  if (generation != memory_->last_generation) return true;
  return !memory_->last_pass || now - *memory_->last_pass >= options_.resync_interval;
}

void GangController::RunPass() {
  const auto started = std::chrono::steady_clock::now();
  const Time now = clock_.Now();
  bool async = false;
  {
    std::lock_guard<std::mutex> lock(writes_mu_);
    Forget(failed_writes_);
    failed_writes_ = {};
    async = writer_running_;
  }
  GangInputs inputs;
  cluster_->Exclusive([&](ClusterState& state) {
    memory_->last_generation = ChangeCount(state);
    inputs =
        BuildGangInputs(state, memory_->reserved_since, memory_->preempting, memory_->evicted, now);
  });
  QueueStep queues = RunQueueStep(inputs.queues, inputs.free, inputs.gangs, inputs.victims);
  NameBrokenQueues(inputs.broken_queues, queues);
  ApplyReclaimHysteresis(queues, memory_->reclaim, now, options_.reclaim);
  for (gang::Wait& w :
       ApplyNetworkTiers(options_.network_tiers, inputs.view, inputs.groups, inputs.gangs)) {
    queues.held.push_back(std::move(w));
  }
  // The pass plans within what the pods the queue gate admitted left.
  gang::QueueLimits limits = queues.limits;
  ChargeLimits(limits, inputs.charged);
  gang::PassResult result = gang::RunPass(
      inputs.view, PlannedGangs(inputs.gangs, queues.held, inputs.waiting, inputs.queues),
      inputs.victims, now, options_.pass, limits);
  result.waits.insert(result.waits.end(), queues.held.begin(), queues.held.end());
  std::vector<std::string> applied;
  const Duration ttl = options_.pass.reservation_timeout * 2;
  cluster_->Exclusive([&](ClusterState& state) {
    applied = ApplyPass(state, inputs, result, ttl);
    QueueBoard board = BoardOf(queues, inputs.queues,
                               ReservedPerQueue(inputs.gangs, result, applied), result.waits, now);
    for (const auto& [name, broken] : inputs.broken_queues) {
      board.broken[name] = BrokenQueueMessage(broken);
    }
    state.queue_gate().Publish(
        std::move(board), [&](std::string_view uid) { return inputs.placed.contains(uid); },
        options_.queue_charge_ttl);
  });
  GangWrites writes = Writes(inputs, queues, result, applied, now);
  Account(inputs, now);
  if (metrics_->pass != nullptr) {
    // The wall time, not the injected clock: this is a cost, not a decision.
    metrics_->pass->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  if (!async) {
    Forget(Execute(writes));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(writes_mu_);
    queued_writes_.Add(std::move(writes));
  }
  writes_cv_.notify_one();
}

bool GangController::StatusWorthWriting(const PodGroupStatus& status, const PodGroupStatus& seen,
                                        const std::string& key, Time now) const {
  if (status == seen) return false;
  auto written = memory_->written.find(key);
  if (written == memory_->written.end()) return true;
  const PodGroupStatus& last = written->second;
  if (last == status) return false;
  // A waiting gang's message follows the free capacity ("largest free is
  // 4"), which moves with every pod: rewrite it now and then, not per pass.
  const bool same_but_words =
      last.phase == status.phase && last.running == status.running &&
      last.succeeded == status.succeeded && last.failed == status.failed &&
      last.conditions.size() == status.conditions.size() &&
      (last.conditions.empty() || (last.conditions[0].type == status.conditions[0].type &&
                                   last.conditions[0].reason == status.conditions[0].reason));
  if (!same_but_words) return true;
  auto at = memory_->written_at.find(key);
  return at == memory_->written_at.end() || now - at->second >= options_.status_message_interval;
}

GangWrites GangController::Writes(const GangInputs& inputs, const QueueStep& queues,
                                  const gang::PassResult& result,
                                  const std::vector<std::string>& applied, Time now) {
  GangWrites out;
  Memory& mem = *memory_;
  std::set<std::string> reserved_uids;
  std::map<std::string, std::string> phases;  // gang key -> phase after the pass
  std::string debug = "[";
  for (const gang::Gang& before : inputs.gangs) {
    const bool was_applied = Contains(applied, before.key);
    const gang::Gang g = AfterPass(before, result, was_applied);
    const PodGroup& group = inputs.groups.at(g.key);
    // Progress: a reservation made, or a member bound since the last pass.
    const int32_t scheduled = Scheduled(g);
    const int32_t reserved = Reserved(g);
    if (reserved == 0) {
      mem.reserved_since.erase(g.key);
    } else if (was_applied || scheduled != mem.scheduled[g.key] ||
               !mem.reserved_since.count(g.key)) {
      mem.reserved_since[g.key] = now;
    }
    mem.scheduled[g.key] = scheduled;
    if (was_applied) {
      for (const gang::GangPlan& p : result.plans) {
        if (p.key != g.key) continue;
        for (const gang::Assignment& a : p.reserve) mem.planned.insert(a.pod_uid);
      }
    }
    // Wake the members the passes reserved: lift the gate, or touch the pod.
    // (A member bind holds a node for - kube-scheduler admitted it - is
    // reserved too, and needs nothing.)
    for (const gang::Member& m : g.members) {
      if (m.state != MemberState::kReserved) continue;
      reserved_uids.insert(m.pod->meta.uid);
      if (!mem.planned.contains(m.pod->meta.uid)) continue;
      std::string& woken = mem.woken[m.pod->meta.uid];
      if (woken == m.node) continue;
      woken = m.node;
      const auto& gates = m.pod->spec.scheduling_gates;
      auto gate = std::find(gates.begin(), gates.end(), kGangGate);
      GangWrites::PodPatch patch{
          .namespace_ = m.pod->meta.namespace_, .name = m.pod->meta.name, .uid = m.pod->meta.uid};
      if (gate != gates.end()) {
        patch.json_patch = true;
        // Pinned by node affinity as the gate goes (allowed while gated,
        // KEP-3838): kube-scheduler then filters one node, not all, for
        // each member. Only for pods without affinity of their own.
        const bool pin = options_.pin_members && !m.pod->spec.affinity.has_value();
        patch.body = RemoveGatePatch(static_cast<size_t>(gate - gates.begin()), kGangGate,
                                     pin ? m.node : std::string_view());
      } else {
        patch.body = R"({"metadata":{"annotations":{")" + std::string(kAnnotationReservedNode) +
                     R"(":")" + m.node + R"("}}})";
      }
      out.pod_patches.push_back(std::move(patch));
    }
    // Status and events.
    const gang::Wait* wait = WaitOf(result, g.key);
    const bool admitted = Contains(result.admitted, g.key) || was_applied;
    PodGroupStatus status = gang::StatusOf(g, admitted, wait, group.status, now);
    phases[g.key] = status.phase;
    const bool implicit = inputs.implicit.contains(g.key);  // no object to write to
    if (!implicit && StatusWorthWriting(status, group.status, g.key, now)) {
      out.statuses.push_back({g.key, group.meta.namespace_, group.meta.name, status});
      mem.written[g.key] = status;
      mem.written_at[g.key] = now;
    }
    if (was_applied && !implicit) {
      for (const gang::GangPlan& p : result.plans) {
        if (p.key != g.key) continue;
        out.events.push_back(GroupEvent(
            group, "Normal", "GangReserved",
            "reserved " + std::to_string(p.reserve.size()) + " members: " + Summary(p.reserve),
            now));
      }
    }
    if (Contains(result.expired, g.key) && !implicit) {
      out.events.push_back(GroupEvent(
          group, "Warning", "GangReservationExpired",
          "members did not bind within " + FormatGoDuration(options_.pass.reservation_timeout) +
              " of the last progress: unclaimed reservations released, the gang is planned again",
          now));
    }
    // The wait clock: admission to minMember scheduled.
    const bool inqueue_or_more = status.phase != kPodGroupPending;
    if (inqueue_or_more && !mem.started.count(g.key) && !mem.admitted_at.count(g.key)) {
      mem.admitted_at[g.key] = now;
    }
    if (scheduled >= std::max(g.spec.min_member, 1) && !mem.started.count(g.key)) {
      mem.started.insert(g.key);
      if (auto at = mem.admitted_at.find(g.key); at != mem.admitted_at.end()) {
        if (metrics_->wait != nullptr) metrics_->wait->Observe(ToSeconds(now - at->second));
        mem.admitted_at.erase(at);
      }
    }
    if (debug.size() > 1) debug += ",";
    kube::JsonWriter w;
    w.StartObject();
    w.StringField("podGroup", g.key);
    w.StringField("phase", status.phase);
    w.IntField("minMember", g.spec.min_member);
    w.IntField("members", static_cast<int64_t>(g.members.size()));
    w.IntField("scheduled", scheduled);
    w.IntField("reserved", reserved);
    w.IntField("priority", g.priority);
    if (auto q = queues.queue_of.find(g.key); q != queues.queue_of.end()) {
      w.StringField("queue", q->second);
    }
    if (auto at = queues.position.find(g.key); at != queues.position.end()) {
      w.IntField("position", at->second);  // in the planning order, 0 first
    }
    if (wait != nullptr) {
      w.StringField("waitReason", wait->reason);
      w.StringField("waitMessage", wait->message);
    }
    w.EndObject();
    debug += w.TakeString();
  }
  debug += "]";
  // Forget what belongs to pods no longer reserved.
  KeepOnly(mem.woken, reserved_uids);
  KeepOnly(mem.planned, reserved_uids);
  if (result.preemption.has_value()) PreemptionWrites(inputs, queues, *result.preemption, now, out);
  QueueWrites(inputs, queues, phases, now, out);
  BrokenWrites(inputs, now, out);
  for (auto* until : {&mem.preempting, &mem.evicted}) {
    std::erase_if(*until, [&](const auto& entry) { return entry.second <= now; });
  }
  if (metrics_->made != nullptr) {
    metrics_->made->Increment(static_cast<double>(applied.size()));
    metrics_->expired->Increment(static_cast<double>(result.expired.size()));
  }
  {
    std::lock_guard<std::mutex> lock(debug_mu_);
    debug_json_ = std::move(debug);
  }
  return out;
}

void GangController::PreemptionWrites(const GangInputs& inputs, const QueueStep& queues,
                                      const gang::Preemption& p, Time now, GangWrites& out) {
  memory_->preempting[p.preemptor] = now + options_.preemption_grace;
  for (const auto& pod : p.pods) memory_->evicted[pod.uid] = now + options_.preemption_grace;
  std::string victims;
  for (const std::string& v : p.victims) victims += (victims.empty() ? "" : ", ") + v;
  if (auto it = inputs.groups.find(p.preemptor); it != inputs.groups.end()) {
    const std::string why = p.reclaimed.empty()
                                ? "evicting whole lower-priority gangs: "
                                : "queue " + p.queue + " reclaims its deserved share, evicting: ";
    out.events.push_back(GroupEvent(it->second, "Warning", "GangPreempting", why + victims, now));
  }
  for (const std::string& v : p.victims) {
    const auto it = inputs.groups.find(v);
    if (it == inputs.groups.end()) continue;
    if (Contains(p.reclaimed, v)) {
      // The message is parsed by e2e/scenarios/queue_report.py: keep its form.
      out.events.push_back(GroupEvent(it->second, "Warning", "GangReclaimed",
                                      "reclaimed by queue " + p.queue + " for gang " + p.preemptor,
                                      now));
      if (metrics_->reclaims != nullptr) {
        const auto q = queues.queue_of.find(v);
        metrics_->reclaims->Add({{"queue", q == queues.queue_of.end() ? "" : q->second}})
            .Increment();
      }
    } else {
      out.events.push_back(GroupEvent(it->second, "Warning", "GangPreempted",
                                      "evicted whole for higher-priority gang " + p.preemptor,
                                      now));
    }
  }
  for (const auto& pod : p.pods) out.evictions.push_back({pod.namespace_, pod.name, pod.uid});
  if (metrics_->preemptions != nullptr) metrics_->preemptions->Increment();
  std::vector<std::string> from;
  for (const std::string& v : p.reclaimed) {
    if (const auto q = queues.queue_of.find(v); q != queues.queue_of.end())
      from.push_back(q->second);
  }
  RecordReclaim(memory_->reclaim, p.queue, from, now);
}

void GangController::QueueWrites(const GangInputs& inputs, const QueueStep& queues,
                                 const std::map<std::string, std::string>& phases, Time now,
                                 GangWrites& out) {
  Memory& mem = *memory_;
  // Status: what each existing Queue's gangs hold, and its PodGroups by phase.
  std::map<std::string, QueueStatus> wanted;
  for (const auto& [name, q] : inputs.queues) {
    QueueStatus& st = wanted[name];
    st = q.status;
    st.allocated = Resources();
    // Every shared resource, zeros included: a merge patch only removes a
    // key written as null, so a resource the queue let go must read 0.
    const auto share = queues.shares.queues.find(name);
    for (const auto& [resource, total] : queues.shares.total.entries()) {
      st.allocated.Set(resource, share == queues.shares.queues.end()
                                     ? 0
                                     : share->second.allocated.Get(resource));
    }
    st.pending = st.running = st.inqueue = st.unknown = st.completed = 0;
  }
  for (const auto& [key, phase] : phases) {
    const auto q = wanted.find(queues.queue_of.at(key));
    if (q == wanted.end()) continue;
    QueueStatus& st = q->second;
    if (phase == kPodGroupRunning)
      ++st.running;
    else if (phase == kPodGroupInqueue)
      ++st.inqueue;
    else if (phase == kPodGroupUnknown)
      ++st.unknown;
    else if (phase == kPodGroupCompleted)
      ++st.completed;
    else
      ++st.pending;
  }
  for (auto& [name, st] : wanted) {
    const Queue& seen = inputs.queues.find(name)->second;
    const auto last = mem.queue_written.find(name);
    const QueueStatus& before = last == mem.queue_written.end() ? seen.status : last->second;
    if (st == before || st == seen.status) continue;
    const auto at = mem.queue_written_at.find(name);
    if (at != mem.queue_written_at.end() && now - at->second < options_.queue_status_interval) {
      continue;
    }
    mem.queue_written[name] = st;
    mem.queue_written_at[name] = now;
    out.queue_statuses.push_back({name, std::move(st)});
  }
  std::set<std::string> names;
  for (const auto& [name, q] : inputs.queues) names.insert(name);
  KeepOnly(mem.queue_written, names);
  KeepOnly(mem.queue_written_at, names);
  SetQueueMetrics(queues.shares);
  // /debug/state.
  kube::JsonWriter w;
  w.StartObject();
  w.Key("queues");
  w.StartArray();
  for (const auto& [name, q] : queues.shares.queues) {
    w.StartObject();
    w.StringField("name", name);
    w.ResourcesField("deserved", q.deserved);
    w.ResourcesField("allocated", q.allocated);
    w.ResourcesField("demand", q.demand);
    w.Key("share");  // -1: it holds what it deserves none of
    w.Double(std::isfinite(q.share) ? q.share : -1);
    w.StringField("dominant", q.dominant);
    w.EndObject();
  }
  w.EndArray();
  w.Key("problems");
  w.StartArray();
  for (const std::string& problem : queues.shares.problems) w.String(problem);
  w.EndArray();
  w.EndObject();
  std::lock_guard<std::mutex> lock(debug_mu_);
  queues_debug_json_ = w.TakeString();
}

void GangController::BrokenWrites(const GangInputs& inputs, Time now, GangWrites& out) {
  Memory& mem = *memory_;
  for (const auto& [key, group] : inputs.broken_groups) {
    std::string& said = mem.broken_groups_said[key];
    const std::string answer = group.uid + "\n" + group.problem;
    if (said == answer) continue;
    said = answer;
    if (SaysBroken(group)) continue;  // said before a restart
    spdlog::warn("gang: PodGroup {} does not decode: {}", key, group.problem);
    // No phase yet reads Pending (Volcano's first phase); a phase it has stays.
    const bool no_phase = group.status.has_value() && group.status->phase.empty();
    out.group_patches.push_back(
        {key, group.namespace_, group.name,
         kube::EncodePodGroupConditionsPatch(no_phase ? kPodGroupPending : "",
                                             {BrokenCondition(group, now)})});
    out.events.push_back(NewEvent(ObjectReference{.api_version = "scheduling.volcano.sh/v1beta1",
                                                  .kind = "PodGroup",
                                                  .namespace_ = group.namespace_,
                                                  .name = group.name,
                                                  .uid = group.uid},
                                  "Warning", kReasonInvalidSpec, group.problem, "muster", now));
  }
  for (const auto& [name, queue] : inputs.broken_queues) {
    std::string& said = mem.broken_queues_said[name];
    const std::string answer = queue.uid + "\n" + queue.problem;
    if (said == answer) continue;
    said = answer;
    spdlog::warn("queue: Queue {} does not decode: {}", name, queue.problem);
    Event e = NewEvent(ObjectReference{.api_version = "scheduling.volcano.sh/v1beta1",
                                       .kind = "Queue",
                                       .name = queue.name,
                                       .uid = queue.uid},
                       "Warning", kReasonInvalidSpec, queue.problem, "muster", now);
    e.meta.namespace_ = "default";  // where kube puts Events of cluster-scoped objects
    out.events.push_back(std::move(e));
  }
  std::set<std::string> groups, queues;
  for (const auto& [key, group] : inputs.broken_groups) groups.insert(key);
  for (const auto& [name, queue] : inputs.broken_queues) queues.insert(name);
  KeepOnly(mem.broken_groups_said, groups);
  KeepOnly(mem.broken_queues_said, queues);
}

void GangController::SetQueueMetrics(const queue::Shares& shares) {
  Metrics& m = *metrics_;
  if (m.deserved == nullptr) return;
  const std::array<prometheus::Family<prometheus::Gauge>*, 3> per_resource = {
      m.deserved, m.allocated, m.pending};
  std::map<std::string, std::set<std::string>> labelled;
  for (const auto& [name, q] : shares.queues) {
    std::set<std::string>& resources = labelled[name];
    for (const auto& [resource, total] : shares.total.entries()) {
      const std::map<std::string, std::string> labels = {{"queue", name}, {"resource", resource}};
      m.deserved->Add(labels).Set(MetricValue(resource, q.deserved.Get(resource)));
      m.allocated->Add(labels).Set(MetricValue(resource, q.allocated.Get(resource)));
      m.pending->Add(labels).Set(MetricValue(resource, (q.demand - q.allocated).Get(resource)));
      resources.insert(resource);
    }
    m.share->Add({{"queue", name}}).Set(q.share);
    // At 0 from the queue's first pass, so rate() and the dashboards see a
    // queue that has never been reclaimed from (Add is a lookup after that).
    m.reclaims->Add({{"queue", name}});
  }
  // Queues (or resources) gone since the last pass leave the metrics.
  for (const auto& [name, resources] : m.labelled) {
    const auto now = labelled.find(name);
    for (const std::string& resource : resources) {
      if (now != labelled.end() && now->second.contains(resource)) continue;
      for (auto* family : per_resource) {
        family->Remove(&family->Add({{"queue", name}, {"resource", resource}}));
      }
    }
    if (now == labelled.end()) m.share->Remove(&m.share->Add({{"queue", name}}));
  }
  m.labelled = std::move(labelled);
}

void GangController::Account(const GangInputs& inputs, Time now) {
  Memory& mem = *memory_;
  const double dt = mem.last_pass ? ToSeconds(now - *mem.last_pass) : 0;
  mem.last_pass = now;
  std::map<std::string, int64_t, std::less<>> phases;
  for (const gang::Gang& g : inputs.gangs) {
    // Partial: members hold GPUs while the gang is not sure to start, i.e.
    // bound and reserved members together are short of minMember. A gang
    // whose whole reservation is being claimed pod by pod is not partial.
    const int32_t scheduled = Scheduled(g);
    if (scheduled > 0 && scheduled + Reserved(g) < g.spec.min_member &&
        metrics_->partial_gpu_seconds) {
      metrics_->partial_gpu_seconds->Increment(dt * BoundGpus(g));
    }
    if (inputs.implicit.contains(g.key)) continue;  // not a PodGroup object
    auto written = mem.written.find(g.key);
    const std::string& phase =
        written != mem.written.end() ? written->second.phase : inputs.groups.at(g.key).status.phase;
    ++phases[phase.empty() ? std::string(kPodGroupPending) : phase];
  }
  for (auto& [phase, gauge] : metrics_->phases) {
    auto it = phases.find(phase);
    gauge->Set(it == phases.end() ? 0 : static_cast<double>(it->second));
  }
  // Drop the memory of gangs that are gone.
  std::set<std::string> keys;
  for (const gang::Gang& g : inputs.gangs) keys.insert(g.key);
  KeepOnly(mem.scheduled, keys);
  KeepOnly(mem.reserved_since, keys);
  KeepOnly(mem.admitted_at, keys);
  KeepOnly(mem.written_at, keys);
  KeepOnly(mem.written, keys);
  KeepOnly(mem.started, keys);
}

GangController::Failed GangController::Execute(const GangWrites& writes) {
  if (client_ == nullptr) return {};
  const size_t patches = writes.pod_patches.size();
  const size_t statuses = writes.statuses.size();
  const size_t group_patches = writes.group_patches.size();
  const size_t queue_statuses = writes.queue_statuses.size();
  const size_t events = writes.events.size();
  const size_t evictions = writes.evictions.size();
  std::atomic<int64_t> evicted{0};
  // What failed is forgotten, so the next pass writes it again.
  std::vector<char> patch_failed(patches, 0);
  std::vector<char> status_failed(statuses, 0);
  std::vector<char> group_failed(group_patches, 0);
  std::vector<char> queue_failed(queue_statuses, 0);
  // Gates first: they decide how soon the gang starts.
  kube::ParallelFor(
      patches + statuses + group_patches + queue_statuses + events + evictions,
      options_.io_parallelism, [&](size_t i) {
        if (i < patches) {
          const GangWrites::PodPatch& p = writes.pod_patches[i];
          StatusOr<std::string> r = client_->Patch(
              kube::ResourceRef::Core("pods", p.namespace_, p.name),
              p.json_patch ? kube::PatchType::kJson : kube::PatchType::kMerge, p.body);
          if (!r.ok()) {
            patch_failed[i] = 1;
            spdlog::warn("gang: waking pod {}/{}: {}", p.namespace_, p.name, r.status().ToString());
          }
          return;
        }
        i -= patches;
        if (i < statuses) {
          const GangWrites::GroupStatus& s = writes.statuses[i];
          StatusOr<std::string> r =
              client_->Patch(PodGroupsRef().WithNamespace(s.namespace_).WithName(s.name),
                             kube::PatchType::kMerge, kube::EncodePodGroupStatusPatch(s.status));
          if (!r.ok()) {
            status_failed[i] = 1;
            spdlog::warn("gang: status of PodGroup {}/{}: {}", s.namespace_, s.name,
                         r.status().ToString());
          }
          return;
        }
        i -= statuses;
        if (i < group_patches) {
          const GangWrites::GroupPatch& p = writes.group_patches[i];
          StatusOr<std::string> r =
              client_->Patch(PodGroupsRef().WithNamespace(p.namespace_).WithName(p.name),
                             kube::PatchType::kMerge, p.body);
          if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
            group_failed[i] = 1;
            spdlog::warn("gang: answering PodGroup {}/{}: {}", p.namespace_, p.name,
                         r.status().ToString());
          }
          return;
        }
        i -= group_patches;
        if (i < queue_statuses) {
          const GangWrites::QueueStatusWrite& q = writes.queue_statuses[i];
          StatusOr<std::string> r =
              client_->PatchStatus(QueuesRef().WithName(q.name), kube::PatchType::kMerge,
                                   kube::EncodeQueueStatusPatch(q.status));
          if (!r.ok()) {
            queue_failed[i] = 1;
            spdlog::warn("queue: status of Queue {}: {}", q.name, r.status().ToString());
          }
          return;
        }
        i -= queue_statuses;
        if (i < events) {
          const Event& e = writes.events[i];
          StatusOr<std::string> r = client_->Create(
              kube::ResourceRef::Core("events", e.meta.namespace_), kube::EncodeEvent(e));
          if (!r.ok()) spdlog::warn("gang: event {}: {}", e.reason, r.status().ToString());
          return;
        }
        i -= events;
        const GangWrites::Evict& v = writes.evictions[i];
        Eviction eviction{.meta = {.name = v.name, .namespace_ = v.namespace_},
                          .precondition_uid = v.uid};
        StatusOr<std::string> r =
            client_->Evict(v.namespace_, v.name, kube::EncodeEviction(eviction));
        if (r.ok()) {
          ++evicted;
        } else {
          spdlog::warn("gang: evicting {}/{}: {}", v.namespace_, v.name, r.status().ToString());
        }
      });
  Failed failed;
  for (size_t i = 0; i < patches; ++i) {
    if (patch_failed[i]) failed.woken.push_back(writes.pod_patches[i].uid);
  }
  for (size_t i = 0; i < statuses; ++i) {
    if (status_failed[i]) failed.written.push_back(writes.statuses[i].key);
  }
  for (size_t i = 0; i < queue_statuses; ++i) {
    if (queue_failed[i]) failed.queues.push_back(writes.queue_statuses[i].name);
  }
  for (size_t i = 0; i < group_patches; ++i) {
    if (group_failed[i]) failed.broken.push_back(writes.group_patches[i].key);
  }
  if (metrics_->evictions != nullptr) metrics_->evictions->Increment(static_cast<double>(evicted));
  if (patches + evictions > 0) {
    spdlog::info("gang: {} pods woken, {} statuses, {} events, {}/{} evicted", patches, statuses,
                 events, evicted.load(), evictions);
  }
  return failed;
}

std::string GangController::DebugJson() const {
  std::lock_guard<std::mutex> lock(debug_mu_);
  return debug_json_;
}

std::string GangController::QueuesDebugJson() const {
  std::lock_guard<std::mutex> lock(debug_mu_);
  return queues_debug_json_;
}

}  // namespace muster::extender
