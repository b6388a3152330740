// What `muster why` reads before it explains (why_explain.h): the target the
// user named, resolved to its Volcano Job, PodGroup and pods; the PodGroup's
// queue; the Job's Warning Events; and muster's own view (the extender's
// /debug/state), decoded.
//
// The split: ParseWhyTarget and DecodeDebugState are pure (unit-tested);
// GatherWhyInputs does the API reads and is covered by the e2e scenario
// (e2e/scenarios/cli_why.sh).
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/args.h"
#include "cmd/cli/session.h"
#include "model/api_objects.h"
#include "model/job.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/queue.h"
#include "model/resources.h"
#include "model/status.h"

namespace muster::cli {

enum class WhyKind { kAny, kJob, kPodGroup, kPod };

struct WhyTarget {
  WhyKind kind = WhyKind::kAny;  // kAny: a bare NAME (Job, then PodGroup, then pod)
  std::string name;
};

// "pod/NAME", "job/NAME", "vcjob/NAME", "podgroup/NAME", "pg/NAME" or "NAME"
// (kubectl's spelling; the kinds are case-insensitive, "pods/", "jobs/" too).
// InvalidArgument for an unknown kind or an empty name.
StatusOr<WhyTarget> ParseWhyTarget(std::string_view text);

// muster's view of the cluster: the parts of /debug/state (extender/server.cc
// Server::DebugState, extender/gang_observer.cc) `muster why` reads.
struct DebugNode {
  std::string name;
  Resources allocatable;  // muster's integer units (model/resources.h)
  Resources free;
};

struct DebugGang {
  std::string key;  // the PodGroup, "ns/name"
  std::string phase;
  int32_t min_member = 0;
  int32_t members = 0;
  int32_t scheduled = 0;
  int32_t reserved = 0;
  std::string queue;
  std::optional<int64_t> position;  // in the planning order, 0 first
  std::string wait_reason;          // "" when it does not wait
  std::string wait_message;
};

struct DebugQueueShare {
  std::string name;
  Resources deserved;
  Resources allocated;
  Resources demand;
  double share = 0;  // -1: it holds what it deserves none of
  std::string dominant;
};

struct DebugState {
  std::vector<DebugNode> nodes;
  std::vector<DebugGang> gangs;
  std::vector<DebugQueueShare> queues;
};

// Decodes /debug/state. Unknown fields are ignored; InvalidArgument (naming
// the JSON path) for a document of another shape.
StatusOr<DebugState> DecodeDebugState(std::string_view json);

// One kind of member: a task of the Job (or the pods of one request).
struct MemberNeed {
  std::string task;  // "" when the members are not a Job's tasks
  int32_t count = 0;
  Resources request;  // one member's (Pod::EffectiveRequest of the template)
};

// Everything the explanation needs; any part may be missing.
struct WhyInputs {
  std::string ns;
  WhyTarget asked;                    // kind resolved (never kAny) once gathered
  std::optional<Pod> pod;             // the pod asked about
  std::optional<Job> job;             // the gang's Volcano Job, if it has one
  std::string job_problem;            // the Job does not decode: why (its status is read)
  std::optional<PodGroup> pod_group;  // the gang
  std::string pod_group_name;         // named (by a pod or Job) even when it does not exist
  std::vector<Pod> members;           // the gang's pods
  std::vector<MemberNeed> needs;      // what one member of each kind asks
  std::optional<Queue> queue;
  std::string queue_name;            // "default" when nothing names one
  std::string queue_problem;         // not readable (RBAC: queues are cluster-scoped)
  std::vector<Event> job_warnings;   // the Job's Warning Events, newest last
  std::optional<DebugState> muster;  // nullopt: not reached
  std::string muster_problem;        // why not
};

// What one member of each kind asks: the pods' requests when pods exist
// (grouped by task, volcano.sh/task-spec), else each task template's.
std::vector<MemberNeed> MemberNeedsOf(const std::optional<Job>& job, const std::vector<Pod>& pods);

// Reads the target and what belongs to it. NotFound ("no job, podgroup or
// pod named X in namespace NS") when the target does not exist; other API
// errors as the client returns them. muster's state that cannot be fetched
// or decoded is not an error: muster_problem says why.
StatusOr<WhyInputs> GatherWhyInputs(Session& session, const Args& args, const WhyTarget& target);

}  // namespace muster::cli
