// The status a Reconcile holds and how it is written, and the CTR example end
// to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reconciler/lifecycle.h"
#include "reconciler/naming.h"
#include "reconciler/testing/job_fixtures.h"
#include "reconciler/testing/lifecycle_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::JobWorld;
using fixtures::MakeJob;
using fixtures::MakeJobPod;
using lifecycle_fixtures::At;
using lifecycle_fixtures::ConditionPhases;
using lifecycle_fixtures::From;
using lifecycle_fixtures::JobOf;
using lifecycle_fixtures::KilledNames;
using lifecycle_fixtures::kNow;
using lifecycle_fixtures::kT0;
using lifecycle_fixtures::Names;
using lifecycle_fixtures::On;
using lifecycle_fixtures::Sorted;
using lifecycle_fixtures::TaskJson;
using lifecycle_fixtures::TwoTaskJob;
using lifecycle_fixtures::World;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using PgOp = Plan::PodGroupOp;

// ===========================================================================
// Status.

TEST(LifecycleStatusTest, CountersPerPhase) {
  Job job = At(JobOf(R"("minAvailable":1,)", {TaskJson("t", 7, "1")}), kRunning);
  JobWorld w = World(job, "PRSFUD", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "t", 6).Phase(""));  // no phase yet: Pending
  w.pods.push_back(MakeJobPod(job, "t", 7).Ready());    // surplus: killed now
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), ElementsAre("j-t-7"));
  const JobStatus& s = plan.status;
  EXPECT_EQ(s.pending, 2);
  EXPECT_EQ(s.running, 1);
  EXPECT_EQ(s.succeeded, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.unknown, 1);
  EXPECT_EQ(s.terminating, 2);  // deletionTimestamp + killed by this plan
  using Counts = std::map<std::string, std::map<std::string, int32_t>>;
  EXPECT_EQ(
      s.task_status_count,
      (Counts{
          {"t",
           {{"Pending", 2}, {"Running", 1}, {"Succeeded", 1}, {"Failed", 1}, {"Unknown", 1}}}}));
}

TEST(LifecycleStatusTest, TaskStatusCountPerTaskReplacesTheOldOne) {
  Job job = At(TwoTaskJob(), kRunning);
  job.status.task_status_count = {{"gone", {{"Running", 9}}}};
  job.status.running = 9;
  JobWorld w = World(job, "RRSP", kPodGroupRunning);
  Plan plan = w.Reconcile(Request{}, kNow);
  using Counts = std::map<std::string, std::map<std::string, int32_t>>;
  // Every task and phase, zeros included (a merge patch cannot drop a key).
  EXPECT_EQ(
      plan.status.task_status_count,
      (Counts{
          {"ps", {{"Pending", 0}, {"Running", 2}, {"Succeeded", 0}, {"Failed", 0}, {"Unknown", 0}}},
          {"worker",
           {{"Pending", 1}, {"Running", 0}, {"Succeeded", 1}, {"Failed", 0}, {"Unknown", 0}}}}));
  EXPECT_EQ(plan.status.running, 2);
}

// A pod of a task the spec no longer has (tasks changed while muster did not
// enforce the update rules) counts in the totals only: the status names the
// Job's tasks and nothing else.
TEST(LifecycleStatusTest, TaskStatusCountNamesOnlyTheJobsTasks) {
  Job job = At(TwoTaskJob(), kCompleted);
  JobWorld w = World(job, "SSSS", std::nullopt);
  w.pods.push_back(MakeJobPod(job, "gone", 0).Phase("Succeeded"));  // finished: not killed
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), IsEmpty());
  EXPECT_EQ(plan.status.succeeded, 5);
  std::vector<std::string> tasks;
  for (const auto& [task, counts] : plan.status.task_status_count) tasks.push_back(task);
  EXPECT_THAT(tasks, ElementsAre("ps", "worker"));
  EXPECT_EQ(plan.status.task_status_count.at("worker").at("Succeeded"), 2);
}

TEST(LifecycleStatusTest, MinAvailableIsCopiedFromTheSpec) {
  Job job = TwoTaskJob(R"("minAvailable":3,)");
  job.status.min_available = 0;
  EXPECT_EQ(World(job, "").Reconcile(Request{}, kNow).status.min_available, 3);
}

