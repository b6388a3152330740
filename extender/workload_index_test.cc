#include "extender/workload_index.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakePod;
using test::MakePodGroup;
using test::MakeQueue;

// Which gang a pod is a member of, by how it names one and which scheduler
// it asks for.
struct GroupCase {
  std::string name;
  Pod pod;
  std::string want_key;  // "" for none
  bool want_implicit = false;
};

const std::vector<std::string> kServed = {"volcano"};

std::vector<GroupCase> GroupCases() {
  auto pod = [] { return MakePod("p").Namespace("ml").SchedulerName("volcano"); };
  return {
      {"a Kubernetes PodGroup", pod().SchedulingGroup("train"), "scheduling.k8s.io/ml/train"},
      {"a Volcano PodGroup", pod().Group("train"), "ml/train"},
      {"both: kube-scheduler runs it as the Kubernetes group's, and so does muster",
       pod().Group("other").SchedulingGroup("train"), "scheduling.k8s.io/ml/train"},
      {"neither: Volcano's PodGroup of one", pod(), "ml/podgroup-uid-p", true},
      {"another scheduler's Kubernetes gang is not muster's",
       MakePod("p").Namespace("ml").SchedulerName("default-scheduler").SchedulingGroup("train"),
       ""},
      {"another scheduler's pod naming a Volcano PodGroup is still its member",
       MakePod("p").Namespace("ml").SchedulerName("default-scheduler").Group("train"), "ml/train"},
  };
}

TEST(GroupOfPodTest, KubernetesVolcanoAndImplicitGroups) {
  for (const GroupCase& c : GroupCases()) {
    SCOPED_TRACE(c.name);
    const GroupRef group = GroupOfPod(c.pod, kServed);
    EXPECT_EQ(group.key, c.want_key);
    EXPECT_EQ(group.implicit, c.want_implicit);
  }
}

// A Kubernetes and a Volcano PodGroup may share a namespace and name: two
// gangs, each found, replaced, broken and deleted on its own.
TEST(WorkloadIndexTest, KubernetesAndVolcanoPodGroupsOfOneNameAreTwoGangs) {
  WorkloadIndex index;
  index.UpsertPodGroup(MakePodGroup("train").Namespace("ml").MinMember(4));
  index.UpsertPodGroup(MakePodGroup("train").Namespace("ml").MinMember(8).Kubernetes());
  ASSERT_EQ(index.View().pod_group_count(), 2u);
  EXPECT_EQ(index.View().FindPodGroup("ml/train")->spec.min_member, 4);
  EXPECT_EQ(index.View().FindPodGroup("scheduling.k8s.io/ml/train")->spec.min_member, 8);

  index.MarkPodGroupBroken({.namespace_ = "ml",
                            .name = "train",
                            .api = PodGroupApi::kKubernetes,
                            .problem = "spec.schedulingPolicy: must set exactly one"});
  EXPECT_EQ(index.View().FindPodGroup("scheduling.k8s.io/ml/train"), nullptr);
  EXPECT_NE(index.View().FindBrokenPodGroup("scheduling.k8s.io/ml/train"), nullptr);
  EXPECT_EQ(index.View().FindPodGroup("ml/train")->spec.min_member, 4) << "the other untouched";

  index.DeletePodGroup("scheduling.k8s.io/ml/train");
  EXPECT_TRUE(index.View().broken_pod_groups().empty());
  EXPECT_EQ(index.View().pod_group_count(), 1u);
  EXPECT_NE(index.View().FindPodGroup("ml/train"), nullptr);
}

