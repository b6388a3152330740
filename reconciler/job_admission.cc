#include "reconciler/job_admission.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reconciler/gpu_fraction.h"
#include "reconciler/naming.h"
#include "reconciler/plugin_args.h"

namespace muster::reconciler {
namespace {

constexpr int32_t kDefaultMaxRetry = 3;
constexpr std::string_view kDefaultQueue = "default";
constexpr std::string_view kRootQueue = "root";
constexpr size_t kMaxLabelLength = 63;
constexpr size_t kMaxSubdomainLength = 253;

constexpr std::string_view kLabelRule =
    "(lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 "
    "characters)";
constexpr std::string_view kSubdomainRule =
    "(DNS-1123 labels of lowercase letters, digits and '-' joined by '.', at most 253 "
    "characters)";

// Volcano names a user may not write into a policy: the controller's own.
constexpr std::string_view kInternalEvents[] = {"OutOfSync", "CommandIssued", "PodRunning"};
constexpr std::string_view kInternalActions[] = {"SyncJob", "EnqueueJob", "SyncQueue", "OpenQueue",
                                                 "CloseQueue"};
// Volcano job plugins muster does not implement.
constexpr std::string_view kUnsupportedVolcanoPlugins[] = {"hcclrank"};
// Plugins whose pods find each other by hostname, so they need svc.
constexpr std::string_view kPluginsNeedingSvc[] = {"mpi", "pytorch", "tensorflow", "ray"};
constexpr std::string_view kTopologyPolicies[] = {"none", "best-effort", "restricted",
                                                  "single-numa-node"};
constexpr std::string_view kNetworkTopologyModes[] = {"hard", "soft"};
constexpr std::string_view kIterations[] = {"any", "all"};

bool Contains(std::span<const std::string_view> list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string Join(std::span<const std::string_view> list) {
  std::string out;
  for (std::string_view s : list) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

Status Invalid(std::string_view path, std::string_view what) {
  return InvalidArgumentError(std::string(path) + ": " + std::string(what));
}

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The label pattern [a-z0-9]([-a-z0-9]*[a-z0-9])? without the length limit.
bool MatchesLabelPattern(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '-'; });
}

Status NonNegative(std::string_view path, int64_t value) {
  if (value >= 0) return Status::Ok();
  return Invalid(path, std::to_string(value) + " must be >= 0");
}

Status Label(std::string_view path, std::string_view value) {
  if (IsDns1123Label(value)) return Status::Ok();
  return Invalid(path, Quote(value) + " is not a DNS-1123 label " + std::string(kLabelRule));
}

Status Subdomain(std::string_view path, std::string_view value) {
  if (IsDns1123Subdomain(value)) return Status::Ok();
  return Invalid(path,
                 Quote(value) + " is not a DNS-1123 subdomain " + std::string(kSubdomainRule));
}

Status OneOf(std::string_view path, std::string_view value,
             std::span<const std::string_view> allowed) {
  if (Contains(allowed, value)) return Status::Ok();
  return Invalid(path, Quote(value) + " is not one of " + Join(allowed));
}

// The task names, for messages that say which names exist.
std::string TaskNames(const JobSpec& spec) {
  std::string out;
  for (const TaskSpec& task : spec.tasks) out += (out.empty() ? "" : ", ") + task.name;
  return out;
}

bool HasTask(const JobSpec& spec, std::string_view name) {
  return std::any_of(spec.tasks.begin(), spec.tasks.end(),
                     [&](const TaskSpec& t) { return t.name == name; });
}

// ---------------------------------------------------------------------------
// Defaults.

void DefaultTask(TaskSpec& task, size_t index) {
  if (task.name.empty()) task.name = "default" + std::to_string(index);
  if (!task.min_available) task.min_available = task.replicas;
  if (task.max_retry.value_or(0) == 0) task.max_retry = kDefaultMaxRetry;
}

int32_t SumOfTaskMinAvailable(const JobSpec& spec) {
  int64_t sum = 0;
  for (const TaskSpec& task : spec.tasks) sum += std::max(0, task.min_available.value_or(0));
  return static_cast<int32_t>(std::min<int64_t>(sum, std::numeric_limits<int32_t>::max()));
}

void DefaultPlugins(std::map<std::string, std::vector<std::string>>& plugins) {
  const bool needs_svc =
      std::any_of(std::begin(kPluginsNeedingSvc), std::end(kPluginsNeedingSvc),
                  [&](std::string_view p) { return plugins.contains(std::string(p)); });
  // try_emplace keeps the user's arguments when the plugin is already there.
  if (needs_svc) plugins.try_emplace("svc");
  if (plugins.contains("mpi")) plugins.try_emplace("ssh");
}

// ---------------------------------------------------------------------------
// Metadata and spec scalars.

Status CheckNetworkTopology(const NetworkTopologySpec& nt) {
  if (!nt.mode.empty()) {
    MUSTER_RETURN_IF_ERROR(OneOf("spec.networkTopology.mode", nt.mode, kNetworkTopologyModes));
  }
  if (nt.highest_tier_allowed) {
    MUSTER_RETURN_IF_ERROR(
        NonNegative("spec.networkTopology.highestTierAllowed", *nt.highest_tier_allowed));
    if (!nt.highest_tier_name.empty()) {
      return Invalid("spec.networkTopology", "set highestTierAllowed or highestTierName, not both");
    }
  }
  return Status::Ok();
}

Status CheckQueue(std::string_view queue) {
  MUSTER_RETURN_IF_ERROR(Subdomain("spec.queue", queue));
  if (queue == kRootQueue) {
    return Invalid("spec.queue", "\"root\" is the root of the queue tree; submit to a leaf queue");
  }
  return Status::Ok();
}

Status CheckSpecScalars(const JobSpec& spec) {
  MUSTER_RETURN_IF_ERROR(NonNegative("spec.minAvailable", spec.min_available));
  MUSTER_RETURN_IF_ERROR(NonNegative("spec.maxRetry", spec.max_retry));
  if (spec.ttl_seconds_after_finished) {
    MUSTER_RETURN_IF_ERROR(
        NonNegative("spec.ttlSecondsAfterFinished", *spec.ttl_seconds_after_finished));
  }
  if (spec.min_success && *spec.min_success < 1) {
    return Invalid("spec.minSuccess", std::to_string(*spec.min_success) + " must be >= 1 when set");
  }
  MUSTER_RETURN_IF_ERROR(CheckQueue(spec.queue));
  if (spec.scheduler_name.size() > kMaxLabelLength) {
    return Invalid("spec.schedulerName", "longer than 63 characters");
  }
  if (spec.network_topology) MUSTER_RETURN_IF_ERROR(CheckNetworkTopology(*spec.network_topology));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Policies.

// Events and exit codes already handled by earlier policies of one list,
// each with the path where it first appeared.
struct PolicyListState {
  std::map<std::string, std::string> events;
  std::map<int32_t, std::string> exit_codes;
};

Status CheckEventName(std::string_view path, std::string_view event) {
  if (Contains(kKnownEvents, event)) return Status::Ok();
  if (Contains(kInternalEvents, event)) {
    return Invalid(path, "event " + Quote(event) + " is internal to the job controller (known: " +
                             Join(kKnownEvents) + ")");
  }
  return Invalid(path, "unknown event " + Quote(event) + " (known: " + Join(kKnownEvents) + ")");
}

// Volcano: an event may be handled by one policy of a list only, and "*"
// must then be the list's only event.
Status CheckEventUnique(std::string_view path, const std::string& event, PolicyListState& state) {
  if (auto it = state.events.find(event); it != state.events.end()) {
    return Invalid(path, "duplicate event " + Quote(event) + " (already handled by " + it->second +
                             "; an event may appear in one policy only)");
  }
  if (!state.events.empty() && (event == "*" || state.events.contains("*"))) {
    const auto& [other, other_path] =
        event == "*" ? *state.events.begin() : *state.events.find("*");
    return Invalid(path, "event " + Quote(event) + " conflicts with " + Quote(other) + " at " +
                             other_path +
                             " (\"*\" matches every event, so it must be the only event of the "
                             "policies)");
  }
  state.events.emplace(event, std::string(path));
  return Status::Ok();
}

Status CheckEvents(const LifecyclePolicy& policy, const std::string& path, PolicyListState& state) {
  std::vector<std::pair<std::string, std::string>> events;  // (path, event)
  if (!policy.event.empty()) events.emplace_back(path + ".event", policy.event);
  for (size_t i = 0; i < policy.events.size(); ++i) {
    events.emplace_back(Index(path + ".events", i), policy.events[i]);
  }
  std::set<std::string> in_this_policy;  // Volcano merges event and events
  for (const auto& [event_path, event] : events) {
    if (!in_this_policy.insert(event).second) continue;
    MUSTER_RETURN_IF_ERROR(CheckEventName(event_path, event));
    MUSTER_RETURN_IF_ERROR(CheckEventUnique(event_path, event, state));
  }
  return Status::Ok();
}

Status CheckExitCode(int32_t code, const std::string& path, PolicyListState& state) {
  if (code == 0) return Invalid(path, "0 is not a failure (exitCode must be non-zero)");
  auto [it, inserted] = state.exit_codes.emplace(code, path);
  if (!inserted) {
    return Invalid(path, "duplicate exitCode " + std::to_string(code) + " (already handled by " +
                             it->second + ")");
  }
  return Status::Ok();
}

Status CheckAction(std::string_view path, std::string_view action) {
  const std::string known = " (known: " + Join(kKnownActions) + ")";
  if (Contains(kKnownActions, action)) return Status::Ok();
  if (action.empty()) return Invalid(path, "required" + known);
  if (action == "RestartPartition") {
    return Invalid(path,
                   "action \"RestartPartition\" is not supported by muster (muster does not "
                   "implement partitionPolicy)" +
                       known);
  }
  if (Contains(kInternalActions, action)) {
    return Invalid(path, "action " + Quote(action) + " is internal to the controllers" + known);
  }
  return Invalid(path, "unknown action " + Quote(action) + known);
}

Status CheckPolicy(const LifecyclePolicy& policy, const std::string& path, PolicyListState& state) {
  const bool has_event = !policy.event.empty() || !policy.events.empty();
  if (has_event && policy.exit_code) {
    return Invalid(path, "set event/events or exitCode, not both");
  }
  if (!has_event && !policy.exit_code) {
    return Invalid(path, "one of event, events or exitCode is required");
  }
  if (has_event) {
    MUSTER_RETURN_IF_ERROR(CheckEvents(policy, path, state));
  } else {
    MUSTER_RETURN_IF_ERROR(CheckExitCode(*policy.exit_code, path + ".exitCode", state));
  }
  return CheckAction(path + ".action", policy.action);
}

Status CheckPolicies(const std::vector<LifecyclePolicy>& policies, std::string_view path) {
  PolicyListState state;
  for (size_t i = 0; i < policies.size(); ++i) {
    MUSTER_RETURN_IF_ERROR(CheckPolicy(policies[i], Index(path, i), state));
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Tasks.

Status CheckTaskName(const std::string& path, const TaskSpec& task, std::set<std::string>& names) {
  MUSTER_RETURN_IF_ERROR(Label(path + ".name", task.name));
  if (!names.insert(task.name).second) {
    return Invalid(path + ".name",
                   "duplicate task name " + Quote(task.name) + " (task names must be unique)");
  }
  return Status::Ok();
}

// The longest pod name of the task; it doubles as the pod's hostname (svc
// plugin), hence the label limit.
Status CheckPodNameLength(const std::string& path, const TaskSpec& task, std::string_view job) {
  const std::string pod = PodName(job, task.name, std::max(task.replicas - 1, 0));
  if (pod.size() <= kMaxLabelLength) return Status::Ok();
  return Invalid(path + ".name", "pod name " + Quote(pod) + " is " + std::to_string(pod.size()) +
                                     " characters; job name, task name and replica index must "
                                     "fit in 63");
}

Status CheckTaskCounts(const std::string& path, const TaskSpec& task) {
  MUSTER_RETURN_IF_ERROR(NonNegative(path + ".replicas", task.replicas));
  if (task.min_available) {
    const int32_t min = *task.min_available;
    MUSTER_RETURN_IF_ERROR(NonNegative(path + ".minAvailable", min));
    if (min > task.replicas) {
      return Invalid(path + ".minAvailable", std::to_string(min) + " is more than the " +
                                                 std::to_string(task.replicas) +
                                                 " replicas of the task");
    }
  }
  if (task.max_retry && *task.max_retry < -1) {
    return Invalid(path + ".maxRetry",
                   std::to_string(*task.max_retry) + " must be >= -1 (-1 means unlimited)");
  }
  return Status::Ok();
}

// A NUMA topology policy pins whole CPUs, so every container must ask for a
// whole number of them (requests, or limits when there are no requests).
Status CheckWholeCpus(const std::string& path, const std::vector<Container>& containers,
                      std::string_view policy) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const ResourceRequirements& r = containers[i].resources;
    const int64_t milli = (r.requests.empty() ? r.limits : r.requests).milli_cpu();
    if (milli > 0 && milli % 1000 == 0) continue;
    return Invalid(Index(path, i) + ".resources.requests.cpu",
                   "topologyPolicy " + Quote(policy) +
                       " needs a whole, non-zero number of CPUs per container (this one asks for " +
                       std::to_string(milli) + "m)");
  }
  return Status::Ok();
}

// "requests.cpu" and "limits.nvidia.com/gpu" name quotas (ResourceQuota,
// a PodGroup's minResources), not what a container asks: the API server
// takes "limits.nvidia.com/gpu" for an extended resource of its own, counted
// in whole units, while muster's quantities read it as nvidia.com/gpu (the
// job fuzzer built a pod asking "limits.nvidia.com/gpu: 0.5", which the API
// server refuses). Refused here, naming the field, before any pod is built.
Status CheckContainerResourceNames(const std::string& path,
                                   const std::vector<Container>& containers) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const ResourceRequirements& r = containers[i].resources;
    const std::pair<std::string_view, const Resources*> maps[] = {{"limits", &r.limits},
                                                                  {"requests", &r.requests}};
    for (const auto& [map, resources] : maps) {
      for (const auto& [name, amount] : resources->entries()) {
        if (!name.starts_with("requests.") && !name.starts_with("limits.")) continue;
        return Invalid(Index(path, i) + ".resources." + std::string(map) + "[" + name + "]",
                       Quote(name) + " names a quota, not a container's resource: ask " +
                           Quote(name.substr(name.find('.') + 1)));
      }
    }
  }
  return Status::Ok();
}

Status CheckTopologyPolicy(const std::string& path, const TaskSpec& task) {
  const std::string& policy = task.topology_policy;
  if (policy.empty()) return Status::Ok();
  MUSTER_RETURN_IF_ERROR(OneOf(path + ".topologyPolicy", policy, kTopologyPolicies));
  if (policy == "none") return Status::Ok();
  const PodSpec& spec = task.template_pod.spec;
  MUSTER_RETURN_IF_ERROR(
      CheckWholeCpus(path + ".template.spec.containers", spec.containers, policy));
  return CheckWholeCpus(path + ".template.spec.initContainers", spec.init_containers, policy);
}

Status CheckTasks(const Job& job) {
  const JobSpec& spec = job.spec;
  if (spec.tasks.empty()) return Invalid("spec.tasks", "at least one task is required");
  std::set<std::string> names;
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    const TaskSpec& task = spec.tasks[i];
    const std::string path = Index("spec.tasks", i);
    MUSTER_RETURN_IF_ERROR(CheckTaskName(path, task, names));
    MUSTER_RETURN_IF_ERROR(CheckTaskCounts(path, task));
    MUSTER_RETURN_IF_ERROR(CheckPodNameLength(path, task, job.meta.name));
    const PodSpec& pod = task.template_pod.spec;
    MUSTER_RETURN_IF_ERROR(
        CheckContainerResourceNames(path + ".template.spec.initContainers", pod.init_containers));
    MUSTER_RETURN_IF_ERROR(
        CheckContainerResourceNames(path + ".template.spec.containers", pod.containers));
    MUSTER_RETURN_IF_ERROR(CheckTopologyPolicy(path, task));
    MUSTER_RETURN_IF_ERROR(ValidateTemplateGpus(task.template_pod, path + ".template"));
    MUSTER_RETURN_IF_ERROR(CheckPolicies(task.policies, path + ".policies"));
  }
  return Status::Ok();
}

