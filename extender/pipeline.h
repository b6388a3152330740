// START HERE. The extender's verb pipeline: how one kube-scheduler request
// becomes one reply, as a short sequence of named steps over the wire types
// of kube/codec/extender_types.h and the cache of cluster_state.h.
//
//   kube-scheduler --POST {prefix}/filter--> HTTP layer --> Pipeline::Filter(body) --> VerbReply
//
// One file per verb, each reading top to bottom as its steps:
//   filter.cc      decode -> snapshot -> gang -> queue -> fit (or pin) -> encode
//   prioritize.cc  decode -> snapshot -> gang -> score -> encode
//   preempt.cc     decode -> snapshot -> gang -> narrow victims -> encode
//   bind.cc        decode -> reserve (plan + Assume, atomically) -> [the HTTP layer
//                  POSTs plan.binding] -> finish (keep or release the reservation) -> encode
// pipeline.cc holds the steps the verbs share (decode of the candidates, the
// gang gate, what filter asks the queue, the demand of a pod).
//
// The wire contract (kube-scheduler v1.30-v1.37: k8s.io/kube-scheduler/extender/v1,
// whose types.go is the same in v0.34.4 and v0.37.2;
// HTTPExtender in pkg/scheduler/extender.go):
//  - filter and bind always answer HTTP 200; a fault (a body that does not
//    decode, a bind that failed) travels in "Error", which fails the pod's
//    cycle (SchedulerError, backoff) rather than calling it unschedulable.
//  - prioritize and preempt have no Error field: a body that does not decode
//    is HTTP 400 with a text body (kube-scheduler does not read it).
//  - Only names that were sent come back, in NodeNames/Nodes, FailedNodes,
//    FailedAndUnresolvableNodes and HostPriority; any other name would make
//    kube-scheduler fail the call.
//  - nodeCacheCapable: the reply takes the request's form. NodeNames in ->
//    NodeNames out; Nodes in -> the passing Node objects echoed verbatim
//    (NodeWithRaw::raw_json). Either way the decision uses the cache, never
//    the Node objects of the request.
//  - FailedNodes = Unschedulable: the node could take the pod once something
//    changes there (preemption may try it). FailedAndUnresolvableNodes =
//    preemption cannot help (the node is too small, or unknown to muster).
//    Reasons are short and name no node, so kube-scheduler's FailedScheduling
//    histogram ("0/16 nodes are available: 12 muster: needs 4 nvidia.com/gpu
//    (2 free of 8), ...") aggregates them; the node is the map key already.
//  - prioritize scores every candidate with an integer in [0, 10].
//  - preempt answers NodeNameToMetaVictims (UIDs) in both modes and never
//    keeps a node without victims (kube-scheduler rejects that reply).
//
// Verdicts are values (Verdict, GateVerdict, BindPlan), not Status: "does
// not fit" is an answer. Status is only for faults (a body that does not
// decode, a failed API call). Every verdict carries a bounded reason code
// (kReason*) for metrics and a message for humans.
//
// The default policy: fit on the resources muster manages (nvidia.com/gpu
// plus PolicyConfig::extra_managed_resources) against the cache; score by GPU
// binpack (fewer partially used GPU nodes) or, configured, spread. The gang
// step holds a gang member until the gang controller (gang_controller.h) has
// reserved its whole gang, then pins it to its reserved node. The queue step
// (filter only) asks the queue of a pod no gang pass releases - a plain pod,
// in Volcano's PodGroup of one, or an ungated member of a PodGroup of
// minMember <= 1 - whether it may start now (queue_gate.h).
//
// Thread-safety: a Pipeline is immutable after construction; its methods may
// run concurrently if its ClusterAccess is thread-safe (ClusterCache is).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster_state.h"
#include "kube/codec/extender_types.h"
#include "model/api_objects.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/resources.h"
#include "model/status.h"

