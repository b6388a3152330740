#include "reconciler/lifecycle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/testing/builders.h"
#include "reconciler/naming.h"
#include "reconciler/testing/job_fixtures.h"

namespace muster::reconciler {

// Readable failures (found by argument-dependent lookup; internal linkage so
// no other test binary's printer can clash).
static void PrintTo(const Request& r, std::ostream* os) {
  *os << "{event=" << r.event << " task=" << r.task << " pod=" << r.pod << " uid=" << r.pod_uid
      << " version=" << r.pod_version
      << " exit=" << (r.exit_code ? std::to_string(*r.exit_code) : "-") << " action=" << r.action
      << " elapsed=" << r.timeout_elapsed << "}";
}
static void PrintTo(const PodSlot& s, std::ostream* os) {
  *os << "{task=" << s.task << " index=" << s.index << "}";
}
static void PrintTo(const JobEventRecord& e, std::ostream* os) {
  *os << "{" << e.type << " " << e.reason << ": " << e.message << "}";
}
static void PrintTo(StatusWrite w, std::ostream* os) {
  constexpr const char* kNames[] = {"kNone", "kNow", "kMayWait"};
  *os << kNames[static_cast<int>(w)];
}
static void PrintTo(Plan::PodGroupOp op, std::ostream* os) {
  constexpr const char* kNames[] = {"kNone", "kCreate", "kUpdate", "kDelete"};
  *os << kNames[static_cast<int>(op)];
}

namespace {

using fixtures::JobWorld;
using fixtures::MakeJob;
using fixtures::MakeJobPod;
using fixtures::MakeJobPodGroup;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;
using PgOp = Plan::PodGroupOp;

constexpr Time kT0 = Time::FromUnixSeconds(1'750'000'000);  // 2025-06-15T15:06:40Z
constexpr Time kNow = kT0 + minutes(30);

// --- Jobs ------------------------------------------------------------------

// One task of a job: `replicas` pods of one container requesting `cpu`;
// `extra` adds fields (a JSON fragment ending in a comma).
std::string TaskJson(std::string_view name, int replicas, std::string_view cpu,
                     std::string_view extra = "") {
  return R"({"name":")" + std::string(name) + R"(","replicas":)" + std::to_string(replicas) + "," +
         std::string(extra) +
         R"("template":{"spec":{"containers":[{"name":"c","image":"img","resources":{"requests":{"cpu":")" +
         std::string(cpu) + R"("}}}]}}})";
}

// Job "j" (uid "u1", namespace "ns", created at kT0, queue "research")
// with `tasks`; `spec` adds fields to the spec (a fragment ending in a
// comma). Defaulted (maxRetry 3, minAvailables).
Job JobOf(std::string_view spec, const std::vector<std::string>& tasks) {
  std::string list;
  for (const std::string& t : tasks) list += (list.empty() ? "" : ",") + t;
  return MakeJob(R"({"metadata":{"name":"j","namespace":"ns","uid":"u1",)"
                 R"("creationTimestamp":"2025-06-15T15:06:40Z",)"
                 R"("labels":{"team":"a"},"annotations":{"note":"x"}},)"
                 R"("spec":{)" +
                 std::string(spec) + R"("queue":"research","tasks":[)" + list + "]}}");
}

// The job most tests use: tasks ps (2 x 1 CPU) and worker (2 x 2 CPU),
// minAvailable 4, maxRetry 3.
Job TwoTaskJob(std::string_view spec = "", std::string_view ps = "", std::string_view worker = "") {
  return JobOf(spec, {TaskJson("ps", 2, "1", ps), TaskJson("worker", 2, "2", worker)});
}

Job At(Job job, std::string_view phase, int32_t version = 0, int32_t retry_count = 0) {
  job.status.state.phase = std::string(phase);
  job.status.state.last_transition_time = kT0;
  job.status.version = version;
  job.status.retry_count = retry_count;
  job.status.min_available = job.spec.min_available;
  return job;
}

LifecyclePolicy On(std::string event, std::string action,
                   std::optional<Duration> timeout = std::nullopt) {
  return LifecyclePolicy{
      .event = std::move(event), .action = std::move(action), .timeout = timeout};
}
LifecyclePolicy OnEvents(std::vector<std::string> events, std::string action) {
  return LifecyclePolicy{.events = std::move(events), .action = std::move(action)};
}
LifecyclePolicy OnExit(int32_t code, std::string action) {
  return LifecyclePolicy{.exit_code = code, .action = std::move(action)};
}

TaskSpec& Task(Job& job, std::string_view name) {
  for (TaskSpec& task : job.spec.tasks) {
    if (task.name == name) return task;
  }
  ADD_FAILURE() << "no task " << name;
  return job.spec.tasks.front();
}

// --- Requests --------------------------------------------------------------

// `event` raised by pod j-<task>-<index> (uid as MakeJobPod gives it).
Request From(std::string_view event, std::string_view task, int index, int32_t version = 0) {
  std::string pod = PodName("j", task, index);
  return Request{.event = std::string(event),
                 .task = std::string(task),
                 .pod = pod,
                 .pod_uid = "uid-" + pod,
                 .pod_version = version};
}

// An explicit action (a Command) aimed at pod j-<task>-<index> (the target
// of RestartTask / RestartPod).
Request Command(std::string_view action, std::string_view task = "worker", int index = 0) {
  Request r = From("", task, index);
  r.action = std::string(action);
  return r;
}

// --- Worlds ----------------------------------------------------------------

