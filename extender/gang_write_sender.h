// The gang controller's typed writes (gang_writes.h) bound to the generic
// WriteExecutor: each encoded by kube/codec and sent with kube::Client.
//
// Thread-safety: SendGangWrite may run on several threads at once (the
// Client is thread-safe).
#pragma once

#include <functional>

#include "base/write_executor.h"
#include "extender/gang_writes.h"

namespace muster::kube {
class Client;
}  // namespace muster::kube

namespace muster::extender {

// Sends `write`: a JSON patch lifting a gate (kube::EncodeLiftGatePatch), a
// merge patch of annotations, of a PodGroup's status or conditions, of a
// Queue's status subresource, an Event, an Eviction. Returns true once
// written, and for a broken PodGroup's answer when the PodGroup is gone;
// false when it failed (logged): the next pass plans it again.
bool SendGangWrite(kube::Client& client, const GangWrite& write);

// `write` as the executor runs it: its slot (rank and coalescing key) and
// `send` applied to it.
base::WriteExecutor::Write ToExecutorWrite(GangWrite write,
                                           std::function<bool(const GangWrite&)> send);

}  // namespace muster::extender
