// libFuzzer target: a Node document as the reconciler's Node informer
// decodes it (cluster_gpus.h: DecodeNodeGpuMemory, and the same bytes as a
// NodeList). The informer decodes every node of the cluster, so any input
// must yield a Status or a summary, never a crash. A finding too: a node the
// whole-Node decoder reads (kube::DecodeNode, as the extender reads nodes)
// that the summary refuses, or reads with another identity or memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kube/codec/core_codec.h"
#include "kube/codec/vgpu_codec.h"
#include "reconciler/cluster_gpus.h"

namespace {

namespace kube = muster::kube;
namespace rc = muster::reconciler;

// The summary as it follows from the node decoded whole.
rc::NodeGpuMemory SummaryOf(const muster::Node& node) {
  const auto registration = node.meta.annotations.find(std::string(kube::kAnnotationVgpuRegister));
  const auto label = node.meta.labels.find(std::string(rc::kLabelGpuMemoryMib));
  rc::NodeGpuMemory summary;
  summary.meta.name = node.meta.name;
  summary.meta.uid = node.meta.uid;
  summary.meta.resource_version = node.meta.resource_version;
  summary.largest_mib = rc::LargestGpuMemoryMib(
      registration == node.meta.annotations.end() ? nullptr : &registration->second,
      label == node.meta.labels.end() ? std::string_view() : std::string_view(label->second));
  return summary;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const muster::StatusOr<rc::NodeGpuMemory> summary = rc::DecodeNodeGpuMemory(text);
  if (summary.ok() && summary->largest_mib < 0) std::abort();  // a finding
  if (const muster::StatusOr<muster::Node> node = kube::DecodeNode(text); node.ok()) {
    if (!summary.ok() || !(*summary == SummaryOf(*node))) std::abort();  // a finding
  }
  (void)rc::DecodeNodeGpuMemoryList(text);
  return 0;
}
