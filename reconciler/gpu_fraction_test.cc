// A share of one GPU in a Volcano Job's task template (gpu_fraction.h):
// what admission refuses (each refusal's whole message, naming the field),
// what the cluster's GPU memory refuses, and what the PodGroup of such a Job
// asks.
#include "reconciler/gpu_fraction.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "model/gpu_share.h"
#include "reconciler/job_admission.h"
#include "reconciler/lifecycle.h"

namespace muster::reconciler {
namespace {

// The Job of issue 18 (Volcano's lm-mpi-job with workers asking half a GPU).
constexpr std::string_view kIssueJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "lm-mpi-job", "uid": "u-1"},
  "spec": {"minAvailable": 1, "schedulerName": "volcano",
    "plugins": {"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"]},
    "tasks": [
      {"replicas": 1, "name": "mpimaster",
       "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
       "template": {"spec": {"containers": [{"name": "mpimaster", "image": "example-mpi:0.0.1",
         "command": ["/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd; mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world"]}],
         "restartPolicy": "OnFailure"}}},
      {"replicas": 2, "name": "mpiworker",
       "template": {"spec": {"containers": [{"name": "mpiworker", "image": "example-mpi:0.0.1",
         "command": ["/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd -D"],
         "resources": {"limits": {"nvidia.com/gpu": 0.5}}}],
         "restartPolicy": "OnFailure"}}}]}
})";

StatusOr<Job> DecodeDefaulted(std::string_view json) {
  StatusOr<Job> job = kube::DecodeJob(json);
  if (!job.ok()) return job.status();
  return WithDefaults(*std::move(job));
}

Job MustDecode(std::string_view json) {
  StatusOr<Job> job = DecodeDefaulted(json);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << json;
  return job.ok() ? *job : Job{};
}

// A Job whose one task "w" has `containers` (a JSON array), `init` (a JSON
// array, "" for none) and template metadata `meta` ("" for none).
std::string TemplateJob(std::string_view containers, std::string_view init = "",
                        std::string_view meta = "") {
  std::string tmpl = "{";
  if (!meta.empty()) tmpl += R"("metadata":)" + std::string(meta) + ",";
  tmpl += R"("spec":{)";
  if (!init.empty()) tmpl += R"("initContainers":)" + std::string(init) + ",";
  tmpl += R"("containers":)" + std::string(containers) + "}}";
  return R"({"metadata":{"name":"j","namespace":"ns","uid":"u-2"},"spec":{"tasks":[)"
         R"({"name":"w","replicas":2,"template":)" +
         tmpl + "}]}}";
}

// One container "c" asking `resources` (a JSON object).
std::string Asking(std::string_view resources) {
  return R"([{"name":"c","image":"i","resources":)" + std::string(resources) + "}]";
}

const std::string kC0 = "spec.tasks[0].template.spec.containers[0]";
constexpr std::string_view kUnknownMemory =
    "no GPU in the cluster has a known memory (no node has a volcano.sh/node-vgpu-register "
    "annotation or an nvidia.com/gpu.memory label)";

// ---------------------------------------------------------------------------
// Admission.

struct RefusalCase {
  std::string name;
  std::string job;
  std::string want;  // the whole message; "" = valid
};

// Each case's job through ValidateJob: valid, or refused with exactly `want`.
void ExpectRefusals(const std::vector<RefusalCase>& cases) {
  for (const RefusalCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = ValidateJob(MustDecode(c.job));
    if (c.want.empty()) {
      EXPECT_EQ(status, Status::Ok());
    } else {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(status.message(), c.want);
    }
  }
}

// Shares of one GPU, whole GPUs and vGPUs a pod may ask.
TEST(GpuFractionAdmissionTest, AcceptedAsks) {
  ExpectRefusals({
      {"a half in limits", TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":0.5}})")), ""},
      {"a half in limits and requests",
       TemplateJob(
           Asking(R"({"limits":{"nvidia.com/gpu":"0.5"},"requests":{"nvidia.com/gpu":"500m"}})")),
       ""},
      {"the smallest and the largest share",
       TemplateJob(R"([{"name":"a","resources":{"limits":{"nvidia.com/gpu":0.01}}},)"
                   R"({"name":"b","resources":{"requests":{"nvidia.com/gpu":0.98}}}])"),
       ""},
      {"whole GPUs", TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":2}})")), ""},
      {"whole GPUs in an init container and a container",
       TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":1}})"),
                   R"([{"name":"i","resources":{"limits":{"nvidia.com/gpu":1}}}])"),
       ""},
      {"vGPU resources", TemplateJob(Asking(R"({"limits":{"volcano.sh/vgpu-number":1}})")), ""},
  });
}

