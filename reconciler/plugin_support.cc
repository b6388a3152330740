#include "reconciler/plugin_support.h"

#include "kube/codec/json.h"
#include "reconciler/naming.h"

namespace muster::reconciler::plugins_internal {
namespace {

using pod_json::Find;
using pod_json::JobOwnerReferences;
using pod_json::Str;
using pod_json::StringAt;
using rapidjson::Value;

Value ObjectMetadata(const Job& job, std::string_view name, PodAllocator& a) {
  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", Str(name, a), a);
  meta.AddMember("namespace", Str(job.meta.namespace_, a), a);
  meta.AddMember("ownerReferences", JobOwnerReferences(job, a), a);
  return meta;
}

}  // namespace

const std::vector<std::string>* PluginArgs(const Job& job, std::string_view plugin) {
  auto it = job.spec.plugins.find(std::string(plugin));
  return it == job.spec.plugins.end() ? nullptr : &it->second;
}

std::optional<size_t> TaskIndex(const Job& job, std::string_view name) {
  for (size_t i = 0; i < job.spec.tasks.size(); ++i) {
    if (job.spec.tasks[i].name == name) return i;
  }
  return std::nullopt;
}

// The template's spec.hostname and spec.subdomain ("" when unset or when the
// template does not parse: BuildPod and BuildJobObjects report that).
TemplateHost TemplateHostOf(const TaskSpec& task) {
  if (task.template_json.empty()) return {};
  rapidjson::Document doc;
  if (!kube::ParseDocument(task.template_json, &doc).ok()) return {};
  const Value* spec = Find(doc, "spec");
  if (spec == nullptr) return {};
  return {StringAt(*spec, "hostname"), StringAt(*spec, "subdomain")};
}

std::string HostOf(const Job& job, const TaskSpec& task, const TemplateHost& t, int index) {
  const std::string host =
      t.hostname.empty() ? PodName(job.meta.name, task.name, index) : t.hostname;
  return host + "." + (t.subdomain.empty() ? job.meta.name : t.subdomain);
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(items[i]);
  }
  return out;
}

Value StringMap(const std::map<std::string, std::string>& m, PodAllocator& a) {
  Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : m) out.AddMember(Str(k, a), Str(v, a), a);
  return out;
}

Value JobSelector(const Job& job, PodAllocator& a) {
  return StringMap({{std::string(kJobNameKey), job.meta.name},
                    {std::string(kJobNamespaceKey), job.meta.namespace_}},
                   a);
}

JobObject MakeObject(const Job& job, std::string_view api_version, std::string_view kind,
                     std::string_view resource, std::string_view name,
                     std::vector<std::pair<std::string_view, Value>> body,
                     rapidjson::Document& doc) {
  PodAllocator& a = doc.GetAllocator();
  Value obj(rapidjson::kObjectType);
  obj.AddMember("apiVersion", Str(api_version, a), a);
  obj.AddMember("kind", Str(kind, a), a);
  obj.AddMember("metadata", ObjectMetadata(job, name, a), a);
  for (auto& [key, value] : body) obj.AddMember(Str(key, a), std::move(value), a);
  return JobObject{std::string(api_version), std::string(resource), std::string(name),
                   kube::ToCompactJson(obj)};
}

}  // namespace muster::reconciler::plugins_internal