TEST(LifecycleStatusTest, ConditionsOnePerPhaseLastTransitionOnChangeOnly) {
  const Time t1 = kT0 + minutes(1), t2 = kT0 + minutes(2), t3 = kT0 + minutes(3);
  Job job = At(TwoTaskJob(), kRestarting, 1, 1);
  job.status.state.last_transition_time = t3;
  job.status.conditions = {{"Pending", t1}, {"Running", t2}, {"Restarting", t3}};

  // Re-entering Pending moves its condition to the end, stamped now.
  Plan plan = World(job, "").Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kPending);
  EXPECT_EQ(plan.status.state.last_transition_time, kNow);
  EXPECT_EQ(plan.status.conditions,
            (std::vector<JobCondition>{{"Running", t2}, {"Restarting", t3}, {"Pending", kNow}}));
  EXPECT_EQ(plan.status.running_duration, kNow - job.meta.creation_timestamp);

  // No change: the same time and conditions.
  job.status = plan.status;
  Plan again = World(job, "").Reconcile(Request{}, kNow + minutes(5));
  EXPECT_EQ(again.status, plan.status);
}

TEST(LifecycleStatusTest, NewJobGetsItsFirstCondition) {
  Plan plan = World(TwoTaskJob(), "").Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kPending);
  EXPECT_EQ(plan.status.state.last_transition_time, kNow);
  EXPECT_EQ(plan.status.conditions, (std::vector<JobCondition>{{"Pending", kNow}}));
}

TEST(LifecycleStatusTest, FailedCarriesAReasonAndAWarning) {
  Plan plan = World(At(TwoTaskJob(), kRestarting, 3, 3), "").Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kFailed);
  EXPECT_EQ(plan.status.state.reason, "MaxRetryExceeded");
  EXPECT_FALSE(plan.status.state.message.empty());
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, "Warning");
  EXPECT_EQ(plan.events[0].reason, "JobFailed");

  plan = World(At(TwoTaskJob(), kRunning), "SFFF", kPodGroupRunning).Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kFailed);
  EXPECT_EQ(plan.status.state.reason, "JobFailed");
}

TEST(LifecycleStatusTest, ActionIsRecordedAsAnEvent) {
  Job job = At(TwoTaskJob(), kRunning);
  job.spec.policies = {On("PodEvicted", "AbortJob")};
  Plan plan = World(job, "RRRR", kPodGroupRunning).Reconcile(From(kPodEvicted, "ps", 1), kNow);
  EXPECT_THAT(plan.events,
              ElementsAre(JobEventRecord{"Normal", "ExecuteAction",
                                         "Start to execute action AbortJob on event PodEvicted "
                                         "of pod j-ps-1"}));
}

// ===========================================================================
// End to end: the CTR example (admission_ctr.json) as a controller would
// drive it, one Reconcile per change.

std::string ReadTestdata(std::string_view file) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/" + std::string(file));
  EXPECT_TRUE(in.good()) << file;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LifecycleCtrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w_.job = MakeJob(ReadTestdata("admission_ctr.json"));
    w_.job.meta.uid = "ctr-uid";
    w_.job.meta.creation_timestamp = kT0;
  }

  // One Reconcile of `request`, applied; the clock moves a minute.
  Plan Step(const Request& request = Request{}) {
    now_ = now_ + minutes(1);
    Plan plan = w_.Reconcile(request, now_);
    w_.Apply(plan, now_);
    return plan;
  }

  // The requests a change of pod `name` raises, as the controller sees it.
  std::vector<Request> Change(std::string_view name, const std::function<void(Pod&)>& change) {
    Pod* pod = w_.FindPod(name);
    EXPECT_NE(pod, nullptr) << name;
    if (pod == nullptr) return {};
    Pod before = *pod;
    change(*pod);
    std::string task;
    int index = 0;
    PodTaskAndIndex(*pod, &task, &index);
    std::vector<const Pod*> task_pods;
    for (const Pod& p : w_.pods) {
      std::string t;
      int i = 0;
      if (PodTaskAndIndex(p, &t, &i) && t == task) task_pods.push_back(&p);
    }
    return PodChangeRequests(w_.job, &before, pod, [&] { return task_pods; });
  }

  // From a job without pods (Pending, PodGroup absent) to Running: the
  // PodGroup is created, enqueued, the pods created, and they run.
  void StartToRunning() {
    Plan plan = Step();
    EXPECT_EQ(plan.status.state.phase, kPending);
    EXPECT_EQ(plan.pod_group_op, PgOp::kCreate);
    EXPECT_THAT(plan.create_pods, IsEmpty());

    w_.group->status.phase = std::string(kPodGroupPending);
    EXPECT_THAT(Step().create_pods, IsEmpty());

    w_.group->status.phase = std::string(kPodGroupInqueue);
    plan = Step();
    EXPECT_EQ(plan.create_pods, (std::vector<PodSlot>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
    ASSERT_EQ(w_.pods.size(), 4u);
    for (const Pod& pod : w_.pods) EXPECT_EQ(PodVersion(pod), w_.job.status.version);

    // Each new pod raises PodPending: no policy for it, a sync.
    for (const Pod& pod : std::vector<Pod>(w_.pods)) {
      std::vector<Request> requests =
          PodChangeRequests(w_.job, nullptr, &pod, [] { return std::vector<const Pod*>{}; });
      ASSERT_EQ(requests.size(), 1u);
      EXPECT_EQ(requests[0].event, kPodPendingEvent);
      plan = Step(requests[0]);
      EXPECT_EQ(plan.action, kSync);
      EXPECT_EQ(plan.status.state.phase, kPending);
      EXPECT_EQ(plan.status.pending, 4);
    }

    w_.SetPhaseOfAll("Running");
    w_.group->status.phase = std::string(kPodGroupRunning);
    plan = Step();
    EXPECT_EQ(plan.status.state.phase, kRunning);
    EXPECT_EQ(plan.status.running, 4);
  }

  // A pod is evicted: PodEvicted -> RestartJob.
  Plan Evict(std::string_view name) {
    std::vector<Request> requests = Change(name, [&](Pod& p) { p.meta.deletion_timestamp = now_; });
    EXPECT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests.at(0).event, kPodEvicted);
    return Step(requests.at(0));
  }

  JobWorld w_;
  Time now_ = kT0;
};

