// RunPass: expiry, admission, planning in GangOrder, then at most one
// preemption. The view is copied once and updated as decisions are taken, so
// every later gang sees the capacity the earlier ones left.
#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "gang/feasibility.h"
#include "gang/gang.h"
#include "gang/planner.h"
#include "model/quantity.h"

namespace muster::gang {

bool AwaitsAdmission(const Gang& gang) {
  return gang.phase.empty() || gang.phase == kPodGroupPending;
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
// holder is left on it. `table`: mirrors `view`, kept in step (may be null).
void ChangeFree(ClusterView& view, std::string_view node, const Resources& amount,
                const GpuHolding& gpus, int sign, NodeTable* table) {
  const std::optional<size_t> n = FindNode(view, node);
  if (!n) return;
  NodeView& v = view.nodes[*n];
  if (sign > 0) {
    v.free += amount;
  } else {
    v.free -= amount;
  }
  if (table != nullptr) table->Refresh(*n);
  if (gpus.empty()) return;
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
}

void AddFree(ClusterView& view, std::string_view node, const Resources& amount,
             const GpuHolding& gpus = {}, NodeTable* table = nullptr) {
  ChangeFree(view, node, amount, gpus, +1, table);
}

void TakeFree(ClusterView& view, std::string_view node, const Resources& amount,
              const GpuHolding& gpus = {}, NodeTable* table = nullptr) {
  ChangeFree(view, node, amount, gpus, -1, table);
}

// Calls fn(member, assignment) for each assignment of `reserve` whose pod
// is a member of `gang`. Members and a plan's assignments are both in
// pod-name order (Gang::members; plans are sorted so), so the search for
// each resumes after the last match: a plan for a gang of m members costs
// m compares, not m x m (for gangs of up to 100 pods, a twentieth of a pass
// over 1000 waiting gangs). Any order still finds every member.
template <typename Members, typename Fn>
void ForEachAssigned(Members& members, const std::vector<Assignment>& reserve, Fn fn) {
  const size_t count = members.size();
  size_t next = 0;
  for (const Assignment& a : reserve) {
    for (size_t i = 0; i < count; ++i) {
      auto& member = members[(next + i) % count];
      if (member.pod->meta.uid != a.pod_uid) continue;
      fn(member, a);
      next = (next + i + 1) % count;
      break;
    }
  }
}

// What the gang's pending members `reserve` request (no pod slots): what
// counts against its queues' capability.
Resources RequestOf(const Gang& gang, const std::vector<Assignment>& reserve) {
  Resources need;
  ForEachAssigned(gang.members.all(), reserve,
                  [&](const Member& m, const Assignment&) { need += m.request; });
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
    for (Member& m : gang.members.Edit()) {
      if (m.state != MemberState::kReserved) continue;
      AddFree(view, m.node, SlotRequest(m));
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

// The limit of the queue a gang or victim is in (the first of its path), or
// null; const when `queues` is.
template <typename Limits>
auto* LimitOf(const std::vector<std::string>& path, Limits& queues) {
  const auto it = path.empty() ? queues.end() : queues.find(path.front());
  return it == queues.end() ? nullptr : &it->second;
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

// Whether `held` (requests) is within the queue's deserved share.
bool WithinDeserved(Resources held, const QueueLimit& limit) {
  held.Erase(kPods);
  return held.DominantShare(limit.deserved) <= 1.0 + 1e-9;
}

// True when a queue holding `allocated` is short of what it deserves: its
// share is below 1 on every resource (a queue deserving nothing never is).
bool Owed(const Resources& allocated, const Resources& deserved) {
  return !deserved.IsZero() && allocated.DominantShare(deserved) < 1.0;
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

// `table`: mirrors `view`, kept in step (may be null).
void Reserve(ClusterView& view, const Gang& gang, const GangPlan& plan, NodeTable* table) {
  ForEachAssigned(gang.members.all(), plan.reserve, [&](const Member& m, const Assignment& a) {
    TakeFree(view, a.node, SlotRequest(m), a.gpus, table);
  });
}

// The nodes a blocked head gang will start on: the fewest, nearest to free
// (most free GPUs now, then most free CPU), on which its minimum fits once
// they are empty. Empty when it fits nowhere even so.
std::vector<size_t> EarmarkFor(const Gang& head, const ClusterView& view) {
  std::vector<size_t> order;
  for (size_t n = 0; n < view.nodes.size(); ++n) {
    const NodeView& node = view.nodes[n];
    const bool usable = node.schedulable && std::ranges::any_of(head.members, [&](const Member& m) {
                          return AwaitsPlacement(m) && NodeAdmits(node, *m.pod);
                        });
    if (usable) order.push_back(n);
  }
  std::ranges::stable_sort(order, [&](size_t a, size_t b) {
    const Resources& fa = view.nodes[a].free;
    const Resources& fb = view.nodes[b].free;
    return std::tuple(fa.milli_gpus(), fa.milli_cpu()) >
           std::tuple(fb.milli_gpus(), fb.milli_cpu());
  });
  // The shortest prefix whose emptied nodes hold the minimum (binary search:
  // a longer prefix never holds less).
  auto fits_on = [&](size_t count) {
    ClusterView empty;
    for (size_t i = 0; i < count; ++i) {
      NodeView node = view.nodes[order[i]];
      node.free = node.node->allocatable;
      // Emptied: every GPU idle.
      node.gpu_uses = {};
      if (node.gpu_cards) node.free_gpus = (uint32_t{1} << node.gpu_cards->size()) - 1;
      empty.nodes.push_back(std::move(node));
    }
    std::ranges::sort(empty.nodes, {}, &NodeView::name);
    return MinimumFits(head, empty);
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

// The view the gangs behind the head plan on: the earmarked nodes offer
// nothing.
ClusterView WithoutEarmarked(const ClusterView& view, const std::vector<size_t>& earmarked) {
  ClusterView masked = view;
  for (size_t n : earmarked) masked.nodes[n].free = Resources();
  return masked;
}

// `view` cut down to `nodes` (sorted names).
ClusterView Restricted(const ClusterView& view, const std::vector<std::string>& nodes) {
  ClusterView out;
  out.nodes.reserve(nodes.size());
  for (const std::string& name : nodes) {
    if (std::optional<size_t> n = FindNode(view, name)) out.nodes.push_back(view.nodes[*n]);
  }
  return out;
}

// The free GPUs of the schedulable `nodes` of `view`, in thousandths.
int64_t FreeGpus(const ClusterView& view, const std::vector<std::string>& nodes) {
  int64_t gpus = 0;
  for (const std::string& name : nodes) {
    const std::optional<size_t> n = FindNode(view, name);
    if (n && view.nodes[*n].schedulable) {
      gpus += std::max<int64_t>(view.nodes[*n].free.milli_gpus(), 0);
    }
  }
  return gpus;
}

// PlanGang within the gang's network domains (Gang::domains): the lowest
// tier first, the tightest domain first within a tier; then anywhere unless
// the domains are required. A domain's view is cut only when it is tried.
// `table`: mirrors `view` (may be null; domains cut the view and read their
// nodes themselves).
std::variant<GangPlan, Wait> PlanPlaced(const Gang& gang, const ClusterView& view, NodeTable* table,
                                        int max_extras = -1) {
  if (!gang.domains) return PlanGangOn(gang, view, table, max_extras);
  std::vector<std::tuple<int, int64_t, const NetworkDomain*>> tries;
  for (const NetworkDomain& d : *gang.domains) {
    if (d.tier <= gang.domain_tier) tries.emplace_back(d.tier, FreeGpus(view, d.nodes), &d);
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
    std::variant<GangPlan, Wait> decision =
        PlanGang(gang, Restricted(view, domain->nodes), max_extras);
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
  if (!gang.domains_required) return PlanGangOn(gang, view, table, max_extras);
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
bool TrimToQueue(const Gang& gang, const QueueLimits& queues, const std::string& owed_waiting,
                 GangPlan& plan) {
  const auto placed = std::ranges::count_if(gang.members, CountsPlaced);
  if (placed < gang.spec.min_member && gang.spec.min_member > 1) return false;
  std::vector<Assignment> kept;
  for (const Assignment& a : plan.reserve) {
    kept.push_back(a);
    if (!QueueHold(gang, RequestOf(gang, kept), queues, owed_waiting).second.empty()) {
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
    if (CountsPlaced(m) && !m.Finished()) held += m.request;
  }
  held.Erase(kPods);
  return held;
}

// A view that many gangs plan on, with its NodeTable. Neither copied nor
// moved: the table reads `view`.
struct MirroredView {
  explicit MirroredView(ClusterView v) : view(std::move(v)), table(view) {}
  ClusterView view;
  NodeTable table;
};

// The planning state PlanAll's two steps share.
struct Planning {
  ClusterView& view;
  // Mirrors view when more than one gang plans (for one, reading the nodes
  // into a table costs more than it saves).
  std::optional<NodeTable> table;
  std::optional<MirroredView> masked;  // set once a head is found
  QueueLimits queues;
  std::string owed_waiting;  // the first queue below its share with a gang short of capacity
  PassResult& result;
  // Reserves `plan` of `gang` on the views and charges its queues.
  void Take(const Gang& gang, const GangPlan& plan) {
    ChargeQueues(gang, RequestOf(gang, plan.reserve), queues);
    Reserve(view, gang, plan, table ? &*table : nullptr);
    if (masked) Reserve(masked->view, gang, plan, &masked->table);
  }
  // Plans `gang` on the view gangs plan on now.
  std::variant<GangPlan, Wait> Plan(const Gang& gang, int max_extras) {
    if (masked) return PlanPlaced(gang, masked->view, &masked->table, max_extras);
    return PlanPlaced(gang, view, table ? &*table : nullptr, max_extras);
  }
};

// A plan's new members as reserved in `gang` (a copy being planned on).
void MarkReserved(Gang& gang, const GangPlan& plan) {
  ForEachAssigned(*gang.members.Edit(), plan.reserve, [](Member& m, const Assignment& a) {
    m.state = MemberState::kReserved;
    m.node = a.node;
  });
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
  Resources total;
  for (const NodeView& node : p.view.nodes) {
    if (node.schedulable) total += node.node->allocatable;
  }
  // A turn of a gang with no member left to place (most gangs: their
  // minimum is all they have) is kept, as it counts among the turns left
  // and takes its place in the order, but neither copied nor planned again
  // (that was a sixth of a pass over 1000 waiting gangs of fixed size).
  struct Turn {
    int32_t priority;
    std::optional<Gang> gang;  // the copy planned on; none: nothing to place
    Resources held;
    double share;  // held's dominant share of total (DRF)
    size_t order;
  };
  std::vector<Turn> turns;
  std::map<std::string, size_t> plan_of;  // gang key -> index in result.plans
  for (size_t i = 0; i < p.result.plans.size(); ++i) plan_of[p.result.plans[i].key] = i;
  for (size_t index : candidates) {
    const Gang& source = gangs[index];
    const auto planned = plan_of.find(source.key);
    const GangPlan* plan = planned == plan_of.end() ? nullptr : &p.result.plans[planned->second];
    Turn turn{.priority = source.priority,
              .gang = {},
              .held = HeldBy(source),
              .share = 0,
              .order = index};
    if (plan != nullptr) turn.held += RequestOf(source, plan->reserve);
    turn.held.Erase(kPods);
    turn.share = turn.held.DominantShare(total);
    const auto awaiting = std::ranges::count_if(source.members, AwaitsPlacement);
    if (awaiting > static_cast<std::ptrdiff_t>(plan == nullptr ? 0 : plan->reserve.size())) {
      turn.gang = source;
      if (plan != nullptr) MarkReserved(*turn.gang, *plan);
    }
    turns.push_back(std::move(turn));
  }
  for (int budget = kSharedExtrasPerPass; !turns.empty() && budget > 0; --budget) {
    const auto next = std::ranges::min_element(
        turns, {}, [&](const Turn& t) { return std::tuple(-t.priority, t.share, t.order); });
    if (!next->gang) {
      turns.erase(next);
      continue;
    }
    Gang& gang = *next->gang;
    const int max = turns.size() == 1 ? -1 : 1;
    std::variant<GangPlan, Wait> decision = p.Plan(gang, max);
    GangPlan* plan = std::get_if<GangPlan>(&decision);
    const bool placed =
        plan != nullptr && !plan->reserve.empty() &&
        (QueueHold(gang, RequestOf(gang, plan->reserve), p.queues, p.owed_waiting).second.empty() ||
         TrimToQueue(gang, p.queues, p.owed_waiting, *plan));
    if (!placed) {
      turns.erase(next);
      continue;
    }
    p.Take(gang, *plan);
    next->held += RequestOf(gang, plan->reserve);
    next->held.Erase(kPods);
    next->share = next->held.DominantShare(total);
    MarkReserved(gang, *plan);
    if (auto it = plan_of.find(gang.key); it != plan_of.end()) {
      Merge(p.result.plans[it->second], *plan);
    } else {
      plan_of[gang.key] = p.result.plans.size();
      p.result.plans.push_back(std::move(*plan));
    }
    if (max < 0) turns.erase(next);
  }
  // In GangOrder, as the plans of the first step are.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < gangs.size(); ++i) order[gangs[i].key] = i;
  std::ranges::stable_sort(p.result.plans, {},
                           [&](const GangPlan& plan) { return order[plan.key]; });
}

// (c) Plans every gang with members to place (but the just expired), in
// order, each on what the earlier plans left; once a head of the line is
// found, the gangs behind it plan without its earmarked nodes; once a gang
// of a queue below its deserved share waits for capacity, no other queue
// plans past its own (OverShare). When more than one gang is planned, each
// first gets only its minimum, and ShareExtras hands out the rest. Returns
// the gang preemption may serve: the first that waits for capacity and has
// no preemption in flight.
const Gang* PlanAll(ClusterView& view, const std::vector<Gang>& gangs, Time now,
                    const PassConfig& config, QueueLimits queues, PassResult& result) {
  const Gang* preemptor = nullptr;
  Planning p{.view = view, .queues = std::move(queues), .result = result};
  std::vector<size_t> earmarked;
  const bool shared =
      std::ranges::count_if(gangs, [&](const Gang& g) { return Plannable(g, result); }) > 1;
  if (shared) p.table.emplace(view);
  std::vector<size_t> started;  // gangs whose minimum is placed, for ShareExtras
  for (size_t index = 0; index < gangs.size(); ++index) {
    const Gang& gang = gangs[index];
    // An expired gang sits this pass out, so the capacity it let go goes to
    // the gangs behind it first instead of straight back to it; a gang not
    // admitted has its wait already.
    if (!Plannable(gang, result)) continue;
    std::variant<GangPlan, Wait> decision = p.Plan(gang, shared ? 0 : -1);
    if (GangPlan* plan = std::get_if<GangPlan>(&decision)) {
      if (plan->reserve.empty()) {  // minimum met; the extras (if any) come next
        started.push_back(index);
        continue;
      }
      auto [reason, why] =
          QueueHold(gang, RequestOf(gang, plan->reserve), p.queues, p.owed_waiting);
      if (!why.empty() && TrimToQueue(gang, p.queues, p.owed_waiting, *plan)) why.clear();
      if (!why.empty()) {
        const auto placed = std::ranges::count_if(gang.members, CountsPlaced);
        if (placed < std::max(gang.spec.min_member, 1)) {
          result.waits.push_back(Wait{.key = gang.key,
                                      .reason = reason,
                                      .message = std::move(why),
                                      .placeable = static_cast<int32_t>(placed)});
        }
        continue;
      }
      p.Take(gang, *plan);
      result.plans.push_back(std::move(*plan));
      started.push_back(index);
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
    if (!p.masked && short_of_capacity && now - gang.created >= config.head_of_line_after) {
      earmarked = EarmarkFor(gang, view);
      if (!earmarked.empty()) {
        p.masked.emplace(WithoutEarmarked(view, earmarked));
        result.head = gang.key;
        for (size_t n : earmarked) result.earmarked.push_back(view.nodes[n].name());
        wait.message +=
            "; head of the line: " + std::to_string(earmarked.size()) + " node(s) kept free for it";
      }
    }
    result.waits.push_back(std::move(wait));
  }
  if (shared) ShareExtras(p, gangs, started);
  return preemptor;
}

// Gives back what `victim` holds on `trial` (`release`), or takes it again.
void MoveVictim(MirroredView& trial, const VictimCandidate& victim, bool release) {
  for (const VictimCandidate::Pod& pod : victim.pods) {
    if (release) {
      AddFree(trial.view, pod.node, pod.request, pod.gpus, &trial.table);
    } else {
      TakeFree(trial.view, pod.node, pod.request, pod.gpus, &trial.table);
    }
  }
}

bool SameQueue(const Gang& preemptor, const VictimCandidate& v) {
  if (preemptor.queues.empty() || v.queues.empty())
    return preemptor.queues.empty() == v.queues.empty();
  return preemptor.queues.front() == v.queues.front();
}

// A candidate from another queue that reclaim may take from: reclaimable
// and above its deserved share (whether it stays at or above its due is
// checked as victims add up).
bool Reclaimable(const VictimCandidate& v, const QueueLimits& queues) {
  const QueueLimit* limit = LimitOf(v.queues, queues);
  return limit && limit->reclaimable && limit->Bound().DominantShare(limit->deserved) > 1.0;
}

// True when the preemptor's queue holds less than it deserves, the
// preemptor's pending members fit within that, and the caller allows it.
bool MayReclaim(const Gang& preemptor, const QueueLimits& queues, const PassConfig& config) {
  const QueueLimit* limit = LimitOf(preemptor.queues, queues);
  if (!config.reclaim || !limit || !limit->reclaim_allowed) return false;
  Resources after = limit->allocated;
  for (const Member& m : preemptor.members) {
    if (AwaitsPlacement(m)) after += m.request;
  }
  return Owed(limit->allocated, limit->deserved) && WithinDeserved(std::move(after), *limit);
}

bool Spared(const Gang& preemptor, const VictimCandidate& v, const QueueLimits& queues) {
  const QueueLimit* limit = LimitOf(preemptor.queues, queues);
  return limit && !v.queues.empty() &&
         std::ranges::find(limit->spare, v.queues.front()) != limit->spare.end();
}

// The candidates in the order victims are taken: first, when the
// preemptor's queue is owed capacity, other queues' reclaimable gangs
// (lowest priority, then youngest, then fewest GPUs); then gangs of its own
// queue with strictly lower priority, cheapest first (fewest GPUs, then
// lowest priority, then youngest: least work lost). Conformance comes last,
// so `spared` counts exactly the candidates it alone keeps out.
std::vector<const VictimCandidate*> Eligible(const Gang& preemptor,
                                             const std::vector<VictimCandidate>& victims,
                                             const QueueLimits& queues, const PassConfig& config,
                                             int& spared) {
  std::vector<const VictimCandidate*> reclaim, preempt;
  const bool may_reclaim = MayReclaim(preemptor, queues, config);
  for (const VictimCandidate& v : victims) {
    if (v.key == preemptor.key || v.pods.empty()) continue;
    std::vector<const VictimCandidate*>* to = nullptr;
    if (SameQueue(preemptor, v)) {
      if (v.priority < preemptor.priority) to = &preempt;
    } else if (may_reclaim && Reclaimable(v, queues) && !Spared(preemptor, v, queues)) {
      to = &reclaim;
    }
    if (to == nullptr) continue;
    if (!v.evictable) {
      ++spared;  // a kube-system or system-critical member (gang/conformance.h)
      continue;
    }
    to->push_back(&v);
  }
  std::ranges::sort(reclaim, [](const VictimCandidate* a, const VictimCandidate* b) {
    return std::tie(a->priority, b->created, a->gpus, a->key) <
           std::tie(b->priority, a->created, b->gpus, b->key);
  });
  std::ranges::sort(preempt, [](const VictimCandidate* a, const VictimCandidate* b) {
    return std::tie(a->gpus, a->priority, b->created, a->key) <
           std::tie(b->gpus, b->priority, a->created, b->key);
  });
  reclaim.insert(reclaim.end(), preempt.begin(), preempt.end());
  return reclaim;
}

// What reclaim has taken from each queue so far, to keep every victim queue
// at or above its deserved share.
class ReclaimLedger {
 public:
  ReclaimLedger(const Gang& preemptor, const QueueLimits& queues)
      : preemptor_(preemptor), queues_(queues) {}

  // Takes `v` when every queue of its path the preemptor does not share
  // keeps allocated/deserved >= 1 without it; same-queue victims always.
  bool Take(const VictimCandidate& v) {
    if (SameQueue(preemptor_, v)) return true;
    for (const std::string& name : v.queues) {
      if (std::ranges::find(preemptor_.queues, name) != preemptor_.queues.end()) break;
      const auto it = queues_.find(name);
      if (it == queues_.end()) continue;
      const Resources after = it->second.Bound() - taken_[name] - v.holds;
      if (Owed(after, it->second.deserved)) return false;
    }
    for (const std::string& name : v.queues) taken_[name] += v.holds;
    return true;
  }

 private:
  const Gang& preemptor_;
  const QueueLimits& queues_;
  std::map<std::string, Resources> taken_;
};

// Drops every victim the preemptor can do without, latest added first (the
// costliest, by the candidate order). `trial`: the view with every chosen
// victim released; each is taken back in turn, and released again when the
// preemptor needs it.
void Minimize(MirroredView& trial, const Gang& preemptor,
              std::vector<const VictimCandidate*>& chosen) {
  for (size_t i = chosen.size(); i-- > 0;) {
    MoveVictim(trial, *chosen[i], /*release=*/false);
    if (MinimumFits(preemptor, trial.view, &trial.table)) {
      chosen.erase(chosen.begin() + static_cast<ptrdiff_t>(i));
    } else {
      MoveVictim(trial, *chosen[i], /*release=*/true);
    }
  }
}

// (d) Adds candidates until the preemptor's minimum fits, then makes the set
// minimal. Nothing when even every candidate together is not enough.
// `spared`: the candidates conformance kept out (Eligible).
std::optional<Preemption> ChoosePreemption(const ClusterView& view, const Gang& preemptor,
                                           const std::vector<VictimCandidate>& victims,
                                           const QueueLimits& queues, const PassConfig& config,
                                           int& spared) {
  MirroredView trial(view);
  std::vector<const VictimCandidate*> chosen;
  ReclaimLedger ledger(preemptor, queues);
  bool fits = false;
  for (const VictimCandidate* candidate : Eligible(preemptor, victims, queues, config, spared)) {
    if (!ledger.Take(*candidate)) continue;
    MoveVictim(trial, *candidate, /*release=*/true);
    chosen.push_back(candidate);
    if ((fits = MinimumFits(preemptor, trial.view, &trial.table))) break;
  }
  if (!fits) return std::nullopt;
  Minimize(trial, preemptor, chosen);
  Preemption preemption{.preemptor = preemptor.key};
  if (!preemptor.queues.empty()) preemption.queue = preemptor.queues.front();
  for (const VictimCandidate* victim : chosen) {
    preemption.victims.push_back(victim->key);
    if (!SameQueue(preemptor, *victim)) preemption.reclaimed.push_back(victim->key);
    preemption.pods.insert(preemption.pods.end(), victim->pods.begin(), victim->pods.end());
  }
  return preemption;
}

}  // namespace

PassResult RunPass(const ClusterView& view, std::vector<Gang> gangs,
                   const std::vector<VictimCandidate>& victims, Time now, const PassConfig& config,
                   const QueueLimits& queues) {
  PassResult result;
  ClusterView left = view;
  std::ranges::sort(gangs, GangOrder);
  ExpireReservations(left, gangs, now, config.reservation_timeout, result.expired);
  Admit(left, gangs, queues, config.reclaim, result);
  const Gang* preemptor = PlanAll(left, gangs, now, config, queues, result);
  // The preemptor is not reserved for now: its capacity frees only once the
  // victims are gone, and a later pass plans it then, ahead of lower gangs.
  if (config.preemption && preemptor) {
    int spared = 0;
    result.preemption = ChoosePreemption(left, *preemptor, victims, queues, config, spared);
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
