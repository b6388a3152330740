// GPU sharing through the verbs (issue 18): pods asking a share of a GPU
// (muster.io/gpu-fraction) or Volcano's vGPU resources are filtered,
// scored, bound and planned per GPU, and the ledger comes back from the
// pods' annotations after a restart.
#include "model/gpu_share.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "extender/pipeline.h"
#include "extender/testing/golden.h"
#include "gang/gang.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/vgpu_codec.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr std::string_view kFraction = kAnnotationGpuFraction;

test::PodBuilder HalfOf(const std::string& name, std::string_view share = "0.5") {
  return MakePod(name).Uid(name).Namespace("ml").Annotation(kFraction, share);
}
Pod Half(const std::string& name, std::string_view share = "0.5") { return HalfOf(name, share); }

// A node of `gpus` GPUs told apart by count (no topology), 80 GiB each.
Node GpuNode(const std::string& name, int gpus = 4) {
  return MakeNode(name)
      .Gpu(gpus)
      .AllocatableAmount("pods", 110)
      .Label("nvidia.com/gpu.memory", "81920");
}

// A node Volcano's vGPU device plugin registered: two 32 GiB GPUs of 10
// vGPUs each, advertised as its resources.
Node VgpuNode(const std::string& name) {
  const std::vector<kube::VgpuRegistration> gpus = {{.uuid = "GPU-" + name + "-0",
                                                     .split = 10,
                                                     .memory_mib = 32768,
                                                     .type = "NVIDIA-V100",
                                                     .mode = "hami-core"},
                                                    {.uuid = "GPU-" + name + "-1",
                                                     .split = 10,
                                                     .memory_mib = 32768,
                                                     .type = "NVIDIA-V100",
                                                     .mode = "hami-core"}};
  return MakeNode(name)
      .AllocatableAmount(kVgpuNumber, 20)
      .AllocatableAmount(kVgpuMemory, 65536)
      .AllocatableAmount(kVgpuCores, 200)
      .Annotation(kube::kAnnotationVgpuRegister, kube::EncodeVgpuRegistration(gpus));
}

struct SharedCluster {
  fixture::TestCluster cluster;

  std::string BindBody(const Pod& pod, const std::string& node) {
    return R"({"PodName":")" + pod.meta.name + R"(","PodNamespace":")" + pod.meta.namespace_ +
           R"(","PodUID":")" + pod.meta.uid + R"(","Node":")" + node + R"("})";
  }
  // Binds `pod` to `node` and "posts" it: the pod is then seen bound with
  // the Binding's annotations, as the API server merges them.
  std::map<std::string, std::string> Bind(Pod pod, const std::string& node) {
    cluster.Add(pod);
    const BindPlan plan = cluster.pipeline.ReserveBind(BindBody(pod, node));
    EXPECT_EQ(plan.action, BindAction::kPost) << plan.error;
    if (plan.action != BindAction::kPost) return {};
    cluster.pipeline.FinishBind(plan, Status::Ok());
    for (const auto& [k, v] : plan.binding.meta.annotations) pod.meta.annotations[k] = v;
    pod.spec.node_name = node;
    pod.status.phase = "Running";
    cluster.Add(pod);
    return plan.binding.meta.annotations;
  }
  kube::ExtenderFilterResult Filter(const Pod& pod, std::vector<std::string> nodes) {
    StatusOr<kube::ExtenderFilterResult> r = kube::DecodeExtenderFilterResult(
        cluster.pipeline.Filter(fixture::FilterArgs(pod, std::move(nodes))).body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : kube::ExtenderFilterResult{};
  }
  kube::HostPriorityList Prioritize(const Pod& pod, std::vector<std::string> nodes) {
    StatusOr<kube::HostPriorityList> r = kube::DecodeHostPriorityList(
        cluster.pipeline.Prioritize(fixture::FilterArgs(pod, std::move(nodes))).body);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : kube::HostPriorityList{};
  }
  GpuUses Uses(const std::string& node) {
    GpuUses uses{};
    cluster.With([&](ClusterState& s) { uses = s.FindNode(node)->gpu_holds.uses; });
    return uses;
  }
};

