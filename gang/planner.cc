// PlanGang: a deterministic greedy best-fit-decreasing placement of one gang.
//
// Order of work: pick the pending members the minimum needs (each task's
// minTaskMember, then minMember; the smallest members, as they fit most
// easily), place them largest first (GPUs, then cpu, then name), stand an
// unpicked member in for a picked one that fits nowhere, and only when the
// whole minimum is placed, place the rest best-effort (elastic gangs), again
// largest first. Everything works on the planner's table (node_table.h):
// placements change its rows in place and are rolled back when the greedy
// is done, and on an indexed table the node of a member is found through its
// buckets instead of a walk over every node.
#include "gang/planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gang/feasibility.h"
#include "gang/gang.h"
#include "model/gpu_share.h"
#include "model/pod_group.h"
#include "model/quantity.h"

namespace muster::gang {
namespace {

std::string Pods(int32_t n) { return std::to_string(n) + (n == 1 ? " more pod" : " more pods"); }

// Whether members' tasks count: some task has a minimum, and the minimums
// bind (TaskMinimumsBind). Reading a member's task is a lookup per member,
// skipped when they do not.
bool TasksMatter(const PodGroupSpec& spec) {
  return !spec.min_task_member.empty() && TaskMinimumsBind(spec);
}

// kWaitMembers when fewer pods exist than minMember or a task's
// minTaskMember: no placement can help until the controller creates them.
std::optional<Wait> MissingMembers(const Gang& gang) {
  int32_t exist = 0;
  int32_t placed = 0;
  std::map<std::string, int32_t> by_task;
  const bool tasks = TasksMatter(gang.spec);
  for (const Member& m : gang.members) {
    if (CountsPlaced(m)) ++placed;
    if (!CountsPlaced(m) && !AwaitsPlacement(m)) continue;  // terminating, about to go
    ++exist;
    if (tasks) ++by_task[m.Task()];
  }
  const auto wait = [&](const std::string& prefix, int32_t have, int32_t want) {
    return Wait{.key = gang.key,
                .reason = kWaitMembers,
                .message = prefix + std::to_string(have) + "/" + std::to_string(want) +
                           " members exist: waiting for " + Pods(want - have),
                .placeable = placed};
  };
  if (exist < gang.spec.min_member) return wait("", exist, gang.spec.min_member);
  if (!tasks) return std::nullopt;
  for (const auto& [task, min] : gang.spec.min_task_member) {
    if (by_task[task] < min) return wait("task " + task + ": ", by_task[task], min);
  }
  return std::nullopt;
}

// Why a slot is part of the minimum.
enum class Pick { kNo, kForTask, kForMembers };

// A pending member the greedy places.
struct Slot {
  const Member* member = nullptr;
  std::string task;
  std::vector<int64_t> request;  // per resource in NodeTable::dims()
  int admits = 0;                // NodeTable::AdmitsClass of its pod
  std::optional<size_t> node;    // where the greedy put it
  uint32_t gpus = 0;             // which GPUs of it, when its layout is known
  // GPU sharing: what it asks (empty: no shares), whether its GPU request
  // reads at all (a member whose does not fits nowhere), and its shares.
  std::vector<GpuShareAsk> shares;
  bool gpu_request_ok = true;
  std::vector<GpuSlice> slices;
  int link_shortfall = 0;  // GpuPick::link below its layout's BestLink
  int gpus_stranded = 0;   // GpuPick::damage
  bool failed = false;     // fitted no node; final, as free only shrinks
  Pick picked = Pick::kNo;
};

// One greedy run on a NodeTable. Resources are held densely (one int64 per
// name the pass compares) because the preemption search runs this many
// times per pass.
class Greedy {
 public:
  // On the table's capacity; on a kAllocatable table (empty_cluster()),
  // less only this gang's own bound and reserved members.
  Greedy(const Gang& gang, NodeTable& table);
  ~Greedy() { table_.Rollback(mark_); }
  Greedy(const Greedy&) = delete;
  Greedy& operator=(const Greedy&) = delete;

