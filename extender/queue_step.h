// The queue step of a gang controller pass: reads the Queues and the gangs'
// holdings, asks queue/ for every queue's deserved share and the order of
// the pending gangs, and fills in what gang::RunPass takes from it
// (Gang::queue_rank and Gang::queues, VictimCandidate::queues, the
// QueueLimits for capability and reclaim).
//
// Rules the policies leave to the composer (issue #6):
//  - A PodGroup without spec.queue is in "default"; when no Queue "default"
//    exists it is treated as one of weight 1.
//  - A gang whose Queue does not exist, or whose Queue is not Open, and that
//    holds nothing (no member bound or reserved) and is not yet admitted, is
//    held: it is not planned and waits with reason QueueNotFound / QueueClosed.
//    Work already admitted or running in a closed queue continues.
//  - A queue's allocation is what its gangs' bound and reserved members
//    request (finished and terminating members hold nothing); its pending
//    demand is what its gangs' other members request - for a gang not yet
//    admitted, at least its minResources (a Volcano Job has no pods before).
//    A gang evicting victims for itself (Gang::preempting) counts what it
//    waits for as held (QueueLimit::allocated): reclaim takes once, not
//    again while the victims go; the order ranks it first and counts it in
//    its queue's share too (PendingGang::claims). A victim queue is judged by
//    what it has bound (QueueLimit::bound), not by reservations that may
//    still expire. Pods outside PodGroups belong to no
//    queue: they take capacity from all, like pods of other schedulers.
//  - The capacity queues share is the free capacity of schedulable nodes
//    plus what the queues hold, plus what terminating members still hold
//    (theirs no more, free soon: evicting must not shrink everyone's share).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/string_hash.h"
#include "extender/queue_gate.h"
#include "gang/gang.h"
#include "model/queue.h"
#include "model/resources.h"
#include "queue/queue.h"

namespace muster::extender {

// Wait reasons of held gangs.
inline constexpr std::string_view kWaitQueueNotFound = "QueueNotFound";
inline constexpr std::string_view kWaitQueueClosed = "QueueClosed";

struct QueueStep {
  queue::Shares shares;
  gang::QueueLimits limits;
  // Gangs the pass must not plan, with why (in the input's order).
  std::vector<gang::Wait> held;
  // Per gang with members to place: its place in the planning order (0 first).
  // (Hashed: thousands of gangs of one - plain pods - are looked up per pass.)
  std::unordered_map<std::string, int> position;
  // Per gang: its queue's name (as named; "default" when unset).
  std::unordered_map<std::string, std::string, base::StringHash, std::equal_to<>> queue_of;
};

// The queue a PodGroup names ("default" for none).
std::string QueueName(const PodGroupSpec& spec);

// Runs the queue step over `gangs` and updates them and `victims` in place
// (queue_rank, queues); the held gangs stay in `gangs`, listed in
// QueueStep::held for the caller to leave out of the pass. `free` is the
// free capacity of the schedulable nodes.
QueueStep RunQueueStep(const std::map<std::string, Queue, std::less<>>& queues,
                       const Resources& free, std::vector<gang::Gang>& gangs,
                       std::vector<gang::VictimCandidate>& victims);

// Adds what the queue gate's admitted pods hold (`charged`, per queue, own
// and descendants') to `limits`: less capability left, more allocated.
void ChargeLimits(gang::QueueLimits& limits,
                  const std::map<std::string, Resources, std::less<>>& charged);

// The board the queue gate admits pods by after a pass (queue_gate.h): per
// queue of the step, its path, whether it is Open (`queues`: the Queue
// objects; "default" without one is Open), the capability left and what it
// holds less/plus what the pass just reserved (`reserved`, per queue of each
// gang's path), what it deserves, and the first queue owed capacity (below
// its deserved share) whose gang waits for resources in `waits`.
QueueBoard BoardOf(const QueueStep& step, const std::map<std::string, Queue, std::less<>>& queues,
                   const std::map<std::string, Resources>& reserved,
                   const std::vector<gang::Wait>& waits, Time at);

// Time-based hysteresis for reclaim, kept by the controller between passes.
struct ReclaimMemory {
  // Queue -> the first pass of its current stretch below its deserved share.
  std::map<std::string, Time> owed_since;
  struct Taken {
    std::string by;    // the queue that reclaimed
    std::string from;  // the queue it took from
    Time at;
  };
  std::vector<Taken> recent;  // within the cooldown
};

struct ReclaimTiming {
  // A queue reclaims only once it has been below its deserved share this
  // long: the order alone gives it what completing work frees, and reclaim
  // is for the capacity that does not come back by itself.
  Duration after = std::chrono::seconds(5);
  // A queue that reclaimed from another is spared by it this long: the same
  // capacity does not flip back and forth.
  Duration cooldown = std::chrono::seconds(60);
};

// Updates `memory` from the step's shares and sets its limits'
// reclaim_allowed and spare.
void ApplyReclaimHysteresis(QueueStep& step, ReclaimMemory& memory, Time now,
                            const ReclaimTiming& timing);

// Remembers that queue `by` reclaimed from each of `from` at `now`.
void RecordReclaim(ReclaimMemory& memory, const std::string& by,
                   const std::vector<std::string>& from, Time now);

}  // namespace muster::extender
