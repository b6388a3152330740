// Internals shared by the files of JobController (controller.h): its
// timings and a few helpers. Not an interface: include from controller*.cc
// only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "kube/client/resource_ref.h"
#include "model/job.h"
#include "model/status.h"
#include "model/time.h"
#include "reconciler/job_admission.h"

namespace muster::reconciler::controller_internal {

// How long a write we made may stay unseen by the informers before the
// expectation is dropped (and the next sync trusts the informers again).
inline constexpr Duration kExpectationTtl = std::chrono::seconds(30);
// Every Job is synced this often, a safety net for anything an event did
// not cover.
inline constexpr Duration kResyncPeriod = std::chrono::seconds(30);
// A sync that failed is tried again this much later.
inline constexpr Duration kRetryDelay = std::chrono::seconds(1);
// A new Job that asks GPU memory, before the nodes are listed, looks again.
inline constexpr Duration kNodesWait = std::chrono::milliseconds(200);
// How long such a Job waits for the first list of nodes before a Warning
// Event says why it waits. Long enough that a healthy start never says it
// (the list lands in under a second; a few 5xx retries, the informer's
// backoff doubling from 100 ms, take a couple of seconds); short enough that
// a reconciler that may not list nodes (a ClusterRole kept from before GPU
// memory admission) answers a Job within seconds instead of never.
inline constexpr Duration kNodesWaitBound = std::chrono::seconds(10);
// A sync whose status write meets a newer Job (409) is made again from a
// fresh GET this many times, then left to the next sync.
inline constexpr int kConflictRetries = 3;

// The reason in status.state, and of the Warning Event, of a refused update.
inline constexpr std::string_view kUpdateRefused = "UpdateRefused";

inline bool IgnorableCreate(const Status& s) {
  return s.ok() || s.code() == StatusCode::kAlreadyExists;
}
inline bool IgnorableDelete(const Status& s) { return s.ok() || s.code() == StatusCode::kNotFound; }

inline kube::ResourceRef PodsIn(const std::string& ns) {
  return kube::ResourceRef::Core("pods", ns);
}

// status.state carries a refused update while it is refused (`why` set),
// unless the lifecycle has a reason of its own (JobFailed, ...); it is
// cleared once the spec is within the rules again.
void MarkRefusal(JobStatus& status, const Status* why);

// The accepted spec's digest the Job's status holds, if any.
std::optional<AcceptedSpec> StoredAcceptedSpec(const JobStatus& status);

}  // namespace muster::reconciler::controller_internal
