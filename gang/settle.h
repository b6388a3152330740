// Settling: wait for freed capacity to stop trickling in before placing
// gangs on it.
//
// When a wave of gangs ends, its members finish a few hundred milliseconds
// apart. A pass at each finish hands the few GPUs freed so far to whatever
// gang fits them now, one by one, so the GPUs the waiting gangs need end up
// scattered over many nodes, and a gang that would have fitted the whole
// wave's capacity waits for the next wave (issue 24: 1.35 x the ideal
// makespan on the contention burst, 1.004 in a simulation where each wave's
// capacity frees at once). Settling holds every new plan while capacity is
// being freed and a gang waits for capacity, until the freeing has paused
// for `quiet`, or for at most `max` since the hold began, so small gangs
// never starve behind a cluster that never stops finishing pods. The next
// pass then plans the queue together over everything freed.
//
// Settle() only decides; the caller (extender/gang_controller.h) keeps the
// SettleState between passes and drops the held plans.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>

#include "gang/gang.h"
#include "model/resources.h"
#include "model/time.h"

namespace muster::gang {

struct SettleConfig {
  // How long the freeing must pause before plans go ahead. Zero: never hold.
  Duration quiet = std::chrono::milliseconds(300);
  // The longest hold, from the first capacity freed.
  Duration max = std::chrono::milliseconds(1500);
};

// What one pass leaves for the next.
struct SettleState {
  // The free capacity the last pass saw; none before the first pass (a
  // starting extender's first pass plans at once).
  std::optional<Resources> free;
  std::optional<Time> holding_since;
  Time last_freed;
};

struct SettleDecision {
  bool hold = false;  // drop this pass's new plans
  // While holding: when the hold ends if nothing more is freed, so the
  // caller runs a pass then rather than at its next resync.
  std::optional<Time> release_at;
  SettleState next;
};

// Whether some amount of `after` exceeds the same amount of `before`.
bool AnyGrew(const Resources& before, const Resources& after);

// Whether some gang of `result` waits for capacity (kWaitResources): only
// then can holding plans buy a better packing.
bool ShortOfCapacity(const PassResult& result);

// The hold decision for a pass that sees `free` capacity at `now`.
SettleDecision Settle(const SettleState& state, const Resources& free, bool short_of_capacity,
                      Time now, const SettleConfig& config);

}  // namespace muster::gang
