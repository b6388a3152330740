#include "reconciler/pod_builder.h"

#include <gtest/gtest.h>
#include <rapidjson/prettywriter.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/naming.h"
#include "reconciler/plugins.h"

namespace muster::reconciler {
namespace {

// Jobs as the reconciler sees them after defaulting (job_admission.h), so
// every test states its whole input.

// One task, every identity field set: template labels/annotations kept,
// job scheduler and priority class, copied job keys, numa policy.
constexpr std::string_view kPlainJob = R"({
  "metadata": {"name": "plain", "namespace": "team-a", "uid": "u-1",
    "labels": {"volcano.sh/preemptable": "true", "team": "a"},
    "annotations": {"volcano.sh/preemptable": "true", "volcano.sh/revocable-zone": "*",
                    "volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "2",
                    "unrelated": "x"}},
  "spec": {"schedulerName": "volcano", "queue": "research", "priorityClassName": "high",
    "minAvailable": 2, "maxRetry": 3,
    "tasks": [{"name": "main", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
      "topologyPolicy": "best-effort",
      "template": {"metadata": {"name": "ignored", "labels": {"app": "trainer"},
                                "annotations": {"note": "kept", "volcano.sh/task-spec": "mine"}},
        "spec": {"restartPolicy": "Never", "nodeSelector": {"gpu": "a100"},
          "tolerations": [{"key": "gpu", "operator": "Exists"}],
          "containers": [{"name": "main", "image": "trainer:1", "args": ["--epochs", "3"],
            "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": 1}}}]}}}]},
  "status": {"version": 2, "retryCount": 1}
})";

// env: init containers too; a variable the template defines is kept.
constexpr std::string_view kEnvJob = R"({
  "metadata": {"name": "envjob", "namespace": "ns", "uid": "u-2"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"env": []},
    "tasks": [{"name": "work", "replicas": 3, "minAvailable": 3, "maxRetry": 3,
      "template": {"spec": {
        "initContainers": [{"name": "fetch", "image": "busybox"}],
        "containers": [{"name": "a", "image": "img", "env": [{"name": "VC_TASK_INDEX", "value": "mine"}]},
                       {"name": "b", "image": "img"}]}}}]}
})";

// svc: two tasks (one with '-'), hosts env for both, /etc/volcano mount.
constexpr std::string_view kSvcJob = R"({
  "metadata": {"name": "svcjob", "namespace": "ns", "uid": "u-3"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"svc": []},
    "tasks": [
      {"name": "ps", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "template": {"spec": {"containers": [{"name": "ps", "image": "img"}]}}},
      {"name": "my-worker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"initContainers": [{"name": "init", "image": "busybox"}],
         "containers": [{"name": "w", "image": "img",
                         "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
         "volumes": [{"name": "data", "emptyDir": {}}]}}}]}
})";

// ssh with a non-root key path: mode 0644, mounted in init containers too.
constexpr std::string_view kSshJob = R"({
  "metadata": {"name": "sshjob", "namespace": "ns", "uid": "u-4"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 1, "maxRetry": 3,
    "plugins": {"ssh": ["--ssh-key-file-path=/home/mpi/.ssh"]},
    "tasks": [{"name": "node", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
      "template": {"spec": {"initContainers": [{"name": "init", "image": "busybox"}],
                            "containers": [{"name": "c", "image": "img"}]}}}]}
})";

// The MPI seed scenario, defaulted: mpi implies svc and ssh.
constexpr std::string_view kMpiJob = R"({
  "metadata": {"name": "lm-mpi-job", "namespace": "default", "uid": "u-5"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"],
                "svc": [], "ssh": []},
    "tasks": [
      {"name": "mpimaster", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
       "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "mpimaster",
         "image": "volcanosh/example-mpi:0.0.3", "workingDir": "/home",
         "command": ["/bin/sh", "-c", "mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world"]}]}}},
      {"name": "mpiworker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "mpiworker",
         "image": "volcanosh/example-mpi:0.0.3", "workingDir": "/home",
         "command": ["/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd -D"],
         "ports": [{"name": "ssh", "containerPort": 22}]}]}}}]}
})";

