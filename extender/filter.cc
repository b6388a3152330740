// POST {prefix}/filter: which of the nodes kube-scheduler sent can take the pod.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "extender/pipeline.h"
#include "model/quantity.h"

namespace muster::extender {
namespace {

NodeVerdict Failed(Verdict verdict, std::string_view code, std::string_view message) {
  return NodeVerdict{.verdict = verdict,
                     .code = code,
                     .reason = std::string(kReasonPrefix) + std::string(message)};
}

void AppendClause(std::string* out, std::string_view clause) {
  if (!out->empty()) *out += "; ";
  *out += clause;
}

std::string Q(std::string_view resource, int64_t amount) {
  return FormatResourceQuantity(resource, amount);
}

// A request that does not decode fails the pod's cycle with a readable Error.
VerbReply FilterFault(const Status& status) {
  kube::ExtenderFilterResult result;
  result.error = std::string(kReasonPrefix) + status.message();
  return VerbReply{.body = kube::EncodeExtenderFilterResult(result),
                   .outcome = ReplyOutcome::kBadRequest,
                   .decisions = {{kReasonBadRequest, 1}}};
}

// A gate that holds the pod holds it on every node, for the same reason.
std::vector<NodeVerdict> GateVerdicts(const GateVerdict& gate, size_t nodes) {
  const Verdict verdict =
      gate.action == GateAction::kReject ? Verdict::kUnresolvable : Verdict::kUnschedulable;
  return std::vector<NodeVerdict>(
      nodes, NodeVerdict{.verdict = verdict, .code = gate.code, .reason = gate.reason});
}

std::vector<NodeVerdict> FitAll(const Candidates& candidates, const PodDemand& demand,
                                const ClusterSnapshot& snapshot) {
  std::vector<NodeVerdict> verdicts;
  verdicts.reserve(candidates.names.size());
  for (const std::string& name : candidates.names) {
    verdicts.push_back(FitOnNode(demand, snapshot.FindNode(name)));
  }
  return verdicts;
}

// The reply in the request's form, with only the names that were sent.
VerbReply EncodeFilterReply(Candidates candidates, const std::vector<NodeVerdict>& verdicts) {
  kube::ExtenderFilterResult result;
  VerbReply reply;
  std::vector<std::string> passing_names;
  std::vector<kube::NodeWithRaw> passing_nodes;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const NodeVerdict& v = verdicts[i];
    ++reply.decisions[v.code];
    if (v.verdict == Verdict::kUnresolvable) {
      result.failed_and_unresolvable_nodes[candidates.names[i]] = v.reason;
    } else if (v.verdict == Verdict::kUnschedulable) {
      result.failed_nodes[candidates.names[i]] = v.reason;
    } else if (candidates.cache_mode) {
      passing_names.push_back(std::move(candidates.names[i]));
    } else {
      passing_nodes.push_back(std::move(candidates.nodes[i]));
    }
  }
  if (candidates.cache_mode) {
    result.node_names = std::move(passing_names);
  } else {
    result.nodes = std::move(passing_nodes);
  }
  reply.body = kube::EncodeExtenderFilterResult(result);
  return reply;
}

}  // namespace

NodeVerdict FitOnNode(const PodDemand& demand, const NodeInfo* node) {
  if (node == nullptr || !node->known()) {
    return Failed(Verdict::kUnresolvable, kReasonNodeUnknown, "node not in cache yet");
  }
  std::string too_big;  // beyond the node's allocatable: no preemption helps
  std::string short_now;
  for (const auto& [resource, need] : demand.request.entries()) {
    const int64_t total = node->allocatable.Get(resource);
    if (need > total) {
      AppendClause(&too_big, "needs " + Q(resource, need) + " " + resource + " (node has " +
                                 Q(resource, total) + ")");
      continue;
    }
    const int64_t free = node->Free(resource) + demand.Credit(node->name, resource);
    if (need > free) {
      AppendClause(&short_now, "needs " + Q(resource, need) + " " + resource + " (" +
                                   Q(resource, std::max<int64_t>(free, 0)) + " free of " +
                                   Q(resource, total) + ")");
    }
  }
  if (!too_big.empty()) return Failed(Verdict::kUnresolvable, kReasonExceedsNode, too_big);
  if (!short_now.empty()) return Failed(Verdict::kUnschedulable, kReasonInsufficient, short_now);
  return NodeVerdict{};
}

VerbReply Pipeline::Filter(std::string_view body) const {
  // decode: the pod and the nodes kube-scheduler asks about.
  StatusOr<ExtenderRequest> request = DecodeExtenderRequest(body);
  if (!request.ok()) return FilterFault(request.status());
  // snapshot: one consistent view of the cache for the whole decision.
  const ClusterSnapshot snapshot = cluster_->Snapshot(request->pod.meta.uid);
  // admission, gang: pod-level gates; a held pod fails on every node alike.
  const GateVerdict gate = RunGates(request->pod, snapshot);
  if (gate.action != GateAction::kAdmit) {
    const size_t n = request->candidates.names.size();
    return EncodeFilterReply(std::move(request->candidates), GateVerdicts(gate, n));
  }
  // fit: every candidate against the cache, not against the request's nodes.
  const PodDemand demand = DemandOf(request->pod, managed_, snapshot);
  std::vector<NodeVerdict> verdicts = FitAll(request->candidates, demand, snapshot);
  // encode: the reply in the request's form.
  return EncodeFilterReply(std::move(request->candidates), verdicts);
}

}  // namespace muster::extender
