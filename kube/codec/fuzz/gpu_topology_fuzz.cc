// libFuzzer target: DecodeGpuTopology (the muster.io/gpu-topology node
// annotation), round trip through EncodeGpuTopology; and the profiles file
// (DecodeGpuTopologyProfiles), which must only never crash.
#include <cstddef>
#include <cstdint>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/gpu_topology_codec.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeGpuTopology,
                             kube::EncodeGpuTopology);
  (void)kube::DecodeGpuTopologyProfiles(kube::fuzz::AsText(data, size));
  return 0;
}
