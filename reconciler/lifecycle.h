// The job lifecycle, pure: a Volcano Job, what exists of it (pods, PodGroup)
// and one request (an event from a pod, or a plain sync) in; a Plan out - the
// pods to create and to kill, the PodGroup to create or delete, the status to
// write, the Kubernetes Events to record. The controller (controller.h) does
// the I/O; nothing here reads a clock or the API.
//
// What it reproduces (Volcano's pkg/controllers/job/: job_controller_handler.go,
// job_controller_actions.go, state/):
//   - policy resolution: task policies, then job policies, first match wins;
//     requests from pods of an older job version are plain syncs;
//   - Volcano's state machine (Pending, Running, Restarting, Aborting,
//     Aborted, Completing, Completed, Terminating, Terminated, Failed) and its
//     status counters and conditions;
//   - the enqueue gate: pods are created only once the PodGroup has left
//     Pending (the extender's gang controller admits it to Inqueue);
//   - a whole-job kill (RestartJob, AbortJob, TerminateJob, CompleteJob,
//     ResumeJob) bumps status.version and deletes the PodGroup; pods of an
//     older version that still run are killed on the next sync.
//
// Where muster departs from Volcano (each one because a restart of the
// reconciler must be safe, see controller.h):
//   - the version is bumped once per kill *action*, not on every later sync
//     of a finished job (Volcano's killJob bumps it each time);
//   - a sync also kills live pods of an older version (Volcano relies on
//     the kill having deleted them; after a crash between the status write
//     and the deletes they would otherwise pass for the new version);
//   - PodEvicted is raised for a deletion by someone else only; Volcano
//     also raises PodFailed for the same eviction (its issue #5885).
//
// Implemented in lifecycle.cc (policy resolution, the state machine, the
// PodGroup) and pod_changes.cc (what a pod change raises, what a pod says of
// its task, index and version).
//
// Thread-compatible; every function is pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/job.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/time.h"

