#include "kube/codec/core_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"
#include "model/gpu_share.h"
#include "model/pod_group.h"
#include "model/quantity.h"

namespace muster::kube {
namespace {

using codec_test::AllLocations;
using codec_test::Parse;
using codec_test::ReadTestdata;
using codec_test::WithValueAt;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using codec_test::At;
using codec_test::Bytes;
using codec_test::ExpectRoundTrip;
using codec_test::StatusOf;
using codec_test::StatusOfDecode;

// ---------------------------------------------------------------------------
// Pod.

TEST(CoreCodecTest, DecodesFullPodMetadata) {
  StatusOr<Pod> pod = DecodePod(ReadTestdata("pod_full.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  const ObjectMeta& m = pod->meta;
  EXPECT_EQ(m.name, "tf-dist-mnist-worker-1");
  EXPECT_EQ(m.namespace_, "ml-team");
  EXPECT_EQ(m.Key(), "ml-team/tf-dist-mnist-worker-1");
  EXPECT_EQ(m.uid, "0b9d3c51-27a4-4f0e-b1d2-5c8e7a6f4d13");
  EXPECT_EQ(m.resource_version, "48211937");
  EXPECT_EQ(m.creation_timestamp, At("2025-03-14T09:26:53Z"));
  EXPECT_FALSE(m.deletion_timestamp.has_value());
  EXPECT_EQ(m.labels.at("volcano.sh/task-spec"), "worker");
  EXPECT_EQ(pod->GroupName(), "tf-dist-mnist-6f1c2b9e-8d4a-4c1e-9a57-3e2f1d0c7b44");
  ASSERT_EQ(m.owner_references.size(), 1u);
  EXPECT_EQ(m.owner_references[0],
            (OwnerReference{"batch.volcano.sh/v1alpha1", "Job", "tf-dist-mnist",
                            "6f1c2b9e-8d4a-4c1e-9a57-3e2f1d0c7b44", true, true}));
}

TEST(CoreCodecTest, DecodesFullPodSpec) {
  StatusOr<Pod> pod = DecodePod(ReadTestdata("pod_full.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  const PodSpec& s = pod->spec;
  ASSERT_EQ(s.init_containers.size(), 2u);
  EXPECT_EQ(s.init_containers[0].restart_policy, "");
  EXPECT_EQ(s.init_containers[1].name, "log-shipper");
  EXPECT_EQ(s.init_containers[1].restart_policy, "Always");  // a sidecar
  ASSERT_EQ(s.containers.size(), 2u);
  EXPECT_EQ(s.containers[0].image, "registry.example.com/ml/tf-dist-mnist:2.15.0-gpu");
  EXPECT_EQ(s.containers[0].resources.requests,
            (Resources{{"cpu", 7500}, {"memory", Bytes("48Gi")}, {"nvidia.com/gpu", 4000}}));
  EXPECT_EQ(s.containers[0].resources.limits,
            (Resources{{"memory", Bytes("48Gi")}, {"nvidia.com/gpu", 4000}}));
  EXPECT_EQ(s.overhead, (Resources{{"cpu", 250}, {"memory", Bytes("120Mi")}}));
  EXPECT_EQ(s.node_name, "gpu-node-03");
  EXPECT_EQ(s.scheduler_name, "volcano");
  EXPECT_EQ(s.priority, 100000);
  EXPECT_EQ(s.priority_class_name, "ml-training-high");
  EXPECT_EQ(s.restart_policy, "OnFailure");
  EXPECT_EQ(s.node_selector.at("nvidia.com/gpu.present"), "true");
  EXPECT_TRUE(s.scheduling_gates.empty());
  ASSERT_EQ(s.tolerations.size(), 4u);
  EXPECT_EQ(s.tolerations[1], (Toleration{"dedicated", "Equal", "ml", "NoSchedule", std::nullopt}));
  EXPECT_EQ(s.tolerations[2].key, "node.kubernetes.io/not-ready");
  EXPECT_EQ(s.tolerations[2].toleration_seconds, 300);
  // The effective request counts the sidecar and the overhead.
  EXPECT_EQ(pod->EffectiveRequest().milli_cpu(), 7500 + 100 + 250 + 250);
}

TEST(CoreCodecTest, DecodesFullPodAffinity) {
  StatusOr<Pod> pod = DecodePod(ReadTestdata("pod_full.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->spec.affinity.has_value());
  const Affinity& a = *pod->spec.affinity;
  ASSERT_TRUE(a.node_affinity.has_value());
  ASSERT_EQ(a.node_affinity->required.size(), 1u);
  const NodeSelectorTerm& term = a.node_affinity->required[0];
  EXPECT_THAT(term.match_expressions,
              ElementsAre(NodeSelectorRequirement{"nvidia.com/gpu.count", "Gt", {"3"}},
                          NodeSelectorRequirement{
                              "node-role.kubernetes.io/control-plane", "DoesNotExist", {}}));
  EXPECT_THAT(term.match_fields,
              ElementsAre(NodeSelectorRequirement{"metadata.name", "NotIn", {"gpu-node-07"}}));
  ASSERT_EQ(a.node_affinity->preferred.size(), 2u);
  EXPECT_EQ(a.node_affinity->preferred[0].weight, 80);
  EXPECT_THAT(a.node_affinity->preferred[0].preference.match_expressions[0].values,
              ElementsAre("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"));
  EXPECT_EQ(a.pod_affinity_json, "");
  // Pod anti-affinity is kept verbatim, as compact JSON of what the server sent.
  rapidjson::Document doc = Parse(ReadTestdata("pod_full.json"));
  EXPECT_EQ(a.pod_anti_affinity_json,
            codec_test::Compact(doc["spec"]["affinity"]["podAntiAffinity"]));
}

TEST(CoreCodecTest, DecodesFullPodStatus) {
  StatusOr<Pod> pod = DecodePod(ReadTestdata("pod_full.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  const PodStatus& st = pod->status;
  EXPECT_EQ(st.phase, "Running");
  EXPECT_EQ(st.qos_class, "Burstable");
  ASSERT_EQ(st.conditions.size(), 5u);
  EXPECT_EQ(st.conditions[2].type, "Ready");
  EXPECT_EQ(st.conditions[2].status, "True");
  EXPECT_EQ(st.conditions[2].last_transition_time, At("2025-03-14T09:31:07Z"));
  EXPECT_TRUE(st.conditions[2].last_probe_time.is_zero());  // null on the wire
  ASSERT_EQ(st.init_container_statuses.size(), 2u);
  EXPECT_EQ(st.init_container_statuses[0],
            (ContainerStatus{"wait-for-ps", true, 0, "terminated", "Completed", 0, std::nullopt}));
  EXPECT_EQ(st.init_container_statuses[1].state, "running");
  ASSERT_EQ(st.container_statuses.size(), 2u);
  // Restarted once after an OOM kill: running now, last exit code 137.
  EXPECT_EQ(st.container_statuses[1],
            (ContainerStatus{"tensorflow", true, 1, "running", "", std::nullopt, 137}));
  EXPECT_FALSE(pod->IsTerminal());
}

TEST(CoreCodecTest, DecodesGatedPod) {
  StatusOr<Pod> pod = DecodePod(ReadTestdata("pod_gated.json"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.generate_name, "llm-finetune-");
  EXPECT_THAT(pod->spec.scheduling_gates, ElementsAre("muster.io/gang", "example.com/quota-check"));
  EXPECT_EQ(pod->spec.priority, 0);
  EXPECT_EQ(pod->spec.node_name, "");
  EXPECT_EQ(pod->status.phase, "Pending");
  ASSERT_EQ(pod->status.conditions.size(), 1u);
  EXPECT_EQ(pod->status.conditions[0].reason, "SchedulingGated");
  EXPECT_EQ(pod->status.conditions[0].message,
            "Scheduling is blocked due to non-empty scheduling gates");
}

TEST(CoreCodecTest, DecodesPodListPage) {
  StatusOr<ObjectList<Pod>> list = DecodePodList(ReadTestdata("pod_list_page.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "48215502");
  EXPECT_THAT(list->continue_token, StartsWith("eyJ2IjoibWV0YS5rOHMuaW8vdjEi"));
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0].meta.name, "resnet50-ddp-master-0");
  EXPECT_TRUE(list->items[0].IsTerminal());
  EXPECT_EQ(list->items[0].status.container_statuses[0].exit_code, 0);
  const ObjectMeta& deleting = list->items[1].meta;
  EXPECT_EQ(deleting.deletion_timestamp, At("2025-03-14T10:15:42Z"));
  EXPECT_THAT(deleting.finalizers, ElementsAre("batch.kubernetes.io/job-tracking"));
  EXPECT_EQ(list->items[1].spec.containers[0].resources.requests.milli_cpu(), 1000);
}

TEST(CoreCodecTest, LastListPageHasNoContinueToken) {
  StatusOr<ObjectList<Pod>> list =
      DecodePodList(R"({"kind":"PodList","metadata":{"resourceVersion":"7"},"items":null})");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "7");
  EXPECT_EQ(list->continue_token, "");
  EXPECT_TRUE(list->items.empty());
}

// ---------------------------------------------------------------------------
// Node.

TEST(CoreCodecTest, DecodesGpuNode) {
  StatusOr<Node> node = DecodeNode(ReadTestdata("node_gpu.json"));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->meta.name, "gpu-node-03");
  EXPECT_EQ(node->meta.Key(), "gpu-node-03");  // cluster-scoped
  EXPECT_EQ(node->meta.labels.at("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
  EXPECT_FALSE(node->unschedulable);
  EXPECT_EQ(node->provider_id, "aws:///eu-west-1b/i-0a1b2c3d4e5f60718");
  EXPECT_EQ(node->capacity.gpus(), 8);
  EXPECT_EQ(node->capacity.milli_cpu(), 96000);
  EXPECT_EQ(node->allocatable.milli_cpu(), 95690);
  EXPECT_EQ(node->allocatable.memory(), Bytes("1140566204Ki"));
  EXPECT_EQ(node->allocatable.Get("ephemeral-storage"), 1813030614318);
  EXPECT_EQ(node->allocatable.Get("pods"), 250);
  EXPECT_EQ(node->allocatable.Get("vpc.amazonaws.com/efa"), 4);
  EXPECT_TRUE(node->allocatable.Has("hugepages-1Gi"));
  ASSERT_EQ(node->taints.size(), 3u);
  EXPECT_EQ(node->taints[0], (Taint{"nvidia.com/gpu", "present", "NoSchedule", Time()}));
  EXPECT_EQ(node->taints[2].time_added, At("2025-03-14T08:00:00Z"));
  ASSERT_EQ(node->conditions.size(), 4u);
  EXPECT_EQ(node->conditions[3].type, "Ready");
  EXPECT_EQ(node->conditions[3].last_heartbeat_time, At("2025-03-14T09:40:31Z"));
  EXPECT_TRUE(node->IsReady());
  EXPECT_THAT(node->addresses,
              ElementsAre(NodeAddress{"InternalIP", "10.24.3.17"},
                          NodeAddress{"InternalDNS", "ip-10-24-3-17.eu-west-1.compute.internal"},
                          NodeAddress{"Hostname", "gpu-node-03"}));
}

TEST(CoreCodecTest, DecodesNodeList) {
  std::string json = R"({"kind":"NodeList","metadata":{"resourceVersion":"99"},"items":[)" +
                     ReadTestdata("node_gpu.json") + "]}";
  StatusOr<ObjectList<Node>> list = DecodeNodeList(json);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "99");
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].allocatable.gpus(), 8);
}

// ---------------------------------------------------------------------------
// Round trips: decode -> encode -> decode gives an equal model, and encoding
// that again gives the same bytes.

TEST(CoreCodecTest, FixturesRoundTrip) {
  for (const char* name : {"pod_full.json", "pod_gated.json"}) {
    SCOPED_TRACE(name);
    ExpectRoundTrip(ReadTestdata(name), DecodePod, EncodePod);
  }
  ExpectRoundTrip(ReadTestdata("node_gpu.json"), DecodeNode, EncodeNode);
  StatusOr<ObjectList<Pod>> list = DecodePodList(ReadTestdata("pod_list_page.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  for (const Pod& pod : list->items) {
    SCOPED_TRACE(pod.meta.name);
    ExpectRoundTrip(EncodePod(pod), DecodePod, EncodePod);
    EXPECT_TRUE(*DecodePod(EncodePod(pod)) == pod);
  }
}

TEST(CoreCodecTest, SubSecondTimesSurviveRoundTrip) {
  std::string json = WithValueAt(ReadTestdata("pod_full.json"), "/metadata/creationTimestamp",
                                 R"("2025-03-14T09:26:53.250Z")");
  StatusOr<Pod> pod = DecodePod(json);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.creation_timestamp, At("2025-03-14T09:26:53Z") + Duration(250000));
  ExpectRoundTrip(json, DecodePod, EncodePod);
}

TEST(CoreCodecTest, DeletionTimestampAtEpochIsKept) {
  Pod pod;
  pod.meta.name = "p";
  pod.meta.deletion_timestamp = Time();
  StatusOr<Pod> again = DecodePod(EncodePod(pod));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->meta.deletion_timestamp, Time());
}

// ---------------------------------------------------------------------------
// Encoders: exact output.

TEST(CoreCodecTest, EncodesPodInKubernetesStyle) {
  Pod pod;
  pod.meta.name = "w-0";
  pod.meta.namespace_ = "team-a";
  pod.meta.annotations = {{"scheduling.k8s.io/group-name", "pg1"}};
  Container c{"main", "img:1", {}, ""};
  c.resources.requests =
      Resources{{"cpu", 1500}, {"memory", Bytes("2Gi")}, {"nvidia.com/gpu", 2000}};
  c.resources.limits = Resources{{"nvidia.com/gpu", 2000}};
  pod.spec.containers = {c};
  pod.spec.init_containers = {Container{"proxy", "envoy:1", {}, "Always"}};
  pod.spec.priority = 0;
  pod.spec.scheduler_name = "default-scheduler";
  pod.spec.tolerations = {
      Toleration{"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 60}};
  pod.spec.affinity = Affinity{
      NodeAffinity{{NodeSelectorTerm{{{"zone", "In", {"a", "b"}}}, {}}},
                   {PreferredSchedulingTerm{5, NodeSelectorTerm{{{"gpu", "Exists", {}}}, {}}}}},
      R"({"requiredDuringSchedulingIgnoredDuringExecution":[]})", ""};
  pod.spec.scheduling_gates = {"muster.io/gang"};
  EXPECT_EQ(EncodePod(pod),
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-0","namespace":"team-a",)"
            R"("annotations":{"scheduling.k8s.io/group-name":"pg1"}},"spec":{)"
            R"("initContainers":[{"name":"proxy","image":"envoy:1","restartPolicy":"Always"}],)"
            R"("containers":[{"name":"main","image":"img:1","resources":)"
            R"({"limits":{"nvidia.com/gpu":"2"},)"
            R"("requests":{"cpu":"1500m","memory":"2Gi","nvidia.com/gpu":"2"}}}],)"
            R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
            R"({"nodeSelectorTerms":[{"matchExpressions":)"
            R"([{"key":"zone","operator":"In","values":["a","b"]}]}]},)"
            R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":)"
            R"({"matchExpressions":[{"key":"gpu","operator":"Exists"}]}}]},)"
            R"("podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[]}},)"
            R"("schedulerName":"default-scheduler",)"
            R"("tolerations":[{"key":"node.kubernetes.io/unreachable",)"
            R"("operator":"Exists","effect":"NoExecute","tolerationSeconds":60}],"priority":0,)"
            R"("schedulingGates":[{"name":"muster.io/gang"}]}})");
}

TEST(CoreCodecTest, EncodesNodeInKubernetesStyle) {
  Node node;
  node.meta.name = "n1";
  node.unschedulable = true;
  node.taints = {Taint{"gpu", "", "NoSchedule", At("2025-01-02T03:04:05Z")}};
  node.capacity = Resources{{"cpu", 8000}, {"memory", Bytes("32Gi")}};
  node.conditions = {Condition{"Ready", "True", "KubeletReady", "", At("2025-01-01T00:00:00Z"),
                               Time(), At("2025-01-02T00:00:00Z"), ""}};
  EXPECT_EQ(EncodeNode(node),
            R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"spec":{"taints":)"
            R"([{"key":"gpu","effect":"NoSchedule","timeAdded":"2025-01-02T03:04:05Z"}],)"
            R"("unschedulable":true},"status":{"capacity":{"cpu":"8","memory":"32Gi"},)"
            R"("conditions":[{"type":"Ready","status":"True",)"
            R"("lastHeartbeatTime":"2025-01-02T00:00:00Z",)"
            R"("lastTransitionTime":"2025-01-01T00:00:00Z","reason":"KubeletReady"}]}})");
}

TEST(CoreCodecTest, EncodesBinding) {
  struct Case {
    std::string name;
    Binding binding;
    std::string want;
  };
  Binding full;
  full.meta.name = "w-0";
  full.meta.namespace_ = "team-a";
  full.meta.uid = "u-1";
  full.meta.labels = {{"ignored", "by the binding subresource"}};
  full.meta.annotations = {{"muster.io/gpus", "0,1"}};
  full.target_node = "gpu-node-03";
  Binding bare;
  bare.meta.name = "w-1";
  bare.meta.namespace_ = "team-a";
  bare.target_node = "n2";
  std::vector<Case> cases = {
      {"uid precondition and annotations", full,
       R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"w-0","namespace":"team-a",)"
       R"("uid":"u-1","annotations":{"muster.io/gpus":"0,1"}},)"
       R"("target":{"apiVersion":"v1","kind":"Node","name":"gpu-node-03"}})"},
      {"name and target only", bare,
       R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"w-1","namespace":"team-a"},)"
       R"("target":{"apiVersion":"v1","kind":"Node","name":"n2"}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(EncodeBinding(c.binding), c.want);
    StatusOr<Binding> back = DecodeBinding(c.want);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->target_node, c.binding.target_node);
    EXPECT_EQ(back->meta.uid, c.binding.meta.uid);
    EXPECT_EQ(back->meta.annotations, c.binding.meta.annotations);
  }
}

TEST(CoreCodecTest, EncodesEviction) {
  struct Case {
    std::string name;
    Eviction eviction;
    std::string want;
  };
  ObjectMeta meta;
  meta.name = "w-0";
  meta.namespace_ = "team-a";
  std::vector<Case> cases = {
      {"grace period and uid precondition", Eviction{meta, 30, "u-1"},
       R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"w-0",)"
       R"("namespace":"team-a"},"deleteOptions":{"gracePeriodSeconds":30,)"
       R"("preconditions":{"uid":"u-1"}}})"},
      {"immediate", Eviction{meta, 0, ""},
       R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"w-0",)"
       R"("namespace":"team-a"},"deleteOptions":{"gracePeriodSeconds":0}})"},
      {"server defaults", Eviction{meta, std::nullopt, ""},
       R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"w-0",)"
       R"("namespace":"team-a"}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(EncodeEviction(c.eviction), c.want);
    StatusOr<Eviction> back = DecodeEviction(c.want);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, c.eviction);
  }
}

