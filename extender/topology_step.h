// The network-tier step of a gang controller pass (issue #7): gives each
// gang the network domains it may be packed into (gang::Gang::domains), from
// the configured tiers (--network-tiers) and what its PodGroup asks:
//
//   annotation muster.io/network-tier-required: <level>   only inside one <level>
//   annotation muster.io/network-tier-preferred: <level>  inside one <level> if it can
//   spec.networkTopology {mode: hard|soft, highestTierAllowed: N | highestTierName: <level>}
//                                                         Volcano's: hard = required
//   nothing                                               preferred, up to the top tier
//
// Tiers count bottom-up as in Volcano (topology/network.h): 1 is the lowest
// level (a rack), "node" is 0. A gang of one member, or any gang when no
// tiers are configured, gets no domains. A PodGroup naming a level that does
// not exist is held (not planned) with reason BadNetworkTopology and a
// message naming the field.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "extender/gang_inputs.h"
#include "gang/gang.h"
#include "model/api_objects.h"
#include "topology/network.h"

namespace muster::extender {

inline constexpr std::string_view kAnnotationNetworkTierRequired =
    "muster.io/network-tier-required";
inline constexpr std::string_view kAnnotationNetworkTierPreferred =
    "muster.io/network-tier-preferred";
inline constexpr std::string_view kWaitBadNetworkTopology = "BadNetworkTopology";

// Fills Gang::domains / domain_tier / domains_required / domain_level of `gangs` whose
// PodGroup (in `groups`, by gang key) asks for network placement; returns the
// gangs to hold. The domains come from `view`'s nodes.
std::vector<gang::Wait> ApplyNetworkTiers(const topology::NetworkTiers& tiers,
                                          const gang::ClusterView& view, const GroupsByKey& groups,
                                          std::vector<gang::Gang>& gangs);

}  // namespace muster::extender
