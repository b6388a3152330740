#include "model/quantity.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace muster {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TEST(QuantityTest, ParsesAndPrintsCanonically) {
  struct Case {
    std::string text;
    std::string canonical;
    int64_t milli_ceil;
    int64_t value_ceil;
    bool is_integer;
  };
  const std::vector<Case> cases = {
      {"500m", "500m", 500, 1, false},
      {"1.5", "1500m", 1500, 2, false},
      {"2Gi", "2147483648", 2147483648000, 2147483648, true},
      {"1e3", "1k", 1000000, 1000, true},
      {"1E3", "1k", 1000000, 1000, true},
      {"1e+3", "1k", 1000000, 1000, true},
      {"1e-3", "1m", 1, 1, false},
      {"1.5e3", "1500", 1500000, 1500, true},
      {"100Ki", "102400", 102400000, 102400, true},
      {"1.5Gi", "1610612736", 1610612736000, 1610612736, true},
      {"0.5Ki", "512", 512000, 512, true},
      {"1Mi", "1048576", 1048576000, 1048576, true},
      {"0.1", "100m", 100, 1, false},
      {"1n", "1n", 1, 1, false},
      {"1u", "1u", 1, 1, false},
      {"1500u", "1500u", 2, 1, false},
      {"1k", "1k", 1000000, 1000, true},
      {"1M", "1M", 1000000000, 1000000, true},
      {"1G", "1G", 1000000000000, 1000000000, true},
      {"1T", "1T", 1000000000000000, 1000000000000, true},
      {"1P", "1P", 1000000000000000000, 1000000000000000, true},
      {"2000m", "2", 2000, 2, true},
      {"1500000", "1500k", 1500000000, 1500000, true},
      {"+1", "1", 1000, 1, true},
      {"-1", "-1", -1000, -1, true},
      {"-1.5", "-1500m", -1500, -1, false},  // ceil rounds towards +infinity
      {"-1n", "-1n", 0, 0, false},
      {"0", "0", 0, 0, true},
      {"-0", "0", 0, 0, true},
      {"0.000", "0", 0, 0, true},
      {"0Gi", "0", 0, 0, true},
      {"0e999999", "0", 0, 0, true},
      {"1.", "1", 1000, 1, true},
      {".5", "500m", 500, 1, false},
      {"007", "7", 7000, 7, true},
      // Finer than 1n rounds away from zero to 1n, as in Kubernetes.
      {"0.0000000001", "1n", 1, 1, false},
      {"1.0000000001", "1000000001n", 1001, 2, false},
      {"0.9999999999", "1", 1000, 1, true},
      {"1e-1000000000000000000", "1n", 1, 1, false},
      {"0.000000000000000000000000000000000000000001Ei", "1n", 1, 1, false},
      // Long digit strings are exact.
      {"0000000000000000000000000000000000000000001", "1", 1000, 1, true},
      {"100000000000000000000000n", "100T", 100000000000000000, 100000000000000, true},
      {"1.00000000000000000000000000000000000000", "1", 1000, 1, true},
      // The largest accepted magnitudes.
      {"9223372036854775807m", "9223372036854775807m", kInt64Max, 9223372036854776, false},
      {"9223372036854775.807", "9223372036854775807m", kInt64Max, 9223372036854776, false},
      {"-9223372036854775807m", "-9223372036854775807m", -kInt64Max, -9223372036854775, false},
      {"8Pi", "9007199254740992", 9007199254740992000, 9007199254740992, true},
      {"9P", "9P", 9000000000000000000, 9000000000000000, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Quantity> q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->ToString(), c.canonical);
    EXPECT_EQ(q->MilliValueCeil(), c.milli_ceil);
    EXPECT_EQ(q->ValueCeil(), c.value_ceil);
    EXPECT_EQ(q->is_integer(), c.is_integer);
    // The canonical form parses back to the same value.
    StatusOr<Quantity> again = Quantity::Parse(q->ToString());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *q);
  }
}

