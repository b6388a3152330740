#include "model/time.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "model/clock.h"

namespace muster {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr int64_t kMay2025 = 1746093600;  // 2025-05-01T10:00:00Z

TEST(ParseRfc3339Test, ParsesKubernetesTimestamps) {
  struct Case {
    std::string text;
    int64_t unix_micros;
  };
  const std::vector<Case> cases = {
      {"1970-01-01T00:00:00Z", 0},
      {"2025-05-01T10:00:00Z", kMay2025 * 1'000'000},
      {"2025-05-01T12:00:00+02:00", kMay2025 * 1'000'000},
      {"2025-05-01T05:30:00-04:30", kMay2025 * 1'000'000},
      {"2025-05-01T10:00:00+00:00", kMay2025 * 1'000'000},
      {"2025-05-01T10:00:00-00:00", kMay2025 * 1'000'000},
      {"2025-05-01t10:00:00z", kMay2025 * 1'000'000},
      {"2025-05-01T10:00:00.123456Z", kMay2025 * 1'000'000 + 123456},
      {"2025-05-01T10:00:00.5Z", kMay2025 * 1'000'000 + 500000},
      {"2025-05-01T10:00:00.000001Z", kMay2025 * 1'000'000 + 1},
      {"2025-05-01T10:00:00.123456789Z", kMay2025 * 1'000'000 + 123456},  // keeps micros
      {"2025-05-01T10:00:00.0000009Z", kMay2025 * 1'000'000},
      {"2025-05-01T12:00:00.25+02:00", kMay2025 * 1'000'000 + 250000},
      {"2024-02-29T12:34:56Z", int64_t{1709210096} * 1'000'000},  // leap year
      {"2000-02-29T00:00:00Z", int64_t{951782400} * 1'000'000},   // divisible by 400
      {"1969-12-31T23:59:59Z", -1'000'000},
      {"1969-12-31T23:59:59.5Z", -500'000},
      {"1960-01-01T00:00:00Z", int64_t{-315619200} * 1'000'000},
      {"0001-01-01T00:00:00Z", int64_t{-62135596800} * 1'000'000},  // Go's zero time
      {"9999-12-31T23:59:59Z", int64_t{253402300799} * 1'000'000},
      {"1970-01-01T00:00:00+14:00", int64_t{-14} * 3600 * 1'000'000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Time> t = ParseRfc3339(c.text);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->unix_micros(), c.unix_micros);
  }
}

TEST(ParseRfc3339Test, RejectsInvalidTimestamps) {
  const std::string kLayout =
      "expected the form 2006-01-02T15:04:05Z (optional .fraction, Z or +hh:mm offset)";
  struct Case {
    std::string text;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", kLayout},
      {"2025-05-01", kLayout},
      {"2025-05-01 10:00:00Z", kLayout},
      {"2025-5-01T10:00:00Z", kLayout},
      {"25-05-01T10:00:00Z", kLayout},
      {"2025-05-01T10:00Z", kLayout},
      {"1714557600", kLayout},
      {"2025-13-01T00:00:00Z", "month 13 is out of range"},
      {"2025-00-01T00:00:00Z", "month 0 is out of range"},
      {"2025-04-31T00:00:00Z", "day 31 is out of range for month 4 of 2025"},
      {"2023-02-29T00:00:00Z", "day 29 is out of range for month 2 of 2023"},
      {"1900-02-29T00:00:00Z", "day 29 is out of range for month 2 of 1900"},
      {"2025-05-00T00:00:00Z", "day 0 is out of range for month 5 of 2025"},
      {"2025-05-01T24:00:00Z", "hour 24 is out of range"},
      {"2025-05-01T10:60:00Z", "minute 60 is out of range"},
      {"2025-05-01T10:00:60Z", "second 60 is out of range"},
      {"2025-05-01T10:00:00", "expected a time zone: \"Z\" or an offset such as \"+02:00\""},
      {"2025-05-01T10:00:00+0200", "the time zone offset must look like \"+hh:mm\""},
      {"2025-05-01T10:00:00+2:00", "the time zone offset must look like \"+hh:mm\""},
      {"2025-05-01T10:00:00+24:00", "the time zone offset is out of range"},
      {"2025-05-01T10:00:00+02:60", "the time zone offset is out of range"},
      {"2025-05-01T10:00:00.Z", "expected digits after the decimal point"},
      {"2025-05-01T10:00:00.1234567890Z", "the fraction of a second has more than 9 digits"},
      {"2025-05-01T10:00:00Zjunk", "unexpected text after the time zone"},
      {"2025-05-01T10:00:00Z ", "unexpected text after the time zone"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Time> t = ParseRfc3339(c.text);
    ASSERT_FALSE(t.ok()) << "parsed as " << t->unix_micros();
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message(), "invalid RFC 3339 timestamp \"" + c.text + "\": " + c.why);
  }
}

TEST(FormatRfc3339Test, FormatsUtc) {
  struct Case {
    int64_t unix_micros;
    std::string time;
    std::string micro_time;
  };
  const std::vector<Case> cases = {
      {0, "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z"},
      {kMay2025 * 1'000'000 + 123456, "2025-05-01T10:00:00Z", "2025-05-01T10:00:00.123456Z"},
      {kMay2025 * 1'000'000 + 999999, "2025-05-01T10:00:00Z", "2025-05-01T10:00:00.999999Z"},
      {int64_t{1709210096} * 1'000'000, "2024-02-29T12:34:56Z", "2024-02-29T12:34:56.000000Z"},
      {-1, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.999999Z"},
      {-1'000'000, "1969-12-31T23:59:59Z", "1969-12-31T23:59:59.000000Z"},
      {int64_t{-315619200} * 1'000'000, "1960-01-01T00:00:00Z", "1960-01-01T00:00:00.000000Z"},
      {int64_t{-62135596800} * 1'000'000, "0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z"},
      {int64_t{253402300799} * 1'000'000, "9999-12-31T23:59:59Z", "9999-12-31T23:59:59.000000Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.time);
    const Time t = Time::FromUnixMicros(c.unix_micros);
    EXPECT_EQ(FormatRfc3339(t), c.time);
    EXPECT_EQ(FormatRfc3339Micro(t), c.micro_time);
    StatusOr<Time> back = ParseRfc3339(FormatRfc3339Micro(t));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, t);
  }
}

TEST(FormatRfc3339Test, EveryDayFrom1600To2400RoundTrips) {
  // Exercises the civil-date arithmetic across leap and century rules.
  const int64_t first = ParseRfc3339("1600-01-01T00:00:00Z")->unix_micros();
  const int64_t last = ParseRfc3339("2400-12-31T00:00:00Z")->unix_micros();
  const int64_t day = int64_t{86400} * 1'000'000;
  int64_t days = 0;
  for (int64_t us = first; us <= last; us += day, ++days) {
    // Vary the time of day so hour/minute/second digits are covered as well.
    const Time t = Time::FromUnixMicros(us + (days * 7919 % 86400) * 1'000'000 + days % 1'000'000);
    StatusOr<Time> back = ParseRfc3339(FormatRfc3339Micro(t));
    ASSERT_TRUE(back.ok()) << FormatRfc3339Micro(t) << ": " << back.status();
    ASSERT_EQ(*back, t) << FormatRfc3339Micro(t);
  }
  // 801 years, 195 of them leap years (1700, 1800, 1900, 2100, 2200, 2300 are not).
  EXPECT_EQ(days, 801 * 365 + 195);
}

TEST(ParseGoDurationTest, ParsesGoSyntax) {
  struct Case {
    std::string text;
    microseconds want;
  };
  const std::vector<Case> cases = {
      {"90s", seconds(90)},
      {"10m", minutes(10)},
      {"1h30m", minutes(90)},
      {"1.5h", minutes(90)},
      {"300ms", milliseconds(300)},
      {"1.5s", milliseconds(1500)},
      {".5s", milliseconds(500)},
      {"1.s", seconds(1)},
      {"1h0m0s", hours(1)},
      {"2h45m30.5s", hours(2) + minutes(45) + milliseconds(30500)},
      {"1m1m", minutes(2)},
      {"1us", microseconds(1)},
      {"1\xC2\xB5s", microseconds(1)},  // U+00B5 MICRO SIGN
      {"1\xCE\xBCs", microseconds(1)},  // U+03BC GREEK SMALL LETTER MU
      {"1500ns", microseconds(1)},      // below a microsecond is truncated
      {"1ns", microseconds(0)},
      {"-1.5s", milliseconds(-1500)},
      {"+5s", seconds(5)},
      {"0", microseconds(0)},
      {"-0", microseconds(0)},
      {"0s", microseconds(0)},
      {"0.000001s", microseconds(1)},
      {"0.1234567891234567891234s", microseconds(123456)},
      {"2562047h47m16.854775807s", microseconds(9223372036854775)},    // Go's max
      {"-2562047h47m16.854775808s", microseconds(-9223372036854775)},  // Go's min
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Duration> d = ParseGoDuration(c.text);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->count(), c.want.count());
  }
}

TEST(ParseGoDurationTest, RejectsInvalidDurations) {
  const std::string kUnits = " (one of ns, us, ms, s, m, h)";
  struct Case {
    std::string text;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "it is empty"},
      {"-", "it is empty"},
      {"10", "missing unit" + kUnits},
      {"1h30", "missing unit" + kUnits},
      {"1.5.s", "missing unit" + kUnits},
      {"1d", "unknown unit \"d\"" + kUnits},
      {"1H", "unknown unit \"H\"" + kUnits},
      {"1h 30m", "unknown unit \"h \"" + kUnits},
      {"h", "expected a number"},
      {".s", "expected a number"},
      {"--1s", "expected a number"},
      {"2562047h47m16.854775808s", "out of range"},
      {"9999999999999999999h", "out of range"},
      {"99999999999999999999999999999s", "out of range"},
      {"3000000h", "out of range"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Duration> d = ParseGoDuration(c.text);
    ASSERT_FALSE(d.ok()) << "parsed as " << d->count() << "us";
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(d.status().message(), "invalid duration \"" + c.text + "\": " + c.why);
  }
}

TEST(FormatGoDurationTest, MirrorsGoString) {
  struct Case {
    microseconds d;
    std::string want;
  };
  const std::vector<Case> cases = {
      {microseconds(0), "0s"},
      {microseconds(1), "1\xC2\xB5s"},
      {microseconds(999), "999\xC2\xB5s"},
      {microseconds(1500), "1.5ms"},
      {milliseconds(300), "300ms"},
      {microseconds(999999), "999.999ms"},
      {seconds(1), "1s"},
      {milliseconds(1500), "1.5s"},
      {seconds(90), "1m30s"},
      {minutes(10), "10m0s"},
      {minutes(90), "1h30m0s"},
      {hours(1), "1h0m0s"},
      {hours(100), "100h0m0s"},
      {hours(1) + microseconds(1), "1h0m0.000001s"},
      {milliseconds(-1500), "-1.5s"},
      {microseconds(-1), "-1\xC2\xB5s"},
      {microseconds(std::numeric_limits<int64_t>::min()), "-2562047788h0m54.775808s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(FormatGoDuration(c.d), c.want);
  }
}

TEST(FormatGoDurationTest, RoundTripsThroughParse) {
  const std::vector<microseconds> cases = {
      microseconds(0),    microseconds(1),
      microseconds(1500), seconds(59),
      minutes(10),        minutes(90) + microseconds(7),
      hours(-26),         microseconds(9223372036854775),
  };
  for (microseconds d : cases) {
    SCOPED_TRACE(FormatGoDuration(d));
    StatusOr<Duration> back = ParseGoDuration(FormatGoDuration(d));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->count(), d.count());
  }
}

TEST(ClockTest, FakeClockMovesOnlyWhenTold) {
  FakeClock clock(Time::FromUnixSeconds(kMay2025));
  EXPECT_EQ(clock.Now(), Time::FromUnixSeconds(kMay2025));
  clock.Advance(seconds(90));
  EXPECT_EQ(FormatRfc3339(clock.Now()), "2025-05-01T10:01:30Z");
  clock.Set(Time::FromUnixSeconds(0));
  EXPECT_EQ(clock.Now(), Time());
}

TEST(ClockTest, RealClockReadsTheWallClock) {
  // Any plausible "now" is after this code was written and is never zero.
  EXPECT_GT(RealClock().Now(), Time::FromUnixSeconds(kMay2025 - 86400 * 365));
  EXPECT_EQ(&RealClock(), &RealClock());
}

}  // namespace
}  // namespace muster