TEST_F(LifecycleCtrTest, EvictionRestartThenCompletion) {
  StartToRunning();

  Plan plan = Evict("ctr-volcano-trainer-0");
  EXPECT_EQ(plan.action, kRestartJob);
  EXPECT_EQ(plan.status.state.phase, kRestarting);
  EXPECT_EQ(plan.status.version, 1);
  EXPECT_EQ(plan.status.retry_count, 1);
  EXPECT_EQ(plan.pod_group_op, PgOp::kDelete);
  EXPECT_EQ(Sorted(KilledNames(plan)),
            Names({"ctr-volcano-pserver-0", "ctr-volcano-pserver-1", "ctr-volcano-trainer-1"}));
  EXPECT_EQ(plan.status.terminating, 4);

  // Deletions still in flight: stay Restarting.
  EXPECT_EQ(Step().status.state.phase, kRestarting);
  w_.FinishDeletions();
  plan = Step();
  EXPECT_EQ(plan.status.state.phase, kPending);
  EXPECT_THAT(plan.create_pods, IsEmpty());

  // Re-gang at version 1.
  StartToRunning();
  EXPECT_EQ(w_.job.status.version, 1);

  // The first trainer succeeds: the task is not done yet.
  std::vector<Request> requests =
      Change("ctr-volcano-trainer-0", [](Pod& p) { p.status.phase = "Succeeded"; });
  EXPECT_EQ(requests, std::vector<Request>{Request{}});
  plan = Step(requests[0]);
  EXPECT_EQ(plan.status.state.phase, kRunning);
  EXPECT_EQ(plan.status.succeeded, 1);

  // The second: TaskCompleted -> CompleteJob (trainer's own policy).
  requests = Change("ctr-volcano-trainer-1", [](Pod& p) { p.status.phase = "Succeeded"; });
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].event, kTaskCompleted);
  EXPECT_EQ(requests[0].pod_version, 1);
  plan = Step(requests[0]);
  EXPECT_EQ(plan.action, kCompleteJob);
  EXPECT_EQ(plan.status.state.phase, kCompleting);
  EXPECT_EQ(Sorted(KilledNames(plan)), Names({"ctr-volcano-pserver-0", "ctr-volcano-pserver-1"}));
  EXPECT_EQ(plan.status.version, 2);
  EXPECT_EQ(plan.pod_group_op, PgOp::kDelete);

  w_.FinishDeletions();
  plan = Step();
  EXPECT_EQ(plan.status.state.phase, kCompleted);
  EXPECT_EQ(plan.status.succeeded, 2);
  EXPECT_EQ(plan.status.retry_count, 1);
  EXPECT_EQ(
      ConditionPhases(plan.status),
      (std::vector<std::string>{"Restarting", "Pending", "Running", "Completing", "Completed"}));
  EXPECT_THAT(KilledNames(plan), IsEmpty());
  EXPECT_EQ(plan.pod_group_op, PgOp::kNone);

  // Finished: a late event changes nothing.
  plan = Step(From(kPodEvicted, "trainer", 0, 2));
  EXPECT_EQ(plan.action, kSync);
  EXPECT_EQ(plan.status.state.phase, kCompleted);
}

