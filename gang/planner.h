// Internal: the greedy behind PlanGang, exposed for RunPass's preemption
// search, which asks "would the gang fit?" many times and needs no message.
#pragma once

#include "gang/gang.h"

namespace muster::gang {

// True when PlanGang(gang, view) would return a GangPlan.
bool MinimumFits(const Gang& gang, const ClusterView& view);

}  // namespace muster::gang
