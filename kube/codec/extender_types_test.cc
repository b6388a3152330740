#include "kube/codec/extender_types.h"

#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

// ---------------------------------------------------------------------------
// Golden files and a strict JSON comparison.

std::string ReadGolden(const std::string& file) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/extender/" + file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* KindName(const JsonValue& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "boolean";
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  return "fraction";
}

// The first difference between two JSON values, "" when they are equal.
// Stricter than rapidjson's operator==: 10 and 10.0 differ (Go rejects a
// fractional score), keys are case-sensitive, and null is not absent.
std::string FirstDifference(const JsonValue& a, const JsonValue& b, const std::string& path) {
  const std::string at = path.empty() ? "<root>" : path;
  if (std::string(KindName(a)) != KindName(b)) {
    return at + ": " + KindName(a) + " vs " + KindName(b);
  }
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) {
      return at + ": " + ToCompactJson(a) + " vs " + ToCompactJson(b);
    }
    for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it) {
      std::string key = it->name.GetString();
      auto other = b.FindMember(it->name);
      if (other == b.MemberEnd()) return at + ": key \"" + key + "\" only on the left";
      std::string diff = FirstDifference(it->value, other->value, path + "." + key);
      if (!diff.empty()) return diff;
    }
    return "";
  }
  if (a.IsArray()) {
    if (a.Size() != b.Size())
      return at + ": array sizes " + std::to_string(a.Size()) + " vs " + std::to_string(b.Size());
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      std::string diff = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return "";
  }
  if (a != b) return at + ": " + ToCompactJson(a) + " vs " + ToCompactJson(b);
  return "";
}

// kube-scheduler's pods come from an informer and carry no TypeMeta, while
// EncodePodTo writes apiVersion/kind (every reader ignores them). Removes
// exactly that pair from embedded pods so the rest compares byte for byte.
void StripPodTypeMeta(JsonValue& v) {
  if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) StripPodTypeMeta(v[i]);
    return;
  }
  if (!v.IsObject()) return;
  if (v.HasMember("kind") && v["kind"] == "Pod" && v.HasMember("apiVersion") &&
      v["apiVersion"] == "v1" && v.HasMember("metadata")) {
    v.RemoveMember("kind");
    v.RemoveMember("apiVersion");
  }
  // Indexing, not iterator comparison: rapidjson 1.1.0's mutable member
  // iterators trip clang's -Wambiguous-reversed-operator under C++20.
  for (rapidjson::SizeType i = 0; i < v.MemberCount(); ++i) {
    StripPodTypeMeta((v.MemberBegin() + i)->value);
  }
}

// Asserts that `encoded` is the golden document `file`, canonically.
void ExpectSameJson(const std::string& encoded, const std::string& file) {
  rapidjson::Document actual;
  rapidjson::Document golden;
  ASSERT_TRUE(ParseDocument(encoded, &actual).ok()) << encoded;
  ASSERT_TRUE(ParseDocument(ReadGolden(file), &golden).ok()) << file;
  StripPodTypeMeta(actual);
  EXPECT_EQ(FirstDifference(actual, golden, ""), "") << "encoded: " << encoded;
}

Time T(std::string_view rfc3339) { return *ParseRfc3339(rfc3339); }

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kKi = 1024;

// ---------------------------------------------------------------------------
// The objects the golden files hold.

Pod TrainPod() {
  Pod pod;
  pod.meta.name = "train-0";
  pod.meta.namespace_ = "ml";
  pod.meta.uid = "0b6f3c1e-1111-4c1a-9d7e-aaaaaaaaaaaa";
  pod.meta.resource_version = "48213";
  pod.meta.creation_timestamp = T("2025-05-01T10:00:00Z");
  pod.meta.labels = {{"app", "train"}};
  pod.meta.annotations = {{"scheduling.k8s.io/group-name", "train"}};
  Container main{.name = "main", .image = "trainer:1"};
  main.resources.limits = Resources{{"nvidia.com/gpu", 8000}};
  main.resources.requests =
      Resources{{"cpu", 32000}, {"memory", 256 * kGi}, {"nvidia.com/gpu", 8000}};
  pod.spec.containers = {main};
  pod.spec.restart_policy = "Never";
  pod.spec.scheduler_name = "volcano";
  pod.spec.priority = 0;
  pod.status.phase = "Pending";
  pod.status.qos_class = "Burstable";
  return pod;
}

// The preemptor of the preempt files: TrainPod with a priority class.
Pod PreemptorPod() {
  Pod pod = TrainPod();
  pod.meta.resource_version.clear();
  pod.meta.labels.clear();
  pod.spec.restart_policy.clear();
  pod.spec.priority = 1000;
  pod.spec.priority_class_name = "research-high";
  pod.status.qos_class.clear();
  return pod;
}

Pod InferPod() {
  Pod pod;
  pod.meta.name = "infer-7";
  pod.meta.namespace_ = "serving";
  pod.meta.uid = "6a1d2f00-2222-4b7e-8c11-bbbbbbbbbbbb";
  pod.meta.creation_timestamp = T("2025-05-01T11:30:00Z");
  Container server{.name = "server", .image = "infer:2"};
  server.resources.limits = Resources{{"nvidia.com/gpu", 1000}};
  server.resources.requests =
      Resources{{"cpu", 500}, {"memory", 2 * kGi}, {"nvidia.com/gpu", 1000}};
  pod.spec.containers = {server};
  pod.spec.scheduler_name = "volcano";
  pod.status.phase = "Pending";
  return pod;
}

