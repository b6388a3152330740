// POST {prefix}/preempt: which of the victims kube-scheduler proposes muster
// agrees to evict. On v1.30-v1.34 the dry run ignores extender filters
// (extender-protocol.md §5.6), so this verb can only narrow or veto.
#include <string>
#include <utility>

#include "extender/pipeline.h"

namespace muster::extender {
namespace {

// preempt has no Error field: a fault is a non-200 status.
VerbReply PreemptFault(const Status& status) {
  return VerbReply{.http_status = 400,
                   .content_type = "text/plain; charset=utf-8",
                   .body = std::string(kReasonPrefix) + status.message() + "\n",
                   .outcome = ReplyOutcome::kBadRequest,
                   .decisions = {{kReasonBadRequest, 1}}};
}

VerbReply EncodeVictims(std::map<std::string, kube::MetaVictims> kept, size_t proposed_nodes) {
  VerbReply reply;
  if (!kept.empty()) reply.decisions[kReasonVictimsKept] = static_cast<int64_t>(kept.size());
  if (proposed_nodes > kept.size()) {
    reply.decisions[kReasonNoVictims] = static_cast<int64_t>(proposed_nodes - kept.size());
  }
  kube::ExtenderPreemptionResult result{.node_name_to_meta_victims = std::move(kept)};
  reply.body = kube::EncodeExtenderPreemptionResult(result);
  return reply;
}

}  // namespace

std::map<std::string, kube::MetaVictims> ProposedVictims(const kube::ExtenderPreemptionArgs& args) {
  if (args.node_name_to_meta_victims.has_value()) return *args.node_name_to_meta_victims;
  std::map<std::string, kube::MetaVictims> meta;
  if (!args.node_name_to_victims.has_value()) return meta;
  for (const auto& [node, victims] : *args.node_name_to_victims) {
    kube::MetaVictims& m = meta[node];
    m.num_pdb_violations = victims.num_pdb_violations;
    // The order is kept: kube-scheduler reads Pods[0] as the most important victim.
    for (const Pod& pod : victims.pods) m.pods.push_back(kube::MetaPod{.uid = pod.meta.uid});
  }
  return meta;
}

std::map<std::string, kube::MetaVictims> NarrowVictims(
    const Pod& /*preemptor*/, std::map<std::string, kube::MetaVictims> proposed,
    const ClusterSnapshot& /*snapshot*/) {
  // The gang and queue issues veto victims here (a gang member, a queue
  // within its guarantee). By default every proposed victim is accepted.
  std::erase_if(proposed, [](const auto& entry) { return entry.second.pods.empty(); });
  return proposed;
}

VerbReply Pipeline::Preempt(std::string_view body) const {
  // decode: the preemptor and the victims kube-scheduler's dry run chose.
  StatusOr<kube::ExtenderPreemptionArgs> args = kube::DecodeExtenderPreemptionArgs(body);
  if (!args.ok()) return PreemptFault(args.status());
  std::map<std::string, kube::MetaVictims> proposed = ProposedVictims(*args);
  const size_t proposed_nodes = proposed.size();
  // snapshot: one view for every node's victims.
  const ClusterSnapshot snapshot = cluster_->Snapshot(args->pod.meta.uid);
  // admission, gang: nobody is evicted for a pod that may not start now.
  if (RunGates(args->pod, snapshot).action != GateAction::kAdmit) {
    return EncodeVictims({}, proposed_nodes);
  }
  // narrow: the victims muster agrees to.
  auto kept = NarrowVictims(args->pod, std::move(proposed), snapshot);
  // encode: always the Meta form (UIDs), whichever form came in.
  return EncodeVictims(std::move(kept), proposed_nodes);
}

}  // namespace muster::extender
