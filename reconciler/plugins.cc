#include "reconciler/plugins.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "kube/client/pem.h"
#include "kube/codec/json.h"
#include "model/time.h"
#include "reconciler/naming.h"

namespace muster::reconciler {
namespace {

using pod_json::AddEnv;
using pod_json::AddVolume;
using pod_json::AddVolumeMount;
using pod_json::ArrayMember;
using pod_json::Find;
using pod_json::JobOwnerReferences;
using pod_json::SetMember;
using pod_json::Str;
using pod_json::StringAt;
using rapidjson::Value;

// --- Go flag syntax --------------------------------------------------------

struct Flag {
  std::string_view name;
  std::variant<bool*, std::string*, int32_t*> target;
};

// strconv.ParseBool.
std::optional<bool> ParseGoBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

std::optional<int32_t> ParseInt32(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

const Flag* FindFlag(std::span<const Flag> flags, std::string_view name) {
  for (const Flag& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Go's flag.FlagSet.Parse with ContinueOnError, except that it goes on after
// a bad or unknown flag (see the header).
void ParseFlags(const std::vector<std::string>& args, std::span<const Flag> flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') continue;  // a word, or "-"
    if (arg == "--") return;
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=') continue;  // Go: bad flag syntax
    const size_t eq = body.find('=');
    std::optional<std::string_view> value;
    if (eq != std::string_view::npos) value = body.substr(eq + 1);
    const Flag* flag = FindFlag(flags, body.substr(0, eq));
    if (flag == nullptr) continue;
    if (auto* b = std::get_if<bool*>(&flag->target)) {
      // A bare boolean flag means true; "--flag false" is not a value in Go.
      std::optional<bool> parsed = value ? ParseGoBool(*value) : std::optional<bool>(true);
      if (parsed) **b = *parsed;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return;  // Go: flag needs an argument
      value = args[++i];
    }
    if (auto* s = std::get_if<std::string*>(&flag->target)) {
      **s = std::string(*value);
    } else if (std::optional<int32_t> n = ParseInt32(*value)) {
      *std::get<int32_t*>(flag->target) = *n;
    }
  }
}

int32_t ValidPort(int32_t port, int32_t fallback) {
  return port >= 1 && port <= 65535 ? port : fallback;
}

// --- JSON building ---------------------------------------------------------

Value Ref(std::string_view s) {
  return Value(rapidjson::StringRef(s.data(), static_cast<rapidjson::SizeType>(s.size())));
}

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

Value StringMap(const std::map<std::string, std::string>& m, PodAllocator& a) {
  Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : m) out.AddMember(Str(k, a), Str(v, a), a);
  return out;
}

// --- Pod mutation helpers --------------------------------------------------

template <typename Fn>
void ForEachContainer(Value& spec, bool with_init, Fn&& fn) {
  for (std::string_view key : {"initContainers", "containers"}) {
    if (key == "initContainers" && !with_init) continue;
    Value* list = pod_json::MemberOf(spec, key);
    if (list == nullptr || !list->IsArray()) continue;
    for (Value& c : list->GetArray()) {
      if (c.IsObject()) fn(c);
    }
  }
}

bool HasNamed(const Value& container, std::string_view list, std::string_view name) {
  const Value* items = Find(container, list);
  if (items == nullptr || !items->IsArray()) return false;
  for (const Value& item : items->GetArray()) {
    if (StringAt(item, "name") == name) return true;
  }
  return false;
}

void AddEnvValue(Value& container, std::string_view name, std::string_view value, PodAllocator& a) {
  Value var(rapidjson::kObjectType);
  var.AddMember("name", Str(name, a), a);
  var.AddMember("value", Str(value, a), a);
  AddEnv(container, std::move(var), a);
}

void AddEnvFromConfigMap(Value& container, std::string_view name, std::string_view config_map,
                         PodAllocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("name", Str(config_map, a), a);
  ref.AddMember("key", Str(name, a), a);
  Value from(rapidjson::kObjectType);
  from.AddMember("configMapKeyRef", std::move(ref), a);
  Value var(rapidjson::kObjectType);
  var.AddMember("name", Str(name, a), a);
  var.AddMember("valueFrom", std::move(from), a);
  AddEnv(container, std::move(var), a);
}

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

// --- Job-level helpers -----------------------------------------------------

struct TemplateHost {
  std::string hostname;
  std::string subdomain;
};

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

std::optional<size_t> TaskIndex(const Job& job, std::string_view name) {
  for (size_t i = 0; i < job.spec.tasks.size(); ++i) {
    if (job.spec.tasks[i].name == name) return i;
  }
  return std::nullopt;
}

const std::vector<std::string>* PluginArgs(const Job& job, std::string_view plugin) {
  auto it = job.spec.plugins.find(std::string(plugin));
  return it == job.spec.plugins.end() ? nullptr : &it->second;
}

// "my-task" -> "my_task": the key form of a task name in the hosts ConfigMap.
std::string HostKey(std::string_view task) {
  std::string key(task);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string HostsEnv(std::string_view task) { return "VC_" + Upper(HostKey(task)) + "_HOSTS"; }
std::string NumEnv(std::string_view task) { return "VC_" + Upper(HostKey(task)) + "_NUM"; }

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(items[i]);
  }
  return out;
}

// --- OnPodCreate, one per plugin ---------------------------------------------

struct PodContext {
  const Job& job;
  size_t task;
  int index;
  Value& spec;
  PodAllocator& a;
  const std::string& task_name() const { return job.spec.tasks[task].name; }
};

void EnvOnPodCreate(PodContext& p) {
  const std::string index = std::to_string(p.index);
  ForEachContainer(p.spec, /*with_init=*/true, [&](Value& c) {
    AddEnvValue(c, kVkTaskIndexEnv, index, p.a);
    AddEnvValue(c, kVcTaskIndexEnv, index, p.a);
  });
}

void SvcOnPodCreate(PodContext& p, const std::string& pod_name) {
  const SvcArgs args = ParseSvcArgs(*PluginArgs(p.job, kSvcPlugin));
  if (StringAt(p.spec, "hostname").empty()) SetMember(p.spec, "hostname", Str(pod_name, p.a), p.a);
  if (StringAt(p.spec, "subdomain").empty()) {
    SetMember(p.spec, "subdomain", Str(p.job.meta.name, p.a), p.a);
  }
  const std::string config_map = HostsConfigMapName(p.job);
  if (args.inject_hosts_env) {
    ForEachContainer(p.spec, /*with_init=*/true, [&](Value& c) {
      for (const TaskSpec& t : p.job.spec.tasks) {
        AddEnvFromConfigMap(c, HostsEnv(t.name), config_map, p.a);
        AddEnvFromConfigMap(c, NumEnv(t.name), config_map, p.a);
      }
    });
  }
  Value source(rapidjson::kObjectType);
  source.AddMember("name", Str(config_map, p.a), p.a);
  Value volume(rapidjson::kObjectType);
  volume.AddMember("name", Str(config_map, p.a), p.a);
  volume.AddMember("configMap", std::move(source), p.a);
  AddVolume(p.spec, std::move(volume), p.a);
  ForEachContainer(p.spec, /*with_init=*/true,
                   [&](Value& c) { AddVolumeMount(c, config_map, kEtcVolcanoPath, "", p.a); });
}

void SshOnPodCreate(PodContext& p) {
  const SshArgs args = ParseSshArgs(*PluginArgs(p.job, kSshPlugin));
  const std::string secret = SshSecretName(p.job);
  Value items(rapidjson::kArrayType);
  for (std::string_view key :
       {kSshPrivateKeyFile, kSshPublicKeyFile, kSshAuthorizedKeysFile, kSshConfigFile}) {
    Value item(rapidjson::kObjectType);
    item.AddMember("key", Str(key, p.a), p.a);
    item.AddMember("path", Str(std::string(kSshSubPath) + "/" + std::string(key), p.a), p.a);
    items.PushBack(std::move(item), p.a);
  }
  Value source(rapidjson::kObjectType);
  source.AddMember("secretName", Str(secret, p.a), p.a);
  source.AddMember("items", std::move(items), p.a);
  source.AddMember("defaultMode",
                   args.key_file_path == kSshDefaultKeyPath ? kSshRootMode : kSshNonRootMode, p.a);
  Value volume(rapidjson::kObjectType);
  volume.AddMember("name", Str(secret, p.a), p.a);
  volume.AddMember("secret", std::move(source), p.a);
  AddVolume(p.spec, std::move(volume), p.a);
  ForEachContainer(p.spec, /*with_init=*/true, [&](Value& c) {
    AddVolumeMount(c, secret, args.key_file_path, kSshSubPath, p.a);
  });
}

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

// The container's command becomes `sh -c <script>` (Volcano replaces it;
// args stay as the template wrote them).
void SetShellCommand(Value& container, const std::string& script, PodAllocator& a) {
  Value command(rapidjson::kArrayType);
  command.PushBack(Str("sh", a), a);
  command.PushBack(Str("-c", a), a);
  command.PushBack(Str(script, a), a);
  SetMember(container, "command", std::move(command), a);
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

void TensorFlowOnPodCreate(PodContext& p) {
  const auto& tasks = p.job.spec.tasks;
  if (tasks.size() == 1 && tasks[0].replicas == 1) return;  // stand-alone: no cluster
  const TensorFlowArgs args = ParseTensorFlowArgs(*PluginArgs(p.job, kTensorFlowPlugin));
  const std::string config = TfConfig(p.job, args, p.task_name(), p.index);
  ForEachContainer(p.spec, /*with_init=*/false,
                   [&](Value& c) { AddEnvValue(c, kTfConfigEnv, config, p.a); });
}

// --- Job objects -------------------------------------------------------------

Value ObjectMetadata(const Job& job, std::string_view name, PodAllocator& a) {
  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", Str(name, a), a);
  meta.AddMember("namespace", Str(job.meta.namespace_, a), a);
  meta.AddMember("ownerReferences", JobOwnerReferences(job, a), a);
  return meta;
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

Value JobSelector(const Job& job, PodAllocator& a) {
  return StringMap({{std::string(kJobNameKey), job.meta.name},
                    {std::string(kJobNamespaceKey), job.meta.namespace_}},
                   a);
}

void AddSvcObjects(const Job& job, std::vector<JobObject>* out) {
  const SvcArgs args = ParseSvcArgs(*PluginArgs(job, kSvcPlugin));
  rapidjson::Document doc;
  PodAllocator& a = doc.GetAllocator();

  out->push_back(SvcHostsConfigMap(job));

  Value spec(rapidjson::kObjectType);
  spec.AddMember("clusterIP", "None", a);
  spec.AddMember("selector", JobSelector(job, a), a);
  if (args.publish_not_ready_addresses) spec.AddMember("publishNotReadyAddresses", true, a);
  std::vector<std::pair<std::string_view, Value>> svc;
  svc.emplace_back("spec", std::move(spec));
  out->push_back(
      MakeObject(job, "v1", "Service", "services", ServiceName(job), std::move(svc), doc));

  if (args.disable_network_policy) return;
  Value selector(rapidjson::kObjectType);
  selector.AddMember("matchLabels", JobSelector(job, a), a);
  Value peer(rapidjson::kObjectType);
  Value peer_selector(rapidjson::kObjectType);
  peer_selector.AddMember("matchLabels", JobSelector(job, a), a);
  peer.AddMember("podSelector", std::move(peer_selector), a);
  Value from(rapidjson::kArrayType);
  from.PushBack(std::move(peer), a);
  Value rule(rapidjson::kObjectType);
  rule.AddMember("from", std::move(from), a);
  Value ingress(rapidjson::kArrayType);
  ingress.PushBack(std::move(rule), a);
  Value types(rapidjson::kArrayType);
  types.PushBack("Ingress", a);
  Value np_spec(rapidjson::kObjectType);
  np_spec.AddMember("podSelector", std::move(selector), a);
  np_spec.AddMember("ingress", std::move(ingress), a);
  np_spec.AddMember("policyTypes", std::move(types), a);
  std::vector<std::pair<std::string_view, Value>> np;
  np.emplace_back("spec", std::move(np_spec));
  out->push_back(MakeObject(job, "networking.k8s.io/v1", "NetworkPolicy", "networkpolicies",
                            ServiceName(job), std::move(np), doc));
}

// The ssh client config: no host key checks, one block per pod of every task.
std::string SshConfig(const Job& job, int32_t port) {
  std::string config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n";
  for (const TaskSpec& task : job.spec.tasks) {
    const TemplateHost t = TemplateHostOf(task);
    for (int i = 0; i < task.replicas; ++i) {
      const std::string host =
          t.hostname.empty() ? PodName(job.meta.name, task.name, i) : t.hostname;
      config += "Host " + host + "\n";
      config += "  HostName " + HostOf(job, task, t, i) + "\n";
      config += "  Port " + std::to_string(port) + "\n";
      if (!t.hostname.empty()) break;
    }
  }
  return config;
}

Status AddSshSecret(const Job& job, const SshKeyPair& keys, std::vector<JobObject>* out) {
  const SshArgs args = ParseSshArgs(*PluginArgs(job, kSshPlugin));
  SshKeyPair pair = keys;
  if (!args.private_key.empty() && !args.public_key.empty()) {
    pair = SshKeyPair{args.private_key, args.public_key};
  } else if (keys.private_pem.empty() || keys.public_openssh.empty()) {
    return FailedPreconditionError("spec.plugins.ssh: job " + job.meta.name +
                                   " needs a generated key pair (NeedsSshKeys)");
  }
  rapidjson::Document doc;
  PodAllocator& a = doc.GetAllocator();
  std::map<std::string, std::string> data = {
      {std::string(kSshPrivateKeyFile), kube::EncodeBase64(pair.private_pem)},
      {std::string(kSshPublicKeyFile), kube::EncodeBase64(pair.public_openssh)},
      {std::string(kSshAuthorizedKeysFile), kube::EncodeBase64(pair.public_openssh)},
      {std::string(kSshConfigFile), kube::EncodeBase64(SshConfig(job, args.port))}};
  std::vector<std::pair<std::string_view, Value>> body;
  body.emplace_back("data", StringMap(data, a));
  out->push_back(
      MakeObject(job, "v1", "Secret", "secrets", SshSecretName(job), std::move(body), doc));
  return Status::Ok();
}

Status AddVolumeClaims(const Job& job, std::vector<JobObject>* out) {
  for (size_t k = 0; k < job.spec.volumes.size(); ++k) {
    const VolumeSpec& volume = job.spec.volumes[k];
    if (volume.volume_claim_json.empty()) continue;
    rapidjson::Document doc;
    if (Status s = kube::ParseDocument(volume.volume_claim_json, &doc); !s.ok()) {
      return s.Annotate("spec.volumes[" + std::to_string(k) + "].volumeClaim");
    }
    if (!doc.IsObject()) {
      return InvalidArgumentError("spec.volumes[" + std::to_string(k) +
                                  "].volumeClaim: expected an object, got " +
                                  kube::JsonTypeName(doc));
    }
    std::vector<std::pair<std::string_view, Value>> body;
    body.emplace_back("spec", Value(doc, doc.GetAllocator()));
    out->push_back(MakeObject(job, "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
                              JobVolumeClaimName(job, k), std::move(body), doc));
  }
  return Status::Ok();
}

std::string RayHeadServiceName(const Job& job) { return job.meta.name + "-head-svc"; }

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

// Templates must parse for the host names to be right.
Status CheckTemplates(const Job& job) {
  for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
    const std::string& json = job.spec.tasks[t].template_json;
    if (json.empty()) continue;
    rapidjson::Document doc;
    const std::string field = "spec.tasks[" + std::to_string(t) + "].template";
    if (Status s = kube::ParseDocument(json, &doc); !s.ok()) return s.Annotate(field);
    if (!doc.IsObject()) {
      return InvalidArgumentError(field + ": expected an object, got " + kube::JsonTypeName(doc));
    }
  }
  return Status::Ok();
}

}  // namespace

SvcArgs ParseSvcArgs(const std::vector<std::string>& args) {
  SvcArgs out;
  const Flag flags[] = {{"publish-not-ready-addresses", &out.publish_not_ready_addresses},
                        {"disable-network-policy", &out.disable_network_policy},
                        {"inject-hosts-env", &out.inject_hosts_env}};
  ParseFlags(args, flags);
  return out;
}

SshArgs ParseSshArgs(const std::vector<std::string>& args) {
  SshArgs out;
  const Flag flags[] = {{"ssh-key-file-path", &out.key_file_path},
                        {"ssh-private-key", &out.private_key},
                        {"ssh-public-key", &out.public_key},
                        {"ssh-port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, SshArgs{}.port);
  if (out.key_file_path.empty()) out.key_file_path = std::string(kSshDefaultKeyPath);
  return out;
}

MpiArgs ParseMpiArgs(const std::vector<std::string>& args) {
  MpiArgs out;
  const Flag flags[] = {{"master", &out.master}, {"worker", &out.worker}, {"port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, MpiArgs{}.port);
  return out;
}

PyTorchArgs ParsePyTorchArgs(const std::vector<std::string>& args) {
  PyTorchArgs out;
  std::string timeout;
  const Flag flags[] = {{"master", &out.master},
                        {"worker", &out.worker},
                        {"port", &out.port},
                        {"wait-master-enabled", &out.wait_master_enabled},
                        {"wait-master-timeout", &timeout},
                        {"wait-master-image", &out.wait_master_image}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, PyTorchArgs{}.port);
  // Whole seconds ("600") or a Go duration ("10m").
  if (std::optional<int32_t> seconds = ParseInt32(timeout); seconds && *seconds > 0) {
    out.wait_master_timeout_seconds = *seconds;
  } else if (StatusOr<Duration> d = ParseGoDuration(timeout); !timeout.empty() && d.ok()) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
    if (s > 0 && s <= INT32_MAX) out.wait_master_timeout_seconds = static_cast<int32_t>(s);
  }
  if (out.wait_master_image.empty()) out.wait_master_image = PyTorchArgs{}.wait_master_image;
  return out;
}

TensorFlowArgs ParseTensorFlowArgs(const std::vector<std::string>& args) {
  TensorFlowArgs out;
  const Flag flags[] = {{"ps", &out.ps},
                        {"worker", &out.worker},
                        {"chief", &out.chief},
                        {"evaluator", &out.evaluator},
                        {"port", &out.port}};
  ParseFlags(args, flags);
  out.port = ValidPort(out.port, TensorFlowArgs{}.port);
  return out;
}

RayArgs ParseRayArgs(const std::vector<std::string>& args) {
  RayArgs out;
  const Flag flags[] = {{"head", &out.head},
                        {"headContainer", &out.head_container},
                        {"worker", &out.worker},
                        {"workerContainer", &out.worker_container},
                        {"port", &out.port},
                        {"dashboardPort", &out.dashboard_port},
                        {"clientPort", &out.client_port}};
  ParseFlags(args, flags);
  const RayArgs defaults;
  out.port = ValidPort(out.port, defaults.port);
  out.dashboard_port = ValidPort(out.dashboard_port, defaults.dashboard_port);
  out.client_port = ValidPort(out.client_port, defaults.client_port);
  return out;
}

std::string JobVolumeClaimName(const Job& job, size_t k) {
  const VolumeSpec& volume = job.spec.volumes[k];
  if (!volume.volume_claim_name.empty()) return volume.volume_claim_name;
  return job.meta.name + "-pvc-" + std::to_string(k);
}

std::string JobVolumeName(const Job& job, size_t k) {
  return job.meta.name + "-vol-" + std::to_string(k);
}

std::string ReplicaHost(const Job& job, size_t task, int index) {
  const TaskSpec& ts = job.spec.tasks[task];
  return HostOf(job, ts, TemplateHostOf(ts), index);
}

std::vector<std::string> TaskHosts(const Job& job, size_t task) {
  const TaskSpec& ts = job.spec.tasks[task];
  const TemplateHost t = TemplateHostOf(ts);
  std::vector<std::string> hosts;
  for (int i = 0; i < ts.replicas; ++i) {
    hosts.push_back(HostOf(job, ts, t, i));
    if (!t.hostname.empty()) break;  // every replica has the same name
  }
  return hosts;
}

std::map<std::string, std::string> SvcHostsData(const Job& job) {
  std::map<std::string, std::string> data;
  for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
    const std::string& name = job.spec.tasks[t].name;
    const std::vector<std::string> hosts = TaskHosts(job, t);
    data[HostKey(name) + ".host"] = Join(hosts, "\n");
    data[HostsEnv(name)] = Join(hosts, ",");
    data[NumEnv(name)] = std::to_string(hosts.size());
  }
  return data;
}

JobObject SvcHostsConfigMap(const Job& job) {
  rapidjson::Document doc;
  std::vector<std::pair<std::string_view, Value>> body;
  body.emplace_back("data", StringMap(SvcHostsData(job), doc.GetAllocator()));
  return MakeObject(job, "v1", "ConfigMap", "configmaps", HostsConfigMapName(job), std::move(body),
                    doc);
}

std::string SvcHostsPatch(const Job& job) {
  rapidjson::Document doc;
  doc.SetObject();
  doc.AddMember("data", StringMap(SvcHostsData(job), doc.GetAllocator()), doc.GetAllocator());
  return kube::ToCompactJson(doc);
}

bool NeedsSshKeys(const Job& job) {
  const std::vector<std::string>* args = PluginArgs(job, kSshPlugin);
  if (args == nullptr) return false;
  const SshArgs ssh = ParseSshArgs(*args);
  return ssh.private_key.empty() || ssh.public_key.empty();
}

StatusOr<std::vector<JobObject>> BuildJobObjects(const Job& job, const SshKeyPair& keys) {
  MUSTER_RETURN_IF_ERROR(CheckTemplates(job));
  std::vector<JobObject> out;
  if (PluginArgs(job, kSvcPlugin) != nullptr) AddSvcObjects(job, &out);
  if (PluginArgs(job, kSshPlugin) != nullptr) MUSTER_RETURN_IF_ERROR(AddSshSecret(job, keys, &out));
  if (PluginArgs(job, kRayPlugin) != nullptr) AddRayHeadService(job, &out);
  MUSTER_RETURN_IF_ERROR(AddVolumeClaims(job, &out));
  return out;
}

void ApplyPlugins(const Job& job, size_t task, int index, rapidjson::Document* pod) {
  PodAllocator& a = pod->GetAllocator();
  const std::string pod_name = StringAt((*pod)["metadata"], "name");
  PodContext p{job, task, index, (*pod)["spec"], a};
  if (PluginArgs(job, kEnvPlugin) != nullptr) EnvOnPodCreate(p);
  if (PluginArgs(job, kSvcPlugin) != nullptr) SvcOnPodCreate(p, pod_name);
  if (PluginArgs(job, kSshPlugin) != nullptr) SshOnPodCreate(p);
  if (PluginArgs(job, kMpiPlugin) != nullptr) MpiOnPodCreate(p);
  if (PluginArgs(job, kPyTorchPlugin) != nullptr) PyTorchOnPodCreate(p);
  if (PluginArgs(job, kTensorFlowPlugin) != nullptr) TensorFlowOnPodCreate(p);
  if (PluginArgs(job, kRayPlugin) != nullptr) RayOnPodCreate(p);
}

namespace pod_json {

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

Value* MemberOf(Value& obj, std::string_view key) {
  const Value& read = obj;
  auto it = read.FindMember(Ref(key));
  return it == read.MemberEnd() ? nullptr : const_cast<Value*>(&it->value);
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

}  // namespace pod_json

}  // namespace muster::reconciler
