#include "model/pod.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/testing/builders.h"

namespace muster {
namespace {

using muster::test::MakePod;
using muster::test::Res;

TEST(PodTest, EffectiveRequest) {
  struct Case {
    std::string name;
    Pod pod;
    Resources want;
  };
  const std::vector<Case> cases = {
      {"no requests", MakePod("p"), {}},
      {"one container", MakePod("p").Cpu("500m").Memory("1Gi"),
       Res({{"cpu", "500m"}, {"memory", "1Gi"}})},
      {"containers add up",
       MakePod("p").Cpu("500m").Memory("1Gi").Container(Res({{"cpu", "250m"}, {"memory", "1Gi"}})),
       Res({{"cpu", "750m"}, {"memory", "2Gi"}})},
      {"init smaller than app is hidden", MakePod("p").Cpu("2").InitContainer(Res({{"cpu", "1"}})),
       Res({{"cpu", "2"}})},
      {"init bigger than app wins",
       MakePod("p").Cpu("1").Memory("1Gi").InitContainer(Res({{"cpu", "2"}, {"memory", "100Mi"}})),
       Res({{"cpu", "2"}, {"memory", "1Gi"}})},
      {"regular init containers take the max, not the sum",
       MakePod("p").Cpu("1").InitContainer(Res({{"cpu", "2"}})).InitContainer(Res({{"cpu", "3"}})),
       Res({{"cpu", "3"}})},
      {"max is per resource",
       MakePod("p").Cpu("1").Memory("8Gi").InitContainer(Res({{"cpu", "4"}, {"memory", "1Gi"}})),
       Res({{"cpu", "4"}, {"memory", "8Gi"}})},
      {"resource only an init container asks for",
       MakePod("p").Cpu("1").InitContainer(Res({{"nvidia.com/gpu", "1"}})),
       Res({{"cpu", "1"}, {"nvidia.com/gpu", "1"}})},
      {"sidecar adds to the app containers",
       MakePod("p").Cpu("1").InitContainer(Res({{"cpu", "1"}}), /*sidecar=*/true),
       Res({{"cpu", "2"}})},
      {"init container runs on top of earlier sidecars",
       MakePod("p")
           .Cpu("1")
           .InitContainer(Res({{"cpu", "500m"}}), /*sidecar=*/true)
           .InitContainer(Res({{"cpu", "2"}})),
       Res({{"cpu", "2500m"}})},
      {"sidecar started after an init container does not add to it",
       MakePod("p")
           .Cpu("1")
           .InitContainer(Res({{"cpu", "2"}}))
           .InitContainer(Res({{"cpu", "500m"}}), /*sidecar=*/true),
       Res({{"cpu", "2"}})},
      {"sidecars and app dominate a small init",
       MakePod("p")
           .Cpu("1")
           .InitContainer(Res({{"cpu", "1"}}), /*sidecar=*/true)
           .InitContainer(Res({{"cpu", "500m"}})),
       Res({{"cpu", "2"}})},
      {"overhead is added on top",
       MakePod("p").Cpu("1").Overhead(Res({{"cpu", "250m"}, {"memory", "120Mi"}})),
       Res({{"cpu", "1250m"}, {"memory", "120Mi"}})},
      {"overhead is added to the init peak",
       MakePod("p").Cpu("1").InitContainer(Res({{"cpu", "3"}})).Overhead(Res({{"cpu", "100m"}})),
       Res({{"cpu", "3100m"}})},
      {"gpus", MakePod("p").Cpu("8").Gpu(8).InitContainer(Res({{"nvidia.com/gpu", "1"}})),
       Res({{"cpu", "8"}, {"nvidia.com/gpu", "8"}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.pod.EffectiveRequest(), c.want);
  }
}

TEST(PodTest, EffectiveRequestIgnoresLimits) {
  // kube-scheduler sums requests; the API server has already defaulted
  // requests from limits, so limits alone are not counted again.
  Pod pod = MakePod("p").Cpu("1");
  pod.spec.containers[0].resources.limits = Res({{"cpu", "4"}, {"memory", "1Gi"}});
  EXPECT_EQ(pod.EffectiveRequest(), Res({{"cpu", "1"}}));
}

TEST(PodTest, GroupName) {
  const std::string key(kGroupNameAnnotation);
  struct Case {
    std::string name;
    Pod pod;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"none", MakePod("p"), ""},
      {"annotation", MakePod("p").Annotation(key, "pg-a"), "pg-a"},
      {"label", MakePod("p").Label(key, "pg-b"), "pg-b"},
      {"annotation wins over label", MakePod("p").Annotation(key, "pg-a").Label(key, "pg-b"),
       "pg-a"},
      {"other annotations do not count", MakePod("p").Annotation("volcano.sh/task-spec", "w"), ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.pod.GroupName(), c.want);
  }
}

// Volcano's podgroup controller names the PodGroup of a plain pod after its
// controller owner, else after the pod (pkg/controllers/podgroup/
// pg_controller_handler.go, helpers.GeneratePodgroupName).
TEST(PodTest, ImplicitGroupName) {
  auto owned = [](std::string uid, bool controller) {
    Pod pod = MakePod("p").Uid("pod-uid");
    pod.meta.owner_references.push_back(
        OwnerReference{.kind = "ReplicaSet", .name = "rs", .uid = uid, .controller = controller});
    return pod;
  };
  struct Case {
    std::string name;
    Pod pod;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no owner: the pod's uid", MakePod("p").Uid("pod-uid"), "podgroup-pod-uid"},
      {"a controller owner: its uid (one group per ReplicaSet)", owned("rs-uid", true),
       "podgroup-rs-uid"},
      {"an owner that is not the controller does not count", owned("rs-uid", false),
       "podgroup-pod-uid"},
      {"no uid at all", MakePod("p").Uid(""), ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.pod.ImplicitGroupName(), c.want);
  }
}

TEST(PodTest, QueueAnnotation) {
  EXPECT_EQ(Pod(MakePod("p")).QueueAnnotation(), "");
  EXPECT_EQ(Pod(MakePod("p").Annotation(kQueueNameAnnotation, "research")).QueueAnnotation(),
            "research");
}

TEST(PodTest, IsTerminal) {
  struct Case {
    std::string phase;
    bool terminal;
  };
  const std::vector<Case> cases = {
      {"Pending", false},  {"Running", false}, {"Unknown", false},
      {"Succeeded", true}, {"Failed", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.phase);
    EXPECT_EQ(MakePod("p").Phase(c.phase).Build().IsTerminal(), c.terminal);
  }
}

}  // namespace
}  // namespace muster
