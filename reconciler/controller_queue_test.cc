// JobController's queue admission (controller.h ControllerOptions::queue_of,
// queue_state.h AdmitToQueue) against an in-memory API
// (kube/client/testing/fake_api.h): as Volcano's admission webhook
// (volcano-sh/volcano pkg/webhooks/admission/jobs/validate/admit_job.go), a
// new Job goes only into an Open queue; unlike a webhook, muster refuses it
// as it refuses an invalid Job (status Failed, reason InvalidSpec, a Warning
// Event), and a Job that has started keeps running when its queue closes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/queue_controller.h"

namespace muster::reconciler {
namespace {

using ::testing::HasSubstr;

using kube::testing::WaitFor;

// One task of one pod; `status` is the Job's status JSON ("" for none).
std::string JobJson(const std::string& name, const std::string& status) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"("},"spec":{"queue":"research","minAvailable":1,"tasks":[{"name":"main","replicas":1,)"
         R"("template":{"spec":{"containers":[{"name":"c","image":"img"}]}}}]})" +
         (status.empty() ? "" : R"(,"status":)" + status) + "}";
}

class JobControllerQueueTest : public ::testing::Test {
 protected:
  JobControllerQueueTest() {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    client_ = std::make_unique<kube::Client>(api_, kube::ClientConfig{}, options);
  }
  ~JobControllerQueueTest() override {
    if (controller_) controller_->Stop();
  }
  void Start(const std::string& queue_state) {
    queue_.meta.name = "research";
    queue_.status.state = queue_state;
    ControllerOptions options;
    options.workers = 2;
    options.queue_of = [this](const std::string& name) -> std::shared_ptr<const Queue> {
      return name == queue_.meta.name ? std::make_shared<const Queue>(queue_) : nullptr;
    };
    controller_ = std::make_unique<JobController>(client_.get(), RealClock(), options, &metrics_);
    controller_->Start();
    ASSERT_TRUE(WaitFor([&] { return controller_->Synced(); }));
  }
  JobState StateOf(const std::string& name) {
    std::optional<std::string> json =
        api_->Get(kube::VolcanoJobsRef().WithNamespace("ml").WithName(name));
    if (!json) return {};
    StatusOr<Job> job = kube::DecodeJob(*json);
    return job.ok() ? job->status.state : JobState{};
  }
  size_t PodGroups() { return api_->List(kube::PodGroupsRef()).size(); }
  std::string EventsOf(const std::string& job) {
    std::string out;
    for (const std::string& json : api_->List(kube::ResourceRef::Core("events"))) {
      StatusOr<Event> e = kube::DecodeEvent(json);
      if (e.ok() && e->involved_object.name == job) out += e->reason + ": " + e->message + "\n";
    }
    return out;
  }

  std::shared_ptr<kube::testing::FakeApi> api_ = std::make_shared<kube::testing::FakeApi>();
  std::unique_ptr<kube::Client> client_;
  ReconcilerMetrics metrics_;
  Queue queue_;
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobControllerQueueTest, ANewJobInAClosedQueueIsRefused) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("late"), JobJson("late", ""));
  Start("Closed");
  ASSERT_TRUE(WaitFor([&] { return StateOf("late").phase == "Failed"; }));
  const JobState state = StateOf("late");
  EXPECT_EQ(state.reason, "InvalidSpec");
  EXPECT_EQ(state.message,
            "spec.queue: can only submit job to queue with state `Open`, queue `research` status "
            "is `Closed`");
  ASSERT_TRUE(WaitFor([&] { return !EventsOf("late").empty(); }));
  EXPECT_THAT(EventsOf("late"), HasSubstr("InvalidSpec: spec.queue: can only submit job"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(PodGroups(), 0u);
  EXPECT_EQ(StateOf("late").phase, "Failed");  // stays refused
}

TEST_F(JobControllerQueueTest, AJobThatStartedKeepsRunningWhenItsQueueCloses) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("early"),
            JobJson("early", R"({"state":{"phase":"Running"},"minAvailable":1})"));
  Start("Closing");
  ASSERT_TRUE(WaitFor([&] { return PodGroups() == 1; }));  // synced as usual
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(StateOf("early").phase, "Failed");
  EXPECT_THAT(EventsOf("early"), ::testing::Not(HasSubstr("InvalidSpec")));
}

// A Command's action is not lost to an API error: when the status write
// that records it fails, the action runs again a second later (a plain
// sync would see a Running job and leave it so).
TEST_F(JobControllerQueueTest, AnActionWhoseStatusWriteFailedRunsAgain) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("early"),
            JobJson("early", R"({"state":{"phase":"Running"},"minAvailable":1})"));
  Start("Open");
  ASSERT_TRUE(WaitFor([&] { return PodGroups() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the first syncs are done
  api_->FailNext("PATCH", "/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs/early", 500);
  controller_->Submit("ml/early", Request{.action = "AbortJob"});
  ASSERT_TRUE(WaitFor([&] {
    const std::string phase = StateOf("early").phase;
    return phase == "Aborting" || phase == "Aborted";
  })) << "phase "
      << StateOf("early").phase;
}

TEST_F(JobControllerQueueTest, AnOpenQueueTakesANewJob) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("now"), JobJson("now", ""));
  Start("Open");
  ASSERT_TRUE(WaitFor([&] { return PodGroups() == 1; }));
  EXPECT_NE(StateOf("now").phase, "Failed");
}

// The wiring of app.cc: vcctl's suspend and resume Commands, through the
// QueueController, become explicit actions the JobController runs.
TEST_F(JobControllerQueueTest, SuspendAndResumeThroughCommands) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("train"),
            JobJson("train", R"({"state":{"phase":"Running"},"minAvailable":1})"));
  Start("Open");
  QueueController commands(
      client_.get(), RealClock(), &metrics_,
      JobCommandHooks{.synced = [this] { return controller_->Synced(); },
                      .job = [this](const std::string& k) { return controller_->CachedJob(k); },
                      .submit = [this](const std::string& k,
                                       Request r) { controller_->Submit(k, std::move(r)); }});
  commands.Start();
  const std::string uid = controller_->CachedJob("ml/train")->meta.uid;
  auto command = [&](const std::string& name, const std::string& action) {
    api_->Put(kube::CommandsRef().WithNamespace("ml").WithName(name),
              R"({"action":")" + action +
                  R"(","target":{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
                  R"("name":"train","uid":")" +
                  uid + R"("}})");
  };
  command("train-abortjob-1", "AbortJob");
  ASSERT_TRUE(WaitFor([&] { return StateOf("train").phase == "Aborted"; }))
      << StateOf("train").phase;
  EXPECT_TRUE(api_->List(kube::CommandsRef()).empty());
  command("train-resumejob-2", "ResumeJob");
  ASSERT_TRUE(WaitFor([&] {
    const std::string phase = StateOf("train").phase;
    return phase == "Restarting" || phase == "Pending";
  })) << StateOf("train").phase;
  EXPECT_TRUE(WaitFor([&] {
    return EventsOf("train").find("CommandIssued: Start to execute command ResumeJob") !=
           std::string::npos;
  }));
  EXPECT_THAT(EventsOf("train"), HasSubstr("CommandIssued: Start to execute command ResumeJob"));
  commands.Stop();
}

}  // namespace
}  // namespace muster::reconciler
