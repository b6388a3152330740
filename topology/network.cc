#include "topology/network.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace muster::topology {

std::optional<int> NetworkTiers::TierOf(std::string_view name) const {
  if (name == "node" || name == "host" || name == "hostname") return 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].name == name) return static_cast<int>(levels.size() - i);
  }
  return std::nullopt;
}

std::string NetworkTiers::NameOf(int tier) const {
  if (tier <= 0 || tier > static_cast<int>(levels.size())) return "node";
  return levels[levels.size() - static_cast<size_t>(tier)].name;
}

std::vector<NetworkDomain> DomainsOf(const NetworkTiers& tiers,
                                     const std::vector<LabelledNode>& nodes) {
  std::map<std::pair<int, std::string>, std::vector<std::string>> members;
  const int top = static_cast<int>(tiers.levels.size());
  for (const LabelledNode& node : nodes) {
    std::string path;
    bool own = false;  // a missing label made it a domain of its own
    for (int level = 0; level < top; ++level) {
      const NetworkLevel& l = tiers.levels[static_cast<size_t>(level)];
      const auto it = node.labels->find(l.label_key);
      if (!path.empty()) path += "/";
      if (it == node.labels->end() || own) {
        own = true;
        path += l.name + "=(" + node.name + ")";
      } else {
        path += l.name + "=" + it->second;
      }
      members[{top - level, path}].push_back(node.name);
    }
  }
  std::vector<NetworkDomain> out;
  out.reserve(members.size());
  for (auto& [key, names] : members) {
    std::ranges::sort(names);
    out.push_back(NetworkDomain{.tier = key.first, .id = key.second, .nodes = std::move(names)});
  }
  std::ranges::stable_sort(out, {}, &NetworkDomain::tier);
  return out;
}

ParsedTiers ParseNetworkTiers(std::string_view flag) {
  NetworkTiers tiers;
  std::set<std::string> names;
  while (!flag.empty()) {
    const size_t comma = flag.find(',');
    const std::string_view entry = flag.substr(0, comma);
    flag = comma == std::string_view::npos ? std::string_view() : flag.substr(comma + 1);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
      return {.error = "\"" + std::string(entry) + "\" is not <name>=<node label key>"};
    }
    NetworkLevel level{.name = std::string(entry.substr(0, eq)),
                       .label_key = std::string(entry.substr(eq + 1))};
    if (level.name == "node" || level.name == "host" || level.name == "hostname" ||
        !names.insert(level.name).second) {
      return {.error = "level name \"" + level.name + "\" is reserved or used twice"};
    }
    tiers.levels.push_back(std::move(level));
  }
  return {.tiers = std::move(tiers)};
}

}  // namespace muster::topology
