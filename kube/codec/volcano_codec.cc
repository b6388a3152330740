#include "kube/codec/volcano_codec.h"

#include <utility>

#include "kube/codec/codec_helpers.h"

namespace muster::kube {
namespace {

constexpr std::string_view kBatchApiVersion = "batch.volcano.sh/v1alpha1";

// How a status is written. A full object omits empty fields (Go omitempty);
// a merge patch must write zeros and empty lists explicitly, because an
// omitted field would keep its old value on the server.
enum class StatusStyle { kOmitEmpty, kPatch };

void CountField(JsonWriter& w, std::string_view key, int64_t value, StatusStyle style) {
  if (style == StatusStyle::kPatch) {
    w.IntField(key, value);
  } else {
    w.IntFieldIfSet(key, value);
  }
}

void WriteHeader(JsonWriter& w, std::string_view api_version, std::string_view kind,
                 const ObjectMeta& meta) {
  WriteTypeMeta(w, api_version, kind);
  w.Key("metadata");
  EncodeObjectMeta(w, meta);
}

void EncodeConditions(JsonWriter& w, const std::vector<Condition>& conditions, StatusStyle style) {
  if (conditions.empty() && style == StatusStyle::kOmitEmpty) return;
  w.Key("conditions");
  w.StartArray();
  for (const Condition& c : conditions) EncodeCondition(w, c);
  w.EndArray();
}

// ---------------------------------------------------------------------------
// Shared: networkTopology.

void DecodeNetworkTopologyFrom(DecodeContext& ctx, const JsonValue& v, NetworkTopologySpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "mode", &out->mode);
  ReadOptionalInt32(ctx, v, "highestTierAllowed", &out->highest_tier_allowed);
  ReadString(ctx, v, "highestTierName", &out->highest_tier_name);
}

void EncodeNetworkTopologyIfSet(JsonWriter& w, const std::optional<NetworkTopologySpec>& nt) {
  if (!nt) return;
  w.Key("networkTopology");
  w.StartObject();
  w.StringFieldIfSet("mode", nt->mode);
  w.OptionalIntField("highestTierAllowed", nt->highest_tier_allowed);
  w.StringFieldIfSet("highestTierName", nt->highest_tier_name);
  w.EndObject();
}

void OptionalResourcesField(JsonWriter& w, std::string_view key,
                            const std::optional<Resources>& r) {
  if (r) w.ResourcesField(key, *r);
}

// ---------------------------------------------------------------------------
// PodGroup.

void DecodePodGroupSpecFrom(DecodeContext& ctx, const JsonValue& v, PodGroupSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadInt32(ctx, v, "minMember", &out->min_member);
  ReadInt32Map(ctx, v, "minTaskMember", &out->min_task_member);
  ReadString(ctx, v, "queue", &out->queue);
  ReadString(ctx, v, "priorityClassName", &out->priority_class_name);
  ReadOptionalResources(ctx, v, "minResources", &out->min_resources);
  ReadOptionalObject(ctx, v, "networkTopology", &out->network_topology, DecodeNetworkTopologyFrom);
}

void DecodePodGroupStatusFrom(DecodeContext& ctx, const JsonValue& v, PodGroupStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "phase", &out->phase);
  ReadArray(ctx, v, "conditions", &out->conditions, DecodeConditionFrom);
  ReadInt32(ctx, v, "running", &out->running);
  ReadInt32(ctx, v, "succeeded", &out->succeeded);
  ReadInt32(ctx, v, "failed", &out->failed);
}

void EncodePodGroupSpec(JsonWriter& w, const PodGroupSpec& spec) {
  w.StartObject();
  w.IntFieldIfSet("minMember", spec.min_member);
  if (!spec.min_task_member.empty()) {
    w.Key("minTaskMember");
    w.StartObject();
    for (const auto& [task, count] : spec.min_task_member) w.IntField(task, count);
    w.EndObject();
  }
  w.StringFieldIfSet("queue", spec.queue);
  w.StringFieldIfSet("priorityClassName", spec.priority_class_name);
  OptionalResourcesField(w, "minResources", spec.min_resources);
  EncodeNetworkTopologyIfSet(w, spec.network_topology);
  w.EndObject();
}

