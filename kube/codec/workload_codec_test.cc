// Kubernetes' own PodGroups (scheduling.k8s.io/v1beta1) as muster's gang
// model reads them, and pods joining them (spec.schedulingGroup).
#include "kube/codec/workload_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using codec_test::ReadTestdata;
using codec_test::WithValueAt;

// k8s_podgroup.json: captured from kube-apiserver v1.37.2 (GenericWorkload
// on; managedFields and kubectl's last-applied annotation dropped) while its
// one pod waited for queue "research".
TEST(WorkloadCodecTest, DecodesAGangPodGroup) {
  StatusOr<PodGroup> pg = DecodeKubernetesPodGroup(ReadTestdata("k8s_podgroup.json"));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->api, PodGroupApi::kKubernetes);
  EXPECT_EQ(pg->GangKey(), "scheduling.k8s.io/cap/train");
  EXPECT_EQ(pg->meta.uid, "b8584ec6-a0af-4ad9-806a-9db9a97f176b");
  EXPECT_EQ(pg->spec.min_member, 1);
  EXPECT_EQ(pg->spec.queue, "research") << "from the scheduling.volcano.sh/queue-name annotation";
  EXPECT_EQ(pg->spec.priority_class_name, "");
  EXPECT_EQ(pg->status.phase, "") << "kube-scheduler's status has no Volcano phase";
  ASSERT_EQ(pg->status.conditions.size(), 1u);
  EXPECT_EQ(pg->status.conditions[0].type, "PodGroupInitiallyScheduled");
  EXPECT_EQ(pg->status.conditions[0].reason, "Unschedulable");
}

// What each schedulingPolicy means to muster, and what it refuses (naming
// the field, as the API server's validation would).
struct PolicyCase {
  std::string name;
  const char* pointer;
  std::string value_json;
  int32_t want_min_member = 0;  // when it decodes
  std::string want_error;       // "" when it decodes
  std::string want_queue = "research";
  std::string want_priority_class;
};

const std::vector<PolicyCase> kPolicyCases = {
    {"gang: minCount", "/spec/schedulingPolicy", R"({"gang":{"minCount":3}})", 3, ""},
    {"basic: pods one by one, a gang of one", "/spec/schedulingPolicy", R"({"basic":{}})", 1, ""},
    {"no queue annotation: queue default", "/metadata/annotations", "{}", 1, "", ""},
    {"a priority class", "/spec/priorityClassName", R"("ml-training-high")", 1, "", "research",
     "ml-training-high"},
    {"neither", "/spec/schedulingPolicy", "{}", 0,
     "spec.schedulingPolicy: must set exactly one of basic and gang"},
    {"both", "/spec/schedulingPolicy", R"({"basic":{},"gang":{"minCount":2}})", 0,
     "spec.schedulingPolicy: must set exactly one of basic and gang"},
    {"minCount 0", "/spec/schedulingPolicy/gang/minCount", "0", 0,
     "spec.schedulingPolicy.gang.minCount: must be at least 1"},
    {"no policy", "/spec/schedulingPolicy", "null", 0, "spec.schedulingPolicy: is required"},
    {"no spec", "/spec", "null", 0, "spec: is required"},
    {"minCount a string", "/spec/schedulingPolicy/gang/minCount", R"("8")", 0,
     "spec.schedulingPolicy.gang.minCount"},
};

TEST(WorkloadCodecTest, SchedulingPolicies) {
  const std::string base = ReadTestdata("k8s_podgroup.json");
  for (const PolicyCase& c : kPolicyCases) {
    SCOPED_TRACE(c.name);
    StatusOr<PodGroup> pg = DecodeKubernetesPodGroup(WithValueAt(base, c.pointer, c.value_json));
    if (c.want_error.empty()) {
      ASSERT_TRUE(pg.ok()) << pg.status();
      EXPECT_EQ(pg->spec.min_member, c.want_min_member);
      EXPECT_EQ(pg->spec.queue, c.want_queue);
      EXPECT_EQ(pg->spec.priority_class_name, c.want_priority_class);
      continue;
    }
    ASSERT_FALSE(pg.ok());
    EXPECT_NE(pg.status().message().find(c.want_error), std::string::npos) << pg.status();
  }
}

TEST(WorkloadCodecTest, DecodesAList) {
  const std::string item = ReadTestdata("k8s_podgroup.json");
  StatusOr<ObjectList<PodGroup>> list = DecodeKubernetesPodGroupList(
      R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroupList",)"
      R"("metadata":{"resourceVersion":"4300"},"items":[)" +
      item + "]}");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].api, PodGroupApi::kKubernetes);
  EXPECT_EQ(list->resource_version, "4300");
}

TEST(WorkloadCodecTest, APodJoinsAPodGroupThroughSchedulingGroup) {
  const std::string json = WithValueAt(ReadTestdata("pod_full.json"), "/spec/schedulingGroup",
                                       R"({"podGroupName":"train"})");
  StatusOr<Pod> pod = DecodePod(json);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->spec.scheduling_group, "train");
  StatusOr<Pod> again = DecodePod(EncodePod(*pod));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spec.scheduling_group, "train") << "encoded back";
  StatusOr<Pod> plain = DecodePod(ReadTestdata("pod_full.json"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->spec.scheduling_group, "");
}

}  // namespace
}  // namespace muster::kube
