// POST {prefix}/filter: which of the nodes kube-scheduler sent can take the pod.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
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

// The verdicts of one filter call, deduplicated: nodes in the same state
// share one NodeVerdict and its message, so a reply to 5000 names builds a
// handful of strings rather than one per failed node.
struct FilterVerdicts {
  std::vector<NodeVerdict> distinct;
  std::vector<uint32_t> of_node;  // index into distinct, parallel to the candidates
};

// A gate that holds the pod holds it on every node, for the same reason.
FilterVerdicts GateVerdicts(const GateVerdict& gate, size_t nodes) {
  const Verdict verdict =
      gate.action == GateAction::kReject ? Verdict::kUnresolvable : Verdict::kUnschedulable;
  return FilterVerdicts{
      .distinct = {NodeVerdict{.verdict = verdict, .code = gate.code, .reason = gate.reason}},
      .of_node = std::vector<uint32_t>(nodes, 0)};
}

// The one fit rule, per requested resource k: beyond the node's allocatable
// no preemption helps (unresolvable); beyond what is free now (credit for
// the pod's own holdings included) it may fit later (unschedulable).
struct ResourceFit {
  int64_t need = 0;
  int64_t allocatable = 0;
  int64_t free = 0;
  Verdict verdict = Verdict::kFit;
};

ResourceFit FitOfResource(const PodDemand& demand, const NodeInfo& node, size_t k) {
  const auto& [resource, need] = demand.request.entries()[k];
  const PodDemand::Amounts has = demand.AmountsOn(node, k);
  ResourceFit fit{.need = need,
                  .allocatable = has.allocatable,
                  .free = has.allocatable - has.allocated + demand.Credit(node.name, resource)};
  if (need > fit.allocatable) {
    fit.verdict = Verdict::kUnresolvable;
  } else if (need > fit.free) {
    fit.verdict = Verdict::kUnschedulable;
  }
  return fit;
}

// FitVerdictOnNode of a known node and, in the same pass, the key of its fit
// state: what FitOnNode's verdict and message depend on besides the demand,
// per requested resource the node's allocatable and its free amount (credit
// included; clamped at 0 as the message shows it, which changes no verdict
// since every requested amount is positive).
Verdict FitState(const PodDemand& demand, const NodeInfo& node, std::vector<int64_t>* key) {
  key->clear();
  Verdict verdict = Verdict::kFit;
  for (size_t k = 0; k < demand.request.entries().size(); ++k) {
    const ResourceFit fit = FitOfResource(demand, node, k);
    key->push_back(fit.allocatable);
    key->push_back(std::max<int64_t>(fit.free, 0));
    // The worst resource decides (Verdict lists them best to worst).
    verdict = std::max(verdict, fit.verdict);
  }
  return verdict;
}

