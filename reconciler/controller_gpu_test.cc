// JobController and Jobs whose task templates ask a share of one GPU
// (gpu_fraction.h): their pods pass the API server's rule that a container
// asks whole extended resources, carrying the share the way muster
// schedules it; a Job no pod could carry, or asking GPU memory no GPU of the
// cluster has, is refused naming the field and nothing is made for it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "model/quantity.h"
#include "reconciler/controller.h"
#include "reconciler/testing/controller_fixture.h"

namespace muster::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using kube::testing::WaitFor;

// The API server's validation of a pod's resources
// (k8s.io/kubernetes pkg/apis/core/validation ValidateResourceRequirements):
// an extended resource - a name with a domain - is a whole number. "" when
// the pod passes, else the API server's message.
std::string ExtendedResourcesAreWhole(const std::string& collection, const std::string& body) {
  if (!collection.ends_with("/pods")) return "";
  rapidjson::Document pod;
  if (!kube::ParseDocument(body, &pod).ok() || !pod.HasMember("spec")) return "";
  for (const char* list : {"initContainers", "containers"}) {
    if (!pod["spec"].HasMember(list)) continue;
    const auto& containers = pod["spec"][list];
    for (rapidjson::SizeType i = 0; i < containers.Size(); ++i) {
      if (!containers[i].HasMember("resources")) continue;
      for (const char* map : {"limits", "requests"}) {
        const auto& resources = containers[i]["resources"];
        if (!resources.HasMember(map)) continue;
        for (const auto& m : resources[map].GetObject()) {
          const std::string name = m.name.GetString();
          if (name.find('/') == std::string::npos) continue;
          const std::string text =
              m.value.IsString() ? m.value.GetString() : kube::ToCompactJson(m.value);
          StatusOr<Quantity> q = Quantity::Parse(text);
          if (q.ok() && q->is_integer()) continue;
          return "Pod is invalid: spec." + std::string(list) + "[" + std::to_string(i) +
                 "].resources." + map + "[" + name + "]: Invalid value: \"" + text +
                 "\": must be an integer";
        }
      }
    }
  }
  return "";
}

// One task "worker" of two replicas whose container asks `resources`.
std::string JobJson(const std::string& name, const std::string& resources, int min_available = 2) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","generation":1},"spec":{"queue":"default","minAvailable":)" +
         std::to_string(min_available) +
         R"(,"tasks":[{"name":"worker","replicas":2,"template":{"spec":{"containers":[)"
         R"({"name":"c","image":"img:1","resources":)" +
         resources + "}]}}}]}}";
}

class JobControllerGpuTest : public fixtures::JobControllerTest {
 protected:
  JobControllerGpuTest() { api_->SetCreateCheck(ExtendedResourcesAreWhole); }
  // The controller stops before fake_clock_, which it may read, goes.
  ~JobControllerGpuTest() override { StopController(); }

  // `clock`: RealClock(), or &fake_clock_ for a test that moves time.
  void StartController(GpuFractionOptions gpu = {}, const Clock* clock = &RealClock()) {
    ControllerOptions options = TestOptions();
    options.pods.gpu_fraction = gpu;
    JobControllerTest::StartController(options, *clock);
  }
  void PutNode(const std::string& name, const std::string& memory_mib) {
    api_->Put(kube::ResourceRef::Core("nodes").WithName(name),
              R"({"metadata":{"labels":{"nvidia.com/gpu.memory":")" + memory_mib + R"("}}})");
  }
  std::vector<Pod> Pods(const std::string& job) const {
    std::vector<Pod> out;
    for (const std::string& json : NamedJson(PodsRef(), job + "-")) {
      StatusOr<Pod> pod = kube::DecodePod(json);
      if (pod.ok()) out.push_back(*pod);
    }
    return out;
  }
  std::optional<PodGroup> GroupOf(const std::string& job) const {
    for (const std::string& json : NamedJson(kube::PodGroupsRef(), job + "-")) {
      StatusOr<PodGroup> pg = kube::DecodePodGroup(json);
      if (pg.ok()) return *pg;
    }
    return std::nullopt;
  }
  int PodCreatesRefused() const {
    int n = 0;
    for (const auto& r : api_->Requests()) {
      n += r.method == "POST" && r.path.ends_with("/pods") &&
           !ExtendedResourcesAreWhole(r.path, r.body).empty();
    }
    return n;
  }
  // A refused Job: Failed, InvalidSpec and `message` in its status, one
  // Warning Event saying it, no PodGroup and no pod.
  void ExpectRefused(const std::string& job, const std::string& message) {
    ASSERT_TRUE(WaitFor([&] { return Status(job).state.phase == "Failed"; }))
        << Status(job).state.phase;
    EXPECT_EQ(Status(job).state.reason, "InvalidSpec");
    EXPECT_EQ(Status(job).state.message, message);
    ASSERT_TRUE(WaitFor([&] { return !Events(job).empty(); }));
    EXPECT_THAT(Events(job), ElementsAre("Warning InvalidSpec: " + message));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_THAT(Pods(job), IsEmpty());
    EXPECT_FALSE(GroupOf(job).has_value());
  }

