// libFuzzer target: DecodeHostPriorityList, round trip through EncodeHostPriorityList.
#include <cstddef>
#include <cstdint>

#include "kube/codec/extender_types.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeHostPriorityList,
                             kube::EncodeHostPriorityList);
  return 0;
}
