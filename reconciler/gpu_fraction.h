// A share of one GPU in a Volcano Job's task template (issue 18 §3.1):
// `nvidia.com/gpu: 0.5` in a container's limits or requests, as Huawei CCE's
// GPU sharing accepts it. The Kubernetes API refuses a pod whose container
// asks a fractional extended resource, so the reconciler builds the pod
// without the fraction and records the request in a form muster schedules
// (--gpu-fraction-mode, GpuFractionMode):
//
//  - kAnnotation (default): the pod annotation muster.io/gpu-fraction holds
//    the pod's share ("0.5", the sum over its containers); each container
//    that asked a share gets NVIDIA_VISIBLE_DEVICES from the annotation the
//    extender's bind writes (muster.io/visible-devices, through the downward
//    API; a container that sets the variable itself keeps its own) and
//    MUSTER_GPU_FRACTION, its own share, so a framework can cap itself
//    (PyTorch's torch.cuda.set_per_process_memory_fraction). No isolation:
//    memory and compute are shared on trust.
//  - kVgpu: the Volcano vGPU resources the HAMi-based
//    volcano-vgpu-device-plugin advertises (Project-HAMi/
//    volcano-vgpu-device-plugin pkg/plugin/vgpu/plugin.go): per container
//    volcano.sh/vgpu-number 1, volcano.sh/vgpu-cores round(100 x) and
//    volcano.sh/vgpu-memory floor(x * M) MiB, M the cluster's per-GPU memory
//    (the smallest GPU's with mixed models). Not a memory percentage: the
//    plugin does not advertise volcano.sh/vgpu-memory-percentage to the
//    kubelet, which would refuse the pod. HAMi-core, which the device plugin
//    injects, isolates memory and compute.
//
// Admission (ValidateTemplateGpus, called by job_admission.h ValidateJob)
// refuses what no pod can carry, naming the field; CheckGpuMemory refuses
// memory no GPU of the cluster has (the caller knows the cluster).
//
// Pure and thread-compatible: no I/O, no clock, no shared state.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/job.h"
#include "model/pod.h"
#include "model/status.h"

namespace muster::reconciler {

enum class GpuFractionMode : uint8_t { kAnnotation, kVgpu };

struct GpuFractionOptions {
  GpuFractionMode mode = GpuFractionMode::kAnnotation;
  // kVgpu: the memory of one GPU of the cluster, MiB (the smallest GPU's
  // when models differ); a share x asks floor(x * this). Required there.
  int64_t vgpu_gpu_memory_mib = 0;
};

// InvalidArgument naming the flag when kVgpu has no GPU memory.
Status ValidateGpuFractionOptions(const GpuFractionOptions& options);

// What the extender's bind writes on a pod sharing a GPU (extender/
// gpu_ledger.h kAnnotationVisibleDevices: UUIDs when known, else indices),
// and the variables the containers of such a pod get (kAnnotation mode).
inline constexpr std::string_view kVisibleDevicesAnnotation = "muster.io/visible-devices";
inline constexpr std::string_view kVisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES";
inline constexpr std::string_view kGpuFractionEnv = "MUSTER_GPU_FRACTION";

// Per container of `tmpl.spec.containers`, the share of one GPU it asks in
// thousandths: its nvidia.com/gpu limit (its request when it has no limit)
// when that is below one GPU; 0 when it asks none or whole GPUs.
std::vector<int32_t> ContainerGpuShares(const Pod& tmpl);
// True when some task of `job` asks a share of one GPU.
bool AsksGpuShare(const Job& job);

// What a share of `milli` thousandths becomes in kVgpu mode.
struct VgpuShare {
  int32_t number = 1;
  int32_t cores = 0;  // percent
  int64_t memory_mib = 0;
  friend bool operator==(const VgpuShare&, const VgpuShare&) = default;
};
VgpuShare VgpuShareOf(int32_t milli, int64_t gpu_memory_mib);

// The template as the reconciler builds its pods, in the model: each
// fractional nvidia.com/gpu removed, then the annotation set or the vGPU
// resources added (limits and requests, as the API server defaults an
// extended resource's request to its limit). Other templates unchanged.
Pod TemplateAsBuilt(const Pod& tmpl, const GpuFractionOptions& options);
// `job` with every task's template_pod as built (template_json untouched):
// what the PodGroup's minResources count (lifecycle.h DesiredPodGroup).
Job JobAsBuilt(Job job, const GpuFractionOptions& options);

// Ok, or InvalidArgument starting with the JSON path of the first GPU field
// of the template at `path` ("spec.tasks[1].template") that no pod can
// carry, e.g.
//   spec.tasks[1].template.spec.containers[0].resources.limits[nvidia.com/gpu]:
//     1.5 nvidia.com/gpu: a request above one GPU must be whole
// In order: each init container's and container's nvidia.com/gpu (limits,
// then requests: model/gpu_share.h CheckGpuAmount; a request that differs
// from its limit; a share in an init container), then the pod's shares
// (beside whole GPUs or vGPU resources, adding up to one GPU or more, beside
// the muster.io/gpu-fraction annotation), then the pod as built
// (model/gpu_share.h GpuDemandOf: vGPU amounts and mixtures). Independent of
// the mode: a Job valid in one is valid in the other.
Status ValidateTemplateGpus(const Pod& tmpl, std::string_view path);

// The GPU memory a new Job asks against what the cluster has:
// `largest_gpu_memory_mib` is the memory of the largest GPU whose memory is
// known (0: none known). InvalidArgument naming the field when a container
// asks volcano.sh/vgpu-memory above it, or asks memory (vgpu-memory,
// vgpu-memory-percentage, or a share in kVgpu mode, which becomes
// vgpu-memory) while no GPU's memory is known. REQUIRES: ValidateJob passed.
Status CheckGpuMemory(const Job& job, const GpuFractionOptions& options,
                      int64_t largest_gpu_memory_mib);
// True when CheckGpuMemory reads the cluster's GPU memory for `job`.
bool AsksGpuMemory(const Job& job, const GpuFractionOptions& options);

}  // namespace muster::reconciler
