// PlanGang: a deterministic greedy best-fit-decreasing placement of one gang.
//
// Order of work: pick the pending members the minimum needs (each task's
// minTaskMember, then minMember; the smallest members, as they fit most
// easily), place them largest first (GPUs, then cpu, then name), stand an
// unpicked member in for a picked one that fits nowhere, and only when the
// whole minimum is placed, place the rest best-effort (elastic gangs), again
// largest first. Everything works on a local copy of the free capacity.
#include "gang/planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
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

// kWaitMembers when fewer pods exist than minMember or a task's
// minTaskMember: no placement can help until the controller creates them.
std::optional<Wait> MissingMembers(const Gang& gang) {
  int32_t exist = 0;
  int32_t placed = 0;
  std::map<std::string, int32_t> by_task;
  for (const Member& m : gang.members) {
    if (CountsPlaced(m)) ++placed;
    if (!CountsPlaced(m) && !AwaitsPlacement(m)) continue;  // terminating, about to go
    ++exist;
    ++by_task[m.Task()];
  }
  const auto wait = [&](const std::string& prefix, int32_t have, int32_t want) {
    return Wait{.key = gang.key,
                .reason = kWaitMembers,
                .message = prefix + std::to_string(have) + "/" + std::to_string(want) +
                           " members exist: waiting for " + Pods(want - have),
                .placeable = placed};
  };
  if (exist < gang.spec.min_member) return wait("", exist, gang.spec.min_member);
  if (!TaskMinimumsBind(gang.spec)) return std::nullopt;
  for (const auto& [task, min] : gang.spec.min_task_member) {
    if (by_task[task] < min) return wait("task " + task + ": ", by_task[task], min);
  }
  return std::nullopt;
}

// `r`'s amounts of `dims` (sorted) into out[0..dims.size()), absent ones 0.
// Both dims and r.entries() are sorted by name: one merge walk instead of a
// binary search per name.
void ReadAmounts(const std::vector<std::string>& dims, const Resources& r, int64_t* out) {
  // std::string::compare's order, told by the first byte when that differs
  // (resource names mostly do: cpu, memory, nvidia.com/gpu, pods).
  const auto compare = [](const std::string& a, const std::string& b) {
    if (a.empty() || b.empty() || a[0] == b[0]) return a.compare(b);
    return static_cast<unsigned char>(a[0]) < static_cast<unsigned char>(b[0]) ? -1 : 1;
  };
  const std::vector<Resources::Entry>& entries = r.entries();
  size_t e = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    int order = 1;  // entries[e] against dims[d]; 1 once entries run out
    while (e < entries.size() && (order = compare(entries[e].first, dims[d])) < 0) ++e;
    out[d] = order == 0 ? entries[e].second : 0;
  }
}

// Why a slot is part of the minimum.
enum class Pick { kNo, kForTask, kForMembers };

// A pending member the greedy places.
struct Slot {
  const Member* member = nullptr;
  std::string task;
  std::vector<int64_t> request;               // per resource in Greedy::dims_
  const std::vector<char>* admits = nullptr;  // NodeTable::Admits of its pod
  std::optional<size_t> node;                 // where the greedy put it
  uint32_t gpus = 0;                          // which GPUs of it, when its layout is known
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

// Slots that fit the same nodes and rank them alike: the same request, GPU
// shares and admitting nodes (Fits and Greedy::RankOf read nothing else of
// a slot but its hint, which only ChooseNode reads).
bool SameAsk(const Slot& a, const Slot& b) {
  return a.request == b.request && a.admits == b.admits && a.shares == b.shares &&
         a.gpu_request_ok == b.gpu_request_ok;
}

// One greedy run over a local copy of the free capacity. Resources are held
// densely (one int64 per name the gang asks for) because the preemption
// search runs this many times per pass.
class Greedy {
 public:
  // On the view's free capacity or, with `empty_cluster`, on every node's
  // allocatable less only this gang's own bound and reserved members.
  // `table`: the view's nodes read once for the pass (null: the greedy
  // reads them into a table of its own).
  Greedy(const Gang& gang, const ClusterView& view, NodeTable* table, bool empty_cluster);

