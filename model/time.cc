#include "model/time.h"

#include <cstdio>
#include <limits>

namespace muster {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil). Pure integer arithmetic: no timegm, no time zone database.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                    // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int64_t year;
  int month;
  int day;
};

// Inverse of DaysFromCivil (H. Hinnant's civil_from_days).
CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                                       // [0, 146096]
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return CivilDate{yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

bool IsLeapYear(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// A cursor over the timestamp text; every reader reports false on mismatch.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool Digits(int count, int* out) {
    int value = 0;
    for (int i = 0; i < count; ++i) {
      if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') return false;
      value = value * 10 + (text_[pos_++] - '0');
    }
    *out = value;
    return true;
  }
  bool Char(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // Accepts either case, as RFC 3339 allows ("t"/"z").
  bool CharIgnoreCase(char upper) { return Char(upper) || Char(static_cast<char>(upper + 32)); }
  bool AtEnd() const { return pos_ == text_.size(); }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

Status TimeError(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid RFC 3339 timestamp \"" + std::string(text) +
                              "\": " + std::string(why));
}

constexpr std::string_view kTimeLayout =
    "expected the form 2006-01-02T15:04:05Z (optional .fraction, Z or +hh:mm offset)";

// Reads ".ddd" (1 to 9 digits) into microseconds, truncating below 1µs.
bool ReadFraction(Scanner& s, int* micros, std::string* why) {
  *micros = 0;
  if (!s.Char('.')) return true;
  int digits = 0;
  int value = 0;
  int digit = 0;
  while (s.Digits(1, &digit)) {
    if (++digits > 9) {
      *why = "the fraction of a second has more than 9 digits";
      return false;
    }
    if (digits <= 6) value = value * 10 + digit;
  }
  if (digits == 0) {
    *why = "expected digits after the decimal point";
    return false;
  }
  for (int i = digits; i < 6; ++i) value *= 10;
  *micros = value;
  return true;
}

// Reads "Z" or "+hh:mm"/"-hh:mm" into seconds east of UTC.
bool ReadOffset(Scanner& s, int* offset_seconds, std::string* why) {
  *offset_seconds = 0;
  if (s.CharIgnoreCase('Z')) return true;
  int sign = 1;
  if (s.Char('-')) {
    sign = -1;
  } else if (!s.Char('+')) {
    *why = "expected a time zone: \"Z\" or an offset such as \"+02:00\"";
    return false;
  }
  int hh = 0;
  int mm = 0;
  if (!s.Digits(2, &hh) || !s.Char(':') || !s.Digits(2, &mm)) {
    *why = "the time zone offset must look like \"+hh:mm\"";
    return false;
  }
  if (hh > 23 || mm > 59) {
    *why = "the time zone offset is out of range";
    return false;
  }
  *offset_seconds = sign * (hh * 3600 + mm * 60);
  return true;
}

struct Fields {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

std::string RangeError(const Fields& f) {
  if (f.month < 1 || f.month > 12) return "month " + std::to_string(f.month) + " is out of range";
  if (f.day < 1 || f.day > DaysInMonth(f.year, f.month)) {
    return "day " + std::to_string(f.day) + " is out of range for month " +
           std::to_string(f.month) + " of " + std::to_string(f.year);
  }
  if (f.hour > 23) return "hour " + std::to_string(f.hour) + " is out of range";
  if (f.minute > 59) return "minute " + std::to_string(f.minute) + " is out of range";
  if (f.second > 59) return "second " + std::to_string(f.second) + " is out of range";
  return "";
}

std::string FormatCivil(Time t, bool micro) {
  const int64_t micros = t.unix_micros();
  const int64_t seconds = FloorDiv(micros, kMicrosPerSecond);
  const int64_t fraction = micros - seconds * kMicrosPerSecond;
  const int64_t days = FloorDiv(seconds, kSecondsPerDay);
  const int64_t second_of_day = seconds - days * kSecondsPerDay;
  const CivilDate date = CivilFromDays(days);
  char buf[64];
  const int hour = static_cast<int>(second_of_day / 3600);
  const int minute = static_cast<int>(second_of_day / 60 % 60);
  const int second = static_cast<int>(second_of_day % 60);
  if (micro) {
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                  static_cast<long long>(date.year), date.month, date.day, hour, minute, second,
                  static_cast<long long>(fraction));
  } else {
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02dZ",
                  static_cast<long long>(date.year), date.month, date.day, hour, minute, second);
  }
  return buf;
}

}  // namespace

StatusOr<Time> ParseRfc3339(std::string_view text) {
  Scanner s(text);
  Fields f;
  if (!s.Digits(4, &f.year) || !s.Char('-') || !s.Digits(2, &f.month) || !s.Char('-') ||
      !s.Digits(2, &f.day) || !s.CharIgnoreCase('T') || !s.Digits(2, &f.hour) || !s.Char(':') ||
      !s.Digits(2, &f.minute) || !s.Char(':') || !s.Digits(2, &f.second)) {
    return TimeError(text, kTimeLayout);
  }
  if (std::string why = RangeError(f); !why.empty()) return TimeError(text, why);
  std::string why;
  int micros = 0;
  int offset_seconds = 0;
  if (!ReadFraction(s, &micros, &why) || !ReadOffset(s, &offset_seconds, &why)) {
    return TimeError(text, why);
  }
  if (!s.AtEnd()) return TimeError(text, "unexpected text after the time zone");
  const int64_t seconds = DaysFromCivil(f.year, f.month, f.day) * kSecondsPerDay + f.hour * 3600 +
                          f.minute * 60 + f.second - offset_seconds;
  return Time::FromUnixMicros(seconds * kMicrosPerSecond + micros);
}

