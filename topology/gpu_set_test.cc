#include "topology/gpu_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topology/testing/fixtures.h"

namespace muster::topology {
namespace {

using ::testing::HasSubstr;

GpuMask MaskOf(std::vector<int> gpus) {
  GpuMask m = 0;
  for (int g : gpus) m |= GpuMask{1} << g;
  return m;
}

std::vector<int> Range(int from, int to) {
  std::vector<int> out;
  for (int i = from; i <= to; ++i) out.push_back(i);
  return out;
}

// Known best answers (topology.md 1.2-1.3, 5.4; go-gpuallocator's tests).
TEST(ChooseGpusTest, KnownBestAnswers) {
  const TopologyIndex dgx1(fixtures::Dgx1Volta());
  const TopologyIndex a100(fixtures::DgxNvswitch(12));
  const TopologyIndex h100(fixtures::DgxNvswitch(18));
  const TopologyIndex pcie(fixtures::Pcie2Socket8());
  const TopologyIndex bridged(fixtures::Bridged4());
  const TopologyIndex rtx(fixtures::Rtx8000x4());
  struct Case {
    std::string name;
    const TopologyIndex* node;
    std::vector<int> free;
    int k;
    std::vector<int> want;
    LinkClass want_class;
  };
  const std::vector<Case> cases = {
      {"DGX-1: 8 of 8", &dgx1, Range(0, 7), 8, Range(0, 7), LinkClass::kSys},
      {"DGX-1: 4 -> an all-NVLink quad", &dgx1, Range(0, 7), 4, {0, 1, 2, 3}, LinkClass::kNvlink},
      {"DGX-1: 2 -> a double-NVLink pair on one PCIe switch",
       &dgx1,
       Range(0, 7),
       2,
       {2, 3},
       LinkClass::kNvlink},
      {"DGX-1: {0,2,4,5} -> {4,5}: the stronger {0,4} would strand {2,5} on SYS",
       &dgx1,
       {0, 2, 4, 5},
       2,
       {4, 5},
       LinkClass::kNvlink},
      {"DGX-1: the upper quad free, 2 -> NV2 on one switch {6,7}",
       &dgx1,
       Range(4, 7),
       2,
       {6, 7},
       LinkClass::kNvlink},
      {"DGX-1: {4,5,7} free, 2 -> NV2 {4,7} over NV1 + PIX {4,5}",
       &dgx1,
       {4, 5, 7},
       2,
       {4, 7},
       LinkClass::kNvlink},
      {"DGX-1: GPU 0 busy, 4 -> the intact quad",
       &dgx1,
       Range(1, 7),
       4,
       {4, 5, 6, 7},
       LinkClass::kNvlink},
      {"DGX-1: GPU 0 busy, 1 -> stays in the broken quad",
       &dgx1,
       Range(1, 7),
       1,
       {1},
       LinkClass::kNvlink},
      {"A100: 4 -> one NUMA node", &a100, Range(0, 7), 4, {0, 1, 2, 3}, LinkClass::kNvlink},
      {"A100: 2 -> one PCIe switch", &a100, Range(0, 7), 2, {0, 1}, LinkClass::kNvlink},
      {"A100: GPU 0 busy, 4 -> NUMA 1 whole, not 1-3 + one of 4-7",
       &a100,
       Range(1, 7),
       4,
       {4, 5, 6, 7},
       LinkClass::kNvlink},
      {"H100: 4 -> one NUMA node", &h100, Range(0, 7), 4, {0, 1, 2, 3}, LinkClass::kNvlink},
      {"H100: 3 of NUMA 0's 3 and NUMA 1's 4 -> NUMA 0's",
       &h100,
       Range(1, 7),
       3,
       {1, 2, 3},
       LinkClass::kNvlink},
      {"PCIe 2-socket: 2 -> one switch", &pcie, Range(0, 7), 2, {0, 1}, LinkClass::kPcieSwitch},
      {"PCIe 2-socket: 4 -> one socket", &pcie, Range(0, 7), 4, {0, 1, 2, 3}, LinkClass::kNuma},
      {"PCIe 2-socket: GPU 0 busy, 2 -> the switch pair that keeps socket 1 whole",
       &pcie,
       Range(1, 7),
       2,
       {2, 3},
       LinkClass::kPcieSwitch},
      {"PCIe 2-socket: GPU 0 busy, 4 -> socket 1, not across sockets",
       &pcie,
       Range(1, 7),
       4,
       {4, 5, 6, 7},
       LinkClass::kNuma},
      {"PCIe 2-socket: only SYS left", &pcie, {3, 4}, 2, {3, 4}, LinkClass::kSys},
      {"bridged 4-GPU: 2 -> a bridged pair", &bridged, Range(0, 3), 2, {0, 1}, LinkClass::kNvlink},
      {"bridged 4-GPU: 1 of {0,1,2} -> 2, keeping the bridge 0-1 whole",
       &bridged,
       {0, 1, 2},
       1,
       {2},
       LinkClass::kNvlink},
      {"RTX 8000 x4: 2 -> a cross-socket bridge", &rtx, Range(0, 3), 2, {0, 3}, LinkClass::kNvlink},
      {"RTX 8000 x4: 1 of {0,1,3} -> 1, keeping 0-3", &rtx, {0, 1, 3}, 1, {1}, LinkClass::kNvlink},
  };
  for (const Case& c : cases) {
    const std::optional<GpuChoice> got = c.node->Choose(MaskOf(c.free), c.k);
    ASSERT_TRUE(got.has_value()) << c.name;
    EXPECT_EQ(got->gpus, c.want) << c.name;
    EXPECT_EQ(got->bottleneck, c.want_class) << c.name;
    EXPECT_EQ(c.node->BestClass(MaskOf(c.free), c.k), c.want_class) << c.name;
  }
}

// Single-GPU requests one after another: each takes the GPU whose loss
// hurts least, so the NVLink groups a later multi-GPU pod needs stay whole
// (first-fit by index breaks them: k8s-device-plugin #1193).
TEST(ChooseGpusTest, SingleGpuSequencesKeepNvlinkGroupsWhole) {
  struct Case {
    std::string name;
    NodeTopology node;
    std::vector<int> busy;
    int singles;
    std::vector<int> want_taken;
    int then_k;
    std::vector<int> then_want;
  };
  const std::vector<Case> cases = {
      {"DGX-1: four singles fill one quad, a 4-GPU pod gets the other",
       fixtures::Dgx1Volta(),
       {},
       4,
       {0, 1, 2, 3},
       4,
       {4, 5, 6, 7}},
      {"DGX-1 with GPU 5 busy: singles go to 4, 6, 7 first, the lower quad stays whole",
       fixtures::Dgx1Volta(),
       {5},
       3,
       {4, 6, 7},
       4,
       {0, 1, 2, 3}},
      {"bridged 4-GPU with GPU 3 busy: the single takes 2, not a bridged GPU",
       fixtures::Bridged4(),
       {3},
       1,
       {2},
       2,
       {0, 1}},
      {"A100 with GPU 6 busy: singles finish NUMA 1 before touching NUMA 0",
       fixtures::DgxNvswitch(12),
       {6},
       3,
       {4, 5, 7},
       4,
       {0, 1, 2, 3}},
  };
  for (const Case& c : cases) {
    const TopologyIndex index(c.node);
    GpuMask free = index.all() & ~MaskOf(c.busy);
    std::vector<int> taken;
    for (int i = 0; i < c.singles; ++i) {
      const std::optional<GpuChoice> got = index.Choose(free, 1);
      ASSERT_TRUE(got.has_value()) << c.name;
      taken.push_back(got->gpus[0]);
      free &= ~got->mask;
    }
    std::sort(taken.begin(), taken.end());
    EXPECT_EQ(taken, c.want_taken) << c.name;
    const std::optional<GpuChoice> then = index.Choose(free, c.then_k);
    ASSERT_TRUE(then.has_value()) << c.name;
    EXPECT_EQ(then->gpus, c.then_want) << c.name;
    EXPECT_EQ(then->bottleneck, LinkClass::kNvlink) << c.name;
  }
}

// Stranded GPUs: free ones with no free partner over the node's best link.
TEST(StrandedTest, TheLastFreeGpuOfAGroupIsStranded) {
  const TopologyIndex bridged(fixtures::Bridged4());    // NVLink pairs {0,1} {2,3}
  const TopologyIndex dgx1(fixtures::Dgx1Volta());      // 0 <-> 1,2,3,4 by NVLink, 5 <-> 1,4,6,7
  const TopologyIndex pcie(fixtures::Pcie2Socket8());   // no NVLink: the best pairs are PCIe
  const TopologyIndex nvswitch(fixtures::DgxNvswitch(12));
  struct Case {
    std::string name;
    const TopologyIndex& index;
    GpuMask free;
    int want;
  };
  const std::vector<Case> cases = {
      {"whole pairs", bridged, 0b1111, 0},
      {"one of each pair", bridged, 0b0101, 2},
      {"a pair and a lone GPU", bridged, 0b0111, 1},
      {"nothing free", bridged, 0, 0},
      {"DGX-1: 0 and 5 share no NVLink", dgx1, 0b100001, 2},
      {"DGX-1: 0 and 1 do", dgx1, 0b11, 0},
      {"NVSwitch: any two are a pair", nvswitch, 0b10000001, 0},
      {"NVSwitch: one alone", nvswitch, 0b1000, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.index.Stranded(c.free), c.want);
  }
  EXPECT_EQ(pcie.Stranded(0xFF), 0) << "on PCIe only nodes, the best PCIe pairs count";
}

TEST(ChooseGpusTest, NotEnoughFreeOrHealthy) {
  std::vector<Gpu> gpus = fixtures::Gpus(4, fixtures::PairSocket4);
  gpus[1].healthy = false;
  const TopologyIndex index(fixtures::MustBuild(NodeTopology::Build(
      gpus, fixtures::MatrixOf(4, [](int, int) { return std::string("NV2"); }))));
  EXPECT_EQ(index.Choose(MaskOf({0, 2}), 3), std::nullopt);
  EXPECT_EQ(index.Choose(MaskOf({0, 1, 2}), 3), std::nullopt) << "GPU 1 is unhealthy";
  EXPECT_EQ(index.Choose(index.all(), 3)->gpus, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(index.BestClass(MaskOf({0, 1}), 2), LinkClass::kUnknown);
}

TEST(ChooseGpusTest, SixteenGpusExactly) {
  const TopologyIndex index(fixtures::Dgx2Like());
  EXPECT_EQ(index.Choose(index.all(), 8)->gpus, Range(0, 7)) << "one board";
  EXPECT_EQ(index.Choose(index.all() & ~MaskOf({0}), 8)->gpus, Range(8, 15));
}

TEST(NodeTopologyTest, BadInputNamesTheCell) {
  using fixtures::Gpus;
  using fixtures::MatrixOf;
  auto nv = [](int, int) { return std::string("NV1"); };
  struct Case {
    std::string name;
    StatusOr<NodeTopology> built;
    std::string want;
  };
  std::vector<Gpu> shuffled = Gpus(2, fixtures::PairSocket4);
  shuffled[1].index = 5;
  fixtures::Matrix asymmetric = MatrixOf(2, nv);
  asymmetric[1][0] = "SYS";
  fixtures::Matrix bad_token = MatrixOf(2, nv);
  bad_token[0][1] = "NVX";
  const std::vector<Case> cases = {
      {"no GPUs", NodeTopology::Build({}, {}), "gpus: 0 GPUs"},
      {"17 GPUs", NodeTopology::Build(Gpus(17, fixtures::HalfSocket8), MatrixOf(17, nv)),
       "want 1..16"},
      {"indices out of order", NodeTopology::Build(shuffled, MatrixOf(2, nv)), "gpus[1].index: 5"},
      {"not square", NodeTopology::Build(Gpus(2, fixtures::PairSocket4), {{"X", "NV1"}}),
       "link: not a 2x2"},
      {"bad token", NodeTopology::Build(Gpus(2, fixtures::PairSocket4), bad_token), "link[0][1]"},
      {"asymmetric", NodeTopology::Build(Gpus(2, fixtures::PairSocket4), asymmetric),
       "must be symmetric"},
      {"NVLink in the PCIe matrix",
       NodeTopology::Build(Gpus(2, fixtures::PairSocket4), MatrixOf(2, nv), MatrixOf(2, nv)),
       "pcie[0][1]"},
      {"negative bandwidth",
       NodeTopology::Build(Gpus(2, fixtures::PairSocket4), MatrixOf(2, nv), {}, {{0, -1}, {-1, 0}}),
       "bw[0][1]"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(c.built.ok()) << c.name;
    EXPECT_EQ(c.built.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(c.built.status().message(), HasSubstr(c.want)) << c.name;
  }
}

TEST(ParseLinkTokenTest, Vocabulary) {
  EXPECT_EQ(ParseLinkToken("NV12")->nvlinks, 12);
  EXPECT_EQ(ParseLinkToken("PXB")->cls, LinkClass::kPcieSwitch);
  EXPECT_TRUE(ParseLinkToken("PXB")->multi_switch);
  EXPECT_EQ(ParseLinkToken("SOC")->cls, LinkClass::kSys);
  EXPECT_EQ(ParseLinkToken("NODE")->cls, LinkClass::kNuma);
  EXPECT_EQ(ParseLinkToken("PHB")->cls, LinkClass::kHostBridge);
  for (std::string_view bad : {"", "NV", "NV0", "nv2", "X", "PIX "}) {
    EXPECT_FALSE(ParseLinkToken(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace muster::topology
