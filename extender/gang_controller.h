// GangController: carries out gang/'s decisions on the live cluster.
//
// Each pass (RunPass):
//   1. inputs  - under the cache lock, the nodes' free capacity and every
//                PodGroup with its member pods (BuildGangInputs);
//   2. decide  - gang::RunPass, outside the lock (pure);
//   3. reserve - under the lock again: each planned member is Assume()d on
//                its node (so filter pins it there and no other pod can take
//                the capacity) and the gang's placement is kept for bind's
//                muster.io/gang-plan annotation; a plan whose capacity went
//                to someone else meanwhile is dropped whole and retried;
//                expired reservations are forgotten;
//   4. act     - API writes, several at a time, on a writer thread so the
//                next pass need not wait for them: lift the muster.io/gang
//                scheduling gate of reserved members, or touch ungated ones
//                (an annotation) so kube-scheduler retries them now rather
//                than after its unschedulable flush; PodGroup status; Events;
//                evictions of preemption victims (Eviction API: PDBs apply).
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
// least every resync_interval (timeouts, status, metrics).
//
// Restart safety: reservations live in the cache only. A restarted extender
// re-plans every gang; members of a gang with a bound member are steered to
// the nodes of the muster.io/gang-plan annotation that bound member carries.
//
// Thread-safety: RunPass() must not run concurrently with itself; Start()
// runs it from one thread (and the writes on another). DebugJson() may be
// called from any thread. Without Start(), RunPass() writes synchronously.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "extender/cluster_state.h"
#include "extender/queue_step.h"
#include "gang/gang.h"
#include "model/api_objects.h"
#include "model/clock.h"
#include "topology/network.h"