TEST_F(LifecycleCtrTest, MaxRetryExhaustedFails) {
  ASSERT_EQ(w_.job.spec.max_retry, 3);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    StartToRunning();
    Plan plan = Evict("ctr-volcano-pserver-1");
    EXPECT_EQ(plan.status.state.phase, kRestarting) << attempt;
    EXPECT_EQ(plan.status.retry_count, attempt);
    EXPECT_EQ(plan.status.version, attempt);
    w_.FinishDeletions();
    EXPECT_EQ(Step().status.state.phase, kPending) << attempt;
  }
  StartToRunning();
  // A finished trainer is kept on the last retry.
  std::vector<Request> requests =
      Change("ctr-volcano-trainer-0", [](Pod& p) { p.status.phase = "Succeeded"; });
  Step(requests.at(0));
  Plan plan = Evict("ctr-volcano-pserver-1");
  EXPECT_EQ(plan.action, kRestartJob);
  EXPECT_EQ(plan.status.retry_count, 3);
  EXPECT_EQ(plan.status.state.phase, kFailed);
  EXPECT_EQ(plan.status.state.reason, "MaxRetryExceeded");
  EXPECT_EQ(Sorted(KilledNames(plan)), Names({"ctr-volcano-pserver-0", "ctr-volcano-trainer-1"}));
  EXPECT_EQ(plan.events.back().reason, "JobFailed");

  // Failed stays Failed; nothing more is created.
  w_.FinishDeletions();
  plan = Step();
  EXPECT_EQ(plan.status.state.phase, kFailed);
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_THAT(KilledNames(plan), IsEmpty());
}

// ===========================================================================
// Status writes the controller may hold back (StatusWriteOf), and what a
// held-back status costs across a restart of the reconciler.

TEST(LifecycleStatusWriteTest, Table) {
  const Job running = At(TwoTaskJob(), kRunning);
  const Job unwritten = TwoTaskJob();  // a new Job: no status written yet
  struct Case {
    std::string name;
    const Job* job;
    std::function<void(Plan&)> change;  // from a plan equal to the Job's status
    StatusWrite want;
  };
  const std::vector<Case> cases = {
      {"nothing changed", &running, [](Plan&) {}, StatusWrite::kNone},
      {"counters only", &running, [](Plan& p) { ++p.status.running; }, StatusWrite::kMayWait},
      {"phase of a started job", &running,
       [](Plan& p) { p.status.state.phase = std::string(kCompleted); }, StatusWrite::kNow},
      {"a new job's first Pending", &unwritten,
       [](Plan& p) { p.status.state.phase = std::string(kPending); }, StatusWrite::kMayWait},
      {"a new job's first Running", &unwritten,
       [](Plan& p) { p.status.state.phase = std::string(kRunning); }, StatusWrite::kMayWait},
      {"a new job's first status records plugin objects", &unwritten,
       [](Plan& p) {
         p.status.state.phase = std::string(kPending);
         p.status.controlled_resources["plugin-svc"] = "svc";
         p.ensure_job_objects = true;
       },
       StatusWrite::kNow},
      // The action's kills and Event happen at once; its phase and version
      // are recorded in the status only (issue 19).
      {"an action on a new job", &unwritten,
       [](Plan& p) {
         p.action = std::string(kCompleteJob);
         p.status.state.phase = std::string(kCompleting);
         p.status.version = 1;
       },
       StatusWrite::kNow},
      {"an action changing the counters only", &running,
       [](Plan& p) {
         p.action = std::string(kRestartPod);
         ++p.status.terminating;
       },
       StatusWrite::kNow},
  };
  for (const Case& c : cases) {
    Plan plan{.action = std::string(kSync), .status = c.job->status};
    c.change(plan);
    EXPECT_EQ(StatusWriteOf(*c.job, plan), c.want) << c.name;
  }
}

// Where the reconciler stood at its restart.
struct RestartCase {
  std::string_view name;
  std::string_view written_phase;  // status.state.phase at the restart
  bool plain_sync_first;           // a worker took the Job's own sync alone
};
constexpr RestartCase kRestartCases[] = {
    // The first status (Pending, then Running) was still held back: these
    // two failed before the fix.
    {"nothing written", "", false},
    {"nothing written, plain sync first", "", true},
    // Pending (or Running) written: these worked already.
    {"Pending written", "Pending", false},
    {"Pending written, plain sync first", "Pending", true},
    {"Running written", "Running", false},
};