constexpr std::string_view kEventJson = R"({
  "apiVersion": "v1", "kind": "Event",
  "metadata": {"name": "tf-dist-mnist-worker-1.182c9a5e7f3b1d20", "namespace": "ml-team",
               "creationTimestamp": "2025-03-14T09:26:53Z", "resourceVersion": "48211950"},
  "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "tf-dist-mnist-worker-1",
                     "namespace": "ml-team", "uid": "0b9d3c51-27a4-4f0e-b1d2-5c8e7a6f4d13",
                     "resourceVersion": "48211937"},
  "reason": "FailedScheduling",
  "message": "gang ml-team/tf-dist-mnist: 2/3 members placeable; waiting for 1 more",
  "type": "Warning",
  "source": {"component": "muster"},
  "firstTimestamp": "2025-03-14T09:26:53Z",
  "lastTimestamp": "2025-03-14T09:27:41Z",
  "count": 4,
  "eventTime": null,
  "reportingComponent": "muster",
  "reportingInstance": "muster-7d9f8-x2k4l"
})";

TEST(CoreCodecTest, DecodesAndEncodesEvent) {
  StatusOr<Event> event = DecodeEvent(kEventJson);
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->involved_object.kind, "Pod");
  EXPECT_EQ(event->involved_object.uid, "0b9d3c51-27a4-4f0e-b1d2-5c8e7a6f4d13");
  EXPECT_EQ(event->reason, "FailedScheduling");
  EXPECT_EQ(event->type, "Warning");
  EXPECT_EQ(event->source_component, "muster");
  EXPECT_EQ(event->count, 4);
  EXPECT_EQ(event->last_timestamp, At("2025-03-14T09:27:41Z"));
  EXPECT_TRUE(event->event_time.is_zero());
  ExpectRoundTrip(kEventJson, DecodeEvent, EncodeEvent);

  Event e;
  e.meta.generate_name = "pg1.";
  e.meta.namespace_ = "team-a";
  e.involved_object =
      ObjectReference{"scheduling.volcano.sh/v1beta1", "PodGroup", "team-a", "pg1", "u-9", "", ""};
  e.reason = "Unschedulable";
  e.message = "queue resource quota insufficient";
  e.type = "Warning";
  e.event_time = At("2025-03-14T09:26:53.123456Z");
  e.action = "Scheduling";
  e.reporting_component = "muster";
  e.reporting_instance = "muster-0";
  EXPECT_EQ(EncodeEvent(e),
            R"({"apiVersion":"v1","kind":"Event","metadata":{"generateName":"pg1.",)"
            R"("namespace":"team-a"},"involvedObject":{"kind":"PodGroup","namespace":"team-a",)"
            R"("name":"pg1","uid":"u-9","apiVersion":"scheduling.volcano.sh/v1beta1"},)"
            R"("reason":"Unschedulable","message":"queue resource quota insufficient",)"
            R"("type":"Warning","eventTime":"2025-03-14T09:26:53.123456Z","action":"Scheduling",)"
            R"("reportingComponent":"muster","reportingInstance":"muster-0"})");
  StatusOr<Event> back = DecodeEvent(EncodeEvent(e));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
}