  // Places what minTaskMember and minMember need; true when both are met.
  bool PlaceMinimum();
  // Places every other pending member that fits (elastic gangs), at most
  // `max` of them (< 0: no limit).
  void PlaceExtras(int max) {
    for (Slot& slot : slots_) {
      if (max == 0) return;
      if (!slot.node && !slot.failed && TryPlace(slot) && max > 0) --max;
    }
  }
  int32_t placeable() const { return placed_before_ + placed_for_min_; }
  // "6/8 members placeable<where>: 2 need nvidia.com/gpu=8, largest free is 4".
  std::string Message(std::string_view where, std::string_view free_word) const;
  GangPlan Plan() const;
  // The nodes of the placed members, in placement order.
  const std::vector<size_t>& placed_nodes() const { return placed_nodes_; }

 private:
  void InitSlots();
  void InitUsed();
  void InitNeeds();
  void OrderSlots();
  std::vector<size_t> PickMinimum();
  bool Substitute(const Slot& failed);
  bool TryPlace(Slot& slot);
  bool Fits(const Slot& slot, size_t node) const;
  std::optional<size_t> ChooseNode(const Slot& slot) const;
  std::optional<size_t> ChooseIndexed(const Slot& slot) const;
  // The order of nodes for the slot, lower is better (ChooseNode).
  auto Rank(const Slot& slot, size_t n) const;
  // Whether the gang holds or was given node n. A gang uses a handful of
  // nodes: the list says it, and a per-node map is made only for the walk
  // over every node (not on an indexed table).
  bool Used(size_t n) const {
    return used_.empty() ? std::ranges::find(used_list_, n) != used_list_.end() : used_[n] != 0;
  }
  void MarkUsed(size_t n) {
    if (Used(n)) return;
    if (!used_.empty()) used_[n] = 1;
    used_list_.push_back(n);
  }
  // The member's GPU set on the node; nothing when the layout is unknown or
  // the member asks no GPU. Memoised: nodes of one model share layouts.
  std::optional<GpuPick> PickGpus(const Slot& slot, size_t node) const;
  // Where the slot's shares go on the node (nothing: they do not fit, or it
  // asks none), on the GPU holdings as the members placed so far left them.
  std::optional<std::vector<GpuSlice>> PlaceSlotShares(const Slot& slot, size_t node) const;
  // How good a node is for the slot's GPUs, higher better: its GPU set's link
  // for whole GPUs, how full its shares leave their GPUs (thousandths) for
  // shares.
  int GpuPreference(const Slot& slot, size_t node, const std::optional<GpuPick>& pick) const;
  // The whole GPUs the slot asks (0 for none or a share of one GPU).
  int64_t WholeGpus(const Slot& slot) const {
    const int64_t milli = slot.request[gpu_];
    return milli % kMilliPerGpu == 0 ? milli / kMilliPerGpu : 0;
  }
  size_t Blocker(const Slot& slot) const;
  std::string Shortfall(std::string_view free_word) const;
  const Slot* ShareShort() const;
  std::map<size_t, int64_t> TakenOf(size_t d) const;
  std::pair<int64_t, int64_t> LargestFree(size_t d, const std::vector<int>& classes) const;

