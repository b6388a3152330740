#include "reconciler/lifecycle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "reconciler/testing/job_fixtures.h"
#include "reconciler/testing/lifecycle_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::JobWorld;
using fixtures::MakeJobPod;
using lifecycle_fixtures::At;
using lifecycle_fixtures::CodedPod;
using lifecycle_fixtures::Command;
using lifecycle_fixtures::From;
using lifecycle_fixtures::KilledNames;
using lifecycle_fixtures::kNow;
using lifecycle_fixtures::Names;
using lifecycle_fixtures::On;
using lifecycle_fixtures::OnEvents;
using lifecycle_fixtures::OnExit;
using lifecycle_fixtures::Sorted;
using lifecycle_fixtures::Task;
using lifecycle_fixtures::TwoTaskJob;
using lifecycle_fixtures::World;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using PgOp = Plan::PodGroupOp;

// ===========================================================================
// Small pure helpers.

TEST(LifecycleIsFinishedTest, OnlyCompletedFailedTerminated) {
  for (std::string_view phase : {kCompleted, kFailed, kTerminated}) {
    EXPECT_TRUE(IsFinished(phase)) << phase;
  }
  for (std::string_view phase :
       {kPending, kRunning, kRestarting, kAborting, kAborted, kCompleting, kTerminating}) {
    EXPECT_FALSE(IsFinished(phase)) << phase;
  }
}

// ===========================================================================
// Policy resolution.

struct ResolveCase {
  std::string name;
  std::vector<LifecyclePolicy> job_policies;
  std::vector<LifecyclePolicy> worker_policies;
  int32_t status_version;
  Request request;
  std::string want_action;
  std::optional<Duration> want_timeout;
};

// Each case against the two-task job, Running at the case's version, with the
// case's job policies and worker policies.
void RunResolveCases(const std::vector<ResolveCase>& cases) {
  for (const ResolveCase& c : cases) {
    Job job = At(TwoTaskJob(), kRunning, c.status_version);
    job.spec.policies = c.job_policies;
    Task(job, "worker").policies = c.worker_policies;
    ResolvedAction got = ResolveAction(job, c.request);
    EXPECT_EQ(got.action, c.want_action) << c.name;
    EXPECT_EQ(got.timeout, c.want_timeout) << c.name;
  }
}

TEST(LifecycleResolveActionTest, FirstMatchTaskThenJobAndExitCodes) {
  Request failed_137 = From(kPodFailed, "worker", 0);
  failed_137.exit_code = 137;
  Request failed_1 = From(kPodFailed, "ps", 0);
  failed_1.exit_code = 1;
  RunResolveCases({
      {"task policy before job policy",
       {On("PodFailed", "RestartJob")},
       {On("PodFailed", "RestartTask")},
       0,
       From(kPodFailed, "worker", 0),
       "RestartTask"},
      {"task without policies uses the job's",
       {On("PodFailed", "RestartJob")},
       {On("PodFailed", "RestartTask")},
       0,
       From(kPodFailed, "ps", 0),
       "RestartJob"},
      {"task policies that do not match fall through to the job's",
       {On("PodFailed", "RestartJob")},
       {On("TaskCompleted", "CompleteJob")},
       0,
       From(kPodFailed, "worker", 0),
       "RestartJob"},
      {"first match wins: exitCode before the event",
       {OnExit(137, "RestartPod"), On("PodFailed", "RestartJob")},
       {},
       0,
       failed_137,
       "RestartPod"},
      {"exitCode differs: the next policy",
       {OnExit(137, "RestartPod"), On("PodFailed", "RestartJob")},
       {},
       0,
       failed_1,
       "RestartJob"},
      {"first match wins: event before exitCode",
       {On("PodFailed", "AbortJob"), OnExit(137, "RestartPod")},
       {},
       0,
       failed_137,
       "AbortJob"},
      {"exitCode does not match an event without exit code",
       {OnExit(137, "RestartPod")},
       {},
       0,
       From(kPodEvicted, "worker", 0),
       "SyncJob"},
  });
}

