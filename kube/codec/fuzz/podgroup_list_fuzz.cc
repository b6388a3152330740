// libFuzzer target: DecodePodGroupList; every item round-trips through EncodePodGroup.
#include <cstddef>
#include <cstdint>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/volcano_codec.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kube::fuzz::CheckListRoundTrip(kube::fuzz::AsText(data, size), kube::DecodePodGroupList,
                                 kube::DecodePodGroup, kube::EncodePodGroup);
  return 0;
}
