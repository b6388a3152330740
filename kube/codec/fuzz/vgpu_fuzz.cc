// libFuzzer target: the GPU-sharing annotations a node or a pod carries -
// Volcano's vGPU registration and device lists (DecodeVgpuRegistration,
// DecodeVgpuDevices) and muster.io/gpu-shares (DecodeGpuShares): a node
// agent or a user writes them, so they must never crash a decoder, and
// whatever decodes must encode back to text that decodes to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/vgpu_codec.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = kube::fuzz::AsText(data, size);
  if (auto gpus = kube::DecodeVgpuRegistration(text); gpus.ok()) {
    auto again = kube::DecodeVgpuRegistration(kube::EncodeVgpuRegistration(*gpus));
    if (!again.ok() || !(*again == *gpus)) std::abort();
  }
  if (auto devices = kube::DecodeVgpuDevices(text); devices.ok()) {
    auto again = kube::DecodeVgpuDevices(kube::EncodeVgpuDevices(*devices));
    if (!again.ok() || !(*again == *devices)) std::abort();
  }
  if (auto slices = kube::DecodeGpuShares(text); slices.ok()) {
    int containers = 0;
    for (const auto& s : *slices)
      containers = s.container + 1 > containers ? s.container + 1 : containers;
    auto again = kube::DecodeGpuShares(kube::EncodeGpuShares(*slices, containers));
    if (!again.ok() || !(*again == *slices)) std::abort();
  }
  return 0;
}
