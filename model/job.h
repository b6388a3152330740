// Job (batch.volcano.sh/v1alpha1): a multi-task batch job (Volcano's vcjob).
//
// Task pod templates are kept verbatim as compact JSON (`template_json`) so
// the reconciler creates pods with every field the user wrote; `template_pod`
// is the same template decoded into the model for reasoning.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/object_meta.h"
#include "model/pod.h"
#include "model/pod_group.h"

namespace muster {

struct LifecyclePolicy {
  std::string event;
  std::vector<std::string> events;
  std::optional<int32_t> exit_code;
  std::string action;
  std::optional<Duration> timeout;
  friend bool operator==(const LifecyclePolicy&, const LifecyclePolicy&) = default;
};

struct DependsOn {
  std::vector<std::string> name;
  std::string iteration;  // "any" | "all"
  friend bool operator==(const DependsOn&, const DependsOn&) = default;
};

struct TaskSpec {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  std::optional<int32_t> max_retry;
  std::string topology_policy;
  std::vector<LifecyclePolicy> policies;
  std::optional<DependsOn> depends_on;
  std::string template_json;  // the PodTemplateSpec, verbatim (compact JSON)
  Pod template_pod;           // the same, decoded (metadata + spec)
  friend bool operator==(const TaskSpec&, const TaskSpec&) = default;
};

struct VolumeSpec {
  std::string mount_path;
  std::string volume_claim_name;
  std::string volume_claim_json;  // PersistentVolumeClaimSpec, verbatim
  friend bool operator==(const VolumeSpec&, const VolumeSpec&) = default;
};

struct JobSpec {
  std::string scheduler_name;
  int32_t min_available = 0;
  std::optional<int32_t> min_success;
  std::string queue;
  int32_t max_retry = 0;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::string priority_class_name;
  std::optional<Duration> running_estimate;
  std::optional<NetworkTopologySpec> network_topology;
  std::map<std::string, std::vector<std::string>> plugins;
  std::vector<LifecyclePolicy> policies;
  std::vector<VolumeSpec> volumes;
  std::vector<TaskSpec> tasks;
  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

struct JobState {
  std::string phase;  // Pending Aborting Aborted Running Restarting Completing
                      // Completed Terminating Terminated Failed
  std::string reason;
  std::string message;
  Time last_transition_time;
  friend bool operator==(const JobState&, const JobState&) = default;
};

struct JobCondition {
  std::string status;  // a JobPhase
  Time last_transition_time;
  friend bool operator==(const JobCondition&, const JobCondition&) = default;
};

struct JobStatus {
  JobState state;
  int32_t min_available = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  std::optional<Duration> running_duration;
  // task -> pod phase -> count
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;
  std::map<std::string, std::string> controlled_resources;
  std::vector<JobCondition> conditions;
  friend bool operator==(const JobStatus&, const JobStatus&) = default;
};

struct Job {
  ObjectMeta meta;
  JobSpec spec;
  JobStatus status;
  friend bool operator==(const Job&, const Job&) = default;
};

}  // namespace muster