TEST(LifecycleResolveActionTest, EventsAndTheWildcard) {
  RunResolveCases({
      {"events list",
       {OnEvents({"PodFailed", "PodEvicted"}, "RestartJob")},
       {},
       0,
       From(kPodEvicted, "ps", 1),
       "RestartJob"},
      {"* matches any event",
       {On("*", "TerminateJob")},
       {},
       0,
       From(kPodEvicted, "ps", 0),
       "TerminateJob"},
      {"* matches TaskFailed",
       {On("*", "TerminateJob")},
       {},
       0,
       From(kTaskFailed, "ps", 0),
       "TerminateJob"},
      {"* without timeout ignores PodPending",
       {On("*", "TerminateJob")},
       {},
       0,
       From(kPodPendingEvent, "ps", 0),
       "SyncJob"},
      {"* with timeout matches PodPending",
       {On("*", "RestartJob", minutes(5))},
       {},
       0,
       From(kPodPendingEvent, "ps", 0),
       "RestartJob",
       minutes(5)},
  });
}

TEST(LifecycleResolveActionTest, PodPendingTimeoutsAndOtherEvents) {
  RunResolveCases({
      {"PodPending without timeout is ignored",
       {On("PodPending", "RestartJob")},
       {},
       0,
       From(kPodPendingEvent, "ps", 0),
       "SyncJob"},
      {"PodPending with timeout",
       {On("PodPending", "RestartJob", minutes(10))},
       {},
       0,
       From(kPodPendingEvent, "ps", 0),
       "RestartJob",
       minutes(10)},
      {"timeout of a task policy",
       {},
       {On("PodFailed", "RestartTask", seconds(30))},
       0,
       From(kPodFailed, "worker", 1),
       "RestartTask",
       seconds(30)},
      {"Unknown event",
       {On("Unknown", "RestartJob")},
       {},
       0,
       From(kUnknownEvent, "ps", 0),
       "RestartJob"},
      {"TaskCompleted on the task",
       {},
       {On("TaskCompleted", "CompleteJob")},
       0,
       From(kTaskCompleted, "worker", 1),
       "CompleteJob"},
  });
}

TEST(LifecycleResolveActionTest, VersionsExplicitActionsAndNoMatch) {
  Request explicit_abort = From(kPodFailed, "worker", 0);
  explicit_abort.action = std::string(kAbortJob);
  Request explicit_stale = From(kPodEvicted, "worker", 0, /*version=*/0);
  explicit_stale.action = std::string(kResumeJob);
  RunResolveCases({
      {"stale pod version is a plain sync",
       {On("PodEvicted", "RestartJob")},
       {},
       2,
       From(kPodEvicted, "ps", 0, /*version=*/1),
       "SyncJob"},
      {"current pod version",
       {On("PodEvicted", "RestartJob")},
       {},
       2,
       From(kPodEvicted, "ps", 0, /*version=*/2),
       "RestartJob"},
      {"explicit action wins",
       {On("PodFailed", "RestartJob", minutes(1))},
       {},
       0,
       explicit_abort,
       "AbortJob"},
      {"explicit action even from a stale pod", {}, {}, 1, explicit_stale, "ResumeJob"},
      {"internal request", {On("*", "RestartJob")}, {}, 0, Request{}, "SyncJob"},
      {"no policy matches",
       {On("PodEvicted", "RestartJob")},
       {},
       0,
       From(kPodFailed, "ps", 0),
       "SyncJob"},
      {"no policies at all", {}, {}, 0, From(kPodFailed, "ps", 0), "SyncJob"},
  });
}

// ===========================================================================
// State x action -> next phase, kills, retryCount, version, PodGroup.
// Every request is an explicit action aimed at worker-0 (or a plain
// sync), so the policy layer is out of the way.