TEST(AnnotationsPatchTest, SetsTheAnnotationsAndTheUidPreconditionWhenGiven) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> annotations;
    std::string uid;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"one annotation, no precondition",
       {{"muster.io/reserved-node", "node-7"}},
       "",
       R"({"metadata":{"annotations":{"muster.io/reserved-node":"node-7"}}})"},
      {"uid precondition first, keys in order",
       {{"b", "2"}, {"a", "1"}},
       "u-1",
       R"({"metadata":{"uid":"u-1","annotations":{"a":"1","b":"2"}}})"},
      {"characters that need escaping",
       {{"k", "say \"hi\"\n"}},
       "",
       R"({"metadata":{"annotations":{"k":"say \"hi\"\n"}}})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EncodeAnnotationsPatch(c.annotations, c.uid), c.want) << c.name;
  }
}

// Golden JSON patches (the gang controller's, byte for byte): the gate is
// tested before it goes; a pin sets the (tested absent) affinity to the
// reserved node in the same update.
// The admission webhook's patch: the pod's own gates kept, in order.
TEST(SchedulingGatesPatchTest, ListsEveryGate) {
  EXPECT_EQ(EncodeSchedulingGatesPatch({"example.com/quota", "muster.io/gang"}),
            R"([{"op":"add","path":"/spec/schedulingGates","value":)"
            R"([{"name":"example.com/quota"},{"name":"muster.io/gang"}]}])");
}