namespace muster::extender {

// ---------------------------------------------------------------------------
// Configuration.

enum class ScoreStrategy {
  kBinpack,  // prefer nodes the pod fills up: keeps whole GPU nodes free
  kSpread,   // prefer emptier nodes
};

struct PolicyConfig {
  // Resources muster fits pods on besides nvidia.com/gpu, which is always
  // managed (e.g. "rdma/hca"). Duplicates are ignored.
  std::vector<std::string> extra_managed_resources;
  ScoreStrategy score_strategy = ScoreStrategy::kBinpack;
  // ClusterStateOptions::gang_schedulers: the schedulerNames whose plain pods
  // are each Volcano's PodGroup of one (the same list the cache uses).
  std::vector<std::string> gang_schedulers = {std::string(kVolcanoSchedulerName)};
};

// nvidia.com/gpu plus config.extra_managed_resources, sorted, unique.
std::vector<std::string> ManagedResources(const PolicyConfig& config);

// Annotations muster puts on the Binding; the API server merges them into
// the pod atomically with spec.nodeName, so a restarted muster (and a human)
// can tell what was placed where.
inline constexpr std::string_view kAnnotationNode = "muster.io/node";
// The managed resources muster placed, as Resources::ToString() writes them
// ("nvidia.com/gpu=4"; "none" for a pod asking for none).
inline constexpr std::string_view kAnnotationResources = "muster.io/resources";

// ---------------------------------------------------------------------------
// Reason codes: a bounded set, for metrics labels. Messages carry the numbers.

inline constexpr std::string_view kReasonFits = "fits";
inline constexpr std::string_view kReasonInsufficient = "insufficient";  // Unschedulable
inline constexpr std::string_view kReasonExceedsNode = "exceeds_node";   // Unresolvable
inline constexpr std::string_view kReasonNodeUnknown = "node_unknown";   // Unresolvable
inline constexpr std::string_view kReasonAdmitted = "admitted";
// The pod's GPU request does not read (model/gpu_share.h GpuDemandOf).
inline constexpr std::string_view kReasonGpuRequest = "gpu_request";  // Unresolvable
inline constexpr std::string_view kReasonBadRequest = "bad_request";
// bind
inline constexpr std::string_view kReasonBindPost = "post";
inline constexpr std::string_view kReasonBound = "bound";
inline constexpr std::string_view kReasonAlreadyBound = "already_bound";
inline constexpr std::string_view kReasonBoundElsewhere = "bound_elsewhere";
inline constexpr std::string_view kReasonPodUnknown = "pod_unknown";
inline constexpr std::string_view kReasonPodMismatch = "pod_mismatch";
inline constexpr std::string_view kReasonPodFinished = "pod_finished";
inline constexpr std::string_view kReasonApiError = "api_error";
// gang (filter, bind)
inline constexpr std::string_view kReasonGangWaiting = "gang_waiting";  // Unresolvable
inline constexpr std::string_view kReasonNoPodGroup = "no_podgroup";    // Unresolvable
// The pod's PodGroup exists but does not decode (a field its CRD accepts and
// muster cannot read): the message names the field.
inline constexpr std::string_view kReasonPodGroupInvalid = "podgroup_invalid";  // Unresolvable
// A PodGroup of minMember <= 1 not admitted yet (Pending: its minResources
// wait for room), or a queue that holds the pod back (filter).
inline constexpr std::string_view kReasonAwaitingAdmission = "awaiting_admission";  // Unresolvable
inline constexpr std::string_view kReasonQueueWaiting = "queue_waiting";            // Unresolvable
inline constexpr std::string_view kReasonReservedElsewhere = "reserved";            // Unresolvable
// preempt
inline constexpr std::string_view kReasonVictimsKept = "victims_kept";
inline constexpr std::string_view kReasonNoVictims = "no_victims";
inline constexpr std::string_view kReasonBreaksGang = "breaks_gang";
// A victim muster never evicts (gang/conformance.h).
inline constexpr std::string_view kReasonConformance = "conformance";

// Every reason message starts so, to tell muster's reasons from in-tree ones
// in a FailedScheduling event.
inline constexpr std::string_view kReasonPrefix = "muster: ";

// ---------------------------------------------------------------------------
// Replies.

enum class ReplyOutcome {
  kOk,          // a decision was made and answered without Error (filter: whatever it was)
  kBadRequest,  // the request did not decode, lacked a field or contradicted itself
  kFault,       // the reply reports an error: bind refused or its POST failed
};
std::string_view ReplyOutcomeName(ReplyOutcome outcome);  // "ok" "bad_request" "fault"

// How many nodes (filter), victim nodes (preempt) or pods (bind) each reason
// code decided: the "decisions by reason" metric.
using DecisionCounts = std::map<std::string_view, int64_t>;

// What the HTTP layer writes back: status, content type and body as given.
struct VerbReply {
  int http_status = 200;
  std::string_view content_type = "application/json";
  std::string body;
  ReplyOutcome outcome = ReplyOutcome::kOk;
  DecisionCounts decisions;
  // bind, when a pod was bound with GPUs: the weakest link of the GPU set
  // chosen (topology::LinkClassName, "single" for one GPU) or "unchosen"
  // (the node's topology unknown). Empty otherwise.
  std::string_view gpu_set;
  // filter of a pod sharing GPUs, or whose GPU request does not read: the
  // muster_gpu_share_requests_total outcome ("waiting", "invalid"); empty
  // otherwise (and when some node fits).
  std::string_view share_outcome;
};

// ---------------------------------------------------------------------------
// Verdicts.

// From best to worst (filter.cc relies on the order).
enum class Verdict {
  kFit,            // the node can take the pod
  kUnschedulable,  // -> FailedNodes
  kUnresolvable,   // -> FailedAndUnresolvableNodes
};

struct NodeVerdict {
  Verdict verdict = Verdict::kFit;
  std::string_view code = kReasonFits;
  std::string reason;  // "" for kFit
  friend bool operator==(const NodeVerdict&, const NodeVerdict&) = default;
};

enum class GateAction {
  kAdmit,   // go on to fit and score
  kWait,    // every node Unschedulable with `reason` (retried on cluster events)
  kReject,  // every node Unresolvable with `reason`
};

// The verdict of a pod-level step (admission, gang), which holds for every node.
struct GateVerdict {
  GateAction action = GateAction::kAdmit;
  std::string_view code = kReasonAdmitted;
  std::string reason;
  // kAdmit only: the pod holds a reservation (its gang's plan) on this node,
  // and every other node is Unresolvable for it. "" for none.
  std::string pinned_node;
  friend bool operator==(const GateVerdict&, const GateVerdict&) = default;
};

// ---------------------------------------------------------------------------
// Steps shared by filter and prioritize (pipeline.cc).

// The nodes kube-scheduler asks about, in the order it sent them. Move-only:
// `names` views the request body, or `nodes` and `decoded_names` below,
// whose strings a move keeps in place and a copy would not.
struct Candidates {
  bool cache_mode = true;  // NodeNames was sent (nodeCacheCapable)
  // Both modes. Views, not copies: 5000 names are nearly all of a request
  // (kube/codec/extender_args_view.h).
  std::vector<std::string_view> names;
  // No name needs escaping in JSON (kube::PlainJsonStrings of the request),
  // so the reply writes them unchecked: a check per name costs more than
  // the rest of writing them.
  bool plain_names = false;
  // Non-cache mode: the Node items, parallel to `names`, echoed verbatim.
  std::vector<kube::NodeWithRaw> nodes;
  // Cache mode, names the body could not lend (an escape, a null): decoded here.
  std::vector<std::string> decoded_names;

