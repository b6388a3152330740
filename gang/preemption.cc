// The victims of a preemption or reclaim (RunPass's step d): the candidates
// in order, added until the preemptor's minimum fits, then the set made
// minimal - on a what-if table (Trial) that asks the planner only what it
// cannot tell already.
#include "gang/preemption.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gang/feasibility.h"
#include "gang/planner.h"
#include "gang/queue_limits.h"

namespace muster::gang {
namespace {

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
    if (AwaitsPlacement(m)) after += m.pod->EffectiveRequest();
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

// The preemption search's what-if (ChoosePreemption): the pass's view with
// chosen victims' pods given back, on a table that MinimumFits asks many
// times. A pod is given back as ChangeFree gives it; a node is rebuilt from
// the view with the chosen victims on it given back in the order they were
// chosen, so taking one back is exact.
//
// MinimumFits runs only when its answer is not known: a change on nodes
// that can hold none of the preemptor's members (less free than its least
// member asks, or not admitting any) and that the last run placed none on
// leaves that run, so its answer, as it was (every other node is as it was
// and ranks as before); and the minimum does not fit while the nodes, each
// counted by how many of that least member it could hold, hold fewer
// members than the minimum needs.
class Trial {
 public:
  Trial(const ClusterView& view, const Gang& preemptor, const NodeTable& like);
  // Gives the victim's pods back.
  void Release(const VictimCandidate& v);
  // Takes a released victim back; Keep() or Restore() then.
  void Drop(const VictimCandidate& v);
  void Keep(const VictimCandidate& v);
  void Restore();
  // Whether the preemptor's minimum fits now (MinimumFits).
  bool Answer();

 private:
  void GiveBack(size_t n, const VictimCandidate::Pod& pod, std::vector<int64_t>& row,
                uint32_t& free_gpus, GpuUses& uses) const;
  void Recount(size_t n);
  int64_t CapOf(size_t n) const;
  std::vector<size_t> NodesOf(const VictimCandidate& v) const;