// A pod of `job` from a one-letter code: P Pending, R Running and ready,
// N Running not ready, S Succeeded, F Failed, U Unknown, D Running with a
// deletionTimestamp, O Running marked out-of-sync; '-' is no pod.
std::optional<Pod> CodedPod(const Job& job, std::string_view task, int index, char code) {
  fixtures::JobPodBuilder pod = MakeJobPod(job, task, index).CreatedAt(kT0);
  switch (code) {
    case '-':
      return std::nullopt;
    case 'P':
      break;
    case 'R':
      pod.Ready();
      break;
    case 'N':
      pod.Ready(false);
      break;
    case 'S':
      pod.Phase("Succeeded");
      break;
    case 'F':
      pod.ExitCode(1);
      break;
    case 'U':
      pod.Phase("Unknown");
      break;
    case 'D':
      pod.Ready().Deleting(kT0);
      break;
    case 'O':
      pod.Ready().OutOfSync();
      break;
    default:
      ADD_FAILURE() << "bad pod code " << code;
  }
  return pod.Build();
}

// `job` with pods coded per task in order (ps-0 ps-1 worker-0 worker-1 for
// the two-task job) and a PodGroup at `group_phase` (nullopt = absent).
JobWorld World(Job job, std::string_view pods,
               std::optional<std::string_view> group_phase = std::nullopt) {
  JobWorld w{.job = std::move(job)};
  size_t at = 0;
  for (const TaskSpec& task : w.job.spec.tasks) {
    for (int i = 0; i < task.replicas && at < pods.size(); ++i, ++at) {
      if (std::optional<Pod> pod = CodedPod(w.job, task.name, i, pods[at])) {
        w.pods.push_back(*pod);
      }
    }
  }
  EXPECT_EQ(at, pods.size()) << "more pod codes than replicas: " << pods;
  if (group_phase.has_value()) w.group = MakeJobPodGroup(w.job, *group_phase);
  return w;
}

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Names(std::initializer_list<const char*> pods) {
  std::vector<std::string> out;
  for (const char* p : pods) out.push_back(p);
  return Sorted(out);
}

std::vector<std::string> ConditionPhases(const JobStatus& status) {
  std::vector<std::string> out;
  for (const JobCondition& c : status.conditions) out.push_back(c.status);
  return out;
}

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

TEST(LifecyclePodIdentityTest, TaskIndexAndVersion) {
  struct Case {
    std::string name;
    Pod pod;
    bool has_task;
    std::string task;
    int index;
    int32_t version;
  };
  const Job job = At(TwoTaskJob(), kRunning, 3);
  const std::vector<Case> cases = {
      {"annotations", MakeJobPod(job, "worker", 1), true, "worker", 1, 3},
      {"labels only, index from the label",
       test::MakePod("x").Label(kTaskSpecKey, "ps").Label(kTaskIndexKey, "7"), true, "ps", 7, 0},
      {"index from the name's last segment",
       test::MakePod("j-ps-12").Annotation(kTaskSpecKey, "ps"), true, "ps", 12, 0},
      {"annotation wins over label",
       test::MakePod("j-ps-0").Annotation(kTaskSpecKey, "ps").Label(kTaskSpecKey, "worker"), true,
       "ps", 0, 0},
      {"no task", test::MakePod("j-ps-0"), false, "", 0, 0},
  };
  for (const Case& c : cases) {
    std::string task;
    int index = -1;
    EXPECT_EQ(PodTaskAndIndex(c.pod, &task, &index), c.has_task) << c.name;
    if (c.has_task) {
      EXPECT_EQ(task, c.task) << c.name;
      EXPECT_EQ(index, c.index) << c.name;
    }
    EXPECT_EQ(PodVersion(c.pod), c.version) << c.name;
  }
}

// ===========================================================================
// Policy resolution (§1.9).

TEST(LifecycleResolveActionTest, Table) {
  struct Case {
    std::string name;
    std::vector<LifecyclePolicy> job_policies;
    std::vector<LifecyclePolicy> worker_policies;
    int32_t status_version;
    Request request;
    std::string want_action;
    std::optional<Duration> want_timeout;
  };
  Request failed_137 = From(kPodFailed, "worker", 0);
  failed_137.exit_code = 137;
  Request failed_1 = From(kPodFailed, "ps", 0);
  failed_1.exit_code = 1;
  Request explicit_abort = From(kPodFailed, "worker", 0);
  explicit_abort.action = std::string(kAbortJob);
  Request explicit_stale = From(kPodEvicted, "worker", 0, /*version=*/0);
  explicit_stale.action = std::string(kResumeJob);

  const std::vector<Case> cases = {
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
  };
  for (const Case& c : cases) {
    Job job = At(TwoTaskJob(), kRunning, c.status_version);
    job.spec.policies = c.job_policies;
    Task(job, "worker").policies = c.worker_policies;
    ResolvedAction got = ResolveAction(job, c.request);
    EXPECT_EQ(got.action, c.want_action) << c.name;
    EXPECT_EQ(got.timeout, c.want_timeout) << c.name;
  }
}

// ===========================================================================
// State x action -> next phase, kills, retryCount, version, PodGroup (§1.8,
// §1.10). Every request is an explicit action aimed at worker-0 (or a plain
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
    EXPECT_EQ(Sorted(plan.kill_pods), Sorted(c.killed)) << what;
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
  EXPECT_THAT(plan.kill_pods, ElementsAre("j-ps-0"));
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
// Running + SyncJob (§1.10, state/running.go).

