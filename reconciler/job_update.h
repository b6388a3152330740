// Job updates, as Volcano's update rules have them
// (pkg/webhooks/admission/jobs/validate/admit_job.go validateJobUpdate): no
// task is added or removed, only minAvailable, priorityClassName,
// tasks[*].replicas and tasks[*].minAvailable change, and the create-time
// checks (job_admission.h ValidateJob) hold for the new spec. The controller
// keeps the last accepted spec of each Job (AcceptedSpec, written into its
// status) and does not act on a spec that breaks them.
//
// Where muster departs from Volcano: an update is compared after
// WithDefaults (Volcano compares the stored objects: an update that writes
// out a default is a change to it), and every create-time rule holds again
// for the new spec (Volcano re-checks the counts only), so a scale that
// makes a pod name too long is refused; partitionPolicy, which muster does
// not model, is not compared.
//
// Pure and thread-compatible: no I/O, no clock, no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/job.h"
#include "model/status.h"

namespace muster::reconciler {

// What an update may change, as every refusal says it.
inline constexpr std::string_view kMutableSpecFields =
    "only minAvailable, priorityClassName, tasks[*].replicas and tasks[*].minAvailable may";

// The digest of an accepted spec, small enough for the Job's status: the
// generation it was accepted at, its number of tasks, a 64-bit FNV-1a hash of
// every field an update may not change (keyed by its JSON path, e.g.
// "spec.tasks[0].template", in the codec's field order; the value hashed is
// the field's compact JSON as kube/codec encodes the defaulted spec, so a
// field muster does not model - partitionPolicy - is not in it), and a hash
// of the svc plugin's hosts ConfigMap data (0 without svc) so the controller
// knows when to rewrite it.
struct AcceptedSpec {
  int64_t generation = 0;
  int32_t tasks = 0;
  std::vector<std::pair<std::string, uint64_t>> fields;
  uint64_t svc_hosts = 0;
  friend bool operator==(const AcceptedSpec&, const AcceptedSpec&) = default;
};

// The status.controlledResources key the controller records the accepted
// spec under (EncodeAcceptedSpec), as Volcano's controller records the
// objects it made there ("plugin-svc": "svc").
inline constexpr std::string_view kAcceptedSpecKey = "muster.io/accepted-spec";

// REQUIRES: `job` defaulted (WithDefaults).
AcceptedSpec AcceptedSpecOf(const Job& job);
// One line: "v1 g=<generation> n=<tasks> h=<svc hosts hex> <path>=<hex> ...".
std::string EncodeAcceptedSpec(const AcceptedSpec& accepted);
// nullopt for anything EncodeAcceptedSpec did not write (another format
// version included: the caller then takes the current spec as accepted).
std::optional<AcceptedSpec> DecodeAcceptedSpec(std::string_view text);

// Ok, or InvalidArgument naming the first field the update breaks:
//   spec.tasks: job updates may not add or remove tasks (the job has 2, the update 3)
//   spec.tasks[0].template: may not change after creation; only minAvailable,
//     priorityClassName, tasks[*].replicas and tasks[*].minAvailable may
// then the create-time rules of ValidateJob on `new_job` (minAvailable >= 0,
// task minAvailable <= replicas, job minAvailable <= all replicas, ...).
// Fields are compared after WithDefaults: a default written out, or left
// out, is no change. REQUIRES: both defaulted (WithDefaults).
Status ValidateJobUpdate(const Job& old_job, const Job& new_job);
// The same against the digest of the old spec (a hash collision, 2^-64 per
// field, would let a change pass).
Status ValidateJobUpdate(const AcceptedSpec& old_spec, const Job& new_job);

}  // namespace muster::reconciler
