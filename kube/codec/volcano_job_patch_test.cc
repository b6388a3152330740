// The reconciler's status writes of a Job (volcano_codec.h
// EncodeJobStatusPatchAtVersion, EncodeJobStatePatchAtVersion) against
// golden files. The goldens are the bytes the reconciler sent before these
// functions existed (a resourceVersion spliced in front of
// EncodeJobStatusPatch, removed tasks added as nulls through RapidJSON), so
// the wire format is unchanged.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"
#include "kube/codec/volcano_codec.h"

namespace muster::kube {
namespace {

using codec_test::At;
using codec_test::ReadTestdata;

// Running, with a message that needs escaping, two tasks counted.
JobStatus RunningStatus() {
  JobStatus s;
  s.state = JobState{"Running", "UpdateRefused", "spec.tasks[0]: \"x\" caf\xc3\xa9\n\t<&>/",
                     At("2025-03-14T09:31:07Z")};
  s.min_available = 3;
  s.running = 2;
  s.pending = 1;
  s.version = 2;
  s.retry_count = 1;
  s.running_duration = std::chrono::seconds(257);
  s.task_status_count = {{"ps", {{"Running", 1}}}, {"worker", {{"Pending", 1}, {"Running", 1}}}};
  s.controlled_resources = {{"muster.io/accepted-spec", "{\"generation\":2}"},
                            {"plugin-svc", "svc"}};
  s.conditions = {JobCondition{"Pending", At("2025-03-14T09:26:51Z")},
                  JobCondition{"Running", At("2025-03-14T09:31:07Z")}};
  return s;
}

struct StatusCase {
  std::string golden;  // under testdata/
  std::string resource_version;
  JobStatus status;
  std::vector<std::string> removed_tasks;
};

const std::vector<StatusCase>& StatusCases() {
  static const std::vector<StatusCase> cases = {
      {"job_status_patch_at_version.json", "4711", RunningStatus(), {}},
      // Nulls after the status's own tasks, in the order given (chief
      // sorts before ps and still comes last).
      {"job_status_patch_removed_tasks.json", "4712", RunningStatus(), {"chief", "zeta"}},
      {"job_status_patch_all_tasks_removed.json",
       "1",
       JobStatus{},
       {"chief", "ps", "worker", "zeta"}},
  };
  return cases;
}

TEST(JobStatusPatchAtVersionTest, MatchesTheGoldens) {
  for (const StatusCase& c : StatusCases()) {
    SCOPED_TRACE(c.golden);
    EXPECT_EQ(EncodeJobStatusPatchAtVersion(c.resource_version, c.status, c.removed_tasks),
              ReadTestdata(c.golden));
  }
}

// Without a removed task, the patch is EncodeJobStatusPatch's with the
// precondition in front, and it decodes back into the same status.
TEST(JobStatusPatchAtVersionTest, IsTheStatusPatchWithThePrecondition) {
  const JobStatus s = RunningStatus();
  EXPECT_EQ(EncodeJobStatusPatchAtVersion("9", s),
            R"({"metadata":{"resourceVersion":"9"},)" + EncodeJobStatusPatch(s).substr(1));
  StatusOr<Job> back = DecodeJob(EncodeJobStatusPatchAtVersion("9", s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->status, s);
  EXPECT_EQ(back->meta.resource_version, "9");
}

// A task named removed that the status still counts is not nulled.
TEST(JobStatusPatchAtVersionTest, ARemovedTaskTheStatusCountsIsLeftOut) {
  const JobStatus s = RunningStatus();
  EXPECT_EQ(EncodeJobStatusPatchAtVersion("9", s, {"ps"}), EncodeJobStatusPatchAtVersion("9", s));
}

TEST(JobStatePatchAtVersionTest, MatchesTheGoldens) {
  EXPECT_EQ(EncodeJobStatePatchAtVersion(
                "77",
                JobState{"Failed", "InvalidSpec", "spec.tasks[0].template: \"1.2.3\"",
                         At("2025-03-14T09:31:07Z")},
                {JobCondition{"Failed", At("2025-03-14T09:31:07Z")}}),
            ReadTestdata("job_state_patch_at_version.json"));
  EXPECT_EQ(EncodeJobStatePatchAtVersion(
                "78", JobState{"Running", "UpdateRefused", "spec.x: bad", {}}, {}),
            ReadTestdata("job_state_patch_at_version_no_conditions.json"));
}

// The reconciler's mark of a pod it kills (core_codec.h
// EncodeAnnotationsPatch with a uid precondition), as it was concatenated.
TEST(JobStatusPatchAtVersionTest, OutOfSyncMarkMatchesTheGolden) {
  EXPECT_EQ(EncodeAnnotationsPatch({{"volcano.sh/controller-out-of-sync", "true"}},
                                   "0f1e2d3c-aaaa-bbbb-cccc-123456789abc"),
            ReadTestdata("pod_out_of_sync_patch.json"));
}

}  // namespace
}  // namespace muster::kube