std::string FormatRfc3339(Time t) { return FormatCivil(t, /*micro=*/false); }

std::string FormatRfc3339Micro(Time t) { return FormatCivil(t, /*micro=*/true); }

std::ostream& operator<<(std::ostream& os, Time t) { return os << FormatRfc3339Micro(t); }

// ---- Go durations ----

namespace {

constexpr uint64_t kMaxDurationNanos = uint64_t{1} << 63;  // |int64 min| in nanoseconds

Status DurationError(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid duration \"" + std::string(text) +
                              "\": " + std::string(why));
}

// Nanoseconds per unit; 0 for an unknown unit. Go accepts both micro signs.
uint64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1'000;
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60'000'000'000;
  if (unit == "h") return 3'600'000'000'000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses one "<number><unit>" component at text[*pos], adding its
// nanoseconds to *total. Returns the reason on failure, "" on success.
std::string ParseComponent(std::string_view text, size_t* pos, uint64_t* total) {
  size_t i = *pos;
  unsigned __int128 whole = 0;
  bool overflow = false;
  const size_t whole_start = i;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > kMaxDurationNanos) {
      overflow = true;
      whole = kMaxDurationNanos + 1;  // keep the accumulator bounded
    }
  }
  bool digits = i > whole_start;
  uint64_t fraction = 0;
  uint64_t scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const size_t frac_start = i;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      // Digits beyond 18 cannot change a nanosecond count; Go ignores them too.
      if (scale < 1'000'000'000'000'000'000ULL) {
        fraction = fraction * 10 + static_cast<unsigned>(text[i] - '0');
        scale *= 10;
      }
    }
    digits = digits || i > frac_start;
  }
  if (!digits) return "expected a number";
  const size_t unit_start = i;
  while (i < text.size() && text[i] != '.' && !IsDigit(text[i])) ++i;
  const std::string_view unit = text.substr(unit_start, i - unit_start);
  if (unit.empty()) return "missing unit (one of ns, us, ms, s, m, h)";
  const uint64_t unit_nanos = UnitNanos(unit);
  if (unit_nanos == 0)
    return "unknown unit \"" + std::string(unit) + "\" (one of ns, us, ms, s, m, h)";
  const unsigned __int128 nanos =
      whole * unit_nanos + static_cast<unsigned __int128>(fraction) * unit_nanos / scale;
  if (overflow || nanos + *total > kMaxDurationNanos) return "out of range";
  *total += static_cast<uint64_t>(nanos);
  *pos = i;
  return "";
}

}  // namespace

StatusOr<Duration> ParseGoDuration(std::string_view text) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) negative = text[pos++] == '-';
  if (text.substr(pos) == "0") return Duration(0);  // Go's one unitless form
  if (pos == text.size()) return DurationError(text, "it is empty");
  uint64_t total = 0;
  while (pos < text.size()) {
    if (std::string why = ParseComponent(text, &pos, &total); !why.empty()) {
      return DurationError(text, why);
    }
  }
  if (!negative && total == kMaxDurationNanos) return DurationError(text, "out of range");
  // Duration is microseconds; like Go's Microseconds(), truncate toward zero.
  const int64_t micros = static_cast<int64_t>(total / 1000);
  return Duration(negative ? -micros : micros);
}

namespace {

// "<int>[.<fraction>]" of `value` in units of 10^digits, trailing zeros trimmed.
std::string FixedPoint(uint64_t value, int digits) {
  uint64_t divisor = 1;
  for (int i = 0; i < digits; ++i) divisor *= 10;
  std::string out = std::to_string(value / divisor);
  uint64_t fraction = value % divisor;
  if (fraction == 0) return out;
  std::string frac = std::to_string(fraction);
  frac.insert(0, static_cast<size_t>(digits) - frac.size(), '0');
  while (frac.back() == '0') frac.pop_back();
  return out + "." + frac;
}

}  // namespace

std::string FormatGoDuration(Duration d) {
  const int64_t count = d.count();
  // Magnitude in unsigned arithmetic so that the int64 minimum is safe.
  const uint64_t micros =
      count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  std::string sign = count < 0 ? "-" : "";
  if (micros == 0) return "0s";
  if (micros < 1'000) return sign + std::to_string(micros) + "\xC2\xB5s";  // Go writes U+00B5
  if (micros < 1'000'000) return sign + FixedPoint(micros, 3) + "ms";
  const uint64_t whole_seconds = micros / 1'000'000;
  const uint64_t fraction = micros % 1'000'000;
  std::string out = FixedPoint((whole_seconds % 60) * 1'000'000 + fraction, 6) + "s";
  const uint64_t minutes = whole_seconds / 60;
  if (minutes > 0) {
    out = std::to_string(minutes % 60) + "m" + out;
    // Go stops at hours: days have different lengths.
    if (minutes / 60 > 0) out = std::to_string(minutes / 60) + "h" + out;
  }
  return sign + out;
}

}  // namespace muster
