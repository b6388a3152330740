#include "model/clock.h"

#include <chrono>

namespace muster {
namespace {

class SystemClock final : public Clock {
 public:
  Time Now() const override {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return Time::FromUnixMicros(
        std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count());
  }
};

}  // namespace

const Clock& RealClock() {
  // Leaked on purpose: objects destroyed at exit may still ask for the time.
  static const Clock* const clock = new SystemClock();
  return *clock;
}

}  // namespace muster