TEST(LiftGatePatchTest, GoldenUnpinnedAndPinned) {
  EXPECT_EQ(EncodeLiftGatePatch(1, kGangSchedulingGate),
            R"([{"op":"test","path":"/spec/schedulingGates/1/name","value":"muster.io/gang"},)"
            R"({"op":"remove","path":"/spec/schedulingGates/1"}])");
  EXPECT_EQ(
      EncodeLiftGatePatch(0, kGangSchedulingGate, "gpu-a-3"),
      R"([{"op":"test","path":"/spec/affinity","value":null},)"
      R"({"op":"add","path":"/spec/affinity","value":{"nodeAffinity":)"
      R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
      R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu-a-3"]}]}]}}}},)"
      R"({"op":"test","path":"/spec/schedulingGates/0/name","value":"muster.io/gang"},)"
      R"({"op":"remove","path":"/spec/schedulingGates/0"}])");
}

// ---------------------------------------------------------------------------
// Errors name the JSON path of the first bad field.

struct ErrorCase {
  std::string name;
  StatusOfDecode decode;
  std::string json;
  std::string want;  // the start of the message
};

void ExpectErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = c.decode(c.json);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), StartsWith(c.want));
  }
}

TEST(CoreCodecTest, ErrorsNameTheJsonPath) {
  std::string pod = ReadTestdata("pod_full.json");
  std::string node = ReadTestdata("node_gpu.json");
  StatusOfDecode decode_pod = StatusOf(DecodePod);
  StatusOfDecode decode_node = StatusOf(DecodeNode);
  ExpectErrors({
      {"a GPU count that is no quantity", decode_pod,
       WithValueAt(pod, "/spec/containers/0/resources/requests/nvidia.com~1gpu", R"("half")"),
       R"(decode Pod: spec.containers[0].resources.requests["nvidia.com/gpu"]: )"},
      {"an extended resource limit as a fraction number", decode_pod,
       WithValueAt(pod, "/spec/containers/0/resources/limits/example.com~1fpga", "0.5"),
       R"(decode Pod: spec.containers[0].resources.limits["example.com/fpga"]: )"},
      {"bad cpu in a sidecar", decode_pod,
       WithValueAt(pod, "/spec/initContainers/1/resources/requests/cpu", R"("250x")"),
       "decode Pod: spec.initContainers[1].resources.requests.cpu: "},
      {"priority as a string", decode_pod, WithValueAt(pod, "/spec/priority", R"("high")"),
       "decode Pod: spec.priority: expected an integer, got a string"},
      {"priority beyond int32", decode_pod, WithValueAt(pod, "/spec/priority", "2147483648"),
       "decode Pod: spec.priority: integer 2147483648 out of range"},
      {"fractional tolerationSeconds", decode_pod,
       WithValueAt(pod, "/spec/tolerations/2/tolerationSeconds", "1.5"),
       "decode Pod: spec.tolerations[2].tolerationSeconds: expected an integer, got a fraction"},
      {"bad creationTimestamp", decode_pod,
       WithValueAt(pod, "/metadata/creationTimestamp", R"("yesterday")"),
       "decode Pod: metadata.creationTimestamp: "},
      {"creationTimestamp as a number", decode_pod,
       WithValueAt(pod, "/metadata/creationTimestamp", "1741944413"),
       "decode Pod: metadata.creationTimestamp: expected a timestamp, got a number"},
      {"containers as an object", decode_pod, WithValueAt(pod, "/spec/containers", "{}"),
       "decode Pod: spec.containers: expected an array, got an object"},
      {"container as a string", decode_pod, WithValueAt(pod, "/spec/containers/1", R"("metrics")"),
       "decode Pod: spec.containers[1]: expected an object, got a string"},
      {"label value as a number", decode_pod,
       WithValueAt(pod, "/metadata/labels/volcano.sh~1task-spec", "3"),
       R"(decode Pod: metadata.labels["volcano.sh/task-spec"]: expected a string, got a number)"},
      {"podAntiAffinity as an array", decode_pod,
       WithValueAt(pod, "/spec/affinity/podAntiAffinity", "[]"),
       "decode Pod: spec.affinity.podAntiAffinity: expected an object, got an array"},
      {"node selector value as a number", decode_pod,
       WithValueAt(pod,
                   "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/"
                   "nodeSelectorTerms/0/matchExpressions/0/values/0",
                   "3"),
       "decode Pod: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].values[0]: expected a string, got a number"},
      {"container state as a string", decode_pod,
       WithValueAt(pod, "/status/containerStatuses/1/state/running", R"("yes")"),
       "decode Pod: status.containerStatuses[1].state.running: expected an object, got a string"},
      {"exit code beyond int32", decode_pod,
       WithValueAt(pod, "/status/initContainerStatuses/0/state/terminated/exitCode", "4294967296"),
       "decode Pod: status.initContainerStatuses[0].state.terminated.exitCode: integer "
       "4294967296 out of range"},
      {"last exit code as a string", decode_pod,
       WithValueAt(pod, "/status/containerStatuses/1/lastState/terminated/exitCode", R"("137")"),
       "decode Pod: status.containerStatuses[1].lastState.terminated.exitCode: expected an "
       "integer, got a string"},
      {"scheduling gate as a string", decode_pod,
       WithValueAt(pod, "/spec/schedulingGates", R"(["muster.io/gang"])"),
       "decode Pod: spec.schedulingGates[0]: expected an object, got a string"},
      {"root is an array", decode_pod, "[]",
       "decode Pod: <root>: expected an object, got an array"},
      {"not JSON", decode_pod, R"({"metadata": )", "decode Pod: invalid JSON at offset "},
      {"negative allocatable GPUs", decode_node,
       WithValueAt(node, "/status/allocatable/nvidia.com~1gpu", "-1"),
       R"(decode Node: status.allocatable["nvidia.com/gpu"]: )"},
      {"bad taint timeAdded", decode_node,
       WithValueAt(node, "/spec/taints/2/timeAdded", R"("2025-13-01T00:00:00Z")"),
       "decode Node: spec.taints[2].timeAdded: "},
      {"unschedulable as a string", decode_node,
       WithValueAt(node, "/spec/unschedulable", R"("true")"),
       "decode Node: spec.unschedulable: expected a boolean, got a string"},
      {"bad heartbeat", decode_node,
       WithValueAt(node, "/status/conditions/3/lastHeartbeatTime", R"("now")"),
       "decode Node: status.conditions[3].lastHeartbeatTime: "},
      {"bad cpu in a list item", StatusOf(DecodePodList),
       WithValueAt(ReadTestdata("pod_list_page.json"),
                   "/items/1/spec/containers/0/resources/requests/cpu", R"("1x")"),
       "decode PodList: items[1].spec.containers[0].resources.requests.cpu: "},
      {"list continue as a number", StatusOf(DecodePodList),
       WithValueAt(ReadTestdata("pod_list_page.json"), "/metadata/continue", "1"),
       "decode PodList: metadata.continue: expected a string, got a number"},
      {"binding target as a string", StatusOf(DecodeBinding),
       R"({"metadata":{"name":"p"},"target":"n1"})",
       "decode Binding: target: expected an object, got a string"},
      {"eviction grace period as a string", StatusOf(DecodeEviction),
       R"({"metadata":{"name":"p"},"deleteOptions":{"gracePeriodSeconds":"30"}})",
       "decode Eviction: deleteOptions.gracePeriodSeconds: expected an integer, got a string"},
      {"event count beyond int32", StatusOf(DecodeEvent), R"({"count": -2147483649})",
       "decode Event: count: integer -2147483649 out of range"},
      {"bad event microtime", StatusOf(DecodeEvent), R"({"eventTime": "2025-03-14 09:26:53"})",
       "decode Event: eventTime: "},
  });
}

