#include "model/resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace muster {
namespace {

using ::testing::ElementsAre;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ResourcesTest, KeepsEntriesSortedAndDistinguishesAbsentFromZero) {
  Resources r{{"nvidia.com/gpu", 8500}, {"cpu", 500}, {"memory", 0}};
  EXPECT_THAT(r.entries(), ElementsAre(Resources::Entry{"cpu", 500}, Resources::Entry{"memory", 0},
                                       Resources::Entry{"nvidia.com/gpu", 8500}));
  EXPECT_EQ(r.milli_cpu(), 500);
  EXPECT_EQ(r.milli_gpus(), 8500);
  EXPECT_EQ(r.gpus(), 8) << "whole GPUs: a fraction rounds down";
  EXPECT_TRUE(r.Has("memory"));
  EXPECT_EQ(r.memory(), 0);
  EXPECT_FALSE(r.Has("pods"));
  EXPECT_EQ(r.Get("pods"), 0);

  r.Set("pods", 10);
  r.Set("cpu", 750);
  r.Erase("memory");
  r.Erase("not-there");
  EXPECT_THAT(r.entries(),
              ElementsAre(Resources::Entry{"cpu", 750}, Resources::Entry{"nvidia.com/gpu", 8500},
                          Resources::Entry{"pods", 10}));
}

TEST(ResourcesTest, IsZeroAndEmpty) {
  struct Case {
    std::string name;
    Resources r;
    bool empty;
    bool zero;
  };
  const std::vector<Case> cases = {
      {"none", {}, true, true},
      {"explicit zeros", {{"cpu", 0}, {"memory", 0}}, false, true},
      {"one positive", {{"cpu", 0}, {"memory", 1}}, false, false},
      {"one negative", {{"cpu", -1}}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.r.empty(), c.empty);
    EXPECT_EQ(c.r.IsZero(), c.zero);
  }
}