TEST(LifecycleRunningSyncTest, Table) {
  struct Case {
    std::string name;
    std::string spec, ps, worker;  // fragments (see TwoTaskJob)
    std::string pods;
    std::string next;
  };
  const std::string kMin3 = R"("minAvailable":3,)";
  const std::string kPsMin1 = R"("minAvailable":1,)";
  const std::vector<Case> cases = {
      {"all running", "", "", "", "RRRR", "Running"},
      {"minSuccess reached", R"("minSuccess":2,)", "", "", "SSRR", "Completed"},
      {"minSuccess not reached", R"("minSuccess":3,)", "", "", "SSRR", "Running"},
      {"all succeeded", "", "", "", "SSSS", "Completed"},
      {"all finished, a task below its minAvailable", "", "", "", "SSSF", "Failed"},
      {"all finished, every task at its minAvailable", kMin3, kPsMin1, "", "SFSS", "Completed"},
      {"all finished, worker below its minAvailable", kMin3, kPsMin1, "", "SSSF", "Failed"},
      // job.minAvailable (2) < Σ task minAvailable (4): no per-task rule.
      {"task rule skipped below the tasks' sum", R"("minAvailable":2,)", "", "", "SSFF",
       "Completed"},
      {"minSuccess decides once all finished", R"("minAvailable":2,"minSuccess":3,)", "", "",
       "SSFF", "Failed"},
      {"fewer succeeded than minAvailable", R"("minAvailable":2,)", "", "", "SFFF", "Failed"},
      {"pending above replicas - minAvailable", "", "", "", "PRRR", "Pending"},
      {"pending at replicas - minAvailable", kMin3, "", "", "PRRR", "Running"},
      {"pending above replicas - minAvailable (2)", R"("minAvailable":2,)", "", "", "PPPR",
       "Pending"},
      {"finished and running mixed", "", "", "", "SFRR", "Running"},
  };
  for (const Case& c : cases) {
    JobWorld w = World(At(TwoTaskJob(c.spec, c.ps, c.worker), kRunning), c.pods, kPodGroupRunning);
    Plan plan = w.Reconcile(Request{}, kNow);
    EXPECT_EQ(plan.status.state.phase, c.next) << c.name;
    EXPECT_EQ(plan.action, kSync) << c.name;
    EXPECT_THAT(plan.kill_pods, IsEmpty()) << c.name;
  }
}

TEST(LifecycleRunningSyncTest, ScaledToZeroKeepsThePhase) {
  Job job = At(TwoTaskJob(R"("minAvailable":0,)", R"("minAvailable":0,)", R"("minAvailable":0,)"),
               kRunning);
  for (TaskSpec& task : job.spec.tasks) task.replicas = 0;
  job.spec.min_available = 0;
  JobWorld w = World(job, "", kPodGroupRunning);
  EXPECT_EQ(w.Reconcile(Request{}, kNow).status.state.phase, kRunning);
}

// ===========================================================================
// The enqueue gate and the PodGroup (§1.10 last rule, §2.3).

TEST(LifecycleEnqueueTest, NewJobCreatesThePodGroupButNoPods) {
  JobWorld w = World(TwoTaskJob(), "");
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kPending);
  EXPECT_EQ(plan.pod_group_op, PgOp::kCreate);
  EXPECT_EQ(plan.pod_group, DesiredPodGroup(w.job));
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_THAT(plan.kill_pods, IsEmpty());
}

TEST(LifecycleEnqueueTest, PodsOnlyOnceThePodGroupLeftPending) {
  const std::vector<PodSlot> all = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  struct Case {
    std::optional<std::string> group_phase;
    std::vector<PodSlot> want;
    PgOp pg_op;
  };
  const std::vector<Case> cases = {
      {std::nullopt, {}, PgOp::kCreate},
      {"", {}, PgOp::kNone},  // created, not yet seen by the gang controller
      {"Pending", {}, PgOp::kNone},
      {"Inqueue", all, PgOp::kNone},
      {"Running", all, PgOp::kNone},
      {"Unknown", all, PgOp::kNone},
  };
  for (const Case& c : cases) {
    for (std::string_view phase : {kPending, kRunning}) {
      std::optional<std::string_view> group;
      if (c.group_phase) group = *c.group_phase;
      JobWorld w = World(At(TwoTaskJob(), phase), "", group);
      Plan plan = w.Reconcile(Request{}, kNow);
      const std::string what = std::string(phase) + " with PodGroup " + c.group_phase.value_or("-");
      EXPECT_EQ(plan.create_pods, c.want) << what;
      EXPECT_EQ(plan.pod_group_op, c.pg_op) << what;
    }
  }
}

TEST(LifecycleEnqueueTest, ChangedPodGroupIsUpdated) {
  Job job = At(TwoTaskJob(), kRunning);
  JobWorld w = World(job, "RRRR", kPodGroupRunning);
  w.group->spec.min_member = 2;  // the job's minAvailable was edited since
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.pod_group_op, PgOp::kUpdate);
  EXPECT_EQ(plan.pod_group.spec, DesiredPodGroup(job).spec);
}

TEST(LifecycleEnqueueTest, PluginObjectsAreEnsuredOnce) {
  Job job = At(TwoTaskJob(R"("plugins":{"svc":[],"env":[]},)"), kPending);
  JobWorld w = World(job, "", kPodGroupPending);
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_TRUE(plan.ensure_job_objects);
  EXPECT_EQ(plan.status.controlled_resources,
            (std::map<std::string, std::string>{{"plugin-env", "env"}, {"plugin-svc", "svc"}}));
  w.job.status = plan.status;
  EXPECT_FALSE(w.Reconcile(Request{}, kNow).ensure_job_objects);
}

