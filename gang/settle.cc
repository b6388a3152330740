#include "gang/settle.h"

#include <algorithm>

namespace muster::gang {

// Some positive amount of `after` exceeds `before`'s (absent: 0).
bool AnyGrew(const Resources& before, const Resources& after) { return !after.FitsIn(before); }

bool ShortOfCapacity(const PassResult& result) {
  return std::ranges::any_of(result.waits,
                             [](const Wait& w) { return w.reason == kWaitResources; });
}

SettleDecision Settle(const SettleState& state, const Resources& free, bool short_of_capacity,
                      Time now, const SettleConfig& config) {
  SettleDecision d;
  d.next.free = free;
  d.next.last_freed = state.last_freed;
  if (config.quiet <= Duration::zero() || !short_of_capacity) return d;
  std::optional<Time> since = state.holding_since;
  if (state.free && AnyGrew(*state.free, free)) {
    d.next.last_freed = now;
    if (!since) since = now;
  }
  if (!since) return d;
  const Time release = std::min(d.next.last_freed + config.quiet, *since + config.max);
  if (now >= release) return d;  // settled: plan over everything freed
  d.hold = true;
  d.release_at = release;
  d.next.holding_since = since;
  return d;
}

}  // namespace muster::gang
