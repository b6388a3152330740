// Builders of gang inputs for tests (gang, and the extender's gang controller).
//
//   Gang g = MakeGang("train").MinMember(2)
//                .Pending(MakePod("train-0").Gpu(8))
//                .Bound(MakePod("train-1").Gpu(8), "n1");
//   ClusterView view = MakeView({MakeNode("n1").Gpu(8).Pods(110)}, {g});
//
// Header-only, test code only.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gang/conformance.h"
#include "gang/feasibility.h"
#include "gang/gang.h"
#include "model/node.h"
#include "model/pod.h"

namespace muster::gang::test {

// A view of `nodes` (sorted by name) whose free capacity is allocatable less
// what the HoldsNode members of `gangs` take; schedulable = Ready and not
// cordoned, as the controller derives it.
inline ClusterView MakeView(std::vector<Node> nodes, const std::vector<Gang>& gangs = {}) {
  std::ranges::sort(nodes, {}, [](const Node& n) { return n.meta.name; });
  ClusterView view;
  for (Node& node : nodes) {
    const bool schedulable = node.IsReady() && !node.unschedulable;
    Resources free = node.allocatable;
    view.nodes.push_back(NodeView{.node = std::make_shared<const Node>(std::move(node)),
                                  .free = std::move(free),
                                  .schedulable = schedulable});
  }
  for (const Gang& gang : gangs) {
    for (const Member& m : gang.members) {
      if (!HoldsNode(m)) continue;
      if (auto n = FindNode(view, m.node)) view.nodes[*n].free -= SlotRequest(m);
    }
  }
  return view;
}

class GangBuilder {
 public:
  // Gang "default/<name>" with minMember 1, created at t=1000s.
  explicit GangBuilder(const std::string& name) {
    gang_.key = "default/" + name;
    gang_.spec.min_member = 1;
    gang_.created = Time::FromUnixSeconds(1000);
  }

  GangBuilder& MinMember(int32_t n) {
    gang_.spec.min_member = n;
    return *this;
  }
  GangBuilder& MinTaskMember(const std::string& task, int32_t n) {
    gang_.spec.min_task_member[task] = n;
    return *this;
  }
  GangBuilder& MinResources(Resources r) {
    gang_.spec.min_resources = std::move(r);
    return *this;
  }
  GangBuilder& Priority(int32_t p) {
    gang_.priority = p;
    return *this;
  }
  GangBuilder& Created(Time t) {
    gang_.created = t;
    return *this;
  }
  GangBuilder& Phase(std::string_view phase) {
    gang_.phase = std::string(phase);
    return *this;
  }
  GangBuilder& ReservedSince(Time t) {
    gang_.reserved_since = t;
    return *this;
  }
  GangBuilder& Preempting(bool preempting = true) {
    gang_.preempting = preempting;
    return *this;
  }

  GangBuilder& Pending(Pod pod, std::string hint = "") {
    return Add(std::move(pod), MemberState::kPending, "", std::move(hint));
  }
  GangBuilder& Reserved(Pod pod, std::string node) {
    return Add(std::move(pod), MemberState::kReserved, std::move(node));
  }
  // Bound: spec.nodeName set and phase Running.
  GangBuilder& Bound(Pod pod, std::string node) {
    pod.spec.node_name = node;
    pod.status.phase = "Running";
    return Add(std::move(pod), MemberState::kBound, std::move(node));
  }
  GangBuilder& Succeeded(Pod pod, std::string node) {
    pod.spec.node_name = node;
    pod.status.phase = "Succeeded";
    return Add(std::move(pod), MemberState::kSucceeded, std::move(node));
  }
  GangBuilder& Failed(Pod pod, std::string node) {
    pod.spec.node_name = node;
    pod.status.phase = "Failed";
    return Add(std::move(pod), MemberState::kFailed, std::move(node));
  }
  // Any member as given (terminating pods and unusual states).
  GangBuilder& Add(Pod pod, MemberState state, std::string node = "", std::string hint = "",
                   bool terminating = false) {
    Member m = Member::Of(std::make_shared<const Pod>(std::move(pod)));
    m.state = state;
    m.node = std::move(node);
    m.hint = std::move(hint);
    m.terminating = terminating;
    gang_.members.push_back(std::move(m));
    return *this;
  }

  // Members in pod-name order, as Gang requires.
  Gang Build() const {
    Gang gang = gang_;
    std::ranges::sort(*gang.members.Edit(), {}, [](const Member& m) { return m.pod->meta.name; });
    return gang;
  }
  operator Gang() const { return Build(); }  // NOLINT: implicit by design

 private:
  Gang gang_;
};

inline GangBuilder MakeGang(const std::string& name) { return GangBuilder(name); }

// The victim candidate the extender offers for `g` (extender/gang_inputs.cc,
// VictimOf): its bound members' requests with their pod slots, GPUs in
// thousandths, in the gang's queues, evictable unless a member is exempt
// (gang/conformance.h). None when no member is bound.
inline std::optional<VictimCandidate> VictimOf(const Gang& g) {
  VictimCandidate v{.key = g.key,
                    .priority = g.priority,
                    .created = g.created,
                    .queues = g.queues,
                    .evictable = Evictable(g)};
  for (const Member& m : g.members) {
    if (m.state != MemberState::kBound) continue;
    Resources held = SlotRequest(m);
    v.gpus += held.milli_gpus();
    v.holds += m.request;
    v.pods.push_back({.uid = m.pod->meta.uid,
                      .namespace_ = m.pod->meta.namespace_,
                      .name = m.pod->meta.name,
                      .node = m.node,
                      .request = std::move(held)});
  }
  if (v.pods.empty()) return std::nullopt;
  return v;
}

// VictimOf every gang that has one.
inline std::vector<VictimCandidate> VictimsOf(const std::vector<Gang>& gangs) {
  std::vector<VictimCandidate> victims;
  for (const Gang& g : gangs) {
    if (std::optional<VictimCandidate> v = VictimOf(g)) victims.push_back(*std::move(v));
  }
  return victims;
}

}  // namespace muster::gang::test
