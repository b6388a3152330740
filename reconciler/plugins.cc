#include "reconciler/plugins.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>

#include "kube/client/pem.h"
#include "kube/codec/json.h"
#include "reconciler/naming.h"
#include "reconciler/plugin_support.h"

// env, svc and ssh, what every plugin's objects and hosts are built from, and
// the order the plugins run in. mpi, pytorch, tensorflow and ray are in
// framework_plugins.cc, the arguments in plugin_args.cc.
namespace muster::reconciler {
namespace {

using plugins_internal::AddRayHeadService;
using plugins_internal::ForEachContainer;
using plugins_internal::HostOf;
using plugins_internal::JobSelector;
using plugins_internal::Join;
using plugins_internal::MakeObject;
using plugins_internal::MpiOnPodCreate;
using plugins_internal::PluginArgs;
using plugins_internal::PodContext;
using plugins_internal::PyTorchOnPodCreate;
using plugins_internal::RayOnPodCreate;
using plugins_internal::StringMap;
using plugins_internal::TemplateHost;
using plugins_internal::TemplateHostOf;
using plugins_internal::TensorFlowOnPodCreate;
using pod_json::AddEnvValue;
using pod_json::AddEnvValueFrom;
using pod_json::AddVolume;
using pod_json::AddVolumeMount;
using pod_json::SetMember;
using pod_json::Str;
using pod_json::StringAt;
using rapidjson::Value;

// --- Hosts ConfigMap keys ------------------------------------------------------

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

// --- OnPodCreate, one per plugin ---------------------------------------------

void EnvOnPodCreate(PodContext& p) {
  const std::string index = std::to_string(p.index);
  ForEachContainer(p.spec, /*with_init=*/true, [&](Value& c) {
    AddEnvValue(c, kVkTaskIndexEnv, index, p.a);
    AddEnvValue(c, kVcTaskIndexEnv, index, p.a);
  });
}

// The env var `name` from the key of the same name of the hosts ConfigMap.
void AddHostsEnv(Value& container, const std::string& name, const std::string& config_map,
                 PodAllocator& a) {
  Value ref(rapidjson::kObjectType);
  ref.AddMember("name", Str(config_map, a), a);
  ref.AddMember("key", Str(name, a), a);
  AddEnvValueFrom(container, name, "configMapKeyRef", std::move(ref), a);
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
        AddHostsEnv(c, HostsEnv(t.name), config_map, p.a);
        AddHostsEnv(c, NumEnv(t.name), config_map, p.a);
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

// --- Job objects -------------------------------------------------------------

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

}  // namespace muster::reconciler
