// `muster why`'s screen: from what was read (why_inputs.h) to one screen of
// at most ~25 lines that says, in this order,
//   - the verdict in plain words ("job ml/train is waiting: its gang of 4
//     needs 8 nvidia.com/gpu per member and no node has that free");
//   - the Job and the PodGroup (phase, minMember, members existing and
//     scheduled, the condition muster wrote: reason and message);
//   - the queue (state, weight, allocated vs deserved and share, capability);
//   - the gang's place in muster's planning order;
//   - what one member needs and the largest free fit (the node with the most
//     free of the scarce resource);
//   - "What would make it run:", actions specific to the reason (the
//     operator guide's "Why is my gang pending?" table, made concrete: the
//     resource and amount to free, the kubectl patch to raise a capability,
//     the pods to create, the field to fix);
//   - a note when muster's own view could not be read (the screen then
//     says what the API alone shows).
//
// Pure and deterministic: no I/O, no clock (goldens in cmd/cli/testdata).
#pragma once

#include <string>
#include <string_view>

#include "cmd/cli/why_inputs.h"

namespace muster::cli {

// Why the target waits (or does not): the bounded set the screen is built on.
enum class WhyVerdict {
  kNotMuster,        // a pod of another scheduler
  kInvalid,          // a Job (or PodGroup) refused: InvalidSpec
  kRunning,          // its minimum is scheduled
  kFinished,         // the Job is over (Completed, Failed, Aborted, ...)
  kNoPodGroup,       // a Job whose PodGroup does not exist (yet)
  kQueueMissing,     // QueueNotFound
  kQueueClosed,      // QueueClosed, or its queue is not Open
  kMembers,          // NotEnoughTasks
  kResources,        // NotEnoughResources
  kNeverFits,        // Unplaceable
  kQueueCapability,  // QueueCapability
  kQueueOverShare,   // QueueOverShare
  kNetworkTopology,  // NetworkTopology / BadNetworkTopology
  kPending,          // no reason known yet
};

// The verdict the screen gives for `in` (exposed for tests).
WhyVerdict VerdictOf(const WhyInputs& in);

// The whole screen, lines ending in "\n".
std::string ExplainWhy(const WhyInputs& in);

// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st".
std::string Ordinal(int64_t n);

}  // namespace muster::cli
