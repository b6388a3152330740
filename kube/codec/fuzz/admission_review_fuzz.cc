// libFuzzer target: DecodeAdmissionReview (muster's pod webhook reads every
// body the API server sends it), and the reply and patch written for it.
#include <cstddef>
#include <cstdint>

#include "kube/codec/admission_codec.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = kube::fuzz::AsText(data, size);
  muster::StatusOr<kube::AdmissionRequest> request = kube::DecodeAdmissionReview(input);
  if (!request.ok()) return 0;
  (void)kube::EncodeAdmissionReview({.uid = request->uid});
  if (request->pod.has_value())
    (void)kube::EncodeSchedulingGatesPatch(request->pod->spec.scheduling_gates);
  return 0;
}
