#include "reconciler/queue_state.h"

namespace muster::reconciler {

std::string NextQueueState(std::string_view state, std::string_view action, int unfinished) {
  const std::string_view closing_or_closed = unfinished > 0 ? kQueueClosing : kQueueClosed;
  if (action == kOpenQueue) return std::string(kQueueOpen);  // from every state
  if (state.empty() || state == kQueueOpen) {
    return std::string(action == kCloseQueue ? closing_or_closed : kQueueOpen);
  }
  if (state == kQueueClosing) return std::string(closing_or_closed);
  // Closed stays Closed (closed.go), even when PodGroups of the queue
  // appear: only OpenQueue reopens it.
  if (state == kQueueClosed) return std::string(kQueueClosed);
  // Unknown, and states Volcano does not know (handled as Unknown).
  return std::string(action == kCloseQueue ? closing_or_closed : kQueueUnknown);
}

bool QueueHolds(const PodGroup& pg) {
  return !pg.meta.deletion_timestamp.has_value() && pg.status.phase != kPodGroupCompleted;
}

Status AdmitToQueue(const Job& job, const Queue* queue, const std::vector<std::string>& children) {
  if (queue == nullptr) return Status::Ok();
  if (!queue->IsOpen()) {
    return InvalidArgumentError(
        "spec.queue: can only submit job to queue with state `Open`, queue `" + job.spec.queue +
        "` status is `" + queue->status.state + "`");
  }
  if (!children.empty()) {
    return InvalidArgumentError("spec.queue: can only submit job to leaf queue, queue `" +
                                job.spec.queue + "` has " + std::to_string(children.size()) +
                                " child queues");
  }
  return Status::Ok();
}

}  // namespace muster::reconciler