  FakeClock fake_clock_;
};

TEST(ExtendedResourcesAreWholeTest, RefusesAPodAskingHalfAGpu) {
  EXPECT_EQ(ExtendedResourcesAreWhole(
                "/api/v1/pods",
                R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":0.5}}}]}})"),
            "Pod is invalid: spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "
            "\"0.5\": must be an integer");
  EXPECT_EQ(
      ExtendedResourcesAreWhole(
          "/api/v1/pods",
          R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1","cpu":"0.5"}}}]}})"),
      "");
}

TEST_F(JobControllerGpuTest, AShareOfOneGpuBecomesTheAnnotationThePodsCarry) {
  api_->Put(JobRef("half"), JobJson("half", R"({"limits":{"nvidia.com/gpu":0.5,"cpu":"1"}})"));
  StartController();
  AdmitGroupOf("half");
  ASSERT_TRUE(WaitFor([&] { return Pods("half").size() == 2; }));
  for (const Pod& pod : Pods("half")) {
    SCOPED_TRACE(pod.meta.name);
    EXPECT_EQ(pod.meta.annotations.at("muster.io/gpu-fraction"), "0.5");
    const Container& c = pod.spec.containers.at(0);
    EXPECT_FALSE(c.resources.limits.Has(kNvidiaGpu));
    EXPECT_EQ(c.resources.limits.milli_cpu(), 1000);
    EXPECT_EQ(pod.EffectiveRequest().milli_gpus(), 500);  // as the extender counts it
  }
  EXPECT_EQ(PodCreatesRefused(), 0);
  // The PodGroup's minimum counts both workers' halves.
  const std::optional<PodGroup> pg = GroupOf("half");
  ASSERT_TRUE(pg.has_value());
  ASSERT_TRUE(pg->spec.min_resources.has_value());
  EXPECT_EQ(pg->spec.min_resources->ToQuantities().at(std::string(kNvidiaGpu)), "1");
  EXPECT_THAT(Events("half"), IsEmpty());
}

TEST_F(JobControllerGpuTest, VgpuModeAsksTheVgpuResourcesOfAGpuTheClusterHas) {
  PutNode("a100", "81920");
  api_->Put(JobRef("half"),
            JobJson("half", R"({"limits":{"nvidia.com/gpu":0.5}})", /*min_available=*/1));
  StartController({.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 81920});
  AdmitGroupOf("half");
  ASSERT_TRUE(WaitFor([&] { return Pods("half").size() == 2; }));
  const Pod pod = Pods("half").front();
  EXPECT_FALSE(pod.meta.annotations.contains("muster.io/gpu-fraction"));
  const Resources& limits = pod.spec.containers.at(0).resources.limits;
  EXPECT_EQ(limits.Get("volcano.sh/vgpu-number"), 1);
  EXPECT_EQ(limits.Get("volcano.sh/vgpu-cores"), 50);
  EXPECT_EQ(limits.Get("volcano.sh/vgpu-memory"), 40960);
  EXPECT_EQ(PodCreatesRefused(), 0);
  EXPECT_EQ(GroupOf("half")->spec.min_resources->Get("volcano.sh/vgpu-memory"), 40960);
}