void EncodePodGroupStatus(JsonWriter& w, const PodGroupStatus& s, StatusStyle style) {
  w.StartObject();
  w.StringFieldIfSet("phase", s.phase);
  EncodeConditions(w, s.conditions, style);
  CountField(w, "running", s.running, style);
  CountField(w, "succeeded", s.succeeded, style);
  CountField(w, "failed", s.failed, style);
  w.EndObject();
}

// ---------------------------------------------------------------------------
// Queue.

void DecodeQueueSpecFrom(DecodeContext& ctx, const JsonValue& v, QueueSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadInt32(ctx, v, "weight", &out->weight);
  ReadOptionalResources(ctx, v, "capability", &out->capability);
  ReadOptionalResources(ctx, v, "deserved", &out->deserved);
  ReadObject(ctx, v, "guarantee", &out->guarantee,
             [](DecodeContext& c, const JsonValue& g, std::optional<Resources>* r) {
               ReadOptionalResources(c, g, "resource", r);
             });
  ReadOptionalBool(ctx, v, "reclaimable", &out->reclaimable);
  ReadString(ctx, v, "parent", &out->parent);
  ReadInt32(ctx, v, "priority", &out->priority);
  ReadString(ctx, v, "type", &out->type);
}

void DecodeQueueStatusFrom(DecodeContext& ctx, const JsonValue& v, QueueStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "state", &out->state);
  ReadResources(ctx, v, "allocated", &out->allocated);
  ReadInt32(ctx, v, "pending", &out->pending);
  ReadInt32(ctx, v, "running", &out->running);
  ReadInt32(ctx, v, "inqueue", &out->inqueue);
  ReadInt32(ctx, v, "unknown", &out->unknown);
  ReadInt32(ctx, v, "completed", &out->completed);
}

void EncodeQueueSpec(JsonWriter& w, const QueueSpec& spec) {
  w.StartObject();
  // Written even when 1: an explicit weight reads the same on every Volcano version.
  w.IntField("weight", spec.weight);
  OptionalResourcesField(w, "capability", spec.capability);
  OptionalResourcesField(w, "deserved", spec.deserved);
  if (spec.guarantee) {
    w.Key("guarantee");
    w.StartObject();
    w.ResourcesField("resource", *spec.guarantee);
    w.EndObject();
  }
  w.OptionalBoolField("reclaimable", spec.reclaimable);
  w.StringFieldIfSet("parent", spec.parent);
  w.IntFieldIfSet("priority", spec.priority);
  w.StringFieldIfSet("type", spec.type);
  w.EndObject();
}

void EncodeQueueStatus(JsonWriter& w, const QueueStatus& s, StatusStyle style) {
  w.StartObject();
  // The state is the reconciler's alone (EncodeQueueStatePatch): the
  // extender's patch of the other fields must not carry the state it last
  // read, or it would undo a CloseQueue written meanwhile.
  if (style == StatusStyle::kOmitEmpty) w.StringFieldIfSet("state", s.state);
  if (style == StatusStyle::kPatch) {
    w.ResourcesField("allocated", s.allocated);
  } else {
    w.ResourcesFieldIfSet("allocated", s.allocated);
  }
  CountField(w, "pending", s.pending, style);
  CountField(w, "running", s.running, style);
  CountField(w, "inqueue", s.inqueue, style);
  CountField(w, "unknown", s.unknown, style);
  CountField(w, "completed", s.completed, style);
  w.EndObject();
}

// ---------------------------------------------------------------------------
// Job: decoding.

void DecodePolicyFrom(DecodeContext& ctx, const JsonValue& v, LifecyclePolicy* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "event", &out->event);
  ReadStringList(ctx, v, "events", &out->events);
  ReadOptionalInt32(ctx, v, "exitCode", &out->exit_code);
  ReadString(ctx, v, "action", &out->action);
  ReadOptionalDuration(ctx, v, "timeout", &out->timeout);
}

void DecodeVolumeFrom(DecodeContext& ctx, const JsonValue& v, VolumeSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "mountPath", &out->mount_path);
  ReadString(ctx, v, "volumeClaimName", &out->volume_claim_name);
  ReadRawObject(ctx, v, "volumeClaim", &out->volume_claim_json);
}

