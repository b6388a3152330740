#include "kube/client/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace muster::kube {

RateLimiter::RateLimiter(double qps, int burst, const Clock& clock, Sleeper sleeper)
    : qps_(qps),
      burst_(static_cast<double>(std::max(burst, 1))),
      clock_(clock),
      sleeper_(std::move(sleeper)),
      tokens_(burst_),
      last_(clock.Now()) {}

void RateLimiter::RefillLocked() {
  const Time now = clock_.Now();
  // A wall clock may step backwards; never refill (or drain) on that.
  if (now > last_) {
    const double elapsed_s = static_cast<double>((now - last_).count()) / 1e6;
    tokens_ = std::min(burst_, tokens_ + elapsed_s * qps_);
    last_ = now;
  }
}

Duration RateLimiter::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  base::MutexLock lock(&mu_);
  RefillLocked();
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Duration::zero();
  return Duration(static_cast<int64_t>(std::ceil(-tokens_ / qps_ * 1e6)));
}

bool RateLimiter::TryAcquire() {
  if (qps_ <= 0) return true;
  base::MutexLock lock(&mu_);
  RefillLocked();
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

bool RateLimiter::Wait(CancelToken* cancel) {
  const Duration wait = Reserve();
  if (wait <= Duration::zero()) return !IsCancelled(cancel);
  return sleeper_(wait, cancel);
}

}  // namespace muster::kube
