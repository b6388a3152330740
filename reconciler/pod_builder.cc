#include "reconciler/pod_builder.h"

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "model/gpu_share.h"
#include "model/quantity.h"
#include "reconciler/naming.h"
#include "reconciler/plugins.h"
#include "reconciler/pod_json.h"

namespace muster::reconciler {
namespace {

using pod_json::AddEnvValue;
using pod_json::AddEnvValueFrom;
using pod_json::AddVolume;
using pod_json::AddVolumeMount;
using pod_json::ArrayMember;
using pod_json::Find;
using pod_json::JobOwnerReferences;
using pod_json::MemberOf;
using pod_json::SetMember;
using pod_json::Str;
using pod_json::StringAt;
using rapidjson::Value;

// Job labels Volcano copies onto pod labels (annotations copy all of
// kCopiedJobKeys).
constexpr std::string_view kCopiedJobLabels[] = {"volcano.sh/preemptable",
                                                 "volcano.sh/cooldown-time"};
constexpr std::string_view kJdbMinAvailable = "volcano.sh/jdb-min-available";
constexpr std::string_view kJdbMaxUnavailable = "volcano.sh/jdb-max-unavailable";

Status WrongType(const std::string& path, std::string_view expected, const Value& got) {
  return InvalidArgumentError(path + ": expected " + std::string(expected) + ", got " +
                              kube::JsonTypeName(got));
}

// obj[key] is absent, null, or an array of objects.
Status CheckObjectArray(Value& obj, std::string_view key, const std::string& path) {
  Value* v = Find(obj, key);
  if (v == nullptr) return Status::Ok();
  const std::string here = path + "." + std::string(key);
  if (!v->IsArray()) return WrongType(here, "an array", *v);
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    if (!(*v)[i].IsObject()) {
      return WrongType(here + "[" + std::to_string(i) + "]", "an object", (*v)[i]);
    }
  }
  return Status::Ok();
}

Status CheckStrings(Value& obj, std::initializer_list<std::string_view> keys,
                    const std::string& path) {
  for (std::string_view key : keys) {
    Value* v = Find(obj, key);
    if (v != nullptr && !v->IsString()) {
      return WrongType(path + "." + std::string(key), "a string", *v);
    }
  }
  return Status::Ok();
}

Status CheckStringMap(Value& obj, std::string_view key, const std::string& path) {
  Value* v = Find(obj, key);
  if (v == nullptr) return Status::Ok();
  const std::string here = path + "." + std::string(key);
  if (!v->IsObject()) return WrongType(here, "an object", *v);
  const Value& map = *v;  // const: clang rejects comparing non-const member iterators
  for (const auto& m : map.GetObject()) {
    if (!m.value.IsString()) {
      return WrongType(here + "[\"" + m.name.GetString() + "\"]", "a string", m.value);
    }
  }
  return Status::Ok();
}

Status CheckContainers(Value& spec, std::string_view key, const std::string& path) {
  MUSTER_RETURN_IF_ERROR(CheckObjectArray(spec, key, path));
  Value* list = Find(spec, key);
  if (list == nullptr) return Status::Ok();
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string here = path + "." + std::string(key) + "[" + std::to_string(i) + "]";
    for (std::string_view field : {"env", "ports", "volumeMounts"}) {
      MUSTER_RETURN_IF_ERROR(CheckObjectArray((*list)[i], field, here));
    }
  }
  return Status::Ok();
}