TEST(LifecycleDesiredPodGroupTest, Fields) {
  Job job = TwoTaskJob(R"("priorityClassName":"high",)"
                       R"("networkTopology":{"mode":"soft","highestTierAllowed":2},)",
                       R"("minAvailable":1,)");
  PodGroup pg = DesiredPodGroup(job);
  EXPECT_EQ(pg.meta.name, "j-u1");
  EXPECT_EQ(pg.meta.namespace_, "ns");
  EXPECT_EQ(pg.meta.labels, job.meta.labels);
  EXPECT_EQ(pg.meta.annotations, job.meta.annotations);
  EXPECT_THAT(pg.meta.owner_references, ElementsAre(OwnerReference{"batch.volcano.sh/v1alpha1",
                                                                   "Job", "j", "u1", true, true}));
  EXPECT_EQ(pg.spec.min_member, 3);  // defaulted: 1 + 2
  EXPECT_EQ(pg.spec.min_task_member, (std::map<std::string, int32_t>{{"ps", 1}, {"worker", 2}}));
  EXPECT_EQ(pg.spec.queue, "research");
  EXPECT_EQ(pg.spec.priority_class_name, "high");
  ASSERT_TRUE(pg.spec.network_topology.has_value());
  EXPECT_EQ(pg.spec.network_topology->mode, "soft");
  EXPECT_EQ(pg.spec.network_topology->highest_tier_allowed, 2);
  EXPECT_EQ(pg.status, PodGroupStatus{});
}

// ps pods request 1 CPU, worker pods 2 CPUs.
TEST(LifecycleDesiredPodGroupTest, MinResources) {
  struct Case {
    std::string name;
    std::string spec, ps, worker;
    std::string cpu;
  };
  const std::vector<Case> cases = {
      {"every task's minAvailable (= replicas)", "", "", "", "6"},
      {"job minAvailable = Σ task minAvailable", R"("minAvailable":2,)", R"("minAvailable":1,)",
       R"("minAvailable":1,)", "3"},
      // Then the tasks' extra replicas, in task order.
      {"one extra replica", R"("minAvailable":3,)", R"("minAvailable":1,)", R"("minAvailable":1,)",
       "4"},
      {"two extra replicas", R"("minAvailable":4,)", R"("minAvailable":1,)", R"("minAvailable":1,)",
       "6"},
      // job minAvailable < Σ task minAvailable: the first pods in task order.
      {"first pod", R"("minAvailable":1,)", "", "", "1"},
      {"first three pods", R"("minAvailable":3,)", "", "", "4"},
  };
  for (const Case& c : cases) {
    PodGroup pg = DesiredPodGroup(TwoTaskJob(c.spec, c.ps, c.worker));
    EXPECT_EQ(pg.spec.min_resources, test::Res({{"cpu", c.cpu}})) << c.name;
  }
}

TEST(LifecycleDesiredPodGroupTest, MinResourcesBelowTheTasksSumWalksReplicas) {
  // §2.3: job.minAvailable (2) < Σ task.minAvailable (1 + 2): the first 2
  // pods walking the tasks, each task contributing up to its *replicas*:
  // ps-0 and ps-1, 2 CPUs (Volcano's CalcFirstCountResources).
  PodGroup pg = DesiredPodGroup(TwoTaskJob(R"("minAvailable":2,)", R"("minAvailable":1,)"));
  EXPECT_EQ(pg.spec.min_resources, test::Res({{"cpu", "2"}}));
}

// ===========================================================================
// SyncJob pod sync (§2.2).

TEST(LifecycleSyncPodsTest, MissingReplicasAreCreated) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "R-R-", kPodGroupRunning);
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.create_pods, (std::vector<PodSlot>{{0, 1}, {1, 1}}));
  EXPECT_THAT(plan.kill_pods, IsEmpty());
}

TEST(LifecycleSyncPodsTest, SurplusIndexIsKilled) {
  Job job = At(TwoTaskJob(), kRunning);
  JobWorld w = World(job, "RRRR", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "worker", 2).Ready());
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods, ElementsAre("j-worker-2"));
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_EQ(plan.status.terminating, 1);
  EXPECT_EQ(plan.status.running, 4);
}

TEST(LifecycleSyncPodsTest, ScaledDownTaskLosesItsHighIndex) {
  Job job = At(TwoTaskJob(R"("minAvailable":3,)", "", R"("minAvailable":1,)"), kRunning);
  Task(job, "worker").replicas = 1;
  JobWorld w = World(job, "RRR", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "worker", 1).Ready());
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods, ElementsAre("j-worker-1"));
}

TEST(LifecycleSyncPodsTest, OutOfSyncPodIsKilledNotRecreated) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "RROR", kPodGroupRunning);
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods, ElementsAre("j-worker-0"));
  EXPECT_THAT(plan.create_pods, IsEmpty());
}

TEST(LifecycleSyncPodsTest, LivePodsOfAnOlderVersionAreKilled) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/1);
  JobWorld w = World(job, "", kPodGroupRunning);
  w.pods = {MakeJobPod(job, "ps", 0).Ready(),                            // current
            MakeJobPod(job, "ps", 1).Ready().Version(0),                 // stale, alive
            MakeJobPod(job, "worker", 0).Phase("Succeeded").Version(0),  // stale, finished
            MakeJobPod(job, "worker", 1).Version(0)};                    // stale, pending
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(Sorted(plan.kill_pods), Names({"j-ps-1", "j-worker-1"}));
  EXPECT_THAT(plan.create_pods, IsEmpty());
}

