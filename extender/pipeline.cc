// The steps filter and prioritize share, and the Pipeline's construction.
#include "extender/pipeline.h"

#include <algorithm>
#include <utility>

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
  StatusOr<kube::ExtenderArgs> args = kube::DecodeExtenderArgs(body);
  if (!args.ok()) return args.status();
  ExtenderRequest request{.pod = std::move(args->pod)};
  Candidates& candidates = request.candidates;
  candidates.plain_names = kube::PlainJsonStrings(body);
  // kube-scheduler fills exactly one of the two, by its nodeCacheCapable
  // setting; should both come, the names decide (the recommended mode).
  if (args->node_names.has_value()) {
    candidates.cache_mode = true;
    candidates.names = std::move(*args->node_names);
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
  demand.indexed.reserve(demand.request.entries().size());
  for (const auto& [resource, amount] : demand.request.entries()) {
    demand.indexed.push_back(snapshot.IndexOf(resource));
  }
  return demand;
}

GateVerdict AdmitByQueue(const Pod& /*pod*/, const ClusterSnapshot& /*snapshot*/) {
  // The queue issue decides here (capability, fair share, Inqueue phase).
  return GateVerdict{};
}

GateVerdict AdmitByGang(const Pod& pod, const ClusterSnapshot& snapshot) {
  const std::string group = pod.GroupName();
  if (group.empty()) return GateVerdict{};
  const std::optional<Placement>& own = snapshot.pod_placement();
  // Reserved (or, on a retry, already bound): that node and no other.
  if (own.has_value()) return GateVerdict{.pinned_node = own->node};
  const std::string key = ObjectKey(pod.meta.namespace_, group);
  const PodGroup* pod_group = snapshot.workloads().FindPodGroup(key);
  if (pod_group == nullptr) {
    return GateVerdict{.action = GateAction::kReject,
                       .code = kReasonNoPodGroup,
                       .reason = std::string(kReasonPrefix) + "PodGroup " + key +
                                 " does not exist: the pod waits for it"};
  }
  if (pod_group->spec.min_member <= 1) return GateVerdict{};
  return GateVerdict{.action = GateAction::kReject,
                     .code = kReasonGangWaiting,
                     .reason = std::string(kReasonPrefix) + "gang " + key +
                               " waits until all its members can be placed together (see the "
                               "PodGroup's status)"};
}

GateVerdict RunGates(const Pod& pod, const ClusterSnapshot& snapshot) {
  // Queue before gang: a gang is only worth placing once its queue admits it.
  GateVerdict queue = AdmitByQueue(pod, snapshot);
  if (queue.action != GateAction::kAdmit) return queue;
  return AdmitByGang(pod, snapshot);
}

Pipeline::Pipeline(PolicyConfig config, ClusterAccess* cluster)
    : config_(std::move(config)), managed_(ManagedResources(config_)), cluster_(cluster) {}

}  // namespace muster::extender
