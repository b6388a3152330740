// JobController and Job updates (controller.h, job_admission.h
// ValidateJobUpdate) against an in-memory API (kube/client/testing/
// fake_api.h). The rules are Volcano's: its webhook refuses an update that
// changes anything but minAvailable, priorityClassName, tasks[*].replicas and
// tasks[*].minAvailable (volcano-sh/volcano pkg/webhooks/admission/jobs/
// validate/admit_job.go validateJobUpdate); its controller scales the pods to
// the new replicas (pkg/controllers/job/job_controller_actions.go) and the svc
// plugin rewrites the hosts ConfigMap (pkg/controllers/job/plugins/svc/
// svc.go OnJobUpdate). Without a webhook, muster does not act on a refused
// spec: the Job keeps running on the last accepted one and says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/job_admission.h"
#include "reconciler/testing/controller_fixture.h"

namespace muster::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using kube::testing::WaitFor;

constexpr std::string_view kNs = fixtures::kJobNamespace;

// Task "worker" of `replicas` pods of image `image` (1 CPU each), with svc.
std::string TasksJson(int replicas, const std::string& image, int min_available = -1) {
  return R"([{"name":"worker","replicas":)" + std::to_string(replicas) +
         (min_available < 0 ? "" : R"(,"minAvailable":)" + std::to_string(min_available)) +
         R"(,"template":{"spec":{"containers":[{"name":"c","image":")" + image +
         R"(","resources":{"requests":{"cpu":"1"}}}]}}}])";
}

std::string JobJson(const std::string& status = "") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"train",)"
         R"("generation":1},"spec":{"queue":"default","plugins":{"svc":[]},"tasks":)" +
         TasksJson(2, "img:1") + "}" + (status.empty() ? "" : R"(,"status":)" + status) + "}";
}

class JobControllerUpdateTest : public fixtures::JobControllerTest {
 protected:
  using JobControllerTest::JobRef;
  static kube::ResourceRef JobRef() { return JobRef("train"); }
  std::optional<Job> GetJob() const {
    std::optional<std::string> json = api_->Get(JobRef());
    if (!json) return std::nullopt;
    StatusOr<Job> job = kube::DecodeJob(*json);
    return job.ok() ? std::optional<Job>(*job) : std::nullopt;
  }
  JobState State() const {
    std::optional<Job> job = GetJob();
    return job ? job->status.state : JobState{};
  }
  // A user's update of the spec: a merge patch (the status stays the
  // controller's) that bumps metadata.generation as the API server does.
  void PatchSpec(int64_t generation, const std::string& spec) {
    const std::string patch =
        R"({"metadata":{"generation":)" + std::to_string(generation) + R"(},"spec":)" + spec + "}";
    ASSERT_TRUE(client_->Patch(JobRef(), kube::PatchType::kMerge, patch).ok());
  }
  std::optional<PodGroup> Group() const {
    for (const std::string& json : api_->List(kube::PodGroupsRef())) {
      StatusOr<PodGroup> pg = kube::DecodePodGroup(json);
      if (pg.ok()) return *pg;
    }
    return std::nullopt;
  }
  // The gang controller's part: the PodGroup is admitted.
  void AdmitGroup() {
    ASSERT_TRUE(WaitFor([&] { return Group().has_value(); }));
    ASSERT_TRUE(
        client_
            ->Patch(
                kube::PodGroupsRef().WithNamespace(std::string(kNs)).WithName(Group()->meta.name),
                kube::PatchType::kMerge, R"({"status":{"phase":"Inqueue"}})")
            .ok());
  }
  // Pod name -> its first container's image.
  std::map<std::string, std::string> Pods() const {
    std::map<std::string, std::string> out;
    for (const std::string& json : api_->List(kube::ResourceRef::Core("pods"))) {
      rapidjson::Document doc;
      if (!kube::ParseDocument(json, &doc).ok()) continue;
      out[doc["metadata"]["name"].GetString()] = doc["spec"]["containers"][0]["image"].GetString();
    }
    return out;
  }
  std::map<std::string, std::string> HostsConfigMap() const {
    std::map<std::string, std::string> out;
    std::optional<std::string> json =
        api_->Get(kube::ResourceRef::Core("configmaps", std::string(kNs)).WithName("train-svc"));
    rapidjson::Document doc;
    if (!json || !kube::ParseDocument(*json, &doc).ok() || !doc.HasMember("data")) return out;
    // Const: mutable RapidJSON member iterators are ambiguous in C++20 (clang).
    const rapidjson::Value& data = std::as_const(doc)["data"];
    for (const auto& m : data.GetObject()) out[m.name.GetString()] = m.value.GetString();
    return out;
  }
  // The Job's Events, one a line.
  std::string Events() const {
    std::string out;
    for (const std::string& line : JobControllerTest::Events("train")) out += line + "\n";
    return out;
  }
  // The Job runs: PodGroup admitted, both workers created.
  void StartRunningJob() {
    api_->Put(JobRef(), JobJson());
    StartController();
    AdmitGroup();
    ASSERT_TRUE(WaitFor([&] { return Pods().size() == 2; })) << Pods().size();
    ASSERT_TRUE(WaitFor([&] {
      std::optional<Job> job = GetJob();
      return job && job->status.controlled_resources.contains(std::string(kAcceptedSpecKey));
    }));
  }
};

