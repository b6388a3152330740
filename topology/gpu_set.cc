#include "topology/gpu_set.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <tuple>
#include <utility>

namespace muster::topology {
namespace {

// Better than any pair: the "weakest link" of a set with no pair in it.
constexpr int8_t kNoPair = static_cast<int8_t>(LinkClass::kNvlink) + 1;

int PcieWeight(const Link& link) {
  switch (link.pcie) {
    case LinkClass::kPcieSwitch:
      return link.multi_switch ? 40 : 50;
    case LinkClass::kHostBridge:
      return 30;
    case LinkClass::kNuma:
      return 20;
    case LinkClass::kSys:
      return 10;
    default:
      return 0;
  }
}

// go-gpuallocator's pair score: 100 per NVLink, plus the PCIe path's.
int PairWeight(const Link& link) { return 100 * link.nvlinks + PcieWeight(link); }

// Measured, else nominal GB/s per direction (relative orders matter, not
// the exact figures).
double PairGbps(const Link& link) {
  if (link.gbps > 0) return link.gbps;
  switch (link.cls) {
    case LinkClass::kNvlink:
      return 25.0 * link.nvlinks;
    case LinkClass::kPcieSwitch:
      return link.multi_switch ? 10 : 12;
    case LinkClass::kHostBridge:
      return 8;
    case LinkClass::kNuma:
      return 6;
    case LinkClass::kSys:
      return 4;
    default:
      return 0;
  }
}

// True when `a` is the set of the lower indices (the first index where they
// differ is in `a`).
bool LowerIndices(GpuMask a, GpuMask b) {
  const GpuMask differ = a ^ b;
  return differ != 0 && (a & (differ & (~differ + 1))) != 0;
}

}  // namespace

TopologyIndex::TopologyIndex(NodeTopology topology, std::vector<int> sizes)
    : topology_(std::move(topology)), sizes_(std::move(sizes)) {
  const int n = topology_.size();
  const size_t masks = size_t{1} << n;
  all_ = static_cast<GpuMask>(masks - 1);
  for (const Gpu& gpu : topology_.gpus()) {
    if (gpu.healthy) healthy_ |= GpuMask{1} << gpu.index;
  }
  InitBestPartners();
  cls_.assign(masks, kNoPair);
  gbps_.assign(masks, std::numeric_limits<float>::infinity());
  weight_.assign(masks, 0);
  numa_.assign(masks, 0);
  for (size_t m = 1; m < masks; ++m) {
    const int i = std::countr_zero(static_cast<GpuMask>(m));
    const size_t rest = m & (m - 1);
    int8_t cls = cls_[rest];
    float gbps = gbps_[rest];
    int32_t weight = weight_[rest];
    for (GpuMask r = static_cast<GpuMask>(rest); r != 0; r &= r - 1) {
      const Link& link = topology_.link(i, std::countr_zero(r));
      cls = std::min(cls, static_cast<int8_t>(link.cls));
      gbps = std::min(gbps, static_cast<float>(PairGbps(link)));
      weight += PairWeight(link);
    }
    cls_[m] = cls;
    gbps_[m] = gbps;
    weight_[m] = weight;
    const int numa = topology_.gpus()[static_cast<size_t>(i)].numa;
    numa_[m] = numa_[rest] | (numa >= 0 && numa < 32 ? uint32_t{1} << numa : 0);
  }
  for (int s : sizes_) {
    std::vector<int8_t> best(masks, 0);
    std::vector<int32_t> best_weight(masks, 0);
    for (size_t m = 1; m < masks; ++m) {
      const int count = std::popcount(static_cast<GpuMask>(m));
      if (count == s) {
        best[m] = cls_[m];
        best_weight[m] = weight_[m];
      } else if (count > s) {
        for (GpuMask r = static_cast<GpuMask>(m); r != 0; r &= r - 1) {
          const size_t without = m & ~(r & (~r + 1));
          best[m] = std::max(best[m], best[without]);
          best_weight[m] = std::max(best_weight[m], best_weight[without]);
        }
      }
    }
    best_.push_back(std::move(best));
    best_weight_.push_back(std::move(best_weight));
  }
}

void TopologyIndex::InitBestPartners() {
  const int n = topology_.size();
  LinkClass best = LinkClass::kUnknown;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) best = std::max(best, topology_.link(i, j).cls);
  }
  best_partners_.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j && topology_.link(i, j).cls == best) {
        best_partners_[static_cast<size_t>(i)] |= GpuMask{1} << j;
      }
    }
  }
}

int TopologyIndex::Stranded(GpuMask free) const {
  free &= healthy_ & all_;
  int stranded = 0;
  for (GpuMask r = free; r != 0; r &= r - 1) {
    const auto i = static_cast<size_t>(std::countr_zero(r));
    if ((best_partners_[i] & free) == 0) ++stranded;
  }
  return stranded;
}

int TopologyIndex::Leftover(GpuMask rest) const {
  int score = 0;
  for (const std::vector<int8_t>& best : best_) score += best[rest];
  return score;
}

int64_t TopologyIndex::LeftoverWeight(GpuMask rest) const {
  int64_t score = 0;
  for (const std::vector<int32_t>& best : best_weight_) score += best[rest];
  return score;
}

std::optional<GpuChoice> TopologyIndex::Choose(GpuMask free, int k) const {
  free &= healthy_ & all_;
  if (k < 1 || std::popcount(free) < k) return std::nullopt;
  std::optional<GpuMask> chosen;
  auto key = [&](GpuMask s) {
    const GpuMask rest = free & ~s;
    return std::tuple(cls_[s], Leftover(rest), gbps_[s], weight_[s], LeftoverWeight(rest),
                      -std::popcount(numa_[s]));
  };
  // Every subset of `free` (free's submasks, largest first), of size k.
  for (GpuMask s = free;; s = (s - 1) & free) {
    if (std::popcount(s) == k) {
      if (!chosen) {
        chosen = s;
      } else {
        const auto a = key(s), b = key(*chosen);
        if (a > b || (a == b && LowerIndices(s, *chosen))) chosen = s;
      }
    }
    if (s == 0) break;
  }
  GpuChoice out{.mask = *chosen,
                .bottleneck = k == 1 ? LinkClass::kNvlink : static_cast<LinkClass>(cls_[*chosen]),
                .gbps = k == 1 ? 0 : gbps_[*chosen],
                .leftover = Leftover(free & ~*chosen),
                .numa_span = std::popcount(numa_[*chosen])};
  for (GpuMask r = *chosen; r != 0; r &= r - 1) out.gpus.push_back(std::countr_zero(r));
  return out;
}

LinkClass TopologyIndex::BestClass(GpuMask free, int k) const {
  free &= healthy_ & all_;
  if (k < 1 || std::popcount(free) < k) return LinkClass::kUnknown;
  if (k == 1) return LinkClass::kNvlink;
  int8_t best = 0;
  for (GpuMask s = free; s != 0; s = (s - 1) & free) {
    if (std::popcount(s) == k) best = std::max(best, cls_[s]);
  }
  return static_cast<LinkClass>(best);
}

}  // namespace muster::topology
