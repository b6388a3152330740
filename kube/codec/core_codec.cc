#include "kube/codec/core_codec.h"

#include <utility>

#include "kube/codec/codec_helpers.h"

namespace muster::kube {

// ---------------------------------------------------------------------------
// Decoding: small pieces.

void DecodeOwnerReferenceFrom(DecodeContext& ctx, const JsonValue& v, OwnerReference* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "apiVersion", &out->api_version);
  ReadString(ctx, v, "kind", &out->kind);
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "uid", &out->uid);
  ReadBool(ctx, v, "controller", &out->controller);
  ReadBool(ctx, v, "blockOwnerDeletion", &out->block_owner_deletion);
}

namespace {

void DecodeResourceRequirementsFrom(DecodeContext& ctx, const JsonValue& v,
                                    ResourceRequirements* out) {
  if (!BeginObject(ctx, v)) return;
  ReadResources(ctx, v, "requests", &out->requests);
  ReadResources(ctx, v, "limits", &out->limits);
}

void DecodeContainerFrom(DecodeContext& ctx, const JsonValue& v, Container* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "image", &out->image);
  ReadObject(ctx, v, "resources", &out->resources, DecodeResourceRequirementsFrom);
  ReadString(ctx, v, "restartPolicy", &out->restart_policy);
}

void DecodeTolerationFrom(DecodeContext& ctx, const JsonValue& v, Toleration* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "key", &out->key);
  ReadString(ctx, v, "operator", &out->op);
  ReadString(ctx, v, "value", &out->value);
  ReadString(ctx, v, "effect", &out->effect);
  ReadOptionalInt64(ctx, v, "tolerationSeconds", &out->toleration_seconds);
}

void DecodeRequirementFrom(DecodeContext& ctx, const JsonValue& v, NodeSelectorRequirement* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "key", &out->key);
  ReadString(ctx, v, "operator", &out->op);
  ReadStringList(ctx, v, "values", &out->values);
}

void DecodeNodeSelectorTermFrom(DecodeContext& ctx, const JsonValue& v, NodeSelectorTerm* out) {
  if (!BeginObject(ctx, v)) return;
  ReadArray(ctx, v, "matchExpressions", &out->match_expressions, DecodeRequirementFrom);
  ReadArray(ctx, v, "matchFields", &out->match_fields, DecodeRequirementFrom);
}

void DecodePreferredTermFrom(DecodeContext& ctx, const JsonValue& v, PreferredSchedulingTerm* out) {
  if (!BeginObject(ctx, v)) return;
  ReadInt32(ctx, v, "weight", &out->weight);
  ReadObject(ctx, v, "preference", &out->preference, DecodeNodeSelectorTermFrom);
}

void DecodeNodeAffinityFrom(DecodeContext& ctx, const JsonValue& v, NodeAffinity* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "requiredDuringSchedulingIgnoredDuringExecution", &out->required,
             [](DecodeContext& c, const JsonValue& selector, std::vector<NodeSelectorTerm>* terms) {
               ReadArray(c, selector, "nodeSelectorTerms", terms, DecodeNodeSelectorTermFrom);
             });
  ReadArray(ctx, v, "preferredDuringSchedulingIgnoredDuringExecution", &out->preferred,
            DecodePreferredTermFrom);
}

void DecodeAffinityFrom(DecodeContext& ctx, const JsonValue& v, Affinity* out) {
  if (!BeginObject(ctx, v)) return;
  ReadOptionalObject(ctx, v, "nodeAffinity", &out->node_affinity, DecodeNodeAffinityFrom);
  ReadRawObject(ctx, v, "podAffinity", &out->pod_affinity_json);
  ReadRawObject(ctx, v, "podAntiAffinity", &out->pod_anti_affinity_json);
}

void DecodeSchedulingGateFrom(DecodeContext& ctx, const JsonValue& v, std::string* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", out);
}