// JobController::Sync: a pass per request that runs a policy, then one
// plain sync. A status StatusWriteOf lets wait is not written until the
// coalescing window has passed (right after a restart it has not: no
// write yet, the first one held back waits kStatusCoalesce). Each pass is a
// second after the one before; its plan goes to `plans`.
void SyncPass(JobWorld& w, Time& now, std::vector<Request> requests, bool window_passed,
              std::vector<Plan>* plans) {
  std::erase_if(requests, [&](const Request& r) {
    return ResolveAction(w.job, r).action == kSync && !r.timeout_elapsed;
  });
  requests.push_back(Request{});
  for (const Request& r : requests) {
    now = now + seconds(1);
    Plan plan = w.Reconcile(r, now);
    const JobStatus written = w.job.status;
    const bool held = StatusWriteOf(w.job, plan) == StatusWrite::kMayWait && !window_passed;
    w.Apply(plan, now);
    if (held) w.job.status = written;
    plans->push_back(std::move(plan));
  }
}

// First sight: the pods were listed before the Job; each raises what it
// went through (PodChangeRequests from nothing).
std::vector<Request> FirstSightRequests(const JobWorld& w) {
  std::vector<Request> seen;
  for (const Pod& pod : w.pods) {
    std::string task, t;
    int index = 0;
    PodTaskAndIndex(pod, &task, &index);
    std::vector<const Pod*> task_pods;
    for (const Pod& p : w.pods) {
      if (PodTaskAndIndex(p, &t, &index) && t == task) task_pods.push_back(&p);
    }
    for (Request& r : PodChangeRequests(w.job, nullptr, &pod, [&] { return task_pods; })) {
      seen.push_back(std::move(r));
    }
  }
  return seen;
}

// Issue 19: the reconciler restarts after the Job's pods ran, before it wrote
// the Job's phase Running, and the driver task succeeded meanwhile. The
// Job's first sight raises TaskCompleted (controller.cc on_job_added) and
// its CompleteJob must take the Job from Pending to Completing, then
// Completed once the other pods are gone, as in Volcano
// (pkg/controllers/job/state/pending.go: CompleteJobAction -> Completing;
// state/completing.go: Completed when no pod is alive).
TEST(LifecycleRestartTest, TaskCompletedWhileDownCompletesAPendingJob) {
  for (const RestartCase& c : kRestartCases) {
    SCOPED_TRACE(c.name);
    const std::string driver_policy =
        R"("policies":[{"event":"TaskCompleted","action":"CompleteJob"}],)";
    Job job = JobOf(R"("minAvailable":2,)",
                    {TaskJson("driver", 1, "1", driver_policy), TaskJson("helper", 1, "1")});
    if (!c.written_phase.empty()) job = At(job, c.written_phase);
    JobWorld w = World(job, "SR", kPodGroupRunning);  // driver Succeeded, helper Running
    Time now = kNow;

    std::vector<Plan> plans;
    auto sync = [&](std::vector<Request> requests, bool window_passed) {
      SyncPass(w, now, std::move(requests), window_passed, &plans);
    };

    std::vector<Request> seen = FirstSightRequests(w);
    ASSERT_EQ(seen.front().event, kTaskCompleted);
    if (c.plain_sync_first) sync({}, /*window_passed=*/false);
    sync(seen, /*window_passed=*/false);

    auto completing = std::find_if(plans.begin(), plans.end(),
                                   [](const Plan& p) { return p.action == kCompleteJob; });
    ASSERT_NE(completing, plans.end());
    EXPECT_EQ(completing->status.state.phase, kCompleting);
    EXPECT_EQ(KilledNames(*completing), Names({"j-helper-0"}));
    EXPECT_EQ(completing->pod_group_op, PgOp::kDelete);
    // Written at once, and the plain sync after it neither undoes it nor
    // brings the PodGroup back.
    EXPECT_EQ(w.job.status.state.phase, kCompleting);
    EXPECT_EQ(w.job.status.version, 1);
    EXPECT_FALSE(w.group.has_value());

    // The window passes while the helper is still being deleted.
    sync({}, /*window_passed=*/true);
    EXPECT_EQ(w.job.status.state.phase, kCompleting);
    w.FinishDeletions();
    sync({}, /*window_passed=*/true);
    EXPECT_EQ(w.job.status.state.phase, kCompleted);
    EXPECT_EQ(w.job.status.succeeded, 1);
    EXPECT_THAT(plans.back().create_pods, IsEmpty());
    EXPECT_FALSE(w.group.has_value());
  }
}

}  // namespace
}  // namespace muster::reconciler
