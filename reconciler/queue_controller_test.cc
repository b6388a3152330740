// QueueController against an in-memory API (kube/client/testing/fake_api.h):
// Commands run once and are deleted first (Volcano's
// pkg/controllers/job/job_controller_handler.go processNextCommand,
// pkg/controllers/queue/queue_controller.go handleCommand), refused ones are
// told and deleted, and the queue state follows Volcano's
// pkg/controllers/queue/state/*.go with status.state written alone.
#include "reconciler/queue_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/naming.h"
#include "reconciler/queue_state.h"

namespace muster::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

using kube::testing::WaitFor;

constexpr char kJobUid[] = "job-uid-1";

std::string CommandJson(const std::string& name, const std::string& action,
                        const std::string& target) {
  return R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command","metadata":{"name":")" + name +
         R"("},"action":")" + action + "\"" + (target.empty() ? "" : ",\"target\":" + target) + "}";
}
std::string JobTarget(const std::string& name = "train", const std::string& uid = kJobUid) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":")" + name +
         R"(","uid":")" + uid + R"(","controller":true})";
}
std::string QueueTarget(const std::string& name = "research") {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","name":")" + name +
         R"(","uid":"queue-uid-1","controller":true})";
}

class QueueControllerTest : public ::testing::Test {
 protected:
  QueueControllerTest() {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;  // the controller's own retries only
    client_ = std::make_unique<kube::Client>(api_, kube::ClientConfig{}, options);
    Job train;
    train.meta.namespace_ = "ml";
    train.meta.name = "train";
    train.meta.uid = kJobUid;
    AddJob(train);
  }
  ~QueueControllerTest() override {
    if (controller_) controller_->Stop();
  }

  void AddJob(const Job& job) {
    std::lock_guard lock(mu_);
    jobs_[job.meta.Key()] = std::make_shared<const Job>(job);
  }
  void Start() {
    controller_ = std::make_unique<QueueController>(
        client_.get(), RealClock(), &metrics_,
        JobCommandHooks{.synced = [] { return true; },
                        .job = [this](const std::string& key) -> std::shared_ptr<const Job> {
                          std::lock_guard lock(mu_);
                          auto it = jobs_.find(key);
                          return it == jobs_.end() ? nullptr : it->second;
                        },
                        .submit =
                            [this](const std::string& key, Request r) {
                              std::lock_guard lock(mu_);
                              // At most once: the Command is gone before it runs.
                              commands_left_at_submit_.push_back(
                                  api_->List(kube::CommandsRef()).size());
                              submitted_.emplace_back(key, std::move(r));
                            }},
        QueueControllerOptions{.resync_period = std::chrono::hours(1),
                               .retry_delay = std::chrono::milliseconds(20)});
    controller_->Start();
    ASSERT_TRUE(WaitFor([&] { return controller_->Synced(); }));
  }
  void PutCommand(const std::string& name, const std::string& action, const std::string& target) {
    api_->Put(kube::CommandsRef().WithNamespace("ml").WithName(name),
              CommandJson(name, action, target));
  }
  bool CommandGone(const std::string& name) {
    return !api_->Get(kube::CommandsRef().WithNamespace("ml").WithName(name)).has_value();
  }
  std::vector<std::pair<std::string, Request>> Submitted() {
    std::lock_guard lock(mu_);
    return submitted_;
  }
  // Events with `reason`, as "namespace/involvedObject.kind/name: message".
  std::vector<std::string> Events(std::string_view reason) {
    std::vector<std::string> out;
    for (const std::string& json : api_->List(kube::ResourceRef::Core("events"))) {
      StatusOr<Event> e = kube::DecodeEvent(json);
      if (!e.ok() || e->reason != reason) continue;
      out.push_back(e->meta.namespace_ + "/" + e->involved_object.kind + "/" +
                    e->involved_object.name + ": " + e->message);
    }
    return out;
  }
  std::string QueueState(const std::string& name) {
    std::optional<std::string> json = api_->Get(kube::QueuesRef().WithName(name));
    if (!json) return "<absent>";
    StatusOr<Queue> q = kube::DecodeQueue(*json);
    return q.ok() ? q->status.state : "<bad>";
  }
  void PutPodGroup(const std::string& name, const std::string& queue, const std::string& phase) {
    api_->Put(kube::PodGroupsRef().WithNamespace("ml").WithName(name),
              R"({"spec":{"minMember":1,"queue":")" + queue + R"("},"status":{"phase":")" + phase +
                  R"("}})");
  }

  std::shared_ptr<kube::testing::FakeApi> api_ = std::make_shared<kube::testing::FakeApi>();
  std::unique_ptr<kube::Client> client_;
  ReconcilerMetrics metrics_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Job>> jobs_;
  std::vector<std::pair<std::string, Request>> submitted_;
  std::vector<size_t> commands_left_at_submit_;
  std::unique_ptr<QueueController> controller_;
};

