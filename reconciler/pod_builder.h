// One pod of a Volcano Job, built as Volcano's job controller builds it
// (pkg/controllers/job: createJobPod, plugins/): the task's PodTemplateSpec verbatim, the
// identity the scheduler, the lifecycle and users' scripts rely on, the job's
// volumes, then every plugin's OnPodCreate (plugins.h).
//
// Where muster departs from Volcano:
//   - pods of the gated schedulers are created behind the scheduling gate
//     kGangGate, lifted by the extender once the whole gang is reserved;
//   - the volume of spec.volumes[k] is named <job>-vol-<k> and its claim, when
//     only a volumeClaim is given, <job>-pvc-<k> (Volcano: random suffixes),
//     so a rebuilt pod is identical;
//   - only the template's metadata.labels and metadata.annotations are kept
//     (as Volcano does); name, namespace and ownerReferences are the job's.
//
// Thread-compatible; pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/status.h"
#include "reconciler/gpu_fraction.h"

namespace muster::reconciler {

struct PodBuildOptions {
  // Pods whose schedulerName is one of these get the scheduling gate
  // kGangGate (naming.h) so they wait until the extender reserves the whole
  // gang. Others are created ungated.
  std::vector<std::string> gated_schedulers = {"volcano"};
  // What a share of one GPU in a template (`nvidia.com/gpu: 0.5`) becomes
  // (gpu_fraction.h; --gpu-fraction-mode).
  GpuFractionOptions gpu_fraction;
};

// The core/v1 Pod body (compact JSON for POST) of replica `index` of
// job.spec.tasks[task]:
//   - metadata: name <job>-<task>-<index>, the job's namespace, the job's
//     controller ownerReference; the template's labels and annotations plus
//     annotations task-index, task-spec, group-name (PodGroupName), job-name,
//     queue-name, job-version (status.version), template-uid (<job>-<task>),
//     job-retry-count (status.retryCount), numa-topology-policy (when the
//     task sets one), and the job annotations of kCopiedJobKeys
//     (jdb-max-unavailable only without jdb-min-available); labels
//     task-index, job-name, task-spec, job-namespace, queue-name, and the job
//     labels preemptable and cooldown-time;
//   - spec: the template's, with schedulerName and priorityClassName from
//     the job when the template has none, the gate when the scheduler is
//     gated, and per spec.volumes[k] a PVC volume mounted at its mountPath in
//     every container (not init containers, as Volcano);
//   - a share of one GPU (gpu_fraction.h): each container's fractional
//     nvidia.com/gpu removed from its limits and requests (a map left empty
//     goes too); in kAnnotation mode the pod annotation
//     muster.io/gpu-fraction (the pod's share) and, per container that asked
//     a share, env NVIDIA_VISIBLE_DEVICES from the downward API
//     (metadata.annotations['muster.io/visible-devices']) and
//     MUSTER_GPU_FRACTION (its share), each unless the container sets it;
//     in kVgpu mode volcano.sh/vgpu-number, -cores and -memory in its limits
//     (and its requests when it had the share there);
//   - then the plugins (plugins.h ApplyPlugins).
// InvalidArgument naming the field for a task or index out of range or a
// template that is not a PodTemplateSpec, e.g.
//   spec.tasks[0].template.spec.containers: expected a non-empty array
// REQUIRES: the job is defaulted (job_admission.h WithDefaults).
StatusOr<std::string> BuildPod(const Job& job, size_t task, int index,
                               const PodBuildOptions& options = {});

}  // namespace muster::reconciler
