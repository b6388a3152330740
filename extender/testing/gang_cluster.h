// Test-only helpers for the gang controller tests (gang_controller_test.cc,
// gang_controller_queue_test.cc): GPU nodes, gangs of pods, where a pass
// reserved them, and a controller with no API client.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/gang_controller.h"
#include "extender/testing/golden.h"
#include "model/testing/builders.h"

namespace muster::extender::fixture {

// `n` nodes gpu-0 .. gpu-<n-1> of 8 GPUs.
inline void AddNodes(TestCluster& cluster, int n) {
  for (int i = 0; i < n; ++i) {
    cluster.Add(
        test::MakeNode("gpu-" + std::to_string(i)).Cpu("64").Memory("512Gi").Gpu(8).Pods(110));
  }
}

inline std::string MemberName(std::string_view group, int i) {
  return std::string(group) + "-" + std::to_string(i);
}

// PodGroup ml/<group> with minMember `members` in `queue`, and its pods of
// `gpus` each, pending or bound to `nodes` (one per member).
inline void AddGang(TestCluster& cluster, std::string_view group, int members, int gpus,
                    int priority = 0, const std::string& queue = "",
                    const std::vector<std::string>& nodes = {}) {
  cluster.Add(
      test::MakePodGroup(std::string(group)).Namespace("ml").MinMember(members).Queue(queue));
  for (int i = 0; i < members; ++i) {
    const std::string name = MemberName(group, i);
    test::PodBuilder pod = test::MakePod(name)
                               .Namespace("ml")
                               .Uid("uid-" + name)
                               .Group(group)
                               .Priority(priority)
                               .Cpu("1")
                               .Gpu(gpus);
    if (static_cast<size_t>(i) < nodes.size()) pod.NodeName(nodes[i]).Phase("Running");
    cluster.Add(pod);
  }
}

inline std::optional<Placement> PlacementOf(TestCluster& cluster, std::string_view pod) {
  std::optional<Placement> placement;
  cluster.With(
      [&](ClusterState& state) { placement = state.PlacementOf("uid-" + std::string(pod)); });
  return placement;
}

inline int ReservedMembers(TestCluster& cluster, std::string_view group, int members) {
  int reserved = 0;
  for (int i = 0; i < members; ++i) {
    std::optional<Placement> p = PlacementOf(cluster, MemberName(group, i));
    reserved += p.has_value() && p->assumed ? 1 : 0;
  }
  return reserved;
}

// A controller over the cluster's cache, writing nothing (no API client).
inline GangController MakeController(TestCluster& cluster, GangControllerOptions options = {}) {
  return GangController(&cluster.cache, /*client=*/nullptr, cluster.clock, options,
                        /*registry=*/nullptr);
}

}  // namespace muster::extender::fixture