// A share of one GPU that is not one.
TEST(GpuFractionAdmissionTest, RefusalsNameTheFieldOfAShare) {
  ExpectRefusals({
      {"three decimals", TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":0.333}})")),
       kC0 + ".resources.limits[nvidia.com/gpu]: 0.333 nvidia.com/gpu: a share of one GPU has at "
             "most two decimals"},
      {"above one GPU and not whole", TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":1.5}})")),
       kC0 + ".resources.limits[nvidia.com/gpu]: 1.5 nvidia.com/gpu: a request above one GPU "
             "must be whole"},
      {"a request unlike its limit",
       TemplateJob(
           Asking(R"({"limits":{"nvidia.com/gpu":0.5},"requests":{"nvidia.com/gpu":0.3}})")),
       kC0 + ".resources.requests[nvidia.com/gpu]: 0.3 nvidia.com/gpu differs from the limit 0.5: "
             "a GPU request equals its limit"},
      {"a share in an init container",
       TemplateJob(Asking(R"({})"),
                   R"([{"name":"i","resources":{"limits":{"nvidia.com/gpu":0.5}}}])"),
       "spec.tasks[0].template.spec.initContainers[0].resources.limits[nvidia.com/gpu]: 0.5 "
       "nvidia.com/gpu: an init container asks whole GPUs (a share of one GPU is for the pod's "
       "containers)"},
      {"shares adding up past one GPU",
       TemplateJob(R"([{"name":"a","resources":{"limits":{"nvidia.com/gpu":0.6}}},)"
                   R"({"name":"b","resources":{"limits":{"nvidia.com/gpu":0.6}}}])"),
       "spec.tasks[0].template.spec.containers: the containers' shares add up to 1.2 GPUs: a pod "
       "shares one GPU"},
      {"shares adding up to one GPU",
       TemplateJob(R"([{"name":"a","resources":{"limits":{"nvidia.com/gpu":0.5}}},)"
                   R"({"name":"b","resources":{"limits":{"nvidia.com/gpu":0.5}}}])"),
       "spec.tasks[0].template.spec.containers: the containers' shares add up to 1 GPU: a pod "
       "shares one GPU"},
  });
}

// A share beside other GPU asks, and vGPU and annotation values.
TEST(GpuFractionAdmissionTest, RefusalsNameTheFieldOfMixedAsks) {
  ExpectRefusals({
      {"a share beside whole GPUs",
       TemplateJob(R"([{"name":"a","resources":{"limits":{"nvidia.com/gpu":0.5}}},)"
                   R"({"name":"b","resources":{"limits":{"nvidia.com/gpu":1}}}])"),
       kC0 + ".resources.limits[nvidia.com/gpu]: 0.5 nvidia.com/gpu: a share of one GPU beside "
             "whole GPUs (containers[1] asks 1): a pod asks a share of one GPU or whole GPUs, not "
             "both"},
      {"a share beside an init container's whole GPU",
       TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":0.5}})"),
                   R"([{"name":"i","resources":{"limits":{"nvidia.com/gpu":1}}}])"),
       kC0 + ".resources.limits[nvidia.com/gpu]: 0.5 nvidia.com/gpu: a share of one GPU beside "
             "whole GPUs (initContainers[0] asks 1): a pod asks a share of one GPU or whole GPUs, "
             "not both"},
      {"a share beside vGPU resources",
       TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":0.5,"volcano.sh/vgpu-memory":1024}})")),
       kC0 + ".resources.limits[nvidia.com/gpu]: 0.5 nvidia.com/gpu: a share of one GPU beside "
             "vGPU resources (containers[0] asks volcano.sh/vgpu-memory): a pod asks a share of "
             "one GPU or vGPUs, not both"},
      {"a container asking whole and shared GPUs",
       TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":1,"volcano.sh/vgpu-number":1}})")),
       kC0 + ".resources.limits[nvidia.com/gpu]: a container asks whole GPUs or vGPU shares, not "
             "both"},
      {"a share beside the annotation",
       TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":0.5}})"), "",
                   R"({"annotations":{"muster.io/gpu-fraction":"0.5"}})"),
       "spec.tasks[0].template.metadata.annotations[muster.io/gpu-fraction]: set beside a share "
       "in nvidia.com/gpu (containers[0] asks 0.5): ask the share one way"},
      {"vGPU cores above 100",
       TemplateJob(
           Asking(R"({"limits":{"volcano.sh/vgpu-number":1,"volcano.sh/vgpu-cores":150}})")),
       kC0 +
           ".resources.limits[volcano.sh/vgpu-cores]: 150 percent of a GPU's compute: at most 100"},
      {"a bad annotation in the template",
       TemplateJob(Asking("{}"), "", R"({"annotations":{"muster.io/gpu-fraction":"1.5"}})"),
       "spec.tasks[0].template.metadata.annotations[muster.io/gpu-fraction]: \"1.5\": a share of "
       "one GPU must be above 0 and below 1"},
  });
}