namespace muster::reconciler {

// Job phases (JobPhase).
inline constexpr std::string_view kPending = "Pending";
inline constexpr std::string_view kRunning = "Running";
inline constexpr std::string_view kRestarting = "Restarting";
inline constexpr std::string_view kAborting = "Aborting";
inline constexpr std::string_view kAborted = "Aborted";
inline constexpr std::string_view kCompleting = "Completing";
inline constexpr std::string_view kCompleted = "Completed";
inline constexpr std::string_view kTerminating = "Terminating";
inline constexpr std::string_view kTerminated = "Terminated";
inline constexpr std::string_view kFailed = "Failed";

// Completed, Failed, Terminated: the job is over; only the TTL acts on it.
bool IsFinished(std::string_view phase);

// Events (bus/v1alpha1) and actions. kSync is Volcano's internal SyncJob:
// reconcile pods and status, no policy.
inline constexpr std::string_view kPodFailed = "PodFailed";
inline constexpr std::string_view kPodEvicted = "PodEvicted";
inline constexpr std::string_view kPodPendingEvent = "PodPending";
inline constexpr std::string_view kTaskCompleted = "TaskCompleted";
inline constexpr std::string_view kTaskFailed = "TaskFailed";
inline constexpr std::string_view kUnknownEvent = "Unknown";
inline constexpr std::string_view kAnyEvent = "*";

inline constexpr std::string_view kSync = "SyncJob";
inline constexpr std::string_view kAbortJob = "AbortJob";
inline constexpr std::string_view kRestartJob = "RestartJob";
inline constexpr std::string_view kRestartTask = "RestartTask";
inline constexpr std::string_view kRestartPod = "RestartPod";
inline constexpr std::string_view kTerminateJob = "TerminateJob";
inline constexpr std::string_view kCompleteJob = "CompleteJob";
inline constexpr std::string_view kResumeJob = "ResumeJob";

// One reason to look at a job.
struct Request {
  std::string event;  // "" = plain sync; else one of the events above
  std::string task;   // the task of the pod that raised it
  std::string pod;    // its name
  std::string pod_uid;
  int32_t pod_version = 0;           // its volcano.sh/job-version
  std::optional<int32_t> exit_code;  // PodFailed: first container's exit code
  std::string action;                // explicit action (a Command), else ""
  // Set when a policy's timeout has elapsed: the action runs now if the pod
  // is still in the state that raised the event.
  bool timeout_elapsed = false;
  friend bool operator==(const Request&, const Request&) = default;
};

// What exists of one job. Pointers stay owned by the caller.
struct JobSnapshot {
  const Job* job = nullptr;             // defaulted and valid (job_admission.h)
  std::vector<const Pod*> pods;         // pods controlled by this job (its UID)
  const PodGroup* pod_group = nullptr;  // null while absent
};

// A replica to create: job.spec.tasks[task], index `index`.
struct PodSlot {
  size_t task = 0;
  int index = 0;
  friend bool operator==(const PodSlot&, const PodSlot&) = default;
};

// A Kubernetes Event to record on the Job.
struct JobEventRecord {
  std::string type;  // Normal | Warning
  std::string reason;
  std::string message;
  friend bool operator==(const JobEventRecord&, const JobEventRecord&) = default;
};

// One pod a plan kills: the instance the plan saw.
struct PodKill {
  std::string name;
  std::string uid;  // empty: created, not yet seen with its UID (not killed)
  friend bool operator==(const PodKill&, const PodKill&) = default;
};

struct Plan {
  std::string action;  // what ran (kSync when no policy matched)
  JobStatus status;    // the status to hold; write it when it differs
  // Objects of the job's plugins must exist (svc Service/ConfigMap, ssh Secret).
  bool ensure_job_objects = false;
  enum class PodGroupOp { kNone, kCreate, kUpdate, kDelete };
  PodGroupOp pod_group_op = PodGroupOp::kNone;
  PodGroup pod_group;  // the desired PodGroup for kCreate/kUpdate
  // Mark volcano.sh/controller-out-of-sync, then delete: each pod by its name
  // and the UID the plan saw, so a successor of that name made since (the
  // next version's) is never marked or deleted for it.
  std::vector<PodKill> kill_pods;
  std::vector<PodSlot> create_pods;
  std::vector<JobEventRecord> events;
  // A policy with a timeout matched: send this request again at `due`.
  std::optional<Request> delayed;
  Time delayed_due;
  // Look at the job again at this time (TTL, PodPending timeouts).
  std::optional<Time> recheck_at;
  bool delete_job = false;  // ttlSecondsAfterFinished has elapsed
};

// The policy (action, timeout) for `request`: explicit action, then the
// event's task policies, then the job's; kSync when none matches.
struct ResolvedAction {
  std::string action;
  std::optional<Duration> timeout;
};
ResolvedAction ResolveAction(const Job& job, const Request& request);

// Runs `request` against the snapshot at `now`.
// REQUIRES: snapshot.job non-null, defaulted and valid.
Plan Reconcile(const JobSnapshot& snapshot, const Request& request, Time now);

// How the controller writes `plan.status` over `job.status` (it coalesces
// status writes, controller.h). A status held back is not kept anywhere:
// the next sync plans afresh from the Job's written status and the pods, so
// only a status that sync derives again may wait: the pod counters, and a
// new Job's first Pending or Running. A plan that ran an action is written
// now (its phase and version are recorded nowhere else).
enum class StatusWrite {
  kNone,     // equal: nothing to write
  kNow,      // write it now
  kMayWait,  // may be held back and written together with what follows
};
StatusWrite StatusWriteOf(const Job& job, const Plan& plan);

// The PodGroup a job asks for: name <job>-<uid>, minMember,
// minTaskMember, queue, priorityClassName, minResources, networkTopology,
// owner reference, the job's labels and annotations.
PodGroup DesiredPodGroup(const Job& job);

// The live pods of a task after a change, asked for only when a request
// depends on them (TaskCompleted, TaskFailed).
using TaskPods = std::function<std::vector<const Pod*>()>;

// The requests a pod change raises. `before` is null for an add,
// `after` null for a delete. `task_pods` is called only when the pod turned
// Succeeded or its container restarts rose (the pod informer calls this for
// every event, and the task's pods are a walk over the job). A pod the
// controller killed raises nothing but a plain sync: one marked
// volcano.sh/controller-out-of-sync, or `killed_by_us` (its kill is still
// expected: the copy may predate the mark, or the mark failed).
std::vector<Request> PodChangeRequests(const Job& job, const Pod* before, const Pod* after,
                                       const TaskPods& task_pods, bool killed_by_us = false);

// The task and index of a pod of a job (annotations, then labels; the index
// also from the name's last segment). False when the pod has no task.
bool PodTaskAndIndex(const Pod& pod, std::string* task, int* index);
int32_t PodVersion(const Pod& pod);

// The task of `job` named `name`, or null.
const TaskSpec* FindTask(const Job& job, std::string_view name);

}  // namespace muster::reconciler
