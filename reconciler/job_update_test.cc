#include "reconciler/job_update.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reconciler/job_admission.h"
#include "reconciler/testing/job_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::DecodeJobAsWritten;
using fixtures::JobJson;

// Volcano's validateJobUpdate
// (pkg/webhooks/admission/jobs/validate/admit_job.go) is the origin of every
// rule below - no task added or removed, nothing but minAvailable,
// priorityClassName, tasks[*].replicas and tasks[*].minAvailable changed, and
// the create-time range checks re-applied to the new spec.

// A Job that sets every spec field muster models.
constexpr std::string_view kUpdateBase =
    R"({"minAvailable":2,"queue":"q","schedulerName":"volcano","maxRetry":5,"minSuccess":2,)"
    R"("ttlSecondsAfterFinished":60,"priorityClassName":"low","runningEstimate":"2h",)"
    R"("networkTopology":{"mode":"soft","highestTierAllowed":2},)"
    R"("plugins":{"svc":[],"env":[]},)"
    R"("policies":[{"event":"PodEvicted","action":"RestartJob"}],)"
    R"("volumes":[{"mountPath":"/data","volumeClaimName":"pvc"}],)"
    R"("tasks":[{"name":"ps","replicas":1,)"
    R"("template":{"spec":{"containers":[{"name":"c","image":"img:1"}]}}},)"
    R"({"name":"worker","replicas":2,"minAvailable":2,"maxRetry":4,"topologyPolicy":"none",)"
    R"("policies":[{"event":"TaskCompleted","action":"CompleteJob"}],"dependsOn":{"name":["ps"]},)"
    R"("template":{"spec":{"containers":[{"name":"c","image":"img:2"}]}}}]})";

// kUpdateBase with the first `from` replaced by `to`.
std::string EditedBase(std::string_view from, std::string_view to) {
  std::string spec(kUpdateBase);
  const size_t at = spec.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) spec.replace(at, from.size(), to);
  return spec;
}

constexpr std::string_view kFrozen =
    ": may not change after creation; only minAvailable, priorityClassName, tasks[*].replicas "
    "and tasks[*].minAvailable may";

// One update: the edit of kUpdateBase that makes the new spec.
struct UpdateCase {
  std::string desc;
  std::string from, to;
  std::string want;  // "" = allowed, else the whole message
};

// Each case against kUpdateBase, both as the Job and as its digest read back
// from its text (what a restarted reconciler compares with).
void RunUpdateCases(const std::vector<UpdateCase>& cases) {
  const Job old_job = WithDefaults(DecodeJobAsWritten(JobJson("j", kUpdateBase)));
  ASSERT_EQ(ValidateJob(old_job), Status::Ok());
  const std::optional<AcceptedSpec> digest =
      DecodeAcceptedSpec(EncodeAcceptedSpec(AcceptedSpecOf(old_job)));
  ASSERT_TRUE(digest.has_value());
  for (const UpdateCase& c : cases) {
    SCOPED_TRACE(c.desc);
    const Job new_job = WithDefaults(DecodeJobAsWritten(JobJson("j", EditedBase(c.from, c.to))));
    for (const Status& got :
         {ValidateJobUpdate(old_job, new_job), ValidateJobUpdate(*digest, new_job)}) {
      if (c.want.empty()) {
        EXPECT_EQ(got, Status::Ok());
      } else {
        EXPECT_EQ(got.code(), StatusCode::kInvalidArgument) << got;
        EXPECT_EQ(got.message(), c.want);
      }
    }
  }
}

// What may change; a default written out, or left out, is no change.
TEST(JobUpdateTest, ValidateJobUpdateAllows) {
  RunUpdateCases({
      {"scale a task up", R"("replicas":2,"minAvailable":2)", R"("replicas":5,"minAvailable":2)",
       ""},
      {"scale a task down", R"("replicas":2,"minAvailable":2)", R"("replicas":1,"minAvailable":1)",
       ""},
      {"scale below the job's minAvailable", R"("replicas":2,"minAvailable":2)",
       R"("replicas":0,"minAvailable":0)",
       "spec.minAvailable: 2 is more than the 1 replicas of all tasks"},
      {"task minAvailable", R"("replicas":2,"minAvailable":2)", R"("replicas":2,"minAvailable":1)",
       ""},
      {"job minAvailable", R"("minAvailable":2,"queue")", R"("minAvailable":3,"queue")", ""},
      {"priorityClassName", R"("priorityClassName":"low")", R"("priorityClassName":"high")", ""},
      {"nothing", "", "", ""},
      // A default written out, or left out, is no change.
      {"task maxRetry 0 is the default 3", R"("name":"ps","replicas":1,)",
       R"("name":"ps","replicas":1,"maxRetry":3,)", ""},
  });
}

