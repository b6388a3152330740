#include "model/gpu_share.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "model/pod.h"
#include "model/quantity.h"

namespace muster {
namespace {

std::string Decimal(int64_t milli) { return FormatResourceQuantity(kNvidiaGpu, milli); }

// A container's amount of `resource`: its limit, else its request (Volcano
// reads limits first); nullopt when it names neither.
std::optional<int64_t> ContainerAmount(const Container& c, std::string_view resource) {
  if (c.resources.limits.Has(resource)) return c.resources.limits.Get(resource);
  if (c.resources.requests.Has(resource)) return c.resources.requests.Get(resource);
  return std::nullopt;
}

std::string ContainerPath(size_t i, std::string_view resource) {
  return "spec.containers[" + std::to_string(i) + "].resources.limits[" + std::string(resource) +
         "]";
}

// The vGPU ask of container i; nullopt when it asks no vGPU.
StatusOr<std::optional<GpuShareAsk>> VgpuAskOf(const Container& c, size_t i) {
  const std::optional<int64_t> number = ContainerAmount(c, kVgpuNumber);
  const std::optional<int64_t> memory = ContainerAmount(c, kVgpuMemory);
  const std::optional<int64_t> percent = ContainerAmount(c, kVgpuMemoryPercentage);
  const std::optional<int64_t> cores = ContainerAmount(c, kVgpuCores);
  if (!number && !memory) {
    if (percent || cores) {
      return InvalidArgumentError(ContainerPath(i, percent ? kVgpuMemoryPercentage : kVgpuCores) +
                                  ": a vGPU share needs " + std::string(kVgpuNumber) + " or " +
                                  std::string(kVgpuMemory));
    }
    return std::optional<GpuShareAsk>();
  }
  GpuShareAsk ask{.form = GpuShareAsk::Form::kVgpu, .container = static_cast<int>(i)};
  ask.gpus = static_cast<int32_t>(number.value_or(1));
  if (ask.gpus < 1 || ask.gpus > kMaxNodeGpus) {
    return InvalidArgumentError(ContainerPath(i, kVgpuNumber) + ": " + std::to_string(ask.gpus) +
                                " vGPUs: must be 1.." + std::to_string(kMaxNodeGpus) +
                                " (each on its own GPU)");
  }
  if (cores && *cores > 100) {
    return InvalidArgumentError(ContainerPath(i, kVgpuCores) + ": " + std::to_string(*cores) +
                                " percent of a GPU's compute: at most 100");
  }
  ask.compute = static_cast<int32_t>(cores.value_or(0)) * 10;
  if (memory && *memory > 0) {
    ask.memory_mib = *memory;
  } else if (percent && *percent > 0) {
    if (*percent > 100) {
      return InvalidArgumentError(ContainerPath(i, kVgpuMemoryPercentage) + ": " +
                                  std::to_string(*percent) +
                                  " percent of a GPU's memory: at most 100");
    }
    ask.memory_permille = static_cast<int32_t>(*percent) * 10;
  } else {
    ask.memory_permille = 1000;  // neither given: all of the GPU's memory (Volcano)
  }
  return std::optional<GpuShareAsk>(ask);
}

// The fraction annotation's ask; nullopt when the pod has none.
StatusOr<std::optional<GpuShareAsk>> FractionAskOf(const Pod& pod) {
  auto it = pod.meta.annotations.find(std::string(kAnnotationGpuFraction));
  if (it == pod.meta.annotations.end()) return std::optional<GpuShareAsk>();
  StatusOr<int32_t> milli = ParseGpuFraction(it->second);
  if (!milli.ok()) {
    return milli.status().Annotate("metadata.annotations[" + std::string(kAnnotationGpuFraction) +
                                   "]");
  }
  return std::optional<GpuShareAsk>(GpuShareAsk{
      .form = GpuShareAsk::Form::kFraction, .compute = *milli, .memory_permille = *milli});
}

// Per GPU, what an ask takes of `card` (memory resolved against its size);
// why not when the card cannot give it at all.
struct Take {
  int32_t compute = 0;
  int64_t memory_mib = 0;
};
std::optional<Take> TakeOf(const GpuShareAsk& ask, const GpuCard& card, std::string* why) {
  Take take{.compute = ask.compute, .memory_mib = ask.memory_mib};
  if (take.memory_mib == 0 && ask.memory_permille > 0) {
    if (card.memory_mib > 0) {
      take.memory_mib = card.memory_mib * ask.memory_permille / 1000;
    } else if (ask.form == GpuShareAsk::Form::kVgpu) {
      if (why) *why = "GPU memory unknown here (no vGPU registration): cannot give a share of it";
      return std::nullopt;
    }
  }
  if (take.memory_mib > 0 && card.memory_mib == 0) {
    if (why)
      *why = "GPU memory unknown here: cannot give " + std::to_string(take.memory_mib) + " MiB";
    return std::nullopt;
  }
  return take;
}

// Whether `card`, used as `use`, takes `take` of a share.
bool Fits(const GpuCard& card, const GpuCardUse& use, const Take& take) {
  if (!card.healthy || use.whole > 0) return false;
  if (card.max_sharers > 0 && use.sharers >= card.max_sharers) return false;
  if (use.compute + take.compute > kGpuCompute) return false;
  if (take.compute == kGpuCompute && use.sharers > 0) return false;  // the GPU alone
  if (take.compute == 0 && use.compute >= kGpuCompute) return false;
  return card.memory_mib == 0 || use.memory_mib + take.memory_mib <= card.memory_mib;
}

// What is left of a GPU after `take`: lower is a better fill.
std::pair<int64_t, int64_t> LeftAfter(const GpuCard& card, const GpuCardUse& use,
                                      const Take& take) {
  return {kGpuCompute - use.compute - take.compute,
          card.memory_mib == 0 ? 0 : card.memory_mib - use.memory_mib - take.memory_mib};
}

// Why no GPU took the ask: the largest share any usable GPU has left.
std::string Shortfall(const GpuShareAsk& ask, std::span<const GpuCard> cards, const GpuUses& uses,
                      uint32_t usable) {
  int32_t compute = -1;
  int64_t memory = -1;
  for (size_t g = 0; g < cards.size(); ++g) {
    if (((usable >> g) & 1U) == 0 || !cards[g].healthy || uses[g].whole > 0) continue;
    if (cards[g].max_sharers > 0 && uses[g].sharers >= cards[g].max_sharers) continue;
    compute = std::max(compute, kGpuCompute - uses[g].compute);
    if (cards[g].memory_mib > 0)
      memory = std::max(memory, cards[g].memory_mib - uses[g].memory_mib);
  }
  std::string out = "needs " + DescribeShareAsk(ask) + ": ";
  if (compute < 0)
    return out + "no GPU here can be shared (all held whole or at their sharer limit)";
  if (ask.memory_mib > 0 && memory >= 0 && memory < ask.memory_mib) {
    return out + "most GPU memory free here is " + std::to_string(memory) + " MiB";
  }
  return out + "largest free share here is " + Decimal(compute);
}

}  // namespace

int32_t GpuFractionOf(const Pod& pod) {
  StatusOr<std::optional<GpuShareAsk>> fraction = FractionAskOf(pod);
  return fraction.ok() && fraction->has_value() ? (*fraction)->compute : 0;
}

int32_t GpuDemand::SharedGpuCount() const {
  int32_t most = 0;
  for (const GpuShareAsk& ask : shares) most = std::max(most, ask.gpus);
  return most;
}

StatusOr<int32_t> ParseGpuFraction(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return InvalidArgumentError("\"" + std::string(text) + "\": " + std::string(why));
  };
  StatusOr<int64_t> milli = ParseResourceQuantity(kNvidiaGpu, text);
  if (!milli.ok()) return bad("not a number of GPUs");
  if (*milli <= 0 || *milli >= kGpuCompute) {
    return bad("a share of one GPU must be above 0 and below 1");
  }
  // Two decimals at most: "0.333" would ask 333/1000 of a GPU, which no
  // other share completes; sharing platforms take percent steps.
  if (*milli % 10 != 0 || text.find_first_of("eEkKMGTPnu") != std::string_view::npos) {
    return bad("a share of one GPU has at most two decimals (0.01 steps)");
  }
  return static_cast<int32_t>(*milli);
}

