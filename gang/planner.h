// Internal: the greedy behind PlanGang, exposed for RunPass, which plans many
// gangs on one view (NodeTable) and whose preemption search asks "would the
// gang fit?" many times and needs no message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "gang/gang.h"
#include "model/pod.h"

namespace muster::gang {

// What the planner reads of a view's nodes, kept for a pass that plans many
// gangs on one view: each node's free capacity and allocatable as dense
// rows over every resource name the nodes carry, and NodeAdmits per set of
// scheduling constraints asked so far. Without it every gang re-reads every
// node's Resources (named amounts, string compares) - 5000 nodes for each of
// the 1000 gangs a pass may plan.
//
// Nothing is read before it is first asked for, so a pass with nothing to
// plan reads no node.
//
// Thread-compatible, not thread-safe: it fills as gangs ask.
// REQUIRES: `view` outlives the table; Refresh(n) after every change of
// view.nodes[n].free; the view's nodes (names, labels, taints, allocatable)
// otherwise unchanged.
class NodeTable {
 public:
  explicit NodeTable(const ClusterView& view) : view_(view) {}
  // Over `dims` only (sorted; cpu, nvidia.com/gpu and pods among them): the
  // table of one greedy run, which reads no name its gang does not ask.
  NodeTable(const ClusterView& view, std::vector<std::string> dims)
      : view_(view), dims_(std::move(dims)) {}
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  // Re-reads node n's free capacity (once it has been read at all).
  void Refresh(size_t n);

  // Every resource name any node's free or allocatable carries, and cpu,
  // nvidia.com/gpu and pods (the planner ranks by them), sorted; or the
  // names the table was made with.
  const std::vector<std::string>& dims();
  // Node n's free capacity / allocatable per name of dims() (absent: 0).
  const int64_t* FreeRow(size_t n);
  const int64_t* AllocatableRow(size_t n);
  // NodeAdmits(view.nodes[n], pod) for every node n: computed once per
  // distinct set of constraints (SameNodeConstraints). The reference stays
  // valid as long as the table. REQUIRES: `pod` outlives the table.
  const std::vector<char>& Admits(const Pod& pod);
  // layout.Pick(free, k), memoised for the pass: nodes of one model share a
  // layout, and their free sets repeat (every greedy asks each node).
  const std::optional<GpuPick>& Pick(const GpuLayout& layout, uint32_t free, int k);

  // Answers the planner keeps by a gang's shape (what its greedy reads of
  // the gang, as bytes the planner builds), so that a queue of 1000 pending
  // gangs cut from a few Job templates is worked out a few times:
  // - whether the minimum fits on the empty cluster (the allocatable rows),
  //   which no change of free capacity alters (nullopt: it fits; else why
  //   not);
  // - why a gang waits (Wait::key aside), until Refresh changes a node.
  using EmptyVerdict = std::optional<std::string>;
  const EmptyVerdict* FindEmptyVerdict(const std::string& shape) const;
  void KeepEmptyVerdict(std::string shape, EmptyVerdict verdict);
  const Wait* FindWait(const std::string& shape) const;
  void KeepWait(std::string shape, Wait wait);

 private:
  void ReadFree(size_t n);  // REQUIRES: free_ sized

  const ClusterView& view_;
  std::optional<std::vector<std::string>> dims_;  // set on first use
  std::vector<int64_t> free_;         // [node * dims_.size() + dim], filled on first use
  std::vector<int64_t> allocatable_;  // the same layout, filled on first use
  struct AdmitSet {
    const Pod* like;                                 // a pod with these constraints
    std::unique_ptr<const std::vector<char>> nodes;  // per node: NodeAdmits; stable address
  };
  std::vector<AdmitSet> admit_sets_;
  struct PickKey {
    const GpuLayout* layout;
    uint32_t free;
    int k;
    friend bool operator==(const PickKey&, const PickKey&) = default;
  };
  struct PickHash {
    size_t operator()(const PickKey& key) const {
      return std::hash<const void*>{}(key.layout) ^ (size_t{key.free} << 8) ^
             static_cast<size_t>(key.k);
    }
  };
  std::unordered_map<PickKey, std::optional<GpuPick>, PickHash> picks_;
  std::unordered_map<std::string, EmptyVerdict> empty_verdicts_;
  std::unordered_map<std::string, Wait> waits_;  // of the free capacity as it is
};

// PlanGang on a view that `table` mirrors (REQUIRES: built from `view` and
// refreshed since; null: the greedy reads the view's nodes into a table of
// its own).
std::variant<GangPlan, Wait> PlanGangOn(const Gang& gang, const ClusterView& view, NodeTable* table,
                                        int max_extras);

// True when PlanGang(gang, view) would return a GangPlan. `table`: as for
// PlanGangOn.
bool MinimumFits(const Gang& gang, const ClusterView& view, NodeTable* table = nullptr);

}  // namespace muster::gang
