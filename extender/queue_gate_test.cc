// The queue gate: which plain pods (and ungated members of PodGroups of one)
// filter lets start, by their queue's state, capability and deserved share.
#include "extender/queue_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extender/queue_step.h"
#include "gang/gang.h"

namespace muster::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using namespace std::chrono_literals;

const Time kPass = Time::FromUnixSeconds(1000);

Resources Cpu(int64_t cores) { return Resources{{"cpu", cores * 1000}}; }

QueueAsk Ask(std::string uid, std::string queue, int64_t cores) {
  return QueueAsk{.pod_uid = std::move(uid), .queue = std::move(queue), .request = Cpu(cores)};
}

// research (capability 4 cpu, 1 held) under root; batch (child of org, whose
// capability is 6 cpu with 5 held); closed; default without limits.
QueueBoard Board() {
  QueueBoard board{.at = kPass};
  board.queues["default"] = QueueRoom{.path = {"default"}};
  board.queues["research"] =
      QueueRoom{.path = {"research"}, .room = Cpu(3), .allocated = Cpu(1), .deserved = Cpu(4)};
  board.queues["org"] = QueueRoom{.path = {"org"}, .room = Cpu(1), .allocated = Cpu(5)};
  board.queues["batch"] = QueueRoom{.path = {"batch", "org"}, .allocated = Cpu(5)};
  board.queues["closed"] = QueueRoom{.open = false, .path = {"closed"}};
  return board;
}

void Publish(QueueGate& gate, QueueBoard board, std::vector<std::string> placed = {}) {
  gate.Publish(
      std::move(board),
      [&](std::string_view uid) { return std::ranges::find(placed, uid) != placed.end(); }, 30s);
}

struct AdmitCase {
  std::string name;
  std::vector<QueueAsk> earlier;  // admitted or not, in order, before `ask`
  QueueAsk ask;
  bool want_admitted;
  std::string_view want_code = {};
  std::string want_message = "";
};

const std::vector<AdmitCase> kAdmitCases = {
    {.name = "an unlimited queue admits", .ask = Ask("p", "default", 64), .want_admitted = true},
    {.name = "within the capability left", .ask = Ask("p", "research", 3), .want_admitted = true},
    {.name = "beyond it",
     .ask = Ask("p", "research", 4),
     .want_admitted = false,
     .want_code = gang::kWaitQueueCapability,
     .want_message = "queue research is at its capability: needs cpu=4 (3 left)"},
    {.name = "earlier admissions count at once",
     .earlier = {Ask("a", "research", 2)},
     .ask = Ask("p", "research", 2),
     .want_admitted = false,
     .want_code = gang::kWaitQueueCapability,
     .want_message = "queue research is at its capability: needs cpu=2 (1 left)"},
    {.name = "refusals charge nothing",
     .earlier = {Ask("a", "research", 8)},
     .ask = Ask("p", "research", 3),
     .want_admitted = true},
    {.name = "a parent's capability binds its children",
     .ask = Ask("p", "batch", 2),
     .want_admitted = false,
     .want_code = gang::kWaitQueueCapability,
     .want_message = "queue org is at its capability: needs cpu=2 (1 left)"},
    {.name = "resources the capability does not name are unlimited",
     .ask = QueueAsk{.pod_uid = "p", .queue = "research", .request = Resources{{"memory", 1}}},
     .want_admitted = true},
    {.name = "a missing queue",
     .ask = Ask("p", "nope", 1),
     .want_admitted = false,
     .want_code = kWaitQueueNotFound,
     .want_message = "queue \"nope\" does not exist: create it, or name another in the "
                     "scheduling.volcano.sh/queue-name annotation"},
    {.name = "a closed queue",
     .ask = Ask("p", "closed", 1),
     .want_admitted = false,
     .want_code = kWaitQueueClosed,
     .want_message = "queue \"closed\" is not Open: it admits no new pods"},
    {.name = "asking again is no second charge",
     .earlier = {Ask("p", "research", 3)},
     .ask = Ask("p", "research", 3),
     .want_admitted = true},
};

// Volcano's proportion plugin admits a task while its queue's allocation
// plus the task's request stays within the queue's capability
// (pkg/scheduler/plugins/proportion/proportion.go: AllocatableFn), and a
// closed queue takes no new work (pkg/scheduler/actions/enqueue/enqueue.go).
TEST(QueueGateTest, AdmitsByQueueStateAndCapabilityAlongThePath) {
  for (const AdmitCase& c : kAdmitCases) {
    SCOPED_TRACE(c.name);
    QueueGate gate;
    Publish(gate, Board());
    for (const QueueAsk& earlier : c.earlier) gate.Admit(earlier, kPass);
    const QueueAnswer answer = gate.Admit(c.ask, kPass);
    EXPECT_EQ(answer.admitted, c.want_admitted);
    EXPECT_EQ(answer.code, c.want_code);
    EXPECT_EQ(answer.message, c.want_message);
    EXPECT_EQ(gate.waiting().contains(c.ask.pod_uid), !c.want_admitted);
  }
}

