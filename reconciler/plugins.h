// Volcano's job plugins (pkg/controllers/job/plugins/), pure: what each does
// to a pod being built (OnPodCreate), and the objects they own (OnJobAdd: the
// svc Service, ConfigMap and NetworkPolicy, the ssh Secret, ray's head
// Service), plus the PVCs of spec.volumes. Their arguments are parsed by
// plugin_args.h. Every env var, file, port and name is Volcano's, so users'
// images and scripts keep working.
//
// Where muster departs from Volcano (each one where Volcano would crash, build
// an invalid object, or behave by chance):
//   - plugins run in one fixed order (env, svc, ssh, mpi, pytorch,
//     tensorflow, ray) instead of Go's random map order;
//   - an env var, a volume name, a mount path or a container port (same
//     number or same name) the pod already has is left as the template wrote
//     it instead of being added a second time (the API would reject the pod);
//   - argument parsing departs from Go as plugin_args.h says;
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
#include "reconciler/plugin_args.h"
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

// ssh: where the keys go (kSshDefaultKeyPath: plugin_args.h) and the Secret's
// keys.
inline constexpr std::string_view kSshSubPath = ".ssh";
inline constexpr std::string_view kSshPrivateKeyFile = "id_rsa";
inline constexpr std::string_view kSshPublicKeyFile = "id_rsa.pub";
inline constexpr std::string_view kSshAuthorizedKeysFile = "authorized_keys";
inline constexpr std::string_view kSshConfigFile = "config";
// The Secret volume's defaultMode: 0600 under /root/.ssh, 0644 elsewhere (a
// non-root user must be able to read the files).
inline constexpr int kSshRootMode = 0600;
inline constexpr int kSshNonRootMode = 0644;

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

// Every plugin of the job, in the fixed order, on replica `index` of task
// `task`.
void ApplyPlugins(const Job& job, size_t task, int index, rapidjson::Document* pod);

}  // namespace muster::reconciler
