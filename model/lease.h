// Lease (coordination.k8s.io/v1, namespaced): the record leader election
// keeps in the API. The fields are Kubernetes' LeaseSpec
// (k8s.io/api/coordination/v1/types.go); client-go's resourcelock writes
// them the same way for kube-scheduler, whose Lease muster's extender follows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/object_meta.h"
#include "model/time.h"

namespace muster {

struct Lease {
  ObjectMeta meta;
  std::string holder_identity;  // "" when released
  int32_t lease_duration_seconds = 0;
  std::optional<Time> acquire_time;  // MicroTime
  std::optional<Time> renew_time;    // MicroTime
  int32_t lease_transitions = 0;
  friend bool operator==(const Lease&, const Lease&) = default;
};

}  // namespace muster
