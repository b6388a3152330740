// Volcano's job plugins (reference volcano.md §3), pure: their arguments,
// what each does to a pod being built (OnPodCreate), and the objects they own
// (OnJobAdd: the svc Service, ConfigMap and NetworkPolicy, the ssh Secret),
// plus the PVCs of spec.volumes. Every env var, file, port and name is
// Volcano's, so users' images and scripts keep working.
//
// Where muster departs from Volcano (each one where Volcano would crash, build
// an invalid object, or behave by chance):
//   - plugins run in one fixed order (env, svc, ssh, mpi, pytorch,
//     tensorflow, ray) instead of Go's random map order;
//   - an env var, a volume name, a mount path or a container port (same
//     number or same name) the pod already has is left as the template wrote
//     it instead of being added a second time (the API would reject the pod);
//   - an argument parse continues past an unknown or malformed flag (Go's
//     FlagSet stops at it, silently dropping the flags after it);
//   - a port that is not 1..65535 is the plugin's default (Volcano does
//     this for --ssh-port only);
//   - mpi without its worker task (or with 0 workers) sets no MPI_HOST
//     (Volcano indexes tasks[-1] and panics);
//   - the ssh key pair comes from the args only when both --ssh-private-key
//     and --ssh-public-key are given.
//
// Thread-compatible; every function is pure.
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/job.h"
#include "model/status.h"
#include "reconciler/ssh_keys.h"