TEST(GpuShareBindTest, TwoHalvesShareOneGpuAndTheThirdOpensTheNext) {
  SharedCluster c;
  c.cluster.Add(GpuNode("n1"));
  const auto a = c.Bind(Half("a"), "n1");
  const auto b = c.Bind(Half("b"), "n1");
  const auto d = c.Bind(Half("d", "0.25"), "n1");
  EXPECT_EQ(a.at("muster.io/gpu-ids"), "0");
  EXPECT_EQ(b.at("muster.io/gpu-ids"), "0") << "the half-used GPU first";
  EXPECT_EQ(d.at("muster.io/gpu-ids"), "1") << "GPU 0 is full";
  EXPECT_EQ(a.at("muster.io/gpu-shares"), "0:500:40960") << "half of the compute and memory";
  EXPECT_EQ(a.at("muster.io/visible-devices"), "0") << "no UUIDs known: the index";
  EXPECT_EQ(a.count("volcano.sh/vgpu-ids-new"), 0u) << "a fraction is not a vGPU";
  const GpuUses uses = c.Uses("n1");
  EXPECT_EQ(uses[0].sharers, 2);
  EXPECT_EQ(uses[0].compute, 1000);
  EXPECT_EQ(uses[1].compute, 250);
}

TEST(GpuShareBindTest, ARestartedExtenderRebuildsTheSharesFromThePods) {
  SharedCluster before;
  before.cluster.Add(GpuNode("n1"));
  Pod a = Half("a");
  for (const auto& [k, v] : before.Bind(a, "n1")) a.meta.annotations[k] = v;
  a.spec.node_name = "n1";
  // A new cache sees only the bound pod, as after a restart.
  SharedCluster after;
  after.cluster.Add(GpuNode("n1"));
  after.cluster.Add(a);
  EXPECT_EQ(after.Uses("n1"), before.Uses("n1"));
  EXPECT_EQ(after.Bind(Half("b"), "n1").at("muster.io/gpu-ids"), "0")
      << "the next half joins the half-used GPU";
}

TEST(GpuShareBindTest, WholeGpusNeverLandOnASharedGpu) {
  SharedCluster c;
  c.cluster.Add(GpuNode("n1", 2));
  c.Bind(Half("a"), "n1");
  EXPECT_EQ(c.Bind(MakePod("w").Uid("w").Namespace("ml").Gpu(1), "n1").at("muster.io/gpu-ids"),
            "1");
  const kube::ExtenderFilterResult r = c.Filter(MakePod("w2").Uid("w2").Gpu(1), {"n1"});
  ASSERT_EQ(r.failed_nodes.count("n1"), 1u) << "GPU 0 is shared, GPU 1 held whole";
  EXPECT_EQ(r.failed_nodes.at("n1"), "muster: needs 1 nvidia.com/gpu (0.5 free of 2)");
}

TEST(GpuShareFilterTest, VerdictsNameTheShareAndWhatIsLeft) {
  SharedCluster c;
  c.cluster.Add(GpuNode("n1", 1));
  c.cluster.Add(MakeNode("cpu").Cpu("8"));
  c.Bind(Half("a", "0.7"), "n1");
  struct Case {
    std::string name;
    Pod pod;
    std::string node;
    bool unresolvable;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"a share that fits", Half("p", "0.3"), "n1", false, ""},
      {"a share larger than what is left", Half("p", "0.5"), "n1", false,
       "muster: needs 0.5 nvidia.com/gpu (0.3 free of 1)"},
      {"a node without GPUs", Half("p", "0.3"), "cpu", true,
       "muster: needs 0.3 nvidia.com/gpu (node has 0)"},
      {"a malformed share", Half("p", "0.333"), "n1", true,
       "muster: metadata.annotations[muster.io/gpu-fraction]: \"0.333\": a share of one GPU has "
       "at most two decimals (0.01 steps)"},
  };
  for (const Case& c2 : cases) {
    SCOPED_TRACE(c2.name);
    const kube::ExtenderFilterResult r = c.Filter(c2.pod, {c2.node});
    if (c2.reason.empty()) {
      EXPECT_EQ(r.failed_nodes.size() + r.failed_and_unresolvable_nodes.size(), 0u);
      continue;
    }
    const auto& failed = c2.unresolvable ? r.failed_and_unresolvable_nodes : r.failed_nodes;
    ASSERT_EQ(failed.count(c2.node), 1u);
    EXPECT_EQ(failed.at(c2.node), c2.reason);
  }
}

