#include "extender/gang_writes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "kube/codec/volcano_codec.h"
#include "kube/codec/workload_codec.h"
#include "model/time.h"

namespace muster::extender {
namespace {

// The reason of the answer to a PodGroup or Queue that does not decode, as
// the reconciler's for a Job.
constexpr std::string_view kReasonInvalidSpec = "InvalidSpec";

using gang::MemberState;

template <typename... Fns>
struct Overloaded : Fns... {
  using Fns::operator()...;
};
template <typename... Fns>
Overloaded(Fns...) -> Overloaded<Fns...>;

std::string PodKey(std::string_view gang, std::string_view uid) {
  return std::string(gang) + "\n" + std::string(uid);
}

// What the pass decided for one gang, looked up once per pass: a search of
// the result's lists per gang made a pass over 3000 plain pods (3000 gangs
// of one, every one admitted again each pass) quadratic.
struct GangDecision {
  const gang::GangPlan* plan = nullptr;  // the gang's plan, if it got one
  const gang::Wait* wait = nullptr;      // why it waits, if it does
  bool expired = false;                  // its unclaimed reservations go
  bool admitted = false;                 // Pending -> Inqueue this pass
  bool applied = false;                  // its plan was reserved
};
using GangDecisions = std::unordered_map<std::string_view, GangDecision>;

// REQUIRES: `result` and `applied` outlive the map (it points into them).
GangDecisions DecisionsOf(const gang::PassResult& result, const std::vector<std::string>& applied) {
  GangDecisions out;
  for (const gang::GangPlan& p : result.plans) out[p.key].plan = &p;
  for (const gang::Wait& w : result.waits) {
    GangDecision& d = out[w.key];
    if (d.wait == nullptr) d.wait = &w;  // the first, as a search would find
  }
  for (const std::string& key : result.expired) out[key].expired = true;
  for (const std::string& key : result.admitted) out[key].admitted = true;
  for (const std::string& key : applied) out[key].applied = true;
  return out;
}

// The gang as it is after the pass: planned members reserved, expired ones
// pending again. REQUIRES: `d.expired` or `d.applied`, else it is as before.
gang::Gang AfterPass(gang::Gang g, const GangDecision& d) {
  for (gang::Member& m : g.members.Edit()) {
    if (d.expired && m.state == MemberState::kReserved) m.state = MemberState::kPending;
    if (!d.applied || d.plan == nullptr) continue;
    for (const gang::Assignment& a : d.plan->reserve) {
      if (a.pod_uid == m.pod->meta.uid) {
        m.state = MemberState::kReserved;
        m.node = a.node;
      }
    }
  }
  return g;
}

// The PodGroup an Event is about, Volcano's or Kubernetes' own.
ObjectReference PodGroupReference(PodGroupApi api, std::string ns, std::string name,
                                  std::string uid) {
  return ObjectReference{.api_version = std::string(api == PodGroupApi::kVolcano
                                                        ? kube::kSchedulingApiVersion
                                                        : kube::kKubernetesSchedulingApiVersion),
                         .kind = "PodGroup",
                         .namespace_ = std::move(ns),
                         .name = std::move(name),
                         .uid = std::move(uid)};
}

Event GroupEvent(const PodGroup& group, std::string_view type, std::string_view reason,
                 std::string message, Time now) {
  return NewEvent(
      PodGroupReference(group.api, group.meta.namespace_, group.meta.name, group.meta.uid), type,
      reason, std::move(message), "muster", now);
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

bool StatusWorthWriting(const PodGroupStatus& status, const PodGroupStatus& seen,
                        const GangRecord& record, Time now, const WriteOptions& options) {
  if (status == seen) return false;
  if (!record.written) return true;
  const PodGroupStatus& last = *record.written;
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
  return !record.written_at || now - *record.written_at >= options.status_message_interval;
}

// Progress: a reservation made, or a member bound since the last pass.
void RecordProgress(const GangOutcome& outcome, const GangDecision& d, Time now,
                    GangRecord& record) {
  if (outcome.reserved == 0) {
    record.reserved_since.reset();
  } else if (d.applied || outcome.scheduled != record.scheduled || !record.reserved_since) {
    record.reserved_since = now;
  }
  record.scheduled = outcome.scheduled;
  if (!d.applied || d.plan == nullptr) return;
  for (const gang::Assignment& a : d.plan->reserve) record.members[a.pod_uid].planned = true;
}

// Wakes the members the passes reserved: lifts the gate, or touches the
// pod. (A member bind holds a node for - kube-scheduler admitted it - is
// reserved too, and needs nothing.) Forgets the members no longer reserved.
void PlanWakes(const gang::Gang& g, bool pin_members, GangRecord& record,
               std::vector<GangWrite>& out) {
  if (g.members.summary().reserved == 0) {  // most gangs: nothing to walk for
    record.members.clear();
    return;
  }
  std::unordered_set<std::string_view> reserved;
  reserved.reserve(g.members.summary().reserved);
  for (const gang::Member& m : g.members) {
    if (m.state != MemberState::kReserved) continue;
    reserved.insert(m.pod->meta.uid);
    const auto member = record.members.find(m.pod->meta.uid);
    if (member == record.members.end() || !member->second.planned) continue;
    if (member->second.woken_on == m.node) continue;
    member->second.woken_on = m.node;
    const std::optional<size_t> gate = GangGateIndex(m.pod->spec.scheduling_gates);
    if (!gate.has_value()) {
      out.push_back(AnnotateReservedNode{.gang = g.key,
                                         .namespace_ = m.pod->meta.namespace_,
                                         .name = m.pod->meta.name,
                                         .uid = m.pod->meta.uid,
                                         .node = m.node});
      continue;
    }
    // Pinned by node affinity as the gate goes (allowed while gated,
    // KEP-3838): kube-scheduler then filters one node, not all, for each
    // member. Only for pods without affinity of their own.
    out.push_back(LiftGate{.gang = g.key,
                           .namespace_ = m.pod->meta.namespace_,
                           .name = m.pod->meta.name,
                           .uid = m.pod->meta.uid,
                           .gate_index = *gate,
                           .node = m.node,
                           .pin = pin_members && !m.pod->spec.affinity.has_value()});
  }
  std::erase_if(record.members, [&](const auto& entry) { return !reserved.contains(entry.first); });
}

// The PodGroup's status when worth writing (Volcano's only), and the Events
// of the pass:
// a reservation made, or one expired.
void PlanStatusAndEvents(const gang::Gang& g, const PodGroup& group, PodGroupStatus status,
                         const GangDecision& d, const PassFacts& f, const WriteOptions& options,
                         GangRecord& record, std::vector<GangWrite>& out) {
  // Kubernetes' own PodGroups: kube-scheduler owns their status.
  if (group.api == PodGroupApi::kVolcano &&
      StatusWorthWriting(status, group.status, record, f.now, options)) {
    record.written = status;
    record.written_at = f.now;
    out.push_back(
        PodGroupStatusWrite{g.key, group.meta.namespace_, group.meta.name, std::move(status)});
  }
  if (d.applied && d.plan != nullptr) {
    const gang::GangPlan& p = *d.plan;
    out.push_back(CreateEvent{GroupEvent(
        group, "Normal", "GangReserved",
        "reserved " + std::to_string(p.reserve.size()) + " members: " + Summary(p.reserve),
        f.now)});
  }
  if (d.expired) {
    out.push_back(CreateEvent{GroupEvent(
        group, "Warning", "GangReservationExpired",
        "members did not bind within " + FormatGoDuration(options.reservation_timeout) +
            " of the last progress: unclaimed reservations released, the gang is planned again",
        f.now)});
  }
}

// The wait clock: admission (Inqueue or beyond) to minMember scheduled.
// Returns the wait when it ends in this pass.
std::optional<Duration> RunWaitClock(const gang::Gang& g, const GangOutcome& outcome, Time now,
                                     GangRecord& record) {
  if (outcome.phase != kPodGroupPending && !record.started && !record.admitted_at) {
    record.admitted_at = now;
  }
  if (outcome.scheduled < std::max(g.spec.min_member, 1) || record.started) return std::nullopt;
  record.started = true;
  if (!record.admitted_at) return std::nullopt;
  const Duration waited = now - *record.admitted_at;
  record.admitted_at.reset();
  return waited;
}

bool NothingDecided(const GangDecision& d) {
  return d.plan == nullptr && d.wait == nullptr && !d.expired && !d.admitted && !d.applied;
}

GangOutcome OutcomeOf(const gang::Gang& g) {
  return GangOutcome{.key = g.key,
                     .min_member = g.spec.min_member,
                     .members = static_cast<int64_t>(g.members.size()),
                     .scheduled = CountScheduled(g),
                     .reserved = CountReserved(g),
                     .priority = g.priority};
}

GangOutcome PlanGang(const gang::Gang& before, const GangDecision& d, const PassFacts& f,
                     const WriteOptions& options, GangRecord& record, std::vector<GangWrite>& out) {
  const std::shared_ptr<const PodGroup>& group = f.inputs.groups.at(before.key);
  const bool nothing_decided = NothingDecided(d);
  if (nothing_decided && record.settled && record.settled->group == group &&
      record.settled->members.SharesWith(before.members)) {
    GangOutcome outcome = OutcomeOf(before);
    outcome.phase = record.settled->phase;
    return outcome;
  }
  record.settled.reset();
  // Most gangs of a pass neither reserve nor expire: no copy for them.
  std::optional<gang::Gang> after;
  if (d.expired || d.applied) after = AfterPass(before, d);
  const gang::Gang& g = after.has_value() ? *after : before;
  GangOutcome outcome = OutcomeOf(g);
  RecordProgress(outcome, d, f.now, record);
  PlanWakes(g, options.pin_members, record, out);
  if (d.wait != nullptr) outcome.wait = *d.wait;
  PodGroupStatus status = gang::StatusOf(g, d.admitted || d.applied, d.wait, group->status, f.now);
  outcome.phase = status.phase;
  // A PodGroup of one of Volcano's (ImplicitPodGroup) has no object to
  // write to.
  const bool implicit = f.inputs.implicit.contains(g.key);
  const bool shown = implicit || status == group->status;
  if (!implicit) PlanStatusAndEvents(g, *group, std::move(status), d, f, options, record, out);
  outcome.waited = RunWaitClock(g, outcome, f.now, record);
  if (nothing_decided && outcome.reserved == 0 && shown) {
    record.settled =
        GangRecord::Settled{.group = group, .members = g.members, .phase = outcome.phase};
  }
  return outcome;
}

void PlanPreemption(const GangInputs& inputs, const gang::Preemption& p, Time now,
                    const WriteOptions& options, WriteMemory& memory, std::vector<GangWrite>& out) {
  memory.gangs[p.preemptor].preempting_until = now + options.preemption_grace;
  for (const auto& pod : p.pods) memory.evicted[pod.uid] = now + options.preemption_grace;
  std::string victims;
  for (const std::string& v : p.victims) victims += (victims.empty() ? "" : ", ") + v;
  if (auto it = inputs.groups.find(p.preemptor); it != inputs.groups.end()) {
    const std::string why = p.reclaimed.empty()
                                ? "evicting whole lower-priority gangs: "
                                : "queue " + p.queue + " reclaims its deserved share, evicting: ";
    out.push_back(
        CreateEvent{GroupEvent(*it->second, "Warning", "GangPreempting", why + victims, now)});
  }
  for (const std::string& v : p.victims) {
    const auto it = inputs.groups.find(v);
    if (it == inputs.groups.end()) continue;
    // The GangReclaimed message is parsed by e2e/scenarios/queue_report.py:
    // keep its form.
    out.push_back(CreateEvent{
        Contains(p.reclaimed, v)
            ? GroupEvent(*it->second, "Warning", "GangReclaimed",
                         "reclaimed by queue " + p.queue + " for gang " + p.preemptor, now)
            : GroupEvent(*it->second, "Warning", "GangPreempted",
                         "evicted whole for higher-priority gang " + p.preemptor, now)});
  }
  for (const auto& pod : p.pods) {
    out.push_back(EvictPod{.namespace_ = pod.namespace_, .name = pod.name, .uid = pod.uid});
  }
}

// True the first time `answer` is given for `name` (remembered in `said`).
bool FirstTime(std::map<std::string, std::string, std::less<>>& said, const std::string& name,
               std::string answer) {
  std::string& last = said[name];
  if (last == answer) return false;
  last = std::move(answer);
  return true;
}

// The answers to PodGroups and Queues that do not decode, once per uid and
// problem.
void PlanBrokenAnswers(const GangInputs& inputs, Time now, WriteMemory& memory,
                       std::vector<GangWrite>& out) {
  for (const auto& [key, group] : inputs.broken_groups) {
    if (!FirstTime(memory.broken_groups_said, key, group.uid + "\n" + group.problem)) continue;
    if (SaysBroken(group)) continue;  // said before a restart
    spdlog::warn("gang: PodGroup {} does not decode: {}", key, group.problem);
    // No phase yet reads Pending (Volcano's first phase); a phase it has
    // stays. Kubernetes' own PodGroups get the Event alone: their status is
    // kube-scheduler's.
    const bool no_phase = group.status.has_value() && group.status->phase.empty();
    if (group.api == PodGroupApi::kVolcano) {
      out.push_back(AnswerBrokenPodGroup{key, group.namespace_, group.name,
                                         no_phase ? std::string(kPodGroupPending) : "",
                                         BrokenCondition(group, now)});
    }
    out.push_back(
        CreateEvent{NewEvent(PodGroupReference(group.api, group.namespace_, group.name, group.uid),
                             "Warning", kReasonInvalidSpec, group.problem, "muster", now)});
  }
  for (const auto& [name, queue] : inputs.broken_queues) {
    if (!FirstTime(memory.broken_queues_said, name, queue.uid + "\n" + queue.problem)) continue;
    spdlog::warn("queue: Queue {} does not decode: {}", name, queue.problem);
    Event e = NewEvent(ObjectReference{.api_version = std::string(kube::kSchedulingApiVersion),
                                       .kind = "Queue",
                                       .name = queue.name,
                                       .uid = queue.uid},
                       "Warning", kReasonInvalidSpec, queue.problem, "muster", now);
    e.meta.namespace_ = "default";  // where kube puts Events of cluster-scoped objects
    out.push_back(CreateEvent{std::move(e)});
  }
  std::erase_if(memory.broken_groups_said,
                [&](const auto& e) { return !inputs.broken_groups.contains(e.first); });
  std::erase_if(memory.broken_queues_said,
                [&](const auto& e) { return !inputs.broken_queues.contains(e.first); });
}

// Preemptions whose grace has passed, and evicted pods no longer counted.
void Expire(Time now, WriteMemory& memory) {
  for (auto& [key, record] : memory.gangs) {
    if (record.preempting_until && *record.preempting_until <= now) {
      record.preempting_until.reset();
    }
  }
  std::erase_if(memory.evicted, [&](const auto& entry) { return entry.second <= now; });
}

}  // namespace

WriteSlot SlotOf(const GangWrite& write) {
  return std::visit(Overloaded{
                        [](const LiftGate& w) {
                          return WriteSlot{kRankPod, PodKey(w.gang, w.uid)};
                        },
                        [](const AnnotateReservedNode& w) {
                          return WriteSlot{kRankPod, PodKey(w.gang, w.uid)};
                        },
                        [](const PodGroupStatusWrite& w) {
                          return WriteSlot{kRankPodGroupStatus, w.key};
                        },
                        [](const AnswerBrokenPodGroup& w) {
                          return WriteSlot{kRankBrokenPodGroup, w.key};
                        },
                        [](const QueueStatusWrite& w) {
                          return WriteSlot{kRankQueueStatus, w.name};
                        },
                        [](const CreateEvent&) {
                          return WriteSlot{kRankEvent, ""};
                        },
                        [](const EvictPod&) {
                          return WriteSlot{kRankEviction, ""};
                        },
                    },
                    write);
}

void ForgetUnwritten(const WriteSlot& slot, WriteMemory& memory) {
  switch (slot.rank) {
    case kRankPod: {
      const size_t split = slot.key.find('\n');
      const auto g = memory.gangs.find(std::string_view(slot.key).substr(0, split));
      if (split == std::string::npos || g == memory.gangs.end()) return;
      const auto m = g->second.members.find(std::string_view(slot.key).substr(split + 1));
      if (m != g->second.members.end()) m->second.woken_on.clear();
      return;
    }
    case kRankPodGroupStatus:
      if (auto g = memory.gangs.find(slot.key); g != memory.gangs.end()) g->second.written.reset();
      return;
    case kRankBrokenPodGroup:
      memory.broken_groups_said.erase(slot.key);
      return;
    case kRankQueueStatus:
      memory.queues.erase(slot.key);
      return;
    default:
      return;  // events and evictions are not retried
  }
}

WritePlan PlanWrites(const PassFacts& facts, const WriteOptions& options, WriteMemory& memory) {
  WritePlan plan;
  const GangDecisions decisions = DecisionsOf(facts.result, facts.applied);
  static const GangDecision kNone;
  plan.gangs.reserve(facts.inputs.gangs.size());
  for (const gang::Gang& g : facts.inputs.gangs) {
    const auto d = decisions.find(g.key);
    plan.gangs.push_back(PlanGang(g, d == decisions.end() ? kNone : d->second, facts, options,
                                  memory.gangs[g.key], plan.writes));
  }
  // Views of plan.gangs, complete from here on.
  std::vector<GangPhase> phases;
  phases.reserve(plan.gangs.size());
  for (const GangOutcome& g : plan.gangs) phases.push_back({g.key, g.phase});
  if (facts.result.preemption.has_value()) {
    PlanPreemption(facts.inputs, *facts.result.preemption, facts.now, options, memory, plan.writes);
  }
  for (QueueStatusWrite& w :
       PlanQueueStatusWrites(facts.inputs.queues, facts.queues, phases, facts.now,
                             options.queue_status_interval, memory.queues)) {
    plan.writes.push_back(std::move(w));
  }
  PlanBrokenAnswers(facts.inputs, facts.now, memory, plan.writes);
  Expire(facts.now, memory);
  // A gang that is gone (finished and deleted) is forgotten whole. Every
  // gang of the pass has its record by now: no more records than gangs,
  // none is gone (most passes).
  if (memory.gangs.size() == plan.gangs.size()) return plan;
  std::unordered_set<std::string_view> present;
  present.reserve(plan.gangs.size());
  for (const GangOutcome& g : plan.gangs) present.insert(g.key);
  std::erase_if(memory.gangs, [&](const auto& entry) { return !present.contains(entry.first); });
  return plan;
}

int BindsAhead(const std::vector<GangWrite>& writes) {
  return static_cast<int>(std::count_if(writes.begin(), writes.end(), [](const GangWrite& w) {
    return std::holds_alternative<LiftGate>(w) || std::holds_alternative<AnnotateReservedNode>(w);
  }));
}

}  // namespace muster::extender
