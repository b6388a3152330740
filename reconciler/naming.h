// Volcano's names for what the reconciler creates (pkg/controllers/job: helpers/,
// plugins/): users' images and scripts depend on them, so every one is spelled
// here once and nowhere else.
#pragma once

#include <string>
#include <string_view>

#include "model/job.h"

namespace muster::reconciler {

// Job API.
inline constexpr std::string_view kJobApiVersion = "batch.volcano.sh/v1alpha1";
inline constexpr std::string_view kJobKind = "Job";

// Labels and annotations stamped on every pod (annotation keys double as
// label keys where Volcano sets both).
inline constexpr std::string_view kJobNameKey = "volcano.sh/job-name";
inline constexpr std::string_view kJobNamespaceKey = "volcano.sh/job-namespace";
inline constexpr std::string_view kQueueNameKey = "volcano.sh/queue-name";
inline constexpr std::string_view kTaskSpecKey = "volcano.sh/task-spec";
inline constexpr std::string_view kTaskIndexKey = "volcano.sh/task-index";
inline constexpr std::string_view kJobVersionKey = "volcano.sh/job-version";
inline constexpr std::string_view kTemplateUidKey = "volcano.sh/template-uid";
inline constexpr std::string_view kJobRetryCountKey = "volcano.sh/job-retry-count";
inline constexpr std::string_view kNumaPolicyKey = "volcano.sh/numa-topology-policy";
// Set on a pod right before the reconciler deletes it, so its deletion is
// not mistaken for an eviction (PodEvicted).
inline constexpr std::string_view kOutOfSyncKey = "volcano.sh/controller-out-of-sync";
// Job labels/annotations Volcano copies onto pods when present.
inline constexpr std::string_view kCopiedJobKeys[] = {
    "volcano.sh/preemptable", "volcano.sh/cooldown-time", "volcano.sh/revocable-zone",
    "volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable"};

// The scheduling gate reconciler pods are created with (model/pod_group.h).
inline constexpr std::string_view kGangGate = kGangSchedulingGate;

// Plugin objects.
inline constexpr std::string_view kEtcVolcanoPath = "/etc/volcano";

inline std::string PodGroupName(const Job& job) { return job.meta.name + "-" + job.meta.uid; }
inline std::string PodName(std::string_view job, std::string_view task, int index) {
  return std::string(job) + "-" + std::string(task) + "-" + std::to_string(index);
}
inline std::string ServiceName(const Job& job) { return job.meta.name; }
inline std::string HostsConfigMapName(const Job& job) { return job.meta.name + "-svc"; }
inline std::string SshSecretName(const Job& job) { return job.meta.name + "-ssh"; }

}  // namespace muster::reconciler