TEST(LifecycleSyncPodsTest, PodBeingDeletedIsNotKilledAgain) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "RRDR", kPodGroupRunning);
  w.pods[2].meta.annotations[std::string(kOutOfSyncKey)] = "true";
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods, IsEmpty());
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_EQ(plan.status.terminating, 1);
}

TEST(LifecycleSyncPodsTest, DependsOn) {
  struct Case {
    std::string name;
    std::string ps;  // fragment of task ps
    std::string pods;
    std::vector<PodSlot> want;
  };
  const std::vector<Case> cases = {
      {"dependency missing: only ps", "", "----", {{0, 0}, {0, 1}}},
      {"dependency pending", "", "PP--", {}},
      {"dependency running, not ready", "", "NN--", {}},
      {"one of two ready", "", "RN--", {}},
      {"dependency ready", "", "RR--", {{1, 0}, {1, 1}}},
      {"ps minAvailable 1, one ready", R"("minAvailable":1,)", "R---", {{0, 1}, {1, 0}, {1, 1}}},
      {"ps minAvailable 1, none ready", R"("minAvailable":1,)", "P---", {{0, 1}}},
  };
  for (const Case& c : cases) {
    Job job =
        At(TwoTaskJob(R"("minAvailable":3,)", c.ps, R"("dependsOn":{"name":["ps"]},)"), kPending);
    JobWorld w = World(job, c.pods, kPodGroupInqueue);
    Plan plan = w.Reconcile(Request{}, kNow);
    EXPECT_EQ(plan.create_pods, c.want) << c.name;
  }
}

TEST(LifecycleSyncPodsTest, DependsOnAnyOrAll) {
  for (std::string_view iteration : {"any", "all"}) {
    Job job = At(JobOf("", {TaskJson("a", 1, "1"), TaskJson("b", 1, "1"),
                            TaskJson("c", 1, "1",
                                     R"("dependsOn":{"name":["a","b"],"iteration":")" +
                                         std::string(iteration) + R"("},)")}),
                 kPending);
    JobWorld w = World(job, "RP", kPodGroupInqueue);  // a ready, b pending
    Plan plan = w.Reconcile(Request{}, kNow);
    std::vector<PodSlot> want;
    if (iteration == "any") want = {{2, 0}};
    EXPECT_EQ(plan.create_pods, want) << iteration;
  }
}

// ===========================================================================
// Versions (§1.4, §1.9).

TEST(LifecycleVersionTest, RestartJobBumpsTheVersionAndDeletesThePodGroup) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/2, /*retry_count=*/1);
  job.spec.policies = {On("PodEvicted", "RestartJob")};
  JobWorld w = World(job, "RRDR", kPodGroupRunning);  // worker-0 evicted
  Plan plan = w.Reconcile(From(kPodEvicted, "worker", 0, /*version=*/2), kNow);
  EXPECT_EQ(plan.action, kRestartJob);
  EXPECT_EQ(plan.status.version, 3);
  EXPECT_EQ(plan.status.retry_count, 2);
  EXPECT_EQ(plan.pod_group_op, PgOp::kDelete);
  EXPECT_EQ(Sorted(plan.kill_pods), Names({"j-ps-0", "j-ps-1", "j-worker-1"}));
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
    EXPECT_THAT(plan.kill_pods, IsEmpty()) << event;
    EXPECT_THAT(plan.events, IsEmpty()) << event;
  }
}

// ===========================================================================
// Status (§1.4).

TEST(LifecycleStatusTest, CountersPerPhase) {
  Job job = At(JobOf(R"("minAvailable":1,)", {TaskJson("t", 7, "1")}), kRunning);
  JobWorld w = World(job, "PRSFUD", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "t", 6).Phase(""));  // no phase yet: Pending
  w.pods.push_back(MakeJobPod(job, "t", 7).Ready());    // surplus: killed now
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods, ElementsAre("j-t-7"));
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
  EXPECT_THAT(plan.kill_pods, IsEmpty());
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
// Timeouts (§1.3, §1.9).

TEST(LifecycleTimeoutTest, MatchingPolicyWithTimeoutIsDelayed) {
  struct Case {
    std::string name;
    LifecyclePolicy policy;
    Request request;
    Time want_due;
  };
  const Time created = kT0;  // CodedPod's creation time
  const std::vector<Case> cases = {
      {"PodPending: from the pod's creation", On("PodPending", "RestartJob", minutes(10)),
       From(kPodPendingEvent, "worker", 0), created + minutes(10)},
      {"PodFailed: from now", On("PodFailed", "RestartJob", minutes(5)),
       From(kPodFailed, "worker", 0), kNow + minutes(5)},
      {"PodPending of a pod not seen yet: from now", On("PodPending", "AbortJob", minutes(1)),
       From(kPodPendingEvent, "worker", 7), kNow + minutes(1)},
  };
  for (const Case& c : cases) {
    Job job = At(TwoTaskJob(), kRunning);
    job.spec.policies = {c.policy};
    JobWorld w = World(job, "RRPR", kPodGroupRunning);
    Plan plan = w.Reconcile(c.request, kNow);
    EXPECT_EQ(plan.action, kSync) << c.name;
    EXPECT_THAT(plan.kill_pods, IsEmpty()) << c.name;
    EXPECT_EQ(plan.status.retry_count, 0) << c.name;
    ASSERT_TRUE(plan.delayed.has_value()) << c.name;
    Request want = c.request;
    want.timeout_elapsed = true;
    EXPECT_EQ(*plan.delayed, want) << c.name;
    EXPECT_EQ(plan.delayed_due, c.want_due) << c.name;
  }
}

