// libFuzzer target: a Job document through the reconciler's pure part. Any
// input must yield a Status or a result, never a crash: a valid Job's pods
// and PodGroup (in both --gpu-fraction-modes), its GPU memory check and
// plugin objects are built, and one lifecycle pass runs on it. A finding
// too: a pod of a valid Job that asks a fraction of an extended resource,
// which the API server refuses (a share of one GPU must reach the pod in
// another form, gpu_fraction.h).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "model/quantity.h"
#include "reconciler/gpu_fraction.h"
#include "reconciler/job_admission.h"
#include "reconciler/lifecycle.h"
#include "reconciler/plugins.h"
#include "reconciler/pod_builder.h"

namespace {

using muster::Job;
using muster::PodGroup;
namespace rc = muster::reconciler;

// Replicas built per task: enough for every plugin's per-index paths, few
// enough that a fuzzed replicas: 100000 does not time out.
constexpr int kIndicesPerTask = 3;

// The first copy of obj[key] (as muster's decoder reads an object's field);
// nullptr when obj is not an object or has no such key. Const: clang rejects
// comparing non-const member iterators in C++20.
const rapidjson::Value* Field(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  const auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Aborts when a container of `pod` (BuildPod's JSON) asks a fraction of a
// resource with a domain (nvidia.com/gpu, volcano.sh/vgpu-memory, ...): the
// API server would refuse the pod. Keys written twice are read as muster's
// decoder reads them (kube/codec/json.cc: an object's field is its first
// copy, a resource its last), since that is what BuildPod was told; the API
// server reads the last copy of either, but it never serves a Job whose text
// names a key twice.
void ExpectWholeExtendedResources(const std::string& pod) {
  rapidjson::Document doc;
  if (!muster::kube::ParseDocument(pod, &doc).ok()) std::abort();
  const rapidjson::Value* spec = Field(doc, "spec");
  if (spec == nullptr) std::abort();
  for (const char* list : {"initContainers", "containers"}) {
    const rapidjson::Value* containers = Field(*spec, list);
    if (containers == nullptr || !containers->IsArray()) continue;
    for (const rapidjson::Value& c : containers->GetArray()) {
      const rapidjson::Value* resources = Field(c, "resources");
      for (const char* map : {"limits", "requests"}) {
        const rapidjson::Value* amounts = resources ? Field(*resources, map) : nullptr;
        if (amounts == nullptr || !amounts->IsObject()) continue;
        std::map<std::string, std::string> last;  // a resource written twice: its last copy
        for (const auto& m : amounts->GetObject()) {
          last[m.name.GetString()] =
              m.value.IsString() ? m.value.GetString() : muster::kube::ToCompactJson(m.value);
        }
        for (const auto& [name, text] : last) {
          if (name.find('/') == std::string::npos) continue;
          const muster::StatusOr<muster::Quantity> q = muster::Quantity::Parse(text);
          if (q.ok() && !q->is_integer()) std::abort();  // a finding
        }
      }
    }
  }
}

rc::GpuFractionOptions VgpuMode() {
  return {.mode = rc::GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 81920};
}

// Each mode's pods and PodGroup (minResources count the pods as built), and
// the memory check against a cluster with GPUs of 40 GiB and one with no
// known memory.
void Expand(const Job& job) {
  for (const rc::GpuFractionOptions& gpu : {rc::GpuFractionOptions{}, VgpuMode()}) {
    rc::PodBuildOptions options;
    options.gpu_fraction = gpu;
    for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
      const int replicas = job.spec.tasks[t].replicas;
      for (int i = 0; i < replicas && i < kIndicesPerTask; ++i) {
        const muster::StatusOr<std::string> pod = rc::BuildPod(job, t, i, options);
        if (pod.ok()) ExpectWholeExtendedResources(*pod);
      }
    }
    (void)rc::DesiredPodGroup(rc::JobAsBuilt(job, gpu));
    for (int64_t largest_mib : {int64_t{40960}, int64_t{0}}) {
      (void)rc::CheckGpuMemory(job, gpu, largest_mib);
    }
  }
  rc::SshKeyPair keys{"-----BEGIN RSA PRIVATE KEY-----\nAA==\n-----END RSA PRIVATE KEY-----\n",
                      "ssh-rsa AAAA fuzz\n"};
  (void)rc::BuildJobObjects(job, keys);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  muster::StatusOr<Job> decoded = muster::kube::DecodeJob(text);
  if (!decoded.ok()) return 0;
  Job job = rc::WithDefaults(*decoded);
  if (job.meta.uid.empty()) job.meta.uid = "fuzz-uid";
  if (!rc::ValidateJob(job).ok()) return 0;
  // A valid Job is an allowed update of itself, also through its digest's text.
  const std::optional<rc::AcceptedSpec> digest =
      rc::DecodeAcceptedSpec(rc::EncodeAcceptedSpec(rc::AcceptedSpecOf(job)));
  if (!digest || !rc::ValidateJobUpdate(job, job).ok() ||
      !rc::ValidateJobUpdate(*digest, job).ok()) {
    std::abort();  // a finding
  }
  int64_t total = 0;
  for (const auto& task : job.spec.tasks) total += task.replicas;
  if (total > 10000) return 0;  // the lifecycle walks every replica
  Expand(job);
  // As the controller runs it: on the Job as its pods are built.
  const Job built = rc::JobAsBuilt(job, {});
  PodGroup group = rc::DesiredPodGroup(built);
  group.status.phase = "Inqueue";
  rc::JobSnapshot snapshot{&built, {}, &group};
  (void)rc::Reconcile(snapshot, rc::Request{}, muster::Time::FromUnixSeconds(1'750'000'000));
  return 0;
}