const std::string kTemplateRefused =
    "spec.tasks[0].template: may not change after creation; only minAvailable, priorityClassName, "
    "tasks[*].replicas and tasks[*].minAvailable may";

TEST_F(JobControllerUpdateTest, AForbiddenChangeIsRefusedAndTheJobKeepsItsAcceptedSpec) {
  StartRunningJob();
  PatchSpec(2, R"({"tasks":)" + TasksJson(2, "img:2") + "}");
  ASSERT_TRUE(WaitFor([&] { return State().reason == "UpdateRefused"; })) << State().reason;
  EXPECT_EQ(State().message, kTemplateRefused);
  ASSERT_TRUE(WaitFor([&] { return !Events().empty(); }));
  EXPECT_THAT(Events(), HasSubstr("Warning UpdateRefused: " + kTemplateRefused));
  // A replacement pod is made from the accepted template, not the refused one.
  api_->Remove(kube::ResourceRef::Core("pods", std::string(kNs)).WithName("train-worker-1"));
  ASSERT_TRUE(WaitFor([&] { return Pods().size() == 2; }));
  EXPECT_EQ(Pods().at("train-worker-1"), "img:1");
  // One Event per refusal, however many syncs.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string events = Events();
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 1) << events;
  // Back within the rules: the refusal is lifted.
  PatchSpec(3, R"({"tasks":)" + TasksJson(2, "img:1") + "}");
  ASSERT_TRUE(WaitFor([&] { return State().reason.empty(); })) << State().reason;
  EXPECT_EQ(State().message, "");
}

TEST_F(JobControllerUpdateTest, AddingATaskIsRefused) {
  StartRunningJob();
  PatchSpec(2, R"({"tasks":[{"name":"worker","replicas":2},{"name":"extra","replicas":1}]})");
  ASSERT_TRUE(WaitFor([&] { return State().reason == "UpdateRefused"; })) << State().reason;
  EXPECT_EQ(State().message,
            "spec.tasks: job updates may not add or remove tasks (the job has 1, the update 2)");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(Pods(), ::testing::SizeIs(2));  // no pod of "extra"
}

