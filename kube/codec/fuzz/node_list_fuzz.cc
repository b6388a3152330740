// libFuzzer target: DecodeNodeList; every item round-trips through EncodeNode.
#include <cstddef>
#include <cstdint>

#include "kube/codec/core_codec.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckListRoundTrip(kube::fuzz::AsText(data, size), kube::DecodeNodeList,
                                 kube::DecodeNode, kube::EncodeNode);
  return 0;
}
