#include "extender/queue_step.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "gang/feasibility.h"

namespace muster::extender {
namespace {

// What a gang's members hold (bound or reserved, unfinished) and want (the
// rest), requests only (no pod slots): the sums its member list keeps, read
// in place.
struct Holdings {
  const gang::MemberSummary* members = nullptr;  // the gang's; never null
  // What the members not placed want, or the gang's admission need when
  // that is more (the one sum not the list's).
  Resources pending;
  // The gang evicts victims for itself and waits for them to free what its
  // pending members request.
  bool claims = false;

  // Bound, or reserved and about to bind.
  Resources Allocated() const { return members->bound_request + members->reserved_request; }
  // The part of Allocated() bound to nodes.
  const Resources& Bound() const { return members->bound_request; }
  // What its terminating members still hold on their nodes: no queue's,
  // but part of the capacity the queues share once it is free. (A
  // terminating member - an eviction victim, say - is on its way out: its
  // queue must not look as if it still held it, or reclaim would take
  // from it twice.)
  const Resources& Leaving() const { return members->leaving_request; }
};

Holdings HoldingsOf(const gang::Gang& g) {
  const gang::MemberSummary& s = g.members.summary();
  Holdings h{.members = &s, .pending = s.pending_request, .claims = g.preempting};
  // A gang not admitted yet may have no pods (a Volcano Job's come with
  // admission): its minimum is its queue's demand all the same, or a queue
  // of such Jobs would never deserve - nor reclaim - more than it holds.
  if (gang::AwaitsAdmission(g)) {
    h.pending = Resources::Max(h.pending, gang::AdmissionNeed(g));
    h.pending.Erase(kPods);
  }
  return h;
}

queue::QueueState StateOf(const Queue& q) {
  return queue::QueueState{.name = q.meta.name,
                           .parent = q.spec.parent,
                           .weight = q.spec.weight,
                           .priority = q.spec.priority,
                           .capability = q.spec.capability,
                           .guarantee = q.spec.guarantee,
                           .deserved = q.spec.deserved,
                           .reclaimable = q.IsReclaimable(),
                           .open = q.IsOpen()};
}

bool HoldsNothing(const gang::Gang& g) {
  return g.members.summary().bound + g.members.summary().reserved == 0;
}

// The gang is held by its queue: the wait, or nothing.
std::optional<gang::Wait> HoldOf(const gang::Gang& g, const std::string& name,
                                 const std::map<std::string, queue::QueueState>& states) {
  if (!HoldsNothing(g) || !gang::AwaitsAdmission(g)) return std::nullopt;
  const auto it = states.find(name);
  if (it == states.end()) {
    return gang::Wait{.key = g.key,
                      .reason = kWaitQueueNotFound,
                      .message = "queue \"" + name +
                                 "\" does not exist: create it, or set the PodGroup's spec.queue"};
  }
  if (!it->second.open) {
    return gang::Wait{.key = g.key,
                      .reason = kWaitQueueClosed,
                      .message = "queue \"" + name + "\" is not Open: it admits no new gangs"};
  }
  return std::nullopt;
}

// `claimed`: per queue (own and descendants'), what gangs evicting victims
// wait for. Reclaim counts it as held, so a queue does not reclaim for the
// same need again (and again) while the victims go (the order counts it
// too, and ranks those gangs first to take the freed capacity).
gang::QueueLimits LimitsOf(const queue::Shares& shares,
                           const std::map<std::string, queue::QueueState>& states,
                           const std::map<std::string, Resources>& claimed,
                           const std::map<std::string, Resources>& bound) {
  gang::QueueLimits limits;
  for (const auto& [name, share] : shares.queues) {
    const auto extra = claimed.find(name);
    gang::QueueLimit limit{
        .allocated = extra == claimed.end() ? share.allocated : share.allocated + extra->second,
        .deserved = share.deserved,
        .reclaimable = share.reclaimable};
    const auto on_nodes = bound.find(name);
    limit.bound = on_nodes == bound.end() ? Resources() : on_nodes->second;
    const queue::QueueState& state = states.at(name);
    if (state.capability) {
      Resources room;
      for (const auto& [resource, cap] : state.capability->entries()) {
        room.Set(resource, cap - share.allocated.Get(resource));
      }
      limit.room = std::move(room);
    }
    limits.emplace(name, std::move(limit));
  }
  return limits;
}

using QueueStates = std::map<std::string, queue::QueueState>;

// The Queue objects' states, and "default"'s when there is no such object
// (PodGroups naming no queue are in it all the same).
QueueStates StatesOf(const std::map<std::string, Queue, std::less<>>& queues) {
  QueueStates states;
  for (const auto& [name, q] : queues) states.emplace(name, StateOf(q));
  if (!states.contains(std::string(kDefaultQueue))) {
    states.emplace(std::string(kDefaultQueue),
                   queue::QueueState{.name = std::string(kDefaultQueue)});
  }
  return states;
}

// The gangs of a step, counted: the Holdings of each one its queue does not
// hold, the keys of those it holds, and what the queues hold in all. Keys
// are views of the gangs' own.
struct GangTally {
  std::unordered_map<std::string_view, Holdings> of_gang;
  std::unordered_set<std::string_view> held;
  Resources held_by_queues;  // allocated and leaving, of the counted gangs
};

// Fills step.queue_of and step.held, and adds each counted gang's holdings
// to its queue's state.
GangTally TallyGangs(const std::vector<gang::Gang>& gangs, QueueStates& states, QueueStep& step) {
  GangTally tally;
  tally.of_gang.reserve(gangs.size());
  step.queue_of.reserve(gangs.size());
  for (const gang::Gang& g : gangs) {
    const std::string name = QueueName(g.spec);
    step.queue_of[g.key] = name;
    if (std::optional<gang::Wait> hold = HoldOf(g, name, states)) {
      step.held.push_back(*std::move(hold));
      tally.held.insert(g.key);
      continue;
    }
    Holdings h = HoldingsOf(g);
    if (auto it = states.find(name); it != states.end()) {
      // Added one by one: no sum made per gang.
      for (const Resources* held : {&h.members->bound_request, &h.members->reserved_request}) {
        it->second.allocated += *held;
        tally.held_by_queues += *held;
      }
      tally.held_by_queues += h.Leaving();
      it->second.pending += h.pending;
    }
    tally.of_gang.emplace(g.key, std::move(h));
  }
  return tally;
}

// The limits of the step's shares, with per queue, own and descendants':
// what preempting gangs wait for, and what is bound.
gang::QueueLimits LimitsOfStep(const QueueStep& step, const QueueStates& states,
                               const std::unordered_map<std::string_view, Holdings>& of_gang) {
  std::map<std::string, Resources> claimed, bound;
  for (const auto& [key, h] : of_gang) {
    const auto q = step.shares.queues.find(step.queue_of.find(key)->second);
    if (q == step.shares.queues.end()) continue;
    for (const std::string& at : q->second.path) {
      if (h.claims && !h.members->pending_request.IsZero()) {
        claimed[at] += h.members->pending_request;
      }
      bound[at] += h.Bound();
    }
  }
  return LimitsOf(step.shares, states, claimed, bound);
}

// Sets every gang's queue path; returns the gangs with members to place
// that their queue does not hold, for the order.
std::vector<queue::PendingGang> PendingGangs(std::vector<gang::Gang>& gangs, const QueueStep& step,
                                             const GangTally& tally) {
  std::vector<queue::PendingGang> pending;
  for (gang::Gang& g : gangs) {
    const std::string& name = step.queue_of.find(g.key)->second;
    if (const auto it = step.shares.queues.find(name); it != step.shares.queues.end()) {
      g.queues = it->second.path;
    }
    const gang::MemberSummary& s = g.members.summary();
    if (s.awaiting == 0 || tally.held.contains(g.key)) continue;
    const Holdings& h = tally.of_gang.at(g.key);
    const int64_t placed = static_cast<int64_t>(g.members.size()) - s.pending;
    pending.push_back(queue::PendingGang{.key = g.key,
                                         .queue = name,
                                         .priority = g.priority,
                                         .created = g.created,
                                         .request = h.pending,
                                         .allocated = h.Allocated(),
                                         .minimum_met = placed >= std::max(g.spec.min_member, 1),
                                         .claims = g.preempting});
  }
  return pending;
}

// step.position by `order`, and every gang's queue_rank.
void SetRanks(const std::vector<std::string>& order, std::vector<gang::Gang>& gangs,
              QueueStep& step) {
  for (size_t i = 0; i < order.size(); ++i) step.position[order[i]] = static_cast<int>(i);
  for (gang::Gang& g : gangs) {
    const auto it = step.position.find(g.key);
    // Gangs with nothing to place go after: the order only matters to
    // planning, and they plan nothing.
    g.queue_rank = it == step.position.end() ? static_cast<int32_t>(order.size())
                                             : static_cast<int32_t>(it->second);
  }
}

// Each victim's queue path.
void LabelVictims(const QueueStep& step, std::vector<gang::VictimCandidate>& victims) {
  for (gang::VictimCandidate& v : victims) {
    const auto name = step.queue_of.find(v.key);
    if (name == step.queue_of.end()) continue;
    if (const auto it = step.shares.queues.find(name->second); it != step.shares.queues.end()) {
      v.queues = it->second.path;
    }
  }
}

}  // namespace

std::string QueueName(const PodGroupSpec& spec) {
  return spec.queue.empty() ? std::string(kDefaultQueue) : spec.queue;
}

QueueStep RunQueueStep(const std::map<std::string, Queue, std::less<>>& queues,
                       const Resources& free, std::vector<gang::Gang>& gangs,
                       std::vector<gang::VictimCandidate>& victims) {
  QueueStep step;
  QueueStates states = StatesOf(queues);
  // Holdings per queue; held gangs are neither counted nor ranked.
  GangTally tally = TallyGangs(gangs, states, step);
  std::vector<queue::QueueState> list;
  for (auto& [name, state] : states) list.push_back(state);
  Resources capacity = free.ClampedAtZero() + tally.held_by_queues;
  step.shares = queue::ComputeShares(list, capacity);
  step.limits = LimitsOfStep(step, states, tally.of_gang);
  const std::vector<queue::PendingGang> pending = PendingGangs(gangs, step, tally);
  SetRanks(queue::RankGangs(step.shares, pending), gangs, step);
  LabelVictims(step, victims);
  return step;
}

void ChargeLimits(gang::QueueLimits& limits,
                  const std::map<std::string, Resources, std::less<>>& charged) {
  for (const auto& [name, held] : charged) {
    const auto it = limits.find(name);
    if (it == limits.end()) continue;
    gang::QueueLimit& limit = it->second;
    limit.allocated += held;
    if (!limit.room) continue;
    for (const auto& [resource, amount] : held.entries()) {
      if (limit.room->Has(resource)) limit.room->Set(resource, limit.room->Get(resource) - amount);
    }
  }
}

QueueBoard BoardOf(const QueueStep& step, const std::map<std::string, Queue, std::less<>>& queues,
                   const std::map<std::string, Resources>& reserved,
                   const std::vector<gang::Wait>& waits, Time at) {
  std::string owed_waiting;
  for (const gang::Wait& w : waits) {
    if (w.reason != gang::kWaitResources) continue;
    const auto name = step.queue_of.find(w.key);
    if (name == step.queue_of.end()) continue;
    const auto limit = step.limits.find(name->second);
    if (limit == step.limits.end()) continue;
    const Resources& deserved = limit->second.deserved;
    if (!deserved.IsZero() && limit->second.allocated.DominantShare(deserved) < 1.0) {
      owed_waiting = name->second;
      break;
    }
  }
  QueueBoard board{.at = at};
  for (const auto& [name, share] : step.shares.queues) {
    QueueRoom room{.path = share.path, .deserved = share.deserved, .owed_waiting = owed_waiting};
    if (const auto q = queues.find(name); q != queues.end()) room.open = q->second.IsOpen();
    if (const auto limit = step.limits.find(name); limit != step.limits.end()) {
      room.room = limit->second.room;
      room.allocated = limit->second.allocated;
    }
    if (const auto taken = reserved.find(name); taken != reserved.end()) {
      room.allocated += taken->second;
      if (room.room) {
        for (const auto& [resource, amount] : taken->second.entries()) {
          if (room.room->Has(resource)) room.room->Set(resource, room.room->Get(resource) - amount);
        }
      }
    }
    board.queues.emplace(name, std::move(room));
  }
  return board;
}

void ApplyReclaimHysteresis(QueueStep& step, ReclaimMemory& memory, Time now,
                            const ReclaimTiming& timing) {
  std::erase_if(memory.recent,
                [&](const ReclaimMemory::Taken& t) { return now - t.at >= timing.cooldown; });
  std::map<std::string, Time> owed;
  for (const auto& [name, q] : step.shares.queues) {
    if (q.deserved.IsZero() || q.share >= 1.0) continue;
    const auto since = memory.owed_since.find(name);
    owed[name] = since == memory.owed_since.end() ? now : since->second;
  }
  memory.owed_since = std::move(owed);
  for (auto& [name, limit] : step.limits) {
    const auto since = memory.owed_since.find(name);
    limit.reclaim_allowed = since != memory.owed_since.end() && now - since->second >= timing.after;
    limit.spare.clear();
    for (const ReclaimMemory::Taken& t : memory.recent) {
      if (t.from == name) limit.spare.push_back(t.by);
    }
  }
}

void RecordReclaim(ReclaimMemory& memory, const std::string& by,
                   const std::vector<std::string>& from, Time now) {
  for (const std::string& queue : from) memory.recent.push_back({by, queue, now});
}

}  // namespace muster::extender
