// PodGroup: a gang of pods that start together - Volcano's
// (scheduling.volcano.sh/v1beta1) or Kubernetes' own (scheduling.k8s.io/v1beta1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/object_meta.h"
#include "model/resources.h"

namespace muster {

// spec.networkTopology (Volcano): how tightly the gang must be packed.
struct NetworkTopologySpec {
  std::string mode;  // "hard" (default) | "soft"
  std::optional<int32_t> highest_tier_allowed;
  std::string highest_tier_name;
  friend bool operator==(const NetworkTopologySpec&, const NetworkTopologySpec&) = default;
};

struct PodGroupSpec {
  int32_t min_member = 0;
  std::map<std::string, int32_t> min_task_member;
  std::string queue;  // "" reads as "default"
  std::string priority_class_name;
  std::optional<Resources> min_resources;
  std::optional<NetworkTopologySpec> network_topology;
  friend bool operator==(const PodGroupSpec&, const PodGroupSpec&) = default;
};

// Whether the per-task minimums (minTaskMember) bind at all. Volcano checks
// them only when the job minimum covers their sum: its scheduler's job info
// (pkg/scheduler/api/job_info.go: CheckTaskValid, CheckTaskReady,
// CheckTaskPipelined) skips the per-task check when MinAvailable <
// TaskMinAvailableTotal. The Job controller still writes every task's
// minimum (task.minAvailable, else its replicas), so an elastic Job
// (minAvailable 1, one task of 20 replicas) or a dependsOn chain whose later
// tasks' pods do not exist yet needs only minMember.
inline bool TaskMinimumsBind(const PodGroupSpec& spec) {
  int64_t total = 0;
  for (const auto& [task, min] : spec.min_task_member) total += min;
  return spec.min_member >= total;
}

// The scheduling gate gang members are created behind (muster's Job
// reconciler does; users may): the extender's gang controller lifts it once
// the whole gang is reserved (docs/gang.md).
inline constexpr std::string_view kGangSchedulingGate = "muster.io/gang";
// Where kGangSchedulingGate is among a pod's schedulingGates, if it is.
inline std::optional<size_t> GangGateIndex(const std::vector<std::string>& scheduling_gates) {
  const auto gate =
      std::find(scheduling_gates.begin(), scheduling_gates.end(), kGangSchedulingGate);
  if (gate == scheduling_gates.end()) return std::nullopt;
  return static_cast<size_t>(gate - scheduling_gates.begin());
}

// Volcano phase names.
inline constexpr std::string_view kPodGroupPending = "Pending";
inline constexpr std::string_view kPodGroupInqueue = "Inqueue";
inline constexpr std::string_view kPodGroupRunning = "Running";
inline constexpr std::string_view kPodGroupCompleted = "Completed";
inline constexpr std::string_view kPodGroupUnknown = "Unknown";

struct PodGroupStatus {
  std::string phase;
  std::vector<Condition> conditions;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

// The API a PodGroup is an object of.
enum class PodGroupApi {
  // scheduling.volcano.sh/v1beta1: pods name it in the annotation (or label)
  // scheduling.k8s.io/group-name; muster writes its status.
  kVolcano,
  // scheduling.k8s.io/v1beta1 (Kubernetes 1.37+, feature gate
  // GenericWorkload): pods join it through spec.schedulingGroup.podGroupName.
  // kube-scheduler owns its status; muster writes none, only Events.
  kKubernetes,
};

// The gang key of a PodGroup, as the extender's cache and gang controller
// key it: "namespace/name" for Volcano's, "scheduling.k8s.io/namespace/name"
// for Kubernetes' own. The two may share a namespace and name; a namespace
// name has no dot, so their keys never collide.
inline std::string GangKey(PodGroupApi api, std::string_view ns, std::string_view name) {
  if (api == PodGroupApi::kVolcano) return ObjectKey(ns, name);
  return "scheduling.k8s.io/" + ObjectKey(ns, name);
}

struct PodGroup {
  ObjectMeta meta;
  PodGroupApi api = PodGroupApi::kVolcano;
  PodGroupSpec spec;
  PodGroupStatus status;
  std::string GangKey() const { return muster::GangKey(api, meta.namespace_, meta.name); }
  friend bool operator==(const PodGroup&, const PodGroup&) = default;
};

// The annotation muster puts on every gang member's Binding: the placement
// of the whole gang when the member was bound, so a restarted extender can
// re-reserve the members not yet bound from any bound one (HiveD's
// affinityGroupBindInfo). JSON: {"podGroup": "<name>", "members": {"<pod
// name>": "<node>", ...}}; the namespace is the pod's.
inline constexpr std::string_view kAnnotationGangPlan = "muster.io/gang-plan";

struct GangPlacement {
  std::string pod_group;
  std::map<std::string, std::string> members;  // pod name -> node
  friend bool operator==(const GangPlacement&, const GangPlacement&) = default;
};

}  // namespace muster
