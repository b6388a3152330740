// JobController and Jobs it cannot decode (controller.h): the CRD accepts
// them - a pod template keeps unknown fields, a duration is a plain string -
// but muster's codec refuses them. Each gets an answer on the Job, once:
// a new one fails with InvalidSpec naming the field, one that had started
// is held (UpdateRefused) until its spec decodes again. A valid Job beside
// them runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/testing/controller_fixture.h"

namespace muster::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using kube::testing::WaitFor;

constexpr std::string_view kNs = fixtures::kJobNamespace;

// One task "worker" of `replicas` pods asking `cpu` each; `extra` goes into
// the spec (e.g. a runningEstimate).
std::string JobJson(const std::string& name, const std::string& cpu, int replicas = 2,
                    const std::string& extra = "") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","generation":1},"spec":{"queue":"default",)" + extra +
         R"("tasks":[{"name":"worker","replicas":)" + std::to_string(replicas) +
         R"(,"template":{"spec":{"containers":[{"name":"c","image":"img:1",)"
         R"("resources":{"requests":{"cpu":")" +
         cpu + R"("}}}]}}}]}})";
}

class JobControllerUndecodableTest : public fixtures::JobControllerTest {
 protected:
  std::vector<std::string> Pods(const std::string& job) const {
    return Names(PodsRef(), job + "-");
  }
  int StatusPatches(const std::string& name) const {
    int n = 0;
    for (const auto& r : api_->Requests()) {
      n += r.method == "PATCH" && r.path.ends_with("/jobs/" + name + "/status");
    }
    return n;
  }
  void PatchSpec(const std::string& name, int64_t generation, const std::string& spec) {
    const std::string patch =
        R"({"metadata":{"generation":)" + std::to_string(generation) + R"(},"spec":)" + spec + "}";
    ASSERT_TRUE(client_->Patch(JobRef(name), kube::PatchType::kMerge, patch).ok());
  }
};

const std::string kBadCpu =
    R"(spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantity "1.2.3" of cpu )"
    "is invalid: it has more than one decimal point";

TEST_F(JobControllerUndecodableTest, ANewJobThatDoesNotDecodeFailsNamingTheFieldOnce) {
  api_->Put(JobRef("bad"), JobJson("bad", "1.2.3"));
  api_->Put(JobRef("good"), JobJson("good", "1"));
  StartController();
  ASSERT_TRUE(WaitFor([&] { return Status("bad").state.phase == "Failed"; }))
      << Status("bad").state.phase;
  const JobStatus status = Status("bad");
  EXPECT_EQ(status.state.reason, "InvalidSpec");
  EXPECT_EQ(status.state.message, kBadCpu);
  ASSERT_FALSE(status.conditions.empty());
  EXPECT_EQ(status.conditions.back().status, "Failed");
  ASSERT_TRUE(WaitFor([&] { return !Events("bad").empty(); }));
  EXPECT_THAT(Events("bad"), ElementsAre("Warning InvalidSpec: " + kBadCpu));
  // The valid Job beside it goes its way: its PodGroup is made.
  AdmitGroupOf("good");
  ASSERT_TRUE(WaitFor([&] { return Pods("good").size() == 2; }));
  // Nothing is made for the bad one, and it is said once, however many
  // syncs (its own write comes back as a new version that does not decode).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THAT(Pods("bad"), ::testing::IsEmpty());
  EXPECT_THAT(Names(kube::PodGroupsRef(), "bad-"), ::testing::IsEmpty());
  EXPECT_EQ(Events("bad").size(), 1u);
  EXPECT_EQ(StatusPatches("bad"), 1);
  EXPECT_THAT(metrics_.Serialize(), HasSubstr("muster_reconciler_invalid_jobs_total 1"));
  EXPECT_EQ(controller_->JobsByPhase()["Failed"], 1);
  const auto undecodable = controller_->Undecodable();
  ASSERT_EQ(undecodable.at("jobs").size(), 1u);
  EXPECT_EQ(undecodable.at("jobs")[0]->problem, kBadCpu);
  // A restarted reconciler reads that the status says it already.
  StopController();
  StartController();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Events("bad").size(), 1u);
  EXPECT_EQ(StatusPatches("bad"), 1);
}

// Volcano's update rules let durations change (the CRD's transition rules
// cannot compare "2h" with "120m"), so a running Job can turn undecodable.
// It is held like a refused update: its phase and pods stay, nothing is
// created or killed, until its spec decodes again.
TEST_F(JobControllerUndecodableTest, AStartedJobThatTurnsUndecodableIsHeldUntilItDecodes) {
  api_->Put(JobRef("train"), JobJson("train", "1", 2, R"("runningEstimate":"2h",)"));
  StartController();
  AdmitGroupOf("train");
  ASSERT_TRUE(WaitFor([&] { return Pods("train").size() == 2; }));
  ASSERT_TRUE(WaitFor([&] { return !Status("train").state.phase.empty(); }));
  PatchSpec("train", 2, R"({"runningEstimate":"forever"})");
  ASSERT_TRUE(WaitFor([&] { return Status("train").state.reason == "UpdateRefused"; }))
      << Status("train").state.reason;
  const JobState held = Status("train").state;
  EXPECT_THAT(held.message, StartsWith("spec.runningEstimate: "));
  EXPECT_NE(held.phase, "Failed");
  ASSERT_TRUE(WaitFor([&] { return !Events("train").empty(); }));
  EXPECT_THAT(Events("train"), ElementsAre("Warning UpdateRefused: " + held.message));
  // Held: a pod deleted meanwhile is not made again.
  api_->Remove(kube::ResourceRef::Core("pods", std::string(kNs)).WithName("train-worker-1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THAT(Pods("train"), ElementsAre("train-worker-0"));
  // Fixed: the hold is lifted and the Job goes on.
  PatchSpec("train", 3, R"({"runningEstimate":"2h"})");
  ASSERT_TRUE(WaitFor([&] { return Pods("train").size() == 2; })) << Pods("train").size();
  ASSERT_TRUE(WaitFor([&] { return Status("train").state.reason.empty(); }))
      << Status("train").state.reason;
  EXPECT_EQ(Status("train").state.phase, held.phase);
}

}  // namespace
}  // namespace muster::reconciler