// What may not: a task added or removed, any frozen field.
TEST(JobUpdateTest, ValidateJobUpdateRefusesFrozenFields) {
  const std::string frozen(kFrozen);
  RunUpdateCases({
      {"add a task", R"(]}}}]})", R"(]}}},{"name":"extra","replicas":1}]})",
       "spec.tasks: job updates may not add or remove tasks (the job has 2, the update 3)"},
      {"remove a task",
       R"({"name":"ps","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"img:1"}]}}},)",
       "", "spec.tasks: job updates may not add or remove tasks (the job has 2, the update 1)"},
      {"rename a task", R"("name":"ps","replicas")", R"("name":"pserver","replicas")",
       "spec.tasks[0].name" + frozen},
      {"task template (image)", R"("image":"img:1")", R"("image":"img:9")",
       "spec.tasks[0].template" + frozen},
      {"task maxRetry", R"("maxRetry":4)", R"("maxRetry":7)", "spec.tasks[1].maxRetry" + frozen},
      {"task topologyPolicy", R"("topologyPolicy":"none")", R"("topologyPolicy":"best-effort")",
       "spec.tasks[1].topologyPolicy" + frozen},
      {"task policies", R"("action":"CompleteJob")", R"("action":"AbortJob")",
       "spec.tasks[1].policies" + frozen},
      {"task dependsOn dropped", R"(,"dependsOn":{"name":["ps"]})", "",
       "spec.tasks[1].dependsOn" + frozen},
      {"queue", R"("queue":"q")", R"("queue":"other")", "spec.queue" + frozen},
      {"queue back to the default", R"("queue":"q",)", "", "spec.queue" + frozen},
      {"schedulerName", R"("schedulerName":"volcano")", R"("schedulerName":"other")",
       "spec.schedulerName" + frozen},
      {"maxRetry", R"("maxRetry":5)", R"("maxRetry":6)", "spec.maxRetry" + frozen},
      {"minSuccess", R"("minSuccess":2)", R"("minSuccess":1)", "spec.minSuccess" + frozen},
      {"ttlSecondsAfterFinished added later is a change too", R"("ttlSecondsAfterFinished":60,)",
       "", "spec.ttlSecondsAfterFinished" + frozen},
      {"runningEstimate", R"("runningEstimate":"2h")", R"("runningEstimate":"3h")",
       "spec.runningEstimate" + frozen},
      {"networkTopology", R"("highestTierAllowed":2)", R"("highestTierAllowed":1)",
       "spec.networkTopology" + frozen},
      {"plugins", R"("env":[])", R"("ssh":[])", "spec.plugins" + frozen},
      {"job policies", R"("action":"RestartJob")", R"("action":"AbortJob")",
       "spec.policies" + frozen},
      {"volumes", R"("mountPath":"/data")", R"("mountPath":"/scratch")", "spec.volumes" + frozen},
  });
}

// The create-time range checks, again.
TEST(JobUpdateTest, ValidateJobUpdateRechecksRanges) {
  RunUpdateCases({
      {"task minAvailable above its replicas", R"("replicas":2,"minAvailable":2)",
       R"("replicas":2,"minAvailable":3)",
       "spec.tasks[1].minAvailable: 3 is more than the 2 replicas of the task"},
      {"job minAvailable above all replicas", R"("minAvailable":2,"queue")",
       R"("minAvailable":4,"queue")",
       "spec.minAvailable: 4 is more than the 3 replicas of all tasks"},
      {"negative replicas", R"("replicas":2,"minAvailable":2)", R"("replicas":-1,"minAvailable":0)",
       "spec.tasks[1].replicas: -1 must be >= 0"},
      {"negative minAvailable", R"("minAvailable":2,"queue")", R"("minAvailable":-1,"queue")",
       "spec.minAvailable: -1 must be >= 0"},
  });
}

TEST(JobUpdateTest, ValidateJobUpdateComparesDefaultedSpecs) {
  // Volcano's webhook stores the defaults at create; muster applies them on
  // every sync: an update that writes out what the default was is no change.
  const Job old_job = WithDefaults(
      DecodeJobAsWritten(JobJson("j", R"({"plugins":{"mpi":[]},"tasks":[{"replicas":1,)"
                                      R"("name":"master"},{"replicas":2}]})")));
  const Job new_job = WithDefaults(DecodeJobAsWritten(
      JobJson("j", R"({"queue":"default","maxRetry":3,"plugins":{"mpi":[],"ssh":[],)"
                   R"("svc":[]},"tasks":[{"replicas":1,"name":"master","maxRetry":3},)"
                   R"({"replicas":4,"name":"default1"}]})")));
  EXPECT_EQ(ValidateJobUpdate(old_job, new_job), Status::Ok());
}

TEST(JobUpdateTest, AcceptedSpecText) {
  const Job job = WithDefaults(DecodeJobAsWritten(JobJson("j", kUpdateBase)));
  AcceptedSpec accepted = AcceptedSpecOf(job);
  accepted.generation = 7;
  const std::string text = EncodeAcceptedSpec(accepted);
  EXPECT_EQ(text.rfind("v1 g=7 n=2 h=", 0), 0u) << text;
  EXPECT_NE(text.find(" spec.tasks[0].template="), std::string::npos) << text;
  EXPECT_EQ(text.find("spec.tasks[0].replicas"), std::string::npos) << text;  // mutable
  EXPECT_EQ(text.find("spec.priorityClassName"), std::string::npos) << text;
  EXPECT_NE(accepted.svc_hosts, 0u);  // the job has svc
  EXPECT_EQ(DecodeAcceptedSpec(text), accepted);
  // Replicas are not frozen, but the hosts of svc follow them.
  Job scaled = job;
  scaled.spec.tasks[1].replicas = 3;
  EXPECT_EQ(AcceptedSpecOf(scaled).fields, accepted.fields);
  EXPECT_NE(AcceptedSpecOf(scaled).svc_hosts, accepted.svc_hosts);
  for (std::string_view bad : {"", "v2 g=7 n=2 h=0", "v1 g=x n=2 h=0", "v1 g=1 n=2",
                               "v1 g=1 n=2 h=0 spec.queue", "v1 n=2 g=1 h=0"}) {
    EXPECT_EQ(DecodeAcceptedSpec(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace muster::reconciler
