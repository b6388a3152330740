#include "kube/codec/vgpu_codec.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using codec_test::ReadTestdata;

// The device plugin's registration of a node with two V100s, the second
// unhealthy (testdata/vgpu_register.txt, in EncodeNodeDevices' format).
TEST(VgpuRegistrationTest, DecodesTheDevicePluginsAnnotationAndWritesItBack) {
  const std::string golden = ReadTestdata("vgpu_register.txt");
  StatusOr<std::vector<VgpuRegistration>> gpus = DecodeVgpuRegistration(golden);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0], (VgpuRegistration{.uuid = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448",
                                          .split = 10,
                                          .memory_mib = 32768,
                                          .type = "NVIDIA-Tesla V100-PCIE-32GB",
                                          .healthy = true,
                                          .mode = "hami-core"}));
  EXPECT_FALSE((*gpus)[1].healthy);
  EXPECT_EQ(EncodeVgpuRegistration(*gpus), golden);
}

TEST(VgpuRegistrationTest, RefusalsNameTheRecordAndField) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "volcano.sh/node-vgpu-register: value: no GPU registered"},
      {"GPU-a,10,1024,NVIDIA,true:",
       "volcano.sh/node-vgpu-register: record 0: expected UUID,count,memory,type,health,mode, got "
       "5 fields"},
      {"GPU-a,10,1024,NVIDIA,true,:GPU-b,ten,1024,NVIDIA,true,:",
       "volcano.sh/node-vgpu-register: record 1: count \"ten\" is not a count"},
      {"GPU-a,10,-5,NVIDIA,true,:",
       "volcano.sh/node-vgpu-register: record 0: memory \"-5\" is not a number of MiB"},
      {"GPU-a,10,1024,NVIDIA,yes,:",
       "volcano.sh/node-vgpu-register: record 0: health \"yes\" is not true or false"},
      {",10,1024,NVIDIA,true,:", "volcano.sh/node-vgpu-register: record 0: empty UUID"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    StatusOr<std::vector<VgpuRegistration>> got = DecodeVgpuRegistration(c.text);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), c.message);
  }
}

// A pod of three containers: two vGPUs on distinct GPUs, none, one vGPU
// (testdata/vgpu_devices.txt, in EncodePodDevices' format).
TEST(VgpuDevicesTest, OneSegmentPerContainerEachDeviceEndingInAColon) {
  const std::string golden = ReadTestdata("vgpu_devices.txt");
  StatusOr<VgpuPodDevices> pod = DecodeVgpuDevices(golden);
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_EQ(pod->size(), 3u);
  EXPECT_EQ((*pod)[0].size(), 2u);
  EXPECT_TRUE((*pod)[1].empty());
  EXPECT_EQ((*pod)[2], (std::vector<VgpuDevice>{{.uuid = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448",
                                                 .memory_mib = 4096,
                                                 .cores = 0}}));
  EXPECT_EQ(EncodeVgpuDevices(*pod), golden);
  EXPECT_FALSE(DecodeVgpuDevices("GPU-a,NVIDIA,many,0:").ok());
}

TEST(GpuSharesTest, RoundTripsPerContainer) {
  const std::vector<GpuSlice> slices = {
      {.gpu = 1, .container = 0, .compute = 300, .memory_mib = 8000},
      {.gpu = 2, .container = 0, .compute = 300, .memory_mib = 8000},
      {.gpu = 1, .container = 2, .compute = 0, .memory_mib = 4096}};
  const std::string text = EncodeGpuShares(slices, 3);
  EXPECT_EQ(text, "1:300:8000,2:300:8000;;1:0:4096");
  StatusOr<std::vector<GpuSlice>> back = DecodeGpuShares(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, slices);
  // A fraction is the pod's, one segment.
  EXPECT_EQ(EncodeGpuShares({{.gpu = 3, .container = -1, .compute = 500, .memory_mib = 40960}}, 0),
            "3:500:40960");
  EXPECT_EQ(DecodeGpuShares("3:500").status().message(),
            "muster.io/gpu-shares: \"3:500\": expected <gpu>:<compute thousandths>:<memory MiB>");
  EXPECT_EQ(DecodeGpuShares("16:500:0").status().message(),
            "muster.io/gpu-shares: \"16:500:0\": out of range");
}

}  // namespace
}  // namespace muster::kube
