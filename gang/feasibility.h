// Internal helpers of the gang planner shared by planner.cc and pass.cc:
// what a member takes on a node, node lookup by name, and when two pods'
// node constraints are the same. NodeAdmits (the node-level predicate) is
// declared in gang.h and defined in feasibility.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "gang/gang.h"
#include "model/pod.h"
#include "model/resources.h"

namespace muster::gang {

// What `member` holds on its node: its request (the pod's EffectiveRequest(),
// computed once) plus one pod slot, the amount a NodeView's free must cover
// and the amount reserving/releasing it moves.
Resources SlotRequest(const Member& member);

// True when NodeAdmits answers alike for `a` and `b` on every node: the same
// node selector, affinity and tolerations.
bool SameNodeConstraints(const Pod& a, const Pod& b);

// The index of the node named `name` in view.nodes, which are in name order
// (ClusterView's contract); nullopt when there is none.
std::optional<size_t> FindNode(const ClusterView& view, std::string_view name);

// Counts towards the gang's minimum: bound, finished or reserved.
inline bool CountsPlaced(const Member& m) { return m.state != MemberState::kPending; }
// Holds capacity on m.node: bound and not finished, or reserved.
inline bool HoldsNode(const Member& m) {
  return m.state == MemberState::kBound || m.state == MemberState::kReserved;
}
// To be placed: pending and not being deleted (a terminating pod never runs).
inline bool AwaitsPlacement(const Member& m) {
  return m.state == MemberState::kPending && !m.terminating;
}

}  // namespace muster::gang