TEST_F(JobControllerGpuTest, AShareNoPodCanCarryIsRefusedAndNothingIsMade) {
  api_->Put(JobRef("third"), JobJson("third", R"({"limits":{"nvidia.com/gpu":0.333}})"));
  api_->Put(JobRef("mixed"), JobJson("mixed", R"({"limits":{"nvidia.com/gpu":1,)"
                                              R"("volcano.sh/vgpu-number":1}})"));
  StartController();
  ExpectRefused("third",
                "spec.tasks[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: 0.333 "
                "nvidia.com/gpu: a share of one GPU has at most two decimals");
  ExpectRefused("mixed",
                "spec.tasks[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: a "
                "container asks whole GPUs or vGPU shares, not both");
  EXPECT_EQ(PodCreatesRefused(), 0);
}

TEST_F(JobControllerGpuTest, GpuMemoryNoGpuHasIsRefusedAndNothingIsMade) {
  PutNode("t4", "16384");
  PutNode("cpu", "");
  api_->Put(JobRef("big"), JobJson("big", R"({"limits":{"volcano.sh/vgpu-number":1,)"
                                          R"("volcano.sh/vgpu-memory":40960}})"));
  api_->Put(JobRef("fits"), JobJson("fits", R"({"limits":{"volcano.sh/vgpu-number":1,)"
                                            R"("volcano.sh/vgpu-memory":8192}})"));
  StartController();
  ExpectRefused("big",
                "spec.tasks[0].template.spec.containers[0].resources.limits[volcano.sh/"
                "vgpu-memory]: 40960 MiB per vGPU is more than any GPU in the cluster has (the "
                "largest has 16384 MiB)");
  ASSERT_TRUE(WaitFor([&] { return GroupOf("fits").has_value(); }));
  EXPECT_THAT(Events("fits"), IsEmpty());
}

TEST_F(JobControllerGpuTest, VgpuModeWithoutKnownGpuMemoryIsRefused) {
  api_->Put(JobRef("half"), JobJson("half", R"({"limits":{"nvidia.com/gpu":0.5}})"));
  StartController({.mode = GpuFractionMode::kVgpu, .vgpu_gpu_memory_mib = 81920});
  ExpectRefused("half",
                "spec.tasks[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: 0.5 "
                "of a GPU becomes volcano.sh/vgpu-memory 40960 MiB (--gpu-fraction-mode=vgpu, "
                "--vgpu-gpu-memory-mib=81920), and no GPU in the cluster has a known memory (no "
                "node has a volcano.sh/node-vgpu-register annotation or an nvidia.com/gpu.memory "
                "label)");
}

// A Job asking GPU memory is judged on the nodes as listed, not on the
// empty cache before the first list lands.
TEST_F(JobControllerGpuTest, AJobAskingGpuMemoryWaitsForTheNodes) {
  PutNode("a100", "81920");
  api_->FailNext("GET", "/api/v1/nodes", 500);
  api_->FailNext("GET", "/api/v1/nodes", 500);
  api_->Put(JobRef("mem"), JobJson("mem", R"({"limits":{"volcano.sh/vgpu-number":1,)"
                                          R"("volcano.sh/vgpu-memory-percentage":50}})"));
  StartController();
  ASSERT_TRUE(WaitFor([&] { return GroupOf("mem").has_value(); }));
  EXPECT_NE(Status("mem").state.phase, "Failed");
  EXPECT_THAT(Events("mem"), IsEmpty());
}

// How the API server refuses to list nodes, and the Event the Job gets.
struct NodesRefusal {
  std::string name;
  int code;
  std::string reason;
  std::string message;
  std::string event;  // the Job's Event, "Warning WaitingForNodes: ..."
};

class JobControllerNodesWaitTest : public JobControllerGpuTest,
                                   public ::testing::WithParamInterface<NodesRefusal> {};

