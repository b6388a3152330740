// libFuzzer target: DecodeLease, round trip through EncodeLease (which
// writes the metadata a create needs: name and namespace).
#include <cstddef>
#include <cstdint>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/lease_codec.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = kube::fuzz::AsText(data, size);
  muster::StatusOr<muster::Lease> lease = kube::DecodeLease(input);
  if (!lease.ok()) return 0;
  muster::Lease created = *lease;
  created.meta = muster::ObjectMeta{};
  created.meta.name = lease->meta.name;
  created.meta.namespace_ = lease->meta.namespace_;
  kube::fuzz::CheckValueRoundTrip(created, kube::DecodeLease, kube::EncodeLease, input);
  return 0;
}
