// The Command -> action mapping (commands.h), against what vcctl writes
// (volcano-sh/volcano pkg/cli/util/util.go CreateJobCommand,
// CreateQueueCommand; pkg/cli/job/suspend.go, resume.go -> AbortJob,
// ResumeJob; pkg/cli/queue/operate.go -> OpenQueue, CloseQueue) and what
// Volcano's controllers run (pkg/controllers/job/job_controller_handler.go
// processNextCommand, pkg/controllers/queue/queue_controller.go
// handleCommand).
#include "reconciler/commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "reconciler/naming.h"
#include "reconciler/queue_state.h"

namespace muster::reconciler {
namespace {

using ::testing::StartsWith;

constexpr char kJobUid[] = "0f2d8c4e-6b1a-4e3f-9c7d-2a5b8e1f4d60";
constexpr char kQueueUid[] = "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4";

// A Command in namespace "ml" as vcctl builds it: the target is also the
// controller owner, generateName <target>-<action lowercased>-.
class CommandBuilder {
 public:
  explicit CommandBuilder(std::string action) {
    cmd_.meta.namespace_ = "ml";
    cmd_.meta.name = "cmd-1";
    cmd_.action = std::move(action);
  }
  CommandBuilder& Job(std::string name = "train", std::string uid = kJobUid) {
    return Target(std::string(kJobApiVersion), std::string(kJobKind), std::move(name),
                  std::move(uid));
  }
  CommandBuilder& Queue(std::string name = "research", std::string uid = kQueueUid) {
    return Target(std::string(kQueueApiVersion), std::string(kQueueKind), std::move(name),
                  std::move(uid));
  }
  CommandBuilder& Target(std::string api_version, std::string kind, std::string name,
                         std::string uid) {
    OwnerReference ref{
        std::move(api_version), std::move(kind), std::move(name), std::move(uid), true, true};
    cmd_.meta.generate_name = ref.name + "-" + Lower(cmd_.action) + "-";
    cmd_.meta.owner_references = {ref};
    cmd_.target = std::move(ref);
    return *this;
  }
  operator Command() const { return cmd_; }  // NOLINT: a builder reads as its value