Pod VictimPod(const std::string& name, const std::string& uid, std::string_view created) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_ = "scratch";
  pod.meta.uid = uid;
  pod.meta.creation_timestamp = T(created);
  Container work{.name = "work", .image = "batch:3"};
  work.resources.requests = Resources{{"cpu", 8000}, {"nvidia.com/gpu", 4000}};
  work.resources.limits = Resources{{"nvidia.com/gpu", 4000}};
  pod.spec.containers = {work};
  pod.spec.node_name = "gpu-a1";
  pod.spec.scheduler_name = "volcano";
  pod.spec.priority = 10;
  pod.status.phase = "Running";
  pod.status.qos_class = "Burstable";
  return pod;
}

// The v1.33-style pod: "creationTimestamp": null, null lastProbeTime, Go's
// \u003c \u003e \u0026 escapes and many fields muster does not model.
Pod EvalPod() {
  Pod pod;
  pod.meta.name = "eval-3";
  pod.meta.generate_name = "eval-";
  pod.meta.namespace_ = "ml";
  pod.meta.uid = "9c0ffee0-5555-4c2d-a1b2-eeeeeeeeeeee";
  pod.meta.resource_version = "51007";
  pod.meta.labels = {{"app", "eval"}, {"volcano.sh/job-name", "eval"}};
  pod.meta.annotations = {{"scheduling.k8s.io/group-name", "eval"},
                          {"example.com/note", "needs < 2 GPUs & > 16Gi"}};
  pod.meta.owner_references = {{.api_version = "batch.volcano.sh/v1alpha1",
                                .kind = "Job",
                                .name = "eval",
                                .uid = "1e1e1e1e-6666-4d3c-9f00-ffffffffffff",
                                .controller = true,
                                .block_owner_deletion = true}};
  Container eval{.name = "eval", .image = "eval:5"};
  eval.resources.limits = Resources{{"memory", 16 * kGi}, {"nvidia.com/gpu", 1000}};
  eval.resources.requests =
      Resources{{"cpu", 4000}, {"memory", 16 * kGi}, {"nvidia.com/gpu", 1000}};
  pod.spec.containers = {eval};
  pod.spec.restart_policy = "OnFailure";
  pod.spec.scheduler_name = "volcano";
  pod.spec.tolerations = {{.key = "node.kubernetes.io/not-ready",
                           .op = "Exists",
                           .effect = "NoExecute",
                           .toleration_seconds = 300},
                          {.key = "node.kubernetes.io/unreachable",
                           .op = "Exists",
                           .effect = "NoExecute",
                           .toleration_seconds = 300}};
  pod.spec.priority = 0;
  pod.status.phase = "Pending";
  pod.status.qos_class = "Burstable";
  pod.status.conditions = {{.type = "PodScheduled",
                            .status = "False",
                            .reason = "Unschedulable",
                            .message = "0/4 nodes are available: 4 gang eval waits for 3 more "
                                       "members.",
                            .last_transition_time = T("2025-05-01T12:00:03Z")}};
  return pod;
}

Node GpuA1() {
  Node node;
  node.meta.name = "gpu-a1";
  node.meta.uid = "f3c5a7e2-0001-4d2c-9e3f-cccccccccccc";
  node.meta.resource_version = "90211";
  node.meta.creation_timestamp = T("2025-04-01T08:00:00Z");
  node.meta.labels = {{"kubernetes.io/hostname", "gpu-a1"},
                      {"kubernetes.io/os", "linux"},
                      {"nvidia.com/gpu.product", "H100-SXM5-80GB"},
                      {"topology.kubernetes.io/zone", "zone-a"}};
  node.meta.annotations = {{"node.alpha.kubernetes.io/ttl", "0"}};
  node.provider_id = "kind://docker/kind/gpu-a1";
  node.capacity = Resources{
      {"cpu", 64000}, {"memory", 1056462216 * kKi}, {"nvidia.com/gpu", 8000}, {"pods", 110}};
  node.allocatable = Resources{
      {"cpu", 63500}, {"memory", 1040000000 * kKi}, {"nvidia.com/gpu", 8000}, {"pods", 110}};
  node.conditions = {{.type = "Ready",
                      .status = "True",
                      .reason = "KubeletReady",
                      .message = "kubelet is posting ready status",
                      .last_transition_time = T("2025-04-01T08:01:10Z"),
                      .last_heartbeat_time = T("2025-05-01T11:29:40Z")}};
  node.addresses = {{"InternalIP", "172.18.0.3"}, {"Hostname", "gpu-a1"}};
  return node;
}

