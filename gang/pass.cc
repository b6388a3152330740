// RunPass: expiry, admission, planning in GangOrder, then at most one
// preemption. The view is copied once and updated as decisions are taken, so
// every later gang sees the capacity the earlier ones left; gangs are planned
// on one NodeTable (node_table.h) that mirrors it.
#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "gang/feasibility.h"
#include "gang/gang.h"
#include "gang/node_table.h"
#include "gang/planner.h"
#include "gang/preemption.h"
#include "gang/queue_limits.h"
#include "model/quantity.h"

namespace muster::gang {

bool AwaitsAdmission(const Gang& gang) {
  return gang.phase.empty() || gang.phase == kPodGroupPending;
}

bool PassDecides(const Gang& gang) {
  const auto reserved = [](const Member& m) { return m.state == MemberState::kReserved; };
  return std::ranges::any_of(gang.members, AwaitsPlacement) ||
         (gang.reserved_since && std::ranges::any_of(gang.members, reserved)) ||
         std::ranges::none_of(gang.members, CountsPlaced);
}

// spec.minResources as node resources. Volcano fills it with quota names
// ("requests.cpu", "count/pods", "limits.memory"); the requests are what a
// node must hold, the rest has no node counterpart.
Resources AdmissionNeed(const Gang& gang) {
  Resources need;
  if (!gang.spec.min_resources) return need;
  for (const auto& [full_name, amount] : gang.spec.min_resources->entries()) {
    std::string_view name = full_name;
    if (name.starts_with("limits.") || name.starts_with("count/")) continue;
    if (name.starts_with("requests.")) name.remove_prefix(std::string_view("requests.").size());
    need.Set(name, std::max(need.Get(name), amount));
  }
  return need;
}

namespace {

// Gives back (sign +1) or takes (-1) `amount` and the GPUs of `gpus` on the
// node: a GPU once held is no longer free, and a GPU given back is once no
// holder is left on it.
std::optional<size_t> ChangeFree(ClusterView& view, std::string_view node, const Resources& amount,
                                 const GpuHolding& gpus, int sign) {
  const std::optional<size_t> n = FindNode(view, node);
  if (!n) return n;
  NodeView& v = view.nodes[*n];
  if (sign > 0) {
    v.free += amount;
  } else {
    v.free -= amount;
  }
  if (gpus.empty()) return n;
  AccountHolding(v.gpu_uses, gpus, -sign);
  for (uint32_t m = gpus.Gpus(); m != 0; m &= m - 1) {
    const int g = std::countr_zero(m);
    const uint32_t bit = uint32_t{1} << g;
    if (sign < 0) {
      v.free_gpus &= ~bit;
    } else if (v.gpu_uses[static_cast<size_t>(g)].idle() &&
               (!v.gpu_cards || (static_cast<size_t>(g) < v.gpu_cards->size() &&
                                 (*v.gpu_cards)[static_cast<size_t>(g)].healthy))) {
      v.free_gpus |= bit;
    }
  }
  return n;
}

void AddFree(ClusterView& view, std::string_view node, const Resources& amount,
             const GpuHolding& gpus = {}) {
  ChangeFree(view, node, amount, gpus, +1);
}

// What the gang's pending members `reserve` request (no pod slots): what
// counts against its queues' capability.
Resources RequestOf(PodFacts& facts, const Gang& gang, const std::vector<Assignment>& reserve) {
  Resources need;
  for (const Assignment& a : reserve) {
    const auto member = std::ranges::find_if(
        gang.members, [&](const Member& m) { return m.pod->meta.uid == a.pod_uid; });
    if (member != gang.members.end()) need += facts.Of(*member->pod).request;
  }
  return need;
}

// Why `need` does not fit the capability left in the gang's queues ("" when
// it fits).
std::string QueueShortfall(const Gang& gang, const Resources& need, const QueueLimits& queues) {
  for (const std::string& name : gang.queues) {
    const auto it = queues.find(name);
    if (it == queues.end() || !it->second.room) continue;
    const Resources& room = *it->second.room;
    const std::vector<std::string> over = need.Exceeding(room, /*absent_is_unlimited=*/true);
    if (over.empty()) continue;
    std::string message = "queue " + name + " is at its capability: needs";
    for (const std::string& r : over) {
      message += " " + r + "=" + FormatResourceQuantity(r, need.Get(r)) + " (" +
                 FormatResourceQuantity(r, std::max<int64_t>(room.Get(r), 0)) + " left)";
    }
    return message;
  }
  return "";
}

// "<what> needs cpu=8 (2 free), nvidia.com/gpu=16 (8 free)": the
// resources of `need` beyond `free`.
std::string Unfit(std::string_view what, const Resources& need, const Resources& free) {
  std::string message = std::string(what) + " needs";
  bool first = true;
  for (const std::string& r : need.Exceeding(free, /*absent_is_unlimited=*/false)) {
    message += (first ? " " : ", ") + r + "=" + FormatResourceQuantity(r, need.Get(r)) + " (" +
               FormatResourceQuantity(r, std::max<int64_t>(free.Get(r), 0)) + " free)";
    first = false;
  }
  return message;
}

// (a) A reservation nobody claimed within the timeout goes back to the pool;
// its members are pending again (planned from the next pass on).
void ExpireReservations(ClusterView& view, std::vector<Gang>& gangs, Time now, Duration timeout,
                        std::vector<std::string>& expired) {
  for (Gang& gang : gangs) {
    if (!gang.reserved_since || now - *gang.reserved_since < timeout) continue;
    bool released = false;
    for (Member& m : gang.members) {
      if (m.state != MemberState::kReserved) continue;
      AddFree(view, m.node, SlotRequest(*m.pod));
      m.state = MemberState::kPending;
      m.node.clear();
      released = true;
    }
    if (!released) continue;
    gang.reserved_since.reset();
    expired.push_back(gang.key);
  }
}

Resources SchedulableFree(const ClusterView& view) {
  Resources total;
  for (const NodeView& node : view.nodes) {
    // An overcommitted node cannot lend its deficit to the others.
    if (node.schedulable) total += node.free.ClampedAtZero();
  }
  return total;
}

// What the gang is admitted or reserved with counts against its queues for
// the gangs after it: the capability left in every queue of its path, and
// its own queue's allocation (for its deserved share).
void ChargeQueues(const Gang& gang, Resources need, QueueLimits& queues) {
  for (const std::string& name : gang.queues) {
    const auto it = queues.find(name);
    if (it == queues.end() || !it->second.room) continue;
    Resources& room = *it->second.room;
    // Only what the capability names is limited: absent stays unlimited.
    for (const auto& [resource, amount] : need.entries()) {
      if (room.Has(resource)) room.Set(resource, room.Get(resource) - amount);
    }
  }
  if (QueueLimit* limit = LimitOf(gang.queues, queues)) {
    need.Erase(kPods);
    limit->allocated += need;
  }
}

// Whether the gang's queue is owed room for it: what the queue holds and has
// admitted, plus the gang's minimum, within its deserved share. Reclaim
// (MayReclaim) makes that room once the gang's pods exist.
bool OwedRoomFor(const Gang& gang, const Resources& need, const QueueLimits& queues) {
  const QueueLimit* limit = LimitOf(gang.queues, queues);
  return limit && !limit->deserved.IsZero() && !need.IsZero() &&
         WithinDeserved(limit->allocated + need, *limit);
}

// (b) Volcano's enqueue: admitted gangs about to claim their minimum count
// against the free capacity, so the reconciler does not create pods for
// more gangs than the cluster can start. A gang that does not fit the free
// capacity still enters when its queue is owed room for it (with reclaim
// on): a Volcano Job's pods exist only once it is admitted, so without this
// its queue could never reclaim from a full cluster. It takes nothing from
// the free capacity (reclaim, not the free pool, makes its room).
// A gang refused admission says why (its PodGroup's Unschedulable
// condition): a Volcano Job has no pods yet, so nothing else would.
void Admit(const ClusterView& view, const std::vector<Gang>& gangs, QueueLimits queues,
           bool reclaim, PassResult& result) {
  Resources left = SchedulableFree(view);
  for (const Gang& gang : gangs) {
    if (std::ranges::any_of(gang.members, CountsPlaced)) continue;  // in the view already
    const Resources need = AdmissionNeed(gang);
    if (!AwaitsAdmission(gang)) {
      left -= need;
    } else if (std::string full = QueueShortfall(gang, need, queues); !full.empty()) {
      result.waits.push_back(Wait{
          .key = gang.key, .reason = kWaitQueueCapability, .message = "not admitted: " + full});
      continue;
    } else if (need.FitsIn(left)) {
      left -= need;
      result.admitted.push_back(gang.key);
    } else if (reclaim && OwedRoomFor(gang, need, queues)) {
      result.admitted.push_back(gang.key);
    } else {
      result.waits.push_back(
          Wait{.key = gang.key,
               .reason = kWaitResources,
               .message = "not admitted: " + Unfit("spec.minResources", need, left)});
      continue;
    }
    ChargeQueues(gang, need, queues);
  }
}

// Whether the pass leaves the gang's members alone: it awaits admission, has
// something to be admitted by (minResources) and was not admitted now -
// Volcano allocates only jobs its enqueue let in (Inqueue and beyond).
bool NotAdmitted(const Gang& gang, const PassResult& result) {
  return AwaitsAdmission(gang) && gang.spec.min_resources.has_value() &&
         std::ranges::none_of(gang.members, CountsPlaced) &&
         std::ranges::find(result.admitted, gang.key) == result.admitted.end();
}

// Takes the plan's capacity off the view, and off the table that mirrors it.
void Reserve(ClusterView& view, NodeTable& table, const Gang& gang, const GangPlan& plan) {
  for (const Assignment& a : plan.reserve) {
    const auto member = std::ranges::find_if(
        gang.members, [&](const Member& m) { return m.pod->meta.uid == a.pod_uid; });
    if (member == gang.members.end()) continue;
    if (const std::optional<size_t> n =
            ChangeFree(view, a.node, table.facts().Of(*member->pod).slot, a.gpus, -1)) {
      table.Sync(*n);
    }
  }
}

// The nodes a blocked head gang will start on: the fewest, nearest to free
// (most free GPUs now, then most free CPU), on which its minimum fits once
// they are empty. Empty when it fits nowhere even so. `table` mirrors `view`
// (no node excluded).
std::vector<size_t> EarmarkFor(const Gang& head, const ClusterView& view, NodeTable& table) {
  std::vector<int> classes;  // of the members to place
  for (const Member& m : head.members) {
    if (AwaitsPlacement(m)) classes.push_back(table.AdmitsClass(*m.pod));
  }
  std::vector<size_t> order;
  for (size_t n = 0; n < view.nodes.size(); ++n) {
    const bool usable = view.nodes[n].schedulable &&
                        std::ranges::any_of(classes, [&](int c) { return table.Admits(c, n); });
    if (usable) order.push_back(n);
  }
  std::ranges::stable_sort(order, std::greater<>{}, [&](size_t n) {
    const int64_t* free = table.Free(n);
    return std::pair(free[table.gpu()], free[table.cpu()]);
  });
  // The shortest prefix whose emptied nodes hold the minimum (binary search:
  // a longer prefix never holds less). The emptied nodes are the view's in
  // name order, all but the prefix's left out.
  NodeTable emptied(view, table.dims(), NodeTable::Source::kEmptied, table.shared_facts());
  std::vector<char> in(view.nodes.size(), 0);
  auto fits_on = [&](size_t count) {
    std::ranges::fill(in, 0);
    for (size_t i = 0; i < count; ++i) in[order[i]] = 1;
    for (size_t n = 0; n < in.size(); ++n) {
      if (!in[n]) emptied.Exclude(n);
      if (in[n]) emptied.Include(n);
    }
    return MinimumFits(head, emptied);
  };
  if (order.empty() || !fits_on(order.size())) return {};
  size_t lo = 1, hi = order.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fits_on(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  order.resize(lo);
  return order;
}

// `view` cut down to `nodes` (sorted names); the nodes `table` excludes
// (earmarked for the head of the line) offer nothing there.
ClusterView Restricted(const ClusterView& view, const NodeTable& table,
                       const std::vector<std::string>& nodes) {
  ClusterView out;
  out.nodes.reserve(nodes.size());
  for (const std::string& name : nodes) {
    const std::optional<size_t> n = FindNode(view, name);
    if (!n) continue;
    out.nodes.push_back(view.nodes[*n]);
    if (table.Excluded(*n)) out.nodes.back().free = Resources();
  }
  return out;
}

// The free GPUs of the schedulable `nodes` of `view`, in thousandths; the
// nodes `table` excludes offer none.
int64_t FreeGpus(const ClusterView& view, const NodeTable& table,
                 const std::vector<std::string>& nodes) {
  int64_t gpus = 0;
  for (const std::string& name : nodes) {
    const std::optional<size_t> n = FindNode(view, name);
    if (n && view.nodes[*n].schedulable && !table.Excluded(*n)) {
      gpus += std::max<int64_t>(view.nodes[*n].free.milli_gpus(), 0);
    }
  }
  return gpus;
}

// Where a gang is planned: the pass's view of what is left, the table that
// mirrors it (less the head of the line's nodes once there is one) and its
// kAllocatable twin, made on first need.
struct Where {
  const ClusterView& view;
  NodeTable& table;
  std::unique_ptr<NodeTable>& empty;
};

// PlanGang on the part of `where` that `nodes` names.
std::variant<GangPlan, Wait> PlanOn(const Gang& gang, const Where& where,
                                    const std::vector<std::string>& nodes, int max_extras) {
  const ClusterView view = Restricted(where.view, where.table, nodes);
  NodeTable table(view, where.table.dims(), NodeTable::Source::kFree, where.table.shared_facts());
  std::unique_ptr<NodeTable> empty;
  return PlanGang(gang, table, empty, max_extras);
}

// PlanGang within the gang's network domains (Gang::domains): the lowest
// tier first, the tightest domain first within a tier; then anywhere unless
// the domains are required. A domain's view is cut only when it is tried.
std::variant<GangPlan, Wait> PlanPlaced(const Gang& gang, const Where& where, int max_extras = -1) {
  if (!gang.domains) return PlanGang(gang, where.table, where.empty, max_extras);
  std::vector<std::tuple<int, int64_t, const NetworkDomain*>> tries;
  for (const NetworkDomain& d : *gang.domains) {
    if (d.tier <= gang.domain_tier) {
      tries.emplace_back(d.tier, FreeGpus(where.view, where.table, d.nodes), &d);
    }
  }
  std::ranges::stable_sort(tries, [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  bool fits_some_day = false;
  int32_t placeable = 0;
  int best_tier = 0;
  // Within the lowest tier that holds the gang, the domain whose plan gives
  // the members the best GPU links (GpuCost: short of the best their node
  // model has, then GPUs stranded), the tightest of those. Without GPU
  // layouts every cost is 0: the tightest domain.
  std::optional<GangPlan> best;
  for (const auto& [tier, free, domain] : tries) {
    if (best && tier > best_tier) break;
    std::variant<GangPlan, Wait> decision = PlanOn(gang, where, domain->nodes, max_extras);
    if (GangPlan* plan = std::get_if<GangPlan>(&decision)) {
      if (plan->GpuCost() <= std::pair(0, 0)) return decision;  // nothing better to find
      if (!best || plan->GpuCost() < best->GpuCost()) {
        best = std::move(*plan);
        best_tier = tier;
      }
      continue;
    }
    const Wait& wait = std::get<Wait>(decision);
    if (wait.reason == kWaitMembers) return decision;
    fits_some_day = fits_some_day || wait.reason != kWaitNeverFits;
    placeable = std::max(placeable, wait.placeable);
  }
  if (best) return *std::move(best);
  if (!gang.domains_required) return PlanGang(gang, where.table, where.empty, max_extras);
  const std::string level = gang.domain_level.empty() ? "network domain" : gang.domain_level;
  return Wait{
      .key = gang.key,
      .reason = fits_some_day ? kWaitNetworkTopology : kWaitNeverFits,
      .message = "its minimum must fit in one " + level + ": " +
                 (fits_some_day ? "none has room now (at most " + std::to_string(placeable) +
                                      " members placeable in one)"
                                : "none is large enough even when empty"),
      .placeable = placeable};
}

// Why the gang may not take `need` beyond its queue's deserved share while
// `owed_waiting` (a queue below its own) waits for capacity ("" when it
// may): capacity is lent past a deserved share only when no queue owed it
// wants it (Volcano's proportion plugin never lends; lending it anyway
// would leave the owed queue to reclaim it back).
std::string OverShare(const Gang& gang, const Resources& need, const QueueLimits& queues,
                      const std::string& owed_waiting) {
  const QueueLimit* limit = LimitOf(gang.queues, queues);
  if (owed_waiting.empty() || !limit || gang.queues.front() == owed_waiting ||
      WithinDeserved(limit->allocated + need, *limit)) {
    return "";
  }
  return "queue " + gang.queues.front() + " would go past its deserved share while queue " +
         owed_waiting + ", below its own, waits for capacity";
}

// Why the gang's queues hold it back from reserving `need`: the wait reason
// and message, or an empty message when they do not.
std::pair<std::string_view, std::string> QueueHold(const Gang& gang, const Resources& need,
                                                   const QueueLimits& queues,
                                                   const std::string& owed_waiting) {
  if (std::string full = QueueShortfall(gang, need, queues); !full.empty()) {
    return {kWaitQueueCapability, std::move(full)};
  }
  return {kWaitQueueOverShare, OverShare(gang, need, queues, owed_waiting)};
}

// Cuts a plan down to what the gang's queues allow when only members beyond
// its minimum are at stake: a gang whose minimum is placed already (an
// elastic gang that runs, Volcano's PodGroup of a ReplicaSet) takes, in the
// plan's order, the members that still fit; so does a gang of one, whose
// minimum is any one member. A gang still short of a larger minimum keeps
// its plan whole: all or nothing.
// True when some members are left.
bool TrimToQueue(PodFacts& facts, const Gang& gang, const QueueLimits& queues,
                 const std::string& owed_waiting, GangPlan& plan) {
  const auto placed = std::ranges::count_if(gang.members, CountsPlaced);
  if (placed < gang.spec.min_member && gang.spec.min_member > 1) return false;
  std::vector<Assignment> kept;
  for (const Assignment& a : plan.reserve) {
    kept.push_back(a);
    if (!QueueHold(gang, RequestOf(facts, gang, kept), queues, owed_waiting).second.empty()) {
      kept.pop_back();
    }
  }
  if (kept.empty()) return false;
  std::erase_if(plan.placement, [&](const Assignment& a) {
    return std::ranges::find(plan.reserve, a) != plan.reserve.end() &&
           std::ranges::find(kept, a) == kept.end();
  });
  plan.reserve = std::move(kept);
  return true;
}

// Whether the pass plans the gang at all: it has members to place, was
// admitted (or needs no admission) and did not just expire.
bool Plannable(const Gang& gang, const PassResult& result) {
  return std::ranges::any_of(gang.members, AwaitsPlacement) && !NotAdmitted(gang, result) &&
         std::ranges::find(result.expired, gang.key) == result.expired.end();
}

// What the gang's placed, unfinished members request (no pod slots).
Resources HeldBy(const Gang& gang) {
  Resources held;
  for (const Member& m : gang.members) {
    if (CountsPlaced(m) && !m.Finished()) held += m.pod->EffectiveRequest();
  }
  held.Erase(kPods);
  return held;
}

// The planning state PlanAll's two steps share.
struct Planning {
  ClusterView& view;
  // Mirrors `view`; once a head of the line is found, its earmarked nodes
  // are excluded (they offer nothing to the gangs behind it).
  NodeTable& table;
  std::unique_ptr<NodeTable> empty;  // the table's kAllocatable twin (PlanGang)
  bool masked = false;               // a head of the line was found
  QueueLimits queues;
  std::string owed_waiting;  // the first queue below its share with a gang short of capacity
  PassResult& result;
  // Reserves `plan` of `gang` on the view and table and charges its queues.
  // A plan never lands on an earmarked node (planned on the masked table).
  void Take(const Gang& gang, const GangPlan& plan) {
    ChargeQueues(gang, RequestOf(table.facts(), gang, plan.reserve), queues);
    Reserve(view, table, gang, plan);
  }
  Where current() { return Where{.view = view, .table = table, .empty = empty}; }
};

// A plan's new members as reserved in `gang` (a copy being planned on).
void MarkReserved(Gang& gang, const GangPlan& plan) {
  for (const Assignment& a : plan.reserve) {
    for (Member& m : gang.members) {
      if (m.pod->meta.uid != a.pod_uid) continue;
      m.state = MemberState::kReserved;
      m.node = a.node;
    }
  }
}

// Adds `more` (a later plan of the same gang) to `plan`.
void Merge(GangPlan& plan, const GangPlan& more) {
  plan.reserve.insert(plan.reserve.end(), more.reserve.begin(), more.reserve.end());
  std::ranges::sort(plan.reserve, {}, &Assignment::pod_name);
  plan.placement = more.placement;  // planned on the gang with the earlier ones reserved
  plan.link_shortfall += more.link_shortfall;
  plan.gpus_stranded += more.gpus_stranded;
}

// At most this many members beyond their minimums are shared out one by
// one in a pass; the rest wait a pass (passes run every few milliseconds).
constexpr int kSharedExtrasPerPass = 1024;

// A gang's turns at members beyond its minimum (ShareExtras).
struct Turn {
  Gang gang;  // its plans so far marked reserved
  Resources held;
  size_t order;                              // in the pass's gangs
  bool left_to_place;                        // a member not planned yet: without one a turn is void
  std::tuple<int64_t, double, size_t> rank;  // who goes next: the lowest
};

// The candidates' turns; none when no candidate has a member left to place
// (no turn would change anything then).
// `total`: what the schedulable nodes offer, the measure of a dominant share.
std::vector<Turn> TurnsOf(const Planning& p, const std::vector<Gang>& gangs,
                          const std::vector<size_t>& candidates,
                          const std::map<std::string, size_t>& plan_of, Resources& total) {
  std::vector<char> left(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Gang& gang = gangs[candidates[i]];
    const auto plan = plan_of.find(gang.key);
    const size_t planned = plan == plan_of.end() ? 0 : p.result.plans[plan->second].reserve.size();
    left[i] = static_cast<size_t>(std::ranges::count_if(gang.members, AwaitsPlacement)) > planned;
  }
  if (std::ranges::none_of(left, [](char c) { return c != 0; })) return {};
  std::vector<Turn> turns;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Turn turn{.gang = gangs[candidates[i]], .order = candidates[i], .left_to_place = left[i] != 0};
    if (const auto plan = plan_of.find(turn.gang.key); plan != plan_of.end()) {
      MarkReserved(turn.gang, p.result.plans[plan->second]);
    }
    turns.push_back(std::move(turn));
  }
  for (const NodeView& node : p.view.nodes) {
    if (node.schedulable) total += node.node->allocatable;
  }
  for (Turn& turn : turns) {
    turn.held = HeldBy(turn.gang);
    turn.rank = {-static_cast<int64_t>(turn.gang.priority), turn.held.DominantShare(total),
                 turn.order};
  }
  return turns;
}

// One turn: at most `max` (< 0: every) more members of the turn's gang, as
// its queues allow. False when it gets none.
bool TakeTurn(Planning& p, Turn& turn, int max, const Resources& total,
              std::map<std::string, size_t>& plan_of) {
  if (!turn.left_to_place) return false;
  Gang& gang = turn.gang;
  std::variant<GangPlan, Wait> decision = PlanPlaced(gang, p.current(), max);
  GangPlan* plan = std::get_if<GangPlan>(&decision);
  PodFacts& facts = p.table.facts();
  if (plan == nullptr || plan->reserve.empty()) return false;
  if (!QueueHold(gang, RequestOf(facts, gang, plan->reserve), p.queues, p.owed_waiting)
           .second.empty() &&
      !TrimToQueue(facts, gang, p.queues, p.owed_waiting, *plan)) {
    return false;
  }
  p.Take(gang, *plan);
  turn.held += RequestOf(facts, gang, plan->reserve);
  turn.held.Erase(kPods);
  std::get<1>(turn.rank) = turn.held.DominantShare(total);
  MarkReserved(gang, *plan);
  if (auto it = plan_of.find(gang.key); it != plan_of.end()) {
    Merge(p.result.plans[it->second], *plan);
  } else {
    plan_of[gang.key] = p.result.plans.size();
    p.result.plans.push_back(std::move(*plan));
  }
  return true;
}

// (c2) Members beyond their gangs' minimums, when several gangs want room:
// one at a time, each to the gang of highest priority that holds the least
// (its dominant share of the cluster: DRF) - Volcano's allocate action gives
// a ready job one task per turn in its job order, priority then DRF
// (pkg/scheduler/actions/allocate/allocate.go, pkg/scheduler/plugins/drf/
// drf.go). So two elastic Jobs larger than the cluster split it instead of
// the first taking all. The last gang left takes the rest at once.
// `candidates`: indices into `gangs` whose minimum is placed, in order.
void ShareExtras(Planning& p, const std::vector<Gang>& gangs,
                 const std::vector<size_t>& candidates) {
  std::map<std::string, size_t> plan_of;  // gang key -> index in result.plans
  for (size_t i = 0; i < p.result.plans.size(); ++i) plan_of[p.result.plans[i].key] = i;
  Resources total;
  std::vector<Turn> turns = TurnsOf(p, gangs, candidates, plan_of, total);
  if (turns.empty()) return;
  for (int budget = kSharedExtrasPerPass; !turns.empty() && budget > 0; --budget) {
    const auto next = std::ranges::min_element(turns, {}, &Turn::rank);
    const int max = turns.size() == 1 ? -1 : 1;
    if (!TakeTurn(p, *next, max, total, plan_of)) {
      turns.erase(next);
      continue;
    }
    if (max < 0) turns.erase(next);
  }
  // In GangOrder, as the plans of the first step are (every plan is of a
  // candidate).
  std::map<std::string, size_t> order;
  for (size_t index : candidates) order[gangs[index].key] = index;
  std::ranges::stable_sort(p.result.plans, {},
                           [&](const GangPlan& plan) { return order[plan.key]; });
}

// Takes the plan unless the gang's queues hold it back; then the gang waits
// when its minimum is not placed yet. True when its minimum is placed (it
// may get extras).
bool TakePlan(const Gang& gang, GangPlan& plan, Planning& p) {
  if (plan.reserve.empty()) return true;  // minimum met; the extras (if any) come next
  PodFacts& facts = p.table.facts();
  auto [reason, why] =
      QueueHold(gang, RequestOf(facts, gang, plan.reserve), p.queues, p.owed_waiting);
  if (!why.empty() && TrimToQueue(facts, gang, p.queues, p.owed_waiting, plan)) why.clear();
  if (!why.empty()) {
    const auto placed = std::ranges::count_if(gang.members, CountsPlaced);
    if (placed < std::max(gang.spec.min_member, 1)) {
      p.result.waits.push_back(Wait{.key = gang.key,
                                    .reason = reason,
                                    .message = std::move(why),
                                    .placeable = static_cast<int32_t>(placed)});
    }
    return false;
  }
  p.Take(gang, plan);
  p.result.plans.push_back(std::move(plan));
  return true;
}

// The first gang short of capacity that has waited long enough becomes the
// head of the line (PassConfig::head_of_line_after): the nodes it will start
// on offer nothing to the gangs behind it.
void HeadOfLine(const Gang& gang, Time now, const PassConfig& config, Planning& p, Wait& wait) {
  if (p.masked || wait.reason != kWaitResources || now - gang.created < config.head_of_line_after) {
    return;
  }
  const std::vector<size_t> earmarked = EarmarkFor(gang, p.view, p.table);
  if (earmarked.empty()) return;
  p.masked = true;
  for (size_t n : earmarked) p.table.Exclude(n);
  p.result.head = gang.key;
  for (size_t n : earmarked) p.result.earmarked.push_back(p.view.nodes[n].name());
  wait.message +=
      "; head of the line: " + std::to_string(earmarked.size()) + " node(s) kept free for it";
}

// (c) Plans every gang with members to place (but the just expired), in
// order, each on what the earlier plans left; once a head of the line is
// found, the gangs behind it plan without its earmarked nodes; once a gang
// of a queue below its deserved share waits for capacity, no other queue
// plans past its own (OverShare). When more than one gang is planned, each
// first gets only its minimum, and ShareExtras hands out the rest. Returns
// the gang preemption may serve: the first that waits for capacity and has
// no preemption in flight.
const Gang* PlanAll(ClusterView& view, NodeTable& table, const std::vector<Gang>& gangs, Time now,
                    const PassConfig& config, QueueLimits queues, PassResult& result) {
  const Gang* preemptor = nullptr;
  Planning p{.view = view, .table = table, .queues = std::move(queues), .result = result};
  const bool shared =
      std::ranges::count_if(gangs, [&](const Gang& g) { return Plannable(g, result); }) > 1;
  std::vector<size_t> started;  // gangs whose minimum is placed, for ShareExtras
  for (size_t index = 0; index < gangs.size(); ++index) {
    const Gang& gang = gangs[index];
    // An expired gang sits this pass out, so the capacity it let go goes to
    // the gangs behind it first instead of straight back to it; a gang not
    // admitted has its wait already.
    if (!Plannable(gang, result)) continue;
    std::variant<GangPlan, Wait> decision = PlanPlaced(gang, p.current(), shared ? 0 : -1);
    if (GangPlan* plan = std::get_if<GangPlan>(&decision)) {
      if (TakePlan(gang, *plan, p)) started.push_back(index);
      continue;
    }
    Wait& wait = std::get<Wait>(decision);
    const bool short_of_capacity = wait.reason == kWaitResources;
    if (!preemptor && short_of_capacity && !gang.preempting) preemptor = &gang;
    if (const QueueLimit* limit = LimitOf(gang.queues, p.queues);
        p.owed_waiting.empty() && short_of_capacity && limit &&
        Owed(limit->allocated, limit->deserved)) {
      p.owed_waiting = gang.queues.front();
    }
    HeadOfLine(gang, now, config, p, wait);
    result.waits.push_back(std::move(wait));
  }
  if (shared) ShareExtras(p, gangs, started);
  return preemptor;
}

}  // namespace

PassResult RunPass(const ClusterView& view, std::vector<Gang> gangs,
                   const std::vector<VictimCandidate>& victims, Time now, const PassConfig& config,
                   const QueueLimits& queues) {
  PassResult result;
  ClusterView left = view;
  // Running gangs are most of a large cluster's and get no decision.
  std::erase_if(gangs, [](const Gang& g) { return !PassDecides(g); });
  std::ranges::sort(gangs, GangOrder);
  ExpireReservations(left, gangs, now, config.reservation_timeout, result.expired);
  Admit(left, gangs, queues, config.reclaim, result);
  // Every gang is planned on one table of what is left, indexed: a pass of
  // a thousand gangs on thousands of nodes need not walk every node per
  // member (node_table.h).
  auto facts = std::make_shared<PodFacts>();
  NodeTable table(left, NodeTable::DimsOf(gangs, *facts), NodeTable::Source::kFree, facts);
  table.BuildIndex();
  const Gang* preemptor = PlanAll(left, table, gangs, now, config, queues, result);
  // The preemptor is not reserved for now: its capacity frees only once the
  // victims are gone, and a later pass plans it then, ahead of lower gangs.
  if (config.preemption && preemptor) {
    int spared = 0;
    result.preemption = ChoosePreemption(left, table, *preemptor, victims, queues, config, spared);
    // Say why preemption did not help when conformance is the reason it
    // might not have: the user sees the gangs it will never take.
    if (!result.preemption && spared > 0) {
      for (Wait& w : result.waits) {
        if (w.key != preemptor->key) continue;
        w.message += "; preemption spares " + std::to_string(spared) +
                     (spared == 1 ? " gang" : " gangs") +
                     " with kube-system or system-critical pods";
      }
    }
  }
  return result;
}

}  // namespace muster::gang
