#include "extender/gpu_ledger.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <utility>

#include "kube/codec/gpu_topology_codec.h"
#include "kube/codec/vgpu_codec.h"

namespace muster::extender {
namespace {

const std::string* Annotation(const Node& node, std::string_view key = kAnnotationGpuTopology) {
  auto it = node.meta.annotations.find(std::string(key));
  return it == node.meta.annotations.end() ? nullptr : &it->second;
}

bool SameAnnotation(const Node& a, const Node& b, std::string_view key) {
  const std::string* x = Annotation(a, key);
  const std::string* y = Annotation(b, key);
  return (x == nullptr) == (y == nullptr) && (x == nullptr || *x == *y);
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

// GPU feature discovery's memory label, MiB; 0 when absent or unreadable.
int64_t LabelMemory(const Node& node) {
  const std::string text = Label(node, kLabelGpuMemory);
  int64_t mib = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mib);
  return ec == std::errc() && ptr == text.data() + text.size() && mib > 0 ? mib : 0;
}

// Cards for the whole GPUs of the node's allocatable: indices only.
std::vector<GpuCard> CountedCards(const Node& node) {
  const int64_t whole = node.allocatable.gpus();
  if (whole <= 0 || whole > kMaxNodeGpus) return {};
  return std::vector<GpuCard>(static_cast<size_t>(whole), GpuCard{});
}

GpuCard CardOf(const kube::VgpuRegistration& r) {
  return GpuCard{.uuid = r.uuid,
                 .memory_mib = r.memory_mib,
                 .max_sharers = r.split,
                 .type = r.type,
                 .healthy = r.healthy,
                 .vgpu = true};
}

// Lays the vGPU registration over `cards` (the topology's, by UUID) or, when
// there are none, makes them. The problem when it cannot be used.
std::string ApplyRegistration(const Node& node, std::vector<GpuCard>& cards) {
  const std::string* text = Annotation(node, kube::kAnnotationVgpuRegister);
  if (text == nullptr) return "";
  StatusOr<std::vector<kube::VgpuRegistration>> gpus = kube::DecodeVgpuRegistration(*text);
  if (!gpus.ok()) return gpus.status().message();
  if (cards.empty()) {
    for (const kube::VgpuRegistration& r : *gpus) cards.push_back(CardOf(r));
    return "";
  }
  std::vector<GpuCard> merged = cards;
  for (const kube::VgpuRegistration& r : *gpus) {
    auto it = std::ranges::find(merged, r.uuid, &GpuCard::uuid);
    if (it == merged.end()) {
      return std::string(kube::kAnnotationVgpuRegister) + ": GPU " + r.uuid +
             " is not in the node's " + std::string(kAnnotationGpuTopology);
    }
    GpuCard card = CardOf(r);
    card.healthy = card.healthy && it->healthy;
    *it = std::move(card);
  }
  cards = std::move(merged);
  return "";
}

GpuMask HealthyOf(const std::vector<GpuCard>& cards) {
  GpuMask healthy = 0;
  for (size_t i = 0; i < cards.size(); ++i) {
    if (cards[i].healthy) healthy |= GpuMask{1} << i;
  }
  return healthy;
}

GpuMask HeldIn(const GpuUses& uses) {
  GpuMask held = 0;
  for (size_t i = 0; i < uses.size(); ++i) {
    if (!uses[i].idle()) held |= GpuMask{1} << i;
  }
  return held;
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

GpuMask GpuHolds::Held(const GpuHolding& credit) const {
  if (credit.empty()) return HeldIn(uses);  // the common case: no copy of the uses
  GpuUses rest = uses;
  AccountHolding(rest, credit, -1);
  return HeldIn(rest);
}

bool GpuHolds::AnyShared() const {
  return std::ranges::any_of(uses, [](const GpuCardUse& u) { return u.sharers > 0; });
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
  if (!SameAnnotation(a, b, kAnnotationGpuTopology) ||
      !SameAnnotation(a, b, kube::kAnnotationVgpuRegister)) {
    return false;
  }
  if (Label(a, kLabelGpuMemory) != Label(b, kLabelGpuMemory) ||
      a.allocatable.gpus() != b.allocatable.gpus()) {
    return false;
  }
  return Annotation(a) != nullptr || ProfileKey(a) == ProfileKey(b);
}

NodeGpus GpuTopologies::ResolveTopology(const Node& node) {
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

NodeGpus GpuTopologies::Resolve(const Node& node) {
  NodeGpus gpus = ResolveTopology(node);
  if (gpus.source == GpuTopologySource::kInvalid) return gpus;  // counted, never chosen
  std::vector<GpuCard> cards = gpus.cards ? *gpus.cards : std::vector<GpuCard>();
  gpus.vgpu_problem = ApplyRegistration(node, cards);
  gpus.vgpu = !cards.empty() && cards.front().vgpu;
  if (cards.empty()) cards = CountedCards(node);
  if (const int64_t memory = LabelMemory(node); memory > 0) {
    for (GpuCard& card : cards) {
      if (card.memory_mib == 0) card.memory_mib = memory;
    }
  }
  gpus.healthy = HealthyOf(cards);
  gpus.cards =
      cards.empty() ? nullptr : std::make_shared<const std::vector<GpuCard>>(std::move(cards));
  return gpus;
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
  auto cards = std::make_shared<std::vector<GpuCard>>();
  for (const GpuDevice& gpu : spec.gpus) {
    cards->push_back(GpuCard{.uuid = gpu.uuid, .healthy = gpu.healthy});
  }
  return NodeGpus{.layout = std::move(layout), .source = source, .cards = std::move(cards)};
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

std::string FormatGpuUuids(GpuMask gpus, const std::vector<GpuCard>& cards) {
  std::string out;
  for (GpuMask m = gpus; m != 0; m &= m - 1) {
    const auto i = static_cast<size_t>(std::countr_zero(m));
    if (i >= cards.size() || cards[i].uuid.empty()) return "";
    if (!out.empty()) out += ',';
    out += cards[i].uuid;
  }
  return out;
}

GpuHolding HoldingOf(const std::map<std::string, std::string>& annotations, std::string* problem) {
  if (auto it = annotations.find(std::string(kube::kAnnotationGpuShares));
      it != annotations.end()) {
    StatusOr<std::vector<GpuSlice>> slices = kube::DecodeGpuShares(it->second);
    if (slices.ok()) return GpuHolding{.slices = *std::move(slices)};
    if (problem) *problem = slices.status().message();
    return {};
  }
  auto it = annotations.find(std::string(kAnnotationGpuIds));
  if (it == annotations.end()) return {};
  StatusOr<GpuMask> gpus = ParseGpuIds(it->second);
  if (gpus.ok()) return GpuHolding{.whole = *gpus};
  if (problem) *problem = gpus.status().message();
  return {};
}

int GpusRequested(const Resources& request) {
  const int64_t milli = request.milli_gpus();
  if (milli % kMilliPerGpu != 0) return 0;  // a share of one GPU, not whole GPUs
  const int64_t gpus = milli / kMilliPerGpu;
  return gpus > 0 && gpus <= 16 ? static_cast<int>(gpus) : 0;
}

GpuMask FreeGpus(const NodeGpus& gpus, const GpuHolds& holds, const GpuHolding& own) {
  if (gpus.cards == nullptr) return 0;
  return gpus.Healthy() & ~holds.Held(own);
}

std::vector<int> IdleOrder(const NodeGpus& gpus, GpuMask free) {
  std::vector<int> order;
  if (const topology::TopologyIndex* index = gpus.index(); index != nullptr && free != 0) {
    if (const std::optional<topology::GpuChoice> one = index->Choose(free, 1)) {
      order.push_back(std::countr_zero(one->mask));
    }
  }
  return order;
}

std::optional<std::vector<GpuSlice>> PlaceSharesOn(const NodeGpus& gpus, const GpuHolds& holds,
                                                   std::span<const GpuShareAsk> asks,
                                                   const GpuHolding& own, std::string* why) {
  if (gpus.cards == nullptr) {
    if (why) {
      *why = gpus.source == GpuTopologySource::kInvalid
                 ? "GPUs not told apart here, so not shared: " + gpus.problem
                 : "no GPUs here to share";
    }
    return std::nullopt;
  }
  GpuUses uses = holds.uses;
  AccountHolding(uses, own, -1);
  const std::vector<int> order = IdleOrder(gpus, FreeGpus(gpus, holds, own));
  return PlaceShares(asks, *gpus.cards, uses, gpus.Healthy(), order, why);
}

}  // namespace muster::extender
