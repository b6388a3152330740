// Internal to gang/ (planner.cc, pass.cc): the planner's working state of a
// ClusterView, so that planning a gang on a cluster of thousands of nodes
// costs about what the gang asks, not what the cluster holds (issue 22).
//
// A NodeTable holds, per node of the view (same index, name order), the free
// amount of each resource the pass compares as one dense row, the GPUs nobody
// holds and their holders' uses. The greedy (planner.cc) changes rows in
// place as it places members and rolls them back when done (Mark/Rollback),
// instead of copying every node per gang. What NodeAdmits says of a pod is
// kept per set of scheduling constraints (most pods have none), and the GPU
// sets of the node layouts per free mask.
//
// With BuildIndex(), the table also keeps the schedulable nodes in buckets of
// equal (GPU layout, free GPU mask, free GPUs), each ordered by free cpu, and
// per GPU count k the buckets ordered by what makes a node best for a member
// of k whole GPUs before cpu (the link of its best k-GPU set, the GPUs it
// strands, the GPUs left): First() answers the planner's node choice by
// walking buckets in that order instead of every node.
//
// Rows mirror the view: `kFree` reads NodeView::free, free_gpus and gpu_uses;
// `kAllocatable` reads node->allocatable with no GPU free and none used (the
// "would it ever fit" cluster of PlanGang); `kEmptied` node->allocatable with
// every GPU idle (EarmarkFor's emptied nodes: all cards free when told apart,
// else the view's free mask). An excluded node reads as nothing free.
//
// The view must outlive the table and keep its nodes; when its free capacity
// changes (kFree), Sync() re-reads the node.
//
// Thread-safety: none; a table belongs to one pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gang/gang.h"
#include "model/gpu_share.h"
#include "model/pod.h"

namespace muster::gang {

// What the planner reads of a member's pod, worked out once per pass:
// EffectiveRequest walks the containers and GpuDemandOf parses annotations,
// and a pass asks both several times per member. Pods are told apart by
// address: a fact is valid while its pod lives.
class PodFacts {
 public:
  struct Facts {
    Resources request;                // EffectiveRequest()
    Resources slot;                   // SlotRequest(): with one pod slot
    std::vector<GpuShareAsk> shares;  // GpuDemandOf's shares
    bool gpu_request_ok = true;       // whether GpuDemandOf reads
  };
  const Facts& Of(const Pod& pod);

 private:
  std::unordered_map<const Pod*, std::unique_ptr<Facts>> facts_;
};

class NodeTable {
 public:
  enum class Source { kFree, kAllocatable, kEmptied };

  // `dims`: sorted, unique resource names, cpu, nvidia.com/gpu and pods
  // among them (DimsOf gives such a list).
  // `facts`: shared with the other tables of the pass (null: its own).
  NodeTable(const ClusterView& view, std::vector<std::string> dims, Source source,
            std::shared_ptr<PodFacts> facts = nullptr);
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  // cpu, nvidia.com/gpu, pods and every resource a pending member of the
  // gangs asks a positive amount of, sorted.
  static std::vector<std::string> DimsOf(const std::vector<Gang>& gangs, PodFacts& facts);
  static std::vector<std::string> DimsOf(const Gang& gang, PodFacts& facts);

  PodFacts& facts() const { return *facts_; }
  const std::shared_ptr<PodFacts>& shared_facts() const { return facts_; }

  const ClusterView& view() const { return view_; }
  const std::vector<std::string>& dims() const { return dims_; }
  size_t cpu() const { return cpu_; }
  size_t gpu() const { return gpu_; }
  size_t size() const { return free_gpus_.size(); }
  // kAllocatable: no GPU held, so no GPU set is chosen.
  bool empty_cluster() const { return source_ == Source::kAllocatable; }
  // The amounts of `r` over dims(); AddRow adds them to `row`.
  std::vector<int64_t> Row(const Resources& r) const;
  void AddRow(const Resources& r, int64_t* row) const;

  // ---- Reads.
  const int64_t* Free(size_t n) const {
    return excluded_[n] ? zeros_.data() : &rows_[n * dims_.size()];
  }
  uint32_t FreeGpus(size_t n) const { return free_gpus_[n]; }
  const GpuUses& Uses(size_t n) const { return uses_[n]; }
  bool Excluded(size_t n) const { return excluded_[n] != 0; }

  // ---- Changes the greedy undoes: Rollback(mark) restores every node
  // changed since Mark() returned `mark` (last in, first out).
  // Node n's rows move by `sign` * `amount` (over dims()), its free GPUs
  // and their uses become `free_gpus` and `uses`.
  void Change(size_t n, const std::vector<int64_t>& amount, int sign, uint32_t free_gpus,
              const GpuUses& uses);
  size_t Mark() const { return undo_.size(); }
  void Rollback(size_t mark);
  // Keeps every change so far: nothing to roll back any more. REQUIRES: no
  // mark is held.
  void Commit() {
    undo_.clear();
    undo_rows_.clear();
  }

  // ---- Changes that stay. REQUIRES: nothing to roll back.
  // Re-reads node n from the view (kFree: after the view's free changed).
  void Sync(size_t n);
  // Node n offers nothing from now on; Include undoes it.
  void Exclude(size_t n);
  void Include(size_t n);

  // ---- NodeAdmits(view().nodes[n], pod), memoised per scheduling
  // constraints (node selector, affinity, tolerations).
  int AdmitsClass(const Pod& pod);
  bool Admits(int admits_class, size_t n) const;
  // Whether some node of the table admits the class.
  bool AdmitsAny(int admits_class) const;

  // layout.Pick(free, k), memoised.
  std::optional<GpuPick> Pick(const GpuLayout& layout, uint32_t free, int k) const;