namespace muster::kube {
class Client;
}  // namespace muster::kube

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace muster::extender {

// The scheduling gate muster's reconciler (or the user) puts on gang members;
// muster lifts it once the gang is reserved (model/pod_group.h).
inline constexpr std::string_view kGangGate = kGangSchedulingGate;
// Set on an ungated member when it is reserved (the node): the update makes
// kube-scheduler retry the pod at once.
inline constexpr std::string_view kAnnotationReservedNode = "muster.io/reserved-node";

struct GangControllerOptions {
  gang::PassConfig pass;
  std::chrono::milliseconds poll_interval{10};
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
};

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

// Builds the inputs from `state`. `reserved_since` and `preempting` are the
// controller's memory of each gang (by key); `evicted` of the pods it
// evicted (by uid, until when): such a pod counts as terminating before the
// watch shows it, so the next pass neither picks it as a victim again nor
// counts it in its queue's share (two preemptors in a row took the same
// victims, and the second found no room).
GangInputs BuildGangInputs(ClusterState& state, const std::map<std::string, Time>& reserved_since,
                           const std::map<std::string, Time>& preempting,
                           const std::map<std::string, Time>& evicted, Time now);

// The API writes a pass decided (what step 4 carries out).
struct GangWrites {
  struct PodPatch {
    std::string namespace_;
    std::string name;
    std::string uid;
    bool json_patch = false;  // JSON patch (gate removal), else merge patch
    std::string body;
  };
  struct GroupStatus {
    std::string key;
    std::string namespace_;
    std::string name;
    PodGroupStatus status;
  };
  struct Evict {
    std::string namespace_;
    std::string name;
    std::string uid;
  };
  struct QueueStatusWrite {
    std::string name;
    QueueStatus status;
  };
  // A merge patch of a PodGroup muster cannot decode (its answer).
  struct GroupPatch {
    std::string key;
    std::string namespace_;
    std::string name;
    std::string body;
  };
  std::vector<PodPatch> pod_patches;
  std::vector<GroupStatus> statuses;
  std::vector<GroupPatch> group_patches;
  std::vector<QueueStatusWrite> queue_statuses;
  std::vector<Event> events;
  std::vector<Evict> evictions;
};

// Writes not yet sent, coalesced: the latest patch per pod and status per
// PodGroup replace older ones (a slow API server then sees one write per
// object, not a backlog); events and evictions all go.
struct PendingWrites {
  std::map<std::string, GangWrites::PodPatch> pod_patches;             // by pod uid
  std::map<std::string, GangWrites::GroupStatus> statuses;             // by gang key
  std::map<std::string, GangWrites::GroupPatch> group_patches;         // by PodGroup key
  std::map<std::string, GangWrites::QueueStatusWrite> queue_statuses;  // by queue name
  std::vector<Event> events;
  std::vector<GangWrites::Evict> evictions;
  void Add(GangWrites writes);
  GangWrites Take();  // everything, in send order; leaves this empty
  bool Empty() const {
    return pod_patches.empty() && statuses.empty() && group_patches.empty() &&
           queue_statuses.empty() && events.empty() && evictions.empty();
  }
};

// The JSON patch that removes gate `gate` at `index` of a pod's
// spec.schedulingGates, guarded by a test so a list changed meanwhile
// fails the patch rather than removing another gate. With `pin_node`, the
// same patch sets the pod's (absent: tested) affinity to require that node
// by metadata.name.
std::string RemoveGatePatch(size_t index, std::string_view gate, std::string_view pin_node = {});

// Applies a pass's plans and expiries to `state` (step 3). Returns the keys
// of the gangs whose plan was applied; a plan whose member no longer fits
// its node (checked against the state now) is skipped whole.
std::vector<std::string> ApplyPass(ClusterState& state, const GangInputs& inputs,
                                   const gang::PassResult& result, Duration reservation_ttl);

class GangController {
 public:
  // `cluster`, `client` and `clock` must outlive the controller. `client`
  // may be null (tests): nothing is written to the API then. The metrics
  // go to `registry` when it is not null.
  GangController(ClusterAccess* cluster, kube::Client* client, const Clock& clock,
                 GangControllerOptions options, prometheus::Registry* registry);
  ~GangController();
  GangController(const GangController&) = delete;
  GangController& operator=(const GangController&) = delete;

  // One pass, whether or not anything changed.
  void RunPass();
  // Starts the loop thread; Stop() (or the destructor) ends it.
  void Start();
  void Stop();

  // Per gang: phase, members, queue, place in the planning order, wait
  // reason; for /debug/state (JSON array).
  std::string DebugJson() const;
  // Per queue: weight, deserved, allocated, pending demand, share; the
  // problems met reading the queue tree; for /debug/state (JSON object).
  std::string QueuesDebugJson() const;

 private:
  struct Memory;  // what the controller remembers between passes
  struct Metrics;
  void Loop();
  bool ShouldRun(Time now);
  GangWrites Writes(const GangInputs& inputs, const QueueStep& queues,
                    const gang::PassResult& result, const std::vector<std::string>& applied,
                    Time now);
  void PreemptionWrites(const GangInputs& inputs, const QueueStep& queues,
                        const gang::Preemption& p, Time now, GangWrites& out);
  void QueueWrites(const GangInputs& inputs, const QueueStep& queues,
                   const std::map<std::string, std::string>& phases, Time now, GangWrites& out);
  void SetQueueMetrics(const queue::Shares& shares);
  // The answers to PodGroups and Queues that do not decode.
  void BrokenWrites(const GangInputs& inputs, Time now, GangWrites& out);
  void Account(const GangInputs& inputs, Time now);
  bool StatusWorthWriting(const PodGroupStatus& status, const PodGroupStatus& seen,
                          const std::string& key, Time now) const;
  // The writes that failed, to be written again by a later pass.
  struct Failed {
    std::vector<std::string> woken;    // pod uids
    std::vector<std::string> written;  // gang keys
    std::vector<std::string> queues;   // queue names (status)
    std::vector<std::string> broken;   // keys of PodGroups not answered
  };
  Failed Execute(const GangWrites& writes);
  void Forget(const Failed& failed);
  void WriterLoop();

  ClusterAccess* const cluster_;
  kube::Client* const client_;
  const Clock& clock_;
  const GangControllerOptions options_;
  std::unique_ptr<Memory> memory_;
  std::unique_ptr<Metrics> metrics_;
  mutable std::mutex debug_mu_;
  std::string debug_json_ = "[]";
  std::string queues_debug_json_ = "{}";
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // The writer thread's queue, and what it failed to write.
  std::mutex writes_mu_;
  std::condition_variable writes_cv_;
  PendingWrites queued_writes_;
  Failed failed_writes_;
  bool writer_running_ = false;
  std::thread writer_;
};

}  // namespace muster::extender
