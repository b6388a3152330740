// RateLimiter: a token bucket that paces requests to the API server, as
// client-go's QPS/Burst settings do.
//
// The bucket holds up to `burst` tokens and refills at `qps` tokens per
// second. Each request takes one token; when none is left the request waits
// for its turn. Reservations are first come, first served: the bucket may go
// negative, so each waiter learns at once how long to wait and sleeps outside
// the lock (no thundering herd on refill).
//
// Time comes from an injected Clock and waiting from an injected Sleeper, so
// tests drive the limiter with a FakeClock and never sleep.
//
// Thread-safety: thread-safe.
#pragma once

#include "base/mutex.h"
#include "kube/client/cancel.h"
#include "model/clock.h"
#include "model/time.h"

namespace muster::kube {

class RateLimiter {
 public:
  // `qps <= 0` disables limiting (every Reserve() returns zero). `burst` is
  // raised to at least 1. The bucket starts full. `clock` must outlive this.
  RateLimiter(double qps, int burst, const Clock& clock, Sleeper sleeper);

  // Takes one token and returns how long the caller must wait before using
  // it (zero when one was available).
  Duration Reserve() MUSTER_EXCLUDES(mu_);

  // Takes a token without waiting; false (and nothing taken) when none is left.
  bool TryAcquire() MUSTER_EXCLUDES(mu_);

  // Reserve() then sleep. Returns false when `cancel` fired while waiting;
  // the reserved token is then lost, as it would be in use anyway.
  bool Wait(CancelToken* cancel = nullptr);

 private:
  void RefillLocked() MUSTER_REQUIRES(mu_);

  const double qps_;
  const double burst_;
  const Clock& clock_;
  const Sleeper sleeper_;
  base::Mutex mu_;
  double tokens_ MUSTER_GUARDED_BY(mu_);
  Time last_ MUSTER_GUARDED_BY(mu_);
};

}  // namespace muster::kube
