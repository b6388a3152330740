// Reconcile of running jobs: SyncJob, the enqueue gate and the PodGroup, the pod
// sync, timeouts and ttlSecondsAfterFinished.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reconciler/lifecycle.h"
#include "reconciler/testing/job_fixtures.h"
#include "reconciler/testing/lifecycle_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::JobWorld;
using fixtures::MakeJobPod;
using lifecycle_fixtures::At;
using lifecycle_fixtures::CodedPod;
using lifecycle_fixtures::From;
using lifecycle_fixtures::JobOf;
using lifecycle_fixtures::KilledNames;
using lifecycle_fixtures::kNow;
using lifecycle_fixtures::kT0;
using lifecycle_fixtures::Names;
using lifecycle_fixtures::On;
using lifecycle_fixtures::Sorted;
using lifecycle_fixtures::Task;
using lifecycle_fixtures::TaskJson;
using lifecycle_fixtures::TwoTaskJob;
using lifecycle_fixtures::World;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using PgOp = Plan::PodGroupOp;

// ===========================================================================
// Running + SyncJob (state/running.go).

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
    EXPECT_THAT(KilledNames(plan), IsEmpty()) << c.name;
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
// The enqueue gate and the PodGroup.

TEST(LifecycleEnqueueTest, NewJobCreatesThePodGroupButNoPods) {
  JobWorld w = World(TwoTaskJob(), "");
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.status.state.phase, kPending);
  EXPECT_EQ(plan.pod_group_op, PgOp::kCreate);
  EXPECT_EQ(plan.pod_group, DesiredPodGroup(w.job));
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_THAT(KilledNames(plan), IsEmpty());
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
  // job.minAvailable (2) < Σ task.minAvailable (1 + 2): the first 2
  // pods walking the tasks, each task contributing up to its *replicas*:
  // ps-0 and ps-1, 2 CPUs (Volcano's CalcFirstCountResources).
  PodGroup pg = DesiredPodGroup(TwoTaskJob(R"("minAvailable":2,)", R"("minAvailable":1,)"));
  EXPECT_EQ(pg.spec.min_resources, test::Res({{"cpu", "2"}}));
}

// ===========================================================================
// SyncJob pod sync.

TEST(LifecycleSyncPodsTest, MissingReplicasAreCreated) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "R-R-", kPodGroupRunning);
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_EQ(plan.create_pods, (std::vector<PodSlot>{{0, 1}, {1, 1}}));
  EXPECT_THAT(KilledNames(plan), IsEmpty());
}

TEST(LifecycleSyncPodsTest, SurplusIndexIsKilled) {
  Job job = At(TwoTaskJob(), kRunning);
  JobWorld w = World(job, "RRRR", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "worker", 2).Ready());
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), ElementsAre("j-worker-2"));
  EXPECT_THAT(plan.create_pods, IsEmpty());
  EXPECT_EQ(plan.status.terminating, 1);
  EXPECT_EQ(plan.status.running, 4);
}

// The kill names the instance the plan saw: the controller deletes by that
// UID, so a successor of the same name created meanwhile is left alone.
TEST(LifecycleSyncPodsTest, AKillNamesThePodByTheUidThePlanSaw) {
  Job job = At(TwoTaskJob(), kRunning);
  JobWorld w = World(job, "RRRR", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "worker", 2).Uid("uid-of-the-seen-worker-2").Ready());
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(plan.kill_pods,
              ElementsAre(PodKill{.name = "j-worker-2", .uid = "uid-of-the-seen-worker-2"}));
}

TEST(LifecycleSyncPodsTest, ScaledDownTaskLosesItsHighIndex) {
  Job job = At(TwoTaskJob(R"("minAvailable":3,)", "", R"("minAvailable":1,)"), kRunning);
  Task(job, "worker").replicas = 1;
  JobWorld w = World(job, "RRR", kPodGroupRunning);
  w.pods.push_back(MakeJobPod(job, "worker", 1).Ready());
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), ElementsAre("j-worker-1"));
}

TEST(LifecycleSyncPodsTest, OutOfSyncPodIsKilledNotRecreated) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "RROR", kPodGroupRunning);
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), ElementsAre("j-worker-0"));
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
  EXPECT_EQ(Sorted(KilledNames(plan)), Names({"j-ps-1", "j-worker-1"}));
  EXPECT_THAT(plan.create_pods, IsEmpty());
}

TEST(LifecycleSyncPodsTest, PodBeingDeletedIsNotKilledAgain) {
  JobWorld w = World(At(TwoTaskJob(), kRunning), "RRDR", kPodGroupRunning);
  w.pods[2].meta.annotations[std::string(kOutOfSyncKey)] = "true";
  Plan plan = w.Reconcile(Request{}, kNow);
  EXPECT_THAT(KilledNames(plan), IsEmpty());
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
// Timeouts.

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
    EXPECT_THAT(KilledNames(plan), IsEmpty()) << c.name;
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
// ttlSecondsAfterFinished.

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

}  // namespace
}  // namespace muster::reconciler