 private:
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  Command cmd_;
};

TEST(PlanCommandTest, WhatVcctlWritesRuns) {
  struct Case {
    std::string name;
    Command command;
    CommandPlan want;
  };
  const std::vector<Case> cases = {
      {"vcctl job suspend",
       CommandBuilder("AbortJob").Job(),
       {CommandTarget::kJob, "ml/train", kJobUid, "AbortJob"}},
      {"vcctl job resume",
       CommandBuilder("ResumeJob").Job(),
       {CommandTarget::kJob, "ml/train", kJobUid, "ResumeJob"}},
      // Whole-job actions Volcano's state machine also takes from a Command.
      {"RestartJob by hand",
       CommandBuilder("RestartJob").Job(),
       {CommandTarget::kJob, "ml/train", kJobUid, "RestartJob"}},
      {"TerminateJob by hand",
       CommandBuilder("TerminateJob").Job(),
       {CommandTarget::kJob, "ml/train", kJobUid, "TerminateJob"}},
      {"CompleteJob by hand",
       CommandBuilder("CompleteJob").Job(),
       {CommandTarget::kJob, "ml/train", kJobUid, "CompleteJob"}},
      {"vcctl queue operate -a open",
       CommandBuilder("OpenQueue").Queue(),
       {CommandTarget::kQueue, "research", kQueueUid, "OpenQueue"}},
      {"vcctl queue operate -a close",
       CommandBuilder("CloseQueue").Queue(),
       {CommandTarget::kQueue, "research", kQueueUid, "CloseQueue"}},
      // The Job is the Command's namespace's; a Queue has none.
      {"a target without uid",
       CommandBuilder("AbortJob").Job("train", ""),
       {CommandTarget::kJob, "ml/train", "", "AbortJob"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<CommandPlan> plan = PlanCommand(c.command);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(*plan, c.want);
  }
}

TEST(PlanCommandTest, WhatCannotRunNamesTheField) {
  Command no_target = CommandBuilder("AbortJob");
  Command no_action = CommandBuilder("").Job();
  struct Case {
    std::string name;
    Command command;
    std::string want;  // the message's prefix
  };
  const std::vector<Case> cases = {
      {"no action", no_action, "action: missing"},
      {"no target", no_target, "target: missing"},
      {"a Deployment", CommandBuilder("AbortJob").Target("apps/v1", "Deployment", "web", "u"),
       "target.kind: \"Deployment\" is not a Volcano Job (batch.volcano.sh/v1alpha1) or Queue"},
      {"a kubernetes batch Job", CommandBuilder("AbortJob").Target("batch/v1", "Job", "pi", "u"),
       "target.apiVersion: \"batch/v1\" is not a Volcano Job's (batch.volcano.sh/v1alpha1)"},
      {"an old Queue version",
       CommandBuilder("CloseQueue").Target("scheduling.volcano.sh/v1alpha1", "Queue", "q", "u"),
       "target.apiVersion: \"scheduling.volcano.sh/v1alpha1\" is not a Volcano Queue's"},
      {"a target without name", CommandBuilder("AbortJob").Job(""), "target.name: missing"},
      {"an unknown action", CommandBuilder("Suspend").Job(),
       "action: \"Suspend\" is not an action on a Job (AbortJob, ResumeJob, RestartJob, "
       "TerminateJob, CompleteJob)"},
      {"an internal action", CommandBuilder("SyncJob").Job(),
       "action: \"SyncJob\" is not an action on a Job"},
      {"RestartTask names no task", CommandBuilder("RestartTask").Job(),
       "action: \"RestartTask\" acts on the pod of a policy's event"},
      {"RestartPod names no pod", CommandBuilder("RestartPod").Job(),
       "action: \"RestartPod\" acts on the pod of a policy's event"},
      {"a queue action on a Job", CommandBuilder("CloseQueue").Job(),
       "action: \"CloseQueue\" is not an action on a Job"},
      {"a job action on a Queue", CommandBuilder("AbortJob").Queue(),
       "action: \"AbortJob\" is not an action on a Queue (OpenQueue, CloseQueue)"},
      {"case matters", CommandBuilder("closequeue").Queue(),
       "action: \"closequeue\" is not an action on a Queue"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<CommandPlan> plan = PlanCommand(c.command);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(plan.status().message(), StartsWith(c.want));
  }
}

TEST(CheckTargetTest, SameNameAndIncarnation) {
  const CommandPlan plan{CommandTarget::kJob, "ml/train", kJobUid, "AbortJob"};
  ObjectMeta same;
  same.namespace_ = "ml";
  same.name = "train";
  same.uid = kJobUid;
  ObjectMeta again = same;
  again.uid = "11111111-2222-3333-4444-555555555555";
  struct Case {
    std::string name;
    CommandPlan plan;
    const ObjectMeta* meta;
    StatusCode want;
    std::string message;  // prefix
  };
  CommandPlan no_uid = plan;
  no_uid.uid.clear();
  const std::vector<Case> cases = {
      {"found", plan, &same, StatusCode::kOk, ""},
      {"absent", plan, nullptr, StatusCode::kNotFound, "target.name: Job ml/train not found"},
      {"deleted and made again", plan, &again, StatusCode::kFailedPrecondition,
       "target.uid: \"0f2d8c4e-6b1a-4e3f-9c7d-2a5b8e1f4d60\" is not the uid of Job ml/train"},
      {"no uid to check", no_uid, &again, StatusCode::kOk, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status s = CheckTarget(c.plan, c.meta);
    EXPECT_EQ(s.code(), c.want) << s;
    EXPECT_THAT(s.message(), StartsWith(c.message));
  }
}

// A job Command is an explicit action: it runs whatever the job's policies
// say (lifecycle.h ResolveAction: the explicit action first).
TEST(JobRequestTest, IsAnExplicitAction) {
  const Request r = JobRequest({CommandTarget::kJob, "ml/train", kJobUid, "AbortJob"});
  EXPECT_EQ(r, Request{.action = "AbortJob"});
  Job job;
  job.spec.policies.push_back(LifecyclePolicy{.event = "*", .action = "RestartJob"});
  EXPECT_EQ(ResolveAction(job, r).action, "AbortJob");
}

}  // namespace
}  // namespace muster::reconciler
