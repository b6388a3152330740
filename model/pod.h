// Pod: the core/v1 Pod fields muster schedules by.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/object_meta.h"
#include "model/resources.h"

namespace muster {

// Volcano's key for gang membership (annotation; the label is also honoured).
inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";
// The Volcano queue of a pod that names no PodGroup (Volcano's podgroup
// controller copies it into the PodGroup it makes for the pod).
inline constexpr std::string_view kQueueNameAnnotation = "scheduling.volcano.sh/queue-name";

struct ResourceRequirements {
  Resources requests;
  Resources limits;
  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::string restart_policy;  // init containers only: "Always" marks a sidecar
  friend bool operator==(const Container&, const Container&) = default;
};

struct Toleration {
  std::string key;
  std::string op;  // "Exists" | "Equal" ("" means Equal)
  std::string value;
  std::string effect;  // "" matches all effects
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In NotIn Exists DoesNotExist Gt Lt
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

// Terms are ORed; requirements inside a term are ANDed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

struct NodeAffinity {
  std::vector<NodeSelectorTerm> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  // Pod (anti-)affinity is kept verbatim (compact JSON) until a policy needs it.
  std::string pod_affinity_json;
  std::string pod_anti_affinity_json;
  friend bool operator==(const Affinity&, const Affinity&) = default;
};

struct PodSpec {
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  Resources overhead;
  std::string node_name;
  std::string scheduler_name;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string restart_policy;
  std::map<std::string, std::string> node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<std::string> scheduling_gates;
  // spec.schedulingGroup.podGroupName (Kubernetes 1.36+): the
  // scheduling.k8s.io PodGroup the pod joins; "" for none.
  std::string scheduling_group;
  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  int32_t restart_count = 0;
  // The state of the container: "waiting" | "running" | "terminated" | "".
  std::string state;
  std::string reason;                     // of the current state, if any
  std::optional<int32_t> exit_code;       // when terminated
  std::optional<int32_t> last_exit_code;  // lastState.terminated.exitCode
  friend bool operator==(const ContainerStatus&, const ContainerStatus&) = default;
};

struct PodStatus {
  std::string phase;  // Pending Running Succeeded Failed Unknown
  std::string reason;
  std::string message;
  std::string nominated_node_name;
  std::string qos_class;
  std::vector<Condition> conditions;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  friend bool operator==(const PodStatus&, const PodStatus&) = default;
};

struct Pod {
  ObjectMeta meta;
  PodSpec spec;
  PodStatus status;

  // The pod's request as kube-scheduler computes it: max(sum of containers
  // (+ sidecar init containers), each init container on top of the sidecars
  // started before it) + overhead.
  Resources ContainerRequest() const;
  // What muster counts for the pod: ContainerRequest() plus the share of a
  // GPU its muster.io/gpu-fraction asks, as nvidia.com/gpu thousandths
  // (model/gpu_share.h): a pod cannot ask a fraction in its containers.
  Resources EffectiveRequest() const;
  // The PodGroup this pod belongs to ("" for none): the annotation, else label.
  std::string GroupName() const;
  // The PodGroup Volcano's podgroup controller makes for a pod of a Volcano
  // scheduler that names none (pkg/controllers/podgroup/
  // pg_controller_handler.go, helpers.GeneratePodgroupName):
  // "podgroup-<uid of the controller owner>", else "podgroup-<pod uid>";
  // "" for a pod with neither uid.
  std::string ImplicitGroupName() const;
  // The queue kQueueNameAnnotation names ("" for none).
  std::string QueueAnnotation() const;
  // Succeeded or Failed: the pod holds no resources any more.
  bool IsTerminal() const { return status.phase == "Succeeded" || status.phase == "Failed"; }
  friend bool operator==(const Pod&, const Pod&) = default;
};

}  // namespace muster