TEST(QuantityTest, RejectsMalformedTextWithAReason) {
  const std::string kSuffixes =
      " (expected one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>)";
  const std::string kNoNumber = "expected a number such as \"1\", \"0.5\" or \"500m\"";
  const std::string kTooLarge =
      "it is too large (the largest quantity muster accepts is 9223372036854775807m, about 9.2e15)";
  struct Case {
    std::string text;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "it is empty"},
      {"1.2.3", "it has more than one decimal point"},
      {"5 Gi", "it must not contain spaces"},
      {" 1", "it must not contain spaces"},
      {"1Gi\n", "it must not contain spaces"},
      {"1iB", "unknown suffix \"iB\"" + kSuffixes},
      {"1K", "unknown suffix \"K\"" + kSuffixes},
      {"1Kib", "unknown suffix \"Kib\"" + kSuffixes},
      {"1e", "unknown suffix \"e\"" + kSuffixes},
      {"1mm", "unknown suffix \"mm\"" + kSuffixes},
      {"1,5", "unknown suffix \",5\"" + kSuffixes},
      {"0x10", "unknown suffix \"x10\"" + kSuffixes},
      {"1e1.5", "the exponent \"1.5\" is not an integer"},
      {"1e+", "the exponent \"+\" is not an integer"},
      {"1e3Gi", "the exponent \"3Gi\" is not an integer"},
      {"Gi", kNoNumber},
      {"m", kNoNumber},
      {".", kNoNumber},
      {"+", kNoNumber},
      {"--1", kNoNumber},
      {"+-1", kNoNumber},
      {"-.Ki", kNoNumber},
      {"1E", kTooLarge},  // "E" alone is the exa suffix
      {"10P", kTooLarge},
      {"8Ei", kTooLarge},
      {"9223372036854775808m", kTooLarge},
      {"-9223372036854775808m", kTooLarge},
      {"9223372036854775.8071", kTooLarge},
      {"1e16", kTooLarge},
      {"1e1000000000000000000", kTooLarge},
      {"99999999999999999999999999999999999999999999999999", kTooLarge},
      {"100000000000000000000000000000000000000000n", kTooLarge},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<Quantity> q = Quantity::Parse(c.text);
    ASSERT_FALSE(q.ok()) << "parsed as " << q->ToString();
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(q.status().message(), "quantity \"" + c.text + "\" is invalid: " + c.why);
  }
}