// Issue 18's MPI job, defaulted: each worker asks half a GPU.
constexpr std::string_view kMpiHalfGpuJob = R"({
  "metadata": {"name": "lm-mpi-job", "namespace": "default", "uid": "u-9"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 1, "maxRetry": 3,
    "plugins": {"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"],
                "svc": [], "ssh": []},
    "tasks": [
      {"name": "mpimaster", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
       "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "mpimaster",
         "image": "example-mpi:0.0.1",
         "command": ["/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd; mpiexec --allow-run-as-root --host ${MPI_HOST} -np 2 mpi_hello_world"]}]}}},
      {"name": "mpiworker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "mpiworker",
         "image": "example-mpi:0.0.1",
         "command": ["/bin/sh", "-c", "mkdir -p /var/run/sshd; /usr/sbin/sshd -D"],
         "resources": {"limits": {"nvidia.com/gpu": 0.5}}}]}}}]}
})";

constexpr std::string_view kPyTorchJob = R"({
  "metadata": {"name": "pytorch-job", "namespace": "default", "uid": "u-6"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []},
    "tasks": [
      {"name": "master", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure",
         "containers": [{"name": "master", "image": "pytorch-dist:1.0"}]}}},
      {"name": "worker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure",
         "containers": [{"name": "worker", "image": "pytorch-dist:1.0"}]}}}]}
})";

constexpr std::string_view kTensorFlowJob = R"({
  "metadata": {"name": "tf-job", "namespace": "default", "uid": "u-7"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"tensorflow": [], "svc": [], "env": []},
    "tasks": [
      {"name": "ps", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "template": {"spec": {"containers": [{"name": "tf", "image": "tf:2"}]}}},
      {"name": "worker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"containers": [{"name": "tf", "image": "tf:2"}]}}}]}
})";

// Volcano's ray plugin: the head container gets its ports and `ray start
// --head`, the worker container joins it; a sidecar container is untouched.
constexpr std::string_view kRayJob = R"({
  "metadata": {"name": "ray-job", "namespace": "default", "uid": "u-8"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 3, "maxRetry": 3,
    "plugins": {"ray": ["--dashboardPort=8266"], "svc": []},
    "tasks": [
      {"name": "head", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure",
         "containers": [{"name": "head", "image": "rayproject/ray:2.40.0",
                         "ports": [{"name": "gcs", "containerPort": 6379}]},
                        {"name": "log-shipper", "image": "fluent-bit:3"}]}}},
      {"name": "worker", "replicas": 2, "minAvailable": 2, "maxRetry": 3,
       "template": {"spec": {"restartPolicy": "OnFailure",
         "containers": [{"name": "worker", "image": "rayproject/ray:2.40.0",
                         "command": ["python", "-c", "pass"]}]}}}]}
})";

// spec.volumes: a named claim and a claim template; a template's own mount
// path is left alone.
constexpr std::string_view kVolumesJob = R"({
  "metadata": {"name": "voljob", "namespace": "ns", "uid": "u-8"},
  "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 1, "maxRetry": 3,
    "volumes": [{"mountPath": "/data", "volumeClaimName": "shared-data"},
                {"mountPath": "/scratch", "volumeClaim": {"accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "10Gi"}}}}],
    "tasks": [{"name": "t", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
      "template": {"spec": {"initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [{"name": "a", "image": "img"},
                       {"name": "b", "image": "img",
                        "volumeMounts": [{"name": "own", "mountPath": "/scratch"}]}],
        "volumes": [{"name": "own", "emptyDir": {}}]}}}]}
})";

Job Decode(std::string_view json) {
  StatusOr<Job> job = kube::DecodeJob(json);
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? *job : Job{};
}