namespace muster::reconciler {

// Plugin names, as keys of spec.plugins.
inline constexpr std::string_view kEnvPlugin = "env";
inline constexpr std::string_view kSvcPlugin = "svc";
inline constexpr std::string_view kSshPlugin = "ssh";
inline constexpr std::string_view kMpiPlugin = "mpi";
inline constexpr std::string_view kPyTorchPlugin = "pytorch";
inline constexpr std::string_view kTensorFlowPlugin = "tensorflow";
inline constexpr std::string_view kRayPlugin = "ray";

// Env vars and ports the plugins inject.
inline constexpr std::string_view kVkTaskIndexEnv = "VK_TASK_INDEX";
inline constexpr std::string_view kVcTaskIndexEnv = "VC_TASK_INDEX";
inline constexpr std::string_view kMpiHostEnv = "MPI_HOST";
inline constexpr std::string_view kMasterAddrEnv = "MASTER_ADDR";
inline constexpr std::string_view kMasterPortEnv = "MASTER_PORT";
inline constexpr std::string_view kWorldSizeEnv = "WORLD_SIZE";
inline constexpr std::string_view kRankEnv = "RANK";
inline constexpr std::string_view kTfConfigEnv = "TF_CONFIG";
inline constexpr std::string_view kMpiPortName = "mpijob-port";
inline constexpr std::string_view kPyTorchPortName = "pytorchjob-port";
inline constexpr std::string_view kWaitForMasterContainer = "wait-for-master";
// ray: the head container's port names (and the head Service's).
inline constexpr std::string_view kRayGcsPortName = "gcs";
inline constexpr std::string_view kRayDashboardPortName = "dashboard";
inline constexpr std::string_view kRayClientPortName = "client-server";

// ssh: where the keys go and the Secret's keys.
inline constexpr std::string_view kSshDefaultKeyPath = "/root/.ssh";
inline constexpr std::string_view kSshSubPath = ".ssh";
inline constexpr std::string_view kSshPrivateKeyFile = "id_rsa";
inline constexpr std::string_view kSshPublicKeyFile = "id_rsa.pub";
inline constexpr std::string_view kSshAuthorizedKeysFile = "authorized_keys";
inline constexpr std::string_view kSshConfigFile = "config";
// The Secret volume's defaultMode: 0600 under /root/.ssh, 0644 elsewhere (a
// non-root user must be able to read the files).
inline constexpr int kSshRootMode = 0600;
inline constexpr int kSshNonRootMode = 0644;

// Parsed plugin arguments with Volcano's defaults. The parsers accept Go's
// flag syntax: "--k=v", "-k=v", "--k v", "-k v", and for booleans a bare
// "--k" (true) or "--k=<bool>" (1 t T TRUE true True 0 f F FALSE false
// False). Unknown flags, values that do not parse and non-flag words are
// ignored; "--" ends the flags. The last occurrence of a flag wins.
struct SvcArgs {
  bool publish_not_ready_addresses = false;
  bool disable_network_policy = false;
  bool inject_hosts_env = true;
  friend bool operator==(const SvcArgs&, const SvcArgs&) = default;
};
struct SshArgs {
  std::string key_file_path = std::string(kSshDefaultKeyPath);  // --ssh-key-file-path
  std::string private_key;                                      // --ssh-private-key (PEM text)
  std::string public_key;                                       // --ssh-public-key (OpenSSH line)
  int32_t port = 22;                                            // --ssh-port
  friend bool operator==(const SshArgs&, const SshArgs&) = default;
};
struct MpiArgs {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 22;
  friend bool operator==(const MpiArgs&, const MpiArgs&) = default;
};
struct PyTorchArgs {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 23456;
  bool wait_master_enabled = false;           // --wait-master-enabled
  int32_t wait_master_timeout_seconds = 300;  // --wait-master-timeout
  std::string wait_master_image = "busybox:1.36.1";
  friend bool operator==(const PyTorchArgs&, const PyTorchArgs&) = default;
};
struct TensorFlowArgs {
  std::string ps = "ps";
  std::string worker = "worker";
  std::string chief = "chief";
  std::string evaluator = "evaluator";
  int32_t port = 2222;
  friend bool operator==(const TensorFlowArgs&, const TensorFlowArgs&) = default;
};

// ray (Volcano >= 1.11, pkg/controllers/job/plugins/distributed-framework/
// ray/ray.go): which task and container are the head and the workers, and
// the head's GCS, dashboard and client-server ports.
struct RayArgs {
  std::string head = "head";
  std::string head_container = "head";  // --headContainer
  std::string worker = "worker";
  std::string worker_container = "worker";  // --workerContainer
  int32_t port = 6379;                      // --port (GCS)
  int32_t dashboard_port = 8265;            // --dashboardPort
  int32_t client_port = 10001;              // --clientPort
  friend bool operator==(const RayArgs&, const RayArgs&) = default;
};

SvcArgs ParseSvcArgs(const std::vector<std::string>& args);
SshArgs ParseSshArgs(const std::vector<std::string>& args);
MpiArgs ParseMpiArgs(const std::vector<std::string>& args);
PyTorchArgs ParsePyTorchArgs(const std::vector<std::string>& args);
TensorFlowArgs ParseTensorFlowArgs(const std::vector<std::string>& args);
RayArgs ParseRayArgs(const std::vector<std::string>& args);

// An object a job owns besides its pods and PodGroup.
struct JobObject {
  std::string api_version;  // "v1", "networking.k8s.io/v1"
  std::string resource;     // "services", "configmaps", "secrets", "networkpolicies",
                            // "persistentvolumeclaims"
  std::string name;
  std::string json;  // full body for POST, with the job's controller ownerReference
  friend bool operator==(const JobObject&, const JobObject&) = default;
};

// The objects the job's plugins and volumes own, in this order:
//   svc: ConfigMap <job>-svc (per task t, with t' = t with '-' -> '_' and
//        T = upper(t'): "<t'>.host" = hosts joined by "\n", "VC_<T>_HOSTS" =
//        hosts joined by ",", "VC_<T>_NUM" = their count), headless Service
//        <job>, NetworkPolicy <job> unless --disable-network-policy;
//   ssh: Secret <job>-ssh (id_rsa, id_rsa.pub, authorized_keys, config), with
//        the keys of the args when both are given, else `keys`;
//   ray: Service <job>-head-svc selecting the head task's pods (labels
//        volcano.sh/job-name, job-namespace, task-spec=<head>) on TCP ports
//        gcs, dashboard and client-server (targetPort by name);
//   one PVC per spec.volumes[k] with a volumeClaim, named volumeClaimName or
//        <job>-pvc-<k> (JobVolumeClaimName).
// InvalidArgument naming the field when a task template is not valid JSON;
// FailedPrecondition when the Secret needs `keys` and they are empty.
StatusOr<std::vector<JobObject>> BuildJobObjects(const Job& job, const SshKeyPair& keys);
// Volcano's svc OnJobUpdate (pkg/controllers/job/plugins/svc/svc.go): after
// a scale the hosts ConfigMap <job>-svc must list the new replicas. Its data
// for the job as it is now (the keys of BuildJobObjects' ConfigMap), the
// whole ConfigMap (to create it when it is gone), and the merge patch
// {"data": ...} that rewrites it. The ssh Secret's config is not rewritten
// (Volcano's ssh plugin has no OnJobUpdate either).
std::map<std::string, std::string> SvcHostsData(const Job& job);
JobObject SvcHostsConfigMap(const Job& job);
std::string SvcHostsPatch(const Job& job);
// True when the job has the ssh plugin without both key args: the caller
// must generate a pair (GenerateSshKeyPair) for BuildJobObjects.
bool NeedsSshKeys(const Job& job);

// The claim a pod mounts for spec.volumes[k]: volumeClaimName, else
// <job>-pvc-<k>, the PVC BuildJobObjects creates from its volumeClaim (a
// stable name instead of Volcano's random one, so a reconciler that crashes
// between the create and the pods finds the same claim again).
std::string JobVolumeClaimName(const Job& job, size_t k);
// The pod volume for spec.volumes[k]: <job>-vol-<k>.
std::string JobVolumeName(const Job& job, size_t k);

// The DNS name of replica `index` of task `task` as the plugins spell it:
// "<template hostname or <job>-<task>-<index>>.<template subdomain or job>".
// REQUIRES: task < job.spec.tasks.size().
std::string ReplicaHost(const Job& job, size_t task, int index);
// The hosts of a task: one per replica, or just one when its template sets a
// hostname (Volcano's GenerateHosts).
std::vector<std::string> TaskHosts(const Job& job, size_t task);

// --- Pod mutation (used by BuildPod) --------------------------------------
//
// `pod` is a core/v1 Pod document under construction whose metadata
// (name, labels) is set and whose spec has been checked by BuildPod: spec is
// an object; containers, initContainers, volumes and each container's env,
// ports and volumeMounts are arrays of objects, absent, or null.

using PodAllocator = rapidjson::Document::AllocatorType;

// Every plugin of the job, in the fixed order, on replica `index` of task
// `task`.
void ApplyPlugins(const Job& job, size_t task, int index, rapidjson::Document* pod);

// Helpers shared with BuildPod, in their own namespace for their generic
// names. Each leaves what the pod already has.
namespace pod_json {

// [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name, uid, controller:
// true, blockOwnerDeletion: true}]: the job's controller reference.
rapidjson::Value JobOwnerReferences(const Job& job, PodAllocator& a);
// The member `key` of `obj` (null included), or nullptr: the mutable lookup.
// Non-const RapidJSON member iterators do not compare under C++20 in clang
// (-Wambiguous-reversed-operator), so every mutable lookup goes through here.
rapidjson::Value* MemberOf(rapidjson::Value& obj, std::string_view key);
// The member `key` of `obj`, or nullptr when absent, null or `obj` is not an
// object.
const rapidjson::Value* Find(const rapidjson::Value& obj, std::string_view key);
rapidjson::Value* Find(rapidjson::Value& obj, std::string_view key);
// obj[key] when it is a string, else "".
std::string StringAt(const rapidjson::Value& obj, std::string_view key);
// A copy of `s` in `a`.
rapidjson::Value Str(std::string_view s, PodAllocator& a);
// The array at `key` of `obj`, created when absent or null.
rapidjson::Value& ArrayMember(rapidjson::Value& obj, std::string_view key, PodAllocator& a);
// Sets obj[key] = value, replacing an existing member.
void SetMember(rapidjson::Value& obj, std::string_view key, rapidjson::Value value,
               PodAllocator& a);
// Appends the env var `var` ({name, value | valueFrom}) to the container
// unless it has a variable of that name (the template wins).
void AddEnv(rapidjson::Value& container, rapidjson::Value var, PodAllocator& a);
// Appends `volume` to spec.volumes unless one of the same name exists.
void AddVolume(rapidjson::Value& spec, rapidjson::Value volume, PodAllocator& a);
// Appends a volumeMount unless the container mounts something at `mount_path`.
void AddVolumeMount(rapidjson::Value& container, std::string_view volume,
                    std::string_view mount_path, std::string_view sub_path, PodAllocator& a);

}  // namespace pod_json

}  // namespace muster::reconciler
