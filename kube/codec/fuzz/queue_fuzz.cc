// libFuzzer target: DecodeQueue, round trip through EncodeQueue.
#include <cstddef>
#include <cstdint>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/volcano_codec.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeQueue, kube::EncodeQueue);
  return 0;
}
