#include "extender/topology_step.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include "gang/feasibility.h"

namespace muster::extender {
namespace {

struct TierChoice {
  int tier = 0;
  bool required = false;
};

// What the PodGroup asks, or the field that is wrong.
std::variant<TierChoice, std::string> ChoiceOf(const PodGroup& group,
                                               const topology::NetworkTiers& tiers) {
  const int top = static_cast<int>(tiers.levels.size());
  auto named = [&](std::string_view field, const std::string& level,
                   bool required) -> std::variant<TierChoice, std::string> {
    std::optional<int> tier = tiers.TierOf(level);
    if (!tier) {
      std::string known;
      for (const topology::NetworkLevel& l : tiers.levels)
        known += (known.empty() ? "" : ", ") + l.name;
      return std::string(field) + ": no network level \"" + level +
             "\" (levels: " + (known.empty() ? "none configured" : known) + ")";
    }
    return TierChoice{.tier = *tier, .required = required};
  };
  const auto& ann = group.meta.annotations;
  if (auto it = ann.find(std::string(kAnnotationNetworkTierRequired)); it != ann.end()) {
    return named("annotation " + std::string(kAnnotationNetworkTierRequired), it->second, true);
  }
  if (auto it = ann.find(std::string(kAnnotationNetworkTierPreferred)); it != ann.end()) {
    return named("annotation " + std::string(kAnnotationNetworkTierPreferred), it->second, false);
  }
  if (const std::optional<NetworkTopologySpec>& spec = group.spec.network_topology) {
    const bool required = spec->mode != "soft";
    if (!spec->highest_tier_name.empty()) {
      return named("spec.networkTopology.highestTierName", spec->highest_tier_name, required);
    }
    if (spec->highest_tier_allowed) {
      const int tier = *spec->highest_tier_allowed;
      if (tier < 1 || tier > top) {
        return "spec.networkTopology.highestTierAllowed: " + std::to_string(tier) +
               " is not a tier (1.." + std::to_string(top) + ")";
      }
      return TierChoice{.tier = tier, .required = required};
    }
  }
  return TierChoice{.tier = top, .required = false};
}

}  // namespace

std::vector<gang::Wait> ApplyNetworkTiers(const topology::NetworkTiers& tiers,
                                          const gang::ClusterView& view, const GroupsByKey& groups,
                                          std::vector<gang::Gang>& gangs) {
  std::vector<gang::Wait> held;
  if (tiers.levels.empty() || view.nodes.empty()) return held;
  std::vector<topology::LabelledNode> nodes;
  nodes.reserve(view.nodes.size());
  for (const gang::NodeView& n : view.nodes) nodes.push_back({n.name(), &n.node->meta.labels});
  // One list for every gang of the pass; each uses the tiers it may.
  const auto domains =
      std::make_shared<const std::vector<NetworkDomain>>(topology::DomainsOf(tiers, nodes));
  for (gang::Gang& g : gangs) {
    if (g.spec.min_member <= 1 || std::ranges::none_of(g.members, gang::AwaitsPlacement)) continue;
    const auto group = groups.find(g.key);
    if (group == groups.end()) continue;
    std::variant<TierChoice, std::string> choice = ChoiceOf(*group->second, tiers);
    if (auto* error = std::get_if<std::string>(&choice)) {
      held.push_back(gang::Wait{
          .key = g.key, .reason = kWaitBadNetworkTopology, .message = *std::move(error)});
      continue;
    }
    const TierChoice& c = std::get<TierChoice>(choice);
    g.domains = domains;
    g.domain_tier = c.tier;
    g.domains_required = c.required;
    g.domain_level = tiers.NameOf(c.tier);
  }
  return held;
}

}  // namespace muster::extender