// GPUs are decoded in thousandths: half a GPU reads (a Volcano Job's template
// may ask it), and the pod's GPU demand then says why a pod cannot.
TEST(CoreCodecTest, HalfAGpuDecodesInThousandths) {
  StatusOr<Pod> pod =
      DecodePod(WithValueAt(ReadTestdata("pod_full.json"),
                            "/spec/containers/0/resources/requests/nvidia.com~1gpu", R"("0.5")"));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->spec.containers[0].resources.requests.milli_gpus(), 500);
  EXPECT_THAT(GpuDemandOf(*pod).status().message(), HasSubstr("muster.io/gpu-fraction"));
}

// What is kept of an object that does not decode: its identity, each field
// read on its own.
TEST(CoreCodecTest, DecodesTheIdentityOfAnyObject) {
  struct Case {
    std::string name;
    std::string json;
    ObjectMeta want;
  };
  const std::vector<Case> cases = {
      {"a Job whose spec does not decode",
       ReadTestdata("job_undecodable.json"),
       {.name = "bad-cpu",
        .namespace_ = "ml-team",
        .uid = "0b1c2d3e-4f50-4a61-8b72-9c8dae0f1a2b",
        .resource_version = "48211700",
        .generation = 1}},
      {"a cluster-scoped Queue",
       ReadTestdata("queue_undecodable.json"),
       {.name = "negative",
        .uid = "2d3e4f50-6172-4c83-9d94-beaf0c213c4d",
        .resource_version = "48211702",
        .generation = 1}},
      {"broken labels do not hide the name",
       R"({"metadata":{"name":"n","labels":5,"uid":"u","resourceVersion":"7"}})",
       {.name = "n", .uid = "u", .resource_version = "7"}},
      {"a field of the wrong type stays empty, the others read",
       R"({"metadata":{"name":"n","namespace":3,"generation":"x","resourceVersion":"7"}})",
       {.name = "n", .resource_version = "7"}},
      {"metadata not an object", R"({"metadata":[1]})", {}},
      {"not an object", "[1,2]", {}},
      {"not JSON", "{", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DecodeObjectIdentity(c.json), c.want);
  }
}