// Reads a containerStatuses[].state object: which state it is, its reason and
// (when terminated) its exit code.
void DecodeContainerStateFrom(DecodeContext& ctx, const JsonValue& v, ContainerStatus* out) {
  if (!BeginObject(ctx, v)) return;
  for (std::string_view state : {"waiting", "running", "terminated"}) {
    const JsonValue* detail = Member(ctx, v, state);
    if (detail == nullptr) continue;
    auto scope = ctx.Key(state);
    if (!ExpectObject(ctx, *detail)) return;
    out->state = std::string(state);
    ReadString(ctx, *detail, "reason", &out->reason);
    if (state == "terminated") ReadOptionalInt32(ctx, *detail, "exitCode", &out->exit_code);
    return;
  }
}

void DecodeLastStateFrom(DecodeContext& ctx, const JsonValue& v, ContainerStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "terminated", out,
             [](DecodeContext& c, const JsonValue& t, ContainerStatus* s) {
               ReadOptionalInt32(c, t, "exitCode", &s->last_exit_code);
             });
}

void DecodeContainerStatusFrom(DecodeContext& ctx, const JsonValue& v, ContainerStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadBool(ctx, v, "ready", &out->ready);
  ReadInt32(ctx, v, "restartCount", &out->restart_count);
  ReadObject(ctx, v, "state", out, DecodeContainerStateFrom);
  ReadObject(ctx, v, "lastState", out, DecodeLastStateFrom);
}

void DecodePodStatusFrom(DecodeContext& ctx, const JsonValue& v, PodStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "phase", &out->phase);
  ReadString(ctx, v, "reason", &out->reason);
  ReadString(ctx, v, "message", &out->message);
  ReadString(ctx, v, "nominatedNodeName", &out->nominated_node_name);
  ReadString(ctx, v, "qosClass", &out->qos_class);
  ReadArray(ctx, v, "conditions", &out->conditions, DecodeConditionFrom);
  ReadArray(ctx, v, "initContainerStatuses", &out->init_container_statuses,
            DecodeContainerStatusFrom);
  ReadArray(ctx, v, "containerStatuses", &out->container_statuses, DecodeContainerStatusFrom);
}

void DecodeTaintFrom(DecodeContext& ctx, const JsonValue& v, Taint* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "key", &out->key);
  ReadString(ctx, v, "value", &out->value);
  ReadString(ctx, v, "effect", &out->effect);
  ReadTime(ctx, v, "timeAdded", &out->time_added);
}

void DecodeNodeAddressFrom(DecodeContext& ctx, const JsonValue& v, NodeAddress* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "type", &out->type);
  ReadString(ctx, v, "address", &out->address);
}

void DecodeNodeSpecFrom(DecodeContext& ctx, const JsonValue& v, Node* out) {
  if (!BeginObject(ctx, v)) return;
  ReadBool(ctx, v, "unschedulable", &out->unschedulable);
  ReadArray(ctx, v, "taints", &out->taints, DecodeTaintFrom);
  ReadString(ctx, v, "providerID", &out->provider_id);
}

void DecodeNodeStatusFrom(DecodeContext& ctx, const JsonValue& v, Node* out) {
  if (!BeginObject(ctx, v)) return;
  ReadResources(ctx, v, "capacity", &out->capacity);
  ReadResources(ctx, v, "allocatable", &out->allocatable);
  ReadArray(ctx, v, "conditions", &out->conditions, DecodeConditionFrom);
  ReadArray(ctx, v, "addresses", &out->addresses, DecodeNodeAddressFrom);
}

// Binding and Eviction metadata: only what their subresources read, which is
// also all their encoders write.
void DecodeBindingMetaFrom(DecodeContext& ctx, const JsonValue& v, ObjectMeta* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "namespace", &out->namespace_);
  ReadString(ctx, v, "uid", &out->uid);
  ReadStringMap(ctx, v, "annotations", &out->annotations);
}

void DecodeEvictionMetaFrom(DecodeContext& ctx, const JsonValue& v, ObjectMeta* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "namespace", &out->namespace_);
}

void DecodeBindingFrom(DecodeContext& ctx, const JsonValue& v, Binding* out) {
  ReadObject(ctx, v, "metadata", &out->meta, DecodeBindingMetaFrom);
  ReadObject(ctx, v, "target", &out->target_node,
             [](DecodeContext& c, const JsonValue& t, std::string* node) {
               ReadString(c, t, "name", node);
             });
}