TEST(QuantityTest, EqualityIsOnValues) {
  struct Case {
    std::string name;
    Quantity a;
    Quantity b;
    bool equal;
  };
  auto parse = [](std::string_view text) { return *Quantity::Parse(text); };
  const std::vector<Case> cases = {
      {"decimal vs milli", parse("1.5"), parse("1500m"), true},
      {"exponent vs suffix", parse("1e3"), parse("1k"), true},
      {"binary vs plain", parse("1Ki"), parse("1024"), true},
      {"FromMilli vs FromInt", Quantity::FromMilli(2000), Quantity::FromInt(2), true},
      {"parsed vs FromMilli", parse("0.25"), Quantity::FromMilli(250), true},
      {"zero forms", parse("-0"), Quantity::FromInt(0), true},
      {"different", parse("1"), parse("1001m"), false},
      {"sign", parse("-1"), parse("1"), false},
      {"nano apart", parse("1"), parse("1000000001n"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.a == c.b, c.equal);
    EXPECT_EQ(c.b == c.a, c.equal);
  }
}

TEST(QuantityTest, ConversionsSaturateAtInt64) {
  EXPECT_EQ(Quantity::FromInt(kInt64Max).MilliValueCeil(), kInt64Max);
  EXPECT_EQ(Quantity::FromInt(kInt64Min).MilliValueCeil(), kInt64Min);
  EXPECT_EQ(Quantity::FromInt(kInt64Max).ValueCeil(), kInt64Max);
  EXPECT_EQ(Quantity::FromMilli(kInt64Min).ValueCeil(), kInt64Min / 1000);
  EXPECT_EQ(Quantity::FromInt(kInt64Max).ToString(), "9223372036854775807");
  EXPECT_EQ(Quantity::FromMilli(kInt64Min).ToString(), "-9223372036854775808m");
  EXPECT_EQ(Quantity::FromInt(4'000'000'000'000'000'000).ToString(), "4E");
}

TEST(ParseResourceQuantityTest, ConvertsToMusterUnits) {
  struct Case {
    std::string resource;
    std::string text;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"cpu", "500m", 500},
      {"cpu", "1", 1000},
      {"cpu", "1.5", 1500},
      {"cpu", "0.1", 100},
      {"cpu", "1n", 1},  // finer than 1m rounds up
      {"cpu", "1.0005", 1001},
      {"cpu", "+1", 1000},
      {"cpu", "-0", 0},
      {"cpu", "64", 64000},
      // ResourceQuota-style names in Volcano's PodGroup minResources.
      {"requests.cpu", "3500m", 3500},
      {"limits.cpu", "2", 2000},
      {"requests.memory", "1.5Gi", 1610612736},
      {"memory", "1Gi", 1073741824},
      {"memory", "1.5Gi", 1610612736},
      {"memory", "1500M", 1500000000},
      {"memory", "100Ki", 102400},
      {"memory", "1e3", 1000},
      {"memory", "1.5", 2},  // fractional bytes round up
      {"memory", "8Pi", 9007199254740992},
      {"ephemeral-storage", "10Gi", 10737418240},
      {"storage", "500M", 500000000},
      {"hugepages-2Mi", "4Mi", 4194304},
      {"hugepages-1Gi", "0.5Ki", 512},
      // GPUs in thousandths: a shared GPU is asked by the fraction.
      {"nvidia.com/gpu", "4", 4000},
      {"nvidia.com/gpu", "1e1", 10000},
      {"nvidia.com/gpu", "2000m", 2000},
      {"nvidia.com/gpu", "0", 0},
      {"nvidia.com/gpu", "0.5", 500},
      {"nvidia.com/gpu", "0.25", 250},
      {"nvidia.com/gpu", "500m", 500},
      {"requests.nvidia.com/gpu", "1.5", 1500},
      {"pods", "110", 110},
      {"example.com/foo", "1k", 1000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource + " " + c.text);
    StatusOr<int64_t> got = ParseResourceQuantity(c.resource, c.text);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ParseResourceQuantityTest, RejectsWithMessagesNamingTheResource) {
  struct Case {
    std::string resource;
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"rdma/hca", "0.5", "quantity \"0.5\" of rdma/hca is not a whole number"},
      {"rdma/hca", "500m", "quantity \"500m\" of rdma/hca is not a whole number"},
      // Found by fuzz_reconciler_job: a domain makes it an extended resource,
      // whole units only, whatever the name's start.
      {"hugepages-x.io/gpu", "500m",
       "quantity \"500m\" of hugepages-x.io/gpu is not a whole number"},
      {"pods", "1.5", "quantity \"1.5\" of pods is not a whole number"},
      {"cpu", "-1", "quantity \"-1\" of cpu is negative"},
      {"memory", "-1Gi", "quantity \"-1Gi\" of memory is negative"},
      {"nvidia.com/gpu", "-2", "quantity \"-2\" of nvidia.com/gpu is negative"},
      {"cpu", "-1n", "quantity \"-1n\" of cpu is negative"},
      {"cpu", "abc",
       "quantity \"abc\" of cpu is invalid: expected a number such as \"1\", "
       "\"0.5\" or \"500m\""},
      {"memory", "5 Gi", "quantity \"5 Gi\" of memory is invalid: it must not contain spaces"},
      {"memory", "", "quantity \"\" of memory is invalid: it is empty"},
      {"memory", "9Pi",
       "quantity \"9Pi\" of memory is invalid: it is too large (the largest quantity muster "
       "accepts is 9223372036854775807m, about 9.2e15)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource + " " + c.text);
    StatusOr<int64_t> got = ParseResourceQuantity(c.resource, c.text);
    ASSERT_FALSE(got.ok()) << "parsed as " << *got;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(got.status().message(), c.message);
  }
}

TEST(FormatResourceQuantityTest, RoundTripsThroughParse) {
  struct Case {
    std::string resource;
    std::string text;
    std::string formatted;
  };
  const std::vector<Case> cases = {
      {"cpu", "500m", "500m"},
      {"cpu", "1.5", "1500m"},
      {"cpu", "2", "2"},
      {"cpu", "0.1", "100m"},
      {"cpu", "1000", "1k"},
      {"cpu", "0", "0"},
      {"cpu", "1n", "1m"},
      {"memory", "1Gi", "1Gi"},
      {"memory", "1.5Gi", "1536Mi"},
      {"memory", "1500000", "1500000"},
      {"memory", "1G", "1000000000"},
      {"memory", "1024", "1Ki"},
      {"memory", "8Pi", "8Pi"},
      {"memory", "0", "0"},
      {"ephemeral-storage", "20Gi", "20Gi"},
      {"hugepages-2Mi", "4Mi", "4Mi"},
      {"nvidia.com/gpu", "8", "8"},
      {"nvidia.com/gpu", "1k", "1000"},
      {"nvidia.com/gpu", "0.5", "0.5"},
      {"nvidia.com/gpu", "250m", "0.25"},
      {"nvidia.com/gpu", "2.125", "2.125"},
      {"pods", "110", "110"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource + " " + c.text);
    StatusOr<int64_t> value = ParseResourceQuantity(c.resource, c.text);
    ASSERT_TRUE(value.ok()) << value.status();
    const std::string formatted = FormatResourceQuantity(c.resource, *value);
    EXPECT_EQ(formatted, c.formatted);
    StatusOr<int64_t> again = ParseResourceQuantity(c.resource, formatted);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, *value);
  }
}