void DecodeDependsOnFrom(DecodeContext& ctx, const JsonValue& v, DependsOn* out) {
  if (!BeginObject(ctx, v)) return;
  ReadStringList(ctx, v, "name", &out->name);
  ReadString(ctx, v, "iteration", &out->iteration);
}

// The template is kept verbatim and decoded: metadata and spec only (a
// PodTemplateSpec has nothing else).
void DecodeTemplateFrom(DecodeContext& ctx, const JsonValue& v, TaskSpec* out) {
  if (!BeginObject(ctx, v)) return;
  out->template_json = ToCompactJson(v);
  ReadObject(ctx, v, "metadata", &out->template_pod.meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", &out->template_pod.spec, DecodePodSpecFrom);
}

void DecodeTaskFrom(DecodeContext& ctx, const JsonValue& v, TaskSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadInt32(ctx, v, "replicas", &out->replicas);
  ReadOptionalInt32(ctx, v, "minAvailable", &out->min_available);
  ReadOptionalInt32(ctx, v, "maxRetry", &out->max_retry);
  ReadString(ctx, v, "topologyPolicy", &out->topology_policy);
  ReadArray(ctx, v, "policies", &out->policies, DecodePolicyFrom);
  ReadOptionalObject(ctx, v, "dependsOn", &out->depends_on, DecodeDependsOnFrom);
  ReadObject(ctx, v, "template", out, DecodeTemplateFrom);
}

void DecodeJobSpecFrom(DecodeContext& ctx, const JsonValue& v, JobSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "schedulerName", &out->scheduler_name);
  ReadInt32(ctx, v, "minAvailable", &out->min_available);
  ReadOptionalInt32(ctx, v, "minSuccess", &out->min_success);
  ReadString(ctx, v, "queue", &out->queue);
  ReadInt32(ctx, v, "maxRetry", &out->max_retry);
  ReadOptionalInt32(ctx, v, "ttlSecondsAfterFinished", &out->ttl_seconds_after_finished);
  ReadString(ctx, v, "priorityClassName", &out->priority_class_name);
  ReadOptionalDuration(ctx, v, "runningEstimate", &out->running_estimate);
  ReadOptionalObject(ctx, v, "networkTopology", &out->network_topology, DecodeNetworkTopologyFrom);
  ReadStringListMap(ctx, v, "plugins", &out->plugins);
  ReadArray(ctx, v, "policies", &out->policies, DecodePolicyFrom);
  ReadArray(ctx, v, "volumes", &out->volumes, DecodeVolumeFrom);
  ReadArray(ctx, v, "tasks", &out->tasks, DecodeTaskFrom);
}

void DecodeJobStateFrom(DecodeContext& ctx, const JsonValue& v, JobState* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "phase", &out->phase);
  ReadString(ctx, v, "reason", &out->reason);
  ReadString(ctx, v, "message", &out->message);
  ReadTime(ctx, v, "lastTransitionTime", &out->last_transition_time);
}

void DecodeJobConditionFrom(DecodeContext& ctx, const JsonValue& v, JobCondition* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "status", &out->status);
  ReadTime(ctx, v, "lastTransitionTime", &out->last_transition_time);
}

// taskStatusCount values are TaskState: {"phase": {"Running": 2, ...}}.
void DecodeTaskStateFrom(DecodeContext& ctx, const JsonValue& v,
                         std::map<std::string, int32_t>* out) {
  if (!BeginObject(ctx, v)) return;
  ReadInt32Map(ctx, v, "phase", out);
}

void DecodeJobStatusFrom(DecodeContext& ctx, const JsonValue& v, JobStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "state", &out->state, DecodeJobStateFrom);
  ReadInt32(ctx, v, "minAvailable", &out->min_available);
  ReadInt32(ctx, v, "pending", &out->pending);
  ReadInt32(ctx, v, "running", &out->running);
  ReadInt32(ctx, v, "succeeded", &out->succeeded);
  ReadInt32(ctx, v, "failed", &out->failed);
  ReadInt32(ctx, v, "terminating", &out->terminating);
  ReadInt32(ctx, v, "unknown", &out->unknown);
  ReadInt32(ctx, v, "version", &out->version);
  ReadInt32(ctx, v, "retryCount", &out->retry_count);
  ReadOptionalDuration(ctx, v, "runningDuration", &out->running_duration);
  ReadObjectMap(ctx, v, "taskStatusCount", &out->task_status_count, DecodeTaskStateFrom);
  ReadStringMap(ctx, v, "controlledResources", &out->controlled_resources);
  ReadArray(ctx, v, "conditions", &out->conditions, DecodeJobConditionFrom);
}