TEST(GpuShareFilterTest, ThePerGpuFitDecidesWhenTheCountFits) {
  SharedCluster c;
  c.cluster.Add(GpuNode("n1", 2));
  c.Bind(Half("a", "0.6"), "n1");
  c.Bind(Half("b", "0.6"), "n1");
  // 0.8 of the node's 2 GPUs is free, but no single GPU has 0.5.
  const kube::ExtenderFilterResult r = c.Filter(Half("p"), {"n1"});
  ASSERT_EQ(r.failed_nodes.count("n1"), 1u);
  EXPECT_EQ(r.failed_nodes.at("n1"), "muster: needs 0.5 of a GPU: largest free share here is 0.4");
}

TEST(GpuSharePrioritizeTest, AShareScoresHighestWhereItCompletesAHalfUsedGpu) {
  SharedCluster c;
  for (const std::string name : {"half", "idle", "full"}) c.cluster.Add(GpuNode(name, 1));
  c.Bind(Half("h"), "half");
  c.Bind(Half("f", "0.9"), "full");
  const kube::HostPriorityList scores = c.Prioritize(Half("p"), {"half", "idle", "full"});
  EXPECT_EQ(scores, (kube::HostPriorityList{{"half", 10}, {"idle", 5}, {"full", 0}}));
}

TEST(GpuShareVgpuTest, BindWritesTheAnnotationsVolcanosDevicePluginReads) {
  SharedCluster c;
  c.cluster.clock.Set(Time::FromUnixSeconds(1764000000));
  c.cluster.Add(VgpuNode("v1"));
  Pod pod = MakePod("infer").Uid("infer").Namespace("ml");
  pod.spec.containers.front().resources.limits = {{std::string(kVgpuNumber), 1},
                                                  {std::string(kVgpuMemory), 8000},
                                                  {std::string(kVgpuCores), 30}};
  pod.spec.containers.front().resources.requests = pod.spec.containers.front().resources.limits;
  const auto got = c.Bind(pod, "v1");
  const std::map<std::string, std::string> want_vgpu = {
      {"volcano.sh/vgpu-ids-new", "GPU-v1-0,NVIDIA,8000,30:"},
      {"volcano.sh/devices-to-allocate", "GPU-v1-0,NVIDIA,8000,30:"},
      {"volcano.sh/vgpu-node", "v1"},
      {"volcano.sh/vgpu-time", "1764000000"},
      {"volcano.sh/bind-time", "1764000000"},
      {"volcano.sh/bind-phase", "allocating"}};
  for (const auto& [k, v] : want_vgpu) {
    ASSERT_EQ(got.count(k), 1u) << k;
    EXPECT_EQ(got.at(k), v) << k;
  }
  EXPECT_EQ(got.at("muster.io/gpu-uuids"), "GPU-v1-0");
  EXPECT_EQ(got.at("muster.io/gpu-shares"), "0:300:8000");
}

TEST(GpuShareVgpuTest, MemoryAndSharersAreNeverOversubscribed) {
  SharedCluster c;
  c.cluster.Add(VgpuNode("v1"));
  int bound = 0;
  for (int i = 0; i < 12; ++i) {
    Pod pod = MakePod("p" + std::to_string(i)).Uid("p" + std::to_string(i)).Namespace("ml");
    pod.spec.containers.front().resources.limits = {{std::string(kVgpuNumber), 1},
                                                    {std::string(kVgpuMemory), 6000}};
    pod.spec.containers.front().resources.requests = pod.spec.containers.front().resources.limits;
    const kube::ExtenderFilterResult r = c.Filter(pod, {"v1"});
    if (!r.failed_nodes.empty()) continue;
    c.Bind(pod, "v1");
    ++bound;
  }
  EXPECT_EQ(bound, 10) << "5 x 6000 MiB fit a 32768 MiB GPU, twice";
  for (const GpuCardUse& use : c.Uses("v1")) EXPECT_LE(use.memory_mib, 32768);
}

// ---- gang planning.

gang::NodeView ViewOf(const Node& node, const NodeInfo& info) {
  return gang::NodeView{.node = std::make_shared<const Node>(node),
                        .free = node.allocatable - info.allocated,
                        .gpu_layout = info.Gpus().layout,
                        .free_gpus = FreeGpus(info.Gpus(), info.gpu_holds),
                        .gpu_cards = info.Gpus().cards,
                        .gpu_uses = info.gpu_holds.uses};
}

