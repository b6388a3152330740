// What a pod change raises (PodChangeRequests) and what a pod says of its
// task, index and version: the part of lifecycle.h in pod_changes.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reconciler/lifecycle.h"
#include "reconciler/testing/job_fixtures.h"
#include "reconciler/testing/lifecycle_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::MakeJobPod;
using lifecycle_fixtures::At;
using lifecycle_fixtures::From;
using lifecycle_fixtures::kT0;
using lifecycle_fixtures::Task;
using lifecycle_fixtures::TwoTaskJob;

// ===========================================================================
// Pod identity.

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
// Pod changes -> requests.

// The two-task job Running at version 2, ps with maxRetry 5 and worker with
// -1 (never): each case's pod change against it.
struct PodChangeCase {
  std::string name;
  std::optional<Pod> before, after;
  std::vector<Pod> task_pods;  // the task's pods after the change
  std::vector<Request> want;
};

class LifecyclePodChangeTableTest : public ::testing::Test {
 protected:
  LifecyclePodChangeTableTest() {
    Task(job_, "ps").max_retry = 5;
    Task(job_, "worker").max_retry = -1;
  }

  fixtures::JobPodBuilder PodOf(std::string_view task, int index) const {
    return MakeJobPod(job_, task, index);
  }
  static Request Raised(std::string_view event, std::string_view task, int index) {
    return From(event, task, index, /*version=*/2);
  }

  void Run(const std::vector<PodChangeCase>& cases) const {
    for (const PodChangeCase& c : cases) {
      std::vector<const Pod*> task_pods;
      for (const Pod& p : c.task_pods) task_pods.push_back(&p);
      std::vector<Request> got =
          PodChangeRequests(job_, c.before ? &*c.before : nullptr, c.after ? &*c.after : nullptr,
                            [&] { return task_pods; });
      EXPECT_EQ(got, c.want) << c.name;
    }
  }

  Job job_ = At(TwoTaskJob(), kRunning, /*version=*/2);
};

TEST_F(LifecyclePodChangeTableTest, PhaseChanges) {
  Request failed_137 = Raised(kPodFailed, "ps", 0);
  failed_137.exit_code = 137;
  Request failed_none = Raised(kPodFailed, "ps", 0);
  Pod two_containers = PodOf("ps", 0).ExitCode(137);
  two_containers.status.container_statuses.insert(
      two_containers.status.container_statuses.begin(),
      ContainerStatus{.name = "first", .state = "terminated", .exit_code = 2});
  Request failed_2 = Raised(kPodFailed, "ps", 0);
  failed_2.exit_code = 2;
  Run({
      {"added pending", std::nullopt, PodOf("ps", 0), {}, {Raised(kPodPendingEvent, "ps", 0)}},
      {"added running", std::nullopt, PodOf("ps", 0).Ready(), {}, {Request{}}},
      {"pending -> running", PodOf("ps", 0), PodOf("ps", 0).Ready(), {}, {Request{}}},
      {"running -> pending",
       PodOf("ps", 0).Ready(),
       PodOf("ps", 0),
       {},
       {Raised(kPodPendingEvent, "ps", 0)}},
      {"running, unchanged", PodOf("ps", 0).Ready(), PodOf("ps", 0).Ready(), {}, {Request{}}},
      {"-> failed, exit code",
       PodOf("ps", 0).Ready(),
       PodOf("ps", 0).ExitCode(137),
       {},
       {failed_137}},
      {"-> failed, first container's exit code",
       PodOf("ps", 0).Ready(),
       two_containers,
       {},
       {failed_2}},
      {"-> failed, no container status",
       PodOf("ps", 0).Ready(),
       PodOf("ps", 0).Phase("Failed"),
       {},
       {failed_none}},
      {"-> succeeded, task not done",
       PodOf("worker", 0).Ready(),
       PodOf("worker", 0).Phase("Succeeded"),
       {PodOf("worker", 0).Phase("Succeeded"), PodOf("worker", 1).Ready()},
       {Request{}}},
      {"-> succeeded, task done",
       PodOf("worker", 0).Ready(),
       PodOf("worker", 0).Phase("Succeeded"),
       {PodOf("worker", 0).Phase("Succeeded"), PodOf("worker", 1).Phase("Succeeded")},
       {Raised(kTaskCompleted, "worker", 0)}},
  });
}

TEST_F(LifecyclePodChangeTableTest, Deletions) {
  Run({
      {"deletion by someone else",
       PodOf("ps", 1).Ready(),
       PodOf("ps", 1).Ready().Deleting(kT0),
       {},
       {Raised(kPodEvicted, "ps", 1)}},
      {"deleted without a deletionTimestamp seen",
       PodOf("ps", 1).Ready(),
       std::nullopt,
       {},
       {Raised(kPodEvicted, "ps", 1)}},
      {"deleted after the deletionTimestamp",
       PodOf("ps", 1).Ready().Deleting(kT0),
       std::nullopt,
       {},
       {Request{}}},
      {"added while being deleted by the reconciler",
       std::nullopt,
       PodOf("ps", 1).Ready().OutOfSync().Deleting(kT0),
       {},
       {Request{}}},
      {"deletion by the reconciler",
       PodOf("ps", 1).Ready().OutOfSync(),
       PodOf("ps", 1).Ready().OutOfSync().Deleting(kT0),
       {},
       {Request{}}},
      {"out-of-sync pod fails",
       PodOf("ps", 1).Ready().OutOfSync(),
       PodOf("ps", 1).OutOfSync().ExitCode(1),
       {},
       {Request{}}},
      {"out-of-sync pod deleted", PodOf("ps", 1).OutOfSync(), std::nullopt, {}, {Request{}}},
  });
}

TEST_F(LifecyclePodChangeTableTest, Restarts) {
  Pod ps0_init = PodOf("ps", 0).Ready().Restarts(2);
  ps0_init.status.init_container_statuses = {ContainerStatus{.name = "i", .restart_count = 1}};
  Run({
      // Container restarts over the task's Running/Pending pods >= maxRetry
      // (ps: 5; worker: -1 = never).
      {"restarts below maxRetry",
       PodOf("ps", 0).Ready().Restarts(3),
       PodOf("ps", 0).Ready().Restarts(4),
       {PodOf("ps", 0).Ready().Restarts(4)},
       {Request{}}},
      {"restarts reach maxRetry",
       PodOf("ps", 0).Ready().Restarts(2),
       ps0_init,
       {ps0_init, PodOf("ps", 1).Restarts(2)},
       {Raised(kTaskFailed, "ps", 0)}},
      {"restarts of finished pods do not count",
       PodOf("ps", 0).Ready(),
       PodOf("ps", 0).Ready().Restarts(1),
       {PodOf("ps", 0).Ready().Restarts(1), PodOf("ps", 1).ExitCode(1).Restarts(9)},
       {Request{}}},
      {"unlimited",
       PodOf("worker", 0).Ready(),
       PodOf("worker", 0).Ready().Restarts(50),
       {PodOf("worker", 0).Ready().Restarts(50)},
       {Request{}}},
  });
}

TEST(LifecyclePodChangeTest, PodFirstSeenBeingDeletedBySomeoneElseIsEvicted) {
  // PodEvicted is a deletion by someone other than the controller. A
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

}  // namespace
}  // namespace muster::reconciler
