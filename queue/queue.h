// queue: how Queues (scheduling.volcano.sh/v1beta1) share the cluster, as a
// pure decision over a snapshot.
//
// The extender's gang controller (extender/gang_controller.h) builds one
// QueueState per Queue from its cache each pass, calls ComputeShares() for
// every queue's deserved share, then RankGangs() for the order in which the
// gang pass (gang/gang.h) plans pending gangs; it hands the deserved shares
// to the pass for capability limits and reclaim. Nothing here does I/O,
// reads a clock or keeps state between calls.
//
// Rules (issue #6; docs/queue.md is the user-facing description):
//  - Deserved share, per resource: the capacity of a parent (the cluster for
//    top-level queues) is split among its children by weighted max-min
//    water-filling. Each child is capped by its capability and by its demand
//    (what it holds plus what its gangs wait for) and floored by its
//    guarantee (guarantees are served first; scaled down together when they
//    exceed the capacity). A queue with spec.deserved set for a resource
//    gets exactly that (capped by its capability and the parent's capacity)
//    and takes no part in the water-filling for it.
//  - A queue's share is its dominant share against what it deserves:
//    max over resources of allocated / deserved (1 = exactly its due).
//  - Order of admission among pending gangs: first the gangs that claim the
//    capacity of victims evicted for them (it was freed for them, and their
//    requests count in their queues' shares from then on, so a queue whose
//    claim is in flight does not also take whatever else frees); then,
//    repeatedly, the queue with the lowest share (higher spec.priority
//    first; at each level of the tree) gives its next gang, and its share
//    grows by that gang's request; within a queue, gangs go by priority,
//    then by the DRF share of what the job already holds (a gang below its
//    minimum counts 0: it must finish assembling), then age.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/resources.h"
#include "model/time.h"

namespace muster::queue {

// One Queue as the policy sees it.
struct QueueState {
  std::string name;
  std::string parent;  // "" or "root": top level
  int32_t weight = 1;  // <= 0 reads as 1
  int32_t priority = 0;
  std::optional<Resources> capability;  // absent resources are unlimited
  std::optional<Resources> guarantee;
  std::optional<Resources> deserved;  // explicit override, per resource
  bool reclaimable = true;
  bool open = true;
  // What its gangs and pods hold (bound or reserved), requests only.
  Resources allocated;
  // What its gangs' members without a node request.
  Resources pending;
};

// The outcome for one queue.
struct QueueShare {
  std::string name;
  // The queue, then its ancestors, up to (not including) the root.
  std::vector<std::string> path;
  Resources deserved;
  Resources allocated;  // its own and its descendants'
  Resources demand;     // allocated + pending, own and descendants'
  // allocated.DominantShare(deserved): 0 when it holds nothing, +inf when it
  // holds what it deserves none of.
  double share = 0;
  // The resource behind `share` ("" when it holds nothing).
  std::string dominant;
  // Whether capacity taken from it may go to other queues (spec.reclaimable).
  bool reclaimable = true;
  bool open = true;
  int32_t priority = 0;
};

struct Shares {
  Resources total;  // the capacity split among the top-level queues
  std::map<std::string, QueueShare> queues;
  // Configuration the policy had to read its way around, for logs and
  // /debug/state: "queue a: parent b does not exist, treated as top level".
  std::vector<std::string> problems;
};

// Deserved shares of every queue of `queues` over `total` (the cluster's
// schedulable capacity for queued work). A "root" queue, when present, caps
// the total by its capability and is not itself in the result.
// REQUIRES: queue names unique.
Shares ComputeShares(const std::vector<QueueState>& queues, const Resources& total);

// Weighted max-min water-filling of `capacity` among claimants: claimant i
// gets clamp(weight_i * level, floor_i, cap_i) for the one level that uses
// the capacity up (or cap_i for all, when their caps sum below it). Floors
// are scaled down together when they alone exceed the capacity; a cap below
// the floor is raised to it. Results are rounded down to whole units.
struct Claimant {
  double weight = 1;
  int64_t floor = 0;
  int64_t cap = 0;
};
std::vector<int64_t> WaterFill(int64_t capacity, const std::vector<Claimant>& claimants);

// A gang waiting to be planned.
struct PendingGang {
  std::string key;    // "namespace/name"
  std::string queue;  // a key of Shares::queues
  int32_t priority = 0;
  Time created;
  Resources request;         // what its members without a node request
  Resources allocated;       // what its bound and reserved members hold
  bool minimum_met = false;  // bound + reserved members reach its minimum
  // It evicted victims for itself (a preemption in flight): what they free
  // is its claim.
  bool claims = false;
};

// The gangs in the order the gang pass should plan them (see the rules
// above). Gangs whose queue is not in `shares` go last, in priority/age
// order.
std::vector<std::string> RankGangs(const Shares& shares, const std::vector<PendingGang>& gangs);

}  // namespace muster::queue
