// GangController: carries out gang/'s decisions on the live cluster.
//
// Each pass (RunPass) is plan -> execute -> observe:
//   1. inputs  - under the cache lock, every PodGroup with its member pods,
//                built again only for the gangs that changed since the last
//                pass (ReadGangs, gang_inputs.h), and snapshots of the nodes
//                and queues; then, outside it, the inputs assembled from
//                them (AssembleInputs) with what the controller remembers of
//                each gang (GangRecord, gang_record.h);
//   2. decide  - outside the lock: the queue step (queue_step.h), network
//                tiers (topology_step.h), then gang::RunPass (pure); while
//                freed capacity trickles in and a gang waits for capacity,
//                the new plans are held until it settles (gang/settle.h);
//   3. reserve - under the lock again (ApplyPass): each planned member is
//                Assume()d on its node (so filter pins it there and no other
//                pod can take the capacity) and the gang's placement is kept
//                for bind's muster.io/gang-plan annotation; a plan whose
//                capacity went to someone else meanwhile is dropped whole
//                and retried; expired reservations are forgotten; the queue
//                gate gets the pass's board;
//   4. plan    - PlanWrites (gang_writes.h, pure): the writes as typed
//                values - lift the muster.io/gang scheduling gate of
//                reserved members (pinning them to their node), or touch
//                ungated ones (an annotation) so kube-scheduler retries them
//                now rather than after its unschedulable flush; PodGroup and
//                Queue status (queue_status_writer.h); Events; evictions of
//                preemption victims (Eviction API: PDBs apply) - and the
//                records updated;
//   5. execute - the writes go to a base::WriteExecutor, bound to the API by
//                gang_write_sender.h: several at a time, gates first, on a
//                writer thread so the next pass need not wait for them; the
//                latest write per object wins while not yet sent. A write
//                that failed (or was not sent) is forgotten at the start of
//                the next pass (ForgetUnwritten), which plans it again;
//   6. observe - GangObserver (gang_observer.h), which neither plans nor
//                writes: the pass's metrics and debug JSON (recorded just
//                before the writes are handed over, so the pass's duration
//                leaves them out), and each batch of writes as it ends (the
//                pods evicted).
//
// A PodGroup or Queue that does not decode (WorkloadIndex's BrokenObject) is
// answered once per uid and problem: a PodGroup gets an Unschedulable
// condition (reason InvalidSpec, the message starting with the JSON path of
// the first bad field; phase Pending when it has none) by a merge patch of
// its status alone, and a Warning Event; a Queue a Warning Event (in
// namespace "default", as for any cluster-scoped object) - Volcano's Queue
// status has no conditions. Not again while the PodGroup's status says it
// (a restarted extender). Gangs in such a queue wait naming its problem.
//
// A pass runs when the cache changed (polled every poll_interval) and at
// least every resync_interval (timeouts, status, metrics); after a pass that
// took T, the next one waits pass_pacing x T first, so however fast the
// cluster changes, passes take at most 1 / (1 + pass_pacing) of a core
// (with 3000 pods binding on 1000 nodes, unpaced passes of 17 ms ran 85
// times a second and took that core from kube-scheduler and the API server).
//
// Restart safety: reservations live in the cache only. A restarted extender
// re-plans every gang; members of a gang with a bound member are steered to
// the nodes of the muster.io/gang-plan annotation that bound member carries.
//
// Ownership and threads: the controller owns its memory (WriteMemory: the
// GangRecords and the rest), touched by the pass thread only - RunPass()
// must not run concurrently with itself; Start() runs it from one thread,
// and the writes on the executor's writer thread. The observer's debug JSON
// is read from any thread (DebugJson(), under the observer's lock). Without
// Start(), RunPass() writes synchronously.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/write_executor.h"
#include "extender/cluster_state.h"
#include "extender/gang_inputs.h"
#include "extender/gang_observer.h"
#include "extender/gang_record.h"
#include "extender/gang_writes.h"
#include "extender/queue_step.h"
#include "gang/gang.h"
#include "gang/settle.h"
#include "model/api_objects.h"
#include "model/clock.h"
#include "topology/network.h"

namespace muster::kube {
class Client;
}  // namespace muster::kube

