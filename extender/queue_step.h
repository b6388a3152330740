// The queue step of a gang controller pass: reads the Queues and the gangs'
// holdings, asks queue/ for every queue's deserved share and the order of
// the pending gangs, and fills in what gang::RunPass takes from it
// (Gang::queue_rank and Gang::queues, VictimCandidate::queues/holds, the
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
//    demand is what its gangs' other members request. For reclaim only
//    (QueueLimit::allocated), a gang evicting victims for itself
//    (Gang::preempting) counts what it waits for as held: reclaim takes
//    once, not again while the victims go. Pods outside PodGroups belong to no
//    queue: they take capacity from all, like pods of other schedulers.
//  - The capacity queues share is the free capacity of schedulable nodes
//    plus what the queues hold.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

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
  std::map<std::string, int> position;
  // Per gang: its queue's name (as named; "default" when unset).
  std::map<std::string, std::string> queue_of;
};

// The queue a PodGroup names ("default" for none).
std::string QueueName(const PodGroupSpec& spec);

// Runs the queue step over `gangs` and updates them and `victims` in place
// (queue_rank, queues, holds); the held gangs stay in `gangs`, listed in
// QueueStep::held for the caller to leave out of the pass. `free` is the
// free capacity of the schedulable nodes.
QueueStep RunQueueStep(const std::map<std::string, Queue, std::less<>>& queues,
                       const Resources& free, std::vector<gang::Gang>& gangs,
                       std::vector<gang::VictimCandidate>& victims);

}  // namespace muster::extender