Node GpuB1() {
  Node node;
  node.meta.name = "gpu-b1";
  node.meta.uid = "f3c5a7e2-0002-4d2c-9e3f-dddddddddddd";
  node.meta.resource_version = "90377";
  node.meta.creation_timestamp = T("2025-04-01T08:00:05Z");
  node.meta.labels = {{"kubernetes.io/hostname", "gpu-b1"},
                      {"topology.kubernetes.io/zone", "zone-b"}};
  node.unschedulable = true;
  node.taints = {{"node.kubernetes.io/unschedulable", "", "NoSchedule", T("2025-05-01T09:00:00Z")},
                 {"nvidia.com/gpu", "present", "NoSchedule", Time()}};
  node.capacity = Resources{
      {"cpu", 32000}, {"memory", 263856512 * kKi}, {"nvidia.com/gpu", 4000}, {"pods", 110}};
  node.allocatable = node.capacity;
  node.conditions = {{.type = "Ready",
                      .status = "False",
                      .reason = "KubeletNotReady",
                      .message = "container runtime network not ready",
                      .last_transition_time = T("2025-05-01T10:15:00Z"),
                      .last_heartbeat_time = T("2025-05-01T11:29:38Z")}};
  return node;
}

// A node as muster receives it: decoded, plus the item verbatim (compact).
NodeWithRaw FromGolden(Node node, const std::string& file, const char* list_key, int index) {
  rapidjson::Document doc;
  EXPECT_TRUE(ParseDocument(ReadGolden(file), &doc).ok());
  return NodeWithRaw{std::move(node), ToCompactJson(doc[list_key]["items"][index])};
}

// ---------------------------------------------------------------------------
// Golden cases, both directions.

struct GoldenCase {
  std::string name;
  std::string file;
  // Decodes the file and expects the model; then expects the model's
  // encoding to be `encode_file` (canonically); then that encode and decode
  // round-trip. With no encode_file the file is decode-only (it holds what
  // our encoder never writes, such as lower-case keys).
  std::function<void(const std::string& json, const std::string& encode_file)> check;
  std::string encode_file;
};

template <typename T, typename Decode, typename Encode>
GoldenCase Golden(std::string name, std::string file, T expected, Decode decode, Encode encode,
                  std::string encode_file) {
  auto check = [expected, decode, encode](const std::string& json, const std::string& encode_file) {
    StatusOr<T> decoded = decode(json);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_TRUE(*decoded == expected)
        << "decoded, re-encoded: " << encode(*decoded) << "\nexpected: " << encode(expected);
    if (!encode_file.empty()) ExpectSameJson(encode(expected), encode_file);
    StatusOr<T> again = decode(encode(*decoded));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(*again == *decoded) << "round trip: " << encode(*again);
  };
  return GoldenCase{std::move(name), file, check, std::move(encode_file)};
}