struct TransitionCase {
  std::string phase;
  std::string pods;  // codes: ps-0 ps-1 worker-0 worker-1 (see CodedPod)
  std::optional<std::string> group;
  std::string action;  // "SyncJob" = plain sync
  int32_t retry_count;
  // want
  std::string next;
  std::vector<std::string> killed;
  int32_t retry;
  int32_t version;
  PgOp pg_op;
};

std::string Describe(const TransitionCase& c) {
  return c.phase + " [" + c.pods + "] retry " + std::to_string(c.retry_count) + " x " + c.action;
}

void RunTransitions(const std::vector<TransitionCase>& cases) {
  for (const TransitionCase& c : cases) {
    JobWorld w = World(At(TwoTaskJob(), c.phase, 0, c.retry_count), c.pods, c.group);
    Request request = c.action == kSync ? Request{} : Command(c.action);
    Plan plan = w.Reconcile(request, kNow);
    const std::string what = Describe(c);
    EXPECT_EQ(plan.status.state.phase, c.next) << what;
    EXPECT_EQ(Sorted(KilledNames(plan)), Sorted(c.killed)) << what;
    EXPECT_EQ(plan.status.retry_count, c.retry) << what;
    EXPECT_EQ(plan.status.version, c.version) << what;
    EXPECT_EQ(plan.pod_group_op, c.pg_op) << what;
    // Finished jobs apply no policy and no command.
    EXPECT_EQ(plan.action, IsFinished(c.phase) ? std::string(kSync) : c.action) << what;
  }
}

std::vector<std::string> AllPods() {
  return Names({"j-ps-0", "j-ps-1", "j-worker-0", "j-worker-1"});
}
std::vector<std::string> Workers() { return Names({"j-worker-0", "j-worker-1"}); }

TEST(LifecycleTransitionTest, PendingAndRunning) {
  std::vector<TransitionCase> cases;
  for (const auto& [phase, pods, group] :
       {std::tuple{"Pending", "PPPP", "Inqueue"}, std::tuple{"Running", "RRRR", "Running"}}) {
    std::string p = phase;
    std::vector<TransitionCase> rows = {
        // Whole-job kills: version + 1, PodGroup deleted.
        {p, pods, group, "RestartJob", 0, "Restarting", AllPods(), 1, 1, PgOp::kDelete},
        {p, pods, group, "AbortJob", 0, "Aborting", AllPods(), 0, 1, PgOp::kDelete},
        {p, pods, group, "TerminateJob", 0, "Terminating", AllPods(), 0, 1, PgOp::kDelete},
        {p, pods, group, "CompleteJob", 0, "Completing", AllPods(), 0, 1, PgOp::kDelete},
        // Targeted restarts: the PodGroup stays, no new version.
        {p, pods, group, "RestartTask", 0, "Restarting", Workers(), 1, 0, PgOp::kNone},
        {p, pods, group, "RestartPod", 0, "Restarting", {"j-worker-0"}, 1, 0, PgOp::kNone},
        // Internal.
        {p, pods, group, "SyncJob", 0, p, {}, 0, 0, PgOp::kNone},
    };
    cases.insert(cases.end(), rows.begin(), rows.end());
  }
  RunTransitions(cases);
}

TEST(LifecycleTransitionTest, PendingSyncStartsRunningAtMinAvailable) {
  RunTransitions({
      {"Pending", "RRRR", "Running", "SyncJob", 0, "Running", {}, 0, 0, PgOp::kNone},
      // running + succeeded + failed counts toward minAvailable.
      {"Pending", "RRSF", "Running", "SyncJob", 0, "Running", {}, 0, 0, PgOp::kNone},
      {"Pending", "RRRP", "Running", "SyncJob", 0, "Pending", {}, 0, 0, PgOp::kNone},
      // "" behaves as Pending.
      {"", "PPPP", "Inqueue", "SyncJob", 0, "Pending", {}, 0, 0, PgOp::kNone},
  });
}

