// The shared test builders build what their names promise.
#include "model/testing/builders.h"

#include <gtest/gtest.h>

namespace muster {
namespace {

namespace t = ::muster::test;

constexpr int64_t kGi = int64_t{1} << 30;

TEST(BuildersTest, Pod) {
  const Pod pod = t::MakePod("w-0")
                      .Namespace("team-a")
                      .Uid("u1")
                      .Cpu("500m")
                      .Memory("1Gi")
                      .Gpu(4)
                      .Group("pg1")
                      .Queue("research")
                      .Priority(100)
                      .Phase("Running")
                      .NodeName("n1")
                      .Label("app", "train")
                      .InitContainer(t::Res({{"cpu", "1"}}), /*sidecar=*/true);
  EXPECT_EQ(pod.meta.Key(), "team-a/w-0");
  EXPECT_EQ(pod.meta.uid, "u1");
  EXPECT_EQ(pod.spec.containers.at(0).resources.requests,
            (Resources{{"cpu", 500}, {"memory", kGi}, {"nvidia.com/gpu", 4000}}));
  EXPECT_EQ(pod.GroupName(), "pg1");
  EXPECT_EQ(pod.meta.annotations.at(std::string(t::kPodQueueAnnotation)), "research");
  EXPECT_EQ(pod.spec.priority, 100);
  EXPECT_EQ(pod.status.phase, "Running");
  EXPECT_EQ(pod.spec.node_name, "n1");
  EXPECT_EQ(pod.meta.labels.at("app"), "train");
  ASSERT_EQ(pod.spec.init_containers.size(), 1u);
  EXPECT_EQ(pod.spec.init_containers[0].restart_policy, "Always");
  EXPECT_EQ(pod.EffectiveRequest().milli_cpu(), 1500);

  const Pod plain = t::MakePod("p").Build();
  EXPECT_EQ(plain.meta.Key(), "default/p");
  EXPECT_EQ(plain.status.phase, "Pending");
  EXPECT_EQ(t::MakePod("p").Obj(), plain);
}

TEST(BuildersTest, Node) {
  const Node node = t::MakeNode("n1")
                        .Cpu("32")
                        .Memory("256Gi")
                        .Gpu(8)
                        .Label("zone", "a")
                        .Taint("gpu", "true", "NoSchedule");
  EXPECT_TRUE(node.IsReady());
  EXPECT_EQ(node.allocatable,
            (Resources{{"cpu", 32000}, {"memory", 256 * kGi}, {"nvidia.com/gpu", 8000}}));
  EXPECT_EQ(node.capacity, node.allocatable);
  ASSERT_EQ(node.taints.size(), 1u);
  EXPECT_EQ(node.taints[0].effect, "NoSchedule");
  EXPECT_FALSE(t::MakeNode("n2").Ready(false).Build().IsReady());
  EXPECT_TRUE(t::MakeNode("n3").Ready(false).Ready(true).Obj().IsReady());
}

TEST(BuildersTest, PodGroupAndQueue) {
  const PodGroup pg = t::MakePodGroup("pg1").MinMember(4).Queue("research");
  EXPECT_EQ(pg.meta.Key(), "default/pg1");
  EXPECT_EQ(pg.spec.min_member, 4);
  EXPECT_EQ(pg.spec.queue, "research");

  const Queue by_quantity =
      t::MakeQueue("q").Weight(2).Capability({{"cpu", "8"}, {"memory", "16Gi"}});
  const Queue by_amount =
      t::MakeQueue("q").Weight(2).Capability({{"cpu", 8000}, {"memory", 16 * kGi}});
  EXPECT_EQ(by_quantity, by_amount);
  EXPECT_EQ(by_quantity.spec.weight, 2);
  EXPECT_TRUE(by_quantity.IsOpen());
  EXPECT_FALSE(by_quantity.spec.capability->Has("nvidia.com/gpu"));
}

}  // namespace
}  // namespace muster
