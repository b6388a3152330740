// JobController's crash safety (controller.h): the controller dies after
// its n-th write (testing/faulty_api.h: every later write is refused, as if
// the process were gone), a new one starts from the cluster alone, and the
// Job ends the same as without a crash - the same pods, none created twice
// or killed, the PodGroup and plugin objects, the status written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/client/testing/loopback_server.h"
#include "reconciler/testing/controller_jobs.h"
#include "reconciler/testing/faulty_api.h"

namespace muster::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::Values;

constexpr char kPods[] = "/api/v1/namespaces/ml/pods";

// Where the first controller dies: after this many writes (0: never). A
// new Job with the svc plugin writes, in order: the hosts ConfigMap, the
// Service, the NetworkPolicy, its first status, the PodGroup, then (once
// the PodGroup is admitted) its two pods and the status that counts them -
// the crash points below fall before, between and after each (Events, when
// there are any, shift them).
class JobControllerCrashTest : public fixtures::FaultyJobControllerTest,
                               public ::testing::WithParamInterface<int> {
 protected:
  // What the Job converges to: both pods, its PodGroup and plugin
  // objects, the status counting the pods Pending with the accepted spec.
  bool Converged() const {
    const JobStatus status = Status("train");
    return Names(PodsRef(), "train-").size() == 2 && status.pending == 2 &&
           status.controlled_resources.contains(std::string(kAcceptedSpecKey)) &&
           status.controlled_resources.contains("plugin-svc");
  }
};

TEST_P(JobControllerCrashTest, ARestartAfterAnyWriteConvergesToTheSameJob) {
  const int crash_after = GetParam();
  api_->Put(JobRef("train"), fixtures::WorkerJobJson("train", 2, true));
  if (crash_after > 0) faulty_->CrashAfterWrites(crash_after);
  StartController();
  ASSERT_TRUE(WaitWhileTimePasses([&] { return faulty_->Refused() > 0 || Converged(); }));
  if (crash_after > 0) {
    StopController();  // the crash: nothing is kept but the cluster
    faulty_->Recover();
    StartController();
  }
  ASSERT_TRUE(WaitWhileTimePasses([&] { return Converged(); }))
      << "pods " << Names(PodsRef(), "train-").size() << ", pending " << Status("train").pending;

  EXPECT_THAT(Names(PodsRef(), "train-"), ElementsAre("train-worker-0", "train-worker-1"));
  EXPECT_EQ(Count("DELETE", std::string(kPods) + "/train-worker-0"), 0);
  EXPECT_EQ(Count("DELETE", std::string(kPods) + "/train-worker-1"), 0);
  EXPECT_EQ(Names(kube::PodGroupsRef(), "train-").size(), 1u);
  EXPECT_EQ(Names(kube::ResourceRef::Core("services"), "train").size(), 1u);
  EXPECT_EQ(Names(kube::ResourceRef::Core("configmaps"), "train-svc").size(), 1u);
  const JobStatus status = Status("train");
  EXPECT_EQ(status.state.phase, kPending);
  EXPECT_EQ(status.min_available, 2);
  EXPECT_EQ(status.version, 0);
  EXPECT_EQ(status.retry_count, 0);
  EXPECT_EQ(status.task_status_count.at("worker").at("Pending"), 2);
}

INSTANTIATE_TEST_SUITE_P(AfterEachWrite, JobControllerCrashTest,
                         Values(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0 ? std::string("NoCrash")
                                                  : "CrashAfterWrite" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace muster::reconciler