TEST(FormatResourceQuantityTest, FormatsNegativeAndExtremeAmounts) {
  struct Case {
    std::string resource;
    int64_t value;
    std::string want;
  };
  // Differences of Resources can be negative; they still print readably.
  const std::vector<Case> cases = {
      {"cpu", -500, "-500m"},
      {"memory", -2147483648, "-2Gi"},
      {"memory", kInt64Min, "-8Ei"},
      {"memory", kInt64Max, "9223372036854775807"},
      {"cpu", kInt64Max, "9223372036854775807m"},
      {"nvidia.com/gpu", -1000, "-1"},
      {"nvidia.com/gpu", -1500, "-1.5"},
      {"nvidia.com/gpu", 5, "0.005"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource + " " + std::to_string(c.value));
    EXPECT_EQ(FormatResourceQuantity(c.resource, c.value), c.want);
  }
}

TEST(ResourceKindTest, ClassifiesResources) {
  struct Case {
    std::string resource;
    bool milli;
    bool integer;
  };
  const std::vector<Case> cases = {
      {"cpu", true, false},
      {"memory", false, false},
      {"ephemeral-storage", false, false},
      {"storage", false, false},
      {"hugepages-2Mi", false, false},
      {"hugepages-x.io/gpu", false, true},
      {"nvidia.com/gpu", true, false},
      {"limits.nvidia.com/gpu", true, false},
      {"pods", false, true},
      {"example.com/fpga", false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource);
    EXPECT_EQ(IsMilliResource(c.resource), c.milli);
    EXPECT_EQ(IsIntegerResource(c.resource), c.integer);
  }
}

}  // namespace
}  // namespace muster