  Candidates() = default;
  Candidates(Candidates&&) = default;
  Candidates& operator=(Candidates&&) = default;
  Candidates(const Candidates&) = delete;
  Candidates& operator=(const Candidates&) = delete;
};

struct ExtenderRequest {
  Pod pod;
  Candidates candidates;
};

// decode: ExtenderArgs -> pod + candidates. InvalidArgument naming the JSON
// path when the body does not decode, or when it carries neither Nodes nor
// NodeNames (kube-scheduler always sends exactly one). REQUIRES: `body`
// outlives the result (the candidates' names may view it).
StatusOr<ExtenderRequest> DecodeExtenderRequest(std::string_view body);

// What a pod asks of a node in the resources muster manages, and where it
// already holds resources (credited back on that node, so a retried filter
// or bind does not count the pod against itself).
struct PodDemand {
  Resources request;  // managed resources with a positive request
  std::optional<Placement> own;
  // What it asks of GPUs, whole or shared (model/gpu_share.h); empty when
  // `gpu_problem` says why its GPU request cannot be read.
  GpuDemand gpu;
  std::string gpu_problem;
  // Per entry of request, ClusterSnapshot::IndexOf its resource (-1: not
  // indexed). Empty (or short) means "search NodeInfo's Resources": same
  // amounts, only slower.
  std::vector<int> indexed;
  // The credit for `resource` on node `node`: own's amount when own is there.
  int64_t Credit(std::string_view node, std::string_view resource) const {
    return own.has_value() && own->node == node ? own->resources.Get(resource) : 0;
  }
  // The same for the GPUs own holds there (a retried bind keeps its set).
  GpuHolding GpuCredit(std::string_view node) const {
    return own.has_value() && own->node == node ? own->gpus : GpuHolding{};
  }
  // What `node` has of request.entries()[entry]'s resource.
  struct Amounts {
    int64_t allocatable = 0;
    int64_t allocated = 0;
  };
  Amounts AmountsOn(const NodeInfo& node, size_t entry) const {
    const int i = entry < indexed.size() ? indexed[entry] : -1;
    if (i >= 0) {
      const auto at = static_cast<size_t>(i);
      return {node.indexed_allocatable[at], node.indexed_allocated[at]};
    }
    const std::string& resource = request.entries()[entry].first;
    return {node.allocatable.Get(resource), node.allocated.Get(resource)};
  }
};
PodDemand DemandOf(const Pod& pod, const std::vector<std::string>& managed,
                   const ClusterSnapshot& snapshot);
// The entries of `request` named in `managed` with a positive amount.
Resources ManagedPart(const Resources& request, const std::vector<std::string>& managed);

// gang: may the pod's group be placed now? A pod holding a reservation goes
// on pinned to its node (snapshot.pod_placement() is an assumed placement).
// Otherwise: a pod in no group (GroupOfPod) goes on as usual, and so does
// one in Volcano's PodGroup of one; one whose PodGroup does not exist waits
// for it; a member of a PodGroup of minMember <= 1 goes on once the PodGroup
// is admitted (Inqueue or beyond, or it sets no minResources: nothing to
// admit) and waits before (kReasonAwaitingAdmission); a gang member waits
// until the gang controller has reserved the whole gang. Every wait is
// Unresolvable, so kube-scheduler's preemption does not try. Filter,
// prioritize and preempt all run it first (filter then asks the queue).
GateVerdict AdmitByGang(const Pod& pod, const ClusterSnapshot& snapshot,
                        const std::vector<std::string>& gang_schedulers);
// queue: what the filter asks the pod's queue (QueueGate::Admit), or nothing
// when the queue has had its say already: a pod holding a reservation (the
// gang pass charged its queue), a member of a gang of minMember > 1, a pod
// in no group.
std::optional<QueueAsk> QueueAskOf(const Pod& pod, const ClusterSnapshot& snapshot,
                                   const std::vector<std::string>& gang_schedulers);

// ---------------------------------------------------------------------------
// filter.cc

// fit: can `node` (the cache's entry for the candidate; null when unknown)
// take the demand? Unresolvable when unknown or when a request exceeds the
// node's allocatable; Unschedulable when it exceeds what is free now. GPUs
// are fitted one by one too when it matters (GpuFitOnNode).
NodeVerdict FitOnNode(const PodDemand& demand, const NodeInfo* node);
// Whether the counts alone may not decide the GPU fit: the pod shares GPUs,
// or asks whole ones of a node where some are shared.
bool NeedsGpuFit(const PodDemand& demand, const NodeInfo& node);
// The GPU fit on a node whose counts fit: a share needs GPUs that can give
// it (PlaceSharesOn; Unresolvable when not even the empty node could),
// whole GPUs need that many GPUs nobody shares or holds.
NodeVerdict GpuFitOnNode(const PodDemand& demand, const NodeInfo& node);
// FitOnNode(demand, node).verdict, without building a message: the check the
// hot paths (filter of a fitting node, prioritize) run for every candidate.
Verdict FitVerdictOnNode(const PodDemand& demand, const NodeInfo* node);

// ---------------------------------------------------------------------------
// prioritize.cc

// score: an integer in [0, 10]; 0 for unknown nodes, nodes the demand does
// not fit, and pods that ask for no managed resource (neutral: the in-tree
// scores decide). Otherwise the mean over the requested managed resources of
// the node's share used after placement (binpack) or left free (spread).
// A pod sharing GPUs: how full the GPUs its shares land on are after
// (SharedFill, at least 1 on a node it fits), whatever the strategy: shares
// pack onto partly used GPUs, so whole GPUs stay free.
int64_t ScoreNode(const PodDemand& demand, const NodeInfo* node, ScoreStrategy strategy);
// The shared-GPU score alone (ScoreNode of a pod sharing GPUs).
int64_t ScoreSharedNode(const PodDemand& demand, const NodeInfo* node);

// GPU score, for a demand of whole GPUs (otherwise `scores` unchanged): the
// score of every node of `nodes` (null: unknown) whose topology is known and
// whose free GPUs hold the request is replaced by how good its best set is
// against the best any of them offers (0-2 when its weakest link is weaker)
// and, among the best, stranding the fewest GPUs first, then the fullest:
// fragmentation-aware binpack, whatever the ScoreStrategy. Nodes of
// unknown topology keep their ScoreNode. REQUIRES: scores.size() == nodes.size().
std::vector<int64_t> ScoreGpuNodes(const PodDemand& demand,
                                   const std::vector<const NodeInfo*>& nodes,
                                   std::vector<int64_t> scores);

// ---------------------------------------------------------------------------
// preempt.cc

// The proposed victims in the Meta form (UIDs), whichever form was sent.
std::map<std::string, kube::MetaVictims> ProposedVictims(const kube::ExtenderPreemptionArgs& args);
// The gang a proposed victim belongs to, as the cache sees it now.
struct VictimGang {
  std::string key;         // "namespace/podgroup"
  int32_t min_member = 0;  // of its PodGroup (0 when the PodGroup is unknown)
  int32_t running = 0;     // members bound, unfinished and not being deleted
};
// By victim pod uid; pods that belong to no gang are absent.
using VictimGangs = std::map<std::string, VictimGang, std::less<>>;
// The gangs of every victim in `proposed`. REQUIRES: exclusive access.
VictimGangs GangsOfVictims(const ClusterState& state,
                           const std::map<std::string, kube::MetaVictims>& proposed);

// The proposed victims muster never evicts, by uid (conformance: the pod is
// not gang::Evictable, or its gang has a member that is not), as the cache
// sees them now; with the full form of the arguments, also such pods the
// cache does not know. REQUIRES: exclusive access.
using UnevictablePods = std::set<std::string, std::less<>>;
UnevictablePods UnevictableVictims(const ClusterState& state,
                                   const kube::ExtenderPreemptionArgs& args,
                                   const std::map<std::string, kube::MetaVictims>& proposed);

// The nodes narrowing vetoed, by why (for the decision counts).
struct Vetoes {
  int64_t conformance = 0;  // a victim muster never evicts
  int64_t breaks_gang = 0;  // a gang would keep running below its minMember
};

// narrow: the victims muster agrees to, node by node. A node with a victim
// in `unevictable` is vetoed whole, as is a node whose victims would leave
// some gang running below its minMember (muster evicts gangs whole itself;
// kube-scheduler's victims are per node, and dropping single victims could
// leave the preemptor without its room); nodes without victims are dropped
// (kube-scheduler rejects them). Neither the preemptor nor the victims'
// queues are looked at: there is no queue veto (docs/gang.md).
std::map<std::string, kube::MetaVictims> NarrowVictims(
    std::map<std::string, kube::MetaVictims> proposed, const VictimGangs& gangs,
    const UnevictablePods& unevictable = {}, Vetoes* vetoes = nullptr);

// ---------------------------------------------------------------------------
// bind.cc

enum class BindAction {
  kPost,          // POST plan.binding, then FinishBind(); capacity is reserved
  kAlreadyBound,  // the cache sees the pod on this node: success, no POST
  kReject,        // answer plan.error, no POST
};

struct BindPlan {
  BindAction action = BindAction::kReject;
  kube::ExtenderBindingArgs args;
  Binding binding;    // kPost: pods/<name>/binding body, placement annotations set
  std::string error;  // kReject: the reply's Error
  std::string_view code = kReasonBadRequest;
  ReplyOutcome outcome = ReplyOutcome::kBadRequest;
  std::optional<AssumeResult> assumed;  // kPost: what the reservation did
  GpuHolding gpus;                      // kPost: the GPUs chosen on the node (empty: none)
  std::string_view gpu_set;             // kPost: as VerbReply::gpu_set
  // kPost of a gang member (minMember > 1, or its PodGroup not seen yet):
  // its gang ("namespace/podgroup") and the uids of the gang's members that
  // hold a reservation and are not bound, itself included, for the bind
  // barrier (bind_barrier.h).
  std::string gang;
  std::vector<std::string> gang_reserved;
};

// plan: the pure decision for one bind request, given what the cache knows
// of the pod (null: unknown) and of the node (null: unknown) and where the
// pod already holds resources. Does not reserve. A pod asking whole GPUs of a
// node whose topology is known gets the best set of its free GPUs
// (topology::TopologyIndex::Choose), named in the Binding's annotations
// muster.io/gpu-ids and muster.io/gpu-uuids. A gang member (pod->group
// set, `group` its PodGroup or null) is bound only onto its reservation,
// unless its PodGroup has minMember <= 1: a bind elsewhere would start a
// partial gang.
// A pod sharing GPUs gets the GPUs its shares fill best (PlaceSharesOn),
// named in muster.io/gpu-ids and muster.io/gpu-shares (and, for Volcano's
// vGPU resources, the annotations its device plugin reads, stamped `now`).
BindPlan PlanBind(const kube::ExtenderBindingArgs& args, const PodRecord* pod, const NodeInfo* node,
                  const std::optional<Placement>& own, const std::vector<std::string>& managed,
                  const PodGroup* group = nullptr, const std::string* gang_plan = nullptr,
                  Time now = Time());

// reserve: PlanBind on `state`, then, for kPost, Assume() the pod's request
// on the node, so no concurrent decision can hand out the same capacity,
// and name the gang's reserved, unbound members (BindPlan::gang_reserved).
// REQUIRES: exclusive access to `state` (ClusterAccess::Exclusive).
BindPlan ReserveForBind(ClusterState& state, const kube::ExtenderBindingArgs& args,
                        const std::vector<std::string>& managed);

// True when a failed Binding POST provably did not bind the pod (the API
// answered a 4xx other than 409, or 429), so its reservation can go. Any
// other failure may have bound it (a timeout, a 5xx, a 409 from an earlier
// attempt): the reservation stays until the pod is seen or it expires.
bool BindPostSurelyFailed(const Status& post);
// True for the API's 409 "pod ... is already assigned to node \"<node>\"":
// an earlier attempt of this very bind succeeded.
bool AlreadyAssignedTo(const Status& post, std::string_view node);

// ---------------------------------------------------------------------------
// The pipeline.

class Pipeline {
 public:
  // `cluster` must outlive the pipeline.
  Pipeline(PolicyConfig config, ClusterAccess* cluster);