// What BuildPod and the plugins rely on; the rest of the PodTemplateSpec is
// the API server's to validate.
Status CheckTemplate(Value& tmpl, const std::string& path) {
  if (!tmpl.IsObject()) return WrongType(path, "an object", tmpl);
  if (Value* meta = Find(tmpl, "metadata")) {
    if (!meta->IsObject()) return WrongType(path + ".metadata", "an object", *meta);
    MUSTER_RETURN_IF_ERROR(CheckStringMap(*meta, "labels", path + ".metadata"));
    MUSTER_RETURN_IF_ERROR(CheckStringMap(*meta, "annotations", path + ".metadata"));
  }
  Value* spec = Find(tmpl, "spec");
  const std::string spec_path = path + ".spec";
  if (spec == nullptr) return InvalidArgumentError(spec_path + ": missing");
  if (!spec->IsObject()) return WrongType(spec_path, "an object", *spec);
  Value* containers = Find(*spec, "containers");
  if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
    return InvalidArgumentError(spec_path + ".containers: expected a non-empty array, got " +
                                (containers == nullptr
                                     ? "nothing"
                                     : std::string(kube::JsonTypeName(*containers)) +
                                           (containers->IsArray() ? " (empty)" : "")));
  }
  MUSTER_RETURN_IF_ERROR(CheckContainers(*spec, "containers", spec_path));
  MUSTER_RETURN_IF_ERROR(CheckContainers(*spec, "initContainers", spec_path));
  MUSTER_RETURN_IF_ERROR(CheckObjectArray(*spec, "volumes", spec_path));
  MUSTER_RETURN_IF_ERROR(CheckObjectArray(*spec, "schedulingGates", spec_path));
  return CheckStrings(*spec, {"hostname", "subdomain", "schedulerName", "priorityClassName"},
                      spec_path);
}

// A template built in code (no verbatim JSON) is written from the model.
std::string TemplateJson(const TaskSpec& task) {
  if (!task.template_json.empty()) return task.template_json;
  kube::JsonWriter w;
  w.StartObject();
  w.Key("metadata");
  kube::EncodeObjectMeta(w, task.template_pod.meta);
  w.Key("spec");
  kube::EncodePodSpec(w, task.template_pod.spec);
  w.EndObject();
  return w.TakeString();
}

// The template's map at metadata[key] (moved out of it), or {}.
Value TakeStringMap(Value& tmpl, std::string_view key) {
  Value* meta = Find(tmpl, "metadata");
  Value* map = meta == nullptr ? nullptr : Find(*meta, key);
  if (map == nullptr) return Value(rapidjson::kObjectType);
  return std::move(*map);
}

void CopyJobKeys(const std::map<std::string, std::string>& from,
                 std::span<const std::string_view> keys, Value& to, PodAllocator& a) {
  for (std::string_view key : keys) {
    if (key == kJdbMaxUnavailable && from.contains(std::string(kJdbMinAvailable))) continue;
    auto it = from.find(std::string(key));
    if (it != from.end()) SetMember(to, key, Str(it->second, a), a);
  }
}

Value Metadata(const Job& job, const TaskSpec& task, int index, Value& tmpl, PodAllocator& a) {
  const std::string index_text = std::to_string(index);
  Value annotations = TakeStringMap(tmpl, "annotations");
  CopyJobKeys(job.meta.annotations, kCopiedJobKeys, annotations, a);
  const std::pair<std::string_view, std::string> ours[] = {
      {kTaskIndexKey, index_text},
      {kTaskSpecKey, task.name},
      {kGroupNameAnnotation, PodGroupName(job)},
      {kJobNameKey, job.meta.name},
      {kQueueNameKey, job.spec.queue},
      {kJobVersionKey, std::to_string(job.status.version)},
      {kTemplateUidKey, job.meta.name + "-" + task.name},
      {kJobRetryCountKey, std::to_string(job.status.retry_count)}};
  for (const auto& [key, value] : ours) SetMember(annotations, key, Str(value, a), a);
  if (!task.topology_policy.empty()) {
    SetMember(annotations, kNumaPolicyKey, Str(task.topology_policy, a), a);
  }

  Value labels = TakeStringMap(tmpl, "labels");
  CopyJobKeys(job.meta.labels, kCopiedJobLabels, labels, a);
  const std::pair<std::string_view, std::string_view> our_labels[] = {
      {kTaskIndexKey, index_text},
      {kJobNameKey, job.meta.name},
      {kTaskSpecKey, task.name},
      {kJobNamespaceKey, job.meta.namespace_},
      {kQueueNameKey, job.spec.queue}};
  for (const auto& [key, value] : our_labels) SetMember(labels, key, Str(value, a), a);

  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", Str(PodName(job.meta.name, task.name, index), a), a);
  meta.AddMember("namespace", Str(job.meta.namespace_, a), a);
  meta.AddMember("labels", std::move(labels), a);
  meta.AddMember("annotations", std::move(annotations), a);
  meta.AddMember("ownerReferences", JobOwnerReferences(job, a), a);
  return meta;
}

