// Internal to gang/ (pass.cc, preemption.cc): reading a pass's queue limits.
#pragma once

#include <string>
#include <vector>

#include "gang/gang.h"
#include "model/resources.h"

namespace muster::gang {

// The limit of the queue a gang or victim is in (the first of its path), or
// null; const when `queues` is.
template <typename Limits>
auto* LimitOf(const std::vector<std::string>& path, Limits& queues) {
  const auto it = path.empty() ? queues.end() : queues.find(path.front());
  return it == queues.end() ? nullptr : &it->second;
}

// Whether `held` (requests) is within the queue's deserved share.
inline bool WithinDeserved(Resources held, const QueueLimit& limit) {
  held.Erase(kPods);
  return held.DominantShare(limit.deserved) <= 1.0 + 1e-9;
}

// True when a queue holding `allocated` is short of what it deserves: its
// share is below 1 on every resource (a queue deserving nothing never is).
inline bool Owed(const Resources& allocated, const Resources& deserved) {
  return !deserved.IsZero() && allocated.DominantShare(deserved) < 1.0;
}

}  // namespace muster::gang
