#include "reconciler/cluster_gpus.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "kube/client/resource_ref.h"
#include "kube/codec/json.h"
#include "kube/codec/vgpu_codec.h"

namespace muster::reconciler {
namespace {

// The two node fields read, before they become one number.
struct RawNodeGpus {
  ObjectMeta meta;
  std::string registration;
  std::string memory_label;
};

void DecodeMetadataFrom(kube::DecodeContext& ctx, const kube::JsonValue& v, RawNodeGpus* out) {
  kube::ReadString(ctx, v, "name", &out->meta.name);
  kube::ReadString(ctx, v, "uid", &out->meta.uid);
  kube::ReadString(ctx, v, "resourceVersion", &out->meta.resource_version);
  kube::ReadObject(ctx, v, "labels", out,
                   [](kube::DecodeContext& c, const kube::JsonValue& labels, RawNodeGpus* o) {
                     kube::ReadString(c, labels, kLabelGpuMemoryMib, &o->memory_label);
                   });
  kube::ReadObject(ctx, v, "annotations", out,
                   [](kube::DecodeContext& c, const kube::JsonValue& annotations, RawNodeGpus* o) {
                     kube::ReadString(c, annotations, kube::kAnnotationVgpuRegister,
                                      &o->registration);
                   });
}

void DecodeNodeGpuMemoryFrom(kube::DecodeContext& ctx, const kube::JsonValue& v,
                             NodeGpuMemory* out) {
  if (!v.IsObject()) {
    kube::ExpectObject(ctx, v);
    return;
  }
  RawNodeGpus raw;
  kube::ReadObject(ctx, v, "metadata", &raw, DecodeMetadataFrom);
  out->meta = std::move(raw.meta);
  out->largest_mib =
      LargestGpuMemoryMib(raw.registration.empty() ? nullptr : &raw.registration, raw.memory_label);
}

}  // namespace

int64_t LargestGpuMemoryMib(const std::string* vgpu_registration, std::string_view memory_label) {
  int64_t largest = 0;
  if (vgpu_registration != nullptr) {
    StatusOr<std::vector<kube::VgpuRegistration>> gpus =
        kube::DecodeVgpuRegistration(*vgpu_registration);
    if (gpus.ok()) {
      for (const kube::VgpuRegistration& gpu : *gpus) largest = std::max(largest, gpu.memory_mib);
    }
  }
  int64_t label = 0;
  const auto [end, ec] =
      std::from_chars(memory_label.data(), memory_label.data() + memory_label.size(), label);
  if (ec == std::errc() && end == memory_label.data() + memory_label.size()) {
    largest = std::max(largest, label);
  }
  return largest;
}

StatusOr<NodeGpuMemory> DecodeNodeGpuMemory(std::string_view json) {
  return kube::DecodeDocument<NodeGpuMemory>(json, "decode Node", DecodeNodeGpuMemoryFrom);
}

StatusOr<kube::ObjectList<NodeGpuMemory>> DecodeNodeGpuMemoryList(std::string_view json) {
  return kube::DecodeDocument<kube::ObjectList<NodeGpuMemory>>(
      json, "decode NodeList",
      [](kube::DecodeContext& ctx, const kube::JsonValue& v, kube::ObjectList<NodeGpuMemory>* out) {
        kube::DecodeListFrom(ctx, v, out, DecodeNodeGpuMemoryFrom);
      });
}

ClusterGpuMemory::ClusterGpuMemory(kube::Client* client)
    : nodes_(client, kube::ResourceRef::Core("nodes"), DecodeNodeGpuMemory,
             DecodeNodeGpuMemoryList) {
  nodes_.AddHandlers({.on_add = [this](const NodeGpuMemory& node) { Count(node, +1); },
                      .on_update =
                          [this](const NodeGpuMemory& before, const NodeGpuMemory& after) {
                            Count(before, -1);
                            Count(after, +1);
                          },
                      .on_delete = [this](const NodeGpuMemory& node) { Count(node, -1); }});
}

void ClusterGpuMemory::Count(const NodeGpuMemory& node, int delta) {
  if (node.largest_mib <= 0) return;
  base::MutexLock lock(&mu_);
  int64_t& nodes = nodes_by_mib_[node.largest_mib];
  nodes += delta;
  if (nodes <= 0) nodes_by_mib_.erase(node.largest_mib);
}

int64_t ClusterGpuMemory::LargestMib() const {
  base::MutexLock lock(&mu_);
  return nodes_by_mib_.empty() ? 0 : nodes_by_mib_.rbegin()->first;
}

}  // namespace muster::reconciler