void DecodeDeleteOptionsFrom(DecodeContext& ctx, const JsonValue& v, Eviction* out) {
  if (!BeginObject(ctx, v)) return;
  ReadOptionalInt64(ctx, v, "gracePeriodSeconds", &out->grace_period_seconds);
  ReadObject(
      ctx, v, "preconditions", &out->precondition_uid,
      [](DecodeContext& c, const JsonValue& p, std::string* uid) { ReadString(c, p, "uid", uid); });
}

void DecodeEvictionFrom(DecodeContext& ctx, const JsonValue& v, Eviction* out) {
  ReadObject(ctx, v, "metadata", &out->meta, DecodeEvictionMetaFrom);
  ReadObject(ctx, v, "deleteOptions", out, DecodeDeleteOptionsFrom);
}

void DecodeObjectReferenceFrom(DecodeContext& ctx, const JsonValue& v, ObjectReference* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "apiVersion", &out->api_version);
  ReadString(ctx, v, "kind", &out->kind);
  ReadString(ctx, v, "namespace", &out->namespace_);
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "uid", &out->uid);
  ReadString(ctx, v, "resourceVersion", &out->resource_version);
  ReadString(ctx, v, "fieldPath", &out->field_path);
}

void DecodeEventSourceFrom(DecodeContext& ctx, const JsonValue& v, Event* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "component", &out->source_component);
  ReadString(ctx, v, "host", &out->source_host);
}

void DecodeEventFrom(DecodeContext& ctx, const JsonValue& v, Event* out) {
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "involvedObject", &out->involved_object, DecodeObjectReferenceFrom);
  ReadString(ctx, v, "reason", &out->reason);
  ReadString(ctx, v, "message", &out->message);
  ReadString(ctx, v, "type", &out->type);
  ReadObject(ctx, v, "source", out, DecodeEventSourceFrom);
  ReadTime(ctx, v, "firstTimestamp", &out->first_timestamp);
  ReadTime(ctx, v, "lastTimestamp", &out->last_timestamp);
  ReadTime(ctx, v, "eventTime", &out->event_time);
  ReadInt32(ctx, v, "count", &out->count);
  ReadString(ctx, v, "action", &out->action);
  ReadString(ctx, v, "reportingComponent", &out->reporting_component);
  ReadString(ctx, v, "reportingInstance", &out->reporting_instance);
}

}  // namespace

// ---------------------------------------------------------------------------
// Encoding: small pieces. Each writes one JSON value.

void EncodeOwnerReference(JsonWriter& w, const OwnerReference& ref) {
  w.StartObject();
  w.StringField("apiVersion", ref.api_version);
  w.StringField("kind", ref.kind);
  w.StringField("name", ref.name);
  w.StringField("uid", ref.uid);
  w.BoolFieldIfSet("controller", ref.controller);
  w.BoolFieldIfSet("blockOwnerDeletion", ref.block_owner_deletion);
  w.EndObject();
}