std::vector<GoldenCase> GoldenCases() {
  const std::vector<std::string> kCandidates = {"gpu-a1", "gpu-a2", "gpu-b1", "gpu-b2"};
  std::vector<GoldenCase> cases;

  ExtenderArgs cache_args{.pod = TrainPod(), .nodes = std::nullopt, .node_names = kCandidates};
  cases.push_back(Golden("filter request, cache mode", "filter_args_cache.json", cache_args,
                         DecodeExtenderArgs, EncodeExtenderArgs, "filter_args_cache.json"));
  cases.push_back(Golden("filter request, lower-case keys", "filter_args_lowercase.json",
                         cache_args, DecodeExtenderArgs, EncodeExtenderArgs,
                         "filter_args_cache.json"));

  ExtenderArgs full_args{
      .pod = InferPod(),
      .nodes =
          std::vector<NodeWithRaw>{FromGolden(GpuA1(), "filter_args_noncache.json", "Nodes", 0),
                                   FromGolden(GpuB1(), "filter_args_noncache.json", "Nodes", 1)},
      .node_names = std::nullopt};
  cases.push_back(Golden("filter request, non-cache mode", "filter_args_noncache.json", full_args,
                         DecodeExtenderArgs, EncodeExtenderArgs, "filter_args_noncache.json"));

  ExtenderArgs v133_args{.pod = EvalPod(),
                         .node_names = std::vector<std::string>{"gpu-a1", "gpu-b1"}};
  cases.push_back(Golden("filter request, v1.33 pod", "filter_args_v133_pod.json", v133_args,
                         DecodeExtenderArgs, EncodeExtenderArgs, ""));

  ExtenderFilterResult cache_reply{
      .node_names = std::vector<std::string>{"gpu-a1", "gpu-a2"},
      .failed_nodes = {{"gpu-b1", "gang placement needs NVLink domain A"}},
      .failed_and_unresolvable_nodes = {{"gpu-b2", "node not in queue's GPU pool"}}};
  cases.push_back(Golden("filter reply, cache mode", "filter_result_cache.json", cache_reply,
                         DecodeExtenderFilterResult, EncodeExtenderFilterResult,
                         "filter_result_cache.json"));

  ExtenderFilterResult full_reply{.nodes = std::vector<NodeWithRaw>{FromGolden(
                                      GpuA1(), "filter_result_noncache.json", "Nodes", 0)},
                                  .failed_nodes = {{"gpu-b1", "node is not ready"}}};
  cases.push_back(Golden("filter reply, non-cache mode", "filter_result_noncache.json", full_reply,
                         DecodeExtenderFilterResult, EncodeExtenderFilterResult,
                         "filter_result_noncache.json"));

  ExtenderFilterResult error_reply{.error = "pod group ml/train not found"};
  cases.push_back(Golden("filter reply, error", "filter_result_error.json", error_reply,
                         DecodeExtenderFilterResult, EncodeExtenderFilterResult,
                         "filter_result_error.json"));

  HostPriorityList scores = {{"gpu-a1", 10}, {"gpu-a2", 4}, {"gpu-b1", 0}};
  cases.push_back(Golden("prioritize reply", "prioritize_result.json", scores,
                         DecodeHostPriorityList, EncodeHostPriorityList, "prioritize_result.json"));

  ExtenderBindingArgs bind{"train-0", "ml", "0b6f3c1e-1111-4c1a-9d7e-aaaaaaaaaaaa", "gpu-a1"};
  cases.push_back(Golden("bind request", "bind_args.json", bind, DecodeExtenderBindingArgs,
                         EncodeExtenderBindingArgs, "bind_args.json"));
  cases.push_back(Golden("bind reply, success", "bind_result_success.json", ExtenderBindingResult{},
                         DecodeExtenderBindingResult, EncodeExtenderBindingResult,
                         "bind_result_success.json"));
  ExtenderBindingResult bind_failed{
      "binding ml/train-0 to gpu-a1: Operation cannot be fulfilled on pods/binding \"train-0\": "
      "pod train-0 is already assigned to node \"gpu-a2\""};
  cases.push_back(Golden("bind reply, failure", "bind_result_failure.json", bind_failed,
                         DecodeExtenderBindingResult, EncodeExtenderBindingResult,
                         "bind_result_failure.json"));

  const MetaVictims a1_meta{
      .pods = {{"5d2e0a4b-3333-4f1e-b2c4-000000000001"}, {"5d2e0a4b-3333-4f1e-b2c4-000000000002"}},
      .num_pdb_violations = 0};
  ExtenderPreemptionArgs preempt_meta{
      .pod = PreemptorPod(),
      .node_name_to_victims = std::nullopt,
      .node_name_to_meta_victims = std::map<std::string, MetaVictims>{
          {"gpu-a1", a1_meta},
          {"gpu-a2",
           {.pods = {{"77aa0c5d-4444-4a9b-8d6e-000000000003"}}, .num_pdb_violations = 1}}}};
  cases.push_back(Golden("preempt request, cache mode", "preempt_args_cache.json", preempt_meta,
                         DecodeExtenderPreemptionArgs, EncodeExtenderPreemptionArgs,
                         "preempt_args_cache.json"));

  ExtenderPreemptionArgs preempt_full{
      .pod = PreemptorPod(),
      .node_name_to_victims =
          std::map<std::string, Victims>{
              {"gpu-a1",
               {.pods = {VictimPod("batch-low-1", "5d2e0a4b-3333-4f1e-b2c4-000000000001",
                                   "2025-04-30T22:00:00Z"),
                         VictimPod("batch-low-2", "5d2e0a4b-3333-4f1e-b2c4-000000000002",
                                   "2025-04-30T22:00:01Z")},
                .num_pdb_violations = 0}}},
      .node_name_to_meta_victims = std::nullopt};
  cases.push_back(Golden("preempt request, non-cache mode", "preempt_args_noncache.json",
                         preempt_full, DecodeExtenderPreemptionArgs, EncodeExtenderPreemptionArgs,
                         "preempt_args_noncache.json"));

  ExtenderPreemptionResult preempt_reply{
      .node_name_to_meta_victims = std::map<std::string, MetaVictims>{{"gpu-a1", a1_meta}}};
  cases.push_back(Golden("preempt reply", "preempt_result.json", preempt_reply,
                         DecodeExtenderPreemptionResult, EncodeExtenderPreemptionResult,
                         "preempt_result.json"));
  return cases;
}

TEST(ExtenderTypesTest, GoldenFilesDecodeAndEncode) {
  for (const GoldenCase& c : GoldenCases()) {
    SCOPED_TRACE(c.name + " (" + c.file + ")");
    std::string json = ReadGolden(c.file);
    ASSERT_FALSE(json.empty()) << "missing golden file";
    c.check(json, c.encode_file);
  }
}

// ---------------------------------------------------------------------------
// Inline documents: what the golden files do not show.

