#include "reconciler/gpu_fraction.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "model/gpu_share.h"
#include "model/quantity.h"
#include "model/resources.h"

namespace muster::reconciler {
namespace {

constexpr std::string_view kUnknownMemory =
    "no GPU in the cluster has a known memory (no node has a volcano.sh/node-vgpu-register "
    "annotation or an nvidia.com/gpu.memory label)";
constexpr std::array<std::string_view, 4> kVgpuResources = {kVgpuNumber, kVgpuMemory,
                                                            kVgpuMemoryPercentage, kVgpuCores};

std::string Gpus(int64_t milli) { return FormatResourceQuantity(kNvidiaGpu, milli); }

bool IsShare(int64_t milli) { return milli > 0 && milli < kMilliPerGpu; }

// "<path>.spec.containers[3]".
std::string ContainerPath(std::string_view path, std::string_view list, size_t i) {
  return std::string(path) + ".spec." + std::string(list) + "[" + std::to_string(i) + "]";
}

// "<container>.resources.limits[nvidia.com/gpu]".
std::string FieldPath(const std::string& container, std::string_view map,
                      std::string_view resource) {
  return container + ".resources." + std::string(map) + "[" + std::string(resource) + "]";
}

Status Invalid(const std::string& path, std::string_view what) {
  return InvalidArgumentError(path + ": " + std::string(what));
}

// A container's amount of `resource` and the map it came from: its limit,
// else its request (Volcano and model/gpu_share.h read limits first).
struct Amount {
  int64_t value = 0;
  std::string_view map;  // "limits" | "requests"
};
std::optional<Amount> AmountOf(const Container& c, std::string_view resource) {
  if (c.resources.limits.Has(resource)) return Amount{c.resources.limits.Get(resource), "limits"};
  if (c.resources.requests.Has(resource)) {
    return Amount{c.resources.requests.Get(resource), "requests"};
  }
  return std::nullopt;
}

int32_t ShareOf(const Container& c) {
  const std::optional<Amount> gpu = AmountOf(c, kNvidiaGpu);
  return gpu && IsShare(gpu->value) ? static_cast<int32_t>(gpu->value) : 0;
}

// The first vGPU resource the container names, or "".
std::string_view VgpuResourceOf(const Container& c) {
  for (std::string_view r : kVgpuResources) {
    if (AmountOf(c, r)) return r;
  }
  return "";
}

// CheckGpuAmount on the container's limit and request, which must agree
// (the API server requires an extended resource's request to equal its
// limit); an init container takes no share (it runs before the pod's
// containers, which hold the shared GPU).
Status CheckContainerGpus(const Container& c, const std::string& path, bool init) {
  const Resources* maps[] = {&c.resources.limits, &c.resources.requests};
  const std::string_view names[] = {"limits", "requests"};
  for (size_t m = 0; m < 2; ++m) {
    if (!maps[m]->Has(kNvidiaGpu)) continue;
    const int64_t milli = maps[m]->Get(kNvidiaGpu);
    const std::string field = FieldPath(path, names[m], kNvidiaGpu);
    if (Status ok = CheckGpuAmount(milli); !ok.ok()) return Invalid(field, ok.message());
    if (init && IsShare(milli)) {
      return Invalid(field, Gpus(milli) +
                                " nvidia.com/gpu: an init container asks whole GPUs (a share of "
                                "one GPU is for the pod's containers)");
    }
  }
  if (c.resources.limits.Has(kNvidiaGpu) && c.resources.requests.Has(kNvidiaGpu) &&
      c.resources.limits.Get(kNvidiaGpu) != c.resources.requests.Get(kNvidiaGpu)) {
    return Invalid(FieldPath(path, "requests", kNvidiaGpu),
                   Gpus(c.resources.requests.Get(kNvidiaGpu)) + " nvidia.com/gpu differs from " +
                       "the limit " + Gpus(c.resources.limits.Get(kNvidiaGpu)) +
                       ": a GPU request equals its limit");
  }
  return Status::Ok();
}

// The pod's shares against the rest of what it asks of GPUs.
Status CheckPodShares(const Pod& tmpl, std::string_view path) {
  const std::vector<int32_t> shares = ContainerGpuShares(tmpl);
  const auto first = std::find_if(shares.begin(), shares.end(), [](int32_t s) { return s > 0; });
  if (first == shares.end()) return Status::Ok();
  const size_t at = static_cast<size_t>(first - shares.begin());
  const Container& sharer = tmpl.spec.containers[at];
  const std::string field = FieldPath(ContainerPath(path, "containers", at),
                                      AmountOf(sharer, kNvidiaGpu)->map, kNvidiaGpu);
  const std::string asked = Gpus(*first) + " nvidia.com/gpu: a share of one GPU beside ";
  for (size_t j = 0; j < tmpl.spec.init_containers.size(); ++j) {
    const std::optional<Amount> gpu = AmountOf(tmpl.spec.init_containers[j], kNvidiaGpu);
    if (gpu && gpu->value >= kMilliPerGpu) {
      return Invalid(field, asked + "whole GPUs (initContainers[" + std::to_string(j) + "] asks " +
                                Gpus(gpu->value) +
                                "): a pod asks a share of one GPU or whole GPUs, not both");
    }
  }
  int64_t total = 0;
  for (size_t j = 0; j < tmpl.spec.containers.size(); ++j) {
    const Container& c = tmpl.spec.containers[j];
    const std::string other = "containers[" + std::to_string(j) + "]";
    const std::optional<Amount> gpu = AmountOf(c, kNvidiaGpu);
    if (gpu && gpu->value >= kMilliPerGpu) {
      return Invalid(field, asked + "whole GPUs (" + other + " asks " + Gpus(gpu->value) +
                                "): a pod asks a share of one GPU or whole GPUs, not both");
    }
    if (std::string_view vgpu = VgpuResourceOf(c); !vgpu.empty()) {
      return Invalid(field, asked + "vGPU resources (" + other + " asks " + std::string(vgpu) +
                                "): a pod asks a share of one GPU or vGPUs, not both");
    }
    total += shares[j];
  }
  if (total >= kMilliPerGpu) {
    return Invalid(std::string(path) + ".spec.containers",
                   "the containers' shares add up to " + Gpus(total) +
                       (total == kMilliPerGpu ? " GPU" : " GPUs") + ": a pod shares one GPU");
  }
  if (tmpl.meta.annotations.contains(std::string(kAnnotationGpuFraction))) {
    return Invalid(
        std::string(path) + ".metadata.annotations[" + std::string(kAnnotationGpuFraction) + "]",
        "set beside a share in nvidia.com/gpu (containers[" + std::to_string(at) + "] asks " +
            Gpus(*first) + "): ask the share one way");
  }
  return Status::Ok();
}

// Removes the share from the container's limits and requests; in kVgpu mode
// puts the vGPU resources in both.
void BuildContainer(Container& c, int32_t share, const GpuFractionOptions& options) {
  c.resources.limits.Erase(kNvidiaGpu);
  c.resources.requests.Erase(kNvidiaGpu);
  if (options.mode != GpuFractionMode::kVgpu) return;
  const VgpuShare vgpu = VgpuShareOf(share, options.vgpu_gpu_memory_mib);
  for (Resources* r : {&c.resources.limits, &c.resources.requests}) {
    r->Set(kVgpuNumber, vgpu.number);
    r->Set(kVgpuCores, vgpu.cores);
    r->Set(kVgpuMemory, vgpu.memory_mib);
  }
}

std::string TaskTemplatePath(size_t task) {
  return "spec.tasks[" + std::to_string(task) + "].template";
}

// The memory a container asks against the cluster's largest known GPU
// memory; `asks` set when it asks any.
Status CheckContainerMemory(const Container& c, int32_t share, const std::string& path,
                            const GpuFractionOptions& options, int64_t largest, bool* asks) {
  const std::optional<Amount> memory = AmountOf(c, kVgpuMemory);
  const std::optional<Amount> percent = AmountOf(c, kVgpuMemoryPercentage);
  const bool vgpu_share = share > 0 && options.mode == GpuFractionMode::kVgpu;
  *asks = *asks || (memory && memory->value > 0) || (percent && percent->value > 0) || vgpu_share;
  if (memory && memory->value > 0) {
    const std::string field = FieldPath(path, memory->map, kVgpuMemory);
    const std::string mib = std::to_string(memory->value) + " MiB per vGPU";
    if (largest == 0) return Invalid(field, mib + ", and " + std::string(kUnknownMemory));
    if (memory->value > largest) {
      return Invalid(field, mib + " is more than any GPU in the cluster has (the largest has " +
                                std::to_string(largest) + " MiB)");
    }
  } else if (percent && percent->value > 0 && largest == 0) {
    return Invalid(FieldPath(path, percent->map, kVgpuMemoryPercentage),
                   std::to_string(percent->value) + " percent of a GPU's memory, and " +
                       std::string(kUnknownMemory));
  }
  if (!vgpu_share) return Status::Ok();
  const int64_t mib = VgpuShareOf(share, options.vgpu_gpu_memory_mib).memory_mib;
  const std::string field = FieldPath(path, AmountOf(c, kNvidiaGpu)->map, kNvidiaGpu);
  const std::string becomes =
      Gpus(share) + " of a GPU becomes " + std::string(kVgpuMemory) + " " + std::to_string(mib) +
      " MiB (--gpu-fraction-mode=vgpu, " +
      "--vgpu-gpu-memory-mib=" + std::to_string(options.vgpu_gpu_memory_mib) + ")";
  if (largest == 0) return Invalid(field, becomes + ", and " + std::string(kUnknownMemory));
  if (mib > largest) {
    return Invalid(field, becomes + ", more than any GPU in the cluster has (the largest has " +
                              std::to_string(largest) + " MiB)");
  }
  return Status::Ok();
}

// CheckGpuMemory's walk; `asks` set when some container asks memory.
Status WalkGpuMemory(const Job& job, const GpuFractionOptions& options, int64_t largest,
                     bool* asks) {
  for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
    const Pod& tmpl = job.spec.tasks[t].template_pod;
    const std::vector<int32_t> shares = ContainerGpuShares(tmpl);
    for (size_t j = 0; j < tmpl.spec.containers.size(); ++j) {
      MUSTER_RETURN_IF_ERROR(CheckContainerMemory(
          tmpl.spec.containers[j], shares[j], ContainerPath(TaskTemplatePath(t), "containers", j),
          options, largest, asks));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateGpuFractionOptions(const GpuFractionOptions& options) {
  if (options.mode == GpuFractionMode::kVgpu && options.vgpu_gpu_memory_mib <= 0) {
    return InvalidArgumentError(
        "--gpu-fraction-mode=vgpu needs --vgpu-gpu-memory-mib (the memory of one GPU of the "
        "cluster in MiB, the smallest GPU's when models differ): a share x asks floor(x * it) "
        "of volcano.sh/vgpu-memory");
  }
  return Status::Ok();
}

std::vector<int32_t> ContainerGpuShares(const Pod& tmpl) {
  std::vector<int32_t> shares;
  shares.reserve(tmpl.spec.containers.size());
  for (const Container& c : tmpl.spec.containers) shares.push_back(ShareOf(c));
  return shares;
}

bool AsksGpuShare(const Job& job) {
  return std::any_of(job.spec.tasks.begin(), job.spec.tasks.end(), [](const TaskSpec& task) {
    return std::any_of(task.template_pod.spec.containers.begin(),
                       task.template_pod.spec.containers.end(),
                       [](const Container& c) { return ShareOf(c) > 0; });
  });
}

VgpuShare VgpuShareOf(int32_t milli, int64_t gpu_memory_mib) {
  // round(100 x) with x = milli / 1000; floor(x * M).
  return VgpuShare{.number = 1,
                   .cores = (milli + 5) / 10,
                   .memory_mib = static_cast<int64_t>(milli) * gpu_memory_mib / kMilliPerGpu};
}

Pod TemplateAsBuilt(const Pod& tmpl, const GpuFractionOptions& options) {
  const std::vector<int32_t> shares = ContainerGpuShares(tmpl);
  int64_t total = 0;
  for (int32_t s : shares) total += s;
  if (total == 0) return tmpl;
  Pod built = tmpl;
  for (size_t j = 0; j < shares.size(); ++j) {
    if (shares[j] > 0) BuildContainer(built.spec.containers[j], shares[j], options);
  }
  if (options.mode == GpuFractionMode::kAnnotation) {
    built.meta.annotations[std::string(kAnnotationGpuFraction)] = Gpus(total);
  }
  return built;
}

Job JobAsBuilt(Job job, const GpuFractionOptions& options) {
  for (TaskSpec& task : job.spec.tasks) {
    task.template_pod = TemplateAsBuilt(task.template_pod, options);
  }
  return job;
}

Status ValidateTemplateGpus(const Pod& tmpl, std::string_view path) {
  for (size_t j = 0; j < tmpl.spec.init_containers.size(); ++j) {
    MUSTER_RETURN_IF_ERROR(CheckContainerGpus(tmpl.spec.init_containers[j],
                                              ContainerPath(path, "initContainers", j), true));
  }
  for (size_t j = 0; j < tmpl.spec.containers.size(); ++j) {
    MUSTER_RETURN_IF_ERROR(
        CheckContainerGpus(tmpl.spec.containers[j], ContainerPath(path, "containers", j), false));
  }
  MUSTER_RETURN_IF_ERROR(CheckPodShares(tmpl, path));
  // The pod as built, in either mode's model the same rules: the annotation
  // form keeps the vGPU resources the user wrote apart from the share.
  StatusOr<GpuDemand> demand = GpuDemandOf(TemplateAsBuilt(tmpl, GpuFractionOptions{}));
  if (!demand.ok())
    return InvalidArgumentError(std::string(path) + "." + demand.status().message());
  return Status::Ok();
}

Status CheckGpuMemory(const Job& job, const GpuFractionOptions& options,
                      int64_t largest_gpu_memory_mib) {
  bool asks = false;
  return WalkGpuMemory(job, options, largest_gpu_memory_mib, &asks);
}

bool AsksGpuMemory(const Job& job, const GpuFractionOptions& options) {
  // With no memory known every ask is refused, so the walk stops at the first.
  bool asks = false;
  (void)WalkGpuMemory(job, options, 0, &asks);
  return asks;
}

}  // namespace muster::reconciler