  const ClusterView& view_;
  const Gang& preemptor_;
  NodeTable table_;
  std::vector<int> classes_;    // of its members to place
  std::vector<int64_t> least_;  // per dim: the least any member to place asks
  int64_t need_ = 0;            // members its minimum places, at least
  std::vector<int64_t> cap_;    // per node: how many of `least_` it holds
  int64_t caps_ = 0;            // their sum, each at most need_
  // The chosen victims with pods on each node, in the order chosen.
  std::vector<std::vector<const VictimCandidate*>> on_node_;
  std::vector<size_t> changed_;  // nodes of the last change
  // The last run of MinimumFits that holds for the table now: its answer
  // and the nodes it placed members on.
  std::optional<bool> last_;
  std::vector<size_t> last_placed_;
  // Before Drop(), for Restore().
  size_t mark_ = 0;
  std::optional<bool> saved_last_;
  std::vector<size_t> saved_placed_;
};

// On `view`, with the dims and pod facts of the table `like`.
Trial::Trial(const ClusterView& view, const Gang& preemptor, const NodeTable& like)
    : view_(view),
      preemptor_(preemptor),
      table_(view, like.dims(), NodeTable::Source::kFree, like.shared_facts()) {
  least_.assign(table_.dims().size(), std::numeric_limits<int64_t>::max());
  int64_t placed = 0;
  for (const Member& m : preemptor.members) {
    if (CountsPlaced(m)) ++placed;
    if (!AwaitsPlacement(m)) continue;
    classes_.push_back(table_.AdmitsClass(*m.pod));
    const std::vector<int64_t> row = table_.Row(table_.facts().Of(*m.pod).slot);
    for (size_t d = 0; d < row.size(); ++d) least_[d] = std::min(least_[d], row[d]);
  }
  need_ = classes_.empty() ? 0 : std::max<int64_t>(0, preemptor.spec.min_member - placed);
  cap_.assign(view.nodes.size(), 0);
  on_node_.resize(view.nodes.size());
  for (size_t n = 0; n < view.nodes.size(); ++n) Recount(n);
}

// How many members asking `least_` the node could hold; 0 when it admits
// none of the members to place.
int64_t Trial::CapOf(size_t n) const {
  if (classes_.empty() || !view_.nodes[n].schedulable ||
      std::ranges::none_of(classes_, [&](int c) { return table_.Admits(c, n); })) {
    return 0;
  }
  int64_t cap = std::numeric_limits<int64_t>::max();
  const int64_t* free = table_.Free(n);
  for (size_t d = 0; d < least_.size(); ++d) {
    if (least_[d] > 0) cap = std::min(cap, std::max<int64_t>(free[d], 0) / least_[d]);
  }
  return cap;
}

void Trial::Recount(size_t n) {
  caps_ -= std::min(cap_[n], need_);
  cap_[n] = CapOf(n);
  caps_ += std::min(cap_[n], need_);
}

// ChangeFree(+1) of one pod on a node's row, free GPUs and uses.
void Trial::GiveBack(size_t n, const VictimCandidate::Pod& pod, std::vector<int64_t>& row,
                     uint32_t& free_gpus, GpuUses& uses) const {
  table_.AddRow(pod.request, row.data());
  if (pod.gpus.empty()) return;
  AccountHolding(uses, pod.gpus, -1);
  const auto& cards = view_.nodes[n].gpu_cards;
  for (uint32_t m = pod.gpus.Gpus(); m != 0; m &= m - 1) {
    const auto g = static_cast<size_t>(std::countr_zero(m));
    if (uses[g].idle() && (!cards || (g < cards->size() && (*cards)[g].healthy))) {
      free_gpus |= uint32_t{1} << g;
    }
  }
}

std::vector<size_t> Trial::NodesOf(const VictimCandidate& v) const {
  std::vector<size_t> nodes;
  for (const VictimCandidate::Pod& pod : v.pods) {
    if (const std::optional<size_t> n = FindNode(view_, pod.node)) nodes.push_back(*n);
  }
  std::ranges::sort(nodes);
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

void Trial::Release(const VictimCandidate& v) {
  changed_ = NodesOf(v);
  for (size_t n : changed_) {
    std::vector<int64_t> row(table_.dims().size(), 0);
    uint32_t free_gpus = table_.FreeGpus(n);
    GpuUses uses = table_.Uses(n);
    for (const VictimCandidate::Pod& pod : v.pods) {
      if (pod.node == view_.nodes[n].name()) GiveBack(n, pod, row, free_gpus, uses);
    }
    table_.Change(n, row, +1, free_gpus, uses);
    on_node_[n].push_back(&v);
    Recount(n);
  }
  table_.Commit();
}

void Trial::Drop(const VictimCandidate& v) {
  changed_ = NodesOf(v);
  mark_ = table_.Mark();
  saved_last_ = last_;
  saved_placed_ = last_placed_;
  for (size_t n : changed_) {
    const NodeView& node = view_.nodes[n];
    std::vector<int64_t> row = table_.Row(node.free);
    uint32_t free_gpus = node.free_gpus;
    GpuUses uses = node.gpu_uses;
    for (const VictimCandidate* other : on_node_[n]) {
      if (other == &v) continue;
      for (const VictimCandidate::Pod& pod : other->pods) {
        if (pod.node == node.name()) GiveBack(n, pod, row, free_gpus, uses);
      }
    }
    const int64_t* now = table_.Free(n);
    for (size_t d = 0; d < row.size(); ++d) row[d] -= now[d];
    table_.Change(n, row, +1, free_gpus, uses);
    Recount(n);
  }
}

void Trial::Keep(const VictimCandidate& v) {
  for (size_t n : changed_) std::erase(on_node_[n], &v);
  table_.Commit();
}

void Trial::Restore() {
  table_.Rollback(mark_);
  for (size_t n : changed_) Recount(n);
  last_ = std::move(saved_last_);
  last_placed_ = std::move(saved_placed_);
}

bool Trial::Answer() {
  const bool same_run =
      last_ && std::ranges::all_of(changed_, [&](size_t n) {
        return cap_[n] == 0 && std::ranges::find(last_placed_, n) == last_placed_.end();
      });
  if (same_run) return *last_;
  last_.reset();
  if (caps_ < need_) return false;
  last_ = MinimumFits(preemptor_, table_, &last_placed_);
  return *last_;
}

}  // namespace

// (d) Adds candidates until the preemptor's minimum fits, then makes the set
// minimal: drops every victim it can do without, latest added first (the
// costliest, by the candidate order). Nothing when even every candidate
// together is not enough. `spared`: the candidates conformance kept out
// (Eligible).
std::optional<Preemption> ChoosePreemption(const ClusterView& view, const NodeTable& like,
                                           const Gang& preemptor,
                                           const std::vector<VictimCandidate>& victims,
                                           const QueueLimits& queues, const PassConfig& config,
                                           int& spared) {
  Trial trial(view, preemptor, like);
  std::vector<const VictimCandidate*> chosen;
  ReclaimLedger ledger(preemptor, queues);
  bool fits = false;
  for (const VictimCandidate* candidate : Eligible(preemptor, victims, queues, config, spared)) {
    if (!ledger.Take(*candidate)) continue;
    trial.Release(*candidate);
    chosen.push_back(candidate);
    if ((fits = trial.Answer())) break;
  }
  if (!fits) return std::nullopt;
  for (size_t i = chosen.size(); i-- > 0;) {
    trial.Drop(*chosen[i]);
    if (trial.Answer()) {
      trial.Keep(*chosen[i]);
      chosen.erase(chosen.begin() + static_cast<ptrdiff_t>(i));
    } else {
      trial.Restore();
    }
  }
  Preemption preemption{.preemptor = preemptor.key};
  if (!preemptor.queues.empty()) preemption.queue = preemptor.queues.front();
  for (const VictimCandidate* victim : chosen) {
    preemption.victims.push_back(victim->key);
    if (!SameQueue(preemptor, *victim)) preemption.reclaimed.push_back(victim->key);
    preemption.pods.insert(preemption.pods.end(), victim->pods.begin(), victim->pods.end());
  }
  return preemption;
}

}  // namespace muster::gang
