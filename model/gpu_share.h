// GPU sharing (issue 18): pods that take a share of a GPU instead of whole
// GPUs, what each GPU of a node has left to share, and where a share goes.
//
// Two request forms, both on pods (the reconciler turns a Volcano Job's
// template into one of them):
//  - A fraction of one GPU: the pod annotation muster.io/gpu-fraction
//    ("0.5": 0.01 .. 0.99, at most two decimals). The Kubernetes API refuses a
//    fractional extended resource in a pod, so the reconciler writes this
//    annotation for a task that asks `nvidia.com/gpu: 0.5` and drops the
//    resource; users may set it on any pod. It takes that share of the GPU's
//    compute and, when the GPU's memory is known, of its memory. It counts
//    as that fraction of nvidia.com/gpu everywhere GPUs count (queues, DRF,
//    minResources): Pod::EffectiveRequest adds it.
//  - Volcano's vGPU resources, per container, as the HAMi-based
//    volcano-vgpu-device-plugin advertises them (Volcano
//    pkg/scheduler/api/devices/nvidia/vgpu/utils.go, resourcereqs):
//    volcano.sh/vgpu-number N distinct GPUs (1 when only memory is given),
//    each giving volcano.sh/vgpu-memory MiB, or volcano.sh/vgpu-memory-percentage
//    percent of its memory, or - neither given - all of its memory; and
//    volcano.sh/vgpu-cores percent of its compute (0: no compute bound; 100:
//    the GPU alone).
//
// A GPU (GpuCard) has a compute of 1000 (thousandths), a memory size in MiB
// (0: unknown) and at most max_sharers sharers (0: no limit). The sharers of
// a GPU (GpuCardUse) never pass its compute, its memory or max_sharers; a GPU
// held whole has no sharers, and a shared GPU is never held whole. A share
// that asks compute 1000 (vgpu-cores 100) takes an idle GPU, and a GPU whose
// compute is all taken takes no share that asks none (Volcano's rules).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace muster {

struct Pod;

inline constexpr std::string_view kAnnotationGpuFraction = "muster.io/gpu-fraction";
inline constexpr std::string_view kVgpuNumber = "volcano.sh/vgpu-number";
inline constexpr std::string_view kVgpuMemory = "volcano.sh/vgpu-memory";
inline constexpr std::string_view kVgpuMemoryPercentage = "volcano.sh/vgpu-memory-percentage";
inline constexpr std::string_view kVgpuCores = "volcano.sh/vgpu-cores";

// GPUs per node muster tells apart (GpuMask has a bit per GPU).
inline constexpr int kMaxNodeGpus = 16;
// The compute of one GPU, in thousandths.
inline constexpr int32_t kGpuCompute = 1000;

// One ask for shared GPUs: `gpus` distinct GPUs, each giving this much.
struct GpuShareAsk {
  enum class Form : uint8_t { kFraction, kVgpu };
  Form form = Form::kFraction;
  int container = -1;   // vGPU: index in spec.containers; -1 for a fraction
  int32_t gpus = 1;     // distinct GPUs
  int32_t compute = 0;  // per GPU, thousandths (0: no compute bound)
  // Per GPU: memory_mib when > 0, else memory_permille of the GPU's memory
  // (0: no memory bound; for a fraction, known memory only).
  int64_t memory_mib = 0;
  int32_t memory_permille = 0;
  friend bool operator==(const GpuShareAsk&, const GpuShareAsk&) = default;
};

// What a pod asks of GPUs: whole GPUs, or shares, never both.
struct GpuDemand {
  int32_t whole = 0;  // nvidia.com/gpu held whole
  std::vector<GpuShareAsk> shares;
  bool shared() const { return !shares.empty(); }
  bool vgpu() const { return shared() && shares.front().form == GpuShareAsk::Form::kVgpu; }
  // Distinct GPUs over every ask (a container's vGPUs are distinct; two
  // containers may share one GPU).
  int32_t SharedGpuCount() const;
  friend bool operator==(const GpuDemand&, const GpuDemand&) = default;
};

// "0.5" -> 500. A fraction of one GPU is 0 < x < 1 with at most two
// decimals; anything else is InvalidArgument saying so (the caller names the
// field).
StatusOr<int32_t> ParseGpuFraction(std::string_view text);
// The same rule for an amount of nvidia.com/gpu already in thousandths (a
// Volcano Job's template): OK for a whole number of GPUs or a valid fraction;
// otherwise why not ("1.5 nvidia.com/gpu: a request above one GPU must be
// whole").
Status CheckGpuAmount(int64_t milli);

