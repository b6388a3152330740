// Internal to gang/ (pass.cc): RunPass's step (d), the victims preemption
// and reclaim take for the first gang that waits for capacity.
#pragma once

#include <optional>
#include <vector>

#include "gang/gang.h"
#include "gang/node_table.h"

namespace muster::gang {

// Adds candidates (Eligible's order) until the preemptor's minimum fits on
// `view` with them gone, then makes the set minimal. Nothing when even every
// candidate together is not enough. `like`: a table of the pass (its
// resources and pod facts). `spared`: the candidates conformance kept out.
std::optional<Preemption> ChoosePreemption(const ClusterView& view, const NodeTable& like,
                                           const Gang& preemptor,
                                           const std::vector<VictimCandidate>& victims,
                                           const QueueLimits& queues, const PassConfig& config,
                                           int& spared);

}  // namespace muster::gang
