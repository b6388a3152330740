#include "gang/conformance.h"

#include <algorithm>

namespace muster::gang {

bool Evictable(const Pod& pod) {
  const std::string& cls = pod.spec.priority_class_name;
  return pod.meta.namespace_ != kSystemNamespace && cls != kSystemClusterCritical &&
         cls != kSystemNodeCritical;
}

bool Evictable(const Gang& gang) {
  return std::ranges::all_of(gang.members, [](const Member& m) { return Evictable(*m.pod); });
}

}  // namespace muster::gang
