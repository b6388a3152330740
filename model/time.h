// Time: a wall-clock instant as a value (microseconds since the Unix epoch).
//
// The pure core never reads a clock; instants arrive in objects (Kubernetes
// timestamps) or from an injected Clock (model/clock.h). Kubernetes writes
// `Time` as RFC 3339 with second precision ("2025-05-01T10:00:00Z") and
// `MicroTime` with microseconds ("2025-05-01T10:00:00.123456Z").
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "model/status.h"

namespace muster {

using Duration = std::chrono::microseconds;

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time FromUnixMicros(int64_t micros) { return Time(micros); }
  static constexpr Time FromUnixSeconds(int64_t seconds) { return Time(seconds * 1'000'000); }

  constexpr int64_t unix_micros() const { return micros_; }
  constexpr int64_t unix_seconds() const {
    return micros_ >= 0 ? micros_ / 1'000'000 : -((-micros_ + 999'999) / 1'000'000);
  }
  // The zero value means "unset" in Kubernetes objects.
  constexpr bool is_zero() const { return micros_ == 0; }

  friend constexpr auto operator<=>(Time a, Time b) = default;
  friend constexpr Time operator+(Time t, Duration d) { return Time(t.micros_ + d.count()); }
  friend constexpr Time operator-(Time t, Duration d) { return Time(t.micros_ - d.count()); }
  friend constexpr Duration operator-(Time a, Time b) { return Duration(a.micros_ - b.micros_); }

 private:
  explicit constexpr Time(int64_t micros) : micros_(micros) {}
  int64_t micros_ = 0;
};

// Prints FormatRfc3339Micro(t) (readable gtest failures and log lines).
std::ostream& operator<<(std::ostream& os, Time t);

// Parses RFC 3339 ("2006-01-02T15:04:05Z", optional fraction, "Z" or
// "+hh:mm"/"-hh:mm" offset). Errors name the offending text.
StatusOr<Time> ParseRfc3339(std::string_view text);

// Formats as Kubernetes `Time`: UTC, second precision, "Z".
std::string FormatRfc3339(Time t);
// Formats as Kubernetes `MicroTime`: UTC, six fraction digits, "Z".
std::string FormatRfc3339Micro(Time t);

// Parses a Go duration string ("90s", "10m", "1h30m", "1.5h", "300ms").
StatusOr<Duration> ParseGoDuration(std::string_view text);
// Formats like Go's time.Duration.String() ("1h30m0s", "10m0s", "1.5s").
std::string FormatGoDuration(Duration d);

}  // namespace muster
