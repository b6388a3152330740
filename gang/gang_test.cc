#include "gang/gang.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "gang/testing/builders.h"
#include "model/testing/builders.h"

namespace muster::gang {
namespace {

using muster::test::MakeNode;
using muster::test::MakePod;
using muster::test::PodBuilder;
using muster::test::Res;
using test::GangBuilder;
using test::MakeGang;
using test::MakeView;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const Time kNow = Time::FromUnixSeconds(100'000);

Node GpuNode(const std::string& name, int64_t gpus) {
  return MakeNode(name).Cpu("64").Memory("512Gi").Gpu(gpus).Pods(110);
}
Node CpuNode(const std::string& name) { return MakeNode(name).Cpu("16").Memory("64Gi").Pods(110); }
PodBuilder Worker(const std::string& name, int64_t gpus) {
  return MakePod(name).Cpu("4").Gpu(gpus);
}
PodBuilder TaskPod(const std::string& name, const std::string& task) {
  return MakePod(name).Annotation(kTaskSpecKey, task);
}

std::map<std::string, std::string> ByPod(const std::vector<Assignment>& list) {
  std::map<std::string, std::string> out;
  for (const Assignment& a : list) out[a.pod_name] = a.node;
  return out;
}

// ---------------------------------------------------------------------------
// NodeAdmits.

NodeSelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values = {}) {
  return {.key = std::move(key), .op = std::move(op), .values = std::move(values)};
}
NodeSelectorTerm Expr(std::vector<NodeSelectorRequirement> reqs) {
  return {.match_expressions = std::move(reqs)};
}

TEST(NodeAdmitsTest, Table) {
  const Node labelled = MakeNode("n1").Label("pool", "a").Label("gen", "5");
  const Node tainted = MakeNode("n1").Taint("gpu", "true", "NoSchedule");
  const Toleration tol_gpu{.key = "gpu", .value = "true", .effect = "NoSchedule"};
  struct Case {
    std::string name;
    Node node;
    Pod pod;
    bool want;
    bool schedulable = true;
  };
  const std::vector<Case> cases = {
      {"plain", MakeNode("n1"), MakePod("p"), true},
      {"not schedulable", MakeNode("n1"), MakePod("p"), false, false},
      {"selector matches", labelled, MakePod("p").NodeSelector("pool", "a"), true},
      {"selector value differs", labelled, MakePod("p").NodeSelector("pool", "b"), false},
      {"selector label missing", labelled, MakePod("p").NodeSelector("zone", "x"), false},
      {"In", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("pool", "In", {"b", "a"})})), true},
      {"In misses", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("pool", "In", {"b"})})),
       false},
      {"NotIn", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("pool", "NotIn", {"b"})})), true},
      {"NotIn on a missing label", labelled,
       MakePod("p").RequiredNodeTerm(Expr({Req("zone", "NotIn", {"b"})})), true},
      {"NotIn hits", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("pool", "NotIn", {"a"})})),
       false},
      {"Exists", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("gen", "Exists")})), true},
      {"DoesNotExist", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("gen", "DoesNotExist")})),
       false},
      {"Gt", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("gen", "Gt", {"4"})})), true},
      {"Gt equal", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("gen", "Gt", {"5"})})), false},
      {"Gt compares numbers, not text", labelled,
       MakePod("p").RequiredNodeTerm(Expr({Req("gen", "Gt", {"10"})})), false},
      {"Lt", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("gen", "Lt", {"10"})})), true},
      {"Lt on a non-number", labelled,
       MakePod("p").RequiredNodeTerm(Expr({Req("pool", "Lt", {"10"})})), false},
      {"unknown operator", labelled, MakePod("p").RequiredNodeTerm(Expr({Req("pool", "Like")})),
       false},
      {"requirements are ANDed", labelled,
       MakePod("p").RequiredNodeTerm(Expr({Req("pool", "In", {"a"}), Req("gen", "In", {"4"})})),
       false},
      {"terms are ORed", labelled,
       MakePod("p")
           .RequiredNodeTerm(Expr({Req("pool", "In", {"b"})}))
           .RequiredNodeTerm(Expr({Req("gen", "In", {"5"})})),
       true},
      {"empty term matches nothing", labelled, MakePod("p").RequiredNodeTerm({}), false},
      {"matchFields metadata.name", labelled,
       MakePod("p").RequiredNodeTerm({.match_fields = {Req("metadata.name", "In", {"n1"})}}), true},
      {"matchFields other name", labelled,
       MakePod("p").RequiredNodeTerm({.match_fields = {Req("metadata.name", "In", {"n2"})}}),
       false},
      {"NoSchedule taint untolerated", tainted, MakePod("p"), false},
      {"NoExecute taint untolerated", MakeNode("n1").Taint("k", "v", "NoExecute"), MakePod("p"),
       false},
      {"PreferNoSchedule is not a filter", MakeNode("n1").Taint("k", "v", "PreferNoSchedule"),
       MakePod("p"), true},
      {"Equal toleration", tainted, MakePod("p").Tolerate(tol_gpu), true},
      {"Equal toleration, other value", tainted,
       MakePod("p").Tolerate({.key = "gpu", .value = "false", .effect = "NoSchedule"}), false},
      {"Exists ignores the value", tainted,
       MakePod("p").Tolerate({.key = "gpu", .op = "Exists", .effect = "NoSchedule"}), true},
      {"empty key with Exists tolerates everything", tainted,
       MakePod("p").Tolerate({.op = "Exists"}), true},
      {"empty effect matches every effect", tainted,
       MakePod("p").Tolerate({.key = "gpu", .value = "true"}), true},
      {"other effect does not tolerate", tainted,
       MakePod("p").Tolerate({.key = "gpu", .value = "true", .effect = "NoExecute"}), false},
      {"other key does not tolerate", tainted,
       MakePod("p").Tolerate({.key = "fpga", .op = "Exists"}), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    NodeView view{.node = std::make_shared<const Node>(c.node), .schedulable = c.schedulable};
    EXPECT_EQ(NodeAdmits(view, c.pod), c.want);
  }
}

// ---------------------------------------------------------------------------
// PlanGang.

struct PlanCase {
  std::string name;
  std::vector<Node> nodes;
  Gang gang;
  std::map<std::string, std::string> want_reserve;  // pod -> node, for a plan
  std::string_view want_reason = "";                // a Wait when set
  std::string want_message = "";
  int32_t want_placeable = 0;
  std::vector<Gang> others = {};  // holding capacity (bound members)
};

// One task of `replicas` pods asking `memory` each, the PodGroup Volcano's
// Job controller writes for it: minTaskMember = replicas.
Gang ElasticGang(int32_t min_member, int32_t replicas, std::string_view memory) {
  GangBuilder gang = MakeGang("g").MinMember(min_member).MinTaskMember("worker", replicas);
  for (int32_t i = 0; i < replicas; ++i) {
    gang.Pending(TaskPod(i < 10 ? "w-0" + std::to_string(i) : "w-" + std::to_string(i), "worker")
                     .Memory(memory));
  }
  return gang;
}
// w-00, w-01, ... filling `per_node` on each node in turn.
std::map<std::string, std::string> ElasticReserve(const std::vector<std::string>& nodes,
                                                  int per_node) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < nodes.size() * per_node; ++i) {
    out[(i < 10 ? "w-0" : "w-") + std::to_string(i)] = nodes[i / per_node];
  }
  return out;
}

