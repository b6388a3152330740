// Test-only helpers for the extender tests: testdata files, a canonical JSON
// comparison, and a small cluster + pipeline fixture.
//
// Golden files: ExpectGolden(actual, "filter_cache_reply.json") compares
// canonically (key order free; types, key case and null vs absent strict; 10
// and 10.0 differ, as Go's decoder rejects a fractional score). With
// MUSTER_UPDATE_GOLDEN=1 in the environment it rewrites the golden file
// instead (pretty-printed) and the test fails, so a rewrite is never silent.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/json.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender::fixture {

// extender/testdata/<name>; "../../kube/codec/testdata/extender/x.json"
// reaches the codec's fixtures. Fails the test when missing.
inline std::string ReadTestdata(std::string_view name) {
  const std::string path = std::string(MUSTER_TESTDATA_DIR) + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The codec's kube-scheduler fixtures (kube/codec/testdata/extender/<name>).
inline std::string CodecFixture(std::string_view name) {
  return ReadTestdata("../../kube/codec/testdata/extender/" + std::string(name));
}

inline const char* JsonKind(const rapidjson::Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "boolean";
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  return "fraction";
}

// The first difference between two JSON values ("" when equal).
inline std::string FirstDifference(const rapidjson::Value& a, const rapidjson::Value& b,
                                   const std::string& path = "") {
  const std::string at = path.empty() ? "<root>" : path;
  if (std::string_view(JsonKind(a)) != JsonKind(b)) {
    return at + ": " + JsonKind(a) + " vs " + JsonKind(b);
  }
  if (a.IsObject()) {
    for (auto it = a.MemberBegin(); it != a.MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      auto other = b.FindMember(it->name);
      if (other == b.MemberEnd()) return at + ": key \"" + key + "\" only in the actual reply";
      std::string diff = FirstDifference(it->value, other->value, path + "." + key);
      if (!diff.empty()) return diff;
    }
    for (auto it = b.MemberBegin(); it != b.MemberEnd(); ++it) {
      if (!a.HasMember(it->name)) {
        return at + ": key \"" + std::string(it->name.GetString()) + "\" only in the golden";
      }
    }
    return "";
  }
  if (a.IsArray()) {
    if (a.Size() != b.Size()) {
      return at + ": " + std::to_string(a.Size()) + " vs " + std::to_string(b.Size()) + " elements";
    }
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      std::string diff = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return "";
  }
  if (a != b) return at + ": " + kube::ToCompactJson(a) + " vs " + kube::ToCompactJson(b);
  return "";
}

inline std::string Pretty(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

// Asserts that `actual` (a JSON text) equals the JSON text `expected`.
inline void ExpectSameJson(std::string_view actual, std::string_view expected) {
  rapidjson::Document a;
  rapidjson::Document e;
  a.Parse(actual.data(), actual.size());
  e.Parse(expected.data(), expected.size());
  ASSERT_FALSE(a.HasParseError()) << "actual is not JSON: " << actual;
  ASSERT_FALSE(e.HasParseError()) << "expected is not JSON: " << expected;
  EXPECT_EQ(FirstDifference(a, e), "") << "actual: " << actual;
}

// Asserts that `actual` equals extender/testdata/<golden> (see the top).
inline void ExpectGolden(std::string_view actual, const std::string& golden) {
  const char* update = std::getenv("MUSTER_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    rapidjson::Document a;
    a.Parse(actual.data(), actual.size());
    ASSERT_FALSE(a.HasParseError()) << "actual is not JSON: " << actual;
    std::ofstream(std::string(MUSTER_TESTDATA_DIR) + "/" + golden, std::ios::binary) << Pretty(a);
    ADD_FAILURE() << "rewrote " << golden << "; rerun without MUSTER_UPDATE_GOLDEN";
    return;
  }
  ExpectSameJson(actual, ReadTestdata(golden));
}

// A cluster cache on a fake clock with a pipeline over it. Its queue gate
// holds what a gang controller's first pass publishes when the only queue is
// an unlimited "default": filter admits plain pods (queue_gate.h).
struct TestCluster {
  explicit TestCluster(PolicyConfig config = {}, ClusterStateOptions options = {})
      : cache(clock, options), pipeline(std::move(config), &cache) {
    With([&](ClusterState& state) {
      state.queue_gate().Publish(
          QueueBoard{.queues = {{"default", QueueRoom{.path = {"default"}}}}, .at = clock.Now()},
          [](std::string_view) { return true; }, std::chrono::seconds(30));
    });
  }

  // The state, for setup and inspection (under the cache's lock).
  template <typename Fn>
  void With(Fn&& fn) {
    cache.Exclusive([&](ClusterState& state) { fn(state); });
  }
  void Add(const Node& node) { cache.UpsertNode(node); }
  void Add(const Pod& pod) { cache.UpsertPod(pod); }
  void Add(const PodGroup& group) { cache.UpsertPodGroup(group); }
  void Add(const Queue& queue) { cache.UpsertQueue(queue); }

  FakeClock clock;
  ClusterCache cache;
  Pipeline pipeline;
};

// ExtenderArgs as kube-scheduler sends them, in cache (names) mode.
inline std::string FilterArgs(const Pod& pod, std::vector<std::string> names) {
  kube::ExtenderArgs args{.pod = pod, .node_names = std::move(names)};
  return kube::EncodeExtenderArgs(args);
}

// ExtenderArgs in non-cache mode: full Node objects.
inline std::string FilterArgsWithNodes(const Pod& pod, const std::vector<Node>& nodes) {
  kube::ExtenderArgs args{.pod = pod, .nodes = std::vector<kube::NodeWithRaw>{}};
  for (const Node& n : nodes) args.nodes->push_back(kube::NodeWithRaw{.node = n});
  return kube::EncodeExtenderArgs(args);
}

// The golden tests' cluster (golden_test.cc, server_test.cc): gpu-a1 8 free,
// gpu-a2 4 of 8 used, gpu-b1 4 of 4 used, gpu-c1 6 of 8 used, gpu-d1 8 free;
// ml/train-0 (8 GPUs) pending; PodGroups ml/train, ml/eval, ml/finetune
// of minMember 1.
inline void AddGoldenCluster(TestCluster& cluster) {
  using test::MakeNode;
  using test::MakePod;
  cluster.Add(MakeNode("gpu-a1").Cpu("64").Memory("1Ti").Gpu(8));
  cluster.Add(MakeNode("gpu-a2").Cpu("64").Memory("1Ti").Gpu(8));
  cluster.Add(MakeNode("gpu-b1").Cpu("32").Memory("256Gi").Gpu(4));
  cluster.Add(MakeNode("gpu-c1").Cpu("64").Memory("1Ti").Gpu(8));
  cluster.Add(MakeNode("gpu-d1").Cpu("64").Memory("1Ti").Gpu(8));
  cluster.Add(MakePod("a2-user").Namespace("batch").Gpu(4).NodeName("gpu-a2").Phase("Running"));
  cluster.Add(MakePod("b1-user").Namespace("batch").Gpu(4).NodeName("gpu-b1").Phase("Running"));
  cluster.Add(MakePod("c1-user").Namespace("batch").Gpu(6).NodeName("gpu-c1").Phase("Running"));
  cluster.Add(MakePod("train-0")
                  .Namespace("ml")
                  .Uid("0b6f3c1e-1111-4c1a-9d7e-aaaaaaaaaaaa")
                  .Cpu("32")
                  .Memory("256Gi")
                  .Gpu(8));
  // The PodGroups the fixtures' pods name: groups of one, which schedule
  // like single pods (gang placement has its own cases).
  for (const char* group : {"train", "eval", "finetune"}) {
    cluster.Add(test::MakePodGroup(group).Namespace("ml").MinMember(1));
  }
}

}  // namespace muster::extender::fixture