  // POST {prefix}/filter: ExtenderArgs -> ExtenderFilterResult. Always 200.
  VerbReply Filter(std::string_view body) const;
  // POST {prefix}/prioritize: ExtenderArgs -> HostPriorityList. 400 when
  // the body does not decode.
  VerbReply Prioritize(std::string_view body) const;
  // POST {prefix}/preempt: ExtenderPreemptionArgs -> ExtenderPreemptionResult.
  // 400 when the body does not decode.
  VerbReply Preempt(std::string_view body) const;

  // POST {prefix}/bind, in three calls around the one I/O step:
  //   BindPlan plan = pipeline.ReserveBind(body);
  //   if (plan.action != BindAction::kPost) return pipeline.AnswerBind(plan);
  //   Status post = <POST EncodeBinding(plan.binding) to pods/<name>/binding>;
  //   return pipeline.FinishBind(plan, post);
  // decode + reserve. A body that does not decode is a kReject plan.
  BindPlan ReserveBind(std::string_view body) const;
  // The reply for a plan that needs no POST (kAlreadyBound, kReject).
  VerbReply AnswerBind(const BindPlan& plan) const;
  // The reply after the POST of a kPost plan. On success the reservation
  // stays until the bound pod is seen; on a failure that surely did not
  // bind, it is released (Forget) so the capacity is free again.
  VerbReply FinishBind(const BindPlan& plan, const Status& post) const;

  const PolicyConfig& config() const { return config_; }
  const std::vector<std::string>& managed_resources() const { return managed_; }

 private:
  // Filter's queue step after the gang gate admitted the pod (`gang`): the
  // queue gate's answer, as a verdict; a pod whose PodGroup awaits admission
  // is remembered as waiting, for the gang controller to plan.
  GateVerdict AskQueue(const Pod& pod, const ClusterSnapshot& snapshot, GateVerdict gang) const;

  const PolicyConfig config_;
  const std::vector<std::string> managed_;
  ClusterAccess* const cluster_;
};

}  // namespace muster::extender