namespace {

void EncodeContainer(JsonWriter& w, const Container& c) {
  w.StartObject();
  w.StringField("name", c.name);
  w.StringFieldIfSet("image", c.image);
  if (!c.resources.requests.empty() || !c.resources.limits.empty()) {
    w.Key("resources");
    w.StartObject();
    w.ResourcesFieldIfSet("limits", c.resources.limits);
    w.ResourcesFieldIfSet("requests", c.resources.requests);
    w.EndObject();
  }
  w.StringFieldIfSet("restartPolicy", c.restart_policy);
  w.EndObject();
}

void EncodeContainersIfSet(JsonWriter& w, std::string_view key, const std::vector<Container>& cs) {
  if (cs.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const Container& c : cs) EncodeContainer(w, c);
  w.EndArray();
}

void EncodeRequirementsIfSet(JsonWriter& w, std::string_view key,
                             const std::vector<NodeSelectorRequirement>& reqs) {
  if (reqs.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const NodeSelectorRequirement& r : reqs) {
    w.StartObject();
    w.StringField("key", r.key);
    w.StringField("operator", r.op);
    w.StringListFieldIfSet("values", r.values);
    w.EndObject();
  }
  w.EndArray();
}

void EncodeNodeSelectorTerm(JsonWriter& w, const NodeSelectorTerm& term) {
  w.StartObject();
  EncodeRequirementsIfSet(w, "matchExpressions", term.match_expressions);
  EncodeRequirementsIfSet(w, "matchFields", term.match_fields);
  w.EndObject();
}

void EncodeNodeAffinity(JsonWriter& w, const NodeAffinity& na) {
  w.StartObject();
  if (!na.required.empty()) {
    w.Key("requiredDuringSchedulingIgnoredDuringExecution");
    w.StartObject();
    w.Key("nodeSelectorTerms");
    w.StartArray();
    for (const NodeSelectorTerm& term : na.required) EncodeNodeSelectorTerm(w, term);
    w.EndArray();
    w.EndObject();
  }
  if (!na.preferred.empty()) {
    w.Key("preferredDuringSchedulingIgnoredDuringExecution");
    w.StartArray();
    for (const PreferredSchedulingTerm& p : na.preferred) {
      w.StartObject();
      w.IntField("weight", p.weight);
      w.Key("preference");
      EncodeNodeSelectorTerm(w, p.preference);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void EncodeAffinity(JsonWriter& w, const Affinity& a) {
  w.StartObject();
  if (a.node_affinity) {
    w.Key("nodeAffinity");
    EncodeNodeAffinity(w, *a.node_affinity);
  }
  w.RawFieldIfSet("podAffinity", a.pod_affinity_json);
  w.RawFieldIfSet("podAntiAffinity", a.pod_anti_affinity_json);
  w.EndObject();
}

void EncodeToleration(JsonWriter& w, const Toleration& t) {
  w.StartObject();
  w.StringFieldIfSet("key", t.key);
  w.StringFieldIfSet("operator", t.op);
  w.StringFieldIfSet("value", t.value);
  w.StringFieldIfSet("effect", t.effect);
  w.OptionalIntField("tolerationSeconds", t.toleration_seconds);
  w.EndObject();
}

void EncodeContainerStatus(JsonWriter& w, const ContainerStatus& s) {
  w.StartObject();
  w.StringField("name", s.name);
  w.Key("ready");
  w.Bool(s.ready);
  w.IntField("restartCount", s.restart_count);
  if (!s.state.empty()) {
    w.Key("state");
    w.StartObject();
    w.Key(s.state);
    w.StartObject();
    if (s.state == "terminated") w.OptionalIntField("exitCode", s.exit_code);
    w.StringFieldIfSet("reason", s.reason);
    w.EndObject();
    w.EndObject();
  }
  if (s.last_exit_code) {
    w.Key("lastState");
    w.StartObject();
    w.Key("terminated");
    w.StartObject();
    w.IntField("exitCode", *s.last_exit_code);
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
}

void EncodeConditionsIfSet(JsonWriter& w, const std::vector<Condition>& conditions) {
  if (conditions.empty()) return;
  w.Key("conditions");
  w.StartArray();
  for (const Condition& c : conditions) EncodeCondition(w, c);
  w.EndArray();
}

void EncodeContainerStatusesIfSet(JsonWriter& w, std::string_view key,
                                  const std::vector<ContainerStatus>& statuses) {
  if (statuses.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const ContainerStatus& s : statuses) EncodeContainerStatus(w, s);
  w.EndArray();
}

void EncodePodStatus(JsonWriter& w, const PodStatus& s) {
  w.StartObject();
  w.StringFieldIfSet("phase", s.phase);
  w.StringFieldIfSet("reason", s.reason);
  w.StringFieldIfSet("message", s.message);
  w.StringFieldIfSet("nominatedNodeName", s.nominated_node_name);
  w.StringFieldIfSet("qosClass", s.qos_class);
  EncodeConditionsIfSet(w, s.conditions);
  EncodeContainerStatusesIfSet(w, "initContainerStatuses", s.init_container_statuses);
  EncodeContainerStatusesIfSet(w, "containerStatuses", s.container_statuses);
  w.EndObject();
}

void EncodeNodeSpec(JsonWriter& w, const Node& node) {
  w.StartObject();
  w.StringFieldIfSet("providerID", node.provider_id);
  if (!node.taints.empty()) {
    w.Key("taints");
    w.StartArray();
    for (const Taint& t : node.taints) {
      w.StartObject();
      w.StringField("key", t.key);
      w.StringFieldIfSet("value", t.value);
      w.StringField("effect", t.effect);
      w.TimeFieldIfSet("timeAdded", t.time_added);
      w.EndObject();
    }
    w.EndArray();
  }
  w.BoolFieldIfSet("unschedulable", node.unschedulable);
  w.EndObject();
}

void EncodeNodeStatus(JsonWriter& w, const Node& node) {
  w.StartObject();
  w.ResourcesFieldIfSet("capacity", node.capacity);
  w.ResourcesFieldIfSet("allocatable", node.allocatable);
  EncodeConditionsIfSet(w, node.conditions);
  if (!node.addresses.empty()) {
    w.Key("addresses");
    w.StartArray();
    for (const NodeAddress& a : node.addresses) {
      w.StartObject();
      w.StringField("type", a.type);
      w.StringField("address", a.address);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void EncodeObjectReference(JsonWriter& w, const ObjectReference& ref) {
  w.StartObject();
  w.StringFieldIfSet("kind", ref.kind);
  w.StringFieldIfSet("namespace", ref.namespace_);
  w.StringFieldIfSet("name", ref.name);
  w.StringFieldIfSet("uid", ref.uid);
  w.StringFieldIfSet("apiVersion", ref.api_version);
  w.StringFieldIfSet("resourceVersion", ref.resource_version);
  w.StringFieldIfSet("fieldPath", ref.field_path);
  w.EndObject();
}

}  // namespace

// ---------------------------------------------------------------------------
// ObjectMeta and Condition.

void DecodeObjectMetaFrom(DecodeContext& ctx, const JsonValue& v, ObjectMeta* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "name", &out->name);
  ReadString(ctx, v, "generateName", &out->generate_name);
  ReadString(ctx, v, "namespace", &out->namespace_);
  ReadString(ctx, v, "uid", &out->uid);
  ReadString(ctx, v, "resourceVersion", &out->resource_version);
  ReadInt64(ctx, v, "generation", &out->generation);
  ReadTime(ctx, v, "creationTimestamp", &out->creation_timestamp);
  ReadOptionalTime(ctx, v, "deletionTimestamp", &out->deletion_timestamp);
  ReadStringMap(ctx, v, "labels", &out->labels);
  ReadStringMap(ctx, v, "annotations", &out->annotations);
  ReadArray(ctx, v, "ownerReferences", &out->owner_references, DecodeOwnerReferenceFrom);
  ReadStringList(ctx, v, "finalizers", &out->finalizers);
}

ObjectMeta DecodeObjectIdentity(std::string_view json) {
  ObjectMeta meta;
  rapidjson::Document doc;
  if (!ParseDocument(json, &doc).ok() || !doc.IsObject()) return meta;
  DecodeContext root;
  const JsonValue* m = Member(root, doc, "metadata");
  if (m == nullptr || !m->IsObject()) return meta;
  // A context per field: one of the wrong type does not stop the others.
  auto read = [m](std::string_view key, std::string* out) {
    DecodeContext ctx;
    if (!ReadString(ctx, *m, key, out)) out->clear();
  };
  read("namespace", &meta.namespace_);
  read("name", &meta.name);
  read("uid", &meta.uid);
  read("resourceVersion", &meta.resource_version);
  DecodeContext ctx;
  if (!ReadInt64(ctx, *m, "generation", &meta.generation)) meta.generation = 0;
  return meta;
}

void EncodeObjectMeta(JsonWriter& w, const ObjectMeta& meta) {
  w.StartObject();
  w.StringFieldIfSet("name", meta.name);
  w.StringFieldIfSet("generateName", meta.generate_name);
  w.StringFieldIfSet("namespace", meta.namespace_);
  w.StringFieldIfSet("uid", meta.uid);
  w.StringFieldIfSet("resourceVersion", meta.resource_version);
  w.IntFieldIfSet("generation", meta.generation);
  w.TimeFieldIfSet("creationTimestamp", meta.creation_timestamp);
  // Written even at the epoch: presence, not the value, says "being deleted".
  if (meta.deletion_timestamp) w.TimeField("deletionTimestamp", *meta.deletion_timestamp);
  w.StringMapFieldIfSet("labels", meta.labels);
  w.StringMapFieldIfSet("annotations", meta.annotations);
  if (!meta.owner_references.empty()) {
    w.Key("ownerReferences");
    w.StartArray();
    for (const OwnerReference& ref : meta.owner_references) EncodeOwnerReference(w, ref);
    w.EndArray();
  }
  w.StringListFieldIfSet("finalizers", meta.finalizers);
  w.EndObject();
}

void DecodeConditionFrom(DecodeContext& ctx, const JsonValue& v, Condition* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "type", &out->type);
  ReadString(ctx, v, "status", &out->status);
  ReadString(ctx, v, "reason", &out->reason);
  ReadString(ctx, v, "message", &out->message);
  ReadTime(ctx, v, "lastTransitionTime", &out->last_transition_time);
  ReadTime(ctx, v, "lastProbeTime", &out->last_probe_time);
  ReadTime(ctx, v, "lastHeartbeatTime", &out->last_heartbeat_time);
  ReadString(ctx, v, "transitionID", &out->transition_id);
}

void EncodeCondition(JsonWriter& w, const Condition& c) {
  w.StartObject();
  w.StringField("type", c.type);
  w.StringField("status", c.status);
  w.TimeFieldIfSet("lastProbeTime", c.last_probe_time);
  w.TimeFieldIfSet("lastHeartbeatTime", c.last_heartbeat_time);
  w.TimeFieldIfSet("lastTransitionTime", c.last_transition_time);
  w.StringFieldIfSet("reason", c.reason);
  w.StringFieldIfSet("message", c.message);
  w.StringFieldIfSet("transitionID", c.transition_id);
  w.EndObject();
}

// ---------------------------------------------------------------------------
// Pod.

void DecodeSchedulingGroupFrom(DecodeContext& ctx, const JsonValue& v, std::string* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "podGroupName", out);
}

void DecodePodSpecFrom(DecodeContext& ctx, const JsonValue& v, PodSpec* out) {
  if (!BeginObject(ctx, v)) return;
  ReadArray(ctx, v, "initContainers", &out->init_containers, DecodeContainerFrom);
  ReadArray(ctx, v, "containers", &out->containers, DecodeContainerFrom);
  ReadResources(ctx, v, "overhead", &out->overhead);
  ReadString(ctx, v, "nodeName", &out->node_name);
  ReadString(ctx, v, "schedulerName", &out->scheduler_name);
  ReadOptionalInt32(ctx, v, "priority", &out->priority);
  ReadString(ctx, v, "priorityClassName", &out->priority_class_name);
  ReadString(ctx, v, "restartPolicy", &out->restart_policy);
  ReadStringMap(ctx, v, "nodeSelector", &out->node_selector);
  ReadOptionalObject(ctx, v, "affinity", &out->affinity, DecodeAffinityFrom);
  ReadArray(ctx, v, "tolerations", &out->tolerations, DecodeTolerationFrom);
  ReadArray(ctx, v, "schedulingGates", &out->scheduling_gates, DecodeSchedulingGateFrom);
  ReadObject(ctx, v, "schedulingGroup", &out->scheduling_group, DecodeSchedulingGroupFrom);
}

void DecodePodFrom(DecodeContext& ctx, const JsonValue& v, Pod* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", &out->spec, DecodePodSpecFrom);
  ReadObject(ctx, v, "status", &out->status, DecodePodStatusFrom);
}

StatusOr<Pod> DecodePod(std::string_view json) {
  return DecodeDocument<Pod>(json, "decode Pod", DecodePodFrom);
}

StatusOr<ObjectList<Pod>> DecodePodList(std::string_view json) {
  return DecodeDocument<ObjectList<Pod>>(
      json, "decode PodList", [](DecodeContext& ctx, const JsonValue& v, ObjectList<Pod>* out) {
        DecodeListFrom(ctx, v, out, DecodePodFrom);
      });
}

void EncodePodSpec(JsonWriter& w, const PodSpec& spec) {
  w.StartObject();
  EncodeContainersIfSet(w, "initContainers", spec.init_containers);
  EncodeContainersIfSet(w, "containers", spec.containers);
  w.ResourcesFieldIfSet("overhead", spec.overhead);
  w.StringFieldIfSet("restartPolicy", spec.restart_policy);
  w.StringMapFieldIfSet("nodeSelector", spec.node_selector);
  w.StringFieldIfSet("nodeName", spec.node_name);
  if (spec.affinity) {
    w.Key("affinity");
    EncodeAffinity(w, *spec.affinity);
  }
  w.StringFieldIfSet("schedulerName", spec.scheduler_name);
  if (!spec.tolerations.empty()) {
    w.Key("tolerations");
    w.StartArray();
    for (const Toleration& t : spec.tolerations) EncodeToleration(w, t);
    w.EndArray();
  }
  w.StringFieldIfSet("priorityClassName", spec.priority_class_name);
  w.OptionalIntField("priority", spec.priority);
  if (!spec.scheduling_gates.empty()) {
    w.Key("schedulingGates");
    WriteSchedulingGates(w, spec.scheduling_gates);
  }
  if (!spec.scheduling_group.empty()) {
    w.Key("schedulingGroup");
    w.StartObject();
    w.StringField("podGroupName", spec.scheduling_group);
    w.EndObject();
  }
  w.EndObject();
}

void EncodePodTo(JsonWriter& w, const Pod& pod) {
  w.StartObject();
  WriteTypeMeta(w, "v1", "Pod");
  w.Key("metadata");
  EncodeObjectMeta(w, pod.meta);
  w.Key("spec");
  EncodePodSpec(w, pod.spec);
  if (pod.status != PodStatus{}) {
    w.Key("status");
    EncodePodStatus(w, pod.status);
  }
  w.EndObject();
}

std::string EncodePod(const Pod& pod) {
  JsonWriter w;
  EncodePodTo(w, pod);
  return w.TakeString();
}

// ---------------------------------------------------------------------------
// Node.

void DecodeNodeFrom(DecodeContext& ctx, const JsonValue& v, Node* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", out, DecodeNodeSpecFrom);
  ReadObject(ctx, v, "status", out, DecodeNodeStatusFrom);
}

StatusOr<Node> DecodeNode(std::string_view json) {
  return DecodeDocument<Node>(json, "decode Node", DecodeNodeFrom);
}

StatusOr<ObjectList<Node>> DecodeNodeList(std::string_view json) {
  return DecodeDocument<ObjectList<Node>>(
      json, "decode NodeList", [](DecodeContext& ctx, const JsonValue& v, ObjectList<Node>* out) {
        DecodeListFrom(ctx, v, out, DecodeNodeFrom);
      });
}

void EncodeNodeTo(JsonWriter& w, const Node& node) {
  w.StartObject();
  WriteTypeMeta(w, "v1", "Node");
  w.Key("metadata");
  EncodeObjectMeta(w, node.meta);
  w.Key("spec");
  EncodeNodeSpec(w, node);
  w.Key("status");
  EncodeNodeStatus(w, node);
  w.EndObject();
}

std::string EncodeNode(const Node& node) {
  JsonWriter w;
  EncodeNodeTo(w, node);
  return w.TakeString();
}

// ---------------------------------------------------------------------------
// Binding, Eviction, Event.

StatusOr<Binding> DecodeBinding(std::string_view json) {
  return DecodeDocument<Binding>(json, "decode Binding", DecodeBindingFrom);
}

std::string EncodeBinding(const Binding& binding) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, "v1", "Binding");
  // Only what the pods/binding subresource reads: identity, the uid
  // precondition and the annotations it merges into the pod.
  w.Key("metadata");
  w.StartObject();
  w.StringField("name", binding.meta.name);
  w.StringFieldIfSet("namespace", binding.meta.namespace_);
  w.StringFieldIfSet("uid", binding.meta.uid);
  w.StringMapFieldIfSet("annotations", binding.meta.annotations);
  w.EndObject();
  w.Key("target");
  w.StartObject();
  WriteTypeMeta(w, "v1", "Node");
  w.StringField("name", binding.target_node);
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

StatusOr<Eviction> DecodeEviction(std::string_view json) {
  return DecodeDocument<Eviction>(json, "decode Eviction", DecodeEvictionFrom);
}

std::string EncodeEviction(const Eviction& eviction) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, "policy/v1", "Eviction");
  w.Key("metadata");
  w.StartObject();
  w.StringField("name", eviction.meta.name);
  w.StringFieldIfSet("namespace", eviction.meta.namespace_);
  w.EndObject();
  if (eviction.grace_period_seconds || !eviction.precondition_uid.empty()) {
    w.Key("deleteOptions");
    w.StartObject();
    w.OptionalIntField("gracePeriodSeconds", eviction.grace_period_seconds);
    if (!eviction.precondition_uid.empty()) {
      w.Key("preconditions");
      w.StartObject();
      w.StringField("uid", eviction.precondition_uid);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  return w.TakeString();
}

StatusOr<Event> DecodeEvent(std::string_view json) {
  return DecodeDocument<Event>(json, "decode Event", DecodeEventFrom);
}

StatusOr<ObjectList<Event>> DecodeEventList(std::string_view json) {
  return DecodeDocument<ObjectList<Event>>(
      json, "decode EventList", [](DecodeContext& ctx, const JsonValue& v, ObjectList<Event>* out) {
        DecodeListFrom(ctx, v, out, DecodeEventFrom);
      });
}

std::string EncodeAnnotationsPatch(const std::map<std::string, std::string>& annotations,
                                   std::string_view uid_precondition) {
  JsonWriter w;
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.StringFieldIfSet("uid", uid_precondition);
  w.Key("annotations");
  w.StartObject();
  for (const auto& [key, value] : annotations) w.StringField(key, value);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

std::string EncodeSchedulingGatesPatch(const std::vector<std::string>& gates) {
  JsonWriter w;
  w.StartArray();
  w.StartObject();
  w.StringField("op", "add");
  w.StringField("path", "/spec/schedulingGates");
  w.Key("value");
  WriteSchedulingGates(w, gates);
  w.EndObject();
  w.EndArray();
  return w.TakeString();
}

std::string EncodeLiftGatePatch(size_t index, std::string_view gate, std::string_view pin_node) {
  const std::string path = "/spec/schedulingGates/" + std::to_string(index);
  JsonWriter w;
  w.StartArray();
  if (!pin_node.empty()) {
    // A test that there is no affinity yet: "add" would replace one.
    w.StartObject();
    w.StringField("op", "test");
    w.StringField("path", "/spec/affinity");
    w.Key("value");
    w.Null();
    w.EndObject();
    w.StartObject();
    w.StringField("op", "add");
    w.StringField("path", "/spec/affinity");
    w.Key("value");
    w.StartObject();
    w.Key("nodeAffinity");
    w.StartObject();
    w.Key("requiredDuringSchedulingIgnoredDuringExecution");
    w.StartObject();
    w.Key("nodeSelectorTerms");
    w.StartArray();
    w.StartObject();
    w.Key("matchFields");
    w.StartArray();
    w.StartObject();
    w.StringField("key", "metadata.name");
    w.StringField("operator", "In");
    w.Key("values");
    w.StartArray();
    w.String(pin_node);
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndArray();
    w.EndObject();
    w.EndObject();
    w.EndObject();
    w.EndObject();
  }
  w.StartObject();
  w.StringField("op", "test");
  w.StringField("path", path + "/name");
  w.StringField("value", gate);
  w.EndObject();
  w.StartObject();
  w.StringField("op", "remove");
  w.StringField("path", path);
  w.EndObject();
  w.EndArray();
  return w.TakeString();
}

std::string EncodeEvent(const Event& event) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, "v1", "Event");
  w.Key("metadata");
  EncodeObjectMeta(w, event.meta);
  w.Key("involvedObject");
  EncodeObjectReference(w, event.involved_object);
  w.StringFieldIfSet("reason", event.reason);
  w.StringFieldIfSet("message", event.message);
  if (!event.source_component.empty() || !event.source_host.empty()) {
    w.Key("source");
    w.StartObject();
    w.StringFieldIfSet("component", event.source_component);
    w.StringFieldIfSet("host", event.source_host);
    w.EndObject();
  }
  w.TimeFieldIfSet("firstTimestamp", event.first_timestamp);
  w.TimeFieldIfSet("lastTimestamp", event.last_timestamp);
  w.IntFieldIfSet("count", event.count);
  w.StringFieldIfSet("type", event.type);
  w.MicroTimeFieldIfSet("eventTime", event.event_time);
  w.StringFieldIfSet("action", event.action);
  w.StringFieldIfSet("reportingComponent", event.reporting_component);
  w.StringFieldIfSet("reportingInstance", event.reporting_instance);
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
