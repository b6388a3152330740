// Internal: the greedy behind PlanGang on the planner's working tables
// (node_table.h), for RunPass, which plans every gang of a pass on one table
// and asks "would the gang fit?" many times in its preemption search.
#pragma once

#include <cstddef>
#include <memory>
#include <variant>
#include <vector>

#include "gang/gang.h"
#include "gang/node_table.h"

namespace muster::gang {

// PlanGang(gang, now.view(), max_extras) on the table `now` (kFree), which
// it leaves as it found it. `empty` is the same nodes' kAllocatable table
// for the "never fits" check: made from now.view() on first need (indexed
// when `now` is) and kept for the next calls. REQUIRES: the table's dims
// hold every resource the gang's pending members ask.
std::variant<GangPlan, Wait> PlanGang(const Gang& gang, NodeTable& now,
                                      std::unique_ptr<NodeTable>& empty, int max_extras = -1);

// True when PlanGang(gang, table) would return a GangPlan. With `nodes`,
// the nodes the greedy placed members on (in placement order), whether or
// not the whole minimum fits (none when members are missing). Leaves the
// table as it found it.
bool MinimumFits(const Gang& gang, NodeTable& table, std::vector<size_t>* nodes = nullptr);

}  // namespace muster::gang
