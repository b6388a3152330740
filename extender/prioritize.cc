// POST {prefix}/prioritize: how much muster prefers each node kube-scheduler
// sent (0-10; kube-scheduler multiplies by the extender weight and by 10).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "extender/pipeline.h"

namespace muster::extender {
namespace {

// prioritize has no Error field: a fault is a non-200 status.
VerbReply PrioritizeFault(const Status& status) {
  return VerbReply{.http_status = 400,
                   .content_type = "text/plain; charset=utf-8",
                   .body = std::string(kReasonPrefix) + status.message() + "\n",
                   .outcome = ReplyOutcome::kBadRequest,
                   .decisions = {{kReasonBadRequest, 1}}};
}

VerbReply EncodePriorities(const Candidates& candidates, const std::vector<int64_t>& scores) {
  return VerbReply{
      .body = kube::EncodePriorityReplyView(
          {.hosts = candidates.names, .scores = scores, .plain_hosts = candidates.plain_names})};
}

}  // namespace

int64_t ScoreNode(const PodDemand& demand, const NodeInfo* node, ScoreStrategy strategy) {
  if (node == nullptr || !node->known() || demand.request.empty()) return 0;
  if (FitVerdictOnNode(demand, node) != Verdict::kFit) return 0;
  double shares = 0;
  const auto& entries = demand.request.entries();
  for (size_t k = 0; k < entries.size(); ++k) {
    const auto& [resource, need] = entries[k];
    const PodDemand::Amounts has = demand.AmountsOn(*node, k);
    // Fits, so total >= need > 0.
    const int64_t total = has.allocatable;
    const int64_t used_after =
        std::clamp<int64_t>(has.allocated - demand.Credit(node->name, resource) + need, 0, total);
    const int64_t counted = strategy == ScoreStrategy::kBinpack ? used_after : total - used_after;
    shares += static_cast<double>(counted) / static_cast<double>(total);
  }
  const double mean = shares / static_cast<double>(demand.request.entries().size());
  return std::clamp<int64_t>(std::lround(mean * kube::kMaxExtenderPriority),
                             kube::kMinExtenderPriority, kube::kMaxExtenderPriority);
}

VerbReply Pipeline::Prioritize(std::string_view body) const {
  // decode: the pod and the nodes that passed every filter.
  StatusOr<ExtenderRequest> request = DecodeExtenderRequest(body);
  if (!request.ok()) return PrioritizeFault(request.status());
  Candidates& candidates = request->candidates;
  std::vector<int64_t> scores(candidates.names.size(), kube::kMinExtenderPriority);
  // snapshot: the same view for every node's score.
  const ClusterSnapshot snapshot = cluster_->Snapshot(request->pod.meta.uid);
  // admission, gang: a held pod is not placed, so muster prefers no node.
  if (RunGates(request->pod, snapshot).action != GateAction::kAdmit) {
    return EncodePriorities(candidates, scores);
  }
  // score: every candidate against the cache.
  const PodDemand demand = DemandOf(request->pod, managed_, snapshot);
  snapshot.FindEach(candidates.names, [&](size_t i, const NodeInfo* node) {
    scores[i] = ScoreNode(demand, node, config_.score_strategy);
  });
  // encode: one HostPriority per name sent, in the order sent.
  return EncodePriorities(candidates, scores);
}

}  // namespace muster::extender
