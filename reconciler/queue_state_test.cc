// Volcano's queue state machine (volcano-sh/volcano
// pkg/controllers/queue/state/open.go, closing.go, closed.go, unknown.go,
// factory.go) and its admission rule for Jobs
// (pkg/webhooks/admission/jobs/validate/admit_job.go).
#include "reconciler/queue_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace muster::reconciler {
namespace {

TEST(NextQueueStateTest, VolcanosTable) {
  struct Case {
    std::string state;
    std::string_view action;
    int unfinished;
    std::string_view want;
  };
  const std::vector<Case> cases = {
      // open.go (and factory.go: "" is Open).
      {"", kSyncQueue, 0, kQueueOpen},
      {"", kSyncQueue, 3, kQueueOpen},
      {"Open", kSyncQueue, 2, kQueueOpen},
      {"Open", kOpenQueue, 2, kQueueOpen},
      {"Open", kCloseQueue, 2, kQueueClosing},
      {"Open", kCloseQueue, 0, kQueueClosed},
      {"", kCloseQueue, 0, kQueueClosed},
      // closing.go.
      {"Closing", kSyncQueue, 1, kQueueClosing},
      {"Closing", kSyncQueue, 0, kQueueClosed},
      {"Closing", kCloseQueue, 1, kQueueClosing},
      {"Closing", kCloseQueue, 0, kQueueClosed},
      {"Closing", kOpenQueue, 1, kQueueOpen},
      // closed.go: stays Closed whatever appears in it.
      {"Closed", kSyncQueue, 0, kQueueClosed},
      {"Closed", kSyncQueue, 4, kQueueClosed},
      {"Closed", kCloseQueue, 4, kQueueClosed},
      {"Closed", kOpenQueue, 0, kQueueOpen},
      // unknown.go.
      {"Unknown", kSyncQueue, 0, kQueueUnknown},
      {"Unknown", kCloseQueue, 1, kQueueClosing},
      {"Unknown", kCloseQueue, 0, kQueueClosed},
      {"Unknown", kOpenQueue, 1, kQueueOpen},
      // A state Volcano does not know is handled as Unknown (muster).
      {"Draining", kSyncQueue, 0, kQueueUnknown},
      {"Draining", kOpenQueue, 0, kQueueOpen},
      // An action the queue controller does not know syncs.
      {"Closing", "AbortJob", 0, kQueueClosed},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.state + " + " + std::string(c.action) + " with " + std::to_string(c.unfinished) +
                 " PodGroups");
    EXPECT_EQ(NextQueueState(c.state, c.action, c.unfinished), c.want);
  }
}

// The e2e story (e2e/scenarios/commands.sh) as successive requests.
TEST(NextQueueStateTest, CloseDrainThenOpen) {
  std::string s = NextQueueState("", kSyncQueue, 1);  // a new queue
  EXPECT_EQ(s, kQueueOpen);
  s = NextQueueState(s, kCloseQueue, 1);  // a Job still runs in it
  EXPECT_EQ(s, kQueueClosing);
  s = NextQueueState(s, kSyncQueue, 1);  // its PodGroup changes phase
  EXPECT_EQ(s, kQueueClosing);
  s = NextQueueState(s, kSyncQueue, 0);  // its PodGroup is gone
  EXPECT_EQ(s, kQueueClosed);
  s = NextQueueState(s, kOpenQueue, 0);
  EXPECT_EQ(s, kQueueOpen);
}

TEST(QueueHoldsTest, UnfinishedPodGroupsOnly) {
  struct Case {
    std::string name;
    std::string phase;
    bool deleting;
    bool want;
  };
  const std::vector<Case> cases = {
      {"no phase yet", "", false, true},         {"Pending", "Pending", false, true},
      {"Inqueue", "Inqueue", false, true},       {"Running", "Running", false, true},
      {"Unknown", "Unknown", false, true},       {"Completed", "Completed", false, false},
      {"being deleted", "Running", true, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PodGroup pg;
    pg.status.phase = c.phase;
    if (c.deleting) pg.meta.deletion_timestamp = Time();
    EXPECT_EQ(QueueHolds(pg), c.want);
  }
}

// Volcano's webhook (pkg/webhooks/admission/jobs/validate/admit_job.go)
// takes Jobs into leaf queues only.
TEST(AdmitToQueueTest, OnlyALeafQueueTakesANewJob) {
  Job job;
  job.spec.queue = "eng";
  Queue q;
  q.meta.name = "eng";
  EXPECT_TRUE(AdmitToQueue(job, &q, {}).ok());
  Status s = AdmitToQueue(job, &q, {"eng-infra", "eng-ml"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "spec.queue: can only submit job to leaf queue, queue `eng` has 2 child queues");
}

TEST(AdmitToQueueTest, OnlyAnOpenQueueTakesANewJob) {
  Job job;
  job.spec.queue = "research";
  struct Case {
    std::string name;
    std::optional<std::string> state;  // nullopt: no such Queue known
    bool admitted;
  };
  const std::vector<Case> cases = {
      {"Open", "Open", true},
      {"no state yet", "", true},
      {"unknown queue", std::nullopt, true},  // waits QueueNotFound in the extender
      {"Closing", "Closing", false},
      {"Closed", "Closed", false},
      {"Unknown", "Unknown", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Queue q;
    q.meta.name = "research";
    if (c.state) q.status.state = *c.state;
    Status s = AdmitToQueue(job, c.state ? &q : nullptr);
    EXPECT_EQ(s.ok(), c.admitted) << s;
    if (!c.admitted) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(s.message(),
                "spec.queue: can only submit job to queue with state `Open`, queue "
                "`research` status is `" +
                    *c.state + "`");
    }
  }
}

}  // namespace
}  // namespace muster::reconciler
