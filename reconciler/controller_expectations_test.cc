// JobController's expectations (controller.h): a write the informers have
// not shown yet is not made again by a sync racing it. The pods' watch is
// held (testing/faulty_api.h) so the informer lags for as long as the test
// needs, and each check runs whole syncs while it lags.
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
  void StartRunningJob() {
    api_->Put(JobRef("train"), fixtures::WorkerJobJson("train", 2, false));
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

}  // namespace
}  // namespace muster::reconciler