std::string Pretty(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string GoldenPath(std::string_view name) {
  return std::string(MUSTER_TESTDATA_DIR) + "/pods/" + std::string(name) + ".json";
}

bool UpdateGolden() {
  const char* v = std::getenv("MUSTER_UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) == "1";
}

// Compares `actual` (JSON) with testdata/pods/<name>.json as documents (key
// order and spacing do not matter); MUSTER_UPDATE_GOLDEN=1 rewrites the file.
void ExpectGolden(std::string_view name, const std::string& actual) {
  rapidjson::Document got;
  ASSERT_TRUE(kube::ParseDocument(actual, &got).ok()) << actual;
  if (UpdateGolden()) {
    std::ofstream(GoldenPath(name)) << Pretty(got);
    return;
  }
  std::ifstream in(GoldenPath(name));
  ASSERT_TRUE(in.good()) << GoldenPath(name) << " missing; run with MUSTER_UPDATE_GOLDEN=1";
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document want;
  ASSERT_TRUE(kube::ParseDocument(text.str(), &want).ok()) << GoldenPath(name);
  EXPECT_TRUE(got == want) << name << ": got\n"
                           << Pretty(got) << "want\n"
                           << Pretty(want) << "(MUSTER_UPDATE_GOLDEN=1 rewrites the golden file)";
}

struct GoldenCase {
  std::string golden;
  std::string_view job;
  size_t task;
  int index;
  PodBuildOptions options = {};
};

// vgpu mode on 80 GB GPUs.
PodBuildOptions VgpuMode() {
  PodBuildOptions options;
  options.gpu_fraction = {.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 81920};
  return options;
}

class PodBuilderGoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(PodBuilderGoldenTest, MatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  StatusOr<std::string> pod = BuildPod(Decode(c.job), c.task, c.index, c.options);
  ASSERT_TRUE(pod.ok()) << pod.status();
  ExpectGolden(c.golden, *pod);
}

INSTANTIATE_TEST_SUITE_P(
    PodBuilder, PodBuilderGoldenTest,
    testing::Values(GoldenCase{"plain", kPlainJob, 0, 1}, GoldenCase{"env", kEnvJob, 0, 2},
                    GoldenCase{"svc", kSvcJob, 1, 1}, GoldenCase{"ssh", kSshJob, 0, 0},
                    GoldenCase{"mpi_master", kMpiJob, 0, 0},
                    GoldenCase{"mpi_worker", kMpiJob, 1, 1},
                    GoldenCase{"pytorch_master", kPyTorchJob, 0, 0},
                    GoldenCase{"pytorch_worker", kPyTorchJob, 1, 1},
                    GoldenCase{"tensorflow_worker", kTensorFlowJob, 1, 1},
                    GoldenCase{"ray_head", kRayJob, 0, 0}, GoldenCase{"ray_worker", kRayJob, 1, 1},
                    GoldenCase{"volumes", kVolumesJob, 0, 0},
                    GoldenCase{"mpi_worker_half_gpu", kMpiHalfGpuJob, 1, 1},
                    GoldenCase{"mpi_worker_half_gpu_vgpu", kMpiHalfGpuJob, 1, 0, VgpuMode()}),
    [](const testing::TestParamInfo<GoldenCase>& info) { return info.param.golden; });

// The objects of the MPI job (svc + ssh) with a fixed key pair.
TEST(PodBuilderGoldenObjectsTest, MpiJobObjects) {
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(
      Decode(kMpiJob), SshKeyPair{"-----BEGIN RSA PRIVATE KEY-----\nkey\n", "ssh-rsa AAAA\n"});
  ASSERT_TRUE(objects.ok()) << objects.status();
  std::string all = "[";
  for (const JobObject& o : *objects) {
    if (all.size() > 1) all += ",";
    all += R"({"apiVersion":")" + o.api_version + R"(","resource":")" + o.resource +
           R"(","name":")" + o.name + R"(","body":)" + o.json + "}";
  }
  ExpectGolden("objects_mpi", all + "]");
}

