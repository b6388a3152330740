// The gang controller's inputs, read from the cache, and the application of
// a pass's plans to it (the reservations).
//
// Thread-safety: BuildGangInputs and ApplyPass must run under the cache's
// exclusive lock (ClusterAccess::Exclusive); the rest are pure.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "extender/cluster_state.h"
#include "extender/gang_record.h"
#include "gang/gang.h"
#include "model/api_objects.h"

namespace muster::extender {

using WaitingPods = std::map<std::string, Time, std::less<>>;  // by pod uid

// What gang/ needs, read from the cache.
struct GangInputs {
  gang::ClusterView view;
  std::vector<gang::Gang> gangs;
  std::vector<gang::VictimCandidate> victims;
  std::map<std::string, PodGroup> groups;            // by gang key, as the watch saw them
  std::map<std::string, Queue, std::less<>> queues;  // by name, as the watch saw them
  Resources free;                                    // free capacity of the schedulable nodes
  // Keys of Volcano's PodGroups of one (ImplicitPodGroup): no API object,
  // so no status or Event is written for them.
  std::set<std::string> implicit;
  // The queue gate's state (queue_gate.h): pods it turned away, and what
  // the pods it admitted hold per queue until a pass sees them placed.
  WaitingPods waiting;
  std::map<std::string, Resources, std::less<>> charged;
  // Uids of the members placed (reserved or bound) or finished.
  std::set<std::string, std::less<>> placed;
  // PodGroups (by key) and Queues (by name) that do not decode.
  std::map<std::string, BrokenObject, std::less<>> broken_groups;
  std::map<std::string, BrokenObject, std::less<>> broken_queues;
};

// Builds the inputs from `state`. `records` are the controller's memory of
// each gang (its reservation's last progress, a preemption in flight);
// `evicted` of the pods it evicted (by uid, until when): such a pod counts
// as terminating before the watch shows it, so the next pass neither picks
// it as a victim again nor counts it in its queue's share (two preemptors
// in a row took the same victims, and the second found no room).
GangInputs BuildGangInputs(ClusterState& state, const GangRecords& records,
                           const std::map<std::string, Time>& evicted, Time now);

// Whether `key` is one of `keys` (the pass result's lists of gang keys).
bool Contains(const std::vector<std::string>& keys, std::string_view key);

// Members scheduled (bound or finished), and reserved.
int32_t CountScheduled(const gang::Gang& g);
int32_t CountReserved(const gang::Gang& g);

// The gangs the pass plans: all but those their queue holds back (`held`),
// without the pending members it leaves to filter: a member of a gang of
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
