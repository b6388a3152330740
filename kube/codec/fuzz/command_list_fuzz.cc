// libFuzzer target: DecodeCommandList; every item round-trips through EncodeCommand.
#include <cstddef>
#include <cstdint>

#include "kube/codec/bus_codec.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckListRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeCommandList,
                                 kube::DecodeCommand, kube::EncodeCommand);
  return 0;
}
