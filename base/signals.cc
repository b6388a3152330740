#include "base/signals.h"

#include <pthread.h>

#include <ctime>

namespace muster::base {

SignalWaiter::SignalWaiter(std::initializer_list<int> signals) {
  sigemptyset(&signals_);
  for (int sig : signals) sigaddset(&signals_, sig);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

int SignalWaiter::Wait(std::chrono::nanoseconds tick) const {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(tick);
  const timespec wait{.tv_sec = static_cast<time_t>(seconds.count()),
                      .tv_nsec = static_cast<long>((tick - seconds).count())};
  const int sig = sigtimedwait(&signals_, nullptr, &wait);
  return sig > 0 && sigismember(&signals_, sig) == 1 ? sig : 0;
}

}  // namespace muster::base
