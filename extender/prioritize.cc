// POST {prefix}/prioritize: how much muster prefers each node kube-scheduler
// sent (0-10; kube-scheduler multiplies by the extender weight and by 10).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
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

// What a GPU pod would get on one candidate whose topology is known: the
// layout's pick (the set, its link and the GPUs it strands, as the gang
// planner sees them) and how full the node is after.
struct GpuFit {
  int link = 0;        // topology::LinkClass; 0: not scored by GPUs
  int free_after = 0;  // the node's free GPUs once the pod is there
  int stranded = 0;    // gang::GpuPick::damage
  auto Key() const { return std::pair(stranded, free_after); }  // lower is better
};

// The fits already computed, by (layout, free GPUs): nodes of one model
// share their layout and a few hundred free masks between them. Hashed: a
// tree's lookup chased a pointer per level for every candidate.
struct GpuFitKeyHash {
  size_t operator()(const std::pair<const gang::GpuLayout*, GpuMask>& key) const {
    const uint64_t h = (reinterpret_cast<uintptr_t>(key.first) ^ key.second) * 0x9e3779b97f4a7c15;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};
using GpuFitMemo =
    std::unordered_map<std::pair<const gang::GpuLayout*, GpuMask>, GpuFit, GpuFitKeyHash>;

// Reads the node's hot fields only (NodeInfo::UnheldGpus, gpu_layout).
GpuFit FitGpus(const PodDemand& demand, int k, const NodeInfo* node, GpuFitMemo& memo) {
  if (node == nullptr || !node->known() || node->gpu_layout == nullptr) return {};
  if (FitVerdictOnNode(demand, node) != Verdict::kFit) return {};
  const GpuMask free = node->UnheldGpus(demand.GpuCredit(node->name));
  const auto [it, inserted] = memo.try_emplace({node->gpu_layout, free});
  if (!inserted) return it->second;
  if (const std::optional<gang::GpuPick> pick = node->gpu_layout->Pick(free, k)) {
    it->second =
        GpuFit{.link = pick->link, .free_after = std::popcount(free) - k, .stranded = pick->damage};
  }
  return it->second;
}

}  // namespace

std::vector<int64_t> ScoreGpuNodes(const PodDemand& demand,
                                   const std::vector<const NodeInfo*>& nodes,
                                   std::vector<int64_t> scores) {
  const int k = GpusRequested(demand.request);
  if (k == 0) return scores;
  std::vector<GpuFit> fits(nodes.size());
  GpuFitMemo memo;
  int best = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    fits[i] = FitGpus(demand, k, nodes[i], memo);
    best = std::max(best, fits[i].link);
  }
  // Among the nodes offering the best link: the fewest GPUs stranded first
  // (left without a best-link partner: lost to multi-GPU pods), then the
  // fullest after (binpack: whole nodes and islands stay free for big
  // requests); 10, 9, ... by rank, at least 4. A weaker link scores 0-2
  // however full the node.
  std::vector<std::pair<int, int>> keys;
  for (const GpuFit& fit : fits) {
    if (fit.link == best) keys.push_back(fit.Key());
  }
  std::ranges::sort(keys);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GpuFit& fit = fits[i];
    if (fit.link == 0) continue;
    if (fit.link != best) {
      scores[i] = std::max(0, 3 - (best - fit.link));
      continue;
    }
    const auto rank = std::ranges::lower_bound(keys, fit.Key()) - keys.begin();
    scores[i] = std::max<int64_t>(4, kube::kMaxExtenderPriority - rank);
  }
  return scores;
}

int64_t ScoreSharedNode(const PodDemand& demand, const NodeInfo* node) {
  if (node == nullptr || !node->known() || node->Gpus().cards == nullptr) return 0;
  if (FitVerdictOnNode(demand, node) != Verdict::kFit) return 0;
  const GpuHolding own = demand.GpuCredit(node->name);
  const std::optional<std::vector<GpuSlice>> slices =
      PlaceSharesOn(node->Gpus(), node->gpu_holds, demand.gpu.shares, own, nullptr);
  if (!slices) return 0;
  GpuUses uses = node->gpu_holds.uses;
  AccountHolding(uses, own, -1);
  const double fill = SharedFill(*slices, *node->Gpus().cards, uses);
  return std::clamp<int64_t>(std::lround(fill * kube::kMaxExtenderPriority),
                             kube::kMinExtenderPriority + 1, kube::kMaxExtenderPriority);
}

int64_t ScoreNode(const PodDemand& demand, const NodeInfo* node, ScoreStrategy strategy) {
  if (demand.gpu.shared()) return ScoreSharedNode(demand, node);
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
  // gang: a held pod is not placed, so muster prefers no node.
  if (AdmitByGang(request->pod, snapshot, config_.gang_schedulers).action != GateAction::kAdmit) {
    return EncodePriorities(candidates, scores);
  }
  // score: every candidate against the cache.
  const PodDemand demand = DemandOf(request->pod, managed_, snapshot);
  // GPU pods keep the nodes seen, for the GPU scores below; others need none.
  const bool gpu_pod = GpusRequested(demand.request) > 0;
  std::vector<const NodeInfo*> nodes(gpu_pod ? candidates.names.size() : 0);
  snapshot.FindEach(candidates.names, [&](size_t i, const NodeInfo* node) {
    scores[i] = ScoreNode(demand, node, config_.score_strategy);
    if (gpu_pod) nodes[i] = node;
  });
  // GPU pods: on nodes whose topology is known, the GPU set decides.
  if (gpu_pod) scores = ScoreGpuNodes(demand, nodes, std::move(scores));
  // encode: one HostPriority per name sent, in the order sent.
  return EncodePriorities(candidates, scores);
}

}  // namespace muster::extender