TEST(LifecycleTransitionTest, SoftKillKeepsFinishedPods) {
  const std::vector<std::string> live = Names({"j-ps-1", "j-worker-1"});
  RunTransitions({
      {"Running", "SRFR", "Running", "AbortJob", 0, "Aborting", live, 0, 1, PgOp::kDelete},
      {"Running", "SRFR", "Running", "TerminateJob", 0, "Terminating", live, 0, 1, PgOp::kDelete},
      {"Running", "SRFR", "Running", "CompleteJob", 0, "Completing", live, 0, 1, PgOp::kDelete},
      // RestartJob kills all, finished ones too...
      {"Running", "SRFR", "Running", "RestartJob", 0, "Restarting", AllPods(), 1, 1, PgOp::kDelete},
      {"Running", "SRFR", "Running", "RestartJob", 1, "Restarting", AllPods(), 2, 1, PgOp::kDelete},
      // ...except on the last retry (retryCount >= maxRetry - 1), which also
      // spends the budget (muster settles Restarting -> Failed in the same
      // call).
      {"Running", "SRFR", "Running", "RestartJob", 2, "Failed", live, 3, 1, PgOp::kDelete},
      // A pod already being deleted is not killed again.
      {"Running", "RRDR", "Running", "AbortJob", 0, "Aborting",
       Names({"j-ps-0", "j-ps-1", "j-worker-1"}), 0, 1, PgOp::kDelete},
  });
}

TEST(LifecycleTransitionTest, Restarting) {
  RunTransitions({
      // Pending again once enough of the old pods are gone.
      {"Restarting", "----", std::nullopt, "SyncJob", 1, "Pending", {}, 1, 0, PgOp::kNone},
      {"Restarting", "DD--", std::nullopt, "SyncJob", 1, "Restarting", {}, 1, 0, PgOp::kNone},
      // Failed once the retries are spent, whatever is left.
      {"Restarting", "----", std::nullopt, "SyncJob", 3, "Failed", {}, 3, 0, PgOp::kNone},
      {"Restarting", "DD--", std::nullopt, "SyncJob", 3, "Failed", {}, 3, 0, PgOp::kNone},
      // Every other action kills all pods (no Aborting/Terminating from
      // here), without a new version or retry.
      {"Restarting", "RR--", std::nullopt, "AbortJob", 1, "Restarting", Names({"j-ps-0", "j-ps-1"}),
       1, 0, PgOp::kNone},
      {"Restarting", "RRSF", std::nullopt, "TerminateJob", 1, "Restarting", AllPods(), 1, 0,
       PgOp::kNone},
      // ... keeping finished pods on the last retry.
      {"Restarting", "RRSF", std::nullopt, "RestartJob", 2, "Restarting",
       Names({"j-ps-0", "j-ps-1"}), 2, 0, PgOp::kNone},
      // Targeted restarts kill their target only.
      {"Restarting",
       "RRRR",
       std::nullopt,
       "RestartPod",
       1,
       "Restarting",
       {"j-worker-0"},
       1,
       0,
       PgOp::kNone},
      {"Restarting", "RRRR", std::nullopt, "RestartTask", 1, "Restarting", Workers(), 1, 0,
       PgOp::kNone},
  });
}

TEST(LifecycleTransitionTest, RestartingBackToPendingUsesStatusMinAvailable) {
  // Σreplicas − terminating ≥ minAvailable: 4 − 2 ≥ 2.
  Job job = At(TwoTaskJob(R"("minAvailable":2,)"), kRestarting, 1, 1);
  JobWorld w = World(job, "DD--");
  EXPECT_EQ(w.Reconcile(Request{}, kNow).status.state.phase, kPending);
  // 4 − 3 < 2.
  w = World(job, "DDD-");
  EXPECT_EQ(w.Reconcile(Request{}, kNow).status.state.phase, kRestarting);
}