TEST(GpuFractionAdmissionTest, TheFieldOfALaterTask) {
  Job job = MustDecode(kIssueJob);
  job.spec.tasks[1].template_pod.spec.containers[0].resources.limits.Set(kNvidiaGpu, 250);
  EXPECT_EQ(ValidateJob(job), Status::Ok());
  job.spec.tasks[1].template_pod.spec.containers[0].resources.limits.Set(kNvidiaGpu, 2500);
  EXPECT_EQ(ValidateJob(job).message(),
            "spec.tasks[1].template.spec.containers[0].resources.limits[nvidia.com/gpu]: 2.5 "
            "nvidia.com/gpu: a request above one GPU must be whole");
}

// A negative amount never reaches admission: the Job does not decode, and
// the reconciler answers it with the decoder's message
// (controller_undecodable_test.cc), which names the field.
TEST(GpuFractionAdmissionTest, ANegativeAmountIsRefusedByTheDecoderNamingTheField) {
  StatusOr<Job> job = kube::DecodeJob(TemplateJob(Asking(R"({"limits":{"nvidia.com/gpu":-1}})")));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(kube::DecodeProblem(job.status()),
            kC0 + R"(.resources.limits["nvidia.com/gpu"]: quantity "-1" of nvidia.com/gpu is )"
                  "negative");
}

TEST(GpuFractionAdmissionTest, TheIssueJobIsValid) {
  EXPECT_EQ(ValidateJob(MustDecode(kIssueJob)), Status::Ok());
}

// ---------------------------------------------------------------------------
// The cluster's GPU memory.

struct MemoryCase {
  std::string name;
  std::string resources;  // the one container's
  GpuFractionMode mode;
  int64_t largest;
  bool asks;
  std::string want;  // "" = admitted
};