std::vector<PlanCase> PlanCases() {
  const Toleration tol_gpu{.key = "gpu", .op = "Exists"};
  return {
      {.name = "exact fit: 8 members x 4 GPUs fill 4 nodes x 8 GPUs",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8), GpuNode("n4", 8)},
       .gang = MakeGang("g")
                   .MinMember(8)
                   .Pending(Worker("w-0", 4))
                   .Pending(Worker("w-1", 4))
                   .Pending(Worker("w-2", 4))
                   .Pending(Worker("w-3", 4))
                   .Pending(Worker("w-4", 4))
                   .Pending(Worker("w-5", 4))
                   .Pending(Worker("w-6", 4))
                   .Pending(Worker("w-7", 4)),
       .want_reserve = {{"w-0", "n1"},
                        {"w-1", "n1"},
                        {"w-2", "n2"},
                        {"w-3", "n2"},
                        {"w-4", "n3"},
                        {"w-5", "n3"},
                        {"w-6", "n4"},
                        {"w-7", "n4"}}},
      {.name = "largest member first: the 8-GPU one gets a whole node",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g").MinMember(2).Pending(Worker("a", 1)).Pending(Worker("b", 8)),
       .want_reserve = {{"a", "n2"}, {"b", "n1"}}},
      {.name = "elastic: minMember 2 of 4, the extras that fit are placed too",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 4)},
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Pending(Worker("w-0", 4))
                   .Pending(Worker("w-1", 4))
                   .Pending(Worker("w-2", 4))
                   .Pending(Worker("w-3", 4)),
       // Best fit puts the first on the 4-GPU node, whole nodes stay whole.
       .want_reserve = {{"w-0", "n2"}, {"w-1", "n1"}, {"w-2", "n1"}}},
      {.name = "elastic: the minimum fits, no extra does",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(1)
                   .Pending(Worker("w-0", 8))
                   .Pending(Worker("w-1", 8))
                   .Pending(Worker("w-2", 8)),
       .want_reserve = {{"w-0", "n1"}}},
      {.name = "the minimum is met with the smallest members, the big one is an extra",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Pending(Worker("a-0", 1))
                   .Pending(Worker("a-1", 1))
                   .Pending(Worker("a-2", 1))
                   .Pending(Worker("a-3", 1))
                   .Pending(Worker("b", 8)),
       .want_reserve = {{"a-0", "n1"}, {"a-1", "n1"}, {"a-2", "n1"}, {"a-3", "n1"}}},
      {.name = "a picked member that fits nowhere is stood in for by another of its task",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(1)
                   .MinTaskMember("worker", 1)
                   .Pending(TaskPod("w-0", "worker").Gpu(1).NodeSelector("pool", "none"))
                   .Pending(TaskPod("w-1", "worker").Gpu(2))
                   .Pending(TaskPod("x-0", "other").Gpu(1)),
       .want_reserve = {{"w-1", "n1"}, {"x-0", "n1"}}},
      {.name = "minTaskMember: 1 cpu-only ps and 4 workers x 8 GPUs",
       .nodes = {CpuNode("c1"), GpuNode("g1", 8), GpuNode("g2", 8), GpuNode("g3", 8),
                 GpuNode("g4", 8)},
       .gang = MakeGang("g")
                   .MinMember(5)
                   .MinTaskMember("ps", 1)
                   .MinTaskMember("worker", 4)
                   .Pending(TaskPod("ps-0", "ps").Cpu("8"))
                   .Pending(TaskPod("worker-0", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-1", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-2", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-3", "worker").Cpu("4").Gpu(8)),
       // The ps packs next to the workers (a node the gang uses) rather than
       // on the cpu node.
       .want_reserve = {{"ps-0", "g1"},
                        {"worker-0", "g1"},
                        {"worker-1", "g2"},
                        {"worker-2", "g3"},
                        {"worker-3", "g4"}}},
      // Task minimums bind only when minMember covers their sum (Volcano:
      // pkg/scheduler/api/job_info.go, CheckTaskValid/CheckTaskReady).
      {.name = "minTaskMember binds when minMember covers it: the ps is no stand-in for a worker",
       .nodes = {GpuNode("g1", 8), GpuNode("g2", 8), GpuNode("g3", 8), GpuNode("g4", 8)},
       .gang = MakeGang("g")
                   .MinMember(4)
                   .MinTaskMember("worker", 4)
                   .Pending(TaskPod("ps-0", "ps").Cpu("8"))
                   .Pending(TaskPod("worker-0", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-1", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-2", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-3", "worker").Cpu("4").Gpu(8)),
       .want_reason = kWaitResources,
       .want_message = "3/4 members placeable: 1 need nvidia.com/gpu=8, largest free is 4 once "
                       "the other 3 are placed",
       .want_placeable = 3,
       .others = {MakeGang("other").Bound(Worker("o-0", 4), "g4")}},
      {.name = "minTaskMember above minMember does not bind: the gang runs what fits",
       .nodes = {GpuNode("g1", 8), GpuNode("g2", 8), GpuNode("g3", 8), GpuNode("g4", 8)},
       .gang = MakeGang("g")
                   .MinMember(3)
                   .MinTaskMember("ps", 1)
                   .MinTaskMember("worker", 4)
                   .Pending(TaskPod("ps-0", "ps").Cpu("8"))
                   .Pending(TaskPod("worker-0", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-1", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-2", "worker").Cpu("4").Gpu(8))
                   .Pending(TaskPod("worker-3", "worker").Cpu("4").Gpu(8)),
       .want_reserve = {{"ps-0", "g1"}, {"worker-0", "g1"}, {"worker-1", "g2"}, {"worker-2", "g3"}},
       .others = {MakeGang("other").Bound(Worker("o-0", 4), "g4")}},
      {.name = "elastic Job larger than the cluster: minAvailable 1, 20 replicas, 9 fit",
       .nodes = {MakeNode("m1").Cpu("16").Memory("12Gi").Pods(110),
                 MakeNode("m2").Cpu("16").Memory("12Gi").Pods(110),
                 MakeNode("m3").Cpu("16").Memory("12Gi").Pods(110)},
       .gang = ElasticGang(/*min_member=*/1, /*replicas=*/20, "4Gi"),
       .want_reserve = ElasticReserve({"m1", "m2", "m3"}, 3)},
      {.name = "a dependsOn chain: later tasks' pods do not exist yet, minMember 1 is met",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(1)
                   .MinTaskMember("stage1", 1)
                   .MinTaskMember("stage2", 5)
                   .MinTaskMember("stage3", 5)
                   .Pending(TaskPod("stage1-0", "stage1").Cpu("1")),
       .want_reserve = {{"stage1-0", "n1"}}},
      {.name = "minMember at the tasks' sum: a task with missing pods waits",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(2)
                   .MinTaskMember("stage1", 1)
                   .MinTaskMember("stage2", 1)
                   .Pending(TaskPod("stage1-0", "stage1").Cpu("1"))
                   .Pending(TaskPod("stage1-1", "stage1").Cpu("1")),
       .want_reason = kWaitMembers,
       .want_message = "task stage2: 0/1 members exist: waiting for 1 more pod"},
      {.name = "cpu-only member goes where no GPU is left idle",
       .nodes = {CpuNode("c1"), GpuNode("g1", 8)},
       .gang = MakeGang("g").Pending(MakePod("p").Cpu("2")),
       .want_reserve = {{"p", "c1"}}},
      {.name = "member larger than any node never fits",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g").Pending(Worker("big", 16)),
       .want_reason = kWaitNeverFits,
       .want_message =
           "0/1 members placeable on an empty cluster: 1 need nvidia.com/gpu=16, largest "
           "allocatable is 8"},
      {.name = "gang larger than the cluster never fits",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g")
                   .MinMember(3)
                   .Pending(Worker("w-0", 8))
                   .Pending(Worker("w-1", 8))
                   .Pending(Worker("w-2", 8)),
       .want_reason = kWaitNeverFits,
       .want_message =
           "2/3 members placeable on an empty cluster: 1 need nvidia.com/gpu=8, largest "
           "allocatable is 0 once the other 2 are placed",
       .want_placeable = 2},
      {.name = "waits for capacity others hold",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g").MinMember(2).Pending(Worker("w-0", 8)).Pending(Worker("w-1", 8)),
       .want_reason = kWaitResources,
       .want_message = "1/2 members placeable: 1 need nvidia.com/gpu=8, largest free is 2 once "
                       "the other member is placed",
       .want_placeable = 1,
       .others = {MakeGang("other").Bound(Worker("o-0", 6), "n2")}},
      {.name = "cpu is the blocking resource",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g").Pending(MakePod("p").Cpu("100")),
       .want_reason = kWaitNeverFits,
       .want_message =
           "0/1 members placeable on an empty cluster: 1 need cpu=100, largest allocatable is 64"},
      {.name = "a full pod count blocks",
       .nodes = {MakeNode("n1").Cpu("8").Pods(1)},
       .gang = MakeGang("g").Pending(MakePod("p").Cpu("1")),
       .want_reason = kWaitResources,
       .want_message = "0/1 members placeable: 1 need pods=1, largest free is 0",
       .others = {MakeGang("other").Bound(MakePod("o").Cpu("1"), "n1")}},
      {.name = "hints win over packing and best fit",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Pending(Worker("w-0", 4), "n2")
                   .Pending(Worker("w-1", 4), "n1"),
       .want_reserve = {{"w-0", "n2"}, {"w-1", "n1"}}},
      {.name = "a hint that does not fit is ignored",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g").Pending(Worker("w-0", 8), "n1"),
       .want_reserve = {{"w-0", "n2"}},
       .others = {MakeGang("other").Bound(Worker("o-0", 4), "n1")}},
      {.name = "untolerated taint excludes a node",
       .nodes = {MakeNode("n1").Gpu(8).Cpu("64").Pods(110).Taint("gpu", "true"), GpuNode("n2", 8)},
       .gang = MakeGang("g").Pending(Worker("w-0", 8)),
       .want_reserve = {{"w-0", "n2"}}},
      {.name = "tolerated taint admits the node",
       .nodes = {MakeNode("n1").Gpu(8).Cpu("64").Pods(110).Taint("gpu", "true"), GpuNode("n2", 8)},
       .gang = MakeGang("g").Pending(Worker("w-0", 8).Tolerate(tol_gpu)),
       .want_reserve = {{"w-0", "n1"}}},
      {.name = "nodeSelector excludes a node",
       .nodes = {MakeNode("n1").Gpu(8).Cpu("64").Pods(110).Label("pool", "a"),
                 MakeNode("n2").Gpu(8).Cpu("64").Pods(110).Label("pool", "b")},
       .gang = MakeGang("g").Pending(Worker("w-0", 8).NodeSelector("pool", "b")),
       .want_reserve = {{"w-0", "n2"}}},
      {.name = "cordoned and NotReady nodes are excluded",
       .nodes = {MakeNode("n1").Gpu(8).Cpu("64").Pods(110).Unschedulable(),
                 MakeNode("n2").Gpu(8).Cpu("64").Pods(110).Ready(false), GpuNode("n3", 8)},
       .gang = MakeGang("g").Pending(Worker("w-0", 8)),
       .want_reserve = {{"w-0", "n3"}}},
      {.name = "no node admits the member",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g").Pending(Worker("w-0", 8).NodeSelector("pool", "z")),
       .want_reason = kWaitNeverFits,
       .want_message = "0/1 members placeable on an empty cluster: 1 fit no node's selector, "
                       "affinity or taints"},
      {.name = "bound members count towards the minimum",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g")
                   .MinMember(4)
                   .Bound(Worker("w-0", 4), "n1")
                   .Bound(Worker("w-1", 4), "n1")
                   .Pending(Worker("w-2", 4))
                   .Pending(Worker("w-3", 4)),
       .want_reserve = {{"w-2", "n2"}, {"w-3", "n2"}}},
      {.name = "reserved and finished members count towards the minimum",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(3)
                   .Reserved(Worker("w-0", 4), "n1")
                   .Succeeded(Worker("w-1", 4), "n1")
                   .Pending(Worker("w-2", 4)),
       .want_reserve = {{"w-2", "n1"}}},
      {.name = "packs next to the gang's bound member over a tighter fit elsewhere",
       .nodes = {GpuNode("n1", 8), GpuNode("n2", 8)},
       .gang = MakeGang("g").MinMember(2).Bound(Worker("w-0", 2), "n2").Pending(Worker("w-1", 4)),
       .want_reserve = {{"w-1", "n2"}},
       .others = {MakeGang("other").Bound(Worker("o-0", 4), "n1")}},
      {.name = "fewer pods than minMember",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(8)
                   .Pending(Worker("w-0", 1))
                   .Pending(Worker("w-1", 1))
                   .Pending(Worker("w-2", 1)),
       .want_reason = kWaitMembers,
       .want_message = "3/8 members exist: waiting for 5 more pods"},
      {.name = "a task with fewer pods than its minTaskMember",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(3)
                   .MinTaskMember("worker", 3)
                   .Pending(TaskPod("w-0", "worker"))
                   .Pending(TaskPod("w-1", "worker"))
                   .Pending(TaskPod("x-0", "other")),
       .want_reason = kWaitMembers,
       .want_message = "task worker: 2/3 members exist: waiting for 1 more pod"},
      {.name = "terminating pods do not count as members",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Bound(Worker("w-0", 1), "n1")
                   .Add(Worker("w-1", 1), MemberState::kPending, "", "", /*terminating=*/true),
       .want_reason = kWaitMembers,
       .want_message = "1/2 members exist: waiting for 1 more pod",
       .want_placeable = 1},
      {.name = "nothing left to place",
       .nodes = {GpuNode("n1", 8)},
       .gang = MakeGang("g").MinMember(1).Bound(Worker("w-0", 8), "n1"),
       .want_reserve = {}},
  };
}

TEST(PlanGangTest, Table) {
  for (const PlanCase& c : PlanCases()) {
    SCOPED_TRACE(c.name);
    std::vector<Gang> holders = c.others;
    holders.push_back(c.gang);
    const std::variant<GangPlan, Wait> got = PlanGang(c.gang, MakeView(c.nodes, holders));
    if (c.want_reason.empty()) {
      ASSERT_TRUE(std::holds_alternative<GangPlan>(got)) << std::get<Wait>(got).message;
      EXPECT_EQ(std::get<GangPlan>(got).key, c.gang.key);
      EXPECT_EQ(ByPod(std::get<GangPlan>(got).reserve), c.want_reserve);
    } else {
      ASSERT_TRUE(std::holds_alternative<Wait>(got));
      const Wait& wait = std::get<Wait>(got);
      EXPECT_EQ(wait.key, c.gang.key);
      EXPECT_EQ(wait.reason, c.want_reason);
      EXPECT_EQ(wait.message, c.want_message);
      EXPECT_EQ(wait.placeable, c.want_placeable);
    }
  }
}

TEST(PlanGangTest, PlacementListsBoundReservedAndNewButNotFinished) {
  const Gang gang = MakeGang("g")
                        .MinMember(3)
                        .Bound(Worker("w-1", 2), "n1")
                        .Reserved(Worker("w-3", 2), "n1")
                        .Succeeded(Worker("w-0", 2), "n1")
                        .Pending(Worker("w-2", 2));
  const auto got = PlanGang(gang, MakeView({GpuNode("n1", 8)}, {gang}));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(got));
  const GangPlan& plan = std::get<GangPlan>(got);
  EXPECT_THAT(plan.reserve, ElementsAre(Assignment{"uid-w-2", "w-2", "n1"}));
  EXPECT_THAT(plan.placement,
              ElementsAre(Assignment{"uid-w-1", "w-1", "n1"}, Assignment{"uid-w-2", "w-2", "n1"},
                          Assignment{"uid-w-3", "w-3", "n1"}));
}

TEST(PlanGangTest, DoesNotChangeTheView) {
  const Gang gang = MakeGang("g").Pending(Worker("w-0", 8));
  const ClusterView view = MakeView({GpuNode("n1", 8)});
  const ClusterView copy = view;
  ASSERT_TRUE(std::holds_alternative<GangPlan>(PlanGang(gang, view)));
  EXPECT_EQ(view.nodes[0].free, copy.nodes[0].free);
}

// ---------------------------------------------------------------------------
// GangOrder.

TEST(GangOrderTest, QueueRankThenPriorityThenAgeThenKey) {
  Gang base = MakeGang("b");
  Gang high = base;
  high.priority = 1;
  Gang ranked = base;
  ranked.queue_rank = -1;
  Gang older = base;
  older.created = base.created - std::chrono::seconds(1);
  Gang key_a = MakeGang("a");
  EXPECT_TRUE(GangOrder(high, base));
  EXPECT_FALSE(GangOrder(base, high));
  EXPECT_TRUE(GangOrder(ranked, base));
  EXPECT_TRUE(GangOrder(older, base));
  EXPECT_TRUE(GangOrder(key_a, base));
  EXPECT_FALSE(GangOrder(base, base));
  // Priority dominates age; the queue rank (fair share) dominates both.
  EXPECT_TRUE(GangOrder(high, older));
  older.queue_rank = -5;
  EXPECT_TRUE(GangOrder(older, high));
}

TEST(MemberTest, TaskFromAnnotationThenLabel) {
  const auto member = [](Pod pod) { return Member::Of(std::make_shared<const Pod>(pod)); };
  EXPECT_EQ(member(MakePod("p")).Task(), "");
  EXPECT_EQ(member(MakePod("p").Label(kTaskSpecKey, "ps")).Task(), "ps");
  EXPECT_EQ(member(MakePod("p").Label(kTaskSpecKey, "ps").Annotation(kTaskSpecKey, "w")).Task(),
            "w");
}

TEST(MemberTest, StateNames) {
  EXPECT_EQ(MemberStateName(MemberState::kPending), "Pending");
  EXPECT_EQ(MemberStateName(MemberState::kReserved), "Reserved");
  EXPECT_EQ(MemberStateName(MemberState::kBound), "Bound");
  EXPECT_EQ(MemberStateName(MemberState::kSucceeded), "Succeeded");
  EXPECT_EQ(MemberStateName(MemberState::kFailed), "Failed");
}

// What a pass reads of a gang's members without walking them: the counts
// behind its PodGroup status and the requests behind its queue's share.
TEST(MemberSummaryTest, CountsAndSumsTheMembersByState) {
  const auto cpu = [](const std::string& n) { return MakePod(n).Cpu(n == "big" ? "8" : "1"); };
  Pod pending_phase = cpu("bound-not-running");
  pending_phase.status.phase = "Pending";
  struct Case {
    std::string name;
    Gang gang;
    MemberSummary want;
  };
  const std::vector<Case> cases = {
      {"no members", MakeGang("g"), {}},
      {"one per state",
       MakeGang("g")
           .Pending(cpu("p"))
           .Reserved(cpu("r"), "n1")
           .Bound(cpu("big"), "n1")
           .Succeeded(cpu("s"), "n1")
           .Failed(cpu("f"), "n1"),
       {.pending = 1,
        .awaiting = 1,
        .reserved = 1,
        .bound = 1,
        .running = 1,
        .succeeded = 1,
        .failed = 1,
        .pending_request = Res({{"cpu", "1"}}),
        .reserved_request = Res({{"cpu", "1"}}),
        .bound_request = Res({{"cpu", "8"}})}},
      {"a bound pod not yet Running is bound, not running",
       MakeGang("g").Add(pending_phase, MemberState::kBound, "n1"),
       {.bound = 1, .bound_request = Res({{"cpu", "1"}})}},
      {"terminating: a bound one is leaving, others request nothing",
       MakeGang("g")
           .Add(cpu("big"), MemberState::kBound, "n1", "", /*terminating=*/true)
           .Add(cpu("p"), MemberState::kPending, "", "", /*terminating=*/true)
           .Add(cpu("r"), MemberState::kReserved, "n1", "", /*terminating=*/true),
       {.pending = 1, .reserved = 1, .bound = 1, .leaving_request = Res({{"cpu", "8"}})}},
      {"pod slots left out of the sums",
       MakeGang("g").Pending(MakePod("p").Cpu("1").Request(kPods, "1")),
       {.pending = 1, .awaiting = 1, .pending_request = Res({{"cpu", "1"}})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const MemberSummary& got = c.gang.members.summary();
    EXPECT_EQ(got.pending, c.want.pending);
    EXPECT_EQ(got.awaiting, c.want.awaiting);
    EXPECT_EQ(got.reserved, c.want.reserved);
    EXPECT_EQ(got.bound, c.want.bound);
    EXPECT_EQ(got.running, c.want.running);
    EXPECT_EQ(got.succeeded, c.want.succeeded);
    EXPECT_EQ(got.failed, c.want.failed);
    EXPECT_EQ(got.pending_request, c.want.pending_request);
    EXPECT_EQ(got.reserved_request, c.want.reserved_request);
    EXPECT_EQ(got.bound_request, c.want.bound_request);
    EXPECT_EQ(got.leaving_request, c.want.leaving_request);
  }
}

TEST(MemberSummaryTest, FollowsEveryChangeOfTheMembers) {
  Gang gang = MakeGang("g").Pending(Worker("w-0", 1)).Pending(Worker("w-1", 1));
  const Gang before = gang;
  gang.members.Edit()[0].state = MemberState::kReserved;
  EXPECT_EQ(gang.members.summary().reserved, 1);
  EXPECT_EQ(gang.members.summary().awaiting, 1);
  for (Member& m : gang.members.Edit()) m.state = MemberState::kBound;
  EXPECT_EQ(gang.members.summary().bound, 2);
  EXPECT_EQ(gang.members.summary().bound_request, Res({{"cpu", "8"}, {"nvidia.com/gpu", "2"}}));
  std::erase_if(*gang.members.Edit(), [](const Member& m) { return m.pod->meta.name == "w-1"; });
  EXPECT_EQ(gang.members.summary().bound, 1);
  EXPECT_EQ(before.members.summary().pending, 2) << "a copy keeps its own members' summary";
}

// ---------------------------------------------------------------------------
// RunPass.

Gang WholeNodes(const std::string& name, int n, int32_t priority, int64_t created_s) {
  GangBuilder b =
      MakeGang(name).MinMember(n).Priority(priority).Created(Time::FromUnixSeconds(created_s));
  for (int i = 0; i < n; ++i) b.Pending(Worker(name + "-" + std::to_string(i), 8));
  return b;
}

Gang Preempting(Gang gang) {
  gang.preempting = true;
  return gang;
}

std::vector<std::string> Keys(const std::vector<GangPlan>& plans) {
  std::vector<std::string> out;
  for (const GangPlan& p : plans) out.push_back(p.key);
  return out;
}
std::vector<std::string> Keys(const std::vector<Wait>& waits) {
  std::vector<std::string> out;
  for (const Wait& w : waits) out.push_back(w.key);
  return out;
}

TEST(RunPassTest, TwoGangsNeedingTheWholeClusterNeverBothHoldPart) {
  const ClusterView view = MakeView({GpuNode("n1", 8), GpuNode("n2", 8)});
  struct Case {
    std::string name;
    Gang a, b;
    std::string want_planned;
  };
  const std::vector<Case> cases = {
      {"older first", WholeNodes("a", 2, 0, 10), WholeNodes("b", 2, 0, 5), "default/b"},
      {"priority before age", WholeNodes("a", 2, 1, 10), WholeNodes("b", 2, 0, 5), "default/a"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PassResult r = RunPass(view, {c.a, c.b}, {}, kNow, PassConfig{});
    EXPECT_THAT(Keys(r.plans), ElementsAre(c.want_planned));
    ASSERT_EQ(r.plans[0].reserve.size(), 2u);
    ASSERT_EQ(r.waits.size(), 1u);
    EXPECT_NE(r.waits[0].key, c.want_planned);
    EXPECT_EQ(r.waits[0].reason, kWaitResources);
    EXPECT_FALSE(r.preemption.has_value());  // equal or lower priority, and no victims
  }
}

TEST(RunPassTest, LaterGangsPlanOnWhatEarlierOnesLeft) {
  const ClusterView view = MakeView({GpuNode("n1", 8), GpuNode("n2", 8)});
  const PassResult r =
      RunPass(view, {WholeNodes("a", 1, 0, 1), WholeNodes("b", 1, 0, 2), WholeNodes("c", 1, 0, 3)},
              {}, kNow, PassConfig{});
  EXPECT_THAT(Keys(r.plans), ElementsAre("default/a", "default/b"));
  EXPECT_EQ(r.plans[0].reserve[0].node, "n1");
  EXPECT_EQ(r.plans[1].reserve[0].node, "n2");
  EXPECT_THAT(Keys(r.waits), ElementsAre("default/c"));
}

// The starvation bound: a big gang that has waited past head_of_line_after
// gets the nodes nearest to free kept for it; the gangs behind it backfill
// only elsewhere.
TEST(RunPassTest, HeadOfTheLineKeepsNodesDrainingForABigGang) {
  // n1 and n2 each run a 4-GPU pod; n3 runs 6 GPUs.
  const Gang running = MakeGang("running")
                           .MinMember(3)
                           .Bound(Worker("r-0", 4), "n1")
                           .Bound(Worker("r-1", 4), "n2")
                           .Bound(Worker("r-2", 6), "n3");
  const ClusterView view =
      MakeView({GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8)}, {running});
  const Time created = kNow - std::chrono::seconds(60);
  const Gang big = WholeNodes("big", 2, 0, created.unix_micros() / 1000000);
  auto small = [&](const std::string& name, int64_t gpus) {
    return Gang(
        MakeGang(name).Created(kNow - std::chrono::seconds(1)).Pending(Worker(name + "-0", gpus)));
  };
  struct Case {
    std::string name;
    Duration bound;
    Gang behind;
    std::vector<std::string> want_planned;
    std::string want_head;
    std::vector<std::string> want_earmarked;
  };
  const std::vector<Case> cases = {
      {"bound not reached: the small gang backfills n1",
       std::chrono::seconds(120),
       small("s", 4),
       {"default/s"},
       "",
       {}},
      {"head: n1 and n2 drain for big, a 4-GPU gang waits",
       std::chrono::seconds(10),
       small("s", 4),
       {},
       "default/big",
       {"n1", "n2"}},
      {"head: a 2-GPU gang still backfills on n3",
       std::chrono::seconds(10),
       small("t", 2),
       {"default/t"},
       "default/big",
       {"n1", "n2"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PassConfig config;
    config.head_of_line_after = c.bound;
    const PassResult r = RunPass(view, {running, big, c.behind}, {}, kNow, config);
    EXPECT_EQ(Keys(r.plans), c.want_planned);
    EXPECT_EQ(r.head, c.want_head);
    EXPECT_EQ(r.earmarked, c.want_earmarked);
    if (!c.want_planned.empty() && !c.want_earmarked.empty()) {
      EXPECT_EQ(r.plans[0].reserve[0].node, "n3");
    }
  }
}

TEST(RunPassTest, ElasticGangAtItsMinimumGetsNoWait) {
  const Gang g = MakeGang("g").MinMember(1).Bound(Worker("w-0", 8), "n1").Pending(Worker("w-1", 8));
  const PassResult r = RunPass(MakeView({GpuNode("n1", 8)}, {g}), {g}, {}, kNow, PassConfig{});
  EXPECT_TRUE(r.plans.empty());
  EXPECT_TRUE(r.waits.empty());
}

TEST(RunPassTest, ExpiryReleasesTheReservationAndReplans) {
  const std::vector<Node> nodes = {GpuNode("n1", 8), GpuNode("n2", 8)};
  const auto reserved = [](Time since) {
    return MakeGang("stale")
        .MinMember(2)
        .Created(Time::FromUnixSeconds(1))
        .Reserved(Worker("s-0", 8), "n1")
        .Reserved(Worker("s-1", 8), "n2")
        .ReservedSince(since)
        .Build();
  };
  const Gang urgent = WholeNodes("urgent", 2, 10, 50);
  PassConfig config;
  config.preemption = false;

  {
    SCOPED_TRACE("before the timeout the reservation holds");
    const Gang stale = reserved(kNow - std::chrono::seconds(59));
    const PassResult r = RunPass(MakeView(nodes, {stale}), {stale, urgent}, {}, kNow, config);
    EXPECT_TRUE(r.expired.empty());
    EXPECT_TRUE(r.plans.empty());
    EXPECT_THAT(Keys(r.waits), ElementsAre("default/urgent"));
  }
  {
    SCOPED_TRACE("at the timeout it goes, and the higher priority gang takes the capacity");
    const Gang stale = reserved(kNow - std::chrono::seconds(60));
    const PassResult r = RunPass(MakeView(nodes, {stale}), {stale, urgent}, {}, kNow, config);
    EXPECT_THAT(r.expired, ElementsAre("default/stale"));
    EXPECT_THAT(Keys(r.plans), ElementsAre("default/urgent"));
    EXPECT_TRUE(r.waits.empty());  // the expired gang sits the pass out
  }
  {
    SCOPED_TRACE("the released capacity goes to a gang behind the expired one");
    const Gang stale = reserved(kNow - std::chrono::seconds(600));
    const Gang younger = WholeNodes("younger", 2, 0, 500);
    const PassResult r = RunPass(MakeView(nodes, {stale}), {stale, younger}, {}, kNow, config);
    EXPECT_THAT(r.expired, ElementsAre("default/stale"));
    EXPECT_THAT(Keys(r.plans), ElementsAre("default/younger"));
  }
  {
    SCOPED_TRACE("on the next pass the expired gang is planned again");
    const Gang pending = MakeGang("stale")
                             .MinMember(2)
                             .Pending(Worker("s-0", 8), "n2")
                             .Pending(Worker("s-1", 8), "n1");
    const PassResult r = RunPass(MakeView(nodes), {pending}, {}, kNow, config);
    EXPECT_TRUE(r.expired.empty());
    ASSERT_THAT(Keys(r.plans), ElementsAre("default/stale"));
    EXPECT_EQ(ByPod(r.plans[0].reserve),
              (std::map<std::string, std::string>{{"s-0", "n2"}, {"s-1", "n1"}}));
  }
  {
    SCOPED_TRACE("bound members stay; only unclaimed reservations expire");
    const Gang partly = MakeGang("partly")
                            .MinMember(2)
                            .Bound(Worker("p-0", 8), "n1")
                            .Reserved(Worker("p-1", 8), "n2")
                            .ReservedSince(kNow - std::chrono::seconds(61));
    const Gang other = WholeNodes("other", 1, 0, 500);
    const PassResult r = RunPass(MakeView(nodes, {partly}), {partly, other}, {}, kNow, config);
    EXPECT_THAT(r.expired, ElementsAre("default/partly"));
    ASSERT_THAT(Keys(r.plans), ElementsAre("default/other"));
    EXPECT_EQ(ByPod(r.plans[0].reserve), (std::map<std::string, std::string>{{"other-0", "n2"}}));
  }
}

TEST(RunPassTest, Admission) {
  const ClusterView view = MakeView({GpuNode("n1", 8), GpuNode("n2", 8)});
  const auto gpus = [](int64_t n) {
    return Resources{{std::string(kNvidiaGpu), n * kMilliPerGpu}};
  };
  struct Case {
    std::string name;
    std::vector<Gang> gangs;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"no minResources is admitted at once", {MakeGang("a")}, {"default/a"}},
      {"each admitted gang uses up the budget; a smaller later one still fits",
       {MakeGang("a").MinResources(gpus(8)).Created(Time::FromUnixSeconds(1)),
        MakeGang("b").MinResources(gpus(16)).Created(Time::FromUnixSeconds(2)),
        MakeGang("c").MinResources(gpus(8)).Created(Time::FromUnixSeconds(3))},
       {"default/a", "default/c"}},
      {"an Inqueue gang without a reservation counts against later ones",
       {MakeGang("q").Phase(kPodGroupInqueue).MinResources(gpus(12)).Priority(1),
        MakeGang("a").MinResources(gpus(8))},
       {}},
      {"gangs holding capacity are admitted already and cost nothing more",
       {MakeGang("r").MinMember(1).MinResources(gpus(16)).Bound(Worker("r-0", 8), "n1"),
        MakeGang("a").MinResources(gpus(8))},
       {"default/a"}},
      {"Volcano's quota names: requests.* counts, count/* and limits.* do not",
       {MakeGang("a").MinResources(Resources{{"requests.nvidia.com/gpu", 16000},
                                             {"count/pods", 100},
                                             {"limits.nvidia.com/gpu", 99000}})},
       {"default/a"}},
      {"a resource the cluster lacks is never admitted",
       {MakeGang("a").MinResources(Resources{{"example.com/fpga", 1}})},
       {}},
      {"Pending phase is not admitted yet; Inqueue is, and not listed",
       {MakeGang("p").Phase(kPodGroupPending), MakeGang("i").Phase(kPodGroupInqueue)},
       {"default/p"}},
      // A Job's PodGroup outlives its pods' end (until the Job is deleted):
      // thousands of finished Jobs must not use up the admission budget.
      {"a Completed gang holds nothing any more",
       {MakeGang("done")
            .Phase(kPodGroupCompleted)
            .MinMember(1)
            .MinResources(gpus(16))
            .Succeeded(Worker("done-0", 8), "n1")
            .Priority(1),
        MakeGang("a").MinResources(gpus(8))},
       {"default/a"}},
      {"nor does a gang whose members all ended, its status not written yet",
       {MakeGang("ended")
            .Phase(kPodGroupRunning)
            .MinMember(2)
            .MinResources(gpus(16))
            .Succeeded(Worker("ended-0", 8), "n1")
            .Failed(Worker("ended-1", 8), "n2")
            .Priority(1),
        MakeGang("a").MinResources(gpus(8))},
       {"default/a"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(RunPass(view, c.gangs, {}, kNow, PassConfig{}).admitted, c.want);
  }
}

VictimCandidate Victim(const std::string& key, int32_t priority, int64_t created_s,
                       std::vector<std::pair<std::string, int64_t>> pods /* node, gpus */) {
  VictimCandidate v{.key = key, .priority = priority, .created = Time::FromUnixSeconds(created_s)};
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string name = key + "-" + std::to_string(i);
    v.pods.push_back({.uid = "uid-" + name,
                      .namespace_ = "default",
                      .name = name,
                      .node = pods[i].first,
                      .request = Resources{{std::string(kNvidiaGpu), pods[i].second * kMilliPerGpu},
                                           {std::string(kPods), 1}}});
    v.gpus += pods[i].second * kMilliPerGpu;
  }
  return v;
}

// The view with the victims' capacity taken: what a running cluster shows.
ClusterView Occupied(std::vector<Node> nodes, const std::vector<VictimCandidate>& victims) {
  ClusterView view = MakeView(std::move(nodes));
  for (const VictimCandidate& v : victims) {
    for (const auto& pod : v.pods) {
      for (NodeView& n : view.nodes) {
        if (n.name() == pod.node) n.free -= pod.request;
      }
    }
  }
  return view;
}

std::vector<std::string> PodNames(const Preemption& p) {
  std::vector<std::string> out;
  for (const auto& pod : p.pods) out.push_back(pod.name);
  return out;
}

TEST(RunPassTest, Preemption) {
  const std::vector<Node> four = {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8),
                                  GpuNode("n4", 8)};
  struct Case {
    std::string name;
    std::vector<Gang> gangs;
    std::vector<VictimCandidate> victims;      // all hold capacity in the view
    std::vector<VictimCandidate> others = {};  // hold capacity, not offered as victims
    std::string want_preemptor = "";           // "" for no preemption
    std::vector<std::string> want_victims = {};
    std::vector<std::string> want_pods = {};
  };
  const std::vector<Case> cases = {
      {.name = "the fewest GPUs: an 8-GPU gang over a 16-GPU one",
       .gangs = {WholeNodes("p", 1, 5, 1)},
       .victims = {Victim("big", 1, 1, {{"n1", 8}, {"n2", 8}}), Victim("small", 1, 1, {{"n3", 8}}),
                   Victim("peer", 5, 1, {{"n4", 8}})},
       .want_preemptor = "default/p",
       .want_victims = {"small"},
       .want_pods = {"small-0"}},
      {.name = "whole gangs: every pod of the victim goes",
       .gangs = {WholeNodes("p", 2, 5, 1)},
       .victims = {Victim("big", 1, 1, {{"n1", 8}, {"n2", 8}}),
                   Victim("peer", 5, 1, {{"n3", 8}, {"n4", 8}})},
       .want_preemptor = "default/p",
       .want_victims = {"big"},
       .want_pods = {"big-0", "big-1"}},
      {.name = "equal priority is never a victim",
       .gangs = {WholeNodes("p", 1, 5, 1)},
       .victims = {Victim("peer", 5, 1, {{"n1", 8}, {"n2", 8}, {"n3", 8}, {"n4", 8}})}},
      {.name = "same GPUs: the lowest priority, then the youngest",
       .gangs = {WholeNodes("p", 1, 5, 1)},
       .victims = {Victim("old", 1, 10, {{"n1", 8}}), Victim("young", 1, 20, {{"n2", 8}}),
                   Victim("low", 0, 10, {{"n3", 8}}), Victim("peer", 5, 1, {{"n4", 8}})},
       .want_preemptor = "default/p",
       .want_victims = {"low"},
       .want_pods = {"low-0"}},
      {.name = "same GPUs and priority: the youngest",
       .gangs = {WholeNodes("p", 1, 5, 1)},
       .victims = {Victim("old", 1, 10, {{"n1", 8}}), Victim("young", 1, 20, {{"n2", 8}})},
       .others = {Victim("high", 9, 1, {{"n3", 8}, {"n4", 8}})},
       .want_preemptor = "default/p",
       .want_victims = {"young"},
       .want_pods = {"young-0"}},
      {.name = "minimal: a small victim added first but not needed is spared",
       .gangs = {WholeNodes("p", 1, 5, 1)},
       .victims = {Victim("tiny", 1, 1, {{"n1", 2}}), Victim("whole", 1, 1, {{"n2", 8}})},
       .others = {Victim("high", 9, 1, {{"n1", 6}, {"n3", 8}, {"n4", 8}})},
       .want_preemptor = "default/p",
       .want_victims = {"whole"},
       .want_pods = {"whole-0"}},
      {.name = "none when evicting every candidate is not enough",
       .gangs = {WholeNodes("p", 3, 5, 1)},
       .victims = {Victim("v", 1, 1, {{"n3", 8}})},
       .others = {Victim("high", 9, 1, {{"n1", 8}, {"n2", 8}, {"n4", 8}})}},
      {.name = "a gang already preempting is skipped for the next waiting one",
       .gangs = {Preempting(WholeNodes("p", 1, 5, 1)), WholeNodes("q", 1, 3, 1)},
       .victims = {Victim("v", 1, 1, {{"n1", 8}, {"n2", 8}, {"n3", 8}, {"n4", 8}})},
       .want_preemptor = "default/q",
       .want_victims = {"v"},
       .want_pods = {"v-0", "v-1", "v-2", "v-3"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<VictimCandidate> holders = c.victims;
    holders.insert(holders.end(), c.others.begin(), c.others.end());
    const PassResult r = RunPass(Occupied(four, holders), c.gangs, c.victims, kNow, PassConfig{});
    EXPECT_TRUE(r.plans.empty());  // the preemptor is not reserved in the same pass
    if (c.want_preemptor.empty()) {
      EXPECT_FALSE(r.preemption.has_value());
      continue;
    }
    ASSERT_TRUE(r.preemption.has_value());
    EXPECT_EQ(r.preemption->preemptor, c.want_preemptor);
    EXPECT_EQ(r.preemption->victims, c.want_victims);
    EXPECT_EQ(PodNames(*r.preemption), c.want_pods);
  }
}

TEST(RunPassTest, PreemptionCanBeTurnedOff) {
  const std::vector<VictimCandidate> victims = {Victim("v", 1, 1, {{"n1", 8}})};
  PassConfig config;
  config.preemption = false;
  const PassResult r = RunPass(Occupied({GpuNode("n1", 8)}, victims), {WholeNodes("p", 1, 5, 1)},
                               victims, kNow, config);
  EXPECT_THAT(Keys(r.waits), ElementsAre("default/p"));
  EXPECT_FALSE(r.preemption.has_value());
}

TEST(RunPassTest, NoPreemptionForAGangThatNeverFits) {
  const std::vector<VictimCandidate> victims = {Victim("v", 1, 1, {{"n1", 8}})};
  const PassResult r = RunPass(Occupied({GpuNode("n1", 8)}, victims), {WholeNodes("p", 2, 5, 1)},
                               victims, kNow, PassConfig{});
  ASSERT_EQ(r.waits.size(), 1u);
  EXPECT_EQ(r.waits[0].reason, kWaitNeverFits);
  EXPECT_FALSE(r.preemption.has_value());
}

// ---------------------------------------------------------------------------
// Queues: reclaim and capability (issue #6).

Gang InQueue(Gang gang, const std::string& queue) {
  gang.queues = {queue};
  return gang;
}

VictimCandidate InQueue(VictimCandidate v, const std::string& queue) {
  v.queues = {queue};
  v.holds = Resources{{std::string(kNvidiaGpu), v.gpus}};
  return v;
}

// A queue holding and deserving GPUs. Deserved shares are capped by demand:
// a queue deserving GPUs wants cpu too (plenty), one deserving none nothing.
QueueLimit Holding(int64_t allocated_gpus, int64_t deserved_gpus, bool reclaimable = true) {
  const int64_t cpu = deserved_gpus > 0 ? 1'000'000 : 0;
  return QueueLimit{
      .allocated = Resources{{std::string(kNvidiaGpu), allocated_gpus * kMilliPerGpu}},
      .deserved = Resources{{std::string(kNvidiaGpu), deserved_gpus * kMilliPerGpu}, {"cpu", cpu}},
      .reclaimable = reclaimable};
}

// As Holding, with only `bound_gpus` of the allocation bound (the rest reserved).
QueueLimit HoldingBound(int64_t allocated_gpus, int64_t bound_gpus, int64_t deserved_gpus) {
  QueueLimit limit = Holding(allocated_gpus, deserved_gpus);
  limit.bound = Resources{{std::string(kNvidiaGpu), bound_gpus * kMilliPerGpu}};
  return limit;
}

QueueLimit NotYet(QueueLimit limit) {
  limit.reclaim_allowed = false;
  return limit;
}

QueueLimit Sparing(QueueLimit limit, std::string queue) {
  limit.spare.push_back(std::move(queue));
  return limit;
}

TEST(RunPassTest, Reclaim) {
  const std::vector<Node> four = {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8),
                                  GpuNode("n4", 8)};
  // Queue b runs three 8-GPU gangs, c one; a (the preemptor's) none.
  const std::vector<VictimCandidate> running = {InQueue(Victim("b-old", 1, 10, {{"n1", 8}}), "b"),
                                                InQueue(Victim("b-young", 1, 20, {{"n2", 8}}), "b"),
                                                InQueue(Victim("b-low", 0, 5, {{"n3", 8}}), "b"),
                                                InQueue(Victim("c-only", 0, 30, {{"n4", 8}}), "c")};
  struct Case {
    std::string name;
    Gang preemptor;
    QueueLimits queues;
    std::vector<std::string> want_victims = {};  // empty: no preemption
    std::vector<VictimCandidate> extra = {};     // more candidates (hold no capacity)
  };
  const std::vector<Case> cases = {
      {.name = "an owed queue takes from one above its share: lowest priority first",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(24, 8)}, {"c", Holding(8, 8)}},
       .want_victims = {"b-low"}},
      {.name = "same priority: the youngest",
       .preemptor = InQueue(WholeNodes("p", 2, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(24, 0)}, {"c", Holding(8, 8)}},
       .want_victims = {"b-low", "b-young"}},
      {.name = "never below the victim queue's deserved share",
       .preemptor = InQueue(WholeNodes("p", 2, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(24, 16)}, {"c", Holding(8, 0)}},
       .want_victims = {"c-only", "b-low"}},  // c-only is the younger
      {.name = "not enough can be taken without hurting a deserved share: nothing",
       .preemptor = InQueue(WholeNodes("p", 2, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(24, 16)}, {"c", Holding(8, 8)}}},
      {.name = "a gang bigger than what its queue is owed does not reclaim",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Holding(8, 12)}, {"b", Holding(24, 8)}, {"c", Holding(8, 8)}}},
      {.name = "not while the caller's hysteresis says not yet",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", NotYet(Holding(0, 16))}, {"b", Holding(24, 8)}, {"c", Holding(8, 8)}}},
      {.name = "a queue that reclaimed from this one lately is spared",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Sparing(Holding(0, 16), "b")}, {"b", Holding(24, 8)}, {"c", Holding(8, 0)}},
       .want_victims = {"c-only"}},
      {.name = "a victim queue is judged by what it has bound, not by its reservations",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", HoldingBound(24, 8, 8)}, {"c", Holding(8, 8)}}},
      {.name = "a queue at its deserved share does not reclaim",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Holding(16, 16)}, {"b", Holding(24, 8)}, {"c", Holding(8, 8)}}},
      {.name = "a queue that is not reclaimable keeps what it holds",
       .preemptor = InQueue(WholeNodes("p", 1, 0, 1), "a"),
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(24, 8, false)}, {"c", Holding(8, 8)}}},
      {.name = "priority alone never crosses queues",
       .preemptor = InQueue(WholeNodes("p", 1, 9, 1), "a"),
       .queues = {{"a", Holding(0, 0)}, {"b", Holding(24, 24)}, {"c", Holding(8, 8)}}},
      {.name = "owed capacity comes back before the queue's own lower-priority work goes",
       .preemptor = InQueue(WholeNodes("p", 1, 9, 1), "a"),
       .queues = {{"a", Holding(8, 16)}, {"b", Holding(24, 8)}, {"c", Holding(8, 8)}},
       .want_victims = {"b-low"},
       .extra = {InQueue(Victim("a-low", 1, 1, {{"n1", 8}}), "a")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<VictimCandidate> victims = running;
    victims.insert(victims.end(), c.extra.begin(), c.extra.end());
    const PassResult r =
        RunPass(Occupied(four, running), {c.preemptor}, victims, kNow, PassConfig{}, c.queues);
    if (c.want_victims.empty()) {
      EXPECT_FALSE(r.preemption.has_value());
      continue;
    }
    ASSERT_TRUE(r.preemption.has_value());
    EXPECT_EQ(r.preemption->victims, c.want_victims);
    EXPECT_EQ(r.preemption->reclaimed, c.want_victims);
    EXPECT_EQ(r.preemption->queue, "a");
  }
}