struct FitStateHash {
  size_t operator()(const std::vector<int64_t>& key) const {
    uint64_t h = key.size();
    for (const int64_t v : key) h = (h ^ static_cast<uint64_t>(v)) * 0x9e3779b97f4a7c15;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

FilterVerdicts FitAll(const Candidates& candidates, const PodDemand& demand,
                      const ClusterSnapshot& snapshot) {
  constexpr uint32_t kFits = 0;
  constexpr uint32_t kNone = ~uint32_t{0};
  FilterVerdicts out{.distinct = {NodeVerdict{}}};
  // Failed known nodes by fit state: hashed, as thousands of them look up
  // a handful of states (a tree's comparisons mispredict on every level).
  std::unordered_map<std::vector<int64_t>, uint32_t, FitStateHash> by_state;
  std::vector<int64_t> key;
  uint32_t unknown = kNone;
  auto add = [&out](NodeVerdict verdict) {
    out.distinct.push_back(std::move(verdict));
    return static_cast<uint32_t>(out.distinct.size() - 1);
  };
  // GPU verdicts are per node (which GPUs hold what); alike messages share one.
  std::unordered_map<std::string, uint32_t> by_gpu_reason;
  auto verdict_of = [&](const NodeInfo* node) {
    if (node == nullptr || !node->known()) {
      if (unknown == kNone) unknown = add(FitOnNode(demand, nullptr));
      return unknown;
    }
    if (FitState(demand, *node, &key) == Verdict::kFit) {
      if (!NeedsGpuFit(demand, *node)) return kFits;
      NodeVerdict gpu = GpuFitOnNode(demand, *node);
      if (gpu.verdict == Verdict::kFit) return kFits;
      auto [it, inserted] = by_gpu_reason.try_emplace(gpu.reason, 0);
      if (inserted) it->second = add(std::move(gpu));
      return it->second;
    }
    auto [it, inserted] = by_state.try_emplace(key, 0);
    if (inserted) it->second = add(FitOnNode(demand, node));
    return it->second;
  };
  out.of_node.resize(candidates.names.size());
  // Each verdict is taken as its node is looked up, while the NodeInfo is cached.
  snapshot.FindEach(candidates.names,
                    [&](size_t i, const NodeInfo* node) { out.of_node[i] = verdict_of(node); });
  return out;
}

// A reserved gang member: every candidate but `node` fails, unresolvably
// (its gang reserved `node` for it, and only there does it start with its
// gang); `node` itself is fitted as usual, the reservation credited. Only
// that one node is looked up: a gang of 100 on 1000 nodes is 100 filters.
FilterVerdicts PinTo(const std::string& node, const Candidates& candidates, const PodDemand& demand,
                     const ClusterSnapshot& snapshot) {
  constexpr uint32_t kElsewhere = 0;
  constexpr uint32_t kThere = 1;
  FilterVerdicts out{.distinct = {Failed(Verdict::kUnresolvable, kReasonReservedElsewhere,
                                         "reserved for its gang on node " + node),
                                  FitOnNode(demand, snapshot.FindNode(node))},
                     .of_node = std::vector<uint32_t>(candidates.names.size(), kElsewhere)};
  for (size_t i = 0; i < candidates.names.size(); ++i) {
    if (candidates.names[i] == node) out.of_node[i] = kThere;
  }
  return out;
}

kube::FilterReplyView::Outcome OutcomeOf(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFit:
      return kube::FilterReplyView::Outcome::kPass;
    case Verdict::kUnschedulable:
      return kube::FilterReplyView::Outcome::kFailed;
    case Verdict::kUnresolvable:
      return kube::FilterReplyView::Outcome::kUnresolvable;
  }
  return kube::FilterReplyView::Outcome::kUnresolvable;
}

// The reply in the request's form, with only the names that were sent.
VerbReply EncodeFilterReply(const Candidates& candidates, const FilterVerdicts& verdicts) {
  std::vector<kube::FilterReplyView::Verdict> distinct;
  distinct.reserve(verdicts.distinct.size());
  for (const NodeVerdict& v : verdicts.distinct) {
    distinct.push_back({.outcome = OutcomeOf(v.verdict), .reason = v.reason});
  }
  VerbReply reply{.body = kube::EncodeFilterReplyView({.cache_mode = candidates.cache_mode,
                                                       .plain_names = candidates.plain_names,
                                                       .names = candidates.names,
                                                       .nodes = candidates.nodes,
                                                       .verdicts = distinct,
                                                       .verdict_of = verdicts.of_node})};
  std::vector<int64_t> count(verdicts.distinct.size(), 0);
  for (const uint32_t index : verdicts.of_node) ++count[index];
  for (size_t d = 0; d < count.size(); ++d) {
    if (count[d] > 0) reply.decisions[verdicts.distinct[d].code] += count[d];
  }
  return reply;
}

}  // namespace

Verdict FitVerdictOnNode(const PodDemand& demand, const NodeInfo* node) {
  if (node == nullptr || !node->known()) return Verdict::kUnresolvable;
  Verdict verdict = Verdict::kFit;
  for (size_t k = 0; k < demand.request.entries().size(); ++k) {
    const Verdict v = FitOfResource(demand, *node, k).verdict;
    if (v == Verdict::kUnresolvable) return v;
    if (v == Verdict::kUnschedulable) verdict = v;
  }
  if (verdict == Verdict::kFit && NeedsGpuFit(demand, *node)) {
    verdict = GpuFitOnNode(demand, *node).verdict;
  }
  return verdict;
}

bool NeedsGpuFit(const PodDemand& demand, const NodeInfo& node) {
  return demand.gpu.shared() || (demand.gpu.whole > 0 && node.gpu_shares > 0);
}