TEST(ExtenderTypesTest, NullAndAbsentFieldsReadAsUnset) {
  struct Case {
    std::string name;
    std::string json;
    ExtenderFilterResult want;
  };
  const std::vector<Case> cases = {
      {"every field null",
       R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,)"
       R"("Error":null})",
       {}},
      {"empty object: no key at all, zero feasible nodes", "{}", {}},
      {"empty name list is present, not unset",
       R"({"NodeNames":[]})",
       {.node_names = std::vector<std::string>{}}},
      {"NodeList without items is an empty list",
       R"({"Nodes":{"metadata":{}}})",
       {.nodes = std::vector<NodeWithRaw>{}}},
      {"NodeList with null items is an empty list",
       R"({"Nodes":{"items":null}})",
       {.nodes = std::vector<NodeWithRaw>{}}},
      {"a null reason keeps the node failed",
       R"({"FailedNodes":{"n1":null,"n2":"full"}})",
       {.failed_nodes = {{"n1", ""}, {"n2", "full"}}}},
      {"unknown keys are ignored",
       R"({"Error":"x","Extra":{"a":[1,2]},"Error2":5})",
       {.error = "x"}},
      {"mixed-case keys",
       R"({"nODEnAMES":["a"],"error":"e","failednodes":{"b":"r"}})",
       {.node_names = std::vector<std::string>{"a"}, .failed_nodes = {{"b", "r"}}, .error = "e"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<ExtenderFilterResult> got = DecodeExtenderFilterResult(c.json);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(*got == c.want) << EncodeExtenderFilterResult(*got);
  }
}

TEST(ExtenderTypesTest, NullValuesInsideOtherMessages) {
  struct Case {
    std::string name;
    std::function<bool()> decodes_as_expected;
  };
  const std::vector<Case> cases = {
      {"bind reply {} is success",
       [] {
         auto r = DecodeExtenderBindingResult("{}");
         return r.ok() && r->error.empty();
       }},
      {"bind reply with null Error is success",
       [] {
         auto r = DecodeExtenderBindingResult(R"({"Error":null})");
         return r.ok() && r->error.empty();
       }},
      {"null prioritize reply is an empty list",
       [] {
         auto r = DecodeHostPriorityList("null");
         return r.ok() && r->empty();
       }},
      {"null Pod is the zero pod",
       [] {
         auto r = DecodeExtenderArgs(R"({"Pod":null,"Nodes":null,"NodeNames":["a"]})");
         return r.ok() && r->pod == Pod{} && r->node_names == std::vector<std::string>{"a"};
       }},
      {"null victims entry is a node with no victims",
       [] {
         auto r = DecodeExtenderPreemptionResult(R"({"NodeNameToMetaVictims":{"n1":null}})");
         return r.ok() && r->node_name_to_meta_victims ==
                              std::map<std::string, MetaVictims>{{"n1", MetaVictims{}}};
       }},
      {"preempt reply {} has no victims map",
       [] {
         auto r = DecodeExtenderPreemptionResult("{}");
         return r.ok() && !r->node_name_to_meta_victims.has_value();
       }},
      {"null NodeList item is a zero node kept as null",
       [] {
         auto r = DecodeExtenderArgs(R"({"Nodes":{"items":[null]}})");
         return r.ok() && r->nodes && r->nodes->size() == 1 && (*r->nodes)[0].node == Node{} &&
                (*r->nodes)[0].raw_json == "null";
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.decodes_as_expected());
  }
}

TEST(ExtenderTypesTest, EncodingWritesEveryKey) {
  struct Case {
    std::string name;
    std::string encoded;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty filter reply: nulls for unset lists, {} for the failure maps",
       EncodeExtenderFilterResult({}),
       R"({"Nodes":null,"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
       R"("Error":""})"},
      {"empty name list stays a list",
       EncodeExtenderFilterResult({.node_names = std::vector<std::string>{}}),
       R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":{},)"
       R"("Error":""})"},
      {"empty prioritize reply is a bare empty array", EncodeHostPriorityList({}), "[]"},
      {"scores are integers", EncodeHostPriorityList({{"n", kMaxExtenderPriority}}),
       R"([{"Host":"n","Score":10}])"},
      {"bind success writes an empty Error", EncodeExtenderBindingResult({}), R"({"Error":""})"},
      {"no victims map is null", EncodeExtenderPreemptionResult({}),
       R"({"NodeNameToMetaVictims":null})"},
      {"a node with no victims writes an empty Pods list",
       EncodeExtenderPreemptionResult(
           {.node_name_to_meta_victims = std::map<std::string, MetaVictims>{{"n", MetaVictims{}}}}),
       R"({"NodeNameToMetaVictims":{"n":{"Pods":[],"NumPDBViolations":0}}})"},
      {"a node without raw JSON is encoded from the model",
       EncodeExtenderFilterResult(
           {.nodes = std::vector<NodeWithRaw>{NodeWithRaw{.node = Node{.meta = {.name = "n"}}}}}),
       R"({"Nodes":{"metadata":{},"items":[)" + EncodeNode(Node{.meta = {.name = "n"}}) +
           R"(]},"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.encoded, c.want);
  }
}

TEST(ExtenderTypesTest, NonCacheNodesAreEchoedVerbatim) {
  // The filter reply in non-cache mode must hand kube-scheduler the very
  // Node objects it sent, including every field muster does not model.
  StatusOr<ExtenderArgs> args = DecodeExtenderArgs(ReadGolden("filter_args_noncache.json"));
  ASSERT_TRUE(args.ok()) << args.status();
  ExtenderFilterResult reply{.nodes = std::vector<NodeWithRaw>{(*args->nodes)[0]},
                             .failed_nodes = {{"gpu-b1", "node is not ready"}}};
  ExpectSameJson(EncodeExtenderFilterResult(reply), "filter_result_noncache.json");
  EXPECT_NE((*args->nodes)[0].raw_json.find("\"kubeletVersion\":\"v1.33.1\""), std::string::npos);
}

// ---------------------------------------------------------------------------
// Errors name the JSON path of the first bad value.

TEST(ExtenderTypesTest, ErrorsNameThePath) {
  struct Case {
    std::string name;
    std::function<Status(std::string_view)> decode;
    std::string json;
    std::string want;
  };
  auto args = [](std::string_view j) { return DecodeExtenderArgs(j).status(); };
  auto filter = [](std::string_view j) { return DecodeExtenderFilterResult(j).status(); };
  auto scores = [](std::string_view j) { return DecodeHostPriorityList(j).status(); };
  auto bind = [](std::string_view j) { return DecodeExtenderBindingArgs(j).status(); };
  auto bind_result = [](std::string_view j) { return DecodeExtenderBindingResult(j).status(); };
  auto preempt = [](std::string_view j) { return DecodeExtenderPreemptionArgs(j).status(); };
  auto preempt_result = [](std::string_view j) {
    return DecodeExtenderPreemptionResult(j).status();
  };
  const std::vector<Case> cases = {
      {"score is a string", scores, R"([{"Host":"a","Score":1},{"Host":"b","Score":"5"}])",
       "decode HostPriorityList: [1].Score: expected an integer, got a string"},
      {"score is a fraction", scores, R"([{"Host":"a","Score":5.5}])",
       "decode HostPriorityList: [0].Score: expected an integer, got a fraction"},
      {"prioritize reply is an object", scores, R"({"Host":"a","Score":1})",
       "decode HostPriorityList: <root>: expected an array, got an object"},
      {"prioritize entry is a string", scores, R"(["a"])",
       "decode HostPriorityList: [0]: expected an object, got a string"},
      {"Nodes is not an object", args, R"({"Nodes":["gpu-a1"]})",
       "decode ExtenderArgs: Nodes: expected an object, got an array"},
      {"Nodes items is not an array", args, R"({"Nodes":{"items":{}}})",
       "decode ExtenderArgs: Nodes.items: expected an array, got an object"},
      {"a node item is not an object", args, R"({"Nodes":{"items":[{},7]}})",
       "decode ExtenderArgs: Nodes.items[1]: expected an object, got a number"},
      {"a bad quantity inside a node", args,
       R"({"Nodes":{"items":[{"status":{"allocatable":{"nvidia.com/gpu":"0.5x"}}}]}})",
       "decode ExtenderArgs: Nodes.items[0].status.allocatable[\"nvidia.com/gpu\"]: "},
      {"NodeNames holds a number", args, R"({"NodeNames":["a",3]})",
       "decode ExtenderArgs: NodeNames[1]: expected a string, got a number"},
      {"Pod is a string", args, R"({"Pod":"train-0"})",
       "decode ExtenderArgs: Pod: expected an object, got a string"},
      {"a bad field in the pod", args, R"({"Pod":{"spec":{"priority":"high"}}})",
       "decode ExtenderArgs: Pod.spec.priority: expected an integer, got a string"},
      {"not JSON", args, R"({"Pod":)", "decode ExtenderArgs: invalid JSON at offset 7"},
      {"root is an array", args, "[]",
       "decode ExtenderArgs: <root>: expected an object, got an array"},
      {"FailedNodes reason is a number", filter, R"({"FailedNodes":{"n1":"x","n2":3}})",
       "decode ExtenderFilterResult: FailedNodes.n2: expected a string, got a number"},
      {"FailedAndUnresolvableNodes is a list", filter, R"({"FailedAndUnresolvableNodes":["n1"]})",
       "decode ExtenderFilterResult: FailedAndUnresolvableNodes: expected an object, got an array"},
      {"Error is a boolean", filter, R"({"Error":true})",
       "decode ExtenderFilterResult: Error: expected a string, got a boolean"},
      {"PodUID is a number", bind, R"({"PodUID":12})",
       "decode ExtenderBindingArgs: PodUID: expected a string, got a number"},
      {"bind Error is an object", bind_result, R"({"Error":{}})",
       "decode ExtenderBindingResult: Error: expected a string, got an object"},
      {"victim pod is a string", preempt, R"({"NodeNameToVictims":{"n1":{"Pods":["p"]}}})",
       "decode ExtenderPreemptionArgs: NodeNameToVictims.n1.Pods[0]: expected an object, got a "
       "string"},
      {"NumPDBViolations is a fraction", preempt,
       R"({"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":0.5}}})",
       "decode ExtenderPreemptionArgs: NodeNameToMetaVictims.n1.NumPDBViolations: expected an "
       "integer, got a fraction"},
      {"victims entry is a list", preempt_result, R"({"NodeNameToMetaVictims":{"n1":[]}})",
       "decode ExtenderPreemptionResult: NodeNameToMetaVictims.n1: expected an object, got an "
       "array"},
      {"UID is a number", preempt_result,
       R"({"NodeNameToMetaVictims":{"node.with/odd\"name":{"Pods":[{"UID":1}]}}})",
       "decode ExtenderPreemptionResult: NodeNameToMetaVictims[\"node.with/odd\\\"name\"]."
       "Pods[0].UID: expected a string, got a number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = c.decode(c.json);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    // The prefix carries the type and the path; some messages continue with
    // a detail owned by another codec (the quantity parser, RapidJSON).
    EXPECT_EQ(status.message().substr(0, c.want.size()), c.want) << status.message();
  }
}

