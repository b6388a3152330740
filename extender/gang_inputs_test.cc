// The gang controller's inputs read incrementally (ReadGangs keeps the
// gangs it built and builds again only those that changed) are the inputs
// read from scratch, whatever changed in the cache between two passes; and
// what of a member pod the cache keeps for them (ClusterState::gang_pods()).
#include "extender/gang_inputs.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "extender/cluster_state.h"
#include "extender/testing/gang_cluster.h"
#include "kube/codec/volcano_codec.h"
#include "model/clock.h"
#include "model/pod.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using fixture::AddGang;
using fixture::AddNodes;
using fixture::TestCluster;
using test::MakePod;
using test::MakePodGroup;
using test::PodBuilder;

using namespace std::chrono_literals;

// Everything a pass reads of the inputs, as text (a failure shows the diff).
std::string Describe(const GangInputs& in) {
  std::ostringstream out;
  for (const gang::Gang& g : in.gangs) {
    out << "gang " << g.key << " min " << g.spec.min_member << " phase " << g.phase << " created "
        << g.created.unix_micros() << " priority " << g.priority << "\n";
    for (const gang::Member& m : g.members) {
      out << "  " << m.pod->meta.name << " state " << static_cast<int>(m.state) << " node "
          << m.node << " hint " << m.hint << " terminating " << m.terminating << " request "
          << m.request.ToString() << " gpus " << m.gpus.whole << "\n";
    }
  }
  for (const gang::VictimCandidate& v : in.victims) {
    out << "victim " << v.key << " gpus " << v.gpus << " holds " << v.holds.ToString() << " pods";
    for (const gang::VictimCandidate::Pod& p : v.pods) out << " " << p.name << "@" << p.node;
    out << "\n";
  }
  for (const auto& [key, group] : in.groups) out << "group " << key << " " << group->status.phase;
  for (const std::string& key : in.implicit) out << "\nimplicit " << key;
  for (const std::string& uid : in.placed) out << "\nplaced " << uid;
  out << "\nview " << in.view.nodes.size() << " free " << in.free.ToString() << "\n";
  return out.str();
}

GangInputs Incremental(TestCluster& cluster, BuiltGangs& built) {
  GangRead read;
  cluster.With([&](ClusterState& state) { read = ReadGangs(state, built); });
  return AssembleInputs(std::move(read), {}, {}, cluster.clock.Now());
}

GangInputs FromScratch(TestCluster& cluster) {
  GangInputs in;
  cluster.With(
      [&](ClusterState& state) { in = BuildGangInputs(state, {}, {}, cluster.clock.Now()); });
  return in;
}

PodBuilder Member(std::string_view group, int i) {
  const std::string name = fixture::MemberName(group, i);
  return MakePod(name).Namespace("ml").Uid("uid-" + name).Group(group).Cpu("1").Gpu(1);
}

// A plain pod of the volcano scheduler: Volcano's PodGroup of one.
PodBuilder Plain(std::string_view name) {
  return MakePod(std::string(name))
      .Namespace("ml")
      .Uid("uid-" + std::string(name))
      .SchedulerName("volcano")
      .Cpu("1");
}

// A change of the cache between two passes.
struct Change {
  std::string name;
  std::function<void(TestCluster&)> apply;
};

std::vector<Change> Changes() {
  return {
      {"a running member finishes",
       [](TestCluster& c) { c.Add(Member("run", 0).NodeName("gpu-0").Phase("Succeeded")); }},
      {"a pending member is bound",
       [](TestCluster& c) { c.Add(Member("wait", 0).NodeName("gpu-3").Phase("Running")); }},
      {"a pending member is reserved",
       [](TestCluster& c) {
         c.With([](ClusterState& s) { s.Assume("uid-wait-1", "gpu-2", Resources{}); });
       }},
      {"a reservation is forgotten",
       [](TestCluster& c) { c.With([](ClusterState& s) { s.Forget("uid-held-0"); }); }},
      {"a reservation expires", [](TestCluster& c) { c.clock.Advance(2min); }},
      {"a member is deleted", [](TestCluster& c) { c.cache.DeletePod("uid-run-1"); }},
      {"a member is being deleted",
       [](TestCluster& c) {
         Pod pod = Member("run", 1).NodeName("gpu-1").Phase("Running");
         pod.meta.deletion_timestamp = c.clock.Now();
         c.Add(pod);
       }},
      {"a new member joins", [](TestCluster& c) { c.Add(Member("wait", 2)); }},
      {"a bound member carries the gang's plan",
       [](TestCluster& c) {
         GangPlacement plan{.pod_group = "wait",
                            .members = {{"wait-0", "gpu-3"}, {"wait-1", "gpu-2"}}};
         c.Add(Member("wait", 0).NodeName("gpu-3").Phase("Running").Annotation(
             kAnnotationGangPlan, kube::EncodeGangPlacement(plan)));
       }},
      {"the PodGroup's phase changes (with a resourceVersion)",
       [](TestCluster& c) {
         PodGroup group = MakePodGroup("run").Namespace("ml").MinMember(2).Phase("Inqueue");
         group.meta.resource_version = "2";
         c.Add(group);
       }},
      {"the PodGroup's minMember changes (without one)",
       [](TestCluster& c) { c.Add(MakePodGroup("wait").Namespace("ml").MinMember(1)); }},
      {"the PodGroup is deleted", [](TestCluster& c) { c.cache.DeletePodGroup("ml/wait"); }},
      {"a new gang arrives", [](TestCluster& c) { AddGang(c, "new", 2, 1); }},
      {"a plain pod arrives", [](TestCluster& c) { c.Add(Plain("solo-2")); }},
      {"a plain pod is bound",
       [](TestCluster& c) { c.Add(Plain("solo-1").NodeName("gpu-1").Phase("Running")); }},
      {"nothing", [](TestCluster&) {}},
  };
}