TEST(LifecycleTransitionTest, RestartingSyncKillsStalePodsAndCreatesNothing) {
  // After RestartTask the PodGroup is kept (Running); Restarting still
  // creates no pod and does not touch the PodGroup.
  Job job = At(TwoTaskJob(), kRestarting, 1, 1);
  JobWorld w = World(job, "RR--", kPodGroupRunning);
  w.pods[0] = MakeJobPod(job, "ps", 0).Ready().Version(0);  // stale and alive
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), ElementsAre("j-ps-0"));
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_EQ(plan.pod_group_op, PgOp::kNone);
  EXPECT_EQ(plan.status.state.phase, kRestarting);  // 4 − 1 < 4
}

TEST(LifecycleTransitionTest, AbortingAndAborted) {
  RunTransitions({
      {"Aborting", "DD--", std::nullopt, "SyncJob", 0, "Aborting", {}, 0, 0, PgOp::kNone},
      {"Aborting", "----", std::nullopt, "SyncJob", 0, "Aborted", {}, 0, 0, PgOp::kNone},
      // Finished pods are not alive.
      {"Aborting", "SF--", std::nullopt, "SyncJob", 0, "Aborted", {}, 0, 0, PgOp::kNone},
      // Other actions: soft kill.
      {"Aborting",
       "RS--",
       std::nullopt,
       "RestartJob",
       0,
       "Aborting",
       {"j-ps-0"},
       0,
       0,
       PgOp::kNone},
      {"Aborting", "RS--", "Inqueue", "SyncJob", 0, "Aborting", {"j-ps-0"}, 0, 0, PgOp::kDelete},
      // ResumeJob: soft kill, retry + 1, new version, Restarting.
      {"Aborting", "DDS-", std::nullopt, "ResumeJob", 0, "Restarting", {}, 1, 1, PgOp::kNone},
      {"Aborted", "R---", std::nullopt, "SyncJob", 0, "Aborted", {"j-ps-0"}, 0, 0, PgOp::kNone},
      {"Aborted", "S---", std::nullopt, "RestartJob", 0, "Aborted", {}, 0, 0, PgOp::kNone},
      {"Aborted", "S---", std::nullopt, "AbortJob", 0, "Aborted", {}, 0, 0, PgOp::kNone},
      // Nothing left alive: Restarting settles to Pending in the same call.
      {"Aborted", "S---", std::nullopt, "ResumeJob", 0, "Pending", {}, 1, 1, PgOp::kNone},
      // ... or to Failed when the retries are spent.
      {"Aborted", "----", std::nullopt, "ResumeJob", 2, "Failed", {}, 3, 1, PgOp::kNone},
  });
}

TEST(LifecycleTransitionTest, CompletingAndTerminatingSettleWhenNothingIsAlive) {
  RunTransitions({
      {"Completing", "DS--", std::nullopt, "SyncJob", 0, "Completing", {}, 0, 0, PgOp::kNone},
      {"Completing", "SS--", std::nullopt, "SyncJob", 0, "Completed", {}, 0, 0, PgOp::kNone},
      {"Completing",
       "RSS-",
       std::nullopt,
       "SyncJob",
       0,
       "Completing",
       {"j-ps-0"},
       0,
       0,
       PgOp::kNone},
      {"Completing",
       "PS--",
       std::nullopt,
       "AbortJob",
       0,
       "Completing",
       {"j-ps-0"},
       0,
       0,
       PgOp::kNone},
      {"Terminating", "D---", std::nullopt, "SyncJob", 0, "Terminating", {}, 0, 0, PgOp::kNone},
      {"Terminating", "SF--", std::nullopt, "SyncJob", 0, "Terminated", {}, 0, 0, PgOp::kNone},
      {"Terminating", "----", "Running", "SyncJob", 0, "Terminated", {}, 0, 0, PgOp::kDelete},
      // Not resumable.
      {"Terminating", "----", std::nullopt, "ResumeJob", 0, "Terminated", {}, 0, 0, PgOp::kNone},
      {"Terminating",
       "N---",
       std::nullopt,
       "ResumeJob",
       0,
       "Terminating",
       {"j-ps-0"},
       0,
       0,
       PgOp::kNone},
  });
}