// A full cluster: Pending gangs (a Volcano Job's, no pods yet) enter when
// their queue is owed room for them, so their pods exist and reclaim can
// make the room; never beyond the queue's deserved share, and not without
// reclaim.
TEST(RunPassTest, AdmissionOfAnOwedQueue) {
  const std::vector<VictimCandidate> b_runs = {InQueue(Victim("b-1", 0, 1, {{"n1", 8}}), "b"),
                                               InQueue(Victim("b-2", 0, 2, {{"n2", 8}}), "b")};
  const ClusterView full = Occupied({GpuNode("n1", 8), GpuNode("n2", 8)}, b_runs);
  const auto gpus = [](int64_t n) {
    return Resources{{std::string(kNvidiaGpu), n * kMilliPerGpu}};
  };
  const auto job = [&](const std::string& name, int64_t want_gpus, int64_t created_s,
                       std::string_view phase = kPodGroupPending) {
    return InQueue(MakeGang(name)
                       .Phase(phase)
                       .MinResources(gpus(want_gpus))
                       .Created(Time::FromUnixSeconds(created_s)),
                   "a");
  };
  struct Case {
    std::string name;
    std::vector<Gang> gangs;
    QueueLimits queues;
    bool reclaim = true;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {.name = "owed 8 GPUs: an 8-GPU job enters though nothing is free",
       .gangs = {job("a1", 8, 1)},
       .queues = {{"a", Holding(0, 8)}, {"b", Holding(16, 8)}},
       .want = {"default/a1"}},
      {.name = "only as much as the queue deserves: the second waits",
       .gangs = {job("a1", 8, 1), job("a2", 8, 2)},
       .queues = {{"a", Holding(0, 8)}, {"b", Holding(16, 8)}},
       .want = {"default/a1"}},
      {.name = "what the queue holds counts",
       .gangs = {job("a1", 8, 1)},
       .queues = {{"a", Holding(4, 8)}, {"b", Holding(12, 8)}}},
      {.name = "an admitted job of the queue without its pods placed counts too",
       .gangs = {job("a0", 8, 0, kPodGroupInqueue), job("a1", 8, 1)},
       .queues = {{"a", Holding(0, 8)}, {"b", Holding(16, 8)}}},
      {.name = "without reclaim, only what is free",
       .gangs = {job("a1", 8, 1)},
       .queues = {{"a", Holding(0, 8)}, {"b", Holding(16, 8)}},
       .reclaim = false},
      {.name = "a queue deserving nothing (no limits) waits for free capacity",
       .gangs = {job("a1", 8, 1)},
       .queues = {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PassConfig config;
    config.reclaim = c.reclaim;
    EXPECT_EQ(RunPass(full, c.gangs, b_runs, kNow, config, c.queues).admitted, c.want);
  }
}

TEST(RunPassTest, ReclaimCanBeTurnedOff) {
  const std::vector<VictimCandidate> victims = {InQueue(Victim("v", 0, 1, {{"n1", 8}}), "b")};
  PassConfig config;
  config.reclaim = false;
  const PassResult r =
      RunPass(Occupied({GpuNode("n1", 8)}, victims), {InQueue(WholeNodes("p", 1, 0, 1), "a")},
              victims, kNow, config, {{"a", Holding(0, 8)}, {"b", Holding(8, 0)}});
  EXPECT_FALSE(r.preemption.has_value());
}

// A gang refused admission says why, pods or not (a Volcano Job has none
// yet; Spark's driver exists), and its members are not placed until it is
// admitted: Volcano's allocate action takes only jobs its enqueue action let
// in (pkg/scheduler/actions/enqueue/enqueue.go,
// pkg/scheduler/actions/allocate/allocate.go: Pending jobs are skipped).
TEST(RunPassTest, AGangRefusedAdmissionWaitsWithWhyAndIsNotPlaced) {
  const ClusterView view = MakeView({GpuNode("n1", 8)});
  const auto gpus = [](int64_t n) {
    return Resources{{std::string(kNvidiaGpu), n * kMilliPerGpu}};
  };
  struct Case {
    std::string name;
    Gang gang;
    QueueLimits queues;
    std::string want_reason;  // "" for no wait
    std::string want_message;
    bool want_plan = false;
  };
  const std::vector<Case> cases = {
      {.name = "no pods, minResources beyond the free capacity",
       .gang = MakeGang("job").MinMember(2).MinResources(gpus(16)),
       .want_reason = std::string(kWaitResources),
       .want_message = "not admitted: spec.minResources needs nvidia.com/gpu=16 (8 free)"},
      {.name = "no pods, beyond its queue's capability",
       .gang = InQueue(MakeGang("job").MinMember(2).MinResources(gpus(4)), "tight"),
       .queues = {{"tight", QueueLimit{.room = gpus(2)}}},
       .want_reason = std::string(kWaitQueueCapability),
       .want_message =
           "not admitted: queue tight is at its capability: needs nvidia.com/gpu=4 (2 left)"},
      {.name = "a driver of minMember 1 whose minResources do not fit is not placed",
       .gang = MakeGang("spark").MinMember(1).MinResources(gpus(16)).Pending(Worker("driver", 0)),
       .want_reason = std::string(kWaitResources),
       .want_message = "not admitted: spec.minResources needs nvidia.com/gpu=16 (8 free)"},
      {.name = "admitted in this pass: placed in the same pass",
       .gang = MakeGang("spark").MinMember(1).MinResources(gpus(8)).Pending(Worker("driver", 0)),
       .want_plan = true},
      {.name = "Inqueue already: placed",
       .gang = MakeGang("spark")
                   .MinMember(1)
                   .Phase(kPodGroupInqueue)
                   .MinResources(gpus(16))
                   .Pending(Worker("driver", 0)),
       .want_plan = true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PassResult r = RunPass(view, {c.gang}, {}, kNow, PassConfig{}, c.queues);
    EXPECT_EQ(r.plans.size(), c.want_plan ? 1u : 0u);
    if (c.want_reason.empty()) {
      EXPECT_THAT(r.waits, ::testing::IsEmpty());
      continue;
    }
    ASSERT_EQ(r.waits.size(), 1u);
    EXPECT_EQ(r.waits[0].reason, c.want_reason);
    EXPECT_EQ(r.waits[0].message, c.want_message);
  }
}

TEST(RunPassTest, QueueCapabilityLimitsWhatItsGangsReserve) {
  QueueLimits queues = {{"a", QueueLimit{.room = Resources{{std::string(kNvidiaGpu), 8000}}}}};
  Gang first = InQueue(WholeNodes("first", 1, 0, 1), "a");
  Gang second = InQueue(WholeNodes("second", 1, 0, 2), "a");
  first.spec.min_resources = second.spec.min_resources =
      Resources{{"requests.nvidia.com/gpu", 8000}};
  const PassResult r = RunPass(
      MakeView({GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8)}),
      {first, second, InQueue(WholeNodes("wide", 2, 0, 3), "b"), WholeNodes("free", 1, 0, 4)}, {},
      kNow, PassConfig{}, queues);
  EXPECT_THAT(Keys(r.plans), ElementsAre("default/first", "default/wide"));
  ASSERT_THAT(Keys(r.waits), ElementsAre("default/second", "default/free"));
  EXPECT_EQ(r.waits[0].reason, kWaitQueueCapability);
  EXPECT_EQ(r.waits[0].message,
            "not admitted: queue a is at its capability: needs nvidia.com/gpu=8 (0 left)");
  // Admission (Pending -> Inqueue) of minResources stops at the capability too.
  EXPECT_THAT(r.admitted, ElementsAre("default/first", "default/wide", "default/free"));
}

// Members beyond a gang's minimum take what their queue's capability leaves,
// one by one; a minimum not yet placed is all or nothing. Volcano's
// proportion plugin checks each task against the queue
// (pkg/scheduler/plugins/proportion/proportion.go: AllocatableFn), the gang
// plugin only the job's minimum (pkg/scheduler/plugins/gang/gang.go).
TEST(RunPassTest, MembersBeyondTheMinimumTakeWhatTheQueueLeaves) {
  const auto gpus = [](int64_t n) {
    return Resources{{std::string(kNvidiaGpu), n * kMilliPerGpu}};
  };
  struct Case {
    std::string name;
    Gang gang;
    size_t want_reserved;
  };
  const std::vector<Case> cases = {
      {"a gang of one (a ReplicaSet's pods): as many as fit",
       MakeGang("rs")
           .MinMember(1)
           .Pending(Worker("rs-a", 8))
           .Pending(Worker("rs-b", 8))
           .Pending(Worker("rs-c", 8)),
       2},
      {"a running elastic gang: its extras as they fit",
       MakeGang("el")
           .MinMember(1)
           .Bound(Worker("el-a", 8), "n1")
           .Pending(Worker("el-b", 8))
           .Pending(Worker("el-c", 8))
           .Pending(Worker("el-d", 8)),
       2},
      {"a minimum of 3 not placed yet: all or nothing", WholeNodes("big", 3, 0, 1), 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // The queue has 16 GPUs of capability left (the bound member's excluded).
    const QueueLimits queues = {{"q", QueueLimit{.room = gpus(16)}}};
    const ClusterView view = MakeView(
        {GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8), GpuNode("n4", 8)}, {c.gang});
    const PassResult r = RunPass(view, {InQueue(c.gang, "q")}, {}, kNow, PassConfig{}, queues);
    const size_t reserved = r.plans.empty() ? 0 : r.plans[0].reserve.size();
    EXPECT_EQ(reserved, c.want_reserved);
    if (c.want_reserved == 0) {
      ASSERT_EQ(r.waits.size(), 1u);
      EXPECT_EQ(r.waits[0].reason, kWaitQueueCapability);
    }
  }
}

Gang Elastic(const std::string& name, int pending, int32_t priority, int64_t created_s,
             int bound_on_n1 = 0) {
  GangBuilder b =
      MakeGang(name).MinMember(1).Priority(priority).Created(Time::FromUnixSeconds(created_s));
  for (int i = 0; i < bound_on_n1; ++i) b.Bound(Worker(name + "-b" + std::to_string(i), 8), "n1");
  for (int i = 0; i < pending; ++i) b.Pending(Worker(name + "-" + std::to_string(i), 8));
  return b;
}

// Elastic gangs larger than the cluster share what is free by DRF, one
// member per turn once their minimums are placed (Volcano's allocate action
// pushes a ready job back after each task: pkg/scheduler/actions/allocate/
// allocate.go; job order priority then DRF: pkg/scheduler/plugins/drf/drf.go).
TEST(RunPassTest, ElasticGangsShareTheClusterByDrf) {
  struct Case {
    std::string name;
    std::vector<Gang> gangs;
    std::map<std::string, size_t> want;  // gang key -> members reserved
  };
  const std::vector<Case> cases = {
      {"alone: everything that fits", {Elastic("a", 8, 0, 1)}, {{"default/a", 4}}},
      {"two of equal priority: half each, the older first on ties",
       {Elastic("a", 8, 0, 1), Elastic("b", 8, 0, 2)},
       {{"default/a", 2}, {"default/b", 2}}},
      {"one already holding a node gets less of the rest",
       {Elastic("a", 8, 0, 1, /*bound_on_n1=*/1), Elastic("b", 8, 0, 2)},
       {{"default/a", 1}, {"default/b", 2}}},
      {"higher priority first: its extras before the other's",
       {Elastic("a", 8, 0, 1), Elastic("hi", 8, 5, 2)},
       {{"default/a", 1}, {"default/hi", 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Gang> gangs = c.gangs;
    const ClusterView view =
        MakeView({GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8), GpuNode("n4", 8)}, gangs);
    const PassResult r = RunPass(view, gangs, {}, kNow, PassConfig{});
    std::map<std::string, size_t> got;
    for (const GangPlan& plan : r.plans) got[plan.key] = plan.reserve.size();
    EXPECT_EQ(got, c.want);
    for (const GangPlan& plan : r.plans) {
      for (const Assignment& a : plan.reserve) {
        EXPECT_EQ(std::ranges::count(plan.placement, a), 1) << "placement lists " << a.pod_name;
      }
    }
  }
}

// Capacity is lent past a queue's deserved share only while no queue below
// its own waits for capacity. Three free 8-GPU nodes (a fourth is full):
// queue a's gang "wide" (4 nodes, first in order) waits for capacity; queue
// b's gang "one" (1 node, behind it) fits.
TEST(RunPassTest, NoQueuePastItsShareWhileAnOwedQueueWaits) {
  const std::vector<VictimCandidate> running = {InQueue(Victim("v", 0, 1, {{"n4", 8}}), "b")};
  const ClusterView view =
      Occupied({GpuNode("n1", 8), GpuNode("n2", 8), GpuNode("n3", 8), GpuNode("n4", 8)}, running);
  struct Case {
    std::string name;
    QueueLimits queues;
    std::vector<Gang> extra = {};  // after "one" in order
    std::vector<std::string> want_plans;
    std::string want_one_waits = "";  // the reason "one" waits with, if it does
  };
  const std::vector<Case> cases = {
      {.name = "b would go past its share while a (owed) waits: b waits",
       .queues = {{"a", Holding(0, 24)}, {"b", Holding(8, 8)}},
       .want_plans = {},
       .want_one_waits = std::string(kWaitQueueOverShare)},
      {.name = "within its share b plans",
       .queues = {{"a", Holding(0, 16)}, {"b", Holding(8, 16)}},
       .want_plans = {"default/one"}},
      {.name = "a at its share is owed nothing: the idle capacity is lent to b",
       .queues = {{"a", Holding(8, 8)}, {"b", Holding(8, 8)}},
       .want_plans = {"default/one"}},
      {.name = "a's own gangs behind its waiting one are not held back",
       .queues = {{"a", Holding(0, 24)}, {"b", Holding(8, 8)}},
       .extra = {InQueue(WholeNodes("a-small", 1, 0, 3), "a")},
       .want_plans = {"default/a-small"},
       .want_one_waits = std::string(kWaitQueueOverShare)},
      {.name = "no limits for b's queue: nothing to hold it to",
       .queues = {{"a", Holding(0, 24)}},
       .want_plans = {"default/one"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Gang> gangs = {InQueue(WholeNodes("wide", 4, 0, 1), "a"),
                               InQueue(WholeNodes("one", 1, 0, 2), "b")};
    gangs.insert(gangs.end(), c.extra.begin(), c.extra.end());
    PassConfig config;
    config.preemption = false;
    config.head_of_line_after = std::chrono::hours(48);  // no nodes kept for "wide"
    const PassResult r = RunPass(view, gangs, running, kNow, config, c.queues);
    EXPECT_THAT(Keys(r.plans), ElementsAreArray(c.want_plans));
    const auto one = std::ranges::find(r.waits, "default/one", &Wait::key);
    EXPECT_EQ(one == r.waits.end() ? "" : std::string(one->reason), c.want_one_waits);
    if (c.want_one_waits == kWaitQueueOverShare) {
      EXPECT_EQ(one->message,
                "queue b would go past its deserved share while queue a, below its own, waits for "
                "capacity");
    }
  }
}

// ---------------------------------------------------------------------------
// Network domains (issue #7).

Node RackNode(const std::string& name, int64_t gpus) { return GpuNode(name, gpus); }

NetworkDomain Rack(const std::string& id, std::vector<std::string> nodes, int tier = 1) {
  return NetworkDomain{.tier = tier, .id = id, .nodes = std::move(nodes)};
}

std::set<std::string> NodesOf(const GangPlan& plan) {
  std::set<std::string> out;
  for (const Assignment& a : plan.reserve) out.insert(a.node);
  return out;
}

TEST(RunPassTest, NetworkDomains) {
  // Two racks of two 8-GPU nodes under one spine; 4 GPUs busy on a1, a2 and
  // b1: rack a has 8 free, rack b 12.
  const Gang busy = MakeGang("busy")
                        .Bound(Worker("busy-0", 4), "a1")
                        .Bound(Worker("busy-1", 4), "a2")
                        .Bound(Worker("busy-2", 4), "b1");
  const ClusterView view = MakeView(
      {RackNode("a1", 8), RackNode("a2", 8), RackNode("b1", 8), RackNode("b2", 8)}, {busy});
  const std::vector<NetworkDomain> racks = {Rack("rack=a", {"a1", "a2"}),
                                            Rack("rack=b", {"b1", "b2"}),
                                            Rack("spine", {"a1", "a2", "b1", "b2"}, 2)};
  // The gang may use `domains` (the highest tier among them bounds it).
  auto gang = [&](int members, bool required, std::vector<NetworkDomain> domains) {
    GangBuilder b = MakeGang("g").MinMember(members);
    for (int i = 0; i < members; ++i) b.Pending(Worker("g-" + std::to_string(i), 4));
    Gang g = b;
    for (const NetworkDomain& d : domains) g.domain_tier = std::max(g.domain_tier, d.tier);
    g.domains = std::make_shared<const std::vector<NetworkDomain>>(std::move(domains));
    g.domains_required = required;
    g.domain_level = "rack";
    return g;
  };
  struct Case {
    std::string name;
    Gang gang;
    std::set<std::string> want_nodes;  // empty: no plan
    std::string want_reason = "";
  };
  const std::vector<Case> cases = {
      {"2 x 4 GPUs: both racks hold it, the tightest (a) first",
       gang(2, false, racks),
       {"a1", "a2"}},
      {"3 x 4 GPUs: only rack b holds it", gang(3, false, racks), {"b1", "b2"}},
      {"4 x 4 GPUs: no rack holds it now, the spine does",
       gang(4, false, racks),
       {"a1", "a2", "b1", "b2"}},
      {"4 x 4 GPUs, rack required: waits for a rack, no fallback",
       gang(4, true, {racks[0], racks[1]}),
       {},
       std::string(kWaitNetworkTopology)},
      {"5 x 4 GPUs, rack required: no rack is large enough",
       gang(5, true, {racks[0], racks[1]}),
       {},
       std::string(kWaitNeverFits)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PassResult r = RunPass(view, {busy, c.gang}, {}, kNow, PassConfig{});
    if (c.want_nodes.empty()) {
      EXPECT_TRUE(r.plans.empty());
      ASSERT_EQ(r.waits.size(), 1u);
      EXPECT_EQ(r.waits[0].reason, c.want_reason);
      EXPECT_THAT(r.waits[0].message, ::testing::HasSubstr("must fit in one rack"));
      continue;
    }
    ASSERT_EQ(r.plans.size(), 1u);
    EXPECT_EQ(NodesOf(r.plans[0]), c.want_nodes);
  }
}

// Nodes of 4 GPUs in two linked pairs, {0,1} and {2,3} (link 5), 1 across.
class TwoPairs final : public GpuLayout {
 public:
  std::optional<GpuPick> Pick(uint32_t free, int k) const override {
    std::optional<GpuPick> best;
    for (uint32_t s = free & 0xF; s != 0; s = (s - 1) & free & 0xF) {
      if (std::popcount(s) != k) continue;
      const int link = (s & 0b0011) == s || (s & 0b1100) == s ? 5 : 1;
      if (!best || link > best->link) best = GpuPick{.gpus = s, .link = link};
    }
    return best;
  }
  int BestLink(int k) const override { return k <= 2 ? 5 : 1; }
};

TEST(RunPassTest, ADomainWhereEveryMemberGetsItsBestGpuLinkWinsOverATighterOne) {
  // Both racks have 4 GPUs free; rack a's are split {0,2} on each node (one
  // GPU of each pair busy), rack b's are one whole node.
  const Gang busy = MakeGang("busy")
                        .Bound(Worker("busy-0", 2), "a1")
                        .Bound(Worker("busy-1", 2), "a2")
                        .Bound(Worker("busy-2", 4), "b2");
  ClusterView view = MakeView(
      {RackNode("a1", 4), RackNode("a2", 4), RackNode("b1", 4), RackNode("b2", 4)}, {busy});
  const auto layout = std::make_shared<const TwoPairs>();
  const std::map<std::string, uint32_t> free = {{"a1", 0b0101}, {"a2", 0b0101}, {"b1", 0b1111}};
  for (NodeView& n : view.nodes) {
    n.gpu_layout = layout;
    n.free_gpus = free.contains(n.name()) ? free.at(n.name()) : 0;
  }
  Gang g = MakeGang("g").MinMember(2).Pending(Worker("g-0", 2)).Pending(Worker("g-1", 2));
  g.domain_tier = 1;
  g.domains = std::make_shared<const std::vector<NetworkDomain>>(
      std::vector<NetworkDomain>{Rack("rack=a", {"a1", "a2"}), Rack("rack=b", {"b1", "b2"})});
  const PassResult r = RunPass(view, {busy, g}, {}, kNow, PassConfig{});
  ASSERT_EQ(r.plans.size(), 1u);
  EXPECT_EQ(NodesOf(r.plans[0]), std::set<std::string>{"b1"});
  EXPECT_EQ(r.plans[0].link_shortfall, 0);
  EXPECT_EQ(r.plans[0].reserve[0].gpus.whole | r.plans[0].reserve[1].gpus.whole, 0b1111u);
  // Without GPU layouts, the tightest (first) rack as before.
  for (NodeView& n : view.nodes) n.gpu_layout = nullptr;
  const PassResult counts = RunPass(view, {busy, g}, {}, kNow, PassConfig{});
  ASSERT_EQ(counts.plans.size(), 1u);
  EXPECT_EQ(NodesOf(counts.plans[0]), (std::set<std::string>{"a1", "a2"}));
}

// ---------------------------------------------------------------------------
// StatusOf.

TEST(StatusOfTest, Table) {
  const Time before = kNow - std::chrono::seconds(300);
  const Wait no_resources{.key = "default/g",
                          .reason = kWaitResources,
                          .message =
                              "1/2 members placeable: 1 need nvidia.com/gpu=8, largest "
                              "free is 0",
                          .placeable = 1};
  const Wait no_members{.key = "default/g",
                        .reason = kWaitMembers,
                        .message = "0/2 members exist: waiting for 2 more pods"};
  const PodGroupStatus was_unschedulable{
      .phase = "Inqueue",
      .conditions = {Condition{.type = "Unschedulable",
                               .status = "True",
                               .reason = std::string(kWaitResources),
                               .message = "older text",
                               .last_transition_time = before}}};
  const Condition scheduled_now{.type = "Scheduled",
                                .status = "True",
                                .reason = "tasks in gang are ready to be scheduled",
                                .last_transition_time = kNow};
  const auto unschedulable = [](const Wait& w, Time t) {
    return Condition{.type = "Unschedulable",
                     .status = "True",
                     .reason = std::string(w.reason),
                     .message = w.message,
                     .last_transition_time = t};
  };
  struct Case {
    std::string name;
    Gang gang;
    bool admitted = false;
    const Wait* wait = nullptr;
    PodGroupStatus previous = {};
    PodGroupStatus want;
  };
  const std::vector<Case> cases = {
      {.name = "new: Pending", .gang = MakeGang("g").MinMember(2), .want = {.phase = "Pending"}},
      {.name = "waiting for pods, not admitted: Pending with the reason",
       .gang = MakeGang("g").MinMember(2),
       .wait = &no_members,
       .want = {.phase = "Pending", .conditions = {unschedulable(no_members, kNow)}}},
      {.name = "admitted: Inqueue",
       .gang = MakeGang("g").MinMember(2),
       .admitted = true,
       .want = {.phase = "Inqueue"}},
      {.name = "Inqueue stays Inqueue",
       .gang = MakeGang("g").MinMember(2).Phase(kPodGroupInqueue).Pending(Worker("w-0", 8)),
       .want = {.phase = "Inqueue"}},
      {.name = "Running with its pods gone falls back to Inqueue",
       .gang = MakeGang("g").MinMember(2).Phase(kPodGroupRunning),
       .want = {.phase = "Inqueue"}},
      {.name = "holding a reservation: Inqueue and Scheduled",
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Phase(kPodGroupPending)
                   .Reserved(Worker("w-0", 8), "n1")
                   .Reserved(Worker("w-1", 8), "n2"),
       .want = {.phase = "Inqueue", .conditions = {scheduled_now}}},
      {.name = "waiting for capacity keeps the first transition time",
       .gang = MakeGang("g").MinMember(2).Phase(kPodGroupInqueue).Pending(Worker("w-0", 8)),
       .wait = &no_resources,
       .previous = was_unschedulable,
       .want = {.phase = "Inqueue", .conditions = {unschedulable(no_resources, before)}}},
      {.name = "Running: minimum bound; only Running pods count as running",
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Bound(Worker("w-0", 8), "n1")
                   .Add(Worker("w-1", 8).Phase("Pending"), MemberState::kBound, "n2"),
       .previous = was_unschedulable,
       .want = {.phase = "Running", .conditions = {scheduled_now}, .running = 1}},
      {.name = "Running with one member already finished",
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Bound(Worker("w-0", 8), "n1")
                   .Succeeded(Worker("w-1", 8), "n2"),
       .want = {.phase = "Running", .conditions = {scheduled_now}, .running = 1, .succeeded = 1}},
      {.name = "Completed: every scheduled member finished",
       .gang = MakeGang("g")
                   .MinMember(2)
                   .Succeeded(Worker("w-0", 8), "n1")
                   .Failed(Worker("w-1", 8), "n2"),
       .want = {.phase = "Completed", .conditions = {scheduled_now}, .succeeded = 1, .failed = 1}},
      {.name = "Unknown: part of the gang runs and the rest cannot be placed",
       .gang = MakeGang("g").MinMember(3).Bound(Worker("w-0", 8), "n1").Pending(Worker("w-1", 8)),
       .wait = &no_resources,
       .want = {.phase = "Unknown",
                .conditions = {unschedulable(no_resources, kNow)},
                .running = 1}},
      {.name = "below the minimum without a wait is not Unknown",
       .gang = MakeGang("g").MinMember(3).Phase(kPodGroupRunning).Bound(Worker("w-0", 8), "n1"),
       .want = {.phase = "Inqueue", .running = 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(StatusOf(c.gang, c.admitted, c.wait, c.previous, kNow), c.want);
  }
}

}  // namespace
}  // namespace muster::gang
