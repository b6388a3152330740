#include "model/gpu_share.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/pod.h"
#include "model/testing/builders.h"

namespace muster {
namespace {

using test::MakePod;
using test::Res;

GpuShareAsk Fraction(int32_t milli) {
  return GpuShareAsk{.compute = milli, .memory_permille = milli};
}

GpuShareAsk Vgpu(int32_t gpus, int64_t memory_mib, int32_t cores_percent, int container = 0) {
  return GpuShareAsk{.form = GpuShareAsk::Form::kVgpu,
                     .container = container,
                     .gpus = gpus,
                     .compute = cores_percent * 10,
                     .memory_mib = memory_mib};
}

std::vector<GpuCard> Cards(int n, int64_t memory_mib = 0, int32_t max_sharers = 0) {
  return std::vector<GpuCard>(static_cast<size_t>(n),
                              GpuCard{.memory_mib = memory_mib, .max_sharers = max_sharers});
}

// Places each pod's asks one after another, as binds arriving in order do,
// and returns the GPU each pod's first slice took (-1: did not fit).
std::vector<int> PlaceInOrder(const std::vector<std::vector<GpuShareAsk>>& pods,
                              const std::vector<GpuCard>& cards, GpuUses uses,
                              std::vector<std::string>* whys = nullptr) {
  std::vector<int> gpus;
  for (const auto& asks : pods) {
    std::string why;
    const auto slices = PlaceShares(asks, cards, uses, ~uint32_t{0}, {}, &why);
    if (whys) whys->push_back(why);
    if (!slices) {
      gpus.push_back(-1);
      continue;
    }
    AccountHolding(uses, GpuHolding{.slices = *slices}, +1);
    gpus.push_back(slices->front().gpu);
  }
  return gpus;
}

TEST(PlaceSharesTest, PacksSharesOntoTheGpuTheyFillBest) {
  struct Case {
    std::string name;
    std::vector<GpuCard> cards;
    GpuUses uses;
    std::vector<std::vector<GpuShareAsk>> pods;
    std::vector<int> want_gpus;
  };
  GpuUses whole_on_0{};
  whole_on_0[0].whole = 1;
  GpuUses three_tenths_on_1{};
  AccountHolding(three_tenths_on_1, GpuHolding{.slices = {{.gpu = 1, .compute = 300}}}, +1);
  const std::vector<Case> cases = {
      {"0.5 + 0.5 share one GPU", Cards(8), {}, {{Fraction(500)}, {Fraction(500)}}, {0, 0}},
      {"three 0.3 on one GPU, a fourth on the next",
       Cards(8),
       {},
       {{Fraction(300)}, {Fraction(300)}, {Fraction(300)}, {Fraction(300)}},
       {0, 0, 0, 1}},
      {"a shared GPU before an idle one, the tightest first",
       Cards(4),
       three_tenths_on_1,
       {{Fraction(700)}, {Fraction(500)}},
       {1, 0}},
      {"never beside a whole-GPU pod", Cards(2), whole_on_0, {{Fraction(100)}}, {1}},
      {"memory bounds the sharers",
       Cards(2, /*memory_mib=*/16384),
       {},
       {{Vgpu(1, 10000, 0)}, {Vgpu(1, 10000, 0)}, {Vgpu(1, 6000, 0)}},
       {0, 1, 0}},
      {"compute bounds the sharers",
       Cards(2, 80000),
       {},
       {{Vgpu(1, 1000, 60)}, {Vgpu(1, 1000, 60)}, {Vgpu(1, 1000, 40)}},
       {0, 1, 0}},
      {"cores 100 takes an idle GPU alone",
       Cards(2, 80000),
       {},
       {{Vgpu(1, 1000, 10)}, {Vgpu(1, 1000, 100)}, {Vgpu(1, 1000, 0)}},
       {0, 1, 0}},
      {"a sharer limit",
       Cards(2, 0, /*max_sharers=*/2),
       {},
       {{Fraction(100)}, {Fraction(100)}, {Fraction(100)}},
       {0, 0, 1}},
      {"no room anywhere", Cards(1), whole_on_0, {{Fraction(500)}}, {-1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PlaceInOrder(c.pods, c.cards, c.uses), c.want_gpus);
  }
}

TEST(PlaceSharesTest, AVgpuAskTakesDistinctGpusAndContainersMayMeet) {
  const std::vector<GpuCard> cards = Cards(4, 40000);
  const std::vector<GpuShareAsk> asks = {Vgpu(2, 10000, 0, /*container=*/0),
                                         Vgpu(1, 10000, 0, /*container=*/1)};
  const auto slices = PlaceShares(asks, cards, GpuUses{}, ~uint32_t{0}, {});
  ASSERT_TRUE(slices.has_value());
  ASSERT_EQ(slices->size(), 3u);
  EXPECT_NE((*slices)[0].gpu, (*slices)[1].gpu) << "one container's vGPUs are distinct GPUs";
  EXPECT_EQ((*slices)[2].gpu, (*slices)[0].gpu) << "the next container fills a shared GPU";
  EXPECT_EQ((*slices)[2].container, 1);
}

TEST(PlaceSharesTest, IdleGpusFollowTheCallersPreference) {
  const std::vector<int> prefer = {5, 2};
  const auto slices = PlaceShares(std::vector<GpuShareAsk>{Fraction(500)}, Cards(8), GpuUses{},
                                  ~uint32_t{0}, prefer);
  ASSERT_TRUE(slices.has_value());
  EXPECT_EQ(slices->front().gpu, 5);
  const auto unusable = PlaceShares(std::vector<GpuShareAsk>{Fraction(500)}, Cards(8), GpuUses{},
                                    /*usable=*/~uint32_t{1U << 5}, prefer);
  ASSERT_TRUE(unusable.has_value());
  EXPECT_EQ(unusable->front().gpu, 2);
}

TEST(PlaceSharesTest, SaysWhatIsLeftWhenNothingFits) {
  GpuUses uses{};
  AccountHolding(uses, GpuHolding{.slices = {{.gpu = 0, .compute = 700, .memory_mib = 100}}}, +1);
  struct Case {
    std::string name;
    std::vector<GpuCard> cards;
    GpuShareAsk ask;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"compute", Cards(1), Fraction(500), "needs 0.5 of a GPU: largest free share here is 0.3"},
      {"memory", Cards(1, 1000), Vgpu(1, 950, 0),
       "needs 1 vGPU (950 MiB): most GPU memory free here is 900 MiB"},
      // No '%' in a verdict: kube-scheduler records the filter's message as
      // the format of its FailedScheduling Event (Eventf in
      // pkg/scheduler/schedule_one.go), where "20% c" read "20%!c(MISSING)".
      {"compute of a vGPU", Cards(1, 16000), Vgpu(1, 2000, 40),
       "needs 1 vGPU (2000 MiB, 40 percent compute): largest free share here is 0.3"},
      {"unknown memory", Cards(1), Vgpu(1, 1024, 0),
       "GPU memory unknown here: cannot give 1024 MiB"},
      {"unknown memory, all of it", Cards(1),
       GpuShareAsk{.form = GpuShareAsk::Form::kVgpu, .container = 0, .memory_permille = 1000},
       "GPU memory unknown here (no vGPU registration): cannot give a share of it"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string why;
    EXPECT_FALSE(PlaceShares(std::vector<GpuShareAsk>{c.ask}, c.cards, uses, ~uint32_t{0}, {}, &why)
                     .has_value());
    EXPECT_EQ(why, c.why);
  }
}

TEST(SharedFillTest, CompletingAHalfUsedGpuScoresAboveOpeningAnIdleOne) {
  const std::vector<GpuCard> cards = Cards(2);
  GpuUses uses{};
  AccountHolding(uses, GpuHolding{.slices = {{.gpu = 0, .compute = 500}}}, +1);
  EXPECT_DOUBLE_EQ(SharedFill(std::vector<GpuSlice>{{.gpu = 0, .compute = 500}}, cards, uses), 1.0);
  EXPECT_DOUBLE_EQ(SharedFill(std::vector<GpuSlice>{{.gpu = 1, .compute = 500}}, cards, uses), 0.5);
}

TEST(AccountHoldingTest, AddingAndRemovingLeavesNothing) {
  GpuUses uses{};
  const GpuHolding h{.whole = 0b101, .slices = {{.gpu = 1, .compute = 250, .memory_mib = 4096}}};
  AccountHolding(uses, h, +1);
  EXPECT_EQ(uses[0].whole, 1);
  EXPECT_EQ(uses[1].sharers, 1);
  EXPECT_EQ(uses[1].memory_mib, 4096);
  AccountHolding(uses, h, -1);
  AccountHolding(uses, h, -1);  // twice: never below zero
  EXPECT_EQ(uses, GpuUses{});
  EXPECT_EQ(h.Gpus(), 0b111u);
}

TEST(ParseGpuFractionTest, AcceptsPercentStepsBelowOne) {
  struct Case {
    std::string text;
    int32_t milli;  // 0: refused
    std::string message;
  };
  const std::vector<Case> cases = {
      {"0.5", 500, ""},
      {"0.25", 250, ""},
      {"0.01", 10, ""},
      {"0.99", 990, ""},
      {"500m", 500, ""},
      {"0.333", 0, "\"0.333\": a share of one GPU has at most two decimals (0.01 steps)"},
      {"1.5", 0, "\"1.5\": a share of one GPU must be above 0 and below 1"},
      {"1", 0, "\"1\": a share of one GPU must be above 0 and below 1"},
      {"0", 0, "\"0\": a share of one GPU must be above 0 and below 1"},
      {"-1", 0, "\"-1\": not a number of GPUs"},
      {"half", 0, "\"half\": not a number of GPUs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<int32_t> got = ParseGpuFraction(c.text);
    if (c.milli > 0) {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, c.milli);
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().message(), c.message);
    }
  }
}

TEST(CheckGpuAmountTest, WholeOrAShareOfOne) {
  EXPECT_TRUE(CheckGpuAmount(2000).ok());
  EXPECT_TRUE(CheckGpuAmount(500).ok());
  EXPECT_EQ(CheckGpuAmount(1500).message(),
            "1.5 nvidia.com/gpu: a request above one GPU must be whole");
  EXPECT_EQ(CheckGpuAmount(333).message(),
            "0.333 nvidia.com/gpu: a share of one GPU has at most two decimals");
  EXPECT_EQ(CheckGpuAmount(-1000).message(), "-1 nvidia.com/gpu is negative");
}

TEST(GpuDemandOfTest, ReadsEveryFormAndRefusesMixtures) {
  struct Case {
    std::string name;
    Pod pod;
    GpuDemand want;
    std::string error;  // "" when it decodes
  };
  const std::vector<Case> cases = {
      {"whole GPUs", MakePod("p").Gpu(4), GpuDemand{.whole = 4}, ""},
      {"a fraction", MakePod("p").Annotation(std::string(kAnnotationGpuFraction), "0.5"),
       GpuDemand{.shares = {Fraction(500)}}, ""},
      {"vGPU number and memory",
       MakePod("p").Limit(kVgpuNumber, "2").Limit(kVgpuMemory, "3000").Limit(kVgpuCores, "30"),
       GpuDemand{.shares = {Vgpu(2, 3000, 30)}}, ""},
      {"vGPU memory alone is one vGPU", MakePod("p").Limit(kVgpuMemory, "1024"),
       GpuDemand{.shares = {Vgpu(1, 1024, 0)}}, ""},
      {"vGPU number alone takes all the memory", MakePod("p").Limit(kVgpuNumber, "1"),
       GpuDemand{.shares = {GpuShareAsk{
                     .form = GpuShareAsk::Form::kVgpu, .container = 0, .memory_permille = 1000}}},
       ""},
      {"vGPU memory percentage",
       MakePod("p").Limit(kVgpuNumber, "1").Limit(kVgpuMemoryPercentage, "25"),
       GpuDemand{.shares = {GpuShareAsk{
                     .form = GpuShareAsk::Form::kVgpu, .container = 0, .memory_permille = 250}}},
       ""},
      {"a malformed fraction",
       MakePod("p").Annotation(std::string(kAnnotationGpuFraction), "0.333"),
       {},
       "metadata.annotations[muster.io/gpu-fraction]: \"0.333\": a share of one GPU has at most "
       "two decimals (0.01 steps)"},
      {"a fraction beside whole GPUs",
       MakePod("p").Gpu(1).Annotation(std::string(kAnnotationGpuFraction), "0.5"),
       {},
       "metadata.annotations[muster.io/gpu-fraction]: a pod asks a share of one GPU, whole GPUs "
       "or vGPUs, not two of them"},
      {"a container asking whole and vGPU",
       MakePod("p").Gpu(1).Limit(kVgpuNumber, "1"),
       {},
       "spec.containers[0].resources.limits[nvidia.com/gpu]: a container asks whole GPUs or vGPU "
       "shares, not both"},
      {"cores above 100",
       MakePod("p").Limit(kVgpuNumber, "1").Limit(kVgpuCores, "150"),
       {},
       "spec.containers[0].resources.limits[volcano.sh/vgpu-cores]: 150 percent of a GPU's "
       "compute: at "
       "most 100"},
      {"cores without a vGPU",
       MakePod("p").Limit(kVgpuCores, "50"),
       {},
       "spec.containers[0].resources.limits[volcano.sh/vgpu-cores]: a vGPU share needs "
       "volcano.sh/vgpu-number or volcano.sh/vgpu-memory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<GpuDemand> got = GpuDemandOf(c.pod);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, c.want);
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().message(), c.error);
    }
  }
}

TEST(GpuDemandOfTest, AFractionCountsAsThatShareOfAGpuInThePodsRequest) {
  const Pod pod = MakePod("p").Cpu("1").Annotation(std::string(kAnnotationGpuFraction), "0.25");
  EXPECT_EQ(pod.EffectiveRequest(), Res({{"cpu", "1"}, {"nvidia.com/gpu", "0.25"}}));
  EXPECT_EQ(pod.ContainerRequest(), Res({{"cpu", "1"}}));
}

}  // namespace
}  // namespace muster