  // ---- The index (see the top).
  void BuildIndex();
  bool indexed() const { return indexed_; }
  // Over the nodes the class admits, resource d as Free() reads it: the
  // largest amount (INT64_MIN when none admits) and how many have less than
  // `x`; kept in a tree per class and resource, current with every change,
  // so a wait's message need not walk every node. REQUIRES: indexed().
  int64_t Largest(int admits_class, size_t d) const;
  int64_t CountBelow(int admits_class, size_t d, int64_t x) const;
  // The first indexed node n with fits(n) in the order (-link, damage, free
  // GPUs, free cpu, n), where link and damage are those of the node's best
  // k-GPU set (Pick; 0 and 0 without a layout, a set or k), among those
  // with at least `gpus` free GPUs and `cpu` free cpu where these are
  // positive. Nothing when none fits. REQUIRES: indexed().
  template <typename Fits>
  std::optional<size_t> First(int k, int64_t gpus, int64_t cpu, Fits&& fits) const;

 private:
  struct Undo {
    uint32_t node;
    uint32_t free_gpus;
    GpuUses uses;
  };
  struct Bucket {
    const GpuLayout* layout;
    uint32_t mask;
    int64_t gpus;
    std::set<std::pair<int64_t, uint32_t>> nodes;  // (free cpu, node)
  };
  // The buckets in the order of First(k): (-link, damage) per bucket and the
  // bucket ids sorted by (-link, damage, gpus, id).
  struct Order {
    std::vector<std::pair<int, int>> key;
    std::vector<uint32_t> ids;
  };
  struct AdmitsRow {
    Pod pod;                          // the class's constraints, nothing else
    mutable std::vector<int8_t> row;  // per node: -1 unknown, 0, 1
  };

  void Save(size_t n);
  void Load(size_t n);
  bool Indexable(size_t n) const;
  // Puts node n in the bucket its state says (none when not Indexable).
  void Reindex(size_t n);
  uint32_t BucketOf(const GpuLayout* layout, uint32_t mask, int64_t gpus);
  std::pair<int, int> KeyOf(const Bucket& bucket, int k) const;
  void Place(Order& order, int k, uint32_t id) const;
  const Order& OrderOf(int k) const;
  template <typename Fits>
  bool Scan(const Bucket& b, int64_t cpu, Fits& fits, std::optional<size_t>& best,
            int64_t& best_cpu) const;

  const ClusterView& view_;
  const std::vector<std::string> dims_;
  const Source source_;
  const std::shared_ptr<PodFacts> facts_;
  size_t cpu_ = 0;
  size_t gpu_ = 0;
  std::vector<int64_t> rows_;  // [node * dims + dim]
  std::vector<int64_t> zeros_;
  std::vector<uint32_t> free_gpus_;
  std::vector<GpuUses> uses_;
  std::vector<char> excluded_;
  std::vector<Undo> undo_;
  std::vector<int64_t> undo_rows_;
  std::vector<AdmitsRow> admits_;
  mutable std::map<std::tuple<const GpuLayout*, uint32_t, int>, std::optional<GpuPick>> picks_;
  // The index.
  bool indexed_ = false;
  std::vector<Bucket> buckets_;
  std::map<std::tuple<const GpuLayout*, uint32_t, int64_t>, uint32_t> bucket_ids_;
  std::vector<uint32_t> bucket_of_;  // per node; kNone when not indexed
  std::vector<int64_t> cpu_of_;      // per node: its free cpu in its bucket
  mutable std::map<int, Order> orders_;
  // Per admits class: per resource a segment tree over the nodes (leaf
  // size_ + n of width_ leaves), min and max of the admitted nodes' amounts
  // and how many it admits under each tree node.
  struct Stats {
    std::vector<int64_t> min, max;  // [d * 2 * width_ + i]
    std::vector<int32_t> count;     // [i]
  };
  const Stats& StatsOf(int admits_class) const;
  void Restat(size_t n) const;
  int64_t CountBelow(const Stats& s, size_t base, size_t i, int64_t x) const;
  size_t width_ = 1;
  mutable std::map<int, Stats> stats_;
  static constexpr uint32_t kNone = ~uint32_t{0};
};

template <typename Fits>
bool NodeTable::Scan(const Bucket& b, int64_t cpu, Fits& fits, std::optional<size_t>& best,
                     int64_t& best_cpu) const {
  auto it = cpu > 0 ? b.nodes.lower_bound({cpu, 0}) : b.nodes.begin();
  for (; it != b.nodes.end(); ++it) {
    if (best && *it >= std::pair<int64_t, uint32_t>(best_cpu, static_cast<uint32_t>(*best))) {
      return false;
    }
    if (fits(static_cast<size_t>(it->second))) {
      best = it->second;
      best_cpu = it->first;
      return true;
    }
  }
  return false;
}

template <typename Fits>
std::optional<size_t> NodeTable::First(int k, int64_t gpus, int64_t cpu, Fits&& fits) const {
  const Order& order = OrderOf(k);
  std::optional<size_t> best;
  int64_t best_cpu = 0;
  std::tuple<int, int, int64_t> best_key;
  for (uint32_t id : order.ids) {
    const Bucket& b = buckets_[id];
    if (b.nodes.empty() || (gpus > 0 && b.gpus < gpus)) continue;
    const auto key = std::tuple(order.key[id].first, order.key[id].second, b.gpus);
    // Buckets come in key order: past the best one's key, nothing ranks
    // better; buckets of equal key compete on cpu, then node.
    if (best && key != best_key) break;
    if (Scan(b, cpu, fits, best, best_cpu)) best_key = key;
  }
  return best;
}

}  // namespace muster::gang
