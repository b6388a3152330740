// Queue state, pure: Volcano's queue controller's state machine
// (volcano-sh/volcano pkg/controllers/queue/state/{open,closing,closed,
// unknown,factory}.go) and its one consequence for Jobs, Volcano's admission
// rule (pkg/webhooks/admission/jobs/validate/admit_job.go) that a new Job
// goes only into an Open queue.
//
//   state \ action   OpenQueue   CloseQueue                 SyncQueue
//   Open, ""         Open        Closing | Closed (none)    Open
//   Closing          Open        Closing | Closed (none)    Closing | Closed (none)
//   Closed           Open        Closed                     Closed
//   Unknown          Open        Closing | Closed (none)    Unknown
//
// "none": no PodGroup of the queue is left unfinished (QueueHolds).
// SyncQueue is what every queue, PodGroup add/phase change/delete and resync
// runs; OpenQueue / CloseQueue come from Commands (commands.h).
//
// Who writes what: status.state is the reconciler's (queue_controller.h),
// as Volcano's queue controller's; the extender writes allocated and the
// PodGroup counters, as Volcano's scheduler. Each merge-patches its own
// fields only (kube/codec EncodeQueueStatePatch, EncodeQueueStatusPatch).
// The extender admits no new gang of a queue that is not Open
// (extender/queue_step.h kWaitQueueClosed); running gangs run on.
//
// Where muster departs from Volcano:
//   - a PodGroup that is Completed, or being deleted, no longer keeps its
//     queue Closing (Volcano counts every PodGroup it has seen until its
//     delete event: a Completed PodGroup of a plain pod gang would hold the
//     queue Closing forever; a Job's is deleted when it finishes anyway);
//   - a state Volcano does not know is handled as Unknown (Volcano's
//     factory returns no state and the queue is never synced again).
//
// Thread-compatible; every function is pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/job.h"
#include "model/pod_group.h"
#include "model/queue.h"
#include "model/status.h"

namespace muster::reconciler {

// Queue states (scheduling/v1beta1 QueueState).
inline constexpr std::string_view kQueueOpen = "Open";
inline constexpr std::string_view kQueueClosing = "Closing";
inline constexpr std::string_view kQueueClosed = "Closed";
inline constexpr std::string_view kQueueUnknown = "Unknown";

// Queue actions (bus/v1alpha1).
inline constexpr std::string_view kOpenQueue = "OpenQueue";
inline constexpr std::string_view kCloseQueue = "CloseQueue";
inline constexpr std::string_view kSyncQueue = "SyncQueue";

// The state after `action` (an unknown action syncs) for a queue in `state`
// of which `unfinished` PodGroups remain.
std::string NextQueueState(std::string_view state, std::string_view action, int unfinished);

// Whether `pg` keeps its queue Closing: it exists, is not being deleted and
// is not Completed.
bool QueueHolds(const PodGroup& pg);

// Volcano's admission of a new Job: its queue must be Open. `queue` null
// (not known yet, or absent): admitted - the PodGroup then waits with
// QueueNotFound (extender/queue_step.h), as before. A queue with no state
// yet is Open (Volcano's controller makes it so at once). The error is
// InvalidArgument "spec.queue: can only submit job to queue with state
// `Open`, queue `q` status is `Closed`" (Volcano's words). A queue with
// child queues (`children`: their names) takes no Job either - only leaves
// do: "spec.queue: can only submit job to leaf queue, queue `q` has 2 child
// queues" (pkg/webhooks/admission/jobs/validate/admit_job.go).
Status AdmitToQueue(const Job& job, const Queue* queue,
                    const std::vector<std::string>& children = {});

}  // namespace muster::reconciler
