// POST {prefix}/bind, the decision part: may the pod be bound to the node,
// and with what Binding. The POST itself is the HTTP layer's (it owns the
// API client); this file reserves before it and settles after it.
#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <utility>

#include "extender/pipeline.h"
#include "kube/codec/vgpu_codec.h"

namespace muster::extender {
namespace {

BindPlan Reject(BindPlan plan, std::string_view code, ReplyOutcome outcome,
                std::string_view message) {
  plan.action = BindAction::kReject;
  plan.code = code;
  plan.outcome = outcome;
  plan.error = std::string(kReasonPrefix) + std::string(message);
  return plan;
}

std::string_view MissingField(const kube::ExtenderBindingArgs& args) {
  if (args.pod_name.empty()) return "PodName";
  if (args.pod_namespace.empty()) return "PodNamespace";
  if (args.pod_uid.empty()) return "PodUID";
  if (args.node.empty()) return "Node";
  return "";
}

// The GPUs the pod takes on the node: its shares where they fill best, the
// best set of the free ones (whole GPUs), the lowest free ones when the
// node's links are unknown, or nothing when it asks none or the node's GPUs
// are not told apart.
struct GpuPick {
  GpuHolding gpus;
  std::string_view link;  // VerbReply::gpu_set
};
GpuPick PickGpus(const Resources& request, const NodeInfo& node, const PodDemand& demand) {
  const GpuHolding own = demand.GpuCredit(node.name);
  if (demand.gpu.shared()) {
    std::optional<std::vector<GpuSlice>> slices =
        PlaceSharesOn(node.Gpus(), node.gpu_holds, demand.gpu.shares, own, nullptr);
    // FitOnNode passed, so they fit; should they not, the bind goes on by count.
    if (!slices) return {.link = "unchosen"};
    return {.gpus = GpuHolding{.slices = *std::move(slices)}, .link = "shared"};
  }
  const int k = GpusRequested(request);
  if (k == 0) return {};
  if (node.Gpus().cards == nullptr) return {.link = "unchosen"};
  const GpuMask free = node.UnheldGpus(own);
  if (node.Gpus().index() == nullptr) {
    if (std::popcount(free) < k) return {.link = "unchosen"};
    GpuMask lowest = 0;
    for (GpuMask m = free; std::popcount(lowest) < k; m &= m - 1) lowest |= m & -m;
    return {.gpus = GpuHolding{.whole = lowest}, .link = "unlinked"};
  }
  const std::optional<topology::GpuChoice> choice = node.Gpus().index()->Choose(free, k);
  // The count fitted but the ledger has fewer free GPUs: pods bound by
  // others hold GPUs without naming them. The device plugin decides then.
  if (!choice) return {.link = "unchosen"};
  return {.gpus = GpuHolding{.whole = choice->mask},
          .link = k == 1 ? "single" : topology::LinkClassName(choice->bottleneck)};
}

// The annotations Volcano's vGPU device plugin reads to allocate the pod's
// vGPUs (kube/codec/vgpu_codec.h): they ride on the Binding, so the pod has
// them when the kubelet asks the plugin, set together with its node.
void AddVgpuAnnotations(std::map<std::string, std::string>& annotations,
                        const std::vector<GpuSlice>& slices, const NodeGpus& gpus,
                        std::string_view node, Time now) {
  kube::VgpuPodDevices devices;
  for (const GpuSlice& s : slices) {
    const auto c = static_cast<size_t>(std::max(s.container, 0));
    if (devices.size() <= c) devices.resize(c + 1);
    devices[c].push_back(kube::VgpuDevice{.uuid = (*gpus.cards)[static_cast<size_t>(s.gpu)].uuid,
                                          .memory_mib = s.memory_mib,
                                          .cores = s.compute / 10});
  }
  const std::string list = kube::EncodeVgpuDevices(devices);
  const std::string seconds = std::to_string(now.unix_seconds());
  annotations[std::string(kube::kAnnotationVgpuIds)] = list;
  annotations[std::string(kube::kAnnotationVgpuToAllocate)] = list;
  annotations[std::string(kube::kAnnotationVgpuNode)] = std::string(node);
  annotations[std::string(kube::kAnnotationVgpuTime)] = seconds;
  annotations[std::string(kube::kAnnotationVgpuBindTime)] = seconds;
  annotations[std::string(kube::kAnnotationVgpuBindPhase)] = std::string(kube::kVgpuBindAllocating);
}

// The Binding to POST: the pod's identity (its uid is a precondition on
// API servers that check it) and the placement annotations.
Binding BindingFor(const kube::ExtenderBindingArgs& args, const Resources& placed,
                   const std::string* gang_plan, const NodeInfo& node, const GpuHolding& held,
                   bool vgpu, Time now) {
  Binding binding;
  binding.meta.name = args.pod_name;
  binding.meta.namespace_ = args.pod_namespace;
  binding.meta.uid = args.pod_uid;
  binding.meta.annotations[std::string(kAnnotationNode)] = args.node;
  binding.meta.annotations[std::string(kAnnotationResources)] = placed.ToString();
  if (gang_plan != nullptr) binding.meta.annotations[std::string(kAnnotationGangPlan)] = *gang_plan;
  if (const GpuMask gpus = held.Gpus(); gpus != 0) {
    binding.meta.annotations[std::string(kAnnotationGpuIds)] = FormatGpuIds(gpus);
    std::string uuids = FormatGpuUuids(gpus, *node.Gpus().cards);
    binding.meta.annotations[std::string(kAnnotationVisibleDevices)] =
        uuids.empty() ? FormatGpuIds(gpus) : uuids;
    if (!uuids.empty()) {
      binding.meta.annotations[std::string(kAnnotationGpuUuids)] = std::move(uuids);
    }
  }
  if (!held.slices.empty()) {
    int containers = 0;
    for (const GpuSlice& s : held.slices) containers = std::max(containers, s.container + 1);
    binding.meta.annotations[std::string(kube::kAnnotationGpuShares)] =
        kube::EncodeGpuShares(held.slices, containers);
    if (vgpu)
      AddVgpuAnnotations(binding.meta.annotations, held.slices, node.Gpus(), args.node, now);
  }
  binding.target_node = args.node;
  return binding;
}

// The verdict's reason with the node named: a bind error is read alone.
std::string OnNode(std::string_view node, std::string_view reason) {
  if (reason.starts_with(kReasonPrefix)) reason.remove_prefix(kReasonPrefix.size());
  return "node " + std::string(node) + ": " + std::string(reason);
}

// What the pod and its state say before any node is looked at; nullopt
// when they allow a bind.
std::optional<BindPlan> CheckPod(const BindPlan& plan, const PodRecord* pod) {
  const kube::ExtenderBindingArgs& args = plan.args;
  const std::string key = ObjectKey(args.pod_namespace, args.pod_name);
  if (pod == nullptr) {
    // Safe over fast: without the pod's request muster cannot account it.
    return Reject(plan, kReasonPodUnknown, ReplyOutcome::kFault,
                  "pod " + key + " (uid " + args.pod_uid + ") not in cache yet");
  }
  if (pod->namespace_ != args.pod_namespace || pod->name != args.pod_name) {
    return Reject(plan, kReasonPodMismatch, ReplyOutcome::kBadRequest,
                  "uid " + args.pod_uid + " is pod " + ObjectKey(pod->namespace_, pod->name) +
                      ", not " + key);
  }
  if (pod->terminal || pod->terminating) {
    return Reject(plan, kReasonPodFinished, ReplyOutcome::kFault,
                  "pod " + key + (pod->terminal ? " has finished" : " is being deleted"));
  }
  if (pod->node_name == args.node) {
    BindPlan done = plan;
    done.action = BindAction::kAlreadyBound;
    done.code = kReasonAlreadyBound;
    done.outcome = ReplyOutcome::kOk;
    return done;
  }
  if (!pod->node_name.empty()) {
    return Reject(plan, kReasonBoundElsewhere, ReplyOutcome::kFault,
                  "pod " + key + " is already bound to node " + pod->node_name);
  }
  return std::nullopt;
}

// A member of a gang bound whole: it names a PodGroup (not Volcano's
// implicit one of a plain pod) of minMember above 1, or one the cache has
// not seen yet. Its bind goes only onto its reservation and waits for the
// rest of its gang (the bind barrier).
bool BindsAsGang(const PodRecord& pod, const PodGroup* group) {
  if (pod.group.empty() || pod.implicit_group) return false;
  return group == nullptr || group->spec.min_member > 1;
}

// A gang member binds only where the gang controller reserved it: anywhere
// else would start members before the whole gang has a place. nullopt when
// the bind may go on.
std::optional<BindPlan> CheckGang(const BindPlan& plan, const PodRecord& pod, const PodGroup* group,
                                  const std::optional<Placement>& own) {
  if (!BindsAsGang(pod, group)) return std::nullopt;
  const kube::ExtenderBindingArgs& args = plan.args;
  if (own.has_value() && own->assumed && own->node == args.node) return std::nullopt;
  const std::string where = own.has_value() && own->assumed
                                ? " (it is reserved on node " + own->node + ")"
                                : " (its gang is not placed whole yet)";
  return Reject(plan, kReasonGangWaiting, ReplyOutcome::kFault,
                "gang member " + ObjectKey(args.pod_namespace, args.pod_name) +
                    " has no reservation on node " + args.node + where);
}

// The uids of the gang's members that hold a reservation (the gang
// controller's, or a bind's in flight) and are not seen bound.
std::vector<std::string> ReservedMembers(const ClusterState& state, std::string_view group) {
  std::vector<std::string> reserved;
  const auto gang = state.gang_pods().find(group);
  if (gang == state.gang_pods().end()) return reserved;
  for (const auto& [uid, pod] : gang->second.pods) {
    const PodRecord* record = state.FindPod(uid);
    if (record == nullptr || !record->node_name.empty() || record->terminal) continue;
    if (state.PlacementOf(uid).has_value()) reserved.push_back(uid);
  }
  return reserved;
}

}  // namespace

BindPlan PlanBind(const kube::ExtenderBindingArgs& args, const PodRecord* pod, const NodeInfo* node,
                  const std::optional<Placement>& own, const std::vector<std::string>& managed,
                  const PodGroup* group, const std::string* gang_plan, Time now) {
  BindPlan plan{.args = args};
  if (std::string_view missing = MissingField(args); !missing.empty()) {
    return Reject(std::move(plan), kReasonBadRequest, ReplyOutcome::kBadRequest,
                  "bind request lacks " + std::string(missing));
  }
  if (std::optional<BindPlan> decided = CheckPod(plan, pod)) return *std::move(decided);
  if (std::optional<BindPlan> held = CheckGang(plan, *pod, group, own)) return *std::move(held);
  if (node == nullptr || !node->known()) {
    return Reject(std::move(plan), kReasonNodeUnknown, ReplyOutcome::kFault,
                  "node " + args.node + " not in cache yet");
  }
  // fit: the node may have filled up since filter (other binds, other
  // schedulers); the cache, with every reservation, has the last word.
  if (!pod->gpu_problem.empty()) {
    return Reject(std::move(plan), kReasonGpuRequest, ReplyOutcome::kFault, pod->gpu_problem);
  }
  const PodDemand demand{
      .request = ManagedPart(pod->request, managed), .own = own, .gpu = pod->gpu_demand};
  NodeVerdict fit = FitOnNode(demand, node);
  if (fit.verdict != Verdict::kFit) {
    return Reject(std::move(plan), fit.code, ReplyOutcome::kFault, OnNode(args.node, fit.reason));
  }
  plan.action = BindAction::kPost;
  plan.code = kReasonBindPost;
  plan.outcome = ReplyOutcome::kOk;
  GpuPick gpus = PickGpus(pod->request, *node, demand);
  plan.gpu_set = gpus.link;
  plan.binding = BindingFor(args, demand.request, pod->group.empty() ? nullptr : gang_plan, *node,
                            gpus.gpus, pod->gpu_demand.vgpu(), now);
  plan.gpus = std::move(gpus.gpus);
  return plan;
}

BindPlan ReserveForBind(ClusterState& state, const kube::ExtenderBindingArgs& args,
                        const std::vector<std::string>& managed) {
  state.ExpireAssumed();
  const PodRecord* pod = state.FindPod(args.pod_uid);
  const PodGroup* group = nullptr;
  const std::string* gang_plan = nullptr;
  if (pod != nullptr && !pod->group.empty()) {
    group = state.workloads().View().FindPodGroup(pod->group);
    gang_plan = state.GangPlanOf(pod->group);
  }
  BindPlan plan = PlanBind(args, pod, state.FindNode(args.node), state.PlacementOf(args.pod_uid),
                           managed, group, gang_plan, state.now());
  if (plan.action != BindAction::kPost) return plan;
  // reserve: the whole request counts on the node from now on, until the
  // bound pod is seen (or FinishBind releases it).
  plan.assumed = state.Assume(args.pod_uid, args.node, pod->request, std::nullopt, plan.gpus);
  if (BindsAsGang(*pod, group)) {
    plan.gang = pod->group;
    plan.gang_reserved = ReservedMembers(state, pod->group);
  }
  return plan;
}

bool BindPostSurelyFailed(const Status& post) {
  switch (post.code()) {
    case StatusCode::kInvalidArgument:     // 400, 422: rejected as malformed
    case StatusCode::kNotFound:            // 404: the pod is gone
    case StatusCode::kUnauthenticated:     // 401
    case StatusCode::kPermissionDenied:    // 403
    case StatusCode::kResourceExhausted:   // 429: throttled before processing
    case StatusCode::kFailedPrecondition:  // other 4xx
    case StatusCode::kGone:                // 410
    case StatusCode::kUnimplemented:       // 405, 501
      return true;
    default:
      return false;
  }
}

bool AlreadyAssignedTo(const Status& post, std::string_view node) {
  if (post.code() != StatusCode::kConflict && post.code() != StatusCode::kAlreadyExists) {
    return false;
  }
  // The API server's words (BindingREST): pod %v is already assigned to node %q.
  const std::string needle = "already assigned to node \"" + std::string(node) + "\"";
  return post.message().find(needle) != std::string::npos;
}

BindPlan Pipeline::ReserveBind(std::string_view body) const {
  // decode: PodName, PodNamespace, PodUID, Node.
  StatusOr<kube::ExtenderBindingArgs> args = kube::DecodeExtenderBindingArgs(body);
  if (!args.ok()) {
    return Reject(BindPlan{}, kReasonBadRequest, ReplyOutcome::kBadRequest,
                  args.status().message());
  }
  // reserve: the decision and its reservation in one exclusive step, so two
  // binds can never both take the node's last GPUs.
  BindPlan plan;
  cluster_->Exclusive([&](ClusterState& state) { plan = ReserveForBind(state, *args, managed_); });
  return plan;
}

VerbReply Pipeline::AnswerBind(const BindPlan& plan) const {
  const std::string error = plan.action == BindAction::kReject ? plan.error : "";
  return VerbReply{.body = kube::EncodeExtenderBindingResult({.error = error}),
                   .outcome = plan.outcome,
                   .decisions = {{plan.code, 1}}};
}

VerbReply Pipeline::FinishBind(const BindPlan& plan, const Status& post) const {
  if (post.ok() || AlreadyAssignedTo(post, plan.args.node)) {
    // Never success without a Binding: either ours, or an earlier attempt's.
    return VerbReply{.body = kube::EncodeExtenderBindingResult({}),
                     .decisions = {{kReasonBound, 1}},
                     .gpu_set = plan.gpu_set};
  }
  if (BindPostSurelyFailed(post)) {
    cluster_->Exclusive(
        [&](ClusterState& state) { state.Forget(plan.args.pod_uid, plan.args.node); });
  }
  const std::string error = std::string(kReasonPrefix) + "binding " +
                            ObjectKey(plan.args.pod_namespace, plan.args.pod_name) + " to node " +
                            plan.args.node + ": " + post.ToString();
  return VerbReply{.body = kube::EncodeExtenderBindingResult({.error = error}),
                   .outcome = ReplyOutcome::kFault,
                   .decisions = {{kReasonApiError, 1}}};
}

}  // namespace muster::extender
