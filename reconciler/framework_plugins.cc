// mpi, pytorch, tensorflow and ray: the framework plugins of plugins.h
// (Volcano's pkg/controllers/job/plugins/distributed-framework/).
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/codec/json.h"
#include "reconciler/naming.h"
#include "reconciler/plugin_support.h"

namespace muster::reconciler::plugins_internal {
namespace {

using pod_json::AddEnvValue;
using pod_json::ArrayMember;
using pod_json::Find;
using pod_json::SetMember;
using pod_json::Str;
using pod_json::StringAt;
using rapidjson::Value;

// Adds {name, containerPort} unless the container exposes that number (as
// Volcano checks) or already uses that port name (the API would reject it).
void AddPort(Value& container, std::string_view name, int32_t port, PodAllocator& a) {
  if (const Value* ports = Find(container, "ports"); ports != nullptr && ports->IsArray()) {
    for (const Value& p : ports->GetArray()) {
      const Value* number = Find(p, "containerPort");
      if (number != nullptr && number->IsInt() && number->GetInt() == port) return;
      if (StringAt(p, "name") == name) return;
    }
  }
  Value entry(rapidjson::kObjectType);
  entry.AddMember("name", Str(name, a), a);
  entry.AddMember("containerPort", port, a);
  ArrayMember(container, "ports", a).PushBack(std::move(entry), a);
}

// `sh -c` script of the wait-for-master init container: poll the master's
// port every 2 s, give up after the timeout.
std::string WaitForMasterScript(std::string_view addr, int32_t port, int32_t timeout_seconds) {
  const std::string target = std::string(addr) + " " + std::to_string(port);
  return "deadline=$(( $(date +%s) + " + std::to_string(timeout_seconds) + " )); until nc -z " +
         target + "; do if [ \"$(date +%s)\" -ge \"$deadline\" ]; then echo \"timed out waiting " +
         "for master " + target + "\"; exit 1; fi; echo \"waiting for master " + target +
         "\"; sleep 2; done";
}

void AddWaitForMaster(PodContext& p, const PyTorchArgs& args, const std::string& master_addr) {
  Value& init = ArrayMember(p.spec, "initContainers", p.a);
  for (const Value& c : init.GetArray()) {
    if (StringAt(c, "name") == kWaitForMasterContainer) return;
  }
  Value command(rapidjson::kArrayType);
  command.PushBack(Str("sh", p.a), p.a);
  command.PushBack(Str("-c", p.a), p.a);
  command.PushBack(
      Str(WaitForMasterScript(master_addr, args.port, args.wait_master_timeout_seconds), p.a), p.a);
  Value container(rapidjson::kObjectType);
  container.AddMember("name", Str(kWaitForMasterContainer, p.a), p.a);
  container.AddMember("image", Str(args.wait_master_image, p.a), p.a);
  container.AddMember("command", std::move(command), p.a);
  // First, so the user's init containers already find the master.
  Value reordered(rapidjson::kArrayType);
  reordered.PushBack(std::move(container), p.a);
  for (Value& c : init.GetArray()) reordered.PushBack(std::move(c), p.a);
  init = std::move(reordered);
}

// The container's command becomes `sh -c <script>` (Volcano replaces it;
// args stay as the template wrote them).
void SetShellCommand(Value& container, const std::string& script, PodAllocator& a) {
  Value command(rapidjson::kArrayType);
  command.PushBack(Str("sh", a), a);
  command.PushBack(Str("-c", a), a);
  command.PushBack(Str(script, a), a);
  SetMember(container, "command", std::move(command), a);
}

// TF_CONFIG (Go's json.Marshal of Volcano's tfClusterSpec: cluster lists in
// the order ps, worker, chief, evaluator, empty ones omitted).
std::string TfConfig(const Job& job, const TensorFlowArgs& args, std::string_view task, int index) {
  using Role = std::pair<std::string_view, std::string_view>;  // task name, TF role
  // Go's switch order for the cluster lists, and for the pod's own type.
  const Role cluster_roles[] = {{args.ps, "ps"},
                                {args.worker, "worker"},
                                {args.chief, "chief"},
                                {args.evaluator, "evaluator"}};
  const Role type_roles[] = {{args.chief, "chief"},
                             {args.worker, "worker"},
                             {args.ps, "ps"},
                             {args.evaluator, "evaluator"}};
  std::map<std::string_view, std::vector<std::string>> roles;
  for (const TaskSpec& ts : job.spec.tasks) {
    auto role = std::find_if(std::begin(cluster_roles), std::end(cluster_roles),
                             [&](const Role& r) { return ts.name == r.first; });
    if (role == std::end(cluster_roles)) continue;
    const TemplateHost host = TemplateHostOf(ts);
    std::vector<std::string>& hosts = roles[role->second];
    hosts.clear();  // Go assigns the list: the last task of a role wins
    for (int i = 0; i < ts.replicas; ++i) {
      hosts.push_back(HostOf(job, ts, host, i) + ":" + std::to_string(args.port));
    }
  }
  std::string_view type = task;  // a task of no role: its own name
  auto own = std::find_if(std::begin(type_roles), std::end(type_roles),
                          [&](const Role& r) { return task == r.first; });
  if (own != std::end(type_roles)) type = own->second;
  kube::JsonWriter w;
  w.StartObject();
  w.Key("cluster");
  w.StartObject();
  for (std::string_view role : {"ps", "worker", "chief", "evaluator"}) {
    auto it = roles.find(role);
    if (it != roles.end() && !it->second.empty()) w.StringListFieldIfSet(role, it->second);
  }
  w.EndObject();
  w.Key("task");
  w.StartObject();
  w.StringField("type", type);
  w.IntField("index", index);
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

std::string RayHeadServiceName(const Job& job) { return job.meta.name + "-head-svc"; }

}  // namespace

void MpiOnPodCreate(PodContext& p) {
  const MpiArgs args = ParseMpiArgs(*PluginArgs(p.job, kMpiPlugin));
  std::string worker_hosts;
  if (p.task_name() == args.master) {
    if (std::optional<size_t> worker = TaskIndex(p.job, args.worker)) {
      worker_hosts = Join(TaskHosts(p.job, *worker), ",");
    }
  }
  ForEachContainer(p.spec, /*with_init=*/true, [&](Value& c) {
    AddPort(c, kMpiPortName, args.port, p.a);
    if (!worker_hosts.empty()) AddEnvValue(c, kMpiHostEnv, worker_hosts, p.a);
  });
}

void PyTorchOnPodCreate(PodContext& p) {
  const PyTorchArgs args = ParsePyTorchArgs(*PluginArgs(p.job, kPyTorchPlugin));
  const std::optional<size_t> master = TaskIndex(p.job, args.master);
  if (!master) return;  // Volcano: logs and does nothing
  int32_t world_size = 0;
  for (const TaskSpec& t : p.job.spec.tasks) {
    if (t.name == args.master || t.name == args.worker) world_size += t.replicas;
  }
  const std::string master_addr = ReplicaHost(p.job, *master, 0);
  std::optional<int> rank;
  if (p.task_name() == args.worker) {
    rank = p.index + 1;
  } else if (p.task_name() == args.master) {
    rank = 0;
  }
  ForEachContainer(p.spec, /*with_init=*/false, [&](Value& c) {
    AddPort(c, kPyTorchPortName, args.port, p.a);
    AddEnvValue(c, kMasterAddrEnv, master_addr, p.a);
    AddEnvValue(c, kMasterPortEnv, std::to_string(args.port), p.a);
    AddEnvValue(c, kWorldSizeEnv, std::to_string(world_size), p.a);
    if (rank) AddEnvValue(c, kRankEnv, std::to_string(*rank), p.a);
  });
  if (args.wait_master_enabled && p.task_name() == args.worker && p.task_name() != args.master) {
    AddWaitForMaster(p, args, master_addr);
  }
}

void TensorFlowOnPodCreate(PodContext& p) {
  const auto& tasks = p.job.spec.tasks;
  if (tasks.size() == 1 && tasks[0].replicas == 1) return;  // stand-alone: no cluster
  const TensorFlowArgs args = ParseTensorFlowArgs(*PluginArgs(p.job, kTensorFlowPlugin));
  const std::string config = TfConfig(p.job, args, p.task_name(), p.index);
  ForEachContainer(p.spec, /*with_init=*/false,
                   [&](Value& c) { AddEnvValue(c, kTfConfigEnv, config, p.a); });
}

// The head container runs `ray start --head` with its three ports open; the
// worker containers join it at <head replica 0's host>:<port>. A job
// without the head task is refused at admission (Volcano fails every pod
// create instead).
void RayOnPodCreate(PodContext& p) {
  const RayArgs args = ParseRayArgs(*PluginArgs(p.job, kRayPlugin));
  const std::optional<size_t> head = TaskIndex(p.job, args.head);
  if (!head) return;
  const bool is_head = p.task_name() == args.head;
  const bool is_worker = p.task_name() == args.worker;
  if (!is_head && !is_worker) return;
  const std::string head_script =
      "ray start --head --block --dashboard-host=0.0.0.0 --port=" + std::to_string(args.port) +
      " --dashboard-port=" + std::to_string(args.dashboard_port) +
      " --ray-client-server-port=" + std::to_string(args.client_port);
  const std::string worker_script = "ray start --block --address=" + ReplicaHost(p.job, *head, 0) +
                                    ":" + std::to_string(args.port);
  ForEachContainer(p.spec, /*with_init=*/false, [&](Value& c) {
    const std::string name = StringAt(c, "name");
    if (is_head && name == args.head_container) {
      AddPort(c, kRayGcsPortName, args.port, p.a);
      AddPort(c, kRayDashboardPortName, args.dashboard_port, p.a);
      AddPort(c, kRayClientPortName, args.client_port, p.a);
      SetShellCommand(c, head_script, p.a);
    } else if (is_worker && name == args.worker_container) {
      SetShellCommand(c, worker_script, p.a);
    }
  });
}

void AddRayHeadService(const Job& job, std::vector<JobObject>* out) {
  const RayArgs args = ParseRayArgs(*PluginArgs(job, kRayPlugin));
  rapidjson::Document doc;
  PodAllocator& a = doc.GetAllocator();
  Value selector = JobSelector(job, a);
  selector.AddMember(Str(kTaskSpecKey, a), Str(args.head, a), a);
  Value ports(rapidjson::kArrayType);
  const std::pair<std::string_view, int32_t> named[] = {
      {kRayGcsPortName, args.port},
      {kRayDashboardPortName, args.dashboard_port},
      {kRayClientPortName, args.client_port}};
  for (const auto& [name, number] : named) {
    Value port(rapidjson::kObjectType);
    port.AddMember("name", Str(name, a), a);
    port.AddMember("port", number, a);
    port.AddMember("targetPort", Str(name, a), a);
    port.AddMember("protocol", "TCP", a);
    ports.PushBack(std::move(port), a);
  }
  Value spec(rapidjson::kObjectType);
  spec.AddMember("selector", std::move(selector), a);
  spec.AddMember("ports", std::move(ports), a);
  std::vector<std::pair<std::string_view, Value>> body;
  body.emplace_back("spec", std::move(spec));
  out->push_back(
      MakeObject(job, "v1", "Service", "services", RayHeadServiceName(job), std::move(body), doc));
}

}  // namespace muster::reconciler::plugins_internal