// Idle capacity is lent past a deserved share only while no queue owed its
// own waits for it (the gang pass's rule, gang/gang.h; Volcano's proportion
// plugin never lends: pkg/scheduler/plugins/proportion/proportion.go
// OverusedFn).
TEST(QueueGateTest, NoQueuePastItsDeservedShareWhileAnOwedQueueWaits) {
  struct Case {
    std::string name;
    std::string owed_waiting;
    std::string queue;
    int64_t cores;
    bool want_admitted;
  };
  const std::vector<Case> cases = {
      {"nobody owed waits: lent past the share", "", "research", 3, true},
      {"another queue owed waits: within the share", "batch", "research", 3, true},
      {"another queue owed waits: not past the share", "batch", "research", 4, false},
      {"the owed queue itself is not held back", "research", "research", 3, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    QueueBoard board = Board();
    board.queues["research"].room.reset();  // no capability: the share alone decides
    for (auto& [name, room] : board.queues) room.owed_waiting = c.owed_waiting;
    QueueGate gate;
    Publish(gate, board);
    EXPECT_EQ(gate.Admit(Ask("p", c.queue, c.cores), kPass).admitted, c.want_admitted);
  }
}

// A queue that exists but does not decode is not "missing": its pods are
// told what is wrong with it.
TEST(QueueGateTest, AQueueThatDoesNotDecodeHoldsItsPodsNamingTheField) {
  QueueGate gate;
  QueueBoard board = Board();
  board.broken["negative"] = R"(queue "negative" cannot be read: spec.capability.cpu: ...)";
  Publish(gate, board);
  const QueueAnswer answer = gate.Admit(Ask("p", "negative", 1), kPass);
  EXPECT_FALSE(answer.admitted);
  EXPECT_EQ(answer.code, kWaitQueueNotFound);
  EXPECT_EQ(answer.message, board.broken["negative"]);
  EXPECT_TRUE(gate.Admit(Ask("q", "default", 1), kPass).admitted);
}

// Before the first pass nobody knows the queues: pods wait, and the pass
// plans them.
TEST(QueueGateTest, UnpublishedRefusesAndRemembersTheWait) {
  QueueGate gate;
  const QueueAnswer answer = gate.Admit(Ask("p", "default", 1), kPass);
  EXPECT_FALSE(answer.admitted);
  EXPECT_EQ(answer.code, kWaitQueuesUnread);
  EXPECT_THAT(gate.waiting(), ElementsAre(std::pair(std::string("p"), kPass)));
}

// A charge lasts until a pass sees the pod placed (the queue's allocation
// has it then) or the pod is deleted; a pod the pass did not see yet - the
// watch lags behind kube-scheduler's filter request - keeps it; a pod that
// never binds frees it after the TTL.
TEST(QueueGateTest, ChargesEndOncePassesSeeThePodsPlacedOrTheyAreDeleted) {
  QueueGate gate;
  Publish(gate, Board());
  gate.Admit(Ask("placed", "research", 1), kPass);
  gate.Admit(Ask("unseen", "research", 1), kPass);
  gate.Admit(Ask("newer", "research", 1), kPass + 2s);
  EXPECT_EQ(gate.charged().at("research"), Cpu(3));

  QueueBoard next = Board();
  next.at = kPass + 1s;  // read before "newer" was admitted
  Publish(gate, next, /*placed=*/{"placed", "newer"});
  EXPECT_EQ(gate.charged().at("research"), Cpu(2)) << "placed ends; unseen and newer stay";
  EXPECT_FALSE(gate.Admit(Ask("more", "research", 2), kPass + 2s).admitted);

  gate.Forget("unseen");  // deleted
  EXPECT_EQ(gate.charged().at("research"), Cpu(1));

  next.at = kPass + 40s;  // past the TTL: kube-scheduler gave up on it
  Publish(gate, next);
  EXPECT_THAT(gate.charged(), IsEmpty());
  EXPECT_TRUE(gate.waiting().contains("more")) << "a wait lasts while the pod does";
  Publish(gate, next, /*placed=*/{"more"});
  EXPECT_THAT(gate.waiting(), IsEmpty());
}

// The board a pass publishes: every queue of the step, open or not, with
// what the pass just reserved taken off its capability.
TEST(QueueGateTest, BoardOfAPassTakesItsReservations) {
  QueueStep step;
  step.shares.queues["research"] =
      queue::QueueShare{.name = "research", .path = {"research"}, .deserved = Cpu(8)};
  step.shares.queues["default"] = queue::QueueShare{.name = "default", .path = {"default"}};
  step.limits["research"] =
      gang::QueueLimit{.room = Cpu(4), .allocated = Cpu(2), .deserved = Cpu(8)};
  step.queue_of["ml/waiting"] = "research";
  std::map<std::string, Queue, std::less<>> queues;
  queues["research"].meta.name = "research";
  queues["research"].status.state = "Closed";
  const QueueBoard board =
      BoardOf(step, queues, {{"research", Cpu(1)}},
              {gang::Wait{.key = "ml/waiting", .reason = gang::kWaitResources}}, kPass);
  ASSERT_TRUE(board.queues.contains("default"));
  const QueueRoom& research = board.queues.at("research");
  EXPECT_FALSE(research.open);
  EXPECT_EQ(research.room, Cpu(3));
  EXPECT_EQ(research.allocated, Cpu(3));
  EXPECT_EQ(research.owed_waiting, "research") << "3 of 8 held: owed, and its gang waits";
}

}  // namespace
}  // namespace muster::extender