// Four nodes; a running gang (its PodGroup with a resourceVersion), a
// pending one, one with a reservation, and a plain pod of volcano.
void Populate(TestCluster& cluster) {
  AddNodes(cluster, 4);
  PodGroup run = MakePodGroup("run").Namespace("ml").MinMember(2).Phase("Running");
  run.meta.resource_version = "1";
  cluster.Add(run);
  cluster.Add(Member("run", 0).NodeName("gpu-0").Phase("Running"));
  cluster.Add(Member("run", 1).NodeName("gpu-1").Phase("Running"));
  AddGang(cluster, "wait", 2, 1);
  AddGang(cluster, "held", 1, 1);
  cluster.With([](ClusterState& s) { s.Assume("uid-held-0", "gpu-2", Resources{}, 1min); });
  cluster.Add(Plain("solo-1"));
}

TEST(GangInputsTest, ReadIncrementallyTheyAreTheInputsReadFromScratch) {
  for (const Change& change : Changes()) {
    SCOPED_TRACE(change.name);
    TestCluster cluster;
    Populate(cluster);
    BuiltGangs built;
    const std::string before = Describe(Incremental(cluster, built));
    ASSERT_EQ(before, Describe(FromScratch(cluster)));

    change.apply(cluster);
    const std::string after = Describe(Incremental(cluster, built));
    EXPECT_EQ(after, Describe(FromScratch(cluster)));
    if (change.name != "nothing") {
      EXPECT_NE(after, before) << "the change shows in the inputs";
    }
    EXPECT_EQ(built.gangs.size(), FromScratch(cluster).gangs.size()) << "gangs gone are dropped";
  }
}

// A running gang is offered as a victim with what its bound members hold:
// their requests, without the pod slots (queues share no "pods"), and
// without a member already leaving.
TEST(GangInputsTest, AVictimHoldsWhatItsBoundMembersRequest) {
  struct Case {
    std::string name;
    std::function<void(TestCluster&)> change;
    std::string want_holds;
  };
  const std::vector<Case> cases = {
      {"both members bound", [](TestCluster&) {}, "cpu=2, nvidia.com/gpu=2"},
      {"one member being deleted",
       [](TestCluster& c) {
         Pod pod = Member("run", 1).NodeName("gpu-1").Phase("Running");
         pod.meta.deletion_timestamp = c.clock.Now();
         c.Add(pod);
       },
       "cpu=1, nvidia.com/gpu=1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TestCluster cluster;
    Populate(cluster);
    c.change(cluster);
    const GangInputs in = FromScratch(cluster);
    const auto victim = std::ranges::find(in.victims, "ml/run", &gang::VictimCandidate::key);
    ASSERT_NE(victim, in.victims.end());
    EXPECT_EQ(victim->holds.ToString(), c.want_holds);
  }
}

// A gang member is kept for the gang controller with its spec, metadata and
// phase, not with what kubelet reports besides (conditions, container
// statuses): 5000 members' statuses were ~3.7 MB of the extender's heap.
TEST(GangInputsTest, GangMembersKeepTheirPhaseNotKubeletsStatus) {
  FakeClock clock;
  ClusterState state(clock);
  Pod pod = PodBuilder("w-0").SchedulerName("volcano").Group("pg1").Phase("Running");
  pod.status.reason = "Evicted";
  pod.status.conditions.push_back(Condition{.type = "Ready", .status = "True"});
  pod.status.container_statuses.push_back(
      ContainerStatus{.name = "main", .ready = true, .state = "running"});
  state.UpsertPod(pod);

  const auto gang = state.gang_pods().find("default/pg1");
  ASSERT_NE(gang, state.gang_pods().end());
  ASSERT_EQ(gang->second.pods.size(), 1u);
  const Pod& member = *gang->second.pods.begin()->second;
  EXPECT_EQ(member.meta, pod.meta);
  EXPECT_EQ(member.spec, pod.spec);
  EXPECT_EQ(member.status, PodStatus{.phase = "Running"});
}

}  // namespace
}  // namespace muster::extender
