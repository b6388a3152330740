// JobController's expectations (controller.h): a write the informers have
// not shown yet is not made again by a sync racing it - the pods' watch is
// held (testing/faulty_api.h) so the informer lags for as long as the test
// needs, and each check runs whole syncs while it lags - and a pod the
// controller kills raises no event of its own.
#include <gtest/gtest.h>

#include <string>

#include "kube/client/testing/loopback_server.h"
#include "reconciler/testing/controller_jobs.h"
#include "reconciler/testing/faulty_api.h"

namespace muster::reconciler {
namespace {

using kube::testing::WaitFor;

constexpr char kJobKey[] = "ml/train";
constexpr char kPods[] = "/api/v1/namespaces/ml/pods";
constexpr char kWorker1[] = "/api/v1/namespaces/ml/pods/train-worker-1";

class JobControllerExpectationsTest : public fixtures::FaultyJobControllerTest {
 protected:
  // The Job runs its two workers, and the controller's pod informer has
  // seen them Running (the status counts them: only the informer tells).
  // `more_spec`: as fixtures::WorkerJobJson's.
  void StartRunningJob(const std::string& more_spec = "") {
    api_->Put(JobRef("train"), fixtures::WorkerJobJson("train", 2, false, more_spec));
    StartController();
    ASSERT_TRUE(WaitWhileTimePasses([&] { return Count("POST", kPods) == 2; }));
    for (const char* name : {"train-worker-0", "train-worker-1"}) {
      ASSERT_TRUE(direct_
                      ->PatchStatus(PodsRef().WithNamespace("ml").WithName(name),
                                    kube::PatchType::kMerge, R"({"status":{"phase":"Running"}})")
                      .ok());
    }
    ASSERT_TRUE(WaitWhileTimePasses([&] { return Status("train").running == 2; }));
  }
};

TEST_F(JobControllerExpectationsTest, APodCreatedIsNotCreatedAgainBeforeTheInformerSeesIt) {
  api_->Put(JobRef("train"), fixtures::WorkerJobJson("train", 2, false));
  StartController();
  faulty_->HoldWatch("/api/v1/pods");
  ASSERT_TRUE(WaitWhileTimePasses([&] { return Count("POST", kPods) == 2; }));
  EXPECT_EQ(Names(PodsRef(), "train-").size(), 2u);
  // The informer has neither pod: without the expectations each sync
  // would create both again.
  SyncAgain(kJobKey);
  SyncAgain(kJobKey);
  EXPECT_EQ(Count("POST", kPods), 2);
  faulty_->ReleaseWatch();
  SyncAgain(kJobKey);
  EXPECT_EQ(Count("POST", kPods), 2);
}

TEST_F(JobControllerExpectationsTest, AKillExpectedIsNotRepeated) {
  StartRunningJob();
  faulty_->HoldWatch("/api/v1/pods");
  // Scale to one worker: worker 1 is marked out of sync, then deleted.
  ASSERT_TRUE(direct_
                  ->Patch(JobRef("train"), kube::PatchType::kMerge,
                          R"({"metadata":{"generation":2},"spec":{"tasks":)" +
                              fixtures::WorkerTasksJson(1) + "}}")
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Count("DELETE", kWorker1) == 1; }));
  // The informer still shows it alive and unmarked.
  SyncAgain(kJobKey);
  SyncAgain(kJobKey);
  EXPECT_EQ(Count("PATCH", kWorker1), 1) << "marked once";
  EXPECT_EQ(Count("DELETE", kWorker1), 1) << "deleted once";
  faulty_->ReleaseWatch();
  SyncAgain(kJobKey);
  EXPECT_EQ(Count("PATCH", kWorker1), 1);
  EXPECT_EQ(Count("DELETE", kWorker1), 1);
  EXPECT_EQ(Names(PodsRef(), "train-").size(), 1u);
}

// The kill's expectation also stands for its mark: a pod this process
// kills raises no event even when the informer's copy lacks the mark (here
// the mark failed; a relist after a broken watch gives the same copy).
// Read as an eviction, each of a RestartTask's own kills would restart the
// task again and spend maxRetry.
TEST_F(JobControllerExpectationsTest, AKillWhoseMarkFailedIsNotReadAsAnEviction) {
  StartRunningJob(R"("maxRetry":5,"policies":[{"event":"PodEvicted","action":"RestartTask"}],)");
  api_->FailNext("PATCH", kWorker1, 500);
  // Worker 0 is evicted: the task restarts, worker 1 is killed unmarked.
  ASSERT_TRUE(direct_->Delete(PodsRef().WithNamespace("ml").WithName("train-worker-0")).ok());
  ASSERT_TRUE(WaitWhileTimePasses(
      [&] { return Count("DELETE", kWorker1) == 1 && Names(PodsRef(), "train-").size() == 2; }));
  SyncAgain(kJobKey);
  EXPECT_EQ(Status("train").retry_count, 1) << "one eviction, one restart of the task";
  EXPECT_EQ(Count("DELETE", kWorker1), 1);
  EXPECT_EQ(Count("POST", kPods), 4) << "each worker created once more";
}

}  // namespace
}  // namespace muster::reconciler