// svc's objects, then the ray head Service <job>-head-svc.
TEST(PodBuilderGoldenObjectsTest, RayJobObjects) {
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(Decode(kRayJob), {});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 4u);
  EXPECT_EQ((*objects)[3].resource, "services");
  EXPECT_EQ((*objects)[3].name, "ray-job-head-svc");
  ExpectGolden("objects_ray_head_svc", (*objects)[3].json);
}

TEST(PodBuilderGoldenObjectsTest, VolumeClaims) {
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(Decode(kVolumesJob), {});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_EQ((*objects)[0].resource, "persistentvolumeclaims");
  EXPECT_EQ((*objects)[0].name, "voljob-pvc-1");
  ExpectGolden("objects_volumes", (*objects)[0].json);
}

// ---------------------------------------------------------------------------
// Properties the goldens do not spell out.

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  EXPECT_TRUE(kube::ParseDocument(json, &doc).ok()) << json;
  return doc;
}

rapidjson::Document BuildParsed(const Job& job, size_t task, int index,
                                const PodBuildOptions& options = {}) {
  StatusOr<std::string> pod = BuildPod(job, task, index, options);
  EXPECT_TRUE(pod.ok()) << pod.status();
  return Parse(pod.ok() ? *pod : "{}");
}

std::string Gates(const rapidjson::Document& pod) {
  std::string out;
  if (!pod["spec"].HasMember("schedulingGates")) return out;
  for (const auto& g : pod["spec"]["schedulingGates"].GetArray()) {
    out += std::string(g["name"].GetString()) + ";";
  }
  return out;
}

TEST(PodBuilderTest, GateOnlyForGatedSchedulers) {
  Job job = Decode(kPlainJob);
  struct Case {
    std::string job_scheduler;
    std::vector<std::string> gated;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"volcano", {"volcano"}, "muster.io/gang;"},
      {"default-scheduler", {"volcano"}, ""},
      {"", {"volcano"}, ""},  // the API server's default scheduler
      {"volcano", {}, ""},
      {"batch", {"volcano", "batch"}, "muster.io/gang;"},
  };
  for (const Case& c : cases) {
    job.spec.scheduler_name = c.job_scheduler;
    PodBuildOptions options;
    options.gated_schedulers = c.gated;
    rapidjson::Document pod = BuildParsed(job, 0, 0, options);
    EXPECT_EQ(Gates(pod), c.want) << c.job_scheduler;
  }
}

TEST(PodBuilderTest, TemplateSchedulerAndGatesWin) {
  Job job = Decode(kPlainJob);
  job.spec.tasks[0].template_json =
      R"({"spec":{"schedulerName":"volcano","priorityClassName":"low",)"
      R"("schedulingGates":[{"name":"other"},{"name":"muster.io/gang"}],)"
      R"("containers":[{"name":"c","image":"i"}]}})";
  job.spec.scheduler_name = "default-scheduler";
  rapidjson::Document pod = BuildParsed(job, 0, 0);
  EXPECT_STREQ(pod["spec"]["schedulerName"].GetString(), "volcano");
  EXPECT_STREQ(pod["spec"]["priorityClassName"].GetString(), "low");
  EXPECT_EQ(Gates(pod), "other;muster.io/gang;");
}

TEST(PodBuilderTest, TemplateBuiltInCodeIsEncoded) {
  Job job = Decode(kPlainJob);
  job.spec.tasks[0].template_json.clear();  // template_pod stays
  rapidjson::Document pod = BuildParsed(job, 0, 0);
  EXPECT_STREQ(pod["spec"]["containers"][0]["image"].GetString(), "trainer:1");
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "trainer");
}

