// Network tiers: the nested domains nodes sit in (zone > spine > rack/leaf >
// node), from node labels (issue #7; topology.md section 5.3).
//
// Levels are node-label keys, top to bottom. Tiers count bottom-up as in
// Volcano: tier 0 is a node by itself, tier 1 the last (lowest) level, and
// so on up to the first level. A domain's id is the path of label values
// from the top ("zone=a/rack=r3"), so a rack label reused in two zones
// names two domains. A node without the label of some level is a domain of
// its own at that level (and above it, under the levels it has): never
// silently merged with other nodes.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/network_domain.h"

namespace muster::topology {

struct NetworkLevel {
  std::string name;       // "rack": what PodGroup annotations name
  std::string label_key;  // "network.muster.io/rack"
};

// The levels, top to bottom (the node itself is implied below the last).
struct NetworkTiers {
  std::vector<NetworkLevel> levels;
  // The tier of level `name` (1 for the last level, levels.size() for the
  // first); "node"/"host"/"hostname" is tier 0; nothing for unknown names.
  std::optional<int> TierOf(std::string_view name) const;
  // The name of `tier` ("node" for 0).
  std::string NameOf(int tier) const;
};

using ::muster::NetworkDomain;  // model/network_domain.h

struct LabelledNode {
  std::string name;
  const std::map<std::string, std::string>* labels = nullptr;  // never null
};

// Every domain of every tier from 1 up (tier 0 - single nodes - is left to
// the caller), lowest tier first, then by id.
std::vector<NetworkDomain> DomainsOf(const NetworkTiers& tiers,
                                     const std::vector<LabelledNode>& nodes);

// Parses "rack=network.muster.io/rack,zone=topology.kubernetes.io/zone"
// given top to bottom as "zone=...,rack=..."; an empty string is no levels.
// Errors name the bad entry.
struct ParsedTiers {
  std::optional<NetworkTiers> tiers;
  std::string error;
};
ParsedTiers ParseNetworkTiers(std::string_view flag);

}  // namespace muster::topology