Status CheckGpuAmount(int64_t milli) {
  if (milli < 0) return InvalidArgumentError(Decimal(milli) + " nvidia.com/gpu is negative");
  if (milli % kGpuCompute == 0) return Status::Ok();
  if (milli > kGpuCompute) {
    return InvalidArgumentError(Decimal(milli) +
                                " nvidia.com/gpu: a request above one GPU must be whole");
  }
  if (milli % 10 != 0) {
    return InvalidArgumentError(Decimal(milli) +
                                " nvidia.com/gpu: a share of one GPU has at most two decimals");
  }
  return Status::Ok();
}

StatusOr<GpuDemand> GpuDemandOf(const Pod& pod) {
  GpuDemand demand;
  for (size_t i = 0; i < pod.spec.containers.size(); ++i) {
    const Container& c = pod.spec.containers[i];
    StatusOr<std::optional<GpuShareAsk>> vgpu = VgpuAskOf(c, i);
    if (!vgpu.ok()) return vgpu.status();
    const int64_t whole =
        std::max(c.resources.limits.milli_gpus(), c.resources.requests.milli_gpus());
    if (whole > 0 && vgpu->has_value()) {
      return InvalidArgumentError(ContainerPath(i, kNvidiaGpu) +
                                  ": a container asks whole GPUs or vGPU shares, not both");
    }
    if (vgpu->has_value()) demand.shares.push_back(**vgpu);
  }
  const int64_t whole_milli = pod.ContainerRequest().milli_gpus();
  StatusOr<std::optional<GpuShareAsk>> fraction = FractionAskOf(pod);
  if (!fraction.ok()) return fraction.status();
  if (whole_milli % kGpuCompute != 0) {
    return InvalidArgumentError("spec.containers: " + Decimal(whole_milli) +
                                " nvidia.com/gpu: a pod asks whole GPUs (a share of one GPU goes "
                                "in the annotation " +
                                std::string(kAnnotationGpuFraction) + ")");
  }
  demand.whole = static_cast<int32_t>(std::min<int64_t>(whole_milli / kGpuCompute, 1 << 20));
  if (fraction->has_value()) {
    if (demand.whole > 0 || demand.shared()) {
      return InvalidArgumentError(
          "metadata.annotations[" + std::string(kAnnotationGpuFraction) +
          "]: a pod asks a share of one GPU, whole GPUs or vGPUs, not two of them");
    }
    demand.shares.push_back(**fraction);
  }
  if (demand.whole > 0 && demand.shared()) {
    return InvalidArgumentError("spec.containers: a pod asks whole GPUs or vGPU shares, not both");
  }
  return demand;
}

