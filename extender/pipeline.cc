// The steps filter and prioritize share, and the Pipeline's construction.
#include "extender/pipeline.h"

#include <algorithm>
#include <utility>

#include "extender/queue_step.h"
#include "kube/codec/extender_args_view.h"

namespace muster::extender {

std::vector<std::string> ManagedResources(const PolicyConfig& config) {
  std::vector<std::string> managed = config.extra_managed_resources;
  managed.emplace_back(kNvidiaGpu);
  std::sort(managed.begin(), managed.end());
  managed.erase(std::unique(managed.begin(), managed.end()), managed.end());
  std::erase(managed, "");
  return managed;
}

std::string_view ReplyOutcomeName(ReplyOutcome outcome) {
  switch (outcome) {
    case ReplyOutcome::kOk:
      return "ok";
    case ReplyOutcome::kBadRequest:
      return "bad_request";
    case ReplyOutcome::kFault:
      return "fault";
  }
  return "unknown";
}

StatusOr<ExtenderRequest> DecodeExtenderRequest(std::string_view body) {
  StatusOr<kube::ExtenderArgsView> args = kube::DecodeExtenderArgsView(body);
  if (!args.ok()) return args.status();
  ExtenderRequest request{.pod = std::move(args->pod)};
  Candidates& candidates = request.candidates;
  candidates.plain_names = kube::PlainJsonStrings(body);
  // kube-scheduler fills exactly one of the two, by its nodeCacheCapable
  // setting; should both come, the names decide (the recommended mode).
  if (args->node_names.has_value()) {
    candidates.cache_mode = true;
    candidates.names = std::move(*args->node_names);
    candidates.decoded_names = std::move(args->decoded_names);
  } else if (args->nodes.has_value()) {
    candidates.cache_mode = false;
    candidates.nodes = std::move(*args->nodes);
    candidates.names.reserve(candidates.nodes.size());
    for (const kube::NodeWithRaw& n : candidates.nodes)
      candidates.names.push_back(n.node.meta.name);
  } else {
    return InvalidArgumentError("decode ExtenderArgs: neither Nodes nor NodeNames is set");
  }
  return request;
}

Resources ManagedPart(const Resources& request, const std::vector<std::string>& managed) {
  Resources part;
  for (const std::string& resource : managed) {
    const int64_t amount = request.Get(resource);
    if (amount > 0) part.Set(resource, amount);
  }
  return part;
}

PodDemand DemandOf(const Pod& pod, const std::vector<std::string>& managed,
                   const ClusterSnapshot& snapshot) {
  PodDemand demand{.request = ManagedPart(pod.EffectiveRequest(), managed),
                   .own = snapshot.pod_placement()};
  if (StatusOr<GpuDemand> gpu = GpuDemandOf(pod); gpu.ok()) {
    demand.gpu = *std::move(gpu);
  } else {
    demand.gpu_problem = gpu.status().message();
  }
  demand.indexed.reserve(demand.request.entries().size());
  for (const auto& [resource, amount] : demand.request.entries()) {
    demand.indexed.push_back(snapshot.IndexOf(resource));
  }
  return demand;
}

namespace {

GateVerdict Held(std::string_view code, std::string message) {
  return GateVerdict{.action = GateAction::kReject,
                     .code = code,
                     .reason = std::string(kReasonPrefix) + std::move(message)};
}

// A PodGroup the pass has not admitted yet, with something to admit: its
// members wait (Volcano's enqueue lets a PodGroup in whole, by minResources).
bool AwaitsGroupAdmission(const PodGroup& group) {
  const std::string& phase = group.status.phase;
  return (phase.empty() || phase == kPodGroupPending) && group.spec.min_resources.has_value();
}

}  // namespace

GateVerdict AdmitByGang(const Pod& pod, const ClusterSnapshot& snapshot,
                        const std::vector<std::string>& gang_schedulers) {
  const std::optional<Placement>& own = snapshot.pod_placement();
  // Reserved (or, on a retry, already bound): that node and no other.
  if (own.has_value()) return GateVerdict{.pinned_node = own->node};
  const GroupRef group = GroupOfPod(pod, gang_schedulers);
  if (group.key.empty() || group.implicit) return GateVerdict{};
  if (const BrokenObject* broken = snapshot.workloads().FindBrokenPodGroup(group.key)) {
    return Held(kReasonPodGroupInvalid, "PodGroup " + group.key + " cannot be read: " +
                                            broken->problem + " (the pod waits until it is fixed)");
  }
  const PodGroup* pod_group = snapshot.workloads().FindPodGroup(group.key);
  if (pod_group == nullptr) {
    return Held(kReasonNoPodGroup,
                "PodGroup " + group.key + " does not exist: the pod waits for it");
  }
  if (pod_group->spec.min_member > 1) {
    // muster writes the status of Volcano's PodGroups only (gang_writes.h).
    const bool volcano = pod_group->api == PodGroupApi::kVolcano;
    return Held(kReasonGangWaiting, "gang " + group.key +
                                        " waits until all its members can be placed together "
                                        "(see the PodGroup's " +
                                        (volcano ? "status)" : "Events)"));
  }
  if (AwaitsGroupAdmission(*pod_group)) {
    return Held(kReasonAwaitingAdmission,
                "PodGroup " + group.key + " waits for admission to queue " +
                    QueueName(pod_group->spec) +
                    ": its spec.minResources must fit first (see the PodGroup's status)");
  }
  return GateVerdict{};
}

std::optional<QueueAsk> QueueAskOf(const Pod& pod, const ClusterSnapshot& snapshot,
                                   const std::vector<std::string>& gang_schedulers) {
  if (snapshot.pod_placement().has_value()) return std::nullopt;
  const GroupRef group = GroupOfPod(pod, gang_schedulers);
  if (group.key.empty()) return std::nullopt;
  std::string queue;
  if (group.implicit) {
    queue = QueueName(ImplicitPodGroup(pod).spec);
  } else {
    const PodGroup* pod_group = snapshot.workloads().FindPodGroup(group.key);
    if (pod_group == nullptr || pod_group->spec.min_member > 1) return std::nullopt;
    queue = QueueName(pod_group->spec);
  }
  return QueueAsk{
      .pod_uid = pod.meta.uid, .queue = std::move(queue), .request = pod.EffectiveRequest()};
}

GateVerdict Pipeline::AskQueue(const Pod& pod, const ClusterSnapshot& snapshot,
                               GateVerdict gang) const {
  if (gang.code == kReasonAwaitingAdmission) {
    cluster_->Exclusive(
        [&](ClusterState& state) { state.queue_gate().MarkWaiting(pod.meta.uid, state.now()); });
    return gang;
  }
  if (gang.action != GateAction::kAdmit) return gang;
  const std::optional<QueueAsk> ask = QueueAskOf(pod, snapshot, config_.gang_schedulers);
  if (!ask.has_value()) return gang;
  QueueAnswer answer;
  cluster_->Exclusive(
      [&](ClusterState& state) { answer = state.queue_gate().Admit(*ask, state.now()); });
  if (answer.admitted) return gang;
  return Held(kReasonQueueWaiting, std::move(answer.message));
}

Pipeline::Pipeline(PolicyConfig config, ClusterAccess* cluster)
    : config_(std::move(config)), managed_(ManagedResources(config_)), cluster_(cluster) {}

}  // namespace muster::extender