TEST(GpuFractionMemoryTest, MemoryNoGpuHasIsRefused) {
  const GpuFractionMode kAnn = GpuFractionMode::kAnnotation;
  const GpuFractionMode kVgpu = GpuFractionMode::kVgpu;
  const std::string limit = kC0 + ".resources.limits";
  const std::vector<MemoryCase> cases = {
      {"vGPU memory within the largest GPU",
       R"({"limits":{"volcano.sh/vgpu-number":1,"volcano.sh/vgpu-memory":32768}})", kAnn, 32768,
       true, ""},
      {"vGPU memory larger than any GPU",
       R"({"limits":{"volcano.sh/vgpu-number":1,"volcano.sh/vgpu-memory":40960}})", kAnn, 32768,
       true,
       limit + "[volcano.sh/vgpu-memory]: 40960 MiB per vGPU is more than any GPU in the cluster "
               "has (the largest has 32768 MiB)"},
      {"vGPU memory, no GPU memory known", R"({"requests":{"volcano.sh/vgpu-memory":8192}})", kAnn,
       0, true,
       kC0 + ".resources.requests[volcano.sh/vgpu-memory]: 8192 MiB per vGPU, and " +
           std::string(kUnknownMemory)},
      {"a memory percentage, no GPU memory known",
       R"({"limits":{"volcano.sh/vgpu-number":1,"volcano.sh/vgpu-memory-percentage":50}})", kAnn, 0,
       true,
       limit + "[volcano.sh/vgpu-memory-percentage]: 50 percent of a GPU's memory, and " +
           std::string(kUnknownMemory)},
      {"a memory percentage, some GPU memory known",
       R"({"limits":{"volcano.sh/vgpu-number":1,"volcano.sh/vgpu-memory-percentage":50}})", kAnn,
       16384, true, ""},
      {"vGPUs asking no memory", R"({"limits":{"volcano.sh/vgpu-number":2}})", kAnn, 0, false, ""},
      {"a share shares memory only where it is known", R"({"limits":{"nvidia.com/gpu":0.5}})", kAnn,
       0, false, ""},
      {"a share in vgpu mode, no GPU memory known", R"({"limits":{"nvidia.com/gpu":0.5}})", kVgpu,
       0, true,
       limit +
           "[nvidia.com/gpu]: 0.5 of a GPU becomes volcano.sh/vgpu-memory 40960 MiB "
           "(--gpu-fraction-mode=vgpu, --vgpu-gpu-memory-mib=81920), and " +
           std::string(kUnknownMemory)},
      {"a share in vgpu mode larger than any GPU", R"({"limits":{"nvidia.com/gpu":0.5}})", kVgpu,
       32768, true,
       limit + "[nvidia.com/gpu]: 0.5 of a GPU becomes volcano.sh/vgpu-memory 40960 MiB "
               "(--gpu-fraction-mode=vgpu, --vgpu-gpu-memory-mib=81920), more than any GPU in "
               "the cluster has (the largest has 32768 MiB)"},
      {"a share in vgpu mode within the GPUs", R"({"limits":{"nvidia.com/gpu":0.5}})", kVgpu, 81920,
       true, ""},
      {"whole GPUs", R"({"limits":{"nvidia.com/gpu":8}})", kVgpu, 0, false, ""},
  };
  for (const MemoryCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Job job = MustDecode(TemplateJob(Asking(c.resources)));
    ASSERT_EQ(ValidateJob(job), Status::Ok());
    const GpuFractionOptions options{.mode = c.mode, .vgpu_gpu_memory_mib = 81920};
    EXPECT_EQ(AsksGpuMemory(job, options), c.asks);
    const Status status = CheckGpuMemory(job, options, c.largest);
    if (c.want.empty()) {
      EXPECT_EQ(status, Status::Ok());
    } else {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(status.message(), c.want);
    }
  }
}

TEST(GpuFractionOptionsTest, VgpuModeNeedsTheGpuMemory) {
  EXPECT_EQ(ValidateGpuFractionOptions({}), Status::Ok());
  EXPECT_EQ(ValidateGpuFractionOptions({.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 1}),
            Status::Ok());
  const Status missing = ValidateGpuFractionOptions({.mode = GpuFractionMode::kVgpu});
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.message().rfind("--gpu-fraction-mode=vgpu needs --vgpu-gpu-memory-mib", 0), 0u)
      << missing.message();
}

// ---------------------------------------------------------------------------
// What the pods ask, as built.

TEST(GpuFractionBuildTest, VgpuShareRoundsCoresAndFloorsMemory) {
  EXPECT_EQ(VgpuShareOf(500, 81920), (VgpuShare{.number = 1, .cores = 50, .memory_mib = 40960}));
  EXPECT_EQ(VgpuShareOf(330, 16160), (VgpuShare{.number = 1, .cores = 33, .memory_mib = 5332}));
  EXPECT_EQ(VgpuShareOf(10, 15), (VgpuShare{.number = 1, .cores = 1, .memory_mib = 0}));
}