void SetIfEmpty(Value& spec, std::string_view key, const std::string& value, PodAllocator& a) {
  if (value.empty() || !StringAt(spec, key).empty()) return;
  SetMember(spec, key, Str(value, a), a);
}

void AddGate(Value& spec, const PodBuildOptions& options, PodAllocator& a) {
  const std::string scheduler = StringAt(spec, "schedulerName");
  const auto& gated = options.gated_schedulers;
  if (scheduler.empty() || std::find(gated.begin(), gated.end(), scheduler) == gated.end()) return;
  Value& gates = ArrayMember(spec, "schedulingGates", a);
  for (Value& g : gates.GetArray()) {
    if (StringAt(g, "name") == kGangGate) return;
  }
  Value gate(rapidjson::kObjectType);
  gate.AddMember("name", Str(kGangGate, a), a);
  gates.PushBack(std::move(gate), a);
}

void AddJobVolumes(const Job& job, Value& spec, PodAllocator& a) {
  std::vector<std::string> claims;
  for (size_t k = 0; k < job.spec.volumes.size(); ++k) {
    const std::string claim = JobVolumeClaimName(job, k);
    // A claim listed twice is mounted once, as Volcano does (admission
    // refuses it anyway).
    if (std::find(claims.begin(), claims.end(), claim) != claims.end()) continue;
    claims.push_back(claim);
    const std::string name = JobVolumeName(job, k);
    Value source(rapidjson::kObjectType);
    source.AddMember("claimName", Str(claim, a), a);
    Value volume(rapidjson::kObjectType);
    volume.AddMember("name", Str(name, a), a);
    volume.AddMember("persistentVolumeClaim", std::move(source), a);
    AddVolume(spec, std::move(volume), a);
    for (Value& c : Find(spec, "containers")->GetArray()) {
      AddVolumeMount(c, name, job.spec.volumes[k].mount_path, "", a);
    }
  }
}

// obj[key] removed, every copy of it: a resource written twice decodes as
// its last copy (kube/codec/json.cc ReadResources), so the share the decoder
// read may be any copy but the first. True when it was there.
bool RemoveMember(Value& obj, std::string_view key) {
  if (!obj.IsObject()) return false;
  bool removed = false;
  while (MemberOf(obj, key) != nullptr) {
    obj.RemoveMember(
        rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    removed = true;
  }
  return removed;
}

// obj[key] removed when it is an empty object.
void DropIfEmpty(Value& obj, std::string_view key) {
  Value* member = MemberOf(obj, key);
  if (member != nullptr && member->IsObject() && member->MemberCount() == 0) {
    RemoveMember(obj, key);
  }
}

// The object at obj[key], created when absent or not an object.
Value& ObjectMember(Value& obj, std::string_view key, PodAllocator& a) {
  Value* member = MemberOf(obj, key);
  if (member == nullptr || !member->IsObject()) {
    SetMember(obj, key, Value(rapidjson::kObjectType), a);
    member = MemberOf(obj, key);
  }
  return *member;
}

// Removes nvidia.com/gpu from the container's limits and requests; the maps
// that had it.
std::vector<std::string_view> RemoveGpuAmount(Value& container) {
  std::vector<std::string_view> had;
  Value* resources = MemberOf(container, "resources");
  if (resources == nullptr || !resources->IsObject()) return had;
  for (std::string_view map : {"limits", "requests"}) {
    Value* amounts = MemberOf(*resources, map);
    if (amounts != nullptr && RemoveMember(*amounts, kNvidiaGpu)) had.push_back(map);
    DropIfEmpty(*resources, map);
  }
  DropIfEmpty(container, "resources");
  return had;
}

void AddVgpuResources(Value& container, std::span<const std::string_view> maps, int32_t share,
                      const GpuFractionOptions& options, PodAllocator& a) {
  const VgpuShare vgpu = VgpuShareOf(share, options.vgpu_gpu_memory_mib);
  Value& resources = ObjectMember(container, "resources", a);
  for (std::string_view map : {std::string_view("limits"), std::string_view("requests")}) {
    // Always in limits (an extended resource must have one; the API server
    // defaults the request to it), in requests where the share was.
    if (map == "requests" && std::find(maps.begin(), maps.end(), map) == maps.end()) continue;
    Value& amounts = ObjectMember(resources, map, a);
    SetMember(amounts, kVgpuNumber, Str(std::to_string(vgpu.number), a), a);
    SetMember(amounts, kVgpuCores, Str(std::to_string(vgpu.cores), a), a);
    SetMember(amounts, kVgpuMemory, Str(std::to_string(vgpu.memory_mib), a), a);
  }
}

// NVIDIA_VISIBLE_DEVICES from the GPU the extender's bind chose, and the
// container's share for frameworks that cap themselves.
void AddShareEnv(Value& container, int32_t share, PodAllocator& a) {
  Value field(rapidjson::kObjectType);
  field.AddMember("fieldPath",
                  Str("metadata.annotations['" + std::string(kVisibleDevicesAnnotation) + "']", a),
                  a);
  AddEnvValueFrom(container, kVisibleDevicesEnv, "fieldRef", std::move(field), a);
  AddEnvValue(container, kGpuFractionEnv, FormatResourceQuantity(kNvidiaGpu, share), a);
}

// The template's shares of one GPU, as the pod carries them (gpu_fraction.h).
// `tmpl` is the template decoded; its containers are the JSON's, in order.
void ShareGpus(const Pod& tmpl, const GpuFractionOptions& options, Value& pod, PodAllocator& a) {
  const std::vector<int32_t> shares = ContainerGpuShares(tmpl);
  Value& containers = *Find(pod["spec"], "containers");
  int64_t total = 0;
  for (size_t j = 0; j < shares.size() && j < containers.Size(); ++j) {
    if (shares[j] == 0) continue;
    total += shares[j];
    Value& c = containers[static_cast<rapidjson::SizeType>(j)];
    const std::vector<std::string_view> maps = RemoveGpuAmount(c);
    if (options.mode == GpuFractionMode::kVgpu) {
      AddVgpuResources(c, maps, shares[j], options, a);
    } else {
      AddShareEnv(c, shares[j], a);
    }
  }
  if (total > 0 && options.mode == GpuFractionMode::kAnnotation) {
    SetMember(pod["metadata"]["annotations"], kAnnotationGpuFraction,
              Str(FormatResourceQuantity(kNvidiaGpu, total), a), a);
  }
}

}  // namespace

