#include "kube/client/backoff.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace muster::kube {

RandomSource DefaultRandomSource() {
  return [] {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  };
}

Backoff::Backoff(BackoffOptions options, const Clock& clock, RandomSource random)
    : options_(options),
      clock_(clock),
      random_(random ? std::move(random) : DefaultRandomSource()) {
  options_.initial = std::max(options_.initial, Duration(1));
  options_.max = std::max(options_.max, options_.initial);
  options_.multiplier = std::max(options_.multiplier, 1.0);
  options_.jitter = std::max(options_.jitter, 0.0);
}

Duration Backoff::Next() {
  const Time now = clock_.Now();
  if (attempts_ > 0 && options_.reset_after > Duration::zero() &&
      now - last_next_ >= options_.reset_after) {
    attempts_ = 0;
  }
  last_next_ = now;
  // Grow in floating point and cap early, so large attempt counts cannot
  // overflow.
  const double max_us = static_cast<double>(options_.max.count());
  double wait_us = static_cast<double>(options_.initial.count());
  for (int i = 0; i < attempts_ && wait_us < max_us; ++i) wait_us *= options_.multiplier;
  wait_us = std::min(wait_us, max_us);
  if (options_.jitter > 0) {
    const double r = std::clamp(random_(), 0.0, 1.0);
    wait_us = std::min(wait_us * (1.0 + options_.jitter * r), max_us);
  }
  ++attempts_;
  return Duration(std::llround(wait_us));
}

void Backoff::Reset() { attempts_ = 0; }

}  // namespace muster::kube