// A Job asking GPU memory whose nodes never list (the reconciler's
// ClusterRole lacks nodes, an API server that keeps failing) is answered
// after the bound: one Warning Event saying why it waits, nothing made, not
// failed; once the nodes list it runs.
TEST_P(JobControllerNodesWaitTest, AJobWaitingForTheNodesIsToldWhyOnceAndRunsWhenTheyList) {
  const NodesRefusal& refusal = GetParam();
  PutNode("a100", "81920");
  api_->FailAlways("GET", "/api/v1/nodes", refusal.code, refusal.reason, refusal.message);
  api_->Put(JobRef("mem"), JobJson("mem", R"({"limits":{"volcano.sh/vgpu-number":1,)"
                                          R"("volcano.sh/vgpu-memory":8192}})"));
  StartController({}, &fake_clock_);
  auto nodes_refused = [&] {
    int n = 0;
    for (const auto& r : api_->Requests()) n += r.method == "GET" && r.path == "/api/v1/nodes";
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return nodes_refused() > 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its first sync: it waits

  // Within the bound: nothing said yet.
  fake_clock_.Advance(std::chrono::seconds(9));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THAT(Events("mem"), IsEmpty());

  // Past it: one Warning Event, however often the Job looks again.
  fake_clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(WaitFor([&] {
    fake_clock_.Advance(std::chrono::milliseconds(100));
    return !Events("mem").empty();
  }));
  for (int i = 0; i < 5; ++i) {
    fake_clock_.Advance(std::chrono::seconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  EXPECT_THAT(Events("mem"), ElementsAre(refusal.event));
  EXPECT_THAT(Pods("mem"), IsEmpty());
  EXPECT_FALSE(GroupOf("mem").has_value());
  EXPECT_EQ(Status("mem").state.phase, "");  // not failed: it can still run
  EXPECT_GT(nodes_refused(), 1);             // the informer kept trying

  // The nodes list: it is admitted and runs, and nothing more is said.
  api_->StopFailing("GET", "/api/v1/nodes");
  ASSERT_TRUE(WaitFor(
      [&] {
        fake_clock_.Advance(std::chrono::milliseconds(100));
        return GroupOf("mem").has_value();
      },
      std::chrono::seconds(20)));
  AdmitGroupOf("mem");
  ASSERT_TRUE(WaitFor([&] {
    fake_clock_.Advance(std::chrono::milliseconds(100));
    return Pods("mem").size() == 2;
  }));
  EXPECT_NE(Status("mem").state.phase, "Failed");
  EXPECT_THAT(Events("mem"), ElementsAre(refusal.event));
}

INSTANTIATE_TEST_SUITE_P(
    Refusals, JobControllerNodesWaitTest,
    ::testing::Values(
        NodesRefusal{
            "Forbidden", 403, "Forbidden",
            R"(nodes is forbidden: User "system:serviceaccount:volcano-system:muster-reconciler" )"
            R"(cannot list resource "nodes" in API group "" at the cluster scope)",
            "Warning WaitingForNodes: waits to check its GPU memory against the cluster's nodes, "
            "not listed after 10 s: listing nodes failed: GET /api/v1/nodes?limit=2000: HTTP 403 "
            R"(Forbidden: nodes is forbidden: User "system:serviceaccount:volcano-system:)"
            R"(muster-reconciler" cannot list resource "nodes" in API group "" at the cluster )"
            "scope (the reconciler's ClusterRole needs list and watch on nodes)"},
        NodesRefusal{"Unavailable", 503, "ServiceUnavailable",
                     "the server is currently unable to handle the request",
                     "Warning WaitingForNodes: waits to check its GPU memory against the "
                     "cluster's nodes, not listed after 10 s: listing nodes failed: GET "
                     "/api/v1/nodes?limit=2000: HTTP 503 ServiceUnavailable: the server is "
                     "currently unable to handle the request"}),
    [](const ::testing::TestParamInfo<NodesRefusal>& info) { return info.param.name; });

}  // namespace
}  // namespace muster::reconciler