uint32_t GpuHolding::Gpus() const {
  uint32_t gpus = whole;
  for (const GpuSlice& s : slices) gpus |= uint32_t{1} << s.gpu;
  return gpus;
}

void AccountHolding(GpuUses& uses, const GpuHolding& holding, int sign) {
  for (uint32_t m = holding.whole; m != 0; m &= m - 1) {
    const int g = std::countr_zero(m);
    if (g >= kMaxNodeGpus) break;
    GpuCardUse& u = uses[static_cast<size_t>(g)];
    u.whole = static_cast<int16_t>(std::clamp(u.whole + sign, 0, 32767));
  }
  for (const GpuSlice& s : holding.slices) {
    if (s.gpu < 0 || s.gpu >= kMaxNodeGpus) continue;
    GpuCardUse& u = uses[static_cast<size_t>(s.gpu)];
    u.sharers = static_cast<int16_t>(std::clamp(u.sharers + sign, 0, 32767));
    u.compute = std::max(0, u.compute + sign * s.compute);
    u.memory_mib = static_cast<int32_t>(std::clamp<int64_t>(u.memory_mib + sign * s.memory_mib, 0,
                                                            std::numeric_limits<int32_t>::max()));
  }
}

std::optional<std::vector<GpuSlice>> PlaceShares(std::span<const GpuShareAsk> asks,
                                                 std::span<const GpuCard> cards,
                                                 const GpuUses& uses, uint32_t usable,
                                                 std::span<const int> idle_order,
                                                 std::string* why) {
  const size_t n = std::min<size_t>(cards.size(), kMaxNodeGpus);
  // Idle GPUs by preference: idle_order first, then the rest by index.
  std::vector<int> rank(n, static_cast<int>(n) + kMaxNodeGpus);
  for (size_t r = 0; r < idle_order.size(); ++r) {
    const int g = idle_order[r];
    if (g >= 0 && static_cast<size_t>(g) < n &&
        rank[static_cast<size_t>(g)] > static_cast<int>(r)) {
      rank[static_cast<size_t>(g)] = static_cast<int>(r);
    }
  }
  for (size_t g = 0; g < n; ++g) {
    if (rank[g] >= static_cast<int>(n) + kMaxNodeGpus) rank[g] = kMaxNodeGpus + static_cast<int>(g);
  }
  GpuUses work = uses;
  std::vector<GpuSlice> slices;
  for (const GpuShareAsk& ask : asks) {
    uint32_t taken = 0;  // this ask's GPUs are distinct
    for (int32_t k = 0; k < ask.gpus; ++k) {
      std::optional<size_t> best;
      Take best_take;
      std::tuple<int, int64_t, int64_t, int> best_key;
      std::string card_why;
      for (size_t g = 0; g < n; ++g) {
        if (((usable >> g) & 1U) == 0 || ((taken >> g) & 1U) != 0) continue;
        const std::optional<Take> take = TakeOf(ask, cards[g], &card_why);
        if (!take || !Fits(cards[g], work[g], *take)) continue;
        const auto [compute_left, memory_left] = LeftAfter(cards[g], work[g], *take);
        // Shared GPUs first, best filled; then idle GPUs by preference.
        const auto key = work[g].sharers > 0 ? std::tuple(0, compute_left, memory_left, 0)
                                             : std::tuple(1, int64_t{0}, int64_t{0}, rank[g]);
        if (!best || key < best_key) {
          best = g;
          best_key = key;
          best_take = *take;
        }
      }
      if (!best) {
        if (why) *why = card_why.empty() ? Shortfall(ask, cards, work, usable & ~taken) : card_why;
        return std::nullopt;
      }
      taken |= uint32_t{1} << *best;
      const GpuSlice slice{.gpu = static_cast<int>(*best),
                           .container = ask.container,
                           .compute = best_take.compute,
                           .memory_mib = best_take.memory_mib};
      AccountHolding(work, GpuHolding{.slices = {slice}}, +1);
      slices.push_back(slice);
    }
  }
  return slices;
}