  // Places what minTaskMember and minMember need; true when both are met.
  // Called once, first.
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
  // What decides this greedy's run besides the nodes, as bytes (NodeTable's
  // answers by shape): each slot's ask, task and hint in slots_ order (pod
  // names only order the slots), the minimum's order and the needs. Nothing
  // on a table of its own (its answers go with it) or when a member holds a
  // node (its node is then the gang's own).
  std::optional<std::string> Shape() const;

 private:
  void InitSlots();
  void InitDims();
  void InitFree();
  void InitNeeds();
  void OrderSlots();
  std::vector<size_t> PickMinimum();
  bool Substitute(const Slot& failed);
  bool TryPlace(Slot& slot);
  bool Fits(const Slot& slot, size_t node) const;
  // How a node suits the slot, lower better (see ChooseNode).
  using Rank = std::tuple<int, int, int, int64_t, int64_t, size_t>;
  Rank RankOf(const Slot& slot, size_t node) const;
  std::optional<size_t> ChooseNode(const Slot& slot);
  // The best fitting node for `slot` among those no placement has changed
  // since ranked_ was built for its ask (rebuilt when the ask differs).
  std::optional<std::pair<Rank, size_t>> BestUnchanged(const Slot& slot);
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
  // Where the slot's member may go at all (NodeAdmits), per node.
  const std::vector<char>& Admits(const Slot& slot) const { return *slot.admits; }
  // A slot that fits nowhere leaves every slot asking the same nowhere too,
  // as free only shrinks (SameAsk).
  bool FailedAlike(const Slot& slot) const;
  // Node n's free capacity per dimension, as this greedy left it.
  const int64_t* Row(size_t n) const {
    return own_row_[n] != 0 ? own_rows_.data() + (own_row_[n] - 1) * dims_.size()
                            : shared_rows_ + n * dims_.size();
  }
  int64_t Free(size_t n, size_t d) const { return Row(n)[d]; }
  // Node n's row for writing: its own, copied from the shared row at first.
  // Invalidated by the next call.
  int64_t* MutableRow(size_t n);
  // Free(n, d) as InitFree left it: before this gang's pending members.
  int64_t Base(size_t n, size_t d) const;
  // Points shared_rows_ at the table's rows, or copies them to own_block_.
  void InitRows(bool empty_cluster);
  // What node n's GPUs hold: the view's (none on an empty cluster) until a
  // member takes a share there; OwnUses copies them for that.
  const GpuUses& UsesOf(size_t n) const;
  GpuUses& OwnUses(size_t n);