TEST(LifecycleTransitionTest, FinishedPhasesStayAndSoftKill) {
  RunTransitions({
      {"Completed",
       "SSRS",
       "Running",
       "RestartJob",
       0,
       "Completed",
       {"j-worker-0"},
       0,
       0,
       PgOp::kDelete},
      {"Completed", "SSSS", std::nullopt, "SyncJob", 0, "Completed", {}, 0, 0, PgOp::kNone},
      {"Failed", "FFSP", std::nullopt, "AbortJob", 3, "Failed", {"j-worker-1"}, 3, 0, PgOp::kNone},
      {"Failed", "----", std::nullopt, "RestartTask", 1, "Failed", {}, 1, 0, PgOp::kNone},
      {"Terminated", "----", std::nullopt, "ResumeJob", 0, "Terminated", {}, 0, 0, PgOp::kNone},
      {"Terminated",
       "R---",
       std::nullopt,
       "SyncJob",
       0,
       "Terminated",
       {"j-ps-0"},
       0,
       0,
       PgOp::kNone},
  });
}

TEST(LifecycleTransitionTest, FinishedPhasesIgnorePolicies) {
  Job job = At(TwoTaskJob(), kCompleted);
  job.spec.policies = {On("PodEvicted", "RestartJob")};
  JobWorld w = World(job, "SSSS");
  Plan plan = w.Reconcile(From(kPodEvicted, "ps", 0), kNow);
  EXPECT_EQ(plan.action, kSync);
  EXPECT_EQ(plan.status.state.phase, kCompleted);
  EXPECT_EQ(plan.status.retry_count, 0);
  EXPECT_THAT(plan.events, IsEmpty());
}

// ===========================================================================
// Versions.

TEST(LifecycleVersionTest, RestartJobBumpsTheVersionAndDeletesThePodGroup) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/2, /*retry_count=*/1);
  job.spec.policies = {On("PodEvicted", "RestartJob")};
  JobWorld w = World(job, "RRDR", kPodGroupRunning);  // worker-0 evicted
  Plan plan = w.Reconcile(From(kPodEvicted, "worker", 0, /*version=*/2), kNow);
  EXPECT_EQ(plan.action, kRestartJob);
  EXPECT_EQ(plan.status.version, 3);
  EXPECT_EQ(plan.status.retry_count, 2);
  EXPECT_EQ(plan.pod_group_op, PgOp::kDelete);
  EXPECT_EQ(Sorted(KilledNames(plan)), Names({"j-ps-0", "j-ps-1", "j-worker-1"}));
  EXPECT_EQ(plan.status.terminating, 4);
  EXPECT_EQ(plan.status.state.phase, kRestarting);
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, "Normal");
  EXPECT_EQ(plan.events[0].reason, "ExecuteAction");
}

TEST(LifecycleVersionTest, EventsFromOlderPodsTriggerNoPolicy) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/1);
  job.spec.policies = {On("PodEvicted", "RestartJob"), On("PodFailed", "AbortJob")};
  JobWorld w = World(job, "RRRR", kPodGroupRunning);
  for (std::string_view event : {kPodEvicted, kPodFailed}) {
    Plan plan = w.Reconcile(From(event, "worker", 0, /*version=*/0), kNow);
    EXPECT_EQ(plan.action, kSync) << event;
    EXPECT_EQ(plan.status.version, 1) << event;
    EXPECT_EQ(plan.status.retry_count, 0) << event;
    EXPECT_EQ(plan.status.state.phase, kRunning) << event;
    EXPECT_THAT(KilledNames(plan), IsEmpty()) << event;
    EXPECT_THAT(plan.events, IsEmpty()) << event;
  }
}

}  // namespace
}  // namespace muster::reconciler