// The gang planner's view of `node` as the cluster holds it now.
gang::ClusterView ViewWith(SharedCluster& c, const Node& node) {
  gang::ClusterView view;
  c.cluster.With(
      [&](ClusterState& s) { view.nodes.push_back(ViewOf(node, *s.FindNode(node.meta.name))); });
  return view;
}

TEST(GpuShareGangTest, SixHalvesPackTwoToAGpuNeverOneAloneBesideAHalfUsedOne) {
  SharedCluster c;
  const Node node = GpuNode("n1", 8);
  c.cluster.Add(node);
  gang::ClusterView view = ViewWith(c, node);
  gang::Gang g{.key = "ml/mpi", .spec = {.min_member = 6}};
  for (int i = 0; i < 6; ++i) {
    g.members.push_back(gang::Member::Of(
        std::make_shared<const Pod>(HalfOf("w-" + std::to_string(i)).Group("mpi").Obj())));
  }
  const auto planned = gang::PlanGang(g, view);
  ASSERT_TRUE(std::holds_alternative<gang::GangPlan>(planned));
  std::map<int, int> per_gpu;
  for (const gang::Assignment& a : std::get<gang::GangPlan>(planned).reserve) {
    ASSERT_EQ(a.gpus.slices.size(), 1u);
    ++per_gpu[a.gpus.slices[0].gpu];
  }
  EXPECT_EQ(per_gpu, (std::map<int, int>{{0, 2}, {1, 2}, {2, 2}}));
}

TEST(GpuShareGangTest, AShareTooLargeForEveryGpuSaysSo) {
  SharedCluster c;
  const Node node = GpuNode("n1", 2);
  c.cluster.Add(node);
  c.Bind(Half("a", "0.6"), "n1");
  c.Bind(Half("b", "0.6"), "n1");  // 0.8 of a GPU free in all, 0.4 on each
  gang::ClusterView view = ViewWith(c, node);
  gang::Gang g{.key = "ml/pair", .spec = {.min_member = 1}};
  g.members.push_back(
      gang::Member::Of(std::make_shared<const Pod>(HalfOf("p").Group("pair").Obj())));
  const auto planned = gang::PlanGang(g, view);
  ASSERT_TRUE(std::holds_alternative<gang::Wait>(planned));
  EXPECT_EQ(std::get<gang::Wait>(planned).message,
            "0/1 members placeable: 1 need 0.5 of a GPU, which no GPU has free to share");
}

// Queues count GPUs in thousandths: a capability of one GPU takes two halves.
TEST(GpuShareQueueTest, ACapabilityOfOneGpuAdmitsTwoHalves) {
  SharedCluster c;
  const Node node = GpuNode("n1", 4);
  c.cluster.Add(node);
  gang::ClusterView view = ViewWith(c, node);
  std::vector<gang::Gang> gangs;
  for (const std::string name : {"a", "b", "c"}) {
    gang::Gang g{.key = "ml/" + name, .spec = {.min_member = 1}, .queues = {"q"}};
    g.created = Time::FromUnixSeconds(name == "a" ? 1 : name == "b" ? 2 : 3);
    g.members.push_back(
        gang::Member::Of(std::make_shared<const Pod>(HalfOf(name).Group(name).Obj())));
    gangs.push_back(std::move(g));
  }
  const gang::QueueLimits queues = {
      {"q", gang::QueueLimit{.room = Resources{{std::string(kNvidiaGpu), 1000}}}}};
  const gang::PassResult r =
      gang::RunPass(view, gangs, {}, c.cluster.clock.Now(), gang::PassConfig{}, queues);
  ASSERT_EQ(r.plans.size(), 2u);
  EXPECT_EQ(r.plans[0].key, "ml/a");
  EXPECT_EQ(r.plans[1].key, "ml/b");
  ASSERT_EQ(r.waits.size(), 1u);
  EXPECT_EQ(r.waits[0].key, "ml/c");
  EXPECT_EQ(r.waits[0].reason, gang::kWaitQueueCapability);
  EXPECT_EQ(r.waits[0].message, "queue q is at its capability: needs nvidia.com/gpu=0.5 (0 left)");
}

}  // namespace
}  // namespace muster::extender