// ---------------------------------------------------------------------------
// Job: encoding.

void EncodePolicies(JsonWriter& w, const std::vector<LifecyclePolicy>& policies) {
  if (policies.empty()) return;
  w.Key("policies");
  w.StartArray();
  for (const LifecyclePolicy& p : policies) {
    w.StartObject();
    w.StringFieldIfSet("event", p.event);
    w.StringListFieldIfSet("events", p.events);
    w.OptionalIntField("exitCode", p.exit_code);
    w.StringFieldIfSet("action", p.action);
    w.DurationFieldIfSet("timeout", p.timeout);
    w.EndObject();
  }
  w.EndArray();
}

void EncodeVolumes(JsonWriter& w, const std::vector<VolumeSpec>& volumes) {
  if (volumes.empty()) return;
  w.Key("volumes");
  w.StartArray();
  for (const VolumeSpec& v : volumes) {
    w.StartObject();
    w.StringField("mountPath", v.mount_path);
    w.StringFieldIfSet("volumeClaimName", v.volume_claim_name);
    w.RawFieldIfSet("volumeClaim", v.volume_claim_json);
    w.EndObject();
  }
  w.EndArray();
}

// The user's template verbatim; a template built in code (no template_json)
// is written from template_pod.
void EncodeTemplate(JsonWriter& w, const TaskSpec& task) {
  if (!task.template_json.empty()) {
    w.RawFieldIfSet("template", task.template_json);
    return;
  }
  if (task.template_pod.meta == ObjectMeta{} && task.template_pod.spec == PodSpec{}) return;
  w.Key("template");
  w.StartObject();
  if (task.template_pod.meta != ObjectMeta{}) {
    w.Key("metadata");
    EncodeObjectMeta(w, task.template_pod.meta);
  }
  w.Key("spec");
  EncodePodSpec(w, task.template_pod.spec);
  w.EndObject();
}

void EncodeTask(JsonWriter& w, const TaskSpec& task) {
  w.StartObject();
  w.StringFieldIfSet("name", task.name);
  w.IntField("replicas", task.replicas);
  w.OptionalIntField("minAvailable", task.min_available);
  w.OptionalIntField("maxRetry", task.max_retry);
  w.StringFieldIfSet("topologyPolicy", task.topology_policy);
  EncodePolicies(w, task.policies);
  if (task.depends_on) {
    w.Key("dependsOn");
    w.StartObject();
    w.StringListFieldIfSet("name", task.depends_on->name);
    w.StringFieldIfSet("iteration", task.depends_on->iteration);
    w.EndObject();
  }
  EncodeTemplate(w, task);
  w.EndObject();
}

void EncodePlugins(JsonWriter& w, const std::map<std::string, std::vector<std::string>>& plugins) {
  if (plugins.empty()) return;
  w.Key("plugins");
  w.StartObject();
  // An empty argument list still enables the plugin, so it is written as [].
  for (const auto& [name, args] : plugins) {
    w.Key(name);
    w.StartArray();
    for (const std::string& arg : args) w.String(arg);
    w.EndArray();
  }
  w.EndObject();
}