StatusOr<std::string> BuildPod(const Job& job, size_t task, int index,
                               const PodBuildOptions& options) {
  const std::string field = "spec.tasks[" + std::to_string(task) + "]";
  if (task >= job.spec.tasks.size()) {
    return InvalidArgumentError(field + ": no such task (the job has " +
                                std::to_string(job.spec.tasks.size()) + ")");
  }
  const TaskSpec& ts = job.spec.tasks[task];
  if (index < 0 || index >= ts.replicas) {
    return InvalidArgumentError(field + ".replicas: replica index " + std::to_string(index) +
                                " is outside [0, " + std::to_string(ts.replicas) + ")");
  }

  rapidjson::Document pod;
  pod.SetObject();
  PodAllocator& a = pod.GetAllocator();
  // Parsed into the pod's allocator so its values move into the pod uncopied.
  rapidjson::Document tmpl(&a);
  if (Status s = kube::ParseDocument(TemplateJson(ts), &tmpl); !s.ok()) {
    return s.Annotate(field + ".template");
  }
  MUSTER_RETURN_IF_ERROR(CheckTemplate(tmpl, field + ".template"));

  pod.AddMember("apiVersion", "v1", a);
  pod.AddMember("kind", "Pod", a);
  pod.AddMember("metadata", Metadata(job, ts, index, tmpl, a), a);
  pod.AddMember("spec", std::move(*Find(tmpl, "spec")), a);
  Value& spec = pod["spec"];
  SetIfEmpty(spec, "schedulerName", job.spec.scheduler_name, a);
  SetIfEmpty(spec, "priorityClassName", job.spec.priority_class_name, a);
  AddGate(spec, options, a);
  AddJobVolumes(job, spec, a);
  ShareGpus(ts.template_pod, options.gpu_fraction, pod, a);
  ApplyPlugins(job, task, index, &pod);

  return kube::ToCompactJson(pod);
}

}  // namespace muster::reconciler