TEST(WorkloadIndexTest, UpsertFindDelete) {
  WorkloadIndex index;
  index.UpsertPodGroup(MakePodGroup("train").Namespace("ml").MinMember(4).Queue("research"));
  index.UpsertPodGroup(MakePodGroup("train").Namespace("other").MinMember(2));
  index.UpsertQueue(MakeQueue("research").Weight(3));

  const WorkloadView& view = index.View();
  ASSERT_NE(view.FindPodGroup("ml", "train"), nullptr);
  EXPECT_EQ(view.FindPodGroup("ml", "train")->spec.min_member, 4);
  EXPECT_EQ(view.FindPodGroup("other", "train")->spec.min_member, 2);
  EXPECT_EQ(view.FindPodGroup("ml", "missing"), nullptr);
  ASSERT_NE(view.FindQueue("research"), nullptr);
  EXPECT_EQ(view.FindQueue("research")->spec.weight, 3);
  EXPECT_EQ(view.pod_group_count(), 2u);

  index.UpsertPodGroup(MakePodGroup("train").Namespace("ml").MinMember(8));
  EXPECT_EQ(index.View().FindPodGroup("ml", "train")->spec.min_member, 8) << "replaced, not added";
  index.DeletePodGroup("ml/train");
  index.DeleteQueue("research");
  EXPECT_EQ(index.View().FindPodGroup("ml", "train"), nullptr);
  EXPECT_EQ(index.View().FindQueue("research"), nullptr);
  EXPECT_EQ(index.View().pod_group_count(), 1u);
}

TEST(WorkloadIndexTest, AViewDoesNotChangeUnderLaterEvents) {
  WorkloadIndex index;
  index.UpsertPodGroup(MakePodGroup("g").MinMember(2));
  index.UpsertQueue(MakeQueue("q").Weight(1));
  const WorkloadView before = index.View();

  index.UpsertPodGroup(MakePodGroup("g").MinMember(5));
  index.DeleteQueue("q");
  index.UpsertPodGroup(MakePodGroup("h"));

  EXPECT_EQ(before.FindPodGroup("default", "g")->spec.min_member, 2);
  EXPECT_NE(before.FindQueue("q"), nullptr);
  EXPECT_EQ(before.pod_group_count(), 1u);
  EXPECT_GT(index.View().generation(), before.generation());
}

// Every kind of event after a view was copied leaves the copy as it was.
TEST(WorkloadIndexTest, ACopiedViewKeepsWhatItSawWhateverComesNext) {
  const std::vector<std::pair<std::string, std::function<void(WorkloadIndex&)>>> events = {
      {"PodGroup replaced", [](WorkloadIndex& i) { i.UpsertPodGroup(MakePodGroup("g")); }},
      {"PodGroup added", [](WorkloadIndex& i) { i.UpsertPodGroup(MakePodGroup("h")); }},
      {"PodGroup deleted", [](WorkloadIndex& i) { i.DeletePodGroup("default/g"); }},
      {"PodGroup broken",
       [](WorkloadIndex& i) {
         i.MarkPodGroupBroken({.namespace_ = "default", .name = "g", .problem = "spec: bad"});
       }},
      {"broken PodGroup cleared", [](WorkloadIndex& i) { i.ClearBrokenPodGroup("default/b"); }},
      {"Queue replaced", [](WorkloadIndex& i) { i.UpsertQueue(MakeQueue("q").Weight(9)); }},
      {"Queue deleted", [](WorkloadIndex& i) { i.DeleteQueue("q"); }},
      {"Queue broken", [](WorkloadIndex& i) { i.MarkQueueBroken({.name = "q", .problem = "x"}); }},
      {"broken Queue cleared", [](WorkloadIndex& i) { i.ClearBrokenQueue("bq"); }},
  };
  for (const auto& [name, event] : events) {
    SCOPED_TRACE(name);
    WorkloadIndex index;
    index.UpsertPodGroup(MakePodGroup("g").MinMember(2));
    index.MarkPodGroupBroken({.namespace_ = "default", .name = "b", .problem = "spec: bad"});
    index.UpsertQueue(MakeQueue("q").Weight(1));
    index.MarkQueueBroken({.name = "bq", .problem = "spec: bad"});
    const WorkloadView before = index.View();
    event(index);
    EXPECT_EQ(before.pod_group_count(), 1u);
    ASSERT_NE(before.FindPodGroup("default/g"), nullptr);
    EXPECT_EQ(before.FindPodGroup("default/g")->spec.min_member, 2);
    EXPECT_NE(before.FindBrokenPodGroup("default/b"), nullptr);
    ASSERT_NE(before.FindQueue("q"), nullptr);
    EXPECT_EQ(before.FindQueue("q")->spec.weight, 1);
    EXPECT_NE(before.FindBrokenQueue("bq"), nullptr);
    EXPECT_GT(index.View().generation(), before.generation());
  }
}

