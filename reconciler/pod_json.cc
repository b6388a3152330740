#include "reconciler/pod_json.h"

#include <utility>

#include "reconciler/naming.h"

namespace muster::reconciler::pod_json {
namespace {

using rapidjson::Value;

// A non-owning string value, for lookups.
Value Ref(std::string_view s) {
  return Value(rapidjson::StringRef(s.data(), static_cast<rapidjson::SizeType>(s.size())));
}

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// True when container[list] has an item named `name`.
bool HasNamed(const Value& container, std::string_view list, std::string_view name) {
  const Value* items = Find(container, list);
  if (items == nullptr || !items->IsArray()) return false;
  for (const Value& item : items->GetArray()) {
    if (StringAt(item, "name") == name) return true;
  }
  return false;
}

}  // namespace

Value JobOwnerReferences(const Job& job, PodAllocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("apiVersion", Str(kJobApiVersion, a), a);
  ref.AddMember("kind", Str(kJobKind, a), a);
  ref.AddMember("name", Str(job.meta.name, a), a);
  ref.AddMember("uid", Str(job.meta.uid, a), a);
  ref.AddMember("controller", true, a);
  ref.AddMember("blockOwnerDeletion", true, a);
  Value refs(rapidjson::kArrayType);
  refs.PushBack(std::move(ref), a);
  return refs;
}

Value* MemberOf(Value& obj, std::string_view key) {
  const Value& read = obj;
  auto it = read.FindMember(Ref(key));
  return it == read.MemberEnd() ? nullptr : const_cast<Value*>(&it->value);
}

const Value* Find(const Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(Ref(key));
  return it == obj.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

Value* Find(Value& obj, std::string_view key) {
  return const_cast<Value*>(Find(static_cast<const Value&>(obj), key));
}

std::string StringAt(const Value& obj, std::string_view key) {
  const Value* v = Find(obj, key);
  return v != nullptr && v->IsString() ? std::string(View(*v)) : std::string();
}

Value Str(std::string_view s, PodAllocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

Value& ArrayMember(Value& obj, std::string_view key, PodAllocator& a) {
  Value* member = MemberOf(obj, key);
  if (member == nullptr) {
    obj.AddMember(Str(key, a), Value(rapidjson::kArrayType), a);
    return *MemberOf(obj, key);
  }
  if (!member->IsArray()) member->SetArray();  // null: BuildPod refused anything else
  return *member;
}

void SetMember(Value& obj, std::string_view key, Value value, PodAllocator& a) {
  if (Value* member = MemberOf(obj, key)) {
    *member = std::move(value);
  } else {
    obj.AddMember(Str(key, a), std::move(value), a);
  }
}

void AddEnv(Value& container, Value var, PodAllocator& a) {
  if (HasNamed(container, "env", View(var["name"]))) return;  // the template wins
  ArrayMember(container, "env", a).PushBack(std::move(var), a);
}

void AddEnvValue(Value& container, std::string_view name, std::string_view value, PodAllocator& a) {
  Value var(rapidjson::kObjectType);
  var.AddMember("name", Str(name, a), a);
  var.AddMember("value", Str(value, a), a);
  AddEnv(container, std::move(var), a);
}

void AddEnvValueFrom(Value& container, std::string_view name, std::string_view source_kind,
                     Value source, PodAllocator& a) {
  Value from(rapidjson::kObjectType);
  from.AddMember(Str(source_kind, a), std::move(source), a);
  Value var(rapidjson::kObjectType);
  var.AddMember("name", Str(name, a), a);
  var.AddMember("valueFrom", std::move(from), a);
  AddEnv(container, std::move(var), a);
}

void AddVolume(Value& spec, Value volume, PodAllocator& a) {
  Value& volumes = ArrayMember(spec, "volumes", a);
  const std::string_view name = View(volume["name"]);
  for (const Value& v : volumes.GetArray()) {
    if (StringAt(v, "name") == name) return;
  }
  volumes.PushBack(std::move(volume), a);
}

void AddVolumeMount(Value& container, std::string_view volume, std::string_view mount_path,
                    std::string_view sub_path, PodAllocator& a) {
  Value& mounts = ArrayMember(container, "volumeMounts", a);
  for (const Value& m : mounts.GetArray()) {
    if (StringAt(m, "mountPath") == mount_path) return;
  }
  Value mount(rapidjson::kObjectType);
  mount.AddMember("name", Str(volume, a), a);
  mount.AddMember("mountPath", Str(mount_path, a), a);
  if (!sub_path.empty()) mount.AddMember("subPath", Str(sub_path, a), a);
  mounts.PushBack(std::move(mount), a);
}

}  // namespace muster::reconciler::pod_json
