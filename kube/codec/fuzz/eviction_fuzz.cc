// libFuzzer target: DecodeEviction, round trip through EncodeEviction.
#include <cstddef>
#include <cstdint>

#include "kube/codec/core_codec.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeEviction,
                             kube::EncodeEviction);
  return 0;
}