// What a user is told on the object starts with the JSON path.
TEST(CoreCodecTest, DecodeProblemStartsWithTheJsonPath) {
  EXPECT_EQ(DecodeProblem(DecodePod(R"({"spec":{"priority":"high"}})").status()),
            "spec.priority: expected an integer, got a string");
  EXPECT_EQ(DecodeProblem(InvalidArgumentError("no context: here")), "no context: here");
  EXPECT_THAT(DecodeProblem(DecodePod("{").status()), StartsWith("invalid JSON at offset"));
}

TEST(CoreCodecTest, NullFieldsReadAsUnset) {
  std::string pod = ReadTestdata("pod_full.json");
  struct Case {
    std::string name;
    const char* pointer;
    std::function<bool(const Pod&)> unset;
  };
  std::vector<Case> cases = {
      {"priority", "/spec/priority", [](const Pod& p) { return !p.spec.priority.has_value(); }},
      {"affinity", "/spec/affinity", [](const Pod& p) { return !p.spec.affinity.has_value(); }},
      {"tolerations", "/spec/tolerations", [](const Pod& p) { return p.spec.tolerations.empty(); }},
      {"container", "/spec/containers/0",
       [](const Pod& p) {
         return p.spec.containers.size() == 2 && p.spec.containers[0] == Container{};
       }},
      {"requests", "/spec/containers/0/resources/requests",
       [](const Pod& p) { return p.spec.containers[0].resources.requests.empty(); }},
      {"a single request", "/spec/containers/0/resources/requests/nvidia.com~1gpu",
       [](const Pod& p) { return !p.spec.containers[0].resources.requests.Has("nvidia.com/gpu"); }},
      {"status", "/status", [](const Pod& p) { return p.status == PodStatus{}; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<Pod> decoded = DecodePod(WithValueAt(pod, c.pointer, "null"));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_TRUE(c.unset(*decoded));
  }
}

}  // namespace
}  // namespace muster::kube
