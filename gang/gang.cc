// The small pieces of gang.h: member state names, task, order, and the
// PodGroup status a gang should show. PlanGang is in planner.cc, RunPass in
// pass.cc, NodeAdmits in feasibility.cc.
#include "gang/gang.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

namespace muster::gang {
namespace {

// Volcano's reason for the Scheduled condition, kept verbatim for tools
// that match on it.
constexpr std::string_view kScheduledReason = "tasks in gang are ready to be scheduled";

struct Tally {
  int32_t scheduled = 0;  // bound or finished
  int32_t finished = 0;
  int32_t reserved = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
};

Tally Count(const Gang& gang) {
  Tally t;
  for (const Member& m : gang.members) {
    if (m.Scheduled()) ++t.scheduled;
    if (m.Finished()) ++t.finished;
    if (m.state == MemberState::kReserved) ++t.reserved;
    // Volcano's `running` counts pods in phase Running, not merely bound.
    if (m.state == MemberState::kBound && m.pod->status.phase == "Running") ++t.running;
    if (m.state == MemberState::kSucceeded) ++t.succeeded;
    if (m.state == MemberState::kFailed) ++t.failed;
  }
  return t;
}

bool StaysInqueue(std::string_view phase) {
  return phase == kPodGroupInqueue || phase == kPodGroupRunning || phase == kPodGroupUnknown;
}

// Order as documented on StatusOf. A gang with nothing scheduled is never
// Running/Completed, even with minMember 0.
std::string_view PhaseOf(const Gang& gang, const Tally& t, bool admitted, const Wait* wait) {
  if (t.scheduled > 0 && t.scheduled >= gang.spec.min_member) {
    return t.finished == t.scheduled ? kPodGroupCompleted : kPodGroupRunning;
  }
  if (t.scheduled > 0 && wait != nullptr) return kPodGroupUnknown;
  if (admitted || t.reserved > 0 || StaysInqueue(gang.phase)) return kPodGroupInqueue;
  return kPodGroupPending;
}

// lastTransitionTime moves only when the condition's type or status does.
Condition MakeCondition(std::string type, std::string_view reason, std::string message,
                        const PodGroupStatus& previous, Time now) {
  Condition c{.type = std::move(type),
              .status = "True",
              .reason = std::string(reason),
              .message = std::move(message),
              .last_transition_time = now};
  for (const Condition& old : previous.conditions) {
    if (old.type == c.type && old.status == c.status)
      c.last_transition_time = old.last_transition_time;
  }
  return c;
}

}  // namespace

std::string_view MemberStateName(MemberState state) {
  switch (state) {
    case MemberState::kPending:
      return "Pending";
    case MemberState::kReserved:
      return "Reserved";
    case MemberState::kBound:
      return "Bound";
    case MemberState::kSucceeded:
      return "Succeeded";
    case MemberState::kFailed:
      return "Failed";
  }
  return "Unknown";
}

Member Member::Of(std::shared_ptr<const Pod> pod) {
  Resources request = pod->EffectiveRequest();
  StatusOr<GpuDemand> demand = GpuDemandOf(*pod);
  return Member{.pod = std::move(pod),
                .request = std::move(request),
                .gpu_demand = demand.ok() ? *std::move(demand) : GpuDemand{},
                .gpu_problem = demand.ok() ? std::string() : demand.status().message()};
}

std::string Member::Task() const {
  static const std::string key(kTaskSpecKey);
  if (auto it = pod->meta.annotations.find(key); it != pod->meta.annotations.end()) {
    return it->second;
  }
  if (auto it = pod->meta.labels.find(key); it != pod->meta.labels.end()) return it->second;
  return "";
}

bool GangOrder(const Gang& a, const Gang& b) {
  // Negated so that the higher priority sorts first; widened so INT32_MIN negates.
  const int64_t a_rank = -static_cast<int64_t>(a.priority);
  const int64_t b_rank = -static_cast<int64_t>(b.priority);
  return std::tie(a.queue_rank, a_rank, a.created, a.key) <
         std::tie(b.queue_rank, b_rank, b.created, b.key);
}

PodGroupStatus StatusOf(const Gang& gang, bool admitted, const Wait* wait,
                        const PodGroupStatus& previous, Time now) {
  const Tally t = Count(gang);
  PodGroupStatus status{.phase = std::string(PhaseOf(gang, t, admitted, wait)),
                        .running = t.running,
                        .succeeded = t.succeeded,
                        .failed = t.failed};
  if (wait != nullptr) {
    status.conditions.push_back(
        MakeCondition("Unschedulable", wait->reason, wait->message, previous, now));
  } else if (t.scheduled + t.reserved > 0 && t.scheduled + t.reserved >= gang.spec.min_member) {
    // The gang's minimum holds a node: bound, or reserved and about to bind.
    status.conditions.push_back(MakeCondition("Scheduled", kScheduledReason, "", previous, now));
  }
  return status;
}

}  // namespace muster::gang