namespace muster::extender {

class ExtenderMetrics;

// The scheduling gate muster's reconciler (or the user) puts on gang members;
// muster lifts it once the gang is reserved (model/pod_group.h).
inline constexpr std::string_view kGangGate = kGangSchedulingGate;

struct GangControllerOptions {
  gang::PassConfig pass;
  // Hold new plans while freed capacity trickles in (--gang-settle-quiet,
  // --gang-settle-max; gang/settle.h).
  gang::SettleConfig settle;
  std::chrono::milliseconds poll_interval{10};
  double pass_pacing = 2.0;
  std::chrono::milliseconds resync_interval{1000};
  // A gang that evicted victims does not evict again before this.
  std::chrono::seconds preemption_grace{30};
  int io_parallelism = 16;  // API writes in flight
  // A waiting gang's Unschedulable message is rewritten at most this often
  // when only its words changed (a phase or count change is written at once).
  std::chrono::seconds status_message_interval{5};
  // A Queue's status (allocated, PodGroup counts) is rewritten at most this
  // often.
  std::chrono::milliseconds queue_status_interval{1000};
  // Lift a gated member's gate together with a required node affinity to its
  // reserved node (pods without affinity only), so kube-scheduler filters
  // one node per member instead of every node. The pin outlives the
  // reservation: a member whose reservation expires unbound can only be
  // planned on that node again (the planner honours the affinity).
  bool pin_members = true;
  // How long a pod the queue gate admitted counts against its queue before
  // a pass sees it placed (kube-scheduler gave up on it after filter).
  std::chrono::seconds queue_charge_ttl{30};
  // Reclaim hysteresis (queue_step.h).
  ReclaimTiming reclaim;
  // Network levels, top to bottom (--network-tiers; topology_step.h): gangs
  // are packed into the lowest tier that holds them. None: anywhere.
  topology::NetworkTiers network_tiers;
  // Told, on the pass thread, how many members a pass hands to
  // kube-scheduler (BindsAhead, gang_writes.h) as its writes start; may be
  // empty. The extender opens the bind client's connections with it
  // (kube::Client::Prewarm), so a released gang's Bindings skip the TLS
  // handshakes. Must not block.
  std::function<void(int members)> binds_ahead;
};

class GangController {
 public:
  // `cluster`, `client` and `clock` must outlive the controller. `client`
  // may be null (tests): nothing is written to the API then. The metrics
  // go to `metrics` when it is not null (it must outlive the controller).
  GangController(ClusterAccess* cluster, kube::Client* client, const Clock& clock,
                 GangControllerOptions options, ExtenderMetrics* metrics);
  ~GangController();
  GangController(const GangController&) = delete;
  GangController& operator=(const GangController&) = delete;

  // One pass, whether or not anything changed.
  void RunPass();
  // Starts the loop thread and the writer; Stop() (or the destructor) ends
  // them. Writes not yet sent are then planned again by a later pass.
  void Start();
  void Stop();

  // Per gang: phase, members, queue, place in the planning order, wait
  // reason; for /debug/state (JSON array).
  std::string DebugJson() const { return observer_.DebugJson(); }
  // Per queue: weight, deserved, allocated, pending demand, share; the
  // problems met reading the queue tree; for /debug/state (JSON object).
  std::string QueuesDebugJson() const { return observer_.QueuesDebugJson(); }

 private:
  void Loop();
  bool ShouldRun(Time now);
  // The steps of RunPass.
  GangInputs ReadInputs(Time now);
  QueueStep RunQueues(GangInputs& inputs, Time now);
  gang::PassResult Decide(const GangInputs& inputs, const QueueStep& queues, Time now) const;
  // Drops the result's plans while freed capacity settles; returns how many.
  size_t HoldWhileSettling(const GangInputs& inputs, gang::PassResult& result, Time now);
  std::vector<std::string> Reserve(const GangInputs& inputs, const QueueStep& queues,
                                   const gang::PassResult& result, Time now);
  // The reclaim hysteresis (queue_step.h) remembers who took from whom.
  void RememberReclaim(const QueueStep& queues, const gang::PassResult& result, Time now);
  void Execute(std::vector<GangWrite> writes);

  ClusterAccess* const cluster_;
  kube::Client* const client_;
  const Clock& clock_;
  const GangControllerOptions options_;
  // The pass thread's, between passes.
  WriteMemory memory_;
  BuiltGangs built_;  // read again only where the cache changed
  ReclaimMemory reclaim_;
  std::optional<Time> last_pass_;
  std::chrono::steady_clock::duration pause_after_pass_{};  // pass_pacing x the last pass
  gang::SettleState settle_;
  std::optional<Time> settle_release_;  // while holding: run a pass then
  uint64_t last_generation_ = ~uint64_t{0};
  GangObserver observer_;
  base::WriteExecutor executor_;  // after observer_: its batches report there
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace muster::extender