TEST(LifecycleTimeoutTest, ElapsedTimeoutRunsTheActionOnlyIfTheEventStillHolds) {
  struct Case {
    std::string name;
    std::string event;
    std::function<void(Pod&)> change;  // to worker-0 (Pending) before the timeout fires
    std::string want;
  };
  const std::vector<Case> cases = {
      {"still pending", "PodPending", [](Pod&) {}, "RestartJob"},
      {"started running", "PodPending", [](Pod& p) { p.status.phase = "Running"; }, "SyncJob"},
      {"replaced by a new pod", "PodPending", [](Pod& p) { p.meta.uid = "other"; }, "SyncJob"},
      {"being deleted", "PodPending", [](Pod& p) { p.meta.deletion_timestamp = kT0; }, "SyncJob"},
      {"failed and still failed", "PodFailed", [](Pod& p) { p.status.phase = "Failed"; },
       "RestartJob"},
      {"failed, back to running", "PodFailed", [](Pod& p) { p.status.phase = "Running"; },
       "SyncJob"},
      {"evicted and gone", "PodEvicted", [](Pod& p) { p.meta.name = "elsewhere"; }, "RestartJob"},
  };
  for (const Case& c : cases) {
    Job job = At(TwoTaskJob(), kRunning);
    job.spec.policies = {On(c.event, "RestartJob", minutes(10))};
    JobWorld w = World(job, "RRPR", kPodGroupRunning);
    c.change(w.pods[2]);
    Request request = From(c.event, "worker", 0);
    request.timeout_elapsed = true;
    Plan plan = w.Reconcile(request, kNow);
    EXPECT_EQ(plan.action, c.want) << c.name;
    EXPECT_FALSE(plan.delayed.has_value()) << c.name;
    EXPECT_EQ(plan.status.retry_count, c.want == "RestartJob" ? 1 : 0) << c.name;
  }
}

TEST(LifecycleTimeoutTest, PendingPodsScheduleARecheck) {
  Job job = At(TwoTaskJob(), kRunning);
  job.spec.policies = {On("PodPending", "RestartJob", minutes(10))};
  Task(job, "worker").policies = {On("PodPending", "RestartTask", minutes(3))};
  JobWorld w = World(job, "RPRR", kPodGroupRunning);
  w.pods[1].meta.creation_timestamp = kT0 + minutes(1);  // ps-1: due kT0 + 11m
  EXPECT_EQ(w.Reconcile(Request{}, kT0 + minutes(5)).recheck_at, kT0 + minutes(11));

  // The task's own (shorter) policy; a pod being deleted does not count.
  w = World(job, "RDPP", kPodGroupRunning);
  w.pods[1].status.phase = "Pending";
  w.pods[3].meta.creation_timestamp = kT0 - minutes(1);
  EXPECT_EQ(w.Reconcile(Request{}, kT0 + minutes(1)).recheck_at, kT0 + minutes(2));

  // No pending pod, or no PodPending policy: no recheck.
  EXPECT_EQ(World(job, "RRRR", kPodGroupRunning).Reconcile(Request{}, kNow).recheck_at,
            std::nullopt);
  job.spec.policies.clear();
  Task(job, "worker").policies.clear();
  EXPECT_EQ(World(job, "PPPP", kPodGroupRunning).Reconcile(Request{}, kNow).recheck_at,
            std::nullopt);
}

TEST(LifecycleTimeoutTest, PendingPodsOfALaterVersionScheduleARecheck) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/1, /*retry_count=*/1);
  job.spec.policies = {On("PodPending", "RestartJob", minutes(10))};
  JobWorld w = World(job, "RPRR", kPodGroupRunning);  // pods at version 1
  std::optional<Time> got = w.Reconcile(Request{}, kT0 + minutes(5)).recheck_at;
  EXPECT_EQ(got, kT0 + minutes(10));
}

// Level-based: a plain sync after a PodPending timeout has passed runs the
// policy for that pod (a restarted reconciler lost the delayed request).
TEST(LifecycleTimeoutTest, PlainSyncRunsAnOverduePodPendingPolicy) {
  Job job = At(TwoTaskJob(), kRunning);
  job.spec.policies = {On("PodPending", "RestartJob", minutes(10))};
  JobWorld w = World(job, "RPRR", kPodGroupRunning);
  Plan before_due = w.Reconcile(Request{}, kT0 + minutes(9));
  EXPECT_EQ(before_due.action, kSync);
  Plan overdue = w.Reconcile(Request{}, kT0 + minutes(10));
  EXPECT_EQ(overdue.action, kRestartJob);
  EXPECT_EQ(overdue.status.version, 1);
  EXPECT_EQ(overdue.status.retry_count, 1);
}

// ===========================================================================
// ttlSecondsAfterFinished (§1.1).

TEST(LifecycleTtlTest, Table) {
  struct Case {
    std::string name;
    std::string phase;
    std::optional<int32_t> ttl;
    Time now;
    std::optional<Time> want_recheck;
    bool want_delete;
  };
  const std::vector<Case> cases = {
      {"before", "Completed", 60, kT0 + seconds(30), kT0 + seconds(60), false},
      {"at", "Completed", 60, kT0 + seconds(60), std::nullopt, true},
      {"after", "Failed", 60, kT0 + seconds(600), std::nullopt, true},
      {"terminated", "Terminated", 0, kT0, std::nullopt, true},
      {"no ttl", "Completed", std::nullopt, kNow, std::nullopt, false},
      {"not finished", "Running", 1, kNow, std::nullopt, false},
      {"aborted is not finished", "Aborted", 1, kNow, std::nullopt, false},
  };
  for (const Case& c : cases) {
    Job job = At(TwoTaskJob(), c.phase);
    job.spec.ttl_seconds_after_finished = c.ttl;
    Plan plan = World(job, "").Reconcile(Request{}, c.now);
    EXPECT_EQ(plan.recheck_at, c.want_recheck) << c.name;
    EXPECT_EQ(plan.delete_job, c.want_delete) << c.name;
  }
}

