// libFuzzer target: DecodeKubernetesPodGroup and DecodeKubernetesPodGroupList
// on the same input (there is no encoder: muster never writes these). What
// decodes is a gang muster can plan: of api kKubernetes, minMember >= 1.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "kube/codec/fuzz/round_trip.h"
#include "kube/codec/workload_codec.h"

namespace kube = muster::kube;

namespace {

void CheckGang(const muster::PodGroup& group) {
  if (group.api != muster::PodGroupApi::kKubernetes || group.spec.min_member < 1) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = kube::fuzz::AsText(data, size);
  if (auto group = kube::DecodeKubernetesPodGroup(input); group.ok()) CheckGang(*group);
  if (auto list = kube::DecodeKubernetesPodGroupList(input); list.ok()) {
    for (const muster::PodGroup& group : list->items) CheckGang(group);
  }
  return 0;
}
