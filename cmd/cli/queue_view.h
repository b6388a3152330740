// `muster queue ...`, the pure half: the rows of `queue list`, the screen of
// `queue get`, the Queue `queue create` sends, and the deserved shares read
// from muster's /debug/state - all from model values (queue.cc does the I/O).
//
// The list columns are vcctl's (volcano-sh/volcano pkg/cli/queue/list.go):
// NAME WEIGHT STATE PARENT INQUEUE PENDING RUNNING UNKNOWN COMPLETED, the
// last five counted from the PodGroups of each queue by phase (as vcctl
// counts them: a Queue's own status counters are often zero); -o wide adds
// ALLOCATED (the Queue's status.allocated) and DESERVED (muster's fair
// share, "-" when muster could not be asked).
//
// Pure; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/output.h"
#include "model/object_meta.h"
#include "model/pod_group.h"
#include "model/queue.h"
#include "model/resources.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::cli {

// Volcano's Command actions on a Queue (vcctl queue operate -a open|close).
inline constexpr std::string_view kOpenQueue = "OpenQueue";
inline constexpr std::string_view kCloseQueue = "CloseQueue";

struct PodGroupCounts {
  int32_t inqueue = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t unknown = 0;
  int32_t completed = 0;
  friend bool operator==(const PodGroupCounts&, const PodGroupCounts&) = default;
};

// Per queue name (a PodGroup naming none is in "default"), its PodGroups by
// phase (none yet reads Pending). Other phases are not counted, as vcctl.
std::map<std::string, PodGroupCounts> CountPodGroups(const std::vector<PodGroup>& groups);

// Deserved shares by queue name; nullopt when muster could not be asked.
using DeservedShares = std::optional<std::map<std::string, Resources>>;

// fairShare.queues[].{name, deserved} of /debug/state (an empty map when
// muster has planned no pass yet). InvalidArgument naming the JSON path.
StatusOr<std::map<std::string, Resources>> ParseDeserved(std::string_view state_json);

// The `queue list` table, one row per queue in the order given.
Table QueueTable(const std::vector<Queue>& queues,
                 const std::map<std::string, PodGroupCounts>& counts, bool wide,
                 const DeservedShares& deserved);

// The `queue get` screen: weight, state, parent, reclaimable, then per
// resource ALLOCATED DESERVED CAPABILITY GUARANTEE, then PodGroups by phase.
std::string QueueViewText(const Queue& queue, const PodGroupCounts& counts,
                          const DeservedShares& deserved, Time now);

// What `queue create` makes.
struct QueueSpecFlags {
  std::string name;
  int32_t weight = 1;
  std::string parent;                                            // "": Volcano's default (root)
  std::optional<std::map<std::string, std::string>> capability;  // verbatim quantities
  bool reclaimable = true;
};
std::string QueueBody(const QueueSpecFlags& spec);

// `target` of a Queue's Command.
OwnerReference QueueTarget(const Queue& queue);

// Volcano's webhook refuses to delete the queues every cluster needs:
// FailedPrecondition naming the reason for "default" and "root", else OK.
Status CheckQueueDeletable(std::string_view name);

}  // namespace muster::cli
