#include "kube/codec/gpu_topology_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using ::testing::HasSubstr;
using namespace codec_test;  // NOLINT: test helpers

// Golden: a DGX-1 V100 as a node agent publishes it, byte for byte what
// muster writes back.
TEST(GpuTopologyCodecTest, GoldenDgx1) {
  const std::string golden = ReadTestdata("gpu_topology_dgx1.json");
  StatusOr<GpuTopologySpec> spec = DecodeGpuTopology(golden);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->gpus.size(), 8u);
  EXPECT_EQ(spec->gpus[5].index, 5);
  EXPECT_EQ(spec->gpus[5].numa, 1);
  EXPECT_EQ(spec->gpus[5].uuid, "GPU-4f6a3b2c-0000-4000-8000-000000000005");
  EXPECT_EQ(spec->gpus[5].pcie_switch, "0000:55:00.0");
  EXPECT_TRUE(spec->gpus[5].healthy);
  EXPECT_EQ(spec->link[0][3], "NV2");
  EXPECT_EQ(spec->pcie[0][1], "PIX");
  EXPECT_DOUBLE_EQ(spec->bandwidth[0][1], 48.25);
  EXPECT_EQ(EncodeGpuTopology(*spec), Compact(Parse(golden)));
  ExpectRoundTrip<GpuTopologySpec>(golden, DecodeGpuTopology, EncodeGpuTopology);
}

// Golden: the profiles file an admin mounts from the ConfigMap
// muster-gpu-topology-profiles (docs/topology.md).
TEST(GpuTopologyCodecTest, GoldenProfiles) {
  StatusOr<std::map<std::string, GpuTopologySpec, std::less<>>> profiles =
      DecodeGpuTopologyProfiles(ReadTestdata("gpu_topology_profiles.json"));
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  ASSERT_EQ(profiles->size(), 2u);
  const GpuTopologySpec& a100 = profiles->at("NVIDIA-A100-SXM4-80GB/8");
  EXPECT_EQ(a100.gpus.size(), 8u);
  EXPECT_EQ(a100.gpus[6].numa, 1);
  EXPECT_EQ(a100.link[2][7], "NV12");
  EXPECT_EQ(profiles->at("NVIDIA-L40S/4").link[1][2], "SYS");
  StatusOr<std::map<std::string, GpuTopologySpec, std::less<>>> bad =
      DecodeGpuTopologyProfiles(R"({"L4/2": {"gpus": [{"i": "0"}]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(R"(["L4/2"].gpus[0].i: expected an integer)"));
}

TEST(GpuTopologyCodecTest, OptionalPartsMayBeAbsent) {
  StatusOr<GpuTopologySpec> spec = DecodeGpuTopology(
      R"({"gpus":[{"i":0},{"i":1,"ok":false}],"link":[["X","NV4"],["NV4","X"]]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->version, 1);
  EXPECT_EQ(spec->gpus[0].numa, -1);
  EXPECT_TRUE(spec->gpus[0].healthy);
  EXPECT_FALSE(spec->gpus[1].healthy);
  EXPECT_TRUE(spec->pcie.empty());
  EXPECT_TRUE(spec->bandwidth.empty());
}

TEST(GpuTopologyCodecTest, BadShapesNameThePath) {
  const std::string golden = ReadTestdata("gpu_topology_dgx1.json");
  struct Case {
    const char* pointer;
    const char* value;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"/v", R"("1")", "v: expected"},
      {"/gpus", "{}", "gpus: expected an array"},
      {"/gpus/2/numa", R"("0")", "gpus[2].numa: expected"},
      {"/gpus/3/ok", "1", "gpus[3].ok: expected"},
      {"/link/1", R"("NV1")", "link[1]: expected an array"},
      {"/link/1/4", "4", "link[1][4]: expected a string"},
      {"/pcie/0/0", "null", "pcie[0][0]: expected a string"},
      {"/bw/7/6", R"("fast")", "bw[7][6]: expected a number"},
      {"/bw/1/5", "1.1e102", "bw[1][5]: expected GB/s in [0, 1e6]"},
      {"/bw/1/5", "-3", "bw[1][5]: expected GB/s in [0, 1e6]"},
  };
  for (const Case& c : cases) {
    StatusOr<GpuTopologySpec> spec = DecodeGpuTopology(WithValueAt(golden, c.pointer, c.value));
    ASSERT_FALSE(spec.ok()) << c.pointer;
    EXPECT_THAT(spec.status().message(), HasSubstr(c.want)) << c.pointer;
    EXPECT_THAT(spec.status().message(), HasSubstr("muster.io/gpu-topology")) << c.pointer;
  }
  EXPECT_FALSE(DecodeGpuTopology("[1,2]").ok());
  EXPECT_FALSE(DecodeGpuTopology("{\"gpus\":").ok());
}

}  // namespace
}  // namespace muster::kube