TEST(PodBuilderTest, Deterministic) {
  const Job job = Decode(kMpiJob);
  StatusOr<std::string> a = BuildPod(job, 0, 0);
  StatusOr<std::string> b = BuildPod(job, 0, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(PodBuilderTest, IdentityOfEveryReplica) {
  const Job job = Decode(kPyTorchJob);
  for (size_t t = 0; t < job.spec.tasks.size(); ++t) {
    for (int i = 0; i < job.spec.tasks[t].replicas; ++i) {
      rapidjson::Document pod = BuildParsed(job, t, i);
      const std::string task = job.spec.tasks[t].name;
      EXPECT_EQ(pod["metadata"]["name"].GetString(), PodName("pytorch-job", task, i));
      EXPECT_EQ(pod["metadata"]["annotations"]["volcano.sh/task-index"].GetString(),
                std::to_string(i));
      EXPECT_EQ(pod["metadata"]["labels"]["volcano.sh/task-spec"].GetString(), task);
      EXPECT_STREQ(pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"].GetString(),
                   "pytorch-job-u-6");
      EXPECT_EQ(pod["spec"]["hostname"].GetString(), PodName("pytorch-job", task, i));
    }
  }
}

TEST(PodBuilderTest, BadInputNamesTheField) {
  struct Case {
    std::string name;
    std::string template_json;  // "" keeps the job's
    size_t task;
    int index;
    std::string want;  // message prefix
  };
  const std::string ok_spec = R"("containers":[{"name":"c","image":"i"}])";
  const std::vector<Case> cases = {
      {"task out of range", "", 1, 0, "spec.tasks[1]: no such task"},
      {"negative index", "", 0, -1, "spec.tasks[0].replicas: replica index -1"},
      {"index past replicas", "", 0, 2, "spec.tasks[0].replicas: replica index 2"},
      {"not JSON", "{", 0, 0, "spec.tasks[0].template: invalid JSON"},
      {"not an object", "[]", 0, 0, "spec.tasks[0].template: expected an object, got an array"},
      {"no spec", "{}", 0, 0, "spec.tasks[0].template.spec: missing"},
      {"no containers", R"({"spec":{}})", 0, 0,
       "spec.tasks[0].template.spec.containers: expected a non-empty array, got nothing"},
      {"empty containers", R"({"spec":{"containers":[]}})", 0, 0,
       "spec.tasks[0].template.spec.containers: expected a non-empty array, got an array (empty)"},
      {"containers not array", R"({"spec":{"containers":{}}})", 0, 0,
       "spec.tasks[0].template.spec.containers: expected a non-empty array, got an object"},
      {"container not object", R"({"spec":{"containers":["c"]}})", 0, 0,
       "spec.tasks[0].template.spec.containers[0]: expected an object, got a string"},
      {"env not array", R"({"spec":{"containers":[{"name":"c","env":{}}]}})", 0, 0,
       "spec.tasks[0].template.spec.containers[0].env: expected an array"},
      {"init ports", R"({"spec":{"initContainers":[{"ports":[1]}],)" + ok_spec + "}}", 0, 0,
       "spec.tasks[0].template.spec.initContainers[0].ports[0]: expected an object"},
      {"volumes", R"({"spec":{"volumes":"v",)" + ok_spec + "}}", 0, 0,
       "spec.tasks[0].template.spec.volumes: expected an array"},
      {"hostname", R"({"spec":{"hostname":1,)" + ok_spec + "}}", 0, 0,
       "spec.tasks[0].template.spec.hostname: expected a string"},
      {"label value", R"({"metadata":{"labels":{"a":1}},"spec":{)" + ok_spec + "}}", 0, 0,
       "spec.tasks[0].template.metadata.labels[\"a\"]: expected a string"},
      {"metadata", R"({"metadata":[],"spec":{)" + ok_spec + "}}", 0, 0,
       "spec.tasks[0].template.metadata: expected an object"},
  };
  for (const Case& c : cases) {
    Job job = Decode(kPlainJob);
    if (!c.template_json.empty()) job.spec.tasks[0].template_json = c.template_json;
    StatusOr<std::string> pod = BuildPod(job, c.task, c.index);
    ASSERT_FALSE(pod.ok()) << c.name;
    EXPECT_EQ(pod.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(pod.status().message().rfind(c.want, 0), 0u)
        << c.name << ": " << pod.status().message();
  }
}

// ---------------------------------------------------------------------------
// A share of one GPU (gpu_fraction.h).

std::string EnvOf(const rapidjson::Value& container) {
  std::string out;
  if (!container.HasMember("env")) return out;
  for (const auto& e : container["env"].GetArray()) {
    out += std::string(e["name"].GetString()) + "=";
    if (e.HasMember("value")) {
      out += e["value"].GetString();
    } else {
      out += std::string("<") + e["valueFrom"]["fieldRef"]["fieldPath"].GetString() + ">";
    }
    out += ";";
  }
  return out;
}

std::string JsonOf(const rapidjson::Value& v) { return kube::ToCompactJson(v); }

Job ShareJob(std::string_view containers) {
  Job job = Decode(kPlainJob);
  job.spec.tasks[0].template_json = R"({"spec":{"containers":)" + std::string(containers) + "}}";
  StatusOr<Job> decoded = kube::DecodeJob(kube::EncodeJob(job));
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  return decoded.ok() ? *decoded : job;
}

TEST(PodBuilderGpuShareTest, AnnotationModeSumsTheSharesAndTellsEachContainerItsOwn) {
  const Job job = ShareJob(
      R"([{"name":"a","image":"i","resources":{"limits":{"nvidia.com/gpu":"0.25","cpu":"1"}}},)"
      R"({"name":"b","image":"i","resources":{"requests":{"nvidia.com/gpu":"500m"}},)"
      R"("env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"0"}]},)"
      R"({"name":"sidecar","image":"i"}])");
  const rapidjson::Document pod = BuildParsed(job, 0, 0);
  EXPECT_STREQ(pod["metadata"]["annotations"]["muster.io/gpu-fraction"].GetString(), "0.75");
  const auto& c = pod["spec"]["containers"];
  EXPECT_EQ(JsonOf(c[0]["resources"]), R"({"limits":{"cpu":"1"}})");
  EXPECT_FALSE(c[1].HasMember("resources"));  // emptied: gone
  EXPECT_EQ(EnvOf(c[0]),
            "NVIDIA_VISIBLE_DEVICES=<metadata.annotations['muster.io/visible-devices']>;"
            "MUSTER_GPU_FRACTION=0.25;");
  // The container's own NVIDIA_VISIBLE_DEVICES wins.
  EXPECT_EQ(EnvOf(c[1]), "NVIDIA_VISIBLE_DEVICES=0;MUSTER_GPU_FRACTION=0.5;");
  EXPECT_EQ(EnvOf(c[2]), "");
}

