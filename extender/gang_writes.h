// PlanWrites: the API writes a gang controller pass decided, as typed values.
//
// Pure: no I/O, no metrics, no clock (the pass's `now` is an input). Given
// what the pass saw and decided, and the controller's memory of earlier
// passes (WriteMemory, updated in place), it returns the writes to send:
//   - LiftGate: a reserved member's muster.io/gang scheduling gate lifted,
//     with a required node affinity to its reserved node (pinned) when
//     asked and the pod has no affinity of its own;
//   - AnnotateReservedNode: an ungated reserved member touched
//     (muster.io/reserved-node: its node) so kube-scheduler retries it now
//     rather than after its unschedulable flush;
//   - PodGroupStatusWrite: a PodGroup's status (phase, counts, condition);
//   - AnswerBrokenPodGroup: the Unschedulable condition of a PodGroup that
//     does not decode;
//   - QueueStatusWrite: a Queue's status (queue_status_writer.h);
//   - CreateEvent: an Event on a PodGroup or Queue;
//   - EvictPod: an eviction of a preemption victim (Eviction API).
// and, per gang, what the observer reports (GangOutcome).
//
// Each write has a WriteSlot: its rank in the executor's batch (gates first:
// they decide how soon a gang starts) and the object it writes, so the
// latest write per object wins while not yet sent. Events and evictions
// have no key: every one is sent.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "extender/gang_inputs.h"
#include "extender/gang_record.h"
#include "extender/queue_status_writer.h"
#include "extender/queue_step.h"
#include "gang/gang.h"
#include "model/api_objects.h"
#include "model/time.h"

namespace muster::extender {

// Set on an ungated member when it is reserved (the node): the update makes
// kube-scheduler retry the pod at once.
inline constexpr std::string_view kAnnotationReservedNode = "muster.io/reserved-node";

struct LiftGate {
  std::string gang;  // key
  std::string namespace_;
  std::string name;
  std::string uid;
  size_t gate_index = 0;  // of the gang gate in spec.schedulingGates
  std::string node;       // reserved on
  bool pin = false;       // require `node` by affinity as the gate goes
};

struct AnnotateReservedNode {
  std::string gang;  // key
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node;
};

struct PodGroupStatusWrite {
  std::string key;
  std::string namespace_;
  std::string name;
  PodGroupStatus status;
};

// A merge patch of the status of a PodGroup muster cannot decode: its
// conditions, and the phase when it has none ("": keep the phase).
struct AnswerBrokenPodGroup {
  std::string key;
  std::string namespace_;
  std::string name;
  std::string phase;
  Condition condition;
};

struct CreateEvent {
  Event event;
};

struct EvictPod {
  std::string namespace_;
  std::string name;
  std::string uid;
};

using GangWrite = std::variant<LiftGate, AnnotateReservedNode, PodGroupStatusWrite,
                               AnswerBrokenPodGroup, QueueStatusWrite, CreateEvent, EvictPod>;

// The executor's batch order, lowest first.
enum WriteRank : int {
  kRankPod = 0,  // LiftGate, AnnotateReservedNode
  kRankPodGroupStatus = 1,
  kRankBrokenPodGroup = 2,
  kRankQueueStatus = 3,
  kRankEvent = 4,
  kRankEviction = 5,
};

struct WriteSlot {
  int rank = 0;
  // The object written: "<gang key>\n<pod uid>" for a pod, the PodGroup key,
  // the Queue name; empty (events, evictions): never coalesced.
  std::string key;
};
WriteSlot SlotOf(const GangWrite& write);

// What the controller remembers between passes for its writes.
struct WriteMemory {
  GangRecords gangs;
  // Pods evicted (by uid): they count as terminating until then.
  std::map<std::string, Time> evicted;
  QueueStatusRecords queues;
  // PodGroup key / Queue name -> "uid\nproblem" answered (once each).
  std::map<std::string, std::string, std::less<>> broken_groups_said;
  std::map<std::string, std::string, std::less<>> broken_queues_said;
};

// Forgets having written the object of a write that failed or was not sent
// (its slot), so the next pass plans it again. Events and evictions are not
// retried.
void ForgetUnwritten(const WriteSlot& slot, WriteMemory& memory);

struct WriteOptions {
  bool pin_members = true;  // GangControllerOptions::pin_members
  // A waiting gang's message alone is rewritten at most this often.
  std::chrono::seconds status_message_interval{5};
  std::chrono::milliseconds queue_status_interval{1000};
  // A gang that evicted victims does not evict again before this.
  std::chrono::seconds preemption_grace{30};
  // For the words of the reservation-expired Event.
  Duration reservation_timeout{};
};

// What one pass saw and decided (all read-only).
struct PassFacts {
  const GangInputs& inputs;
  const QueueStep& queues;
  const gang::PassResult& result;
  const std::vector<std::string>& applied;  // gangs whose plan was reserved
  Time now;
  size_t plans_held = 0;  // plans dropped while freed capacity settles (gang/settle.h)
};

// A gang after the pass, for the observer (debug JSON, metrics).
struct GangOutcome {
  std::string key;
  std::string phase;  // of the status the pass computed
  int32_t min_member = 0;
  int64_t members = 0;
  int32_t scheduled = 0;
  int32_t reserved = 0;
  int32_t priority = 0;
  std::optional<gang::Wait> wait;
  // Admission to minMember scheduled, when the gang got there this pass.
  std::optional<Duration> waited;
};

struct WritePlan {
  std::vector<GangWrite> writes;
  std::vector<GangOutcome> gangs;  // in the inputs' order
};

// Plans the pass's writes and updates `memory`: the gangs' records (progress,
// members woken, statuses written, the wait clock, preemptions in flight),
// the pods evicted, the Queue statuses and broken objects answered. A gang
// not in the inputs any more (finished and deleted) leaves no record.
WritePlan PlanWrites(const PassFacts& facts, const WriteOptions& options, WriteMemory& memory);

// The members `writes` hand to kube-scheduler (gates lifted, reserved
// ungated members woken): each comes back to the extender's bind within
// moments, all of a gang at once when the bind barrier releases it.
int BindsAhead(const std::vector<GangWrite>& writes);

}  // namespace muster::extender