// Candidates and verdicts as FilterReplyView takes them.
struct ReplyFixture {
  using Outcome = FilterReplyView::Outcome;
  // A candidate with a verdict of its own.
  void Add(std::string name, Outcome outcome, std::string_view reason = {}, NodeWithRaw node = {}) {
    verdicts.push_back({.outcome = outcome, .reason = reason});
    AddSharing(std::move(name), verdicts.size() - 1, std::move(node));
  }
  // A candidate with the verdict of index `verdict`.
  void AddSharing(std::string name, size_t verdict, NodeWithRaw node = {}) {
    names.push_back(name_storage.emplace_back(std::move(name)));
    nodes.push_back(std::move(node));
    verdict_of.push_back(static_cast<uint32_t>(verdict));
  }
  FilterReplyView View(bool cache_mode = true, bool plain_names = false) const {
    return {.cache_mode = cache_mode,
            .plain_names = plain_names,
            .names = names,
            .nodes = nodes,
            .verdicts = verdicts,
            .verdict_of = verdict_of};
  }

  std::deque<std::string> name_storage;  // stays in place as it grows
  std::vector<std::string_view> names;
  std::vector<NodeWithRaw> nodes;
  std::vector<FilterReplyView::Verdict> verdicts;
  std::vector<uint32_t> verdict_of;
};