NodeVerdict GpuFitOnNode(const PodDemand& demand, const NodeInfo& node) {
  const GpuHolding own = demand.GpuCredit(node.name);
  if (demand.gpu.shared()) {
    std::string why;
    if (PlaceSharesOn(node.Gpus(), node.gpu_holds, demand.gpu.shares, own, &why)) return {};
    std::string never;
    if (!PlaceSharesOn(node.Gpus(), GpuHolds{}, demand.gpu.shares, {}, &never)) {
      return Failed(Verdict::kUnresolvable, kReasonExceedsNode, never);
    }
    return Failed(Verdict::kUnschedulable, kReasonInsufficient, why);
  }
  if (demand.gpu.whole > 0 && node.Gpus().cards != nullptr) {
    const int idle = std::popcount(node.UnheldGpus(own));
    if (idle < demand.gpu.whole) {
      return Failed(Verdict::kUnschedulable, kReasonInsufficient,
                    "needs " + std::to_string(demand.gpu.whole) + " whole nvidia.com/gpu (" +
                        std::to_string(idle) + " GPUs here neither shared nor held)");
    }
  }
  return {};
}

NodeVerdict FitOnNode(const PodDemand& demand, const NodeInfo* node) {
  if (node == nullptr || !node->known()) {
    return Failed(Verdict::kUnresolvable, kReasonNodeUnknown, "node not in cache yet");
  }
  std::string too_big;  // beyond the node's allocatable: no preemption helps
  std::string short_now;
  for (size_t k = 0; k < demand.request.entries().size(); ++k) {
    const std::string& resource = demand.request.entries()[k].first;
    const ResourceFit fit = FitOfResource(demand, *node, k);
    const std::string needs = "needs " + Q(resource, fit.need) + " " + resource;
    if (fit.verdict == Verdict::kUnresolvable) {
      AppendClause(&too_big, needs + " (node has " + Q(resource, fit.allocatable) + ")");
    } else if (fit.verdict == Verdict::kUnschedulable) {
      AppendClause(&short_now, needs + " (" + Q(resource, std::max<int64_t>(fit.free, 0)) +
                                   " free of " + Q(resource, fit.allocatable) + ")");
    }
  }
  if (!too_big.empty()) return Failed(Verdict::kUnresolvable, kReasonExceedsNode, too_big);
  if (!short_now.empty()) return Failed(Verdict::kUnschedulable, kReasonInsufficient, short_now);
  if (NeedsGpuFit(demand, *node)) return GpuFitOnNode(demand, *node);
  return NodeVerdict{};
}

VerbReply Pipeline::Filter(std::string_view body) const {
  // decode: the pod and the nodes kube-scheduler asks about.
  StatusOr<ExtenderRequest> request = DecodeExtenderRequest(body);
  if (!request.ok()) return FilterFault(request.status());
  // snapshot: one consistent view of the cache for the whole decision.
  const ClusterSnapshot snapshot = cluster_->Snapshot(request->pod.meta.uid);
  // gang, queue: pod-level gates; a held pod fails on every node alike.
  const GateVerdict gate = AskQueue(request->pod, snapshot,
                                    AdmitByGang(request->pod, snapshot, config_.gang_schedulers));
  if (gate.action != GateAction::kAdmit) {
    return EncodeFilterReply(request->candidates,
                             GateVerdicts(gate, request->candidates.names.size()));
  }
  // fit: every candidate against the cache, not against the request's nodes.
  const PodDemand demand = DemandOf(request->pod, managed_, snapshot);
  // (a GPU request that does not read fits nowhere, for the same reason.)
  if (!demand.gpu_problem.empty()) {
    VerbReply reply = EncodeFilterReply(
        request->candidates,
        GateVerdicts(GateVerdict{.action = GateAction::kReject,
                                 .code = kReasonGpuRequest,
                                 .reason = std::string(kReasonPrefix) + demand.gpu_problem},
                     request->candidates.names.size()));
    reply.share_outcome = "invalid";
    return reply;
  }
  // (a reserved gang member: its reserved node only.)
  const FilterVerdicts verdicts =
      gate.pinned_node.empty() ? FitAll(request->candidates, demand, snapshot)
                               : PinTo(gate.pinned_node, request->candidates, demand, snapshot);
  // encode: the reply in the request's form.
  VerbReply reply = EncodeFilterReply(request->candidates, verdicts);
  const bool some_fit = std::ranges::any_of(
      verdicts.of_node, [&](uint32_t d) { return verdicts.distinct[d].verdict == Verdict::kFit; });
  if (demand.gpu.shared() && !some_fit) {
    reply.share_outcome = "waiting";
  }
  return reply;
}

}  // namespace muster::extender
