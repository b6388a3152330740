// Clock: the only way muster code learns the current time.
//
// Pure policies (gang/, queue/, topology/) receive a `const Clock&`; tests pass
// a FakeClock and move it by hand, so no test sleeps.
#pragma once

#include <atomic>

#include "model/time.h"

namespace muster {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
};

// The process-wide wall clock. Thread-safe. Never null; never deleted.
const Clock& RealClock();

// A clock that only moves when told to. Thread-safe (atomic).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Time start = Time::FromUnixSeconds(1'700'000'000))
      : now_(start.unix_micros()) {}
  Time Now() const override { return Time::FromUnixMicros(now_.load()); }
  void Advance(Duration d) { now_ += d.count(); }
  void Set(Time t) { now_ = t.unix_micros(); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace muster
