// Shutdown signals for a process whose main thread waits while others work:
// the signals are blocked in the main thread before it starts any other, so
// every thread inherits the mask and only the waiting main thread takes them
// (sigtimedwait), between ticks of its periodic work.
//
// Thread-safety: a SignalWaiter belongs to the thread that made it.
#pragma once

#include <signal.h>

#include <chrono>
#include <initializer_list>

namespace muster::base {

class SignalWaiter {
 public:
  // Blocks `signals` in the calling thread, for good (never unblocked: one
  // pending then would run its default action). Call before any thread starts.
  explicit SignalWaiter(std::initializer_list<int> signals = {SIGTERM, SIGINT});

  // Waits up to `tick` for one of the signals and returns its number, or 0
  // when the tick passed first (or the wait was interrupted).
  int Wait(std::chrono::nanoseconds tick) const;

 private:
  sigset_t signals_;
};

}  // namespace muster::base