  const Gang& gang_;
  const ClusterView& view_;
  std::optional<NodeTable> own_table_;  // when the caller has none
  NodeTable* table_;                    // the caller's or own_table_
  std::vector<std::string> dims_;       // resource names compared, sorted
  size_t cpu_ = 0;                      // index of cpu in dims_
  size_t gpu_ = 0;                      // index of nvidia.com/gpu in dims_
  // Free capacity, [node * dims_.size() + dim]: a node's row in
  // shared_rows_ until this greedy changes it, then its own in own_rows_.
  // shared_rows_ are table_'s rows when dims_ are the table's names (most
  // gangs: a 5000-node cluster is not copied for each gang a pass plans),
  // else own_block_, copied from them.
  const int64_t* shared_rows_ = nullptr;
  std::vector<int64_t> own_block_;
  std::vector<uint32_t> own_row_;  // [node]: 1 + its row's index in own_rows_, 0: shared
  std::vector<int64_t> own_rows_;
  std::vector<int64_t> base_rows_;   // own_rows_ as InitFree left them
  std::vector<uint32_t> free_gpus_;  // [node]: NodeView::free_gpus, as members take them
  // NodeView::gpu_uses as members took shares: copied on a node's first
  // share (a node's uses are 32 cards, too many to copy for every node).
  std::vector<std::pair<size_t, GpuUses>> own_uses_;
  bool empty_cluster_ = false;
  std::vector<char> used_;           // nodes holding a member of the gang
  std::vector<const Slot*> failed_;  // slots that fitted nowhere, one per kind of ask
  // Nodes a placement of this greedy changed (changed_[n] set), in order:
  // only their fit and rank differ from what ranked_ holds.
  std::vector<char> changed_;
  std::vector<size_t> changed_list_;
  // The fitting, unchanged nodes of one ask as a min-heap by rank, built by
  // one walk over every node. Members of a gang mostly ask alike and come
  // one after another (slots_ is ordered by size), so a gang of m members
  // walks the nodes once per kind of ask instead of m times.
  struct RankedAsk {
    const Slot* like = nullptr;
    std::vector<std::pair<Rank, size_t>> heap;  // std::greater: best on top
  };
  RankedAsk ranked_;
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

Greedy::Greedy(const Gang& gang, const ClusterView& view, NodeTable* table, bool empty_cluster)
    : gang_(gang), view_(view), table_(table), empty_cluster_(empty_cluster) {
  InitSlots();
  InitDims();
  // A slot asks its member's request and one pod slot (SlotRequest), read
  // densely: one merge walk over the member's request per slot.
  const size_t pods = std::ranges::find(dims_, kPods) - dims_.begin();
  for (Slot& slot : slots_) {
    slot.admits = &table_->Admits(*slot.member->pod);
    slot.request.resize(dims_.size());
    ReadAmounts(dims_, slot.member->request, slot.request.data());
    ++slot.request[pods];
  }
  OrderSlots();
  InitNeeds();
  // The free capacity is read by PlaceMinimum (InitFree): a gang of a shape
  // the table already answered (Shape) never reads it.
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
  for (const Member& m : gang_.members) {
    if (CountsPlaced(m)) {
      ++placed_before_;
      ++placed_by_task_[m.Task()];
    } else if (AwaitsPlacement(m)) {
      slots_.push_back(Slot{.member = &m,
                            .task = m.Task(),
                            .shares = m.gpu_demand.shares,
                            .gpu_request_ok = m.gpu_problem.empty()});
    }
  }
}

// cpu and GPUs are always present because node choice ranks by them.
// Without a table the greedy makes its own over these names. With one that
// carries every name asked, its names are taken as they are, so its rows
// need no copy: the names no member asks are never compared (Fits, Blocker
// and Shortfall look only at positive requests).
void Greedy::InitDims() {
  std::vector<std::string> names = {std::string(kCpu), std::string(kNvidiaGpu), std::string(kPods)};
  // Members mostly ask the same few names: each is added once, when first
  // met, rather than every member's copied and sorted.
  for (const Slot& slot : slots_) {
    for (const auto& [name, amount] : slot.member->request.entries()) {
      if (amount > 0 && std::ranges::find(names, name) == names.end()) names.push_back(name);
    }
  }
  std::ranges::sort(names);
  if (table_ == nullptr) table_ = &own_table_.emplace(view_, names);
  if (std::ranges::includes(table_->dims(), names)) {
    dims_ = table_->dims();
  } else {
    dims_ = std::move(names);
  }
  cpu_ = std::ranges::find(dims_, kCpu) - dims_.begin();
  gpu_ = std::ranges::find(dims_, kNvidiaGpu) - dims_.begin();
}

// The table's rows cover every name a node carries; a name of dims_ that
// none carries reads 0, as ReadAmounts would.
void Greedy::InitRows(bool empty_cluster) {
  const size_t nodes = view_.nodes.size();
  if (dims_ == table_->dims()) {
    shared_rows_ = empty_cluster ? table_->AllocatableRow(0) : table_->FreeRow(0);
    return;
  }
  own_block_.assign(nodes * dims_.size(), 0);
  shared_rows_ = own_block_.data();
  const std::vector<std::string>& names = table_->dims();
  std::vector<ptrdiff_t> column;  // per dimension: the table's, or -1
  for (const std::string& dim : dims_) {
    const auto it = std::ranges::lower_bound(names, dim);
    column.push_back(it != names.end() && *it == dim ? it - names.begin() : -1);
  }
  for (size_t n = 0; n < nodes; ++n) {
    const int64_t* row = empty_cluster ? table_->AllocatableRow(n) : table_->FreeRow(n);
    int64_t* out = own_block_.data() + n * dims_.size();
    for (size_t d = 0; d < dims_.size(); ++d) out[d] = column[d] < 0 ? 0 : row[column[d]];
  }
}

int64_t* Greedy::MutableRow(size_t n) {
  if (own_row_[n] == 0) {
    const int64_t* shared = shared_rows_ + n * dims_.size();
    own_rows_.insert(own_rows_.end(), shared, shared + dims_.size());
    own_row_[n] = static_cast<uint32_t>(own_rows_.size() / dims_.size());
  }
  return own_rows_.data() + (own_row_[n] - 1) * dims_.size();
}

int64_t Greedy::Base(size_t n, size_t d) const {
  const size_t row = own_row_[n];
  if (row != 0 && row * dims_.size() <= base_rows_.size()) {
    return base_rows_[(row - 1) * dims_.size() + d];
  }
  return shared_rows_[n * dims_.size() + d];
}

const GpuUses& Greedy::UsesOf(size_t n) const {
  static const GpuUses kIdle{};
  if (changed_[n]) {
    for (const auto& [node, uses] : own_uses_) {
      if (node == n) return uses;
    }
  }
  return empty_cluster_ ? kIdle : view_.nodes[n].gpu_uses;
}

GpuUses& Greedy::OwnUses(size_t n) {
  for (auto& [node, uses] : own_uses_) {
    if (node == n) return uses;
  }
  return own_uses_.emplace_back(n, UsesOf(n)).second;
}

void Greedy::InitFree() {
  own_row_.assign(view_.nodes.size(), 0);
  free_gpus_.assign(view_.nodes.size(), 0);
  used_.assign(view_.nodes.size(), 0);
  changed_.assign(view_.nodes.size(), 0);
  InitRows(empty_cluster_);
  // An empty cluster only asks whether counts ever fit: no GPU sets then,
  // and every GPU idle for shares.
  if (!empty_cluster_) {
    for (size_t n = 0; n < view_.nodes.size(); ++n) free_gpus_[n] = view_.nodes[n].free_gpus;
  }
  for (const Member& m : gang_.members) {
    if (!HoldsNode(m)) continue;
    const std::optional<size_t> n = FindNode(view_, m.node);
    if (!n) continue;
    used_[*n] = 1;
    if (!empty_cluster_) continue;  // the view's free already excludes them (REQUIRES)
    const Resources held = SlotRequest(m);
    int64_t* row = MutableRow(*n);
    for (size_t d = 0; d < dims_.size(); ++d) row[d] -= held.Get(dims_[d]);
  }
  base_rows_ = own_rows_;
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
  InitFree();
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

bool Greedy::FailedAlike(const Slot& slot) const {
  return std::ranges::any_of(failed_, [&](const Slot* f) { return SameAsk(*f, slot); });
}

bool Greedy::TryPlace(Slot& slot) {
  const bool failed_alike = FailedAlike(slot);
  const std::optional<size_t> n = failed_alike ? std::nullopt : ChooseNode(slot);
  if (!n) {
    if (!failed_alike) failed_.push_back(&slot);
    slot.failed = true;
    return false;
  }
  int64_t* row = MutableRow(*n);
  for (size_t d = 0; d < dims_.size(); ++d) row[d] -= slot.request[d];
  if (!slot.shares.empty()) {
    slot.slices = PlaceSlotShares(slot, *n).value_or(std::vector<GpuSlice>());
    const GpuHolding held{.slices = slot.slices};
    AccountHolding(OwnUses(*n), held, +1);
    free_gpus_[*n] &= ~held.Gpus();
  } else if (const std::optional<GpuPick> pick = PickGpus(slot, *n)) {
    slot.gpus = pick->gpus;
    slot.link_shortfall =
        view_.nodes[*n].gpu_layout->BestLink(static_cast<int>(WholeGpus(slot))) - pick->link;
    slot.gpus_stranded = pick->damage;
    free_gpus_[*n] &= ~pick->gpus;
  }
  used_[*n] = 1;
  if (!changed_[*n]) {
    changed_[*n] = 1;
    changed_list_.push_back(*n);
  }
  slot.node = n;
  return true;
}

// Only positive requests are compared, as kube-scheduler does.
bool Greedy::Fits(const Slot& slot, size_t node) const {
  if (!Admits(slot)[node] || !slot.gpu_request_ok) return false;
  const int64_t* free = Row(node);
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (slot.request[d] > 0 && slot.request[d] > free[d]) return false;
  }
  if (!slot.shares.empty()) return PlaceSlotShares(slot, node).has_value();
  // Whole GPUs go on GPUs nobody shares: where some are shared, count them.
  const int64_t whole = WholeGpus(slot);
  const NodeView& view = view_.nodes[node];
  if (whole > 0 && !empty_cluster_ && view.gpu_cards != nullptr &&
      std::ranges::any_of(UsesOf(node), [](const GpuCardUse& u) { return u.sharers > 0; })) {
    return std::popcount(free_gpus_[node]) >= whole;
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
    if (const std::optional<GpuPick> one = view.gpu_layout->Pick(free_gpus_[node], 1)) {
      idle_order.push_back(std::countr_zero(one->gpus));
    }
  }
  return PlaceShares(slot.shares, *view.gpu_cards, UsesOf(node), usable, idle_order);
}

int Greedy::GpuPreference(const Slot& slot, size_t node, const std::optional<GpuPick>& pick) const {
  if (slot.shares.empty()) return pick ? pick->link : 0;
  const std::optional<std::vector<GpuSlice>> slices = PlaceSlotShares(slot, node);
  if (!slices) return 0;
  return static_cast<int>(
      std::lround(SharedFill(*slices, *view_.nodes[node].gpu_cards, UsesOf(node)) * 1000));
}

std::optional<GpuPick> Greedy::PickGpus(const Slot& slot, size_t node) const {
  const GpuLayout* layout = view_.nodes[node].gpu_layout.get();
  const int64_t k = WholeGpus(slot);
  if (layout == nullptr || k <= 0) return std::nullopt;
  return table_->Pick(*layout, free_gpus_[node], static_cast<int>(k));
}

// The hint (a persisted plan) first; then the best GPU set (its weakest
// link: a member's all-reduce runs at that speed); then nodes the gang
// already uses, to keep it close; then the fewest GPUs stranded (left
// without a best-link partner); then best fit: fewest GPUs left, least cpu
// left, so whole free nodes and NVLink islands stay whole for the next big
// member; then the node's name (its index: view_.nodes is in name order).
Greedy::Rank Greedy::RankOf(const Slot& slot, size_t n) const {
  const std::optional<GpuPick> picked = PickGpus(slot, n);
  const GpuPick pick = picked.value_or(GpuPick{});
  return Rank(-GpuPreference(slot, n, picked), used_[n] ? 0 : 1, pick.damage,
              Free(n, gpu_) - slot.request[gpu_], Free(n, cpu_) - slot.request[cpu_], n);
}

std::optional<std::pair<Greedy::Rank, size_t>> Greedy::BestUnchanged(const Slot& slot) {
  if (ranked_.like == nullptr || !SameAsk(*ranked_.like, slot)) {
    ranked_.like = &slot;
    ranked_.heap.clear();
    ranked_.heap.reserve(view_.nodes.size());
    for (size_t n = 0; n < view_.nodes.size(); ++n) {
      if (!changed_[n] && Fits(slot, n)) ranked_.heap.emplace_back(RankOf(slot, n), n);
    }
    std::ranges::make_heap(ranked_.heap, std::greater<>{});
  }
  // A node placed on since is ranked afresh by the caller.
  while (!ranked_.heap.empty() && changed_[ranked_.heap.front().second]) {
    std::ranges::pop_heap(ranked_.heap, std::greater<>{});
    ranked_.heap.pop_back();
  }
  if (ranked_.heap.empty()) return std::nullopt;
  return ranked_.heap.front();
}

std::optional<size_t> Greedy::ChooseNode(const Slot& slot) {
  if (!slot.member->hint.empty()) {
    const std::optional<size_t> hint = FindNode(view_, slot.member->hint);
    if (hint && Fits(slot, *hint)) return hint;
  }
  std::optional<std::pair<Rank, size_t>> best = BestUnchanged(slot);
  for (size_t n : changed_list_) {
    if (!Fits(slot, n)) continue;
    std::pair<Rank, size_t> candidate(RankOf(slot, n), n);
    if (!best || candidate < *best) best = std::move(candidate);
  }
  if (!best) return std::nullopt;
  return best->second;
}

// The resource that keeps `slot` off every admitting node: one it asks more
// of than any of them has free (GPUs preferred), else the one short on the
// most nodes (the request does not fit whole anywhere: fragmentation).
size_t Greedy::Blocker(const Slot& slot) const {
  std::optional<size_t> hard;
  size_t soft = gpu_;
  int most = -1;
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (slot.request[d] <= 0) continue;
    int64_t largest = std::numeric_limits<int64_t>::min();
    int short_on = 0;
    for (size_t n = 0; n < view_.nodes.size(); ++n) {
      if (!Admits(slot)[n]) continue;
      largest = std::max(largest, Free(n, d));
      if (slot.request[d] > Free(n, d)) ++short_on;
    }
    if (slot.request[d] > largest && (!hard || d == gpu_)) hard = d;
    if (short_on > most || (short_on == most && d == gpu_)) {
      most = short_on;
      soft = d;
    }
  }
  return hard.value_or(soft);
}

std::string Greedy::Shortfall(std::string_view free_word) const {
  const int32_t missing = needed_ - placeable();
  // Members whose shares of GPUs fit no GPU (the counts may well fit).
  for (size_t i : short_) {
    const Slot& slot = slots_[i];
    if (slot.shares.empty()) continue;
    const bool counts_fit = std::ranges::any_of(view_.nodes, [&](const NodeView& node) {
      const size_t n = static_cast<size_t>(&node - view_.nodes.data());
      if (!Admits(slot)[n]) return false;
      for (size_t d = 0; d < dims_.size(); ++d) {
        if (slot.request[d] > 0 && slot.request[d] > Free(n, d)) return false;
      }
      return true;
    });
    if (counts_fit) {
      return std::to_string(missing) + " need " + DescribeShareAsk(slot.shares.front()) +
             ", which no GPU " + (free_word == "free" ? "has free" : "can give") + " to share";
    }
  }
  std::map<size_t, int> votes;                             // blocking resource -> members it blocks
  std::vector<std::pair<size_t, size_t>> blocked;          // (slot, resource)
  std::vector<std::pair<const Slot*, size_t>> blocker_of;  // one per kind of ask (SameAsk)
  for (size_t i : short_) {
    const Slot& slot = slots_[i];
    if (std::ranges::none_of(Admits(slot), [](char a) { return a != 0; })) continue;
    auto known =
        std::ranges::find_if(blocker_of, [&](const auto& b) { return SameAsk(*b.first, slot); });
    const size_t d = known != blocker_of.end()
                         ? known->second
                         : blocker_of.emplace_back(&slot, Blocker(slot)).second;
    ++votes[d];
    blocked.emplace_back(i, d);
  }
  if (votes.empty()) {
    return std::to_string(missing) + " fit no node's selector, affinity or taints";
  }
  size_t top = votes.begin()->first;
  for (const auto& [d, n] : votes) {
    if (n > votes[top] || (n == votes[top] && d == gpu_)) top = d;
  }
  int64_t amount = 0;
  int64_t largest = 0;
  int64_t largest_before = 0;  // before the gang's placed members took their share
  std::vector<const std::vector<char>*> admits_seen;  // each set of admitting nodes once
  for (const auto& [i, d] : blocked) {
    if (d != top) continue;
    amount = std::max(amount, slots_[i].request[d]);
    if (std::ranges::find(admits_seen, slots_[i].admits) != admits_seen.end()) continue;
    admits_seen.push_back(slots_[i].admits);
    for (size_t n = 0; n < view_.nodes.size(); ++n) {
      if (!Admits(slots_[i])[n]) continue;
      largest = std::max(largest, Free(n, d));
      largest_before = std::max(largest_before, Base(n, d));
    }
  }
  const std::string& name = dims_[top];
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

// Appends `value`'s bytes (an integer or pointer) to `out`.
template <typename T>
void AppendBytes(std::string& out, T value) {
  static_assert(std::is_integral_v<T> || std::is_pointer_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void AppendString(std::string& out, std::string_view text) {
  AppendBytes(out, text.size());
  out.append(text);
}

std::optional<std::string> Greedy::Shape() const {
  if (own_table_ || std::ranges::any_of(gang_.members, HoldsNode)) return std::nullopt;
  std::string shape;
  AppendBytes(shape, dims_.size());
  for (const std::string& dim : dims_) AppendString(shape, dim);
  AppendBytes(shape, slots_.size());
  for (const Slot& slot : slots_) {
    for (int64_t amount : slot.request) AppendBytes(shape, amount);
    AppendBytes(shape, slot.shares.size());
    for (const GpuShareAsk& ask : slot.shares) {
      AppendBytes(shape, static_cast<int>(ask.form));
      AppendBytes(shape, ask.container);
      AppendBytes(shape, ask.gpus);
      AppendBytes(shape, ask.compute);
      AppendBytes(shape, ask.memory_mib);
      AppendBytes(shape, ask.memory_permille);
    }
    AppendBytes(shape, slot.gpu_request_ok);
    AppendBytes(shape, slot.admits);  // the table's: one per set of constraints
    AppendString(shape, slot.task);
    AppendString(shape, slot.member->hint);
  }
  for (size_t i : smallest_first_) AppendBytes(shape, i);
  AppendBytes(shape, task_need_.size());
  for (const auto& [task, need] : task_need_) {
    AppendString(shape, task);
    AppendBytes(shape, need);
  }
  AppendBytes(shape, member_need_);
  AppendBytes(shape, placed_before_);
  return shape;
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

// Why the gang's minimum does not fit even on an empty cluster (nullopt: it
// does). `shape`: Greedy::Shape, when the table may answer.
NodeTable::EmptyVerdict NeverFits(const Gang& gang, const ClusterView& view, NodeTable* table,
                                  const std::optional<std::string>& shape) {
  if (shape) {
    if (const NodeTable::EmptyVerdict* known = table->FindEmptyVerdict(*shape)) return *known;
  }
  Greedy empty(gang, view, table, /*empty_cluster=*/true);
  NodeTable::EmptyVerdict verdict;
  if (!empty.PlaceMinimum()) verdict = empty.Message(" on an empty cluster", "allocatable");
  if (shape) table->KeepEmptyVerdict(*shape, verdict);
  return verdict;
}

// Why the gang waits, its minimum placed nowhere now (`now`).
Wait WaitOf(const Gang& gang, const ClusterView& view, NodeTable* table, const Greedy& now,
            const std::optional<std::string>& shape) {
  // Tell "wait for capacity" from "will never fit as specified": only the
  // former is worth preempting for.
  if (NodeTable::EmptyVerdict never = NeverFits(gang, view, table, shape)) {
    return Wait{.key = gang.key,
                .reason = kWaitNeverFits,
                .message = *std::move(never),
                .placeable = now.placeable()};
  }
  return Wait{.key = gang.key,
              .reason = kWaitResources,
              .message = now.Message("", "free"),
              .placeable = now.placeable()};
}

}  // namespace

const NodeTable::EmptyVerdict* NodeTable::FindEmptyVerdict(const std::string& shape) const {
  const auto it = empty_verdicts_.find(shape);
  return it == empty_verdicts_.end() ? nullptr : &it->second;
}

void NodeTable::KeepEmptyVerdict(std::string shape, EmptyVerdict verdict) {
  empty_verdicts_.emplace(std::move(shape), std::move(verdict));
}

const Wait* NodeTable::FindWait(const std::string& shape) const {
  const auto it = waits_.find(shape);
  return it == waits_.end() ? nullptr : &it->second;
}

void NodeTable::KeepWait(std::string shape, Wait wait) {
  waits_.emplace(std::move(shape), std::move(wait));
}

const std::vector<std::string>& NodeTable::dims() {
  if (dims_) return *dims_;
  std::vector<std::string> names = {std::string(kCpu), std::string(kNvidiaGpu), std::string(kPods)};
  std::ranges::sort(names);
  const auto carried = [&](const Resources& r) {
    return std::ranges::includes(names, r.entries(), {}, {}, &Resources::Entry::first);
  };
  for (const NodeView& node : view_.nodes) {
    // Most nodes carry the names seen already: a merge walk, no sort.
    if (carried(node.free) && carried(node.node->allocatable)) continue;
    for (const Resources* r : {&node.free, &node.node->allocatable}) {
      for (const auto& [name, amount] : r->entries()) names.push_back(name);
    }
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  dims_ = std::move(names);
  return *dims_;
}

const int64_t* NodeTable::FreeRow(size_t n) {
  const size_t width = dims().size();
  if (free_.empty() && !view_.nodes.empty()) {
    free_.assign(view_.nodes.size() * width, 0);
    for (size_t i = 0; i < view_.nodes.size(); ++i) ReadFree(i);
  }
  return free_.data() + n * width;
}

const int64_t* NodeTable::AllocatableRow(size_t n) {
  const size_t width = dims().size();
  if (allocatable_.empty() && !view_.nodes.empty()) {
    allocatable_.assign(view_.nodes.size() * width, 0);
    for (size_t i = 0; i < view_.nodes.size(); ++i) {
      ReadAmounts(*dims_, view_.nodes[i].node->allocatable, allocatable_.data() + i * width);
    }
  }
  return allocatable_.data() + n * width;
}

void NodeTable::Refresh(size_t n) {
  if (!waits_.empty()) waits_.clear();
  if (!free_.empty()) ReadFree(n);  // else nothing is read yet
}

void NodeTable::ReadFree(size_t n) {
  ReadAmounts(*dims_, view_.nodes[n].free, free_.data() + n * dims_->size());
}

const std::vector<char>& NodeTable::Admits(const Pod& pod) {
  for (const AdmitSet& set : admit_sets_) {
    if (SameNodeConstraints(*set.like, pod)) return *set.nodes;
  }
  auto nodes = std::make_unique<std::vector<char>>();
  nodes->reserve(view_.nodes.size());
  for (const NodeView& node : view_.nodes) nodes->push_back(NodeAdmits(node, pod));
  return *admit_sets_.emplace_back(AdmitSet{.like = &pod, .nodes = std::move(nodes)}).nodes;
}

const std::optional<GpuPick>& NodeTable::Pick(const GpuLayout& layout, uint32_t free, int k) {
  const PickKey key{.layout = &layout, .free = free, .k = k};
  auto it = picks_.find(key);
  if (it == picks_.end()) it = picks_.emplace(key, layout.Pick(free, k)).first;
  return it->second;
}

std::variant<GangPlan, Wait> PlanGang(const Gang& gang, const ClusterView& view, int max_extras) {
  return PlanGangOn(gang, view, /*table=*/nullptr, max_extras);
}

std::variant<GangPlan, Wait> PlanGangOn(const Gang& gang, const ClusterView& view, NodeTable* table,
                                        int max_extras) {
  if (std::optional<Wait> wait = MissingMembers(gang)) return *std::move(wait);
  Greedy now(gang, view, table, /*empty_cluster=*/false);
  const std::optional<std::string> shape = now.Shape();
  if (shape) {
    if (const Wait* known = table->FindWait(*shape)) {
      Wait wait = *known;
      wait.key = gang.key;
      return wait;
    }
  }
  if (now.PlaceMinimum()) {
    now.PlaceExtras(max_extras);
    return now.Plan();
  }
  Wait wait = WaitOf(gang, view, table, now, shape);
  if (shape) table->KeepWait(*shape, wait);
  return wait;
}

bool MinimumFits(const Gang& gang, const ClusterView& view, NodeTable* table) {
  if (MissingMembers(gang)) return false;
  return Greedy(gang, view, table, /*empty_cluster=*/false).PlaceMinimum();
}

}  // namespace muster::gang