TEST(GpuFractionBuildTest, TemplateAsBuiltInEachMode) {
  const Job job = MustDecode(
      TemplateJob(R"([{"name":"a","resources":{"limits":{"nvidia.com/gpu":0.25,"cpu":"1"}}},)"
                  R"({"name":"b","resources":{"requests":{"nvidia.com/gpu":0.5}}}])"));
  const Pod& tmpl = job.spec.tasks[0].template_pod;
  EXPECT_EQ(ContainerGpuShares(tmpl), (std::vector<int32_t>{250, 500}));

  const Pod annotated = TemplateAsBuilt(tmpl, {});
  EXPECT_EQ(annotated.meta.annotations.at(std::string(kAnnotationGpuFraction)), "0.75");
  EXPECT_FALSE(annotated.spec.containers[0].resources.limits.Has(kNvidiaGpu));
  EXPECT_TRUE(annotated.spec.containers[0].resources.limits.Has("cpu"));
  EXPECT_FALSE(annotated.spec.containers[1].resources.requests.Has(kNvidiaGpu));
  EXPECT_EQ(annotated.EffectiveRequest().milli_gpus(), 750);
  EXPECT_EQ(GpuDemandOf(annotated)->shares.size(), 1u);

  const Pod vgpu =
      TemplateAsBuilt(tmpl, {.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 16384});
  EXPECT_FALSE(vgpu.meta.annotations.contains(std::string(kAnnotationGpuFraction)));
  const Resources& a = vgpu.spec.containers[0].resources.requests;
  EXPECT_EQ(a.Get(kVgpuNumber), 1);
  EXPECT_EQ(a.Get(kVgpuCores), 25);
  EXPECT_EQ(a.Get(kVgpuMemory), 4096);
  EXPECT_EQ(vgpu.spec.containers[1].resources.limits.Get(kVgpuMemory), 8192);
  EXPECT_EQ(vgpu.EffectiveRequest().milli_gpus(), 0);
  StatusOr<GpuDemand> demand = GpuDemandOf(vgpu);
  ASSERT_TRUE(demand.ok()) << demand.status();
  EXPECT_TRUE(demand->vgpu());
  EXPECT_EQ(demand->shares.size(), 2u);
}

// The PodGroup of a Job whose workers ask half a GPU counts each worker in
// its minimum as half a GPU, written as a quantity the API accepts.
TEST(GpuFractionBuildTest, PodGroupMinResourcesCountTheShares) {
  struct Case {
    int32_t min_available;
    std::string want_gpus;  // "" = none
  };
  for (const Case& c : {Case{1, ""}, Case{2, "0.5"}, Case{3, "1"}}) {
    SCOPED_TRACE(c.min_available);
    Job job = MustDecode(kIssueJob);
    job.spec.min_available = c.min_available;
    const PodGroup pg = DesiredPodGroup(JobAsBuilt(job, {}));
    ASSERT_TRUE(pg.spec.min_resources.has_value());
    const std::map<std::string, std::string> quantities = pg.spec.min_resources->ToQuantities();
    auto it = quantities.find(std::string(kNvidiaGpu));
    EXPECT_EQ(it == quantities.end() ? "" : it->second, c.want_gpus);
    const std::string encoded = kube::EncodePodGroup(pg);
    if (!c.want_gpus.empty()) {
      EXPECT_NE(encoded.find(R"("nvidia.com/gpu":")" + c.want_gpus + "\""), std::string::npos)
          << encoded;
      StatusOr<PodGroup> back = kube::DecodePodGroup(encoded);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->spec.min_resources, pg.spec.min_resources);
    }
  }
  // In vgpu mode the minimum asks the vGPUs the workers will ask.
  Job job = MustDecode(kIssueJob);
  job.spec.min_available = 3;
  const PodGroup pg = DesiredPodGroup(
      JobAsBuilt(job, {.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 16384}));
  EXPECT_EQ(pg.spec.min_resources->Get(kVgpuNumber), 2);
  EXPECT_EQ(pg.spec.min_resources->Get(kVgpuCores), 100);
  EXPECT_EQ(pg.spec.min_resources->Get(kVgpuMemory), 16384);
  EXPECT_FALSE(pg.spec.min_resources->Has(kNvidiaGpu));
}

}  // namespace
}  // namespace muster::reconciler
