// Backoff: exponentially growing, jittered, capped waits between retries.
//
// The n-th wait (n = 0, 1, ...) is initial * multiplier^n, capped at `max`,
// then stretched by a random factor in [1, 1 + jitter) and capped at `max`
// again, so callers that fail together do not retry together and no wait ever
// exceeds `max`. After `reset_after` without a Next() call the sequence starts
// over (a long healthy period forgives old failures), as client-go's backoff
// manager does.
//
// Thread-safety: not thread-safe; one Backoff belongs to one retry loop.
#pragma once

#include <functional>

#include "model/clock.h"
#include "model/time.h"

namespace muster::kube {

struct BackoffOptions {
  Duration initial = std::chrono::milliseconds(100);
  Duration max = std::chrono::seconds(30);
  double multiplier = 2.0;
  double jitter = 0.2;      // fraction of the wait added at random; 0 disables
  Duration reset_after{0};  // 0 disables the automatic reset
};

// Returns a uniformly distributed number in [0, 1).
using RandomSource = std::function<double()>;

// A thread-safe source backed by a per-thread Mersenne Twister.
RandomSource DefaultRandomSource();

class Backoff {
 public:
  // `clock` must outlive this. A null `random` means DefaultRandomSource().
  Backoff(BackoffOptions options, const Clock& clock, RandomSource random = nullptr);

  // The wait before the next attempt; advances the sequence.
  Duration Next();
  // Starts the sequence over (call after a success).
  void Reset();
  // Next() calls since the last reset.
  int attempts() const { return attempts_; }

 private:
  BackoffOptions options_;
  const Clock& clock_;
  RandomSource random_;
  int attempts_ = 0;
  Time last_next_;
};

}  // namespace muster::kube