void EncodeJobSpec(JsonWriter& w, const JobSpec& spec) {
  w.StartObject();
  w.StringFieldIfSet("schedulerName", spec.scheduler_name);
  w.IntFieldIfSet("minAvailable", spec.min_available);
  w.OptionalIntField("minSuccess", spec.min_success);
  EncodeVolumes(w, spec.volumes);
  if (!spec.tasks.empty()) {
    w.Key("tasks");
    w.StartArray();
    for (const TaskSpec& task : spec.tasks) EncodeTask(w, task);
    w.EndArray();
  }
  EncodePolicies(w, spec.policies);
  EncodePlugins(w, spec.plugins);
  w.DurationFieldIfSet("runningEstimate", spec.running_estimate);
  w.StringFieldIfSet("queue", spec.queue);
  w.IntFieldIfSet("maxRetry", spec.max_retry);
  w.OptionalIntField("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished);
  w.StringFieldIfSet("priorityClassName", spec.priority_class_name);
  EncodeNetworkTopologyIfSet(w, spec.network_topology);
  w.EndObject();
}

void EncodeJobState(JsonWriter& w, const JobState& state, StatusStyle style) {
  w.Key("state");
  w.StartObject();
  if (style == StatusStyle::kPatch) {
    // A new phase must not inherit the previous phase's reason and message.
    w.StringField("phase", state.phase);
    w.StringField("reason", state.reason);
    w.StringField("message", state.message);
  } else {
    w.StringFieldIfSet("phase", state.phase);
    w.StringFieldIfSet("reason", state.reason);
    w.StringFieldIfSet("message", state.message);
  }
  w.TimeFieldIfSet("lastTransitionTime", state.last_transition_time);
  w.EndObject();
}

// `removed`: tasks named as null after the counted ones (a merge patch's
// removal); one that `counts` has is left out.
void EncodeTaskStatusCount(JsonWriter& w,
                           const std::map<std::string, std::map<std::string, int32_t>>& counts,
                           StatusStyle style, const std::vector<std::string>& removed = {}) {
  if (counts.empty() && removed.empty() && style == StatusStyle::kOmitEmpty) return;
  w.Key("taskStatusCount");
  w.StartObject();
  for (const auto& [task, phases] : counts) {
    w.Key(task);
    w.StartObject();
    w.Key("phase");
    w.StartObject();
    for (const auto& [phase, count] : phases) w.IntField(phase, count);
    w.EndObject();
    w.EndObject();
  }
  for (const std::string& task : removed) {
    if (counts.contains(task)) continue;
    w.Key(task);
    w.Null();
  }
  w.EndObject();
}

void EncodeJobConditions(JsonWriter& w, const std::vector<JobCondition>& conditions,
                         StatusStyle style) {
  if (conditions.empty() && style == StatusStyle::kOmitEmpty) return;
  w.Key("conditions");
  w.StartArray();
  for (const JobCondition& c : conditions) {
    w.StartObject();
    w.StringField("status", c.status);
    w.TimeFieldIfSet("lastTransitionTime", c.last_transition_time);
    w.EndObject();
  }
  w.EndArray();
}

// `removed_tasks`: as EncodeJobStatusPatchAtVersion's.
void EncodeJobStatus(JsonWriter& w, const JobStatus& s, StatusStyle style,
                     const std::vector<std::string>& removed_tasks) {
  w.StartObject();
  if (style == StatusStyle::kPatch || s.state != JobState{}) EncodeJobState(w, s.state, style);
  CountField(w, "minAvailable", s.min_available, style);
  CountField(w, "pending", s.pending, style);
  CountField(w, "running", s.running, style);
  CountField(w, "succeeded", s.succeeded, style);
  CountField(w, "failed", s.failed, style);
  CountField(w, "terminating", s.terminating, style);
  CountField(w, "unknown", s.unknown, style);
  CountField(w, "version", s.version, style);
  CountField(w, "retryCount", s.retry_count, style);
  w.DurationFieldIfSet("runningDuration", s.running_duration);
  EncodeTaskStatusCount(w, s.task_status_count, style, removed_tasks);
  if (style == StatusStyle::kPatch || !s.controlled_resources.empty()) {
    w.Key("controlledResources");
    w.StartObject();
    for (const auto& [k, v] : s.controlled_resources) w.StringField(k, v);
    w.EndObject();
  }
  EncodeJobConditions(w, s.conditions, style);
  w.EndObject();
}

// {"metadata":{"resourceVersion":RV}, then the caller's members: the
// precondition of a status merge patch.
void StartPatchAtVersion(JsonWriter& w, std::string_view resource_version) {
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.StringField("resourceVersion", resource_version);
  w.EndObject();
}

// "status":{"state":...,"conditions":...}} - the members of a Job state
// patch after the caller's, and the end of the patch.
void WriteJobStateMembers(JsonWriter& w, const JobState& state,
                          const std::vector<JobCondition>& conditions) {
  w.Key("status");
  w.StartObject();
  EncodeJobState(w, state, StatusStyle::kPatch);
  EncodeJobConditions(w, conditions, StatusStyle::kOmitEmpty);
  w.EndObject();
  w.EndObject();
}

template <typename S, typename Fn>
std::string StatusPatch(const S& status, Fn&& encode) {
  JsonWriter w;
  w.StartObject();
  w.Key("status");
  encode(w, status, StatusStyle::kPatch);
  w.EndObject();
  return w.TakeString();
}

}  // namespace

