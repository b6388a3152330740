// NetworkDomain: a set of nodes sharing a network domain (a rack, a spine,
// a zone), as topology/network.h derives them from node labels and the gang
// planner packs gangs into them (issue #7).
//
// Thread-safety: value type.
#pragma once

#include <string>
#include <vector>

namespace muster {

struct NetworkDomain {
  int tier = 0;                    // bottom-up: 1 is the lowest level, 0 a node alone
  std::string id;                  // path-qualified: "zone=a/rack=r3"
  std::vector<std::string> nodes;  // sorted
  friend bool operator==(const NetworkDomain&, const NetworkDomain&) = default;
};

}  // namespace muster