Status CheckJobMinAvailable(const JobSpec& spec) {
  int64_t replicas = 0;
  for (const TaskSpec& task : spec.tasks) replicas += task.replicas;
  if (spec.min_available <= replicas) return Status::Ok();
  return Invalid("spec.minAvailable", std::to_string(spec.min_available) + " is more than the " +
                                          std::to_string(replicas) + " replicas of all tasks");
}

// ---------------------------------------------------------------------------
// Plugins.

Status CheckPluginName(std::string_view name) {
  const std::string supported = Join(kSupportedPlugins);
  if (Contains(kSupportedPlugins, name)) return Status::Ok();
  if (Contains(kUnsupportedVolcanoPlugins, name)) {
    return Invalid("spec.plugins", "Volcano plugin " + Quote(name) +
                                       " is not supported by muster (supported: " + supported +
                                       ")");
  }
  return Invalid("spec.plugins", "unknown plugin " + Quote(name) + " (known: " + supported + ")");
}

Status CheckPlugins(const JobSpec& spec) {
  for (const auto& [name, args] : spec.plugins) MUSTER_RETURN_IF_ERROR(CheckPluginName(name));
  if (auto mpi = spec.plugins.find("mpi"); mpi != spec.plugins.end()) {
    // The plugin's own parser, so admission and the pods agree on the name.
    const std::string master = ParseMpiArgs(mpi->second).master;
    if (!HasTask(spec, master)) {
      return Invalid("spec.plugins.mpi",
                     "master task " + Quote(master) +
                         " (--master) does not exist (tasks: " + TaskNames(spec) + ")");
    }
  }
  if (auto ray = spec.plugins.find("ray"); ray != spec.plugins.end()) {
    // Volcano's ray plugin fails every pod create of a job without it.
    const std::string head = ParseRayArgs(ray->second).head;
    if (!HasTask(spec, head)) {
      return Invalid(
          "spec.plugins.ray",
          "head task " + Quote(head) + " (--head) does not exist (tasks: " + TaskNames(spec) + ")");
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// dependsOn.

Status CheckDependsOnNames(const JobSpec& spec, size_t i) {
  const TaskSpec& task = spec.tasks[i];
  const std::string path = Index("spec.tasks", i) + ".dependsOn";
  const DependsOn& deps = *task.depends_on;
  for (size_t j = 0; j < deps.name.size(); ++j) {
    const std::string& dep = deps.name[j];
    if (dep == task.name) {
      return Invalid(Index(path + ".name", j), "task " + Quote(dep) + " cannot depend on itself");
    }
    if (!HasTask(spec, dep)) {
      return Invalid(Index(path + ".name", j),
                     "no task named " + Quote(dep) + " (tasks: " + TaskNames(spec) + ")");
    }
  }
  if (!deps.iteration.empty()) {
    MUSTER_RETURN_IF_ERROR(OneOf(path + ".iteration", deps.iteration, kIterations));
  }
  return Status::Ok();
}

// Depth-first search over "task -> the tasks it depends on", tasks and their
// dependencies in spec order, so the cycle reported is always the same.
class CycleFinder {
 public:
  explicit CycleFinder(const JobSpec& spec) : spec_(spec), state_(spec.tasks.size(), kNew) {
    for (size_t i = 0; i < spec.tasks.size(); ++i) index_[spec.tasks[i].name] = i;
  }

  // The first cycle as task indices, first == last; empty when none.
  std::vector<size_t> Find() {
    for (size_t i = 0; i < spec_.tasks.size(); ++i) {
      if (state_[i] == kNew && Visit(i)) return cycle_;
    }
    return {};
  }

 private:
  enum State { kNew, kOnPath, kDone };

  bool Visit(size_t i) {
    state_[i] = kOnPath;
    path_.push_back(i);
    if (spec_.tasks[i].depends_on) {
      for (const std::string& dep : spec_.tasks[i].depends_on->name) {
        auto it = index_.find(dep);
        if (it == index_.end()) continue;  // reported by CheckDependsOnNames
        const size_t j = it->second;
        if (state_[j] == kOnPath) return Close(j);
        if (state_[j] == kNew && Visit(j)) return true;
      }
    }
    path_.pop_back();
    state_[i] = kDone;
    return false;
  }

  bool Close(size_t j) {
    cycle_.assign(std::find(path_.begin(), path_.end(), j), path_.end());
    cycle_.push_back(j);
    return true;
  }

  const JobSpec& spec_;
  std::vector<State> state_;
  std::map<std::string, size_t> index_;
  std::vector<size_t> path_;
  std::vector<size_t> cycle_;
};

Status CheckDependsOn(const JobSpec& spec) {
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    if (spec.tasks[i].depends_on) MUSTER_RETURN_IF_ERROR(CheckDependsOnNames(spec, i));
  }
  const std::vector<size_t> cycle = CycleFinder(spec).Find();
  if (cycle.empty()) return Status::Ok();
  std::string names;
  for (size_t i : cycle) names += (names.empty() ? "" : " -> ") + spec.tasks[i].name;
  return Invalid(Index("spec.tasks", cycle.front()) + ".dependsOn",
                 "tasks depend on each other in a cycle " + names +
                     " (dependsOn must form a directed acyclic graph)");
}

// ---------------------------------------------------------------------------
// Volumes.

Status CheckVolume(const VolumeSpec& volume, const std::string& path,
                   std::map<std::string, std::string>& mount_paths) {
  const std::string mount = path + ".mountPath";
  if (volume.mount_path.empty()) return Invalid(mount, "required");
  if (volume.mount_path.find(':') != std::string::npos) {
    return Invalid(mount, Quote(volume.mount_path) + " must not contain ':'");
  }
  auto [it, inserted] = mount_paths.emplace(volume.mount_path, path);
  if (!inserted) {
    return Invalid(mount, "duplicate mount path " + Quote(volume.mount_path) +
                              " (already used by " + it->second + ")");
  }
  const bool named = !volume.volume_claim_name.empty();
  const bool to_create = !volume.volume_claim_json.empty();
  constexpr std::string_view kClaims =
      "volumeClaimName (an existing PVC) or volumeClaim (a PVC to create)";
  if (!named && !to_create) return Invalid(path, "set one of " + std::string(kClaims));
  if (named && to_create) return Invalid(path, "set " + std::string(kClaims) + ", not both");
  if (named) return Subdomain(path + ".volumeClaimName", volume.volume_claim_name);
  return Status::Ok();
}

Status CheckVolumes(const JobSpec& spec) {
  std::map<std::string, std::string> mount_paths;
  for (size_t i = 0; i < spec.volumes.size(); ++i) {
    MUSTER_RETURN_IF_ERROR(CheckVolume(spec.volumes[i], Index("spec.volumes", i), mount_paths));
  }
  return Status::Ok();
}

}  // namespace

bool IsDns1123Label(std::string_view s) {
  return s.size() <= kMaxLabelLength && MatchesLabelPattern(s);
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  for (size_t start = 0;;) {
    const size_t dot = s.find('.', start);
    if (!MatchesLabelPattern(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

Job WithDefaults(Job job, std::string_view default_scheduler) {
  JobSpec& spec = job.spec;
  if (spec.queue.empty()) spec.queue = kDefaultQueue;
  if (spec.scheduler_name.empty()) spec.scheduler_name = default_scheduler;
  if (spec.max_retry == 0) spec.max_retry = kDefaultMaxRetry;
  for (size_t i = 0; i < spec.tasks.size(); ++i) DefaultTask(spec.tasks[i], i);
  if (spec.min_available == 0) spec.min_available = SumOfTaskMinAvailable(spec);
  if (spec.network_topology && spec.network_topology->mode.empty()) {
    spec.network_topology->mode = "hard";
  }
  DefaultPlugins(spec.plugins);
  return job;
}

Status ValidateJob(const Job& job) {
  MUSTER_RETURN_IF_ERROR(Label("metadata.name", job.meta.name));
  MUSTER_RETURN_IF_ERROR(CheckSpecScalars(job.spec));
  MUSTER_RETURN_IF_ERROR(CheckTasks(job));
  MUSTER_RETURN_IF_ERROR(CheckJobMinAvailable(job.spec));
  MUSTER_RETURN_IF_ERROR(CheckPolicies(job.spec.policies, "spec.policies"));
  MUSTER_RETURN_IF_ERROR(CheckPlugins(job.spec));
  MUSTER_RETURN_IF_ERROR(CheckDependsOn(job.spec));
  return CheckVolumes(job.spec);
}

}  // namespace muster::reconciler