// ---------------------------------------------------------------------------
// PodGroup.

void DecodePodGroupFrom(DecodeContext& ctx, const JsonValue& v, PodGroup* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", &out->spec, DecodePodGroupSpecFrom);
  ReadObject(ctx, v, "status", &out->status, DecodePodGroupStatusFrom);
}

StatusOr<PodGroup> DecodePodGroup(std::string_view json) {
  return DecodeDocument<PodGroup>(json, "decode PodGroup", DecodePodGroupFrom);
}

StatusOr<ObjectList<PodGroup>> DecodePodGroupList(std::string_view json) {
  return DecodeDocument<ObjectList<PodGroup>>(
      json, "decode PodGroupList",
      [](DecodeContext& ctx, const JsonValue& v, ObjectList<PodGroup>* out) {
        DecodeListFrom(ctx, v, out, DecodePodGroupFrom);
      });
}

std::string EncodePodGroup(const PodGroup& pg) {
  JsonWriter w;
  w.StartObject();
  WriteHeader(w, kSchedulingApiVersion, "PodGroup", pg.meta);
  w.Key("spec");
  EncodePodGroupSpec(w, pg.spec);
  if (pg.status != PodGroupStatus{}) {
    w.Key("status");
    EncodePodGroupStatus(w, pg.status, StatusStyle::kOmitEmpty);
  }
  w.EndObject();
  return w.TakeString();
}

std::string EncodePodGroupStatusPatch(const PodGroupStatus& status) {
  return StatusPatch(status, EncodePodGroupStatus);
}

StatusOr<PodGroupStatus> DecodePodGroupStatusOf(std::string_view pod_group_json) {
  return DecodeDocument<PodGroupStatus>(
      pod_group_json, "decode PodGroup status",
      [](DecodeContext& ctx, const JsonValue& v, PodGroupStatus* out) {
        ReadObject(ctx, v, "status", out, DecodePodGroupStatusFrom);
      });
}