// `vcctl job suspend` then `vcctl job resume`: each Command becomes one
// explicit action on the job, after the Command is deleted.
TEST_F(QueueControllerTest, JobCommandsRunOnceAfterTheirDelete) {
  PutCommand("train-abortjob-a1", "AbortJob", JobTarget());
  Start();
  ASSERT_TRUE(WaitFor([&] { return Submitted().size() == 1; }));
  PutCommand("train-resumejob-b2", "ResumeJob", JobTarget());
  ASSERT_TRUE(WaitFor([&] { return Submitted().size() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // nothing runs twice
  EXPECT_THAT(Submitted(),
              ElementsAre(std::pair<std::string, Request>("ml/train", {.action = "AbortJob"}),
                          std::pair<std::string, Request>("ml/train", {.action = "ResumeJob"})));
  EXPECT_THAT(commands_left_at_submit_, ElementsAre(0u, 0u));
  EXPECT_TRUE(CommandGone("train-abortjob-a1"));
  EXPECT_TRUE(CommandGone("train-resumejob-b2"));
  EXPECT_TRUE(WaitFor([&] { return Events("CommandIssued").size() == 2; }));
  EXPECT_THAT(Events("CommandIssued"),
              ElementsAre("ml/Job/train: Start to execute command AbortJob, and clean it up to "
                          "make sure executed not more than once.",
                          "ml/Job/train: Start to execute command ResumeJob, and clean it up to "
                          "make sure executed not more than once."));
  EXPECT_THAT(Events(kInvalidCommand), IsEmpty());
}

// Never a silent skip: a Warning Event naming the field, then the delete.
TEST_F(QueueControllerTest, RefusedCommandsAreToldAndDeleted) {
  struct Case {
    std::string name;
    std::string action;
    std::string target;
    std::string want;  // the Command's Event message prefix
  };
  const std::vector<Case> cases = {
      {"bad-action", "Suspend", JobTarget(), "action: \"Suspend\" is not an action on a Job"},
      {"no-target", "AbortJob", "", "target: missing"},
      {"wrong-kind", "AbortJob",
       R"({"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"u"})",
       "target.kind: \"Deployment\" is not a Volcano Job"},
      {"no-such-job", "AbortJob", JobTarget("ghost", "u"), "target.name: Job ml/ghost not found"},
      {"old-incarnation", "ResumeJob", JobTarget("train", "an-older-uid"),
       "target.uid: \"an-older-uid\" is not the uid of Job ml/train"},
      {"no-such-queue", "CloseQueue", QueueTarget("ghost"), "target.name: Queue ghost not found"},
  };
  for (const Case& c : cases) PutCommand(c.name, c.action, c.target);
  Start();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(WaitFor([&] { return CommandGone(c.name); }));
  }
  ASSERT_TRUE(WaitFor([&] { return Events(kInvalidCommand).size() == cases.size() + 1; }));
  std::vector<std::string> events = Events(kInvalidCommand);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(events, ::testing::Contains(StartsWith("ml/Command/" + c.name + ": " + c.want)));
  }
  // The Job that exists by name hears of the Command refused for it.
  EXPECT_THAT(events,
              ::testing::Contains(StartsWith(
                  "ml/Job/train: Command old-incarnation (ResumeJob) refused: target.uid")));
  EXPECT_THAT(Submitted(), IsEmpty());
}

// A Command whose delete fails is not run until the delete succeeds.
TEST_F(QueueControllerTest, ACommandRunsOnlyOnceDeleted) {
  api_->FailNext("DELETE", "/apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands/", 500);
  PutCommand("train-abortjob-c3", "AbortJob", JobTarget());
  Start();
  ASSERT_TRUE(WaitFor([&] { return Submitted().size() == 1; }));
  EXPECT_THAT(commands_left_at_submit_, ElementsAre(0u));
  int deletes = 0;
  for (const auto& r : api_->Requests()) deletes += r.method == "DELETE";
  EXPECT_EQ(deletes, 2);
}

// A Job created a moment ago (the API has it, the job controller's cache
// not yet) is waited for, not refused.
TEST_F(QueueControllerTest, ATargetNotCachedYetIsWaitedFor) {
  api_->Put(kube::VolcanoJobsRef().WithNamespace("ml").WithName("fresh"),
            R"({"metadata":{"uid":"fresh-uid"}})");
  PutCommand("fresh-abortjob-d4", "AbortJob", JobTarget("fresh", "fresh-uid"));
  Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_THAT(Submitted(), IsEmpty());
  EXPECT_FALSE(CommandGone("fresh-abortjob-d4"));
  Job fresh;
  fresh.meta.namespace_ = "ml";
  fresh.meta.name = "fresh";
  fresh.meta.uid = "fresh-uid";
  AddJob(fresh);
  ASSERT_TRUE(WaitFor([&] { return Submitted().size() == 1; }));
  EXPECT_EQ(Submitted()[0].first, "ml/fresh");
  EXPECT_THAT(Events(kInvalidCommand), IsEmpty());
}

