#include "extender/gpu_ledger.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <utility>

#include "kube/codec/gpu_topology_codec.h"

namespace muster::extender {
namespace {

const std::string* Annotation(const Node& node) {
  auto it = node.meta.annotations.find(std::string(kAnnotationGpuTopology));
  return it == node.meta.annotations.end() ? nullptr : &it->second;
}

std::string Label(const Node& node, std::string_view key) {
  auto it = node.meta.labels.find(std::string(key));
  return it == node.meta.labels.end() ? std::string() : it->second;
}

std::string ProfileKey(const Node& node) {
  const std::string product = Label(node, kLabelGpuProduct);
  const std::string count = Label(node, kLabelGpuCount);
  if (product.empty() || count.empty()) return "";
  return product + "/" + count;
}

// The key under which nodes share a TopologyIndex: everything the index is
// built from, UUIDs aside (every node has its own).
std::string ShapeKey(GpuTopologySpec spec) {
  for (GpuDevice& gpu : spec.gpus) gpu.uuid.clear();
  return kube::EncodeGpuTopology(spec);
}

NodeGpus Invalid(std::string problem) {
  return NodeGpus{.source = GpuTopologySource::kInvalid, .problem = std::move(problem)};
}

}  // namespace

std::optional<gang::GpuPick> TopologyGpuLayout::Pick(uint32_t free, int k) const {
  const std::optional<topology::GpuChoice> choice = index_.Choose(free, k);
  if (!choice) return std::nullopt;
  return gang::GpuPick{.gpus = choice->mask,
                       .link = static_cast<int>(choice->bottleneck),
                       .damage = index_.Stranded(free & ~choice->mask) - index_.Stranded(free)};
}

int TopologyGpuLayout::BestLink(int k) const {
  return static_cast<int>(index_.BestClass(index_.healthy(), k));
}

void GpuHolds::Add(GpuMask gpus, int sign) {
  for (GpuMask m = gpus; m != 0; m &= m - 1) {
    const int i = std::countr_zero(m);
    if (i >= static_cast<int>(count.size())) break;
    const int next = count[static_cast<size_t>(i)] + sign;
    count[static_cast<size_t>(i)] = static_cast<uint8_t>(std::clamp(next, 0, 255));
  }
}

GpuMask GpuHolds::Held(GpuMask credit) const {
  GpuMask held = 0;
  for (size_t i = 0; i < count.size(); ++i) {
    const int own = (credit >> i) & 1U;
    if (count[i] > own) held |= GpuMask{1} << i;
  }
  return held;
}

StatusOr<GpuProfiles> ParseGpuProfiles(std::string_view json) {
  StatusOr<GpuProfiles> profiles = kube::DecodeGpuTopologyProfiles(json);
  if (!profiles.ok()) return profiles.status();
  for (const auto& [key, spec] : *profiles) {
    if (StatusOr<topology::NodeTopology> built = topology::NodeTopology::Build(spec); !built.ok()) {
      return built.status().Annotate("GPU topology profile \"" + key + "\"");
    }
  }
  return profiles;
}

GpuTopologies::GpuTopologies(GpuProfiles profiles) : profiles_(std::move(profiles)) {}

bool GpuTopologies::SameInputs(const Node& a, const Node& b) {
  const std::string* x = Annotation(a);
  const std::string* y = Annotation(b);
  if ((x == nullptr) != (y == nullptr) || (x != nullptr && *x != *y)) return false;
  return x != nullptr || ProfileKey(a) == ProfileKey(b);
}

NodeGpus GpuTopologies::Resolve(const Node& node) {
  if (const std::string* annotation = Annotation(node)) {
    StatusOr<GpuTopologySpec> spec = kube::DecodeGpuTopology(*annotation);
    if (!spec.ok()) return Invalid(spec.status().message());
    return FromSpec(*spec, GpuTopologySource::kAnnotation);
  }
  const std::string key = ProfileKey(node);
  if (auto it = profiles_.find(key); !key.empty() && it != profiles_.end()) {
    return FromSpec(it->second, GpuTopologySource::kProfile);
  }
  return NodeGpus{};
}

NodeGpus GpuTopologies::FromSpec(const GpuTopologySpec& spec, GpuTopologySource source) {
  const std::string shape = ShapeKey(spec);
  std::shared_ptr<const TopologyGpuLayout> layout;
  if (auto it = interned_.find(shape); it != interned_.end()) layout = it->second.lock();
  if (layout == nullptr) {
    StatusOr<topology::NodeTopology> built = topology::NodeTopology::Build(spec);
    if (!built.ok()) {
      return Invalid(std::string(kAnnotationGpuTopology) + ": " + built.status().message());
    }
    layout = std::make_shared<const TopologyGpuLayout>(*std::move(built));
    std::erase_if(interned_, [](const auto& entry) { return entry.second.expired(); });
    interned_[shape] = layout;
  }
  auto uuids = std::make_shared<std::vector<std::string>>();
  for (const GpuDevice& gpu : spec.gpus) uuids->push_back(gpu.uuid);
  return NodeGpus{.layout = std::move(layout), .uuids = std::move(uuids), .source = source};
}

StatusOr<GpuMask> ParseGpuIds(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return InvalidArgumentError(std::string(kAnnotationGpuIds) + ": \"" + std::string(text) +
                                "\": " + std::string(why));
  };
  GpuMask mask = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    int index = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), index);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      return bad("expected comma-separated GPU indices");
    }
    if (index < 0 || index > 15) return bad("a GPU index must be 0..15");
    const GpuMask bit = GpuMask{1} << index;
    if ((mask & bit) != 0) return bad("GPU " + std::to_string(index) + " named twice");
    mask |= bit;
    start = end + 1;
  }
  return mask;
}

std::string FormatGpuIds(GpuMask gpus) {
  std::string out;
  for (GpuMask m = gpus; m != 0; m &= m - 1) {
    if (!out.empty()) out += ',';
    out += std::to_string(std::countr_zero(m));
  }
  return out;
}

std::string FormatGpuUuids(GpuMask gpus, const std::vector<std::string>& uuids) {
  std::string out;
  for (GpuMask m = gpus; m != 0; m &= m - 1) {
    const auto i = static_cast<size_t>(std::countr_zero(m));
    if (i >= uuids.size() || uuids[i].empty()) return "";
    if (!out.empty()) out += ',';
    out += uuids[i];
  }
  return out;
}

int GpusRequested(const Resources& request) {
  const int64_t gpus = request.gpus();
  return gpus > 0 && gpus <= 16 ? static_cast<int>(gpus) : 0;
}

GpuMask FreeGpus(const NodeGpus& gpus, const GpuHolds& holds, GpuMask own) {
  if (gpus.layout == nullptr) return 0;
  return gpus.layout->index().healthy() & ~holds.Held(own);
}

}  // namespace muster::extender
