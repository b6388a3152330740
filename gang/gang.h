// gang: all-or-nothing placement of PodGroups, as a pure decision over a
// snapshot of the cluster.
//
// The extender's gang controller (extender/gang_controller.h) builds a
// ClusterView and the list of Gangs from its cache, calls RunPass(), and
// carries the decisions out: it reserves each planned member on its node
// (an assumed placement in the cache, so no other decision can take the
// capacity), lifts the members' scheduling gate or wakes them, and from then
// on `filter` answers exactly the reserved node for each member. Nothing here
// does I/O, reads a clock or keeps state between passes: the same inputs give
// the same decisions.
//
// Rules (issue #5):
//  - A gang is placed whole or not at all: a plan exists for at least
//    `minMember` members and every task's `minTaskMember`, counting members
//    already bound or reserved; only then are its pending members reserved,
//    all at once. Members beyond the minimum are placed best-effort (elastic
//    gangs): with the minimum when the gang is alone in the pass; when
//    several gangs are planned, one member per turn to the gang of highest
//    priority holding the least (DRF, Volcano's allocate order), so elastic
//    gangs larger than the cluster share it; within what their queues
//    leave, one by one.
//  - Gangs are planned one after another in GangOrder (the queue step's
//    rank, then priority, then age), each against the capacity the earlier
//    ones left, so two gangs never hold partial reservations. A gang in a
//    queue (Gang::queues) is planned only within its queue's capability left
//    (QueueLimit::room).
//  - A gang whose members have not claimed (bound) their reservation within
//    PassConfig::reservation_timeout of the last progress loses its unclaimed
//    reservations and is planned again on a later pass.
//  - Preemption: the first gang in order that cannot be placed may evict
//    whole gangs of strictly lower priority in its own queue; the victim set
//    is the fewest GPUs, then the lowest priority, then the youngest, and
//    minimal (no victim can be spared).
//  - Reclaim (issue #6): when that gang's queue holds less than it deserves
//    and the gang fits within what the queue deserves (dominant share of
//    allocated + its pending members <= 1), it may also evict whole gangs of
//    other, reclaimable queues that hold more than they deserve, lowest
//    priority then youngest first, as long as each such queue keeps at least
//    its deserved share (allocated/deserved >= 1 after the eviction).
//    Hysteresis follows: the reclaiming queue ends at or below its due and
//    its victim at or above its own, so neither has a claim on the other
//    right after; QueueLimit adds the caller's time-based hysteresis.
//  - Conformance (issue 19, gang/conformance.h): neither preemption nor
//    reclaim takes a victim that is not VictimCandidate::evictable (a gang
//    with a kube-system or system-critical member); the next candidate is
//    taken instead.
//
// Thread-safety: everything here is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/gpu_share.h"
#include "model/network_domain.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/resources.h"
#include "model/shared_list.h"
#include "model/time.h"

namespace muster::gang {

// The annotation (then label) naming a member's task in a Volcano Job.
inline constexpr std::string_view kTaskSpecKey = "volcano.sh/task-spec";

// ---------------------------------------------------------------------------
// Inputs.

enum class MemberState {
  kPending,    // not bound, no reservation
  kReserved,   // not bound, capacity reserved on `node` by an earlier pass
  kBound,      // spec.nodeName set, not finished (Pending/Running on a node)
  kSucceeded,  // finished with phase Succeeded
  kFailed,     // finished with phase Failed
};
std::string_view MemberStateName(MemberState state);

struct Member {
  // A pending member of `pod`, its request and GPU demand computed.
  static Member Of(std::shared_ptr<const Pod> pod);

  std::shared_ptr<const Pod> pod;  // never null
  // pod->EffectiveRequest(), computed once (Of, or the cache's copy): every
  // pass reads it for every member (queue shares, victims, slots), and
  // computing it anew - containers, init containers, overhead, a GPU
  // share's annotations - was a fifth of a pass at 5000 PodGroups.
  Resources request;
  // GpuDemandOf(*pod), computed once like `request` (the planner read it
  // for every pending member of every gang it tried: an eighth of a pass
  // over 1000 waiting gangs), and why it does not read ("" when it does; a
  // member whose GPU request does not read fits nowhere).
  GpuDemand gpu_demand;
  std::string gpu_problem;
  // The GPUs a bound member holds, as the extender's cache read them from
  // its muster.io/gpu-ids or muster.io/gpu-shares once (empty: none,
  // unreadable, or a member made by Of): a victim candidate gives them back.
  GpuHolding gpus;
  MemberState state = MemberState::kPending;
  std::string node;  // kReserved, kBound and finished: where
  // A node a persisted gang plan (a bound member's muster.io/gang-plan
  // annotation) assigned to this pod: preferred when it fits, so a restarted
  // extender re-reserves what its predecessor planned.
  std::string hint;
  bool terminating = false;  // deletionTimestamp set

