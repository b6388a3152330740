// libFuzzer target: DecodeEventList; every item round-trips through EncodeEvent.
#include <cstddef>
#include <cstdint>

#include "kube/codec/core_codec.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckListRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeEventList,
                                 kube::DecodeEvent, kube::EncodeEvent);
  return 0;
}