// Open -> CloseQueue -> Closing while a PodGroup runs -> Closed once it is
// gone -> OpenQueue -> Open; only status.state is ever written, so the
// extender's allocated and counters stay.
TEST_F(QueueControllerTest, QueueStateFollowsVolcano) {
  api_->Put(kube::QueuesRef().WithName("research"),
            R"({"metadata":{"uid":"queue-uid-1"},"spec":{"weight":1},)"
            R"("status":{"allocated":{"cpu":"4"},"running":1}})");
  PutPodGroup("train-pg", "research", "Running");
  PutPodGroup("done-pg", "research", "Completed");  // finished: holds nothing
  PutPodGroup("other-pg", "", "Running");           // queue "default"
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueState("research") == "Open"; }));  // had no state

  PutCommand("research-closequeue-e5", "CloseQueue", QueueTarget());
  ASSERT_TRUE(WaitFor([&] { return QueueState("research") == "Closing"; }));
  // The Command's deletion and the controller's own view of the queue (its
  // informer sees the status write) follow the write: wait for them, they
  // lagged it under ASan.
  EXPECT_TRUE(WaitFor([&] { return CommandGone("research-closequeue-e5"); }));
  EXPECT_TRUE(WaitFor([&] {
    const auto queue = controller_->GetQueue("research");
    return queue != nullptr && queue->status.state == "Closing";
  }));
  EXPECT_EQ(controller_->GetQueue("research")->status.state, "Closing");
  PutPodGroup("train-pg", "research", "Inqueue");  // a phase change syncs: still there
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(QueueState("research"), "Closing");

  api_->Remove(kube::PodGroupsRef().WithNamespace("ml").WithName("train-pg"));
  ASSERT_TRUE(WaitFor([&] { return QueueState("research") == "Closed"; }));
  PutPodGroup("late-pg", "research", "Pending");  // Closed stays Closed
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(QueueState("research"), "Closed");

  PutCommand("research-openqueue-f6", "OpenQueue", QueueTarget());
  ASSERT_TRUE(WaitFor([&] { return QueueState("research") == "Open"; }));
  // Each state's Event is created after its status write: wait for the last.
  EXPECT_TRUE(WaitFor([&] { return !Events("OpenQueue").empty(); }));

  std::vector<std::string> patches;
  for (const auto& r : api_->Requests()) {
    if (r.method == "PATCH") patches.push_back(r.path + " " + r.body);
  }
  const std::string path = "/apis/scheduling.volcano.sh/v1beta1/queues/research/status ";
  EXPECT_THAT(patches, ElementsAre(path + R"({"status":{"state":"Open"}})",
                                   path + R"({"status":{"state":"Closing"}})",
                                   path + R"({"status":{"state":"Closed"}})",
                                   path + R"({"status":{"state":"Open"}})"));
  StatusOr<Queue> q = kube::DecodeQueue(*api_->Get(kube::QueuesRef().WithName("research")));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->status.allocated.milli_cpu(), 4000);
  EXPECT_EQ(q->status.running, 1);
  EXPECT_THAT(Events("CloseQueue"),
              ElementsAre("default/Queue/research: state Open -> Closing: 1 PodGroup of the queue "
                          "not finished; Closed once none is left"));
  EXPECT_THAT(Events("SyncQueue"),
              ElementsAre(HasSubstr("state (none) -> Open"),
                          HasSubstr("state Closing -> Closed: no unfinished PodGroup left")));
  EXPECT_THAT(Events("OpenQueue"), ElementsAre(HasSubstr("state Closed -> Open")));
}

// A queue closed with nothing in it is Closed at once.
TEST_F(QueueControllerTest, AnEmptyQueueClosesAtOnce) {
  api_->Put(kube::QueuesRef().WithName("research"),
            R"({"metadata":{"uid":"queue-uid-1"},"status":{"state":"Open"}})");
  PutCommand("research-closequeue-g7", "CloseQueue", QueueTarget());
  Start();
  ASSERT_TRUE(WaitFor([&] { return QueueState("research") == "Closed"; }));
  EXPECT_TRUE(WaitFor([&] { return CommandGone("research-closequeue-g7"); }));
}

}  // namespace
}  // namespace muster::reconciler
