// libFuzzer target: a Job document through the reconciler's pure part. Any
// input must yield a Status or a result, never a crash: a valid Job's pods,
// plugin objects and PodGroup are built, and one lifecycle pass runs on it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "kube/codec/volcano_codec.h"
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

void Expand(const Job& job) {
  for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
    int replicas = job.spec.tasks[t].replicas;
    for (int i = 0; i < replicas && i < kIndicesPerTask; ++i) (void)rc::BuildPod(job, t, i);
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
  PodGroup group = rc::DesiredPodGroup(job);
  group.status.phase = "Inqueue";
  rc::JobSnapshot snapshot{&job, {}, &group};
  (void)rc::Reconcile(snapshot, rc::Request{}, muster::Time::FromUnixSeconds(1'750'000'000));
  return 0;
}