TEST(LifecycleTtlTest, ClockStartsWhenTheJobFinishes) {
  Job job = At(TwoTaskJob(), kCompleting);
  job.spec.ttl_seconds_after_finished = 100;
  Plan plan = World(job, "SSSS").Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kCompleted);
  EXPECT_EQ(plan.recheck_at, kNow + seconds(100));
  EXPECT_FALSE(plan.delete_job);
}

// ===========================================================================
// Pod changes -> requests (§1.7).

TEST(LifecyclePodChangeTest, Table) {
  Job job = At(TwoTaskJob(), kRunning, /*version=*/2);
  Task(job, "ps").max_retry = 5;
  Task(job, "worker").max_retry = -1;
  auto pod = [&](std::string_view task, int index) { return MakeJobPod(job, task, index); };
  auto ev = [](std::string_view event, std::string_view task, int index) {
    return From(event, task, index, /*version=*/2);
  };
  Request failed_137 = ev(kPodFailed, "ps", 0);
  failed_137.exit_code = 137;
  Request failed_none = ev(kPodFailed, "ps", 0);
  Pod two_containers = pod("ps", 0).ExitCode(137);
  two_containers.status.container_statuses.insert(
      two_containers.status.container_statuses.begin(),
      ContainerStatus{.name = "first", .state = "terminated", .exit_code = 2});
  Request failed_2 = ev(kPodFailed, "ps", 0);
  failed_2.exit_code = 2;
  Pod ps0_init = pod("ps", 0).Ready().Restarts(2);
  ps0_init.status.init_container_statuses = {ContainerStatus{.name = "i", .restart_count = 1}};

  struct Case {
    std::string name;
    std::optional<Pod> before, after;
    std::vector<Pod> task_pods;  // the task's pods after the change
    std::vector<Request> want;
  };
  const std::vector<Case> cases = {
      {"added pending", std::nullopt, pod("ps", 0), {}, {ev(kPodPendingEvent, "ps", 0)}},
      {"added running", std::nullopt, pod("ps", 0).Ready(), {}, {Request{}}},
      {"pending -> running", pod("ps", 0), pod("ps", 0).Ready(), {}, {Request{}}},
      {"running -> pending",
       pod("ps", 0).Ready(),
       pod("ps", 0),
       {},
       {ev(kPodPendingEvent, "ps", 0)}},
      {"running, unchanged", pod("ps", 0).Ready(), pod("ps", 0).Ready(), {}, {Request{}}},
      {"-> failed, exit code", pod("ps", 0).Ready(), pod("ps", 0).ExitCode(137), {}, {failed_137}},
      {"-> failed, first container's exit code",
       pod("ps", 0).Ready(),
       two_containers,
       {},
       {failed_2}},
      {"-> failed, no container status",
       pod("ps", 0).Ready(),
       pod("ps", 0).Phase("Failed"),
       {},
       {failed_none}},
      {"-> succeeded, task not done",
       pod("worker", 0).Ready(),
       pod("worker", 0).Phase("Succeeded"),
       {pod("worker", 0).Phase("Succeeded"), pod("worker", 1).Ready()},
       {Request{}}},
      {"-> succeeded, task done",
       pod("worker", 0).Ready(),
       pod("worker", 0).Phase("Succeeded"),
       {pod("worker", 0).Phase("Succeeded"), pod("worker", 1).Phase("Succeeded")},
       {ev(kTaskCompleted, "worker", 0)}},
      {"deletion by someone else",
       pod("ps", 1).Ready(),
       pod("ps", 1).Ready().Deleting(kT0),
       {},
       {ev(kPodEvicted, "ps", 1)}},
      {"deleted without a deletionTimestamp seen",
       pod("ps", 1).Ready(),
       std::nullopt,
       {},
       {ev(kPodEvicted, "ps", 1)}},
      {"deleted after the deletionTimestamp",
       pod("ps", 1).Ready().Deleting(kT0),
       std::nullopt,
       {},
       {Request{}}},
      {"added while being deleted by the reconciler",
       std::nullopt,
       pod("ps", 1).Ready().OutOfSync().Deleting(kT0),
       {},
       {Request{}}},
      {"deletion by the reconciler",
       pod("ps", 1).Ready().OutOfSync(),
       pod("ps", 1).Ready().OutOfSync().Deleting(kT0),
       {},
       {Request{}}},
      {"out-of-sync pod fails",
       pod("ps", 1).Ready().OutOfSync(),
       pod("ps", 1).OutOfSync().ExitCode(1),
       {},
       {Request{}}},
      {"out-of-sync pod deleted", pod("ps", 1).OutOfSync(), std::nullopt, {}, {Request{}}},
      // Container restarts over the task's Running/Pending pods >= maxRetry
      // (ps: 5; worker: -1 = never).
      {"restarts below maxRetry",
       pod("ps", 0).Ready().Restarts(3),
       pod("ps", 0).Ready().Restarts(4),
       {pod("ps", 0).Ready().Restarts(4)},
       {Request{}}},
      {"restarts reach maxRetry",
       pod("ps", 0).Ready().Restarts(2),
       ps0_init,
       {ps0_init, pod("ps", 1).Restarts(2)},
       {ev(kTaskFailed, "ps", 0)}},
      {"restarts of finished pods do not count",
       pod("ps", 0).Ready(),
       pod("ps", 0).Ready().Restarts(1),
       {pod("ps", 0).Ready().Restarts(1), pod("ps", 1).ExitCode(1).Restarts(9)},
       {Request{}}},
      {"unlimited",
       pod("worker", 0).Ready(),
       pod("worker", 0).Ready().Restarts(50),
       {pod("worker", 0).Ready().Restarts(50)},
       {Request{}}},
  };
  for (const Case& c : cases) {
    std::vector<const Pod*> task_pods;
    for (const Pod& p : c.task_pods) task_pods.push_back(&p);
    std::vector<Request> got =
        PodChangeRequests(job, c.before ? &*c.before : nullptr, c.after ? &*c.after : nullptr,
                          [&] { return task_pods; });
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(LifecyclePodChangeTest, PodFirstSeenBeingDeletedBySomeoneElseIsEvicted) {
  // §1.7: PodEvicted is a deletion by someone other than the controller. A
  // pod first seen (informer add, e.g. the initial list after a reconciler
  // restart) with a deletionTimestamp and without the out-of-sync mark is
  // being deleted by someone else (Volcano's addPod hands it to deletePod).
  Job job = At(TwoTaskJob(), kRunning);
  Pod pod = MakeJobPod(job, "ps", 0).Ready().Deleting(kT0);
  std::vector<Request> got =
      PodChangeRequests(job, nullptr, &pod, [] { return std::vector<const Pod*>{}; });
  const std::vector<Request> want = {From(kPodEvicted, "ps", 0)};
  EXPECT_EQ(got, want);
}

TEST(LifecyclePodChangeTest, TaskFailedUsesTheDefaultMaxRetry) {
  Job job = At(TwoTaskJob(), kRunning);
  ASSERT_EQ(Task(job, "ps").max_retry, 3);  // WithDefaults
  Pod after = MakeJobPod(job, "ps", 0).Ready().Restarts(3);
  std::vector<Request> got =
      PodChangeRequests(job, nullptr, &after, [&] { return std::vector<const Pod*>{&after}; });
  EXPECT_EQ(got, (std::vector<Request>{From(kTaskFailed, "ps", 0)}));
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
  EXPECT_EQ(Sorted(plan.kill_pods),
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
  EXPECT_EQ(Sorted(plan.kill_pods), Names({"ctr-volcano-pserver-0", "ctr-volcano-pserver-1"}));
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
  EXPECT_THAT(plan.kill_pods, IsEmpty());
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
  EXPECT_EQ(Sorted(plan.kill_pods), Names({"ctr-volcano-pserver-0", "ctr-volcano-trainer-1"}));
  EXPECT_EQ(plan.events.back().reason, "JobFailed");

  // Failed stays Failed; nothing more is created.
  w_.FinishDeletions();
  plan = Step();
  EXPECT_EQ(plan.status.state.phase, kFailed);
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_THAT(plan.kill_pods, IsEmpty());
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

// Issue 19: the reconciler restarts after the Job's pods ran, before it wrote
// the Job's phase Running, and the driver task succeeded meanwhile. The
// Job's first sight raises TaskCompleted (controller.cc on_job_added) and
// its CompleteJob must take the Job from Pending to Completing, then
// Completed once the other pods are gone, as in Volcano
// (pkg/controllers/job/state/pending.go: CompleteJobAction -> Completing;
// state/completing.go: Completed when no pod is alive).
TEST(LifecycleRestartTest, TaskCompletedWhileDownCompletesAPendingJob) {
  struct Case {
    std::string name;
    std::string written_phase;  // status.state.phase at the restart
    bool plain_sync_first;      // a worker took the Job's own sync alone
  };
  const std::vector<Case> cases = {
      // The first status (Pending, then Running) was still held back: these
      // two failed before the fix.
      {"nothing written", "", false},
      {"nothing written, plain sync first", "", true},
      // Pending (or Running) written: these worked already.
      {"Pending written", "Pending", false},
      {"Pending written, plain sync first", "Pending", true},
      {"Running written", "Running", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string driver_policy =
        R"("policies":[{"event":"TaskCompleted","action":"CompleteJob"}],)";
    Job job = JobOf(R"("minAvailable":2,)",
                    {TaskJson("driver", 1, "1", driver_policy), TaskJson("helper", 1, "1")});
    if (!c.written_phase.empty()) job = At(job, c.written_phase);
    JobWorld w = World(job, "SR", kPodGroupRunning);  // driver Succeeded, helper Running
    Time now = kNow;

    // JobController::Sync: a pass per request that runs a policy, then one
    // plain sync. A status StatusWriteOf lets wait is not written until the
    // coalescing window has passed (right after a restart it has not: no
    // write yet, the first one held back waits kStatusCoalesce).
    std::vector<Plan> plans;
    auto sync = [&](std::vector<Request> requests, bool window_passed) {
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
        plans.push_back(std::move(plan));
      }
    };

    // First sight: the pods were listed before the Job; each raises what it
    // went through (PodChangeRequests from nothing).
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
    ASSERT_EQ(seen.front().event, kTaskCompleted);
    if (c.plain_sync_first) sync({}, /*window_passed=*/false);
    sync(seen, /*window_passed=*/false);

    auto completing = std::find_if(plans.begin(), plans.end(),
                                   [](const Plan& p) { return p.action == kCompleteJob; });
    ASSERT_NE(completing, plans.end());
    EXPECT_EQ(completing->status.state.phase, kCompleting);
    EXPECT_EQ(completing->kill_pods, Names({"j-helper-0"}));
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