std::string EncodePodGroupConditionsPatch(std::string_view phase,
                                          const std::vector<Condition>& conditions) {
  JsonWriter w;
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.StringFieldIfSet("phase", phase);
  EncodeConditions(w, conditions, StatusStyle::kPatch);
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

StatusOr<GangPlacement> DecodeGangPlacement(std::string_view json) {
  StatusOr<GangPlacement> placement =
      DecodeDocument<GangPlacement>(json, "decode " + std::string(kAnnotationGangPlan),
                                    [](DecodeContext& ctx, const JsonValue& v, GangPlacement* out) {
                                      if (!BeginObject(ctx, v)) return;
                                      ReadString(ctx, v, "podGroup", &out->pod_group);
                                      ReadStringMap(ctx, v, "members", &out->members);
                                    });
  if (!placement.ok()) return placement;
  if (placement->pod_group.empty()) {
    return InvalidArgumentError("decode " + std::string(kAnnotationGangPlan) +
                                ": podGroup is empty");
  }
  for (const auto& [pod, node] : placement->members) {
    if (pod.empty() || node.empty()) {
      return InvalidArgumentError("decode " + std::string(kAnnotationGangPlan) + ": members[\"" +
                                  pod + "\"]: empty pod or node name");
    }
  }
  return placement;
}

std::string EncodeGangPlacement(const GangPlacement& placement) {
  JsonWriter w;
  w.StartObject();
  w.StringField("podGroup", placement.pod_group);
  w.Key("members");
  w.StartObject();
  for (const auto& [pod, node] : placement.members) w.StringField(pod, node);
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

// ---------------------------------------------------------------------------
// Queue.

void DecodeQueueFrom(DecodeContext& ctx, const JsonValue& v, Queue* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", &out->spec, DecodeQueueSpecFrom);
  ReadObject(ctx, v, "status", &out->status, DecodeQueueStatusFrom);
}

StatusOr<Queue> DecodeQueue(std::string_view json) {
  return DecodeDocument<Queue>(json, "decode Queue", DecodeQueueFrom);
}

StatusOr<ObjectList<Queue>> DecodeQueueList(std::string_view json) {
  return DecodeDocument<ObjectList<Queue>>(
      json, "decode QueueList", [](DecodeContext& ctx, const JsonValue& v, ObjectList<Queue>* out) {
        DecodeListFrom(ctx, v, out, DecodeQueueFrom);
      });
}

std::string EncodeQueue(const Queue& queue) {
  JsonWriter w;
  w.StartObject();
  WriteHeader(w, kSchedulingApiVersion, "Queue", queue.meta);
  w.Key("spec");
  EncodeQueueSpec(w, queue.spec);
  if (queue.status != QueueStatus{}) {
    w.Key("status");
    EncodeQueueStatus(w, queue.status, StatusStyle::kOmitEmpty);
  }
  w.EndObject();
  return w.TakeString();
}

std::string EncodeQueueStatusPatch(const QueueStatus& status) {
  return StatusPatch(status, EncodeQueueStatus);
}

std::string EncodeQueueStatePatch(std::string_view state) {
  JsonWriter w;
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.StringField("state", state);
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

// ---------------------------------------------------------------------------
// Job.

void DecodeJobFrom(DecodeContext& ctx, const JsonValue& v, Job* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", &out->spec, DecodeJobSpecFrom);
  ReadObject(ctx, v, "status", &out->status, DecodeJobStatusFrom);
}

StatusOr<Job> DecodeJob(std::string_view json) {
  return DecodeDocument<Job>(json, "decode Job", DecodeJobFrom);
}

StatusOr<ObjectList<Job>> DecodeJobList(std::string_view json) {
  return DecodeDocument<ObjectList<Job>>(
      json, "decode JobList", [](DecodeContext& ctx, const JsonValue& v, ObjectList<Job>* out) {
        DecodeListFrom(ctx, v, out, DecodeJobFrom);
      });
}

std::string EncodeJob(const Job& job) {
  JsonWriter w;
  w.StartObject();
  WriteHeader(w, kBatchApiVersion, "Job", job.meta);
  w.Key("spec");
  EncodeJobSpec(w, job.spec);
  if (job.status != JobStatus{}) {
    w.Key("status");
    EncodeJobStatus(w, job.status, StatusStyle::kOmitEmpty, {});
  }
  w.EndObject();
  return w.TakeString();
}

std::string EncodeJobStatusPatch(const JobStatus& status) {
  return StatusPatch(status, [](JsonWriter& w, const JobStatus& s, StatusStyle style) {
    EncodeJobStatus(w, s, style, {});
  });
}

StatusOr<JobStatus> DecodeJobStatusOf(std::string_view job_json) {
  return DecodeDocument<JobStatus>(job_json, "decode Job status",
                                   [](DecodeContext& ctx, const JsonValue& v, JobStatus* out) {
                                     ReadObject(ctx, v, "status", out, DecodeJobStatusFrom);
                                   });
}

std::string EncodeJobStatusPatchAtVersion(std::string_view resource_version,
                                          const JobStatus& status,
                                          const std::vector<std::string>& removed_tasks) {
  JsonWriter w;
  StartPatchAtVersion(w, resource_version);
  w.Key("status");
  EncodeJobStatus(w, status, StatusStyle::kPatch, removed_tasks);
  w.EndObject();
  return w.TakeString();
}

std::string EncodeJobStatePatchAtVersion(std::string_view resource_version, const JobState& state,
                                         const std::vector<JobCondition>& conditions) {
  JsonWriter w;
  StartPatchAtVersion(w, resource_version);
  WriteJobStateMembers(w, state, conditions);
  return w.TakeString();
}

std::string EncodeJobStatePatch(const JobState& state,
                                const std::vector<JobCondition>& conditions) {
  JsonWriter w;
  w.StartObject();
  WriteJobStateMembers(w, state, conditions);
  return w.TakeString();
}

}  // namespace muster::kube
