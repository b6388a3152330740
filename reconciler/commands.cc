#include "reconciler/commands.h"

#include <algorithm>
#include <array>

#include "model/object_meta.h"
#include "reconciler/naming.h"
#include "reconciler/queue_state.h"

namespace muster::reconciler {
namespace {

// The job actions a Command may carry: the whole-job ones of lifecycle.h.
constexpr std::array<std::string_view, 5> kJobActions = {kAbortJob, kResumeJob, kRestartJob,
                                                         kTerminateJob, kCompleteJob};
// Actions that act on one pod or task: only a policy's event names one.
constexpr std::array<std::string_view, 3> kPodActions = {kRestartTask, kRestartPod,
                                                         "RestartPartition"};
constexpr std::array<std::string_view, 2> kQueueActions = {kOpenQueue, kCloseQueue};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

template <size_t N>
std::string Listed(const std::array<std::string_view, N>& list) {
  std::string out;
  for (std::string_view a : list) {
    if (!out.empty()) out += ", ";
    out += a;
  }
  return out;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

StatusOr<CommandPlan> PlanCommand(const Command& command) {
  if (command.action.empty()) {
    return InvalidArgumentError(
        "action: missing (vcctl writes AbortJob, ResumeJob, OpenQueue or CloseQueue)");
  }
  if (!command.target.has_value()) {
    return InvalidArgumentError("target: missing (the Job or Queue the Command is for)");
  }
  const OwnerReference& target = *command.target;
  CommandPlan plan{.uid = target.uid, .action = command.action};
  if (target.kind == kJobKind) {
    if (target.api_version != kJobApiVersion) {
      return InvalidArgumentError("target.apiVersion: " + Quoted(target.api_version) +
                                  " is not a Volcano Job's (" + std::string(kJobApiVersion) + ")");
    }
    plan.target = CommandTarget::kJob;
  } else if (target.kind == kQueueKind) {
    if (target.api_version != kQueueApiVersion) {
      return InvalidArgumentError("target.apiVersion: " + Quoted(target.api_version) +
                                  " is not a Volcano Queue's (" + std::string(kQueueApiVersion) +
                                  ")");
    }
    plan.target = CommandTarget::kQueue;
  } else {
    return InvalidArgumentError("target.kind: " + Quoted(target.kind) + " is not a Volcano Job (" +
                                std::string(kJobApiVersion) + ") or Queue (" +
                                std::string(kQueueApiVersion) + ")");
  }
  if (target.name.empty()) return InvalidArgumentError("target.name: missing");
  if (plan.target == CommandTarget::kJob) {
    if (OneOf(kPodActions, command.action)) {
      return InvalidArgumentError("action: " + Quoted(command.action) +
                                  " acts on the pod of a policy's event, which a Command does "
                                  "not name (a Command on a Job runs " +
                                  Listed(kJobActions) + ")");
    }
    if (!OneOf(kJobActions, command.action)) {
      return InvalidArgumentError("action: " + Quoted(command.action) +
                                  " is not an action on a Job (" + Listed(kJobActions) + ")");
    }
    plan.key = ObjectKey(command.meta.namespace_, target.name);
  } else {
    if (!OneOf(kQueueActions, command.action)) {
      return InvalidArgumentError("action: " + Quoted(command.action) +
                                  " is not an action on a Queue (" + Listed(kQueueActions) + ")");
    }
    plan.key = target.name;
  }
  return plan;
}

std::string TargetName(const CommandPlan& plan) {
  return std::string(plan.target == CommandTarget::kJob ? kJobKind : kQueueKind) + " " + plan.key;
}

Status CheckTarget(const CommandPlan& plan, const ObjectMeta* meta) {
  if (meta == nullptr) return NotFoundError("target.name: " + TargetName(plan) + " not found");
  if (!plan.uid.empty() && plan.uid != meta->uid) {
    return FailedPreconditionError("target.uid: " + Quoted(plan.uid) + " is not the uid of " +
                                   TargetName(plan) + " (" + meta->uid +
                                   "): it was deleted and created again");
  }
  return Status::Ok();
}

Request JobRequest(const CommandPlan& plan) { return Request{.action = plan.action}; }

}  // namespace muster::reconciler