TEST(PodBuilderGpuShareTest, VgpuModeAsksTheDevicePluginsResources) {
  const Job job =
      ShareJob(R"([{"name":"a","image":"i","resources":{"limits":{"nvidia.com/gpu":0.3,"cpu":"1"},)"
               R"("requests":{"nvidia.com/gpu":0.3,"cpu":"1"}}},)"
               R"({"name":"b","image":"i","resources":{"requests":{"nvidia.com/gpu":0.25}}}])");
  PodBuildOptions options;
  options.gpu_fraction = {.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 16160};
  const rapidjson::Document pod = BuildParsed(job, 0, 0, options);
  EXPECT_FALSE(pod["metadata"]["annotations"].HasMember("muster.io/gpu-fraction"));
  const auto& c = pod["spec"]["containers"];
  EXPECT_EQ(
      JsonOf(c[0]["resources"]),
      R"({"limits":{"cpu":"1","volcano.sh/vgpu-number":"1","volcano.sh/vgpu-cores":"30",)"
      R"("volcano.sh/vgpu-memory":"4848"},"requests":{"cpu":"1","volcano.sh/vgpu-number":"1",)"
      R"("volcano.sh/vgpu-cores":"30","volcano.sh/vgpu-memory":"4848"}})");
  // Limits always (an extended resource needs one), requests where the share was.
  EXPECT_EQ(JsonOf(c[1]["resources"]),
            R"({"limits":{"volcano.sh/vgpu-number":"1","volcano.sh/vgpu-cores":"25",)"
            R"("volcano.sh/vgpu-memory":"4040"},"requests":{"volcano.sh/vgpu-number":"1",)"
            R"("volcano.sh/vgpu-cores":"25","volcano.sh/vgpu-memory":"4040"}})");
  // The device plugin gives the container its GPU: no variables of muster's.
  EXPECT_EQ(EnvOf(c[0]), "");
}