  // The task: the volcano.sh/task-spec annotation, else the label, else "".
  std::string Task() const;
  bool Scheduled() const {
    return state != MemberState::kPending && state != MemberState::kReserved;
  }
  bool Finished() const {
    return state == MemberState::kSucceeded || state == MemberState::kFailed;
  }
};

// What a gang's members amount to, kept with its member list (the list's
// summary, model/shared_list.h): every pass asks it of every gang, and at
// 5000 running Jobs walking their 55 000 members for it each time was a
// third of a pass.
struct MemberSummary {
  static MemberSummary Of(const std::vector<Member>& members);

  // Members per state. `awaiting`: pending and not terminating (to place,
  // AwaitsPlacement); `running`: bound, the pod in phase Running (what
  // Volcano's status.running counts).
  int32_t pending = 0;
  int32_t awaiting = 0;
  int32_t reserved = 0;
  int32_t bound = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  // What the unfinished members request, by state, pod slots left out;
  // terminating members apart (`leaving`: the bound ones, on their way
  // out; a terminating member not bound requests nothing).
  Resources pending_request;
  Resources reserved_request;
  Resources bound_request;
  Resources leaving_request;

  int32_t Finished() const { return succeeded + failed; }
  // Bound or finished (Member::Scheduled).
  int32_t Scheduled() const { return bound + Finished(); }
};

using MemberList = SharedList<Member, MemberSummary>;

struct Gang {
  std::string key;  // "namespace/name" of the PodGroup
  PodGroupSpec spec;
  Time created;          // the PodGroup's creationTimestamp
  int32_t priority = 0;  // the highest spec.priority among the members
  // Where the queue step (queue::RankGangs) ranks the gang: lower goes
  // first, before priority. Equal (0) for all without queues.
  int32_t queue_rank = 0;
  // The gang's queue, then the queue's ancestors; empty when queue limits
  // and reclaim do not apply to it.
  std::vector<std::string> queues;
  // In pod-name order. Shared by the gang's copies (the extender's pass
  // copies every gang each pass and changes the members of few), with
  // their MemberSummary.
  MemberList members;
  // When the gang's current reservation was made or last progressed (a
  // member bound); unset when it holds no reservation.
  std::optional<Time> reserved_since;
  // Gangs already evicting victims for this one (a preemption in flight):
  // RunPass does not choose victims for it again.
  bool preempting = false;
  // The PodGroup's status.phase as last written ("" for none): a gang once
  // Inqueue (or beyond) stays admitted.
  std::string phase;
  // Network placement (issue #7): the cluster's network domains (shared by
  // every gang of a pass), of which the gang may use those of tier <=
  // `domain_tier`. The planner tries the lowest tier first, the tightest
  // (fewest free GPUs) domain first within a tier, and takes the first that
  // holds the whole minimum; then, unless `domains_required`, anywhere.
  // Null: anywhere.
  std::shared_ptr<const std::vector<NetworkDomain>> domains;
  int domain_tier = 0;
  bool domains_required = false;
  std::string domain_level;  // "rack": the name of `domain_tier`, for messages
};

// A node as the planner sees it. A member fits a node when the node is
// schedulable, its labels match the pod's nodeSelector and required node
// affinity, the pod tolerates its NoSchedule/NoExecute taints, and every
// positive entry of the pod's EffectiveRequest() (plus pods=1) is <= free
// (a resource absent from free is 0 free). node->allocatable is what an
// empty node would offer: it decides kWaitNeverFits.
//
// When a node's GPU layout is known, the planner also places members by the
// GPU set they would get there (GpuLayout): the best link first, then the
// usual best fit.
struct GpuPick {
  uint32_t gpus = 0;  // bit i: GPU i
  int link = 0;       // the set's weakest link; higher is better, 0 unknown
  int damage = 0;     // GPUs it leaves stranded (best-link partnerless), less those
                      // it takes from them; lower is better
  friend bool operator==(const GpuPick&, const GpuPick&) = default;
};
// The GPUs of a node model as the topology layer sees them (the extender
// adapts topology::TopologyIndex): gang/ knows nothing of links.
// Thread-safety: implementations are immutable and shared.
class GpuLayout {
 public:
  virtual ~GpuLayout() = default;
  // The best k of the GPUs in `free`; nothing when fewer than k are usable.
  virtual std::optional<GpuPick> Pick(uint32_t free, int k) const = 0;
  // The best link any k GPUs of this layout have (all of them free); 0 when
  // it has fewer than k.
  virtual int BestLink(int k) const = 0;
};

struct NodeView {
  std::shared_ptr<const Node> node;             // never null: name, labels, taints
  Resources free;                               // allocatable minus everything counted (may be < 0)
  bool schedulable = true;                      // Ready and not cordoned
  std::shared_ptr<const GpuLayout> gpu_layout;  // null: GPU links unknown
  uint32_t free_gpus = 0;                       // which GPUs nobody holds, whole or shared
  // GPU sharing (model/gpu_share.h): the node's GPUs told apart (null: they
  // are not, and members sharing GPUs do not fit here) and what their
  // holders hold of them.
  std::shared_ptr<const std::vector<GpuCard>> gpu_cards;
  GpuUses gpu_uses{};
  const std::string& name() const { return node->meta.name; }
};

struct ClusterView {
  std::vector<NodeView> nodes;  // in name order
};

// A running unit that preemption may evict: a gang with bound members.
struct VictimCandidate {
  std::string key;  // gang key
  int32_t priority = 0;
  Time created;
  struct Pod {
    std::string uid;
    std::string namespace_;
    std::string name;
    std::string node;
    Resources request;  // what it holds on node (EffectiveRequest, pods=1 included)
    GpuHolding gpus;    // which of the node's GPUs it holds, when known
  };
  SharedList<Pod> pods;             // every bound, unfinished, non-terminating member
  int64_t gpus = 0;                 // nvidia.com/gpu held by `pods`, thousandths
  std::vector<std::string> queues;  // as Gang::queues
  // What `pods` request, without pod slots: set with `pods`, by whoever
  // builds the candidate (once per change of the gang, not per pass).
  Resources holds;
  // False when the gang has a member muster never evicts (Evictable(const
  // Gang&), gang/conformance.h): preemption and reclaim pass it over whole.
  bool evictable = true;
};

// What a queue allows in this pass (issue #6), from the queue step.
struct QueueLimit {
  // Capability left for new reservations; only the resources named here are
  // limited. Unset: no capability.
  std::optional<Resources> room;
  Resources allocated;  // what its gangs and pods hold, requests only
  // The part of `allocated` bound to nodes (not merely reserved); unset:
  // all of it. Reclaim judges a victim queue by it: a reservation may still
  // expire, so only bound work keeps the victim queue at its share.
  std::optional<Resources> bound;
  Resources deserved;
  bool reclaimable = true;
  const Resources& Bound() const { return bound ? *bound : allocated; }
  // Hysteresis from the caller's memory: whether this queue may reclaim now
  // (it has been short of its share long enough), and the queues it must
  // spare (they reclaimed from it lately: taking back would flip-flop).
  bool reclaim_allowed = true;
  std::vector<std::string> spare;
};
using QueueLimits = std::map<std::string, QueueLimit>;  // by queue name

struct PassConfig {
  Duration reservation_timeout = std::chrono::seconds(60);
  bool preemption = true;
  // The starvation bound. The first gang in order that waits for capacity
  // and was created at least this long ago becomes the head of the line:
  // RunPass earmarks the nodes it will start on (the ones nearest to free,
  // enough for its minimum on empty nodes) and lets no gang behind it start
  // there, so those nodes drain for it while the others keep backfilling.
  // Without it, a stream of small gangs can keep a big one waiting forever.
  Duration head_of_line_after = std::chrono::seconds(10);
  // Whether a queue below its deserved share reclaims from queues above
  // theirs (needs QueueLimits).
  bool reclaim = true;
};

// ---------------------------------------------------------------------------
// Decisions.

struct Assignment {
  std::string pod_uid;
  std::string pod_name;
  std::string node;
  GpuHolding gpus;  // the GPUs planned on the node, whole or shared (empty: not chosen)
  friend bool operator==(const Assignment&, const Assignment&) = default;
};

// The plan of one gang: every member's node, new or not.
struct GangPlan {
  std::string key;
  // The pending members to reserve now, in pod-name order.
  std::vector<Assignment> reserve;
  // Every member with a node after the plan (bound, reserved and the new
  // ones), in pod-name order: what the Binding annotation persists.
  std::vector<Assignment> placement;
  // Over the members reserved now: how many link classes their GPU sets are
  // below the best their node's layout has for their size (0: all ideal, or
  // no layout known).
  int link_shortfall = 0;
  // Over the same members: the GPUs their sets leave stranded (GpuPick::damage).
  int gpus_stranded = 0;
  // Lower is better: link first, then stranding.
  auto GpuCost() const { return std::pair(link_shortfall, gpus_stranded); }
  friend bool operator==(const GangPlan&, const GangPlan&) = default;
};

struct Preemption {
  std::string preemptor;             // gang key
  std::vector<std::string> victims;  // gang keys, in eviction order
  // The victims from other queues (a subset of `victims`), taken back for
  // the preemptor's queue `queue`.
  std::vector<std::string> reclaimed;
  std::string queue;
  std::vector<VictimCandidate::Pod> pods;  // every pod of every victim
};

// Why a gang waits, for the PodGroup's Unschedulable condition and
// /debug/state. `message` is for users ("6/8 members placeable: 2 need
// nvidia.com/gpu=8, largest free is 4"); `reason` is a bounded code.
struct Wait {
  std::string key;
  std::string_view reason;  // kWait* below
  std::string message;
  int32_t placeable = 0;  // members a plan could place (bound/reserved included)
};
inline constexpr std::string_view kWaitMembers = "NotEnoughTasks";  // fewer pods than minMember
inline constexpr std::string_view kWaitResources = "NotEnoughResources";  // does not fit now
inline constexpr std::string_view kWaitNeverFits = "Unplaceable";  // not even on an empty cluster
inline constexpr std::string_view kWaitQueueCapability = "QueueCapability";  // its queue is full
// Its queue would go past its deserved share while a queue below its own
// waits for capacity.
inline constexpr std::string_view kWaitQueueOverShare = "QueueOverShare";
// A required network domain (Gang::domains_required) holds no plan now.
inline constexpr std::string_view kWaitNetworkTopology = "NetworkTopology";

struct PassResult {
  // The head of the line (PassConfig::head_of_line_after) and the nodes
  // kept for it this pass; empty when there is none.
  std::string head;
  std::vector<std::string> earmarked;
  // Gangs moving Pending -> Inqueue this pass (Volcano's enqueue): in
  // GangOrder, each whose spec.minResources (nothing when unset) fits the
  // sum of free capacity over schedulable nodes left after the gangs admitted
  // before it that hold no reservation yet - or, with PassConfig::reclaim,
  // fits within what its queue deserves beyond what it holds and has
  // admitted (reclaim will make the room). The reconciler creates a Job's
  // pods only once its PodGroup is Inqueue.
  std::vector<std::string> admitted;
  std::vector<GangPlan> plans;           // in GangOrder
  std::vector<std::string> expired;      // gang keys whose unclaimed reservations go
  std::vector<Wait> waits;               // in GangOrder
  std::optional<Preemption> preemption;  // at most one per pass
};

// ---------------------------------------------------------------------------
// Functions.

// True when `a` goes before `b`: higher priority, lower queue_rank, older,
// then key.
bool GangOrder(const Gang& a, const Gang& b);

// True when `pod` may go on `node` at all (schedulable, selectors, affinity,
// taints), resources aside.
bool NodeAdmits(const NodeView& node, const Pod& pod);

// Plans one gang on `view` without changing it. A GangPlan when the minimum
// (minMember, minTaskMember) is met, else the Wait that says why.
// Bound, reserved and finished members count as placed; pending members that
// are not terminating are placed. The minimum is made of the smallest pending
// members (each task's first, then minMember's), placed largest first
// (GPUs, cpu, name) on: the member's `hint` if it fits, else a node the gang
// already uses with the fewest GPUs (then cpu) left, else any node so ranked,
// ties by name. Only once the minimum is placed are the other pending members
// placed where they fit (in the same order); the rest stay pending. A plan
// may have an empty `reserve` (nothing left to place now).
// Waits: kWaitMembers when fewer pods exist than a minimum; kWaitNeverFits
// when the same greedy fails on every node's allocatable (less the gang's
// own members); else kWaitResources.
// REQUIRES: view.nodes' free already excludes the gang's bound and reserved
// members.
// `max_extras` bounds the members placed beyond the minimum (< 0: none).
std::variant<GangPlan, Wait> PlanGang(const Gang& gang, const ClusterView& view,
                                      int max_extras = -1);

// Whether the gang waits for admission (its PodGroup has no phase yet or is
// Pending): Volcano's enqueue has not let it in.
bool AwaitsAdmission(const Gang& gang);

// What admitting the gang asks of the cluster: its PodGroup's
// spec.minResources as node resources ("requests.cpu" is cpu; "limits.*" and
// "count/*" are ignored); empty when unset.
Resources AdmissionNeed(const Gang& gang);

// One pass over every gang: expires stale reservations, plans the gangs in
// GangOrder against the capacity the earlier ones leave, and picks victims
// for the first gang that does not fit when preemption can place it.
// `victims` lists the running gangs preemption may choose from; `queues`
// the limits of the queues named by Gang::queues (a queue missing from it
// has none).
// Details: `expired` is in GangOrder; an expired gang gets neither a plan nor
// a wait in that pass. A gang refused admission (it has minResources, holds
// nothing and does not fit now) waits with kWaitQueueCapability or
// kWaitResources ("not admitted: ...") whether or not it has pods, and its
// members are not planned: Volcano allocates only jobs its enqueue let in.
// Every other gang with pending members is planned. Admission
// reads Volcano's quota names in minResources as node resources
// ("requests.cpu" is cpu; "limits.*" and "count/*" are ignored). The
// preemptor is the first gang waiting with kWaitResources that is not
// `preempting`; it gets no reservation in this pass. Victims that are not
// `evictable` are never chosen; when the preemptor gets no victim set while
// such candidates would otherwise qualify, its wait message says how many
// gangs conformance spared. Queue limits: a gang reserves nothing past its
// queue's capability (kWaitQueueCapability), nor
// past its queue's deserved share once a gang of another queue below its
// own deserved share waits with kWaitResources earlier in the order
// (kWaitQueueOverShare): idle capacity is lent only when no queue owed it
// wants it.
PassResult RunPass(const ClusterView& view, std::vector<Gang> gangs,
                   const std::vector<VictimCandidate>& victims, Time now, const PassConfig& config,
                   const QueueLimits& queues = {});

// ---------------------------------------------------------------------------
// Status.

// Volcano's reason for the Scheduled condition, kept verbatim for tools
// that match on it.
inline constexpr std::string_view kScheduledReason = "tasks in gang are ready to be scheduled";

// The PodGroup status a gang should show (Volcano's phases); "scheduled" is
// bound or finished:
//   Completed: >= minMember (and >= 1) scheduled and every scheduled member
//              finished;
//   Running:   >= minMember (and >= 1) scheduled;
//   Unknown:   some scheduled but fewer than minMember, and a wait applies;
//   Inqueue:   `admitted`, it holds a reservation, or gang.phase was
//              Inqueue/Running/Unknown before (stays);
//   Pending:   otherwise.
// running/succeeded/failed count members (running: bound with pod phase
// Running, as Volcano counts). With `wait`, an Unschedulable condition
// (status True, reason wait->reason, message wait->message); otherwise, once
// scheduled or reserved members reach minMember (and >= 1), a Scheduled
// condition (reason kScheduledReason).
// Only that one condition is returned; `previous` keeps lastTransitionTime
// when a condition of the same type and status was there.
PodGroupStatus StatusOf(const Gang& gang, bool admitted, const Wait* wait,
                        const PodGroupStatus& previous, Time now);

}  // namespace muster::gang
