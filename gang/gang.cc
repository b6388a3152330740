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

bool StaysInqueue(std::string_view phase) {
  return phase == kPodGroupInqueue || phase == kPodGroupRunning || phase == kPodGroupUnknown;
}

// Order as documented on StatusOf. A gang with nothing scheduled is never
// Running/Completed, even with minMember 0.
std::string_view PhaseOf(const Gang& gang, const MemberSummary& t, bool admitted,
                         const Wait* wait) {
  const int32_t scheduled = t.Scheduled();
  if (scheduled > 0 && scheduled >= gang.spec.min_member) {
    return t.Finished() == scheduled ? kPodGroupCompleted : kPodGroupRunning;
  }
  if (scheduled > 0 && wait != nullptr) return kPodGroupUnknown;
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

MemberSummary MemberSummary::Of(const std::vector<Member>& members) {
  MemberSummary s;
  for (const Member& m : members) {
    switch (m.state) {
      case MemberState::kPending:
        ++s.pending;
        if (m.terminating) break;
        ++s.awaiting;
        s.pending_request += m.request;
        break;
      case MemberState::kReserved:
        ++s.reserved;
        if (!m.terminating) s.reserved_request += m.request;
        break;
      case MemberState::kBound:
        ++s.bound;
        if (m.pod->status.phase == "Running") ++s.running;
        (m.terminating ? s.leaving_request : s.bound_request) += m.request;
        break;
      case MemberState::kSucceeded:
        ++s.succeeded;
        break;
      case MemberState::kFailed:
        ++s.failed;
        break;
    }
  }
  for (Resources* sum :
       {&s.pending_request, &s.reserved_request, &s.bound_request, &s.leaving_request}) {
    sum->Erase(kPods);
  }
  return s;
}

PodGroupStatus StatusOf(const Gang& gang, bool admitted, const Wait* wait,
                        const PodGroupStatus& previous, Time now) {
  const MemberSummary& t = gang.members.summary();
  PodGroupStatus status{.phase = std::string(PhaseOf(gang, t, admitted, wait)),
                        .running = t.running,
                        .succeeded = t.succeeded,
                        .failed = t.failed};
  const int32_t held = t.Scheduled() + t.reserved;
  if (wait != nullptr) {
    status.conditions.push_back(
        MakeCondition("Unschedulable", wait->reason, wait->message, previous, now));
  } else if (held > 0 && held >= gang.spec.min_member) {
    // The gang's minimum holds a node: bound, or reserved and about to bind.
    status.conditions.push_back(MakeCondition("Scheduled", kScheduledReason, "", previous, now));
  }
  return status;
}

}  // namespace muster::gang
