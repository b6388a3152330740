// What the units of the job plugins share (plugins.h is their contract;
// plugins.cc holds env, svc, ssh and the job objects, framework_plugins.cc
// mpi, pytorch, tensorflow and ray): the pod being built, a job's hosts and
// plugin arguments, and the envelope of an object a job owns.
//
// Internal to the plugins: not for other units. Thread-compatible; every
// function is pure.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/job.h"
#include "reconciler/plugins.h"
#include "reconciler/pod_json.h"

namespace muster::reconciler::plugins_internal {

// --- The pod being built ------------------------------------------------------

// Replica `index` of job.spec.tasks[task] under construction: `spec` is its
// pod's spec, checked by BuildPod (plugins.h ApplyPlugins), allocated by `a`.
struct PodContext {
  const Job& job;
  size_t task;
  int index;
  rapidjson::Value& spec;
  PodAllocator& a;
  const std::string& task_name() const { return job.spec.tasks[task].name; }
};

// fn(container) for each object in spec.containers, after each object in
// spec.initContainers when `with_init`.
template <typename Fn>
void ForEachContainer(rapidjson::Value& spec, bool with_init, Fn&& fn) {
  for (std::string_view key : {"initContainers", "containers"}) {
    if (key == "initContainers" && !with_init) continue;
    rapidjson::Value* list = pod_json::MemberOf(spec, key);
    if (list == nullptr || !list->IsArray()) continue;
    for (rapidjson::Value& c : list->GetArray()) {
      if (c.IsObject()) fn(c);
    }
  }
}

// --- The job -----------------------------------------------------------------

// The arguments of `plugin` in spec.plugins, or nullptr when the job does not
// have it.
const std::vector<std::string>* PluginArgs(const Job& job, std::string_view plugin);
// The position of the task named `name` in spec.tasks.
std::optional<size_t> TaskIndex(const Job& job, std::string_view name);

// A task template's spec.hostname and spec.subdomain.
struct TemplateHost {
  std::string hostname;
  std::string subdomain;
};
// "" for each when unset or when the template does not parse (BuildPod and
// BuildJobObjects report that).
TemplateHost TemplateHostOf(const TaskSpec& task);
// The DNS name of replica `index` of `task` whose template says `t`
// (plugins.h ReplicaHost).
std::string HostOf(const Job& job, const TaskSpec& task, const TemplateHost& t, int index);

std::string Join(const std::vector<std::string>& items, std::string_view sep);

// --- Objects the job owns -------------------------------------------------------

// A JSON object of string members.
rapidjson::Value StringMap(const std::map<std::string, std::string>& m, PodAllocator& a);
// {volcano.sh/job-name: <job>, volcano.sh/job-namespace: <namespace>}: the
// labels that select the job's pods.
rapidjson::Value JobSelector(const Job& job, PodAllocator& a);
// The object {apiVersion, kind, metadata: {name, namespace, ownerReferences:
// the job's controller}, <body members in order>}. `body` values live in
// `doc`'s allocator.
JobObject MakeObject(const Job& job, std::string_view api_version, std::string_view kind,
                     std::string_view resource, std::string_view name,
                     std::vector<std::pair<std::string_view, rapidjson::Value>> body,
                     rapidjson::Document& doc);

// --- The framework plugins (framework_plugins.cc) --------------------------------
//
// Each REQUIRES the job to have the plugin (PluginArgs non-null).

void MpiOnPodCreate(PodContext& p);
void PyTorchOnPodCreate(PodContext& p);
void TensorFlowOnPodCreate(PodContext& p);
void RayOnPodCreate(PodContext& p);
// ray's head Service <job>-head-svc (plugins.h BuildJobObjects).
void AddRayHeadService(const Job& job, std::vector<JobObject>* out);

}  // namespace muster::reconciler::plugins_internal
