// The gang controller's inputs, read from the cache, and the application of
// a pass's plans to it (the reservations).
//
// Thread-safety: ReadGangs, BuildGangInputs and ApplyPass must run under the
// cache's exclusive lock (ClusterAccess::Exclusive); the rest are pure.
// AssembleInputs reads only what ReadGangs handed over (snapshots), so it
// runs without the lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "extender/cluster_state.h"
#include "extender/gang_record.h"
#include "gang/gang.h"
#include "model/api_objects.h"

namespace muster::extender {

using WaitingPods = std::map<std::string, Time, std::less<>>;  // by pod uid
// PodGroups by gang key, shared with the gangs as built (a pass copied 5000).
using GroupsByKey = std::map<std::string, std::shared_ptr<const PodGroup>, std::less<>>;

// What gang/ needs, read from the cache.
struct GangInputs {
  gang::ClusterView view;
  std::vector<gang::Gang> gangs;
  std::vector<gang::VictimCandidate> victims;
  GroupsByKey groups;                                // as the watch saw them
  std::map<std::string, Queue, std::less<>> queues;  // by name, as the watch saw them
  Resources free;                                    // free capacity of the schedulable nodes
  // Keys of Volcano's PodGroups of one (ImplicitPodGroup): no API object,
  // so no status or Event is written for them.
  std::set<std::string> implicit;
  // The queue gate's state (queue_gate.h): pods it turned away, and what
  // the pods it admitted hold per queue until a pass sees them placed.
  WaitingPods waiting;
  std::map<std::string, Resources, std::less<>> charged;
  // Uids of the members placed (reserved or bound) or finished that the
  // queue gate tracks (QueueGate::TrackedPods): what Publish asks about. Not
  // every placed member: at 5000 PodGroups that was a set of 55 000 uids
  // built under the cache's lock every pass for the few the gate holds.
  std::set<std::string, std::less<>> placed;
  // PodGroups (by key) and Queues (by name) that do not decode.
  std::map<std::string, BrokenObject, std::less<>> broken_groups;
  std::map<std::string, BrokenObject, std::less<>> broken_queues;
};

// A gang as the last pass built it from the cache, kept by the pass thread.
struct BuiltGang {
  uint64_t version = 0;                   // ClusterState::GangMembers::version it was built at
  std::shared_ptr<const PodGroup> group;  // what it was built from (implicit: derived)
  bool implicit = false;
  gang::Gang gang;  // as built: before Remember, the queue step and the tiers
  std::optional<gang::VictimCandidate> victim;  // of `gang`
  uint64_t last_read = 0;                       // BuiltGangs::reads when last seen
};
// Every gang as last built: a pass builds again only the gangs whose pods,
// their reservations or PodGroup changed since. At 5000 running Jobs,
// building all 5000 gangs (55 000 members) took 80 ms a pass under the
// cache's exclusive lock, and filter and bind waited on it.
struct BuiltGangs {
  // By gang key. Hashed: the pass looks up every gang.
  std::unordered_map<std::string, BuiltGang, base::StringHash, std::equal_to<>> gangs;
  uint64_t reads = 0;  // ReadGangs calls
};

// What ReadGangs hands to AssembleInputs: copies and immutable snapshots,
// and the gangs as built.
struct GangRead {
  ClusterSnapshot snapshot;  // the nodes, PodGroups and Queues
  // The gangs of the pass, in their order: each points into the BuiltGangs
  // ReadGangs brought up to date (valid until it runs again).
  std::vector<const BuiltGang*> gangs;
  WaitingPods waiting;  // the queue gate's (GangInputs)
  std::map<std::string, Resources, std::less<>> charged;
  std::vector<std::string> tracked;  // uids the queue gate tracks, sorted
};

// Step 1 under the lock: brings `built` up to date with `state` (builds the
// changed gangs, drops those gone) and takes the snapshots.
GangRead ReadGangs(ClusterState& state, BuiltGangs& built);

// Step 1 without the lock: the inputs from what ReadGangs read. `records`
// are the controller's memory of each gang (its reservation's last
// progress, a preemption in flight); `evicted` of the pods it evicted (by
// uid, until when): such a pod counts as terminating before the watch shows
// it, so the next pass neither picks it as a victim again nor counts it in
// its queue's share (two preemptors in a row took the same victims, and the
// second found no room).
// REQUIRES: the BuiltGangs `read` points into are unchanged since.
GangInputs AssembleInputs(GangRead read, const GangRecords& records,
                          const std::map<std::string, Time>& evicted, Time now);

// Both steps at once, with nothing built before (tests; `records` and
// `evicted` as for AssembleInputs).
GangInputs BuildGangInputs(ClusterState& state, const GangRecords& records,
                           const std::map<std::string, Time>& evicted, Time now);

// Whether `key` is one of `keys` (the pass result's lists of gang keys).
bool Contains(const std::vector<std::string>& keys, std::string_view key);

// Members scheduled (bound or finished), and reserved.
int32_t CountScheduled(const gang::Gang& g);
int32_t CountReserved(const gang::Gang& g);

// The gangs the pass plans: all but those their queue holds back (`held`)
// and those it would change nothing for (a member is bound or finished, none
// is reserved or left to plan), without the pending members it leaves to
// filter: a member of a gang of
// one whose pod carries no gate is planned only when the queue gate turned
// it away (`waiting`) and its queue takes new work.
std::vector<gang::Gang> PlannedGangs(const std::vector<gang::Gang>& gangs,
                                     const std::vector<gang::Wait>& held,
                                     const WaitingPods& waiting,
                                     const std::map<std::string, Queue, std::less<>>& queues);

// What the applied plans reserved, per queue of each gang's path.
std::map<std::string, Resources> ReservedPerQueue(const std::vector<gang::Gang>& gangs,
                                                  const gang::PassResult& result,
                                                  const std::vector<std::string>& applied);

// Applies a pass's plans and expiries to `state` (step 3). Returns the keys
// of the gangs whose plan was applied; a plan whose member no longer fits
// its node (checked against the state now) is skipped whole.
std::vector<std::string> ApplyPass(ClusterState& state, const GangInputs& inputs,
                                   const gang::PassResult& result, Duration reservation_ttl);

}  // namespace muster::extender