  const Gang& gang_;
  NodeTable& table_;
  const ClusterView& view_;
  const size_t mark_;  // the table's, before this greedy
  const size_t dims_;  // resources compared (NodeTable::dims())
  const size_t cpu_;   // index of cpu in them
  const size_t gpu_;   // index of nvidia.com/gpu in them
  const bool empty_cluster_;
  mutable std::vector<char> used_;  // per node: Used(), when made
  std::vector<size_t> used_list_;   // the nodes holding a member of the gang
  std::vector<size_t> placed_nodes_;
  std::vector<Slot> slots_;             // largest first
  std::vector<size_t> smallest_first_;  // indices into slots_
  int32_t placed_before_ = 0;           // bound, finished or reserved
  std::map<std::string, int32_t> placed_by_task_;
  std::map<std::string, int32_t> task_need_;  // pending members each task still needs
  int32_t member_need_ = 0;                   // beyond the task needs, for minMember
  int32_t needed_ = 0;                        // placed_before_ + every need
  int32_t placed_for_min_ = 0;
  std::vector<size_t> short_;  // slots whose failure left a minimum unmet
};

Greedy::Greedy(const Gang& gang, NodeTable& table)
    : gang_(gang),
      table_(table),
      view_(table.view()),
      mark_(table.Mark()),
      dims_(table.dims().size()),
      cpu_(table.cpu()),
      gpu_(table.gpu()),
      empty_cluster_(table.empty_cluster()) {
  InitSlots();
  OrderSlots();
  InitUsed();
  InitNeeds();
}

// slots_ largest first (best-fit decreasing: the hardest members go while
// most room is left), smallest_first_ the other way round; ties by name.
void Greedy::OrderSlots() {
  const auto size = [&](const Slot& s) { return std::pair(s.request[gpu_], s.request[cpu_]); };
  const auto name = [](const Slot& s) { return std::string_view(s.member->pod->meta.name); };
  std::ranges::sort(slots_, [&](const Slot& a, const Slot& b) {
    return size(a) != size(b) ? size(a) > size(b) : name(a) < name(b);
  });
  for (size_t i = 0; i < slots_.size(); ++i) smallest_first_.push_back(i);
  std::ranges::sort(smallest_first_, [&](size_t a, size_t b) {
    const Slot& x = slots_[a];
    const Slot& y = slots_[b];
    return size(x) != size(y) ? size(x) < size(y) : name(x) < name(y);
  });
}

void Greedy::InitSlots() {
  const bool tasks = TasksMatter(gang_.spec);
  for (const Member& m : gang_.members) {
    if (CountsPlaced(m)) {
      ++placed_before_;
      if (tasks) ++placed_by_task_[m.Task()];
    } else if (AwaitsPlacement(m)) {
      const PodFacts::Facts& facts = table_.facts().Of(*m.pod);
      slots_.push_back(Slot{.member = &m,
                            .task = tasks ? m.Task() : "",
                            .request = table_.Row(facts.slot),
                            .admits = table_.AdmitsClass(*m.pod),
                            .shares = facts.shares,
                            .gpu_request_ok = facts.gpu_request_ok});
    }
  }
}

// The nodes the gang holds already; on a kAllocatable table, what its
// members hold there comes off (the view's free already excludes them,
// REQUIRES of PlanGang).
void Greedy::InitUsed() {
  for (const Member& m : gang_.members) {
    if (!HoldsNode(m)) continue;
    const std::optional<size_t> n = FindNode(view_, m.node);
    if (!n) continue;
    MarkUsed(*n);
    if (!empty_cluster_) continue;
    table_.Change(*n, table_.Row(table_.facts().Of(*m.pod).slot), -1, table_.FreeGpus(*n),
                  table_.Uses(*n));
  }
}

// Members placed for a task's minimum count towards minMember too, so only
// what minMember needs beyond the task needs is picked on top of them. Task
// minimums above minMember do not bind (TaskMinimumsBind).
void Greedy::InitNeeds() {
  int32_t task_total = 0;
  const std::map<std::string, int32_t> none;
  const auto& task_mins = TaskMinimumsBind(gang_.spec) ? gang_.spec.min_task_member : none;
  for (const auto& [task, min] : task_mins) {
    const int32_t need = std::max(0, min - placed_by_task_[task]);
    task_need_[task] = need;
    task_total += need;
  }
  member_need_ = std::max(0, gang_.spec.min_member - placed_before_ - task_total);
  needed_ = placed_before_ + task_total + member_need_;
}

// Which members make up the minimum: for each task its smallest members,
// then the smallest of the rest for minMember. Small members are the likeliest
// to fit; the larger ones follow best-effort as extras.
std::vector<size_t> Greedy::PickMinimum() {
  std::map<std::string, int32_t> task_left = task_need_;
  int32_t member_left = member_need_;
  std::vector<size_t> picked;
  for (size_t i : smallest_first_) {
    const auto it = task_left.find(slots_[i].task);
    if (it == task_left.end() || it->second == 0) continue;
    --it->second;
    slots_[i].picked = Pick::kForTask;
    picked.push_back(i);
  }
  for (size_t i : smallest_first_) {
    if (member_left == 0) break;
    if (slots_[i].picked != Pick::kNo) continue;
    --member_left;
    slots_[i].picked = Pick::kForMembers;
    picked.push_back(i);
  }
  // Placed largest first (slots_ is in that order): best-fit decreasing.
  std::ranges::sort(picked);
  return picked;
}

// A picked member that fits nowhere may be stood in for by an unpicked one
// that counts for the same need (its task's, or any for minMember), as
// members of one task can differ in selectors or size.
bool Greedy::Substitute(const Slot& failed) {
  for (size_t i : smallest_first_) {
    Slot& slot = slots_[i];
    if (slot.picked != Pick::kNo || slot.failed) continue;
    if (failed.picked == Pick::kForTask && slot.task != failed.task) continue;
    slot.picked = failed.picked;
    if (TryPlace(slot)) return true;
  }
  return false;
}

bool Greedy::PlaceMinimum() {
  std::vector<size_t> failed;
  for (size_t i : PickMinimum()) {
    if (TryPlace(slots_[i])) {
      ++placed_for_min_;
    } else {
      failed.push_back(i);
    }
  }
  for (size_t i : failed) {
    if (Substitute(slots_[i])) {
      ++placed_for_min_;
    } else {
      short_.push_back(i);
    }
  }
  return short_.empty();
}

bool Greedy::TryPlace(Slot& slot) {
  const std::optional<size_t> n = ChooseNode(slot);
  if (!n) {
    slot.failed = true;
    return false;
  }
  uint32_t free_gpus = table_.FreeGpus(*n);
  GpuUses uses = table_.Uses(*n);
  if (!slot.shares.empty()) {
    slot.slices = PlaceSlotShares(slot, *n).value_or(std::vector<GpuSlice>());
    const GpuHolding held{.slices = slot.slices};
    AccountHolding(uses, held, +1);
    free_gpus &= ~held.Gpus();
  } else if (const std::optional<GpuPick> pick = PickGpus(slot, *n)) {
    slot.gpus = pick->gpus;
    slot.link_shortfall =
        view_.nodes[*n].gpu_layout->BestLink(static_cast<int>(WholeGpus(slot))) - pick->link;
    slot.gpus_stranded = pick->damage;
    free_gpus &= ~pick->gpus;
  }
  table_.Change(*n, slot.request, -1, free_gpus, uses);
  MarkUsed(*n);
  placed_nodes_.push_back(*n);
  slot.node = n;
  return true;
}

// Only positive requests are compared, as kube-scheduler does.
bool Greedy::Fits(const Slot& slot, size_t node) const {
  if (!slot.gpu_request_ok) return false;
  const int64_t* free = table_.Free(node);
  for (size_t d = 0; d < dims_; ++d) {
    if (slot.request[d] > 0 && slot.request[d] > free[d]) return false;
  }
  if (!table_.Admits(slot.admits, node)) return false;
  if (!slot.shares.empty()) return PlaceSlotShares(slot, node).has_value();
  // Whole GPUs go on GPUs nobody shares: where some are shared, count them.
  const int64_t whole = WholeGpus(slot);
  if (whole > 0 && !empty_cluster_ && view_.nodes[node].gpu_cards != nullptr &&
      std::ranges::any_of(table_.Uses(node), [](const GpuCardUse& u) { return u.sharers > 0; })) {
    return std::popcount(table_.FreeGpus(node)) >= whole;
  }
  return true;
}

std::optional<std::vector<GpuSlice>> Greedy::PlaceSlotShares(const Slot& slot, size_t node) const {
  const NodeView& view = view_.nodes[node];
  if (slot.shares.empty() || view.gpu_cards == nullptr) return std::nullopt;
  uint32_t usable = 0;
  for (size_t g = 0; g < view.gpu_cards->size(); ++g) {
    if ((*view.gpu_cards)[g].healthy) usable |= uint32_t{1} << g;
  }
  // The idle GPU whose loss strands the least goes first (the layout's
  // choice of one GPU), as bind opens GPUs.
  std::vector<int> idle_order;
  if (view.gpu_layout != nullptr && !empty_cluster_) {
    if (const std::optional<GpuPick> one =
            table_.Pick(*view.gpu_layout, table_.FreeGpus(node), 1)) {
      idle_order.push_back(std::countr_zero(one->gpus));
    }
  }
  return PlaceShares(slot.shares, *view.gpu_cards, table_.Uses(node), usable, idle_order);
}

int Greedy::GpuPreference(const Slot& slot, size_t node, const std::optional<GpuPick>& pick) const {
  if (slot.shares.empty()) return pick ? pick->link : 0;
  const std::optional<std::vector<GpuSlice>> slices = PlaceSlotShares(slot, node);
  if (!slices) return 0;
  return static_cast<int>(
      std::lround(SharedFill(*slices, *view_.nodes[node].gpu_cards, table_.Uses(node)) * 1000));
}

std::optional<GpuPick> Greedy::PickGpus(const Slot& slot, size_t node) const {
  const GpuLayout* layout = view_.nodes[node].gpu_layout.get();
  const int64_t k = WholeGpus(slot);
  if (layout == nullptr || k <= 0) return std::nullopt;
  return table_.Pick(*layout, table_.FreeGpus(node), static_cast<int>(k));
}

// The hint (a persisted plan) first; then the best GPU set (its weakest
// link: a member's all-reduce runs at that speed); then nodes the gang
// already uses, to keep it close; then the fewest GPUs stranded (left
// without a best-link partner); then best fit: fewest GPUs left, least cpu
// left, so whole free nodes and NVLink islands stay whole for the next big
// member.
auto Greedy::Rank(const Slot& slot, size_t n) const {
  const std::optional<GpuPick> picked = PickGpus(slot, n);
  const GpuPick pick = picked.value_or(GpuPick{});
  const int64_t* free = table_.Free(n);
  return std::tuple(-GpuPreference(slot, n, picked), Used(n) ? 0 : 1, pick.damage,
                    free[gpu_] - slot.request[gpu_], free[cpu_] - slot.request[cpu_],
                    std::string_view(view_.nodes[n].name()));
}

std::optional<size_t> Greedy::ChooseNode(const Slot& slot) const {
  if (!slot.gpu_request_ok) return std::nullopt;  // fits nowhere
  // Shares rank by how they fill the node's GPUs, which no index keeps.
  if (table_.indexed() && slot.shares.empty()) return ChooseIndexed(slot);
  if (used_.empty()) {
    used_.assign(view_.nodes.size(), 0);
    for (size_t n : used_list_) used_[n] = 1;
  }
  std::optional<size_t> best;
  std::optional<decltype(Rank(slot, 0))> best_rank;
  for (size_t n = 0; n < view_.nodes.size(); ++n) {
    if (!Fits(slot, n)) continue;
    if (!slot.member->hint.empty() && view_.nodes[n].name() == slot.member->hint) return n;
    auto rank = Rank(slot, n);
    if (!best || rank < *best_rank) {
      best = n;
      best_rank = std::move(rank);
    }
  }
  return best;
}

// ChooseNode through the table's index: the nodes the gang does not use come
// in Rank's order from NodeTable::First (which ranks as Rank does for a
// member of whole GPUs or none), and the few it uses are ranked here.
std::optional<size_t> Greedy::ChooseIndexed(const Slot& slot) const {
  if (!slot.member->hint.empty()) {
    const std::optional<size_t> hint = FindNode(view_, slot.member->hint);
    if (hint && Fits(slot, *hint)) return hint;
  }
  std::optional<size_t> best =
      table_.First(static_cast<int>(WholeGpus(slot)), slot.request[gpu_], slot.request[cpu_],
                   [&](size_t n) { return !Used(n) && Fits(slot, n); });
  for (size_t n : used_list_) {
    if (Fits(slot, n) && (!best || Rank(slot, n) < Rank(slot, *best))) best = n;
  }
  return best;
}

// The resource that keeps `slot` off every admitting node: one it asks more
// of than any of them has free (GPUs preferred), else the one short on the
// most nodes (the request does not fit whole anywhere: fragmentation).
size_t Greedy::Blocker(const Slot& slot) const {
  std::optional<size_t> hard;
  size_t soft = gpu_;
  int64_t most = -1;
  for (size_t d = 0; d < dims_; ++d) {
    if (slot.request[d] <= 0) continue;
    int64_t largest = std::numeric_limits<int64_t>::min();
    int64_t short_on = 0;
    if (table_.indexed()) {
      largest = table_.Largest(slot.admits, d);
      short_on = table_.CountBelow(slot.admits, d, slot.request[d]);
    } else {
      for (size_t n = 0; n < view_.nodes.size(); ++n) {
        if (!table_.Admits(slot.admits, n)) continue;
        const int64_t free = table_.Free(n)[d];
        largest = std::max(largest, free);
        if (slot.request[d] > free) ++short_on;
      }
    }
    if (slot.request[d] > largest && (!hard || d == gpu_)) hard = d;
    if (short_on > most || (short_on == most && d == gpu_)) {
      most = short_on;
      soft = d;
    }
  }
  return hard.value_or(soft);
}

// What the gang's placed pending members took of resource d, per node: the
// free capacity the greedy started from is the table's plus that.
std::map<size_t, int64_t> Greedy::TakenOf(size_t d) const {
  std::map<size_t, int64_t> taken;
  for (const Slot& slot : slots_) {
    if (slot.node) taken[*slot.node] += slot.request[d];
  }
  return taken;
}

// The most of resource d any node admitting one of `classes` has free (at
// least 0), now and before this gang's pending members were placed.
std::pair<int64_t, int64_t> Greedy::LargestFree(size_t d, const std::vector<int>& classes) const {
  int64_t largest = 0;
  int64_t largest_before = 0;
  const std::map<size_t, int64_t> taken = TakenOf(d);
  for (int c : classes) {
    if (table_.indexed()) {
      // The largest before the placements is the largest now or that of a
      // node they took from.
      largest = std::max(largest, table_.Largest(c, d));
      largest_before = std::max(largest_before, largest);
      for (const auto& [n, amount] : taken) {
        if (table_.Admits(c, n))
          largest_before = std::max(largest_before, table_.Free(n)[d] + amount);
      }
      continue;
    }
    for (size_t n = 0; n < view_.nodes.size(); ++n) {
      if (!table_.Admits(c, n)) continue;
      const int64_t free = table_.Free(n)[d];
      const auto it = taken.find(n);
      largest = std::max(largest, free);
      largest_before = std::max(largest_before, it == taken.end() ? free : free + it->second);
    }
  }
  return {largest, largest_before};
}

// The first member short of a minimum whose shares fit no GPU though its
// counts fit a node, or nullptr.
const Slot* Greedy::ShareShort() const {
  for (size_t i : short_) {
    const Slot& slot = slots_[i];
    if (slot.shares.empty()) continue;
    for (size_t n = 0; n < view_.nodes.size(); ++n) {
      if (!table_.Admits(slot.admits, n)) continue;
      const int64_t* free = table_.Free(n);
      bool counts_fit = true;
      for (size_t d = 0; d < dims_ && counts_fit; ++d) {
        counts_fit = slot.request[d] <= 0 || slot.request[d] <= free[d];
      }
      if (counts_fit) return &slot;
    }
  }
  return nullptr;
}

std::string Greedy::Shortfall(std::string_view free_word) const {
  const int32_t missing = needed_ - placeable();
  // Members whose shares of GPUs fit no GPU (the counts may well fit).
  if (const Slot* slot = ShareShort()) {
    return std::to_string(missing) + " need " + DescribeShareAsk(slot->shares.front()) +
           ", which no GPU " + (free_word == "free" ? "has free" : "can give") + " to share";
  }
  std::map<size_t, int> votes;                     // blocking resource -> members it blocks
  std::vector<std::pair<size_t, size_t>> blocked;  // (slot, resource)
  // Members alike (request and constraints) have the same blocker.
  std::map<std::pair<int, std::vector<int64_t>>, size_t> blockers;
  for (size_t i : short_) {
    const Slot& slot = slots_[i];
    if (!table_.AdmitsAny(slot.admits)) continue;
    auto [it, added] = blockers.try_emplace({slot.admits, slot.request}, 0);
    if (added) it->second = Blocker(slot);
    ++votes[it->second];
    blocked.emplace_back(i, it->second);
  }
  if (votes.empty()) {
    return std::to_string(missing) + " fit no node's selector, affinity or taints";
  }
  size_t top = votes.begin()->first;
  for (const auto& [d, n] : votes) {
    if (n > votes[top] || (n == votes[top] && d == gpu_)) top = d;
  }
  int64_t amount = 0;
  std::vector<int> classes;  // of the members `top` blocks
  for (const auto& [i, d] : blocked) {
    if (d != top) continue;
    amount = std::max(amount, slots_[i].request[d]);
    if (std::ranges::find(classes, slots_[i].admits) == classes.end()) {
      classes.push_back(slots_[i].admits);
    }
  }
  const auto [largest, largest_before] = LargestFree(top, classes);
  const std::string& name = table_.dims()[top];
  std::string message = std::to_string(missing) + " need " + name + "=" +
                        FormatResourceQuantity(name, amount) + ", largest " +
                        std::string(free_word) + " is " + FormatResourceQuantity(name, largest);
  // A member that would fit alone is kept out by its own gang's other
  // members: say so, or "largest allocatable is 0" reads as an empty node.
  const int32_t others = placed_for_min_;
  if (amount <= largest_before && others > 0) {
    message += others == 1 ? " once the other member is placed"
                           : " once the other " + std::to_string(others) + " are placed";
  }
  return message;
}

std::string Greedy::Message(std::string_view where, std::string_view free_word) const {
  return std::to_string(placeable()) + "/" + std::to_string(needed_) + " members placeable" +
         std::string(where) + ": " + Shortfall(free_word);
}

Assignment AssignmentOf(const Member& m, std::string node) {
  return Assignment{
      .pod_uid = m.pod->meta.uid, .pod_name = m.pod->meta.name, .node = std::move(node)};
}

void SortByPodName(std::vector<Assignment>& list) {
  std::ranges::sort(list, [](const Assignment& a, const Assignment& b) {
    return std::tie(a.pod_name, a.pod_uid) < std::tie(b.pod_name, b.pod_uid);
  });
}

GangPlan Greedy::Plan() const {
  GangPlan plan{.key = gang_.key};
  for (const Slot& slot : slots_) {
    if (!slot.node) continue;
    plan.reserve.push_back(AssignmentOf(*slot.member, view_.nodes[*slot.node].name()));
    plan.reserve.back().gpus = GpuHolding{.whole = slot.gpus, .slices = slot.slices};
    plan.link_shortfall += slot.link_shortfall;
    plan.gpus_stranded += slot.gpus_stranded;
  }
  plan.placement = plan.reserve;
  for (const Member& m : gang_.members) {
    if (HoldsNode(m)) plan.placement.push_back(AssignmentOf(m, m.node));
  }
  SortByPodName(plan.reserve);
  SortByPodName(plan.placement);
  return plan;
}

}  // namespace

std::variant<GangPlan, Wait> PlanGang(const Gang& gang, NodeTable& now,
                                      std::unique_ptr<NodeTable>& empty, int max_extras) {
  if (std::optional<Wait> wait = MissingMembers(gang)) return *std::move(wait);
  Greedy greedy(gang, now);
  if (greedy.PlaceMinimum()) {
    greedy.PlaceExtras(max_extras);
    return greedy.Plan();
  }
  // Tell "wait for capacity" from "will never fit as specified": only the
  // former is worth preempting for.
  if (empty == nullptr) {
    empty = std::make_unique<NodeTable>(now.view(), now.dims(), NodeTable::Source::kAllocatable,
                                        now.shared_facts());
    if (now.indexed()) empty->BuildIndex();
  }
  Greedy on_empty(gang, *empty);
  if (!on_empty.PlaceMinimum()) {
    return Wait{.key = gang.key,
                .reason = kWaitNeverFits,
                .message = on_empty.Message(" on an empty cluster", "allocatable"),
                .placeable = greedy.placeable()};
  }
  return Wait{.key = gang.key,
              .reason = kWaitResources,
              .message = greedy.Message("", "free"),
              .placeable = greedy.placeable()};
}

std::variant<GangPlan, Wait> PlanGang(const Gang& gang, const ClusterView& view, int max_extras) {
  auto facts = std::make_shared<PodFacts>();
  NodeTable table(view, NodeTable::DimsOf(gang, *facts), NodeTable::Source::kFree, facts);
  std::unique_ptr<NodeTable> empty;
  return PlanGang(gang, table, empty, max_extras);
}

bool MinimumFits(const Gang& gang, NodeTable& table, std::vector<size_t>* nodes) {
  if (nodes != nullptr) nodes->clear();
  if (MissingMembers(gang)) return false;
  Greedy greedy(gang, table);
  const bool fits = greedy.PlaceMinimum();
  if (nodes != nullptr) *nodes = greedy.placed_nodes();
  return fits;
}

}  // namespace muster::gang
