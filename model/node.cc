#include "model/node.h"

namespace muster {

bool Node::IsReady() const {
  for (const Condition& c : conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

}  // namespace muster