// Events with no copy of the view outstanding edit the maps in place: a
// relist of thousands of PodGroups costs one map, not one copy per object.
// A copy taken in between is the only reason to copy, once.
TEST(WorkloadIndexTest, EventsCopyAMapOnlyWhenAViewOfItIsHeld) {
  WorkloadIndex index;
  index.UpsertPodGroup(MakePodGroup("g0"));
  const auto* map = &index.View().pod_groups();
  for (int i = 1; i < 1000; ++i) index.UpsertPodGroup(MakePodGroup("g" + std::to_string(i)));
  EXPECT_EQ(&index.View().pod_groups(), map) << "no view held: edited in place";
  EXPECT_EQ(index.View().pod_group_count(), 1000u);
  {
    const WorkloadView held = index.View();
    index.UpsertPodGroup(MakePodGroup("g1000"));
    EXPECT_NE(&index.View().pod_groups(), map) << "a view held: copied";
    EXPECT_EQ(held.pod_group_count(), 1000u);
    map = &index.View().pod_groups();
    index.DeletePodGroup("default/g0");
    EXPECT_EQ(&index.View().pod_groups(), map) << "the copy is the index's own";
  }
  index.UpsertPodGroup(MakePodGroup("g1001"));
  EXPECT_EQ(&index.View().pod_groups(), map) << "the view dropped: in place again";
  EXPECT_EQ(index.View().pod_group_count(), 1001u);
}

TEST(WorkloadIndexTest, DeletingWhatIsNotThereChangesNothing) {
  WorkloadIndex index;
  index.UpsertQueue(MakeQueue("q"));
  const uint64_t generation = index.View().generation();
  index.DeleteQueue("nope");
  index.DeletePodGroup("default/nope");
  EXPECT_EQ(index.View().generation(), generation);
}

// A broken entry stands in for the object: whichever the watch reported
// last is there, never both.
TEST(WorkloadIndexTest, ABrokenEntryReplacesTheObjectUntilItDecodesOrGoes) {
  WorkloadIndex index;
  index.UpsertPodGroup(MakePodGroup("g").Namespace("ml").MinMember(2));
  index.UpsertQueue(MakeQueue("q"));
  const uint64_t before = index.View().generation();
  index.MarkPodGroupBroken({.namespace_ = "ml", .name = "g", .problem = "spec.minMember: bad"});
  index.MarkQueueBroken({.name = "q", .problem = "spec.capability.cpu: bad"});
  EXPECT_GT(index.View().generation(), before);
  EXPECT_EQ(index.View().FindPodGroup("ml/g"), nullptr);
  EXPECT_EQ(index.View().FindQueue("q"), nullptr);
  ASSERT_NE(index.View().FindBrokenPodGroup("ml/g"), nullptr);
  EXPECT_EQ(index.View().FindBrokenPodGroup("ml/g")->problem, "spec.minMember: bad");
  EXPECT_EQ(index.View().FindBrokenQueue("q")->problem, "spec.capability.cpu: bad");
  EXPECT_EQ(index.View().broken_pod_groups().size(), 1u);
  // Fixed: the object is back, the broken entry gone.
  index.UpsertPodGroup(MakePodGroup("g").Namespace("ml").MinMember(3));
  EXPECT_EQ(index.View().FindBrokenPodGroup("ml/g"), nullptr);
  EXPECT_EQ(index.View().FindPodGroup("ml/g")->spec.min_member, 3);
  // Deleted while broken: both gone.
  index.DeleteQueue("q");
  EXPECT_EQ(index.View().FindBrokenQueue("q"), nullptr);
  // Cleared (deleted, never decoded): gone; clearing nothing changes nothing.
  index.MarkPodGroupBroken({.namespace_ = "ml", .name = "h", .problem = "spec: bad"});
  index.ClearBrokenPodGroup("ml/h");
  EXPECT_TRUE(index.View().broken_pod_groups().empty());
  const uint64_t generation = index.View().generation();
  index.ClearBrokenPodGroup("ml/h");
  index.ClearBrokenQueue("nope");
  EXPECT_EQ(index.View().generation(), generation);
}

}  // namespace
}  // namespace muster::extender