// JSON may name a resource twice. The API server never serves such a Job (it
// stores objects, not text), but BuildPod takes the template's text as it
// comes: the share it removes must be the one the decoder read, which is the
// last copy, and then no copy of it may stay (the API server, too, reads the
// last one).
TEST(PodBuilderGpuShareTest, AResourceWrittenTwiceIsReadAsItsLastCopy) {
  struct Case {
    std::string name;
    std::string limits;
    std::string want_share;      // muster.io/gpu-fraction, "" when none
    std::string want_resources;  // the container's, "" when none
  };
  const std::vector<Case> cases = {
      {"a share after a whole GPU: every copy goes", R"({"nvidia.com/gpu":1,"nvidia.com/gpu":0.5})",
       "0.5", ""},
      {"a whole GPU after a share: as written", R"({"nvidia.com/gpu":0.5,"nvidia.com/gpu":1})", "",
       R"({"limits":{"nvidia.com/gpu":0.5,"nvidia.com/gpu":1}})"},
  };
  for (const Case& c : cases) {
    const Job job =
        ShareJob(R"([{"name":"a","image":"i","resources":{"limits":)" + c.limits + "}}]");
    const rapidjson::Document pod = BuildParsed(job, 0, 0);
    const rapidjson::Value& annotations = pod["metadata"]["annotations"];
    EXPECT_EQ(annotations.HasMember("muster.io/gpu-fraction")
                  ? annotations["muster.io/gpu-fraction"].GetString()
                  : "",
              c.want_share)
        << c.name;
    const rapidjson::Value& container = pod["spec"]["containers"][0];
    EXPECT_EQ(container.HasMember("resources") ? JsonOf(container["resources"]) : "",
              c.want_resources)
        << c.name;
  }
}

TEST(PodBuilderGpuShareTest, WholeGpusAreLeftAlone) {
  for (const PodBuildOptions& options : {PodBuildOptions{}, VgpuMode()}) {
    const rapidjson::Document pod = BuildParsed(Decode(kPlainJob), 0, 0, options);
    EXPECT_FALSE(pod["metadata"]["annotations"].HasMember("muster.io/gpu-fraction"));
    EXPECT_EQ(JsonOf(pod["spec"]["containers"][0]["resources"]),
              R"({"requests":{"cpu":"2","nvidia.com/gpu":1}})");
  }
}

TEST(PodBuilderTest, NullListsAreEmpty) {
  Job job = Decode(kEnvJob);
  job.spec.tasks[0].template_json =
      R"({"metadata":null,"spec":{"initContainers":null,"volumes":null,)"
      R"("containers":[{"name":"c","env":null,"ports":null,"volumeMounts":null}]}})";
  rapidjson::Document pod = BuildParsed(job, 0, 0);
  EXPECT_STREQ(pod["spec"]["containers"][0]["env"][0]["name"].GetString(), "VK_TASK_INDEX");
}

}  // namespace
}  // namespace muster::reconciler
