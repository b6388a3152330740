// POST {prefix}/preempt: which of the victims kube-scheduler proposes muster
// agrees to evict. On v1.30-v1.34 the dry run that proposes them runs only
// the in-tree Filter plugins, never an extender's filter (SelectVictimsOnNode,
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go;
// kubernetes issue #105720), so this verb can only narrow or veto: muster's
// own preemption and reclaim evict from the gang controller. What it vetoes,
// and what it does not (no queue veto), is in docs/gang.md.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "extender/pipeline.h"
#include "gang/conformance.h"

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

VerbReply EncodeVictims(std::map<std::string, kube::MetaVictims> kept, size_t proposed_nodes,
                        const Vetoes& vetoes = {}) {
  VerbReply reply;
  if (!kept.empty()) reply.decisions[kReasonVictimsKept] = static_cast<int64_t>(kept.size());
  if (vetoes.conformance > 0) reply.decisions[kReasonConformance] = vetoes.conformance;
  if (vetoes.breaks_gang > 0) reply.decisions[kReasonBreaksGang] = vetoes.breaks_gang;
  const auto dropped =
      static_cast<int64_t>(proposed_nodes - kept.size()) - vetoes.conformance - vetoes.breaks_gang;
  if (dropped > 0) reply.decisions[kReasonNoVictims] = dropped;
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

VictimGangs GangsOfVictims(const ClusterState& state,
                           const std::map<std::string, kube::MetaVictims>& proposed) {
  VictimGangs out;
  std::map<std::string, VictimGang> by_key;
  for (const auto& [node, victims] : proposed) {
    for (const kube::MetaPod& victim : victims.pods) {
      const PodRecord* pod = state.FindPod(victim.uid);
      if (pod == nullptr || pod->group.empty()) continue;
      auto [it, inserted] = by_key.try_emplace(pod->group);
      if (inserted) {
        VictimGang& gang = it->second;
        gang.key = pod->group;
        if (pod->implicit_group) {
          gang.min_member = 1;  // Volcano's PodGroup of one
        } else if (const PodGroup* g = state.workloads().View().FindPodGroup(pod->group)) {
          gang.min_member = g->spec.min_member;
        }
        if (auto members = state.gang_pods().find(pod->group); members != state.gang_pods().end()) {
          for (const auto& [uid, member] : members->second.pods) {
            const bool running = !member->spec.node_name.empty() && !member->IsTerminal() &&
                                 !member->meta.deletion_timestamp.has_value();
            gang.running += running ? 1 : 0;
          }
        }
      }
      out.emplace(victim.uid, it->second);
    }
  }
  return out;
}

UnevictablePods UnevictableVictims(const ClusterState& state,
                                   const kube::ExtenderPreemptionArgs& args,
                                   const std::map<std::string, kube::MetaVictims>& proposed) {
  UnevictablePods out;
  // Gangs looked up once each: a gang's verdict covers all its members.
  std::map<std::string, bool, std::less<>> gang_evictable;
  for (const auto& [node, victims] : proposed) {
    for (const kube::MetaPod& victim : victims.pods) {
      const PodRecord* pod = state.FindPod(victim.uid);
      if (pod == nullptr) continue;
      bool evictable = pod->evictable;
      if (evictable && !pod->group.empty()) {
        auto [it, inserted] = gang_evictable.try_emplace(pod->group, true);
        if (inserted) {
          if (auto members = state.gang_pods().find(pod->group);
              members != state.gang_pods().end()) {
            it->second = std::ranges::all_of(members->second.pods, [](const auto& member) {
              return gang::Evictable(*member.second);
            });
          }
        }
        evictable = it->second;
      }
      if (!evictable) out.insert(victim.uid);
    }
  }
  // The full form names each pod: judge those the cache has not seen yet.
  if (args.node_name_to_victims.has_value()) {
    for (const auto& [node, victims] : *args.node_name_to_victims) {
      for (const Pod& pod : victims.pods) {
        if (!gang::Evictable(pod) && state.FindPod(pod.meta.uid) == nullptr) {
          out.insert(pod.meta.uid);
        }
      }
    }
  }
  return out;
}

std::map<std::string, kube::MetaVictims> NarrowVictims(
    std::map<std::string, kube::MetaVictims> proposed, const VictimGangs& gangs,
    const UnevictablePods& unevictable, Vetoes* vetoes) {
  std::erase_if(proposed, [&](const auto& entry) {
    if (entry.second.pods.empty()) return true;
    // Conformance first: such a node is out whatever the gangs say.
    if (std::ranges::any_of(entry.second.pods, [&](const kube::MetaPod& victim) {
          return unevictable.contains(victim.uid);
        })) {
      if (vetoes != nullptr) ++vetoes->conformance;
      return true;
    }
    // Per gang with victims on this node: how many, and the gang.
    std::map<std::string_view, std::pair<int32_t, const VictimGang*>> evicted;
    for (const kube::MetaPod& victim : entry.second.pods) {
      if (auto it = gangs.find(victim.uid); it != gangs.end()) {
        auto& [count, gang] = evicted[it->second.key];
        ++count;
        gang = &it->second;
      }
    }
    for (const auto& [key, hit] : evicted) {
      const int32_t left = hit.second->running - hit.first;
      if (left > 0 && left < hit.second->min_member) {
        if (vetoes != nullptr) ++vetoes->breaks_gang;
        return true;  // part of the gang would keep running below its minimum
      }
    }
    return false;
  });
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
  // gang: nobody is evicted for a pod that may not start now.
  if (AdmitByGang(args->pod, snapshot, config_.gang_schedulers).action != GateAction::kAdmit) {
    return EncodeVictims({}, proposed_nodes);
  }
  // narrow: the victims muster agrees to; never part of a gang, never a
  // kube-system or system-critical pod (nor a member of its gang).
  VictimGangs gangs;
  UnevictablePods unevictable;
  cluster_->Exclusive([&](ClusterState& state) {
    gangs = GangsOfVictims(state, proposed);
    unevictable = UnevictableVictims(state, *args, proposed);
  });
  Vetoes vetoes;
  auto kept = NarrowVictims(std::move(proposed), gangs, unevictable, &vetoes);
  // encode: always the Meta form (UIDs), whichever form came in.
  return EncodeVictims(std::move(kept), proposed_nodes, vetoes);
}

}  // namespace muster::extender
