// Node: the core/v1 Node fields muster places pods by.
#pragma once

#include <string>
#include <vector>

#include "model/object_meta.h"
#include "model/resources.h"

namespace muster {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule PreferNoSchedule NoExecute
  Time time_added;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct NodeAddress {
  std::string type;
  std::string address;
  friend bool operator==(const NodeAddress&, const NodeAddress&) = default;
};

struct Node {
  ObjectMeta meta;
  // spec
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string provider_id;
  // status
  Resources capacity;
  Resources allocatable;
  std::vector<Condition> conditions;
  std::vector<NodeAddress> addresses;

  // True when the Ready condition is "True".
  bool IsReady() const;
  friend bool operator==(const Node&, const Node&) = default;
};

}  // namespace muster