// The share of one GPU the pod's muster.io/gpu-fraction asks, in thousandths;
// 0 when it has none or it is malformed (GpuDemandOf says why).
int32_t GpuFractionOf(const Pod& pod);

// What the pod asks: nvidia.com/gpu of its containers (whole), its
// muster.io/gpu-fraction, its containers' volcano.sh/vgpu-* limits (requests
// when no limit). InvalidArgument naming the field when the forms are mixed
// (a container asking whole and shared GPUs, a fraction beside vGPUs or
// whole GPUs), a fraction is malformed, or a vGPU amount is out of range.
StatusOr<GpuDemand> GpuDemandOf(const Pod& pod);

// One GPU of a node, as what it can give to sharers.
struct GpuCard {
  std::string uuid;         // "" unknown
  int64_t memory_mib = 0;   // 0 unknown
  int32_t max_sharers = 0;  // 0: no limit
  std::string type;         // the vGPU registration's type ("NVIDIA-A100..."), "" unknown
  bool healthy = true;
  bool vgpu = false;  // registered by Volcano's vGPU device plugin
  friend bool operator==(const GpuCard&, const GpuCard&) = default;
};

// What the pods hold of one GPU.
// Compact (12 bytes): every node of the cache keeps 16 of them.
struct GpuCardUse {
  int16_t whole = 0;    // holders of the whole GPU (a count: a stale annotation may name it twice)
  int16_t sharers = 0;  // shares held
  int32_t compute = 0;  // thousandths
  int32_t memory_mib = 0;
  bool idle() const { return whole == 0 && sharers == 0; }
  friend bool operator==(const GpuCardUse&, const GpuCardUse&) = default;
};
using GpuUses = std::array<GpuCardUse, kMaxNodeGpus>;

// One pod's hold of one shared GPU.
struct GpuSlice {
  int gpu = 0;          // index on its node
  int container = -1;   // the ask's container (-1: the pod)
  int32_t compute = 0;  // thousandths
  int64_t memory_mib = 0;
  friend bool operator==(const GpuSlice&, const GpuSlice&) = default;
};

// What one pod holds of its node's GPUs.
struct GpuHolding {
  uint32_t whole = 0;            // GPUs held whole, bit i: GPU i
  std::vector<GpuSlice> slices;  // shares, in ask order
  bool empty() const { return whole == 0 && slices.empty(); }
  // Every GPU it touches, whole or shared.
  uint32_t Gpus() const;
  friend bool operator==(const GpuHolding&, const GpuHolding&) = default;
};

// Adds (sign +1) or removes (-1) a holding from the uses of its node's GPUs.
// Amounts never go below zero (a holding removed twice frees nothing twice).
void AccountHolding(GpuUses& uses, const GpuHolding& holding, int sign);

// Where the asks go on a node with `cards` (index i is GPU i) used as `uses`:
// each ask's GPUs are distinct, each GPU taken the way the asks before it
// left it. Per GPU an ask takes the shared GPU it fills best (least compute,
// then least memory left after; already shared GPUs first), else an idle
// GPU, the first in `idle_order` (the caller's preference: the one whose
// loss strands the least; GPUs it omits follow in index order). GPUs not
// healthy, not in `usable` (bit i: GPU i) or held whole are never taken.
// nullopt when the asks do not fit, with `why` set ("needs 0.5 of a GPU:
// largest free share here is 0.3").
std::optional<std::vector<GpuSlice>> PlaceShares(std::span<const GpuShareAsk> asks,
                                                 std::span<const GpuCard> cards,
                                                 const GpuUses& uses, uint32_t usable,
                                                 std::span<const int> idle_order,
                                                 std::string* why = nullptr);

// How full the GPUs `slices` land on are once they are there, 0..1: the
// mean over those GPUs of max(compute, memory) used. Prioritize ranks nodes
// by it (binpack shared GPUs: a share that completes a half-used GPU scores
// 1, one that opens an idle GPU scores its own size).
double SharedFill(std::span<const GpuSlice> slices, std::span<const GpuCard> cards,
                  const GpuUses& uses);

// "0.5 of a GPU", "2 GPUs x (0.25, 4096 MiB)" - an ask, for messages.
std::string DescribeShareAsk(const GpuShareAsk& ask);

}  // namespace muster