// The hot-path encoder writes what EncodeExtenderFilterResult writes for the
// same reply, escaping included (node names and reasons normally need none).
TEST(ExtenderTypesTest, FilterReplyViewEncodesLikeTheResult) {
  using Outcome = FilterReplyView::Outcome;
  const std::string odd = "quote\" back\\ tab\t nl\n \x01 \xc3\xa9";
  const std::string short_reason = "muster: short";
  NodeWithRaw raw{.raw_json = R"({"metadata":{"name":"n1"}})"};
  raw.node.meta.name = "n1";
  NodeWithRaw built;
  built.node.meta.name = "n2";
  ReplyFixture mixed;  // the lists interleaved, one verdict shared
  mixed.Add("b", Outcome::kFailed, short_reason);
  mixed.Add("a", Outcome::kPass);
  mixed.Add("d", Outcome::kUnresolvable, "muster: node not in cache yet");
  mixed.AddSharing("c", 0);
  mixed.Add(odd, Outcome::kPass);
  mixed.Add(odd, Outcome::kFailed, odd);
  ReplyFixture objects;
  objects.Add("n1", Outcome::kPass, {}, raw);
  objects.Add("x", Outcome::kFailed, "r");
  objects.Add("n2", Outcome::kPass, {}, built);
  struct Case {
    std::string name;
    FilterReplyView view;
    ExtenderFilterResult want;
  };
  const std::vector<Case> cases = {
      {"cache mode, nothing", {}, {.node_names = std::vector<std::string>{}}},
      {"cache mode",
       mixed.View(),
       {.node_names = std::vector<std::string>{"a", odd},
        .failed_nodes = {{"b", short_reason}, {"c", short_reason}, {odd, odd}},
        .failed_and_unresolvable_nodes = {{"d", "muster: node not in cache yet"}}}},
      {"node objects",
       objects.View(/*cache_mode=*/false),
       {.nodes = std::vector<NodeWithRaw>{raw, built}, .failed_nodes = {{"x", "r"}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string encoded = EncodeFilterReplyView(c.view);
    rapidjson::Document got;
    rapidjson::Document want;
    ASSERT_TRUE(ParseDocument(encoded, &got).ok()) << encoded;
    ASSERT_TRUE(ParseDocument(EncodeExtenderFilterResult(c.want), &want).ok());
    EXPECT_EQ(FirstDifference(got, want, "$"), "") << encoded;
  }
}

TEST(ExtenderTypesTest, HostPriorityNamesAreEscaped) {
  const HostPriorityList list = {{.host = "plain", .score = 10}, {.host = "odd\"\\\n", .score = 0}};
  StatusOr<HostPriorityList> back = DecodeHostPriorityList(EncodeHostPriorityList(list));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, list);
  EXPECT_EQ(EncodeHostPriorityList({}), "[]");
}

// The hand-written encoders decide per string whether to escape, eight
// bytes at a time: every byte value, at every position of strings around
// the word size, must come out as the JSON writer writes it.
TEST(ExtenderTypesTest, EncodersEscapeEveryByteAsTheJsonWriter) {
  for (int byte = 0; byte < 256; ++byte) {
    for (size_t size = 1; size <= 18; ++size) {
      for (size_t at = 0; at < size; ++at) {
        std::string s(size, 'x');
        s[at] = static_cast<char>(byte);
        JsonWriter quoted;
        quoted.String(s);
        const std::string want = quoted.TakeString();
        ASSERT_EQ(EncodeHostPriorityList({{.host = s, .score = 1}}),
                  "[{\"Host\":" + want + ",\"Score\":1}]")
            << "byte " << byte << " at " << at << " of " << size;
        ReplyFixture reply;
        reply.Add("n", FilterReplyView::Outcome::kFailed, s);
        ASSERT_EQ(EncodeFilterReplyView(reply.View()),
                  R"({"Nodes":null,"NodeNames":[],"FailedNodes":{"n":)" + want +
                      R"(},"FailedAndUnresolvableNodes":{},"Error":""})")
            << "byte " << byte << " at " << at << " of " << size;
      }
    }
  }
}

// Nodes in one state share its verdict; any reason, even an empty or
// default view, is written in full.
TEST(ExtenderTypesTest, ReasonsSharedOrNotAreWrittenInFull) {
  const std::string shared = "muster: short";
  ReplyFixture reply;
  ExtenderFilterResult want{.node_names = std::vector<std::string>{}};
  std::optional<size_t> shared_verdict;
  for (int i = 10; i < 30; ++i) {  // names in order, as the result's map writes them
    const std::string node = "n" + std::to_string(i);
    std::string_view reason;  // i % 3 == 1: a default view
    if (i % 3 == 0) reason = shared;
    if (i % 3 == 2) reason = std::string_view(shared).substr(0, static_cast<size_t>(i % 7));
    if (i % 3 == 0 && shared_verdict.has_value()) {
      reply.AddSharing(node, *shared_verdict);  // the verdict of n12
    } else {
      reply.Add(node, FilterReplyView::Outcome::kFailed, reason);
      if (i % 3 == 0) shared_verdict = reply.verdicts.size() - 1;
    }
    want.failed_nodes[node] = std::string(reason);
  }
  EXPECT_EQ(EncodeFilterReplyView(reply.View()), EncodeExtenderFilterResult(want));
}

// plain_names skips the checks, not the output: for names that need no
// escaping the bytes are the same.
TEST(ExtenderTypesTest, PlainNamesWriteTheSameBytes) {
  ReplyFixture reply;
  reply.Add("gpu-node-1", FilterReplyView::Outcome::kPass);
  reply.Add("gpu-node-3", FilterReplyView::Outcome::kFailed,
            "muster: needs 4 nvidia.com/gpu (2 free of 8)");
  reply.Add("ip-10-0-1-2.ec2.internal", FilterReplyView::Outcome::kFailed, "odd \"reason\"");
  reply.Add("gpu-node-22", FilterReplyView::Outcome::kPass);
  reply.Add("n", FilterReplyView::Outcome::kUnresolvable, "muster: node not in cache yet");
  EXPECT_EQ(EncodeFilterReplyView(reply.View(true, /*plain_names=*/true)),
            EncodeFilterReplyView(reply.View(true, /*plain_names=*/false)));
}

// The hot-path prioritize encoder writes what EncodeHostPriorityList writes
// for the same list, escaping included (or vouched for).
TEST(ExtenderTypesTest, PriorityReplyViewEncodesLikeTheList) {
  struct Case {
    std::string name;
    std::vector<std::string> hosts;
    std::vector<int64_t> scores;
    bool plain_hosts;
  };
  const std::vector<Case> cases = {
      {"nothing", {}, {}, false},
      {"plain, vouched", {"gpu-node-1", "a-rather-long-node-name-0001"}, {10, -7}, true},
      {"plain, checked", {"gpu-node-1", ""}, {0, kMaxExtenderPriority}, false},
      {"odd, checked", {"quote\" back\\ nl\n", "x"}, {3, 4}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    HostPriorityList list;
    for (size_t i = 0; i < c.hosts.size(); ++i) list.push_back({c.hosts[i], c.scores[i]});
    const std::vector<std::string_view> hosts(c.hosts.begin(), c.hosts.end());
    EXPECT_EQ(
        EncodePriorityReplyView({.hosts = hosts, .scores = c.scores, .plain_hosts = c.plain_hosts}),
        EncodeHostPriorityList(list));
  }
}

TEST(ExtenderTypesTest, PlainJsonStringsMeansNothingWasEscaped) {
  struct Case {
    std::string name;
    std::string json;
    bool plain;
  };
  const std::vector<Case> cases = {
      {"empty", "", true},
      {"plain names", R"({"NodeNames":["a","b c","café"]})", true},
      {"an escaped quote", R"({"NodeNames":["a\"b"]})", false},
      {"a unicode escape", R"(["\u0001"])", false},
      {"an escaped backslash", R"(["a\\b"])", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PlainJsonStrings(c.json), c.plain);
  }
}

// ExtenderArgs are parsed in place, which would stop at a NUL byte: a body
// with one decides as with the ordinary parser (which reads a NUL after the
// document as its end, and rejects one inside a string).
TEST(ExtenderTypesTest, ExtenderArgsWithANulByteParseAsUsual) {
  const std::string good = R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"]})";
  const std::string nul(1, '\0');
  struct Case {
    std::string name;
    std::string body;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"no NUL", good, true},
      {"NUL after the document", good + nul + "junk", true},
      {"NUL inside a name", R"({"Pod":null,"NodeNames":["a)" + nul + R"("]})", false},
      {"NUL before the document", nul + good, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    rapidjson::Document doc;
    EXPECT_EQ(ParseDocument(c.body, &doc).ok(), c.ok);
    StatusOr<ExtenderArgs> args = DecodeExtenderArgs(c.body);
    ASSERT_EQ(args.ok(), c.ok) << args.status();
    if (c.ok) {
      EXPECT_EQ(args->node_names, std::vector<std::string>{"a"});
    } else {
      EXPECT_NE(args.status().message().find("decode ExtenderArgs: invalid JSON"),
                std::string::npos)
          << args.status();
    }
  }
}

}  // namespace
}  // namespace muster::kube
