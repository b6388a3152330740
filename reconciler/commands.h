// Commands (bus.volcano.sh/v1alpha1 Command), pure: what one Command asks of
// muster - an action on a Job or on a Queue - or why it cannot be run.
//
// vcctl writes them (volcano-sh/volcano pkg/cli/util/util.go
// CreateJobCommand, CreateQueueCommand): `vcctl job suspend` -> AbortJob and
// `vcctl job resume` -> ResumeJob on a Job of the Command's namespace,
// `vcctl queue operate -a open|close` -> OpenQueue / CloseQueue on a Queue;
// metadata.generateName `<target>-<action lowercased>-`, the target as
// controller owner and as `target`. Volcano's job controller
// (pkg/controllers/job/job_controller_handler.go processNextCommand) and
// queue controller (pkg/controllers/queue/queue_controller.go
// handleCommand) delete the Command first, then queue its action: a Command
// runs at most once. queue_controller.h does the same.
//
// Where muster departs from Volcano (so that no Command is silently left
// behind or run against the wrong object):
//   - a Command neither controller can run (no action, no target, a target
//     that is neither a Volcano Job nor a Queue, an action the target has
//     not) is refused with an error naming the field, then deleted; Volcano
//     ignores one its informer filters miss (it stays forever) and hands any
//     action string to the job state machine;
//   - RestartTask / RestartPod / RestartPartition are refused: they act on
//     the pod of a policy's event, which a Command does not carry;
//   - a target.uid that is not the uid of the object of that name (the Job
//     was deleted and made again) is refused; Volcano goes by name.
//
// Thread-compatible; every function is pure.
#pragma once

#include <string>
#include <string_view>

#include "model/command.h"
#include "model/object_meta.h"
#include "model/status.h"
#include "reconciler/lifecycle.h"

namespace muster::reconciler {

inline constexpr std::string_view kCommandKind = "Command";
// What a Command's target is.
inline constexpr std::string_view kQueueApiVersion = "scheduling.volcano.sh/v1beta1";
inline constexpr std::string_view kQueueKind = "Queue";
// Volcano's Event reason on the Job when a Command is taken
// (batch.CommandIssued).
inline constexpr std::string_view kCommandIssued = "CommandIssued";
// muster's reason for a Command it refuses (Warning).
inline constexpr std::string_view kInvalidCommand = "InvalidCommand";

enum class CommandTarget { kJob, kQueue };

// A Command muster can run.
struct CommandPlan {
  CommandTarget target = CommandTarget::kJob;
  // Job: "namespace/name" (the Command's namespace); Queue: its name.
  std::string key;
  std::string uid;     // target.uid ("" when the Command names none)
  std::string action;  // lifecycle.h kAbortJob...; queue_state.h kOpenQueue, kCloseQueue
  friend bool operator==(const CommandPlan&, const CommandPlan&) = default;
};

// The plan of `command`, or InvalidArgument whose message starts with the
// field that is wrong ("action: ...", "target: ...", "target.kind: ...").
StatusOr<CommandPlan> PlanCommand(const Command& command);

// The target as found (`meta` null: no such object): OK, or NotFound /
// FailedPrecondition naming target.name / target.uid.
Status CheckTarget(const CommandPlan& plan, const ObjectMeta* meta);

// The Request a job Command becomes: an explicit action (lifecycle.h), run
// whatever the job's policies say.
Request JobRequest(const CommandPlan& plan);

// "Job ml/train" / "Queue research": for messages.
std::string TargetName(const CommandPlan& plan);

}  // namespace muster::reconciler