double SharedFill(std::span<const GpuSlice> slices, std::span<const GpuCard> cards,
                  const GpuUses& uses) {
  GpuUses after = uses;
  AccountHolding(after, GpuHolding{.slices = {slices.begin(), slices.end()}}, +1);
  uint32_t seen = 0;
  double sum = 0;
  int count = 0;
  for (const GpuSlice& s : slices) {
    if (((seen >> s.gpu) & 1U) != 0 || static_cast<size_t>(s.gpu) >= cards.size()) continue;
    seen |= uint32_t{1} << s.gpu;
    const GpuCardUse& u = after[static_cast<size_t>(s.gpu)];
    double fill = static_cast<double>(u.compute) / kGpuCompute;
    if (cards[static_cast<size_t>(s.gpu)].memory_mib > 0) {
      fill = std::max(fill, static_cast<double>(u.memory_mib) /
                                static_cast<double>(cards[static_cast<size_t>(s.gpu)].memory_mib));
    }
    sum += std::min(fill, 1.0);
    ++count;
  }
  return count == 0 ? 0 : sum / count;
}

std::string DescribeShareAsk(const GpuShareAsk& ask) {
  if (ask.form == GpuShareAsk::Form::kFraction) return Decimal(ask.compute) + " of a GPU";
  std::string each;
  const auto add = [&](const std::string& part) { each += (each.empty() ? "" : ", ") + part; };
  if (ask.memory_mib > 0) {
    add(std::to_string(ask.memory_mib) + " MiB");
  } else if (ask.memory_permille > 0) {
    add(std::to_string(ask.memory_permille / 10) + " percent memory");
  }
  if (ask.compute > 0) add(std::to_string(ask.compute / 10) + " percent compute");
  return std::to_string(ask.gpus) + (ask.gpus == 1 ? " vGPU" : " vGPUs") +
         (each.empty() ? "" : " (" + each + ")");
}

}  // namespace muster
