// The Queue status writes of a gang controller pass: what each existing
// Queue's gangs hold (status.allocated) and its PodGroups by phase
// (status.pending, inqueue, running, unknown, completed), as Volcano's
// queue controller keeps them.
//
// Pure: no I/O; `records` is the writer's memory between passes.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "extender/queue_step.h"
#include "model/api_objects.h"
#include "model/time.h"

namespace muster::extender {

// A merge patch of one Queue's status subresource.
struct QueueStatusWrite {
  std::string name;
  QueueStatus status;
};

// The status last written to a Queue, and when.
struct QueueStatusRecord {
  QueueStatus written;
  Time at;
};
using QueueStatusRecords = std::map<std::string, QueueStatusRecord, std::less<>>;  // by name

// A gang's phase after the pass (views of the pass's outcomes).
struct GangPhase {
  std::string_view key;
  std::string_view phase;
};

// The status writes for `queues` (by name, as the watch saw them): every
// resource of the cluster's total in allocated, zeros included (a merge
// patch only removes a key written as null, so a resource the queue let go
// must read 0), and the PodGroups of each phase (`phases`: each gang's
// phase after the pass; `step.queue_of` names each gang's queue). A Queue is
// written when its status differs from both what the watch shows and what
// was last written, at most once per `interval`. Records of Queues gone are
// dropped.
std::vector<QueueStatusWrite> PlanQueueStatusWrites(
    const std::map<std::string, Queue, std::less<>>& queues, const QueueStep& step,
    const std::vector<GangPhase>& phases, Time now, std::chrono::milliseconds interval,
    QueueStatusRecords& records);

}  // namespace muster::extender
