// StatusWriter (status_writer.h): the coalescing window of the status
// changes that may wait, and the writes at the Job's resourceVersion, over
// the in-memory API (kube/client/testing/fake_api.h).
#include "reconciler/status_writer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kube/client/testing/fake_api.h"
#include "kube/codec/volcano_codec.h"

namespace muster::reconciler {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class StatusWriterTest : public ::testing::Test {
 protected:
  StatusWriterTest() {
    api_->Put(Ref(), R"({"metadata":{"name":"train"},"spec":{},)"
                     R"("status":{"taskStatusCount":{"a":{"phase":{"Running":1}},)"
                     R"("b":{"phase":{"Running":1}}}}})");
  }
  static kube::ResourceRef Ref() {
    return kube::VolcanoJobsRef().WithNamespace("ml").WithName("train");
  }
  Job Stored() const {
    StatusOr<Job> job = kube::DecodeJob(*api_->Get(Ref()));
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : Job{};
  }

  // No retries: a refused write shows at once.
  static std::unique_ptr<kube::Client> MakeClient(std::shared_ptr<kube::testing::FakeApi> api) {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    return std::make_unique<kube::Client>(std::move(api), kube::ClientConfig{}, options);
  }

  std::shared_ptr<kube::testing::FakeApi> api_ = std::make_shared<kube::testing::FakeApi>();
  std::unique_ptr<kube::Client> client_ = MakeClient(api_);
  FakeClock clock_;
  ReconcilerMetrics metrics_;
  StatusWriter writer_{client_.get(), clock_, &metrics_};
};

// One step: time passes, then a status write or a question to the window.
struct WindowStep {
  milliseconds advance;
  bool write;           // else MayWriteNow
  bool may_write;       // MayWriteNow's answer
  milliseconds due_in;  // its `due`, from now
};
const WindowStep kWindow[] = {
    // The first change held back opens the window: 2 s from now.
    {milliseconds(0), false, false, milliseconds(2000)},
    {milliseconds(1500), false, false, milliseconds(500)},
    {milliseconds(500), false, true, milliseconds(0)},
    // A write starts the window again.
    {milliseconds(100), true, false, milliseconds(0)},
    {milliseconds(1999), false, false, milliseconds(1)},
    {milliseconds(1), false, true, milliseconds(0)},
};

TEST_F(StatusWriterTest, ChangesThatMayWaitWaitTwoSecondsAfterTheLastWrite) {
  EXPECT_EQ(StatusWriter::kCoalesce, seconds(2));
  for (size_t i = 0; i < std::size(kWindow); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const WindowStep& step = kWindow[i];
    clock_.Advance(step.advance);
    if (step.write) {
      Job job = Stored();
      JobStatus status = job.status;
      status.running = static_cast<int32_t>(i);
      ASSERT_TRUE(writer_.Write(job, status).ok());
      continue;
    }
    Time due;
    EXPECT_EQ(writer_.MayWriteNow("ml/train", &due), step.may_write);
    if (!step.may_write) {
      EXPECT_EQ(due, clock_.Now() + step.due_in);
    }
  }
}

// The answer to an undecodable Job is not a write of the window's.
TEST_F(StatusWriterTest, TheStateAloneDoesNotMoveTheWindow) {
  Time due;
  EXPECT_FALSE(writer_.MayWriteNow("ml/train", &due));
  clock_.Advance(seconds(2));
  ASSERT_TRUE(
      writer_.WriteState(Stored().meta, JobState{"Failed", "InvalidSpec", "x", {}}, {}).ok());
  EXPECT_TRUE(writer_.MayWriteNow("ml/train", &due));
  EXPECT_EQ(Stored().status.state.reason, "InvalidSpec");
}

TEST_F(StatusWriterTest, WritesAtTheJobsVersionAndRemovesTasksItNoLongerCounts) {
  const Job job = Stored();
  JobStatus status = job.status;
  status.task_status_count.erase("b");
  StatusOr<std::shared_ptr<const Job>> written = writer_.Write(job, status);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_NE(*written, nullptr);
  EXPECT_EQ((*written)->meta.resource_version, Stored().meta.resource_version);
  EXPECT_EQ(Stored().status.task_status_count.count("b"), 0u);
  EXPECT_EQ(Stored().status.task_status_count.count("a"), 1u);
  // `job` is stale now: the precondition refuses the write.
  EXPECT_EQ(writer_.Write(job, status).status().code(), StatusCode::kConflict);
  EXPECT_EQ(writer_.WriteState(job.meta, JobState{"Failed", "", "", {}}, {}).code(),
            StatusCode::kConflict);
}

}  // namespace
}  // namespace muster::reconciler
