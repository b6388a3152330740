// libFuzzer target: DecodeExtenderArgs, round trip through EncodeExtenderArgs;
// and DecodeExtenderArgsView (the verbs' decoder) answers as it does.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/extender_args_view.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/fuzz/round_trip.h"

namespace kube = muster::kube;

namespace {

// The property of extender_args_view.h: the same value, or the same error.
void CheckViewAgrees(std::string_view input) {
  const muster::StatusOr<kube::ExtenderArgs> want = kube::DecodeExtenderArgs(input);
  const muster::StatusOr<kube::ExtenderArgsView> got = kube::DecodeExtenderArgsView(input);
  if (!want.ok() || !got.ok()) {
    if (!(want.status() == got.status())) {
      kube::fuzz::RoundTripFailure("DecodeExtenderArgsView's error differs", input,
                                   got.status().ToString(), want.status().ToString());
    }
    return;
  }
  std::optional<std::vector<std::string>> names;
  if (got->node_names.has_value()) names.emplace(got->node_names->begin(), got->node_names->end());
  if (!(got->pod == want->pod) || !(got->nodes == want->nodes) || names != want->node_names) {
    kube::fuzz::RoundTripFailure("DecodeExtenderArgsView's value differs", input, "", "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = kube::fuzz::AsText(data, size);
  kube::fuzz::CheckRoundTrip(input, kube::DecodeExtenderArgs, kube::EncodeExtenderArgs);
  CheckViewAgrees(input);
  return 0;
}