// The digest in the status is what a restarted reconciler judges by: a
// change made while it was down is refused, and the Job is held - nothing
// created or killed - until its spec is within the rules again.
TEST_F(JobControllerUpdateTest, ARestartedReconcilerRefusesAChangeMadeWhileItWasDown) {
  StartRunningJob();
  StopController();
  PatchSpec(2, R"({"queue":"other","tasks":)" + TasksJson(3, "img:1") + "}");
  api_->Remove(kube::ResourceRef::Core("pods", std::string(kNs)).WithName("train-worker-0"));
  StartController();
  ASSERT_TRUE(WaitFor([&] { return State().reason == "UpdateRefused"; })) << State().reason;
  EXPECT_EQ(State().message,
            "spec.queue: may not change after creation; only minAvailable, priorityClassName, "
            "tasks[*].replicas and tasks[*].minAvailable may");
  ASSERT_TRUE(WaitFor([&] { return Events().find("UpdateRefused") != std::string::npos; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_THAT(Pods(), ElementsAre(::testing::Key("train-worker-1")));  // held
  EXPECT_EQ(Group()->spec.queue, "default");
  // The queue back as it was: the scale to 3 is accepted and carried out.
  PatchSpec(3, R"({"queue":"default"})");
  ASSERT_TRUE(WaitFor([&] { return Pods().size() == 3; })) << Pods().size();
  ASSERT_TRUE(WaitFor([&] { return State().reason.empty(); })) << State().reason;
  EXPECT_EQ(HostsConfigMap()["VC_WORKER_NUM"], "3");
}

TEST_F(JobControllerUpdateTest, ScalingMovesPodsPodGroupAndTheHostsConfigMap) {
  StartRunningJob();
  EXPECT_EQ(HostsConfigMap()["VC_WORKER_NUM"], "2");
  PatchSpec(2, R"({"tasks":)" + TasksJson(3, "img:1", 3) + "}");
  ASSERT_TRUE(WaitFor([&] { return Pods().size() == 3; })) << Pods().size();
  EXPECT_EQ(Pods().at("train-worker-2"), "img:1");
  ASSERT_TRUE(WaitFor([&] { return Group()->spec.min_member == 3; }));
  EXPECT_EQ(Group()->spec.min_task_member.at("worker"), 3);
  EXPECT_EQ(Group()->spec.min_resources->milli_cpu(), 3000);
  ASSERT_TRUE(WaitFor([&] { return HostsConfigMap()["VC_WORKER_NUM"] == "3"; }));
  EXPECT_EQ(HostsConfigMap()["VC_WORKER_HOSTS"],
            "train-worker-0.train,train-worker-1.train,train-worker-2.train");
  EXPECT_EQ(HostsConfigMap()["worker.host"],
            "train-worker-0.train\ntrain-worker-1.train\ntrain-worker-2.train");
  // Down to 1, with the task's minimum: pods with index >= 1 go.
  PatchSpec(3, R"({"tasks":)" + TasksJson(1, "img:1", 1) + "}");
  ASSERT_TRUE(WaitFor([&] { return Pods().size() == 1; })) << Pods().size();
  EXPECT_TRUE(Pods().contains("train-worker-0"));
  ASSERT_TRUE(WaitFor([&] { return HostsConfigMap()["VC_WORKER_NUM"] == "1"; }));
  ASSERT_TRUE(WaitFor([&] { return Group()->spec.min_member == 1; }));
  EXPECT_EQ(HostsConfigMap()["VC_WORKER_HOSTS"], "train-worker-0.train");
  EXPECT_EQ(State().reason, "");
  EXPECT_THAT(Events(), Not(HasSubstr("UpdateRefused")));
}

// A minimum above the replicas is refused as an update (the create-time
// range checks again), not failed as an invalid new Job.
TEST_F(JobControllerUpdateTest, AnUpdateBreakingARangeCheckIsRefusedNotFailed) {
  StartRunningJob();
  PatchSpec(2, R"({"minAvailable":5})");
  ASSERT_TRUE(WaitFor([&] { return State().reason == "UpdateRefused"; })) << State().reason;
  EXPECT_EQ(State().message, "spec.minAvailable: 5 is more than the 2 replicas of all tasks");
  EXPECT_NE(State().phase, "Failed");
  EXPECT_EQ(Group()->spec.min_member, 2);
}

// status.taskStatusCount names the Job's tasks only: a task the status still
// names (its spec changed while muster did not enforce the rules) is
// dropped, which a merge patch does only by naming it as null.
TEST_F(JobControllerUpdateTest, StatusNamesOnlyTheTasksThatExist) {
  api_->Put(JobRef(), JobJson(R"({"state":{"phase":"Running"},"minAvailable":2,)"
                              R"("taskStatusCount":{"gone":{"phase":{"Running":2}}}})"));
  StartController();
  ASSERT_TRUE(WaitFor([&] {
    std::optional<Job> job = GetJob();
    return job && job->status.task_status_count.contains("worker");
  }));
  const std::optional<Job> job = GetJob();
  ASSERT_TRUE(job.has_value());
  std::vector<std::string> tasks;
  for (const auto& [task, counts] : job->status.task_status_count) tasks.push_back(task);
  EXPECT_THAT(tasks, ElementsAre("worker"));
}

}  // namespace
}  // namespace muster::reconciler
