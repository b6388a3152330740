// The wire formats of GPU sharing: Volcano's vGPU protocol with the
// HAMi-based volcano-vgpu-device-plugin (Project-HAMi/volcano-vgpu-device-plugin
// pkg/util/util.go, EncodeNodeDevices/EncodePodDevices; Volcano
// pkg/scheduler/api/devices/nvidia/vgpu/utils.go, decodeNodeDevices/
// encodePodDevices; docs/topology.md "GPU sharing"), and muster's own record
// of a pod's shares. All are annotations, plain text, no JSON.
//
//  - Node volcano.sh/node-vgpu-register, written by the device plugin: one
//    record per GPU, each ending in ':' (the last one too):
//      <UUID>,<split count>,<memory MiB>,<type>,<healthy true|false>,<mode>:
//    The type ("NVIDIA-Tesla V100-PCIE-32GB") may hold spaces; mode is
//    "hami-core", "mig" or "" (hami-core).
//  - Pod volcano.sh/vgpu-ids-new and volcano.sh/devices-to-allocate, written
//    by the scheduler: per container a segment of devices, each
//      <UUID>,NVIDIA,<memory MiB>,<cores %>:
//    segments joined by ';' (a container asking none has an empty segment).
//    The device plugin hands segment i to container i and erases it.
//  - Pod muster.io/gpu-shares, written by muster's bind with the Binding: the
//    shares a pod holds, so a restarted extender rebuilds its GPU ledger from
//    the pods alone. Per container (';'-joined, as above) the slices
//      <gpu index>:<compute thousandths>:<memory MiB>
//    comma-separated; a fraction of a GPU is one segment.
//
// Decoders never crash and name the record and field of the first fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_share.h"
#include "model/status.h"

namespace muster::kube {

inline constexpr std::string_view kAnnotationVgpuRegister = "volcano.sh/node-vgpu-register";
inline constexpr std::string_view kAnnotationVgpuIds = "volcano.sh/vgpu-ids-new";
inline constexpr std::string_view kAnnotationVgpuToAllocate = "volcano.sh/devices-to-allocate";
inline constexpr std::string_view kAnnotationVgpuNode = "volcano.sh/vgpu-node";
inline constexpr std::string_view kAnnotationVgpuTime = "volcano.sh/vgpu-time";
inline constexpr std::string_view kAnnotationVgpuBindTime = "volcano.sh/bind-time";
inline constexpr std::string_view kAnnotationVgpuBindPhase = "volcano.sh/bind-phase";
inline constexpr std::string_view kVgpuBindAllocating = "allocating";
// The device type every device of a pod's list carries (the plugin checks it).
inline constexpr std::string_view kVgpuDeviceType = "NVIDIA";
inline constexpr std::string_view kAnnotationGpuShares = "muster.io/gpu-shares";

// One registered GPU, in registration order (its index on the node).
struct VgpuRegistration {
  std::string uuid;
  int32_t split = 0;  // how many vGPUs it holds at most
  int64_t memory_mib = 0;
  std::string type;
  bool healthy = true;
  std::string mode;  // "hami-core" | "mig" | ""
  friend bool operator==(const VgpuRegistration&, const VgpuRegistration&) = default;
};
StatusOr<std::vector<VgpuRegistration>> DecodeVgpuRegistration(std::string_view text);
std::string EncodeVgpuRegistration(const std::vector<VgpuRegistration>& gpus);

// One device of a pod's vGPU list.
struct VgpuDevice {
  std::string uuid;
  std::string type = std::string(kVgpuDeviceType);
  int64_t memory_mib = 0;
  int32_t cores = 0;  // percent
  friend bool operator==(const VgpuDevice&, const VgpuDevice&) = default;
};
using VgpuPodDevices = std::vector<std::vector<VgpuDevice>>;  // per container
StatusOr<VgpuPodDevices> DecodeVgpuDevices(std::string_view text);
std::string EncodeVgpuDevices(const VgpuPodDevices& devices);

// muster.io/gpu-shares <-> slices (GpuSlice::container is the segment index).
StatusOr<std::vector<GpuSlice>> DecodeGpuShares(std::string_view text);
// REQUIRES: every slice's container < containers (a fraction's -1 counts as 0).
std::string EncodeGpuShares(const std::vector<GpuSlice>& slices, int containers);

}  // namespace muster::kube