TEST(ResourcesTest, Arithmetic) {
  const Resources a{{"cpu", 1000}, {"memory", 2 * kGi}};
  const Resources b{{"cpu", 250}, {"nvidia.com/gpu", 4}};
  struct Case {
    std::string name;
    Resources got;
    std::vector<Resources::Entry> want;
  };
  Resources scaled = a;
  scaled *= 3;
  // Sums of names already there are added in place; the rest merge.
  Resources doubled = a;
  doubled += doubled;
  Resources taken = a;
  taken -= Resources{{"cpu", 1000}};
  const std::vector<Case> cases = {
      {"sum keeps the union of names",
       a + b,
       {{"cpu", 1250}, {"memory", 2 * kGi}, {"nvidia.com/gpu", 4}}},
      {"difference may go negative",
       a - b,
       {{"cpu", 750}, {"memory", 2 * kGi}, {"nvidia.com/gpu", -4}}},
      {"sum of names already there",
       a + Resources{{"memory", 1}},
       {{"cpu", 1000}, {"memory", 2 * kGi + 1}}},
      {"sum with a new name between",
       a + Resources{{"cpu", 1}, {"ephemeral-storage", 5}},
       {{"cpu", 1001}, {"ephemeral-storage", 5}, {"memory", 2 * kGi}}},
      {"sum with a new name first",
       a + Resources{{"a", 1}},
       {{"a", 1}, {"cpu", 1000}, {"memory", 2 * kGi}}},
      {"sum with itself", doubled, {{"cpu", 2000}, {"memory", 4 * kGi}}},
      {"difference to zero keeps the name", taken, {{"cpu", 0}, {"memory", 2 * kGi}}},
      {"scaled", scaled, {{"cpu", 3000}, {"memory", 6 * kGi}}},
      {"max", Resources::Max(a, b), {{"cpu", 1000}, {"memory", 2 * kGi}, {"nvidia.com/gpu", 4}}},
      {"min reads absent as zero",
       Resources::Min(a, b),
       {{"cpu", 250}, {"memory", 0}, {"nvidia.com/gpu", 0}}},
      {"clamped at zero",
       (a - b).ClampedAtZero(),
       {{"cpu", 750}, {"memory", 2 * kGi}, {"nvidia.com/gpu", 0}}},
      {"sum saturates",
       Resources{{"cpu", kInt64Max}} + Resources{{"cpu", 1}},
       {{"cpu", kInt64Max}}},
      {"difference saturates",
       Resources{{"cpu", kInt64Min}} - Resources{{"cpu", 1}},
       {{"cpu", kInt64Min}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.got.entries(), c.want);
  }
  Resources big{{"memory", kInt64Max / 2 + 1}};
  big *= 2;
  EXPECT_EQ(big.memory(), kInt64Max);
}

TEST(ResourcesTest, FitsInAndExceeding) {
  const Resources capacity{{"cpu", 4000}, {"memory", 8 * kGi}};
  struct Case {
    std::string name;
    Resources request;
    bool absent_is_unlimited;
    std::vector<std::string> exceeding;
  };
  const std::vector<Case> cases = {
      {"fits", {{"cpu", 4000}, {"memory", kGi}}, false, {}},
      {"empty request fits", {}, false, {}},
      {"cpu over", {{"cpu", 4001}}, false, {"cpu"}},
      {"both over, sorted", {{"memory", 9 * kGi}, {"cpu", 5000}}, false, {"cpu", "memory"}},
      {"absent in capacity is zero", {{"nvidia.com/gpu", 1}}, false, {"nvidia.com/gpu"}},
      {"absent in capacity is unlimited", {{"nvidia.com/gpu", 100}}, true, {}},
      {"unlimited only for absent names", {{"cpu", 5000}, {"nvidia.com/gpu", 1}}, true, {"cpu"}},
      {"zero of a missing resource fits", {{"nvidia.com/gpu", 0}}, false, {}},
      {"negative amounts never exceed", {{"cpu", -1}, {"pods", -3}}, false, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.request.Exceeding(capacity, c.absent_is_unlimited), c.exceeding);
    EXPECT_EQ(c.request.FitsIn(capacity, c.absent_is_unlimited), c.exceeding.empty());
  }
  // A present zero in capacity is a hard limit even when absent is unlimited.
  EXPECT_THAT(Resources({{"nvidia.com/gpu", 1}})
                  .Exceeding(Resources{{"nvidia.com/gpu", 0}}, /*absent_is_unlimited=*/true),
              ElementsAre("nvidia.com/gpu"));
}

TEST(ResourcesTest, DominantShare) {
  const Resources total{{"cpu", 100000}, {"memory", 400 * kGi}, {"nvidia.com/gpu", 16}};
  struct Case {
    std::string name;
    Resources usage;
    double share;
    std::string dominant;
  };
  const std::vector<Case> cases = {
      {"empty", {}, 0.0, ""},
      {"zeros", {{"cpu", 0}, {"nvidia.com/gpu", 0}}, 0.0, ""},
      {"cpu dominates", {{"cpu", 50000}, {"memory", 100 * kGi}}, 0.5, "cpu"},
      {"gpu dominates", {{"cpu", 10000}, {"nvidia.com/gpu", 12}}, 0.75, "nvidia.com/gpu"},
      {"tie goes to the first name", {{"cpu", 25000}, {"memory", 100 * kGi}}, 0.25, "cpu"},
      {"over the total", {{"memory", 800 * kGi}}, 2.0, "memory"},
      {"resource the total lacks", {{"cpu", 1}, {"example.com/fpga", 1}}, kInf, "example.com/fpga"},
      {"negative amounts are ignored", {{"cpu", -50000}}, 0.0, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_DOUBLE_EQ(c.usage.DominantShare(total), c.share);
    const auto [share, name] = c.usage.DominantShareWithName(total);
    EXPECT_DOUBLE_EQ(share, c.share);
    EXPECT_EQ(name, c.dominant);
  }
  // A total holding 0 of a requested resource is the same as lacking it.
  EXPECT_TRUE(std::isinf(Resources({{"cpu", 1}}).DominantShare(Resources{{"cpu", 0}})));
}

TEST(ResourcesTest, EqualityIsOnValues) {
  struct Case {
    std::string name;
    Resources a;
    Resources b;
    bool equal;
  };
  const std::vector<Case> cases = {
      {"zero equals absent", {{"cpu", 0}}, {}, true},
      {"zeros of different names", {{"cpu", 0}}, {{"memory", 0}}, true},
      {"same", {{"cpu", 1}, {"memory", 2}}, {{"memory", 2}, {"cpu", 1}}, true},
      {"different amount", {{"cpu", 1}}, {{"cpu", 2}}, false},
      {"extra name", {{"cpu", 1}}, {{"cpu", 1}, {"memory", 1}}, false},
      {"negative vs absent", {{"cpu", -1}}, {}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.a == c.b, c.equal);
    EXPECT_EQ(c.b == c.a, c.equal);
  }
}

TEST(ResourcesTest, FromQuantities) {
  StatusOr<Resources> r = Resources::FromQuantities(
      {{"cpu", "500m"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(
      *r, (Resources{{"cpu", 500}, {"memory", 2 * kGi}, {"nvidia.com/gpu", 8000}, {"pods", 110}}));
  EXPECT_EQ(r->ToQuantities(),
            (std::map<std::string, std::string>{
                {"cpu", "500m"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}));
  // A share of a GPU (a Volcano Job's template, a queue's capability) reads
  // and writes back as the decimal the user wrote.
  StatusOr<Resources> half = Resources::FromQuantities({{"nvidia.com/gpu", "0.5"}});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->milli_gpus(), 500);
  EXPECT_EQ(half->ToQuantities().at("nvidia.com/gpu"), "0.5");
}

TEST(ResourcesTest, FromQuantitiesErrorsNameTheResource) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> list;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"fractional pods",
       {{"cpu", "1"}, {"pods", "0.5"}},
       "quantity \"0.5\" of pods is not a whole number"},
      {"malformed memory",
       {{"cpu", "1"}, {"memory", "2 Gi"}},
       "quantity \"2 Gi\" of memory is invalid: it must not contain spaces"},
      {"negative cpu", {{"cpu", "-500m"}}, "quantity \"-500m\" of cpu is negative"},
      {"first bad entry in name order",
       {{"memory", "x"}, {"cpu", "y"}},
       "quantity \"y\" of cpu is invalid: expected a number such as \"1\", \"0.5\" or \"500m\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<Resources> r = Resources::FromQuantities(c.list);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(ResourcesTest, ToString) {
  struct Case {
    std::string name;
    Resources r;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty", {}, "none"},
      {"typical",
       {{"nvidia.com/gpu", 8000}, {"memory", 2 * kGi}, {"cpu", 500}},
       "cpu=500m, memory=2Gi, nvidia.com/gpu=8"},
      {"a share of a GPU", {{"nvidia.com/gpu", 500}}, "nvidia.com/gpu=0.5"},
      {"whole cpus and odd bytes", {{"cpu", 2000}, {"memory", 1500000}}, "cpu=2, memory=1500000"},
      {"negative", {{"cpu", -250}}, "cpu=-250m"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.r.ToString(), c.want);
  }
}

}  // namespace
}  // namespace muster
