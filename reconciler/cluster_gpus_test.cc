// What the reconciler keeps of the cluster's GPUs (cluster_gpus.h): each
// node's largest GPU memory from its vGPU registration or its GPU feature
// discovery label, the cluster's largest as nodes come and go, and what that
// costs in memory next to caching whole Nodes.
#include "reconciler/cluster_gpus.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/vgpu_codec.h"

namespace muster::reconciler {
namespace {

using kube::testing::WaitFor;

// Volcano's vGPU registration of `gpus` GPUs of `mib` MiB each.
std::string Registration(int gpus, int64_t mib) {
  std::vector<kube::VgpuRegistration> list;
  for (int i = 0; i < gpus; ++i) {
    list.push_back({.uuid = "GPU-" + std::to_string(1000 + i),
                    .split = 10,
                    .memory_mib = mib,
                    .type = "NVIDIA-NVIDIA A100-SXM4-80GB",
                    .healthy = true,
                    .mode = "hami-core"});
  }
  return kube::EncodeVgpuRegistration(list);
}

TEST(ClusterGpusTest, LargestGpuMemoryOfANode) {
  const std::string two_sizes =
      "GPU-a,10,40960,NVIDIA-A100,true,hami-core:GPU-b,10,81920,NVIDIA-A100,true,hami-core:";
  const std::string bad = "not a registration";
  struct Case {
    std::string name;
    const std::string* registration;
    std::string label;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"nothing", nullptr, "", 0},
      {"the label", nullptr, "16384", 16384},
      {"a label that is not a number", nullptr, "16GB", 0},
      {"a negative label", nullptr, "-1", 0},
      {"a label past int64", nullptr, "9223372036854775808", 0},
      {"the registration's largest GPU", &two_sizes, "", 81920},
      {"the larger of both", &two_sizes, "98304", 98304},
      {"a registration that does not decode leaves the label", &bad, "24576", 24576},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(LargestGpuMemoryMib(c.registration, c.label), c.want) << c.name;
  }
}

// A node as GPU feature discovery and node feature discovery label it, with
// Volcano's vGPU registration when `vgpu`: what a real GPU node looks like
// to an informer.
std::string GpuNodeJson(int i, bool vgpu) {
  std::string labels = R"("kubernetes.io/hostname":"gpu-)" + std::to_string(i) +
                       R"(","nvidia.com/gpu.memory":"81920","nvidia.com/gpu.count":"8",)"
                       R"("nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB",)"
                       R"("nvidia.com/gpu.family":"ampere","nvidia.com/cuda.driver.major":"550")";
  for (int f = 0; f < 60; ++f) {
    labels +=
        R"(,"feature.node.kubernetes.io/cpu-cpuid.FEATURE_)" + std::to_string(f) + R"(":"true")";
  }
  std::string annotations = R"("node.alpha.kubernetes.io/ttl":"0",)"
                            R"("volumes.kubernetes.io/controller-managed-attach-detach":"true")";
  if (vgpu) {
    annotations += R"(,")" + std::string(kube::kAnnotationVgpuRegister) + R"(":")" +
                   Registration(8, 81920) + "\"";
  }
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-)" + std::to_string(i) +
         R"(","uid":"uid-)" + std::to_string(i) + R"(","resourceVersion":"7","labels":{)" + labels +
         "},\"annotations\":{" + annotations +
         R"(}},"spec":{"providerID":"kwok://gpu"},"status":{)"
         R"("capacity":{"cpu":"128","memory":"1Ti","nvidia.com/gpu":"8","pods":"110"},)"
         R"("allocatable":{"cpu":"126","memory":"1000Gi","nvidia.com/gpu":"8","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}],)"
         R"("addresses":[{"type":"InternalIP","address":"10.0.0.1"}]}})";
}

TEST(ClusterGpusTest, DecodesANodeIntoItsIdentityAndOneNumber) {
  StatusOr<NodeGpuMemory> node = DecodeNodeGpuMemory(GpuNodeJson(3, true));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->meta.name, "gpu-3");
  EXPECT_EQ(node->meta.uid, "uid-3");
  EXPECT_EQ(node->meta.resource_version, "7");
  EXPECT_TRUE(node->meta.labels.empty());
  EXPECT_TRUE(node->meta.annotations.empty());
  EXPECT_EQ(node->largest_mib, 81920);

  StatusOr<kube::ObjectList<NodeGpuMemory>> list = DecodeNodeGpuMemoryList(
      R"({"kind":"NodeList","metadata":{"resourceVersion":"9","continue":"c"},"items":[)" +
      GpuNodeJson(1, false) + R"(,{"metadata":{"name":"cpu-0"}}]})");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "9");
  EXPECT_EQ(list->continue_token, "c");
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0].largest_mib, 81920);
  EXPECT_EQ(list->items[1].largest_mib, 0);

  EXPECT_FALSE(DecodeNodeGpuMemory("[").ok());
  EXPECT_FALSE(DecodeNodeGpuMemory(R"({"metadata":{"labels":[]}})").ok());
}

// Heap bytes in use (glibc).
size_t HeapInUse() { return mallinfo2().uordblks; }

// VmRSS of this process, KiB.
int64_t RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

struct Cost {
  size_t heap_bytes = 0;
  int64_t rss_kib = 0;
};

// What caching `json` decoded by `decode` costs, the way the informer caches
// (a map of keys to shared objects).
template <typename T>
Cost CacheCost(const std::vector<std::string>& json, StatusOr<T> (*decode)(std::string_view)) {
  const size_t heap = HeapInUse();
  const int64_t rss = RssKib();
  auto cache = std::make_unique<std::map<std::string, std::shared_ptr<const T>>>();
  for (const std::string& j : json) {
    StatusOr<T> object = decode(j);
    EXPECT_TRUE(object.ok()) << object.status();
    if (!object.ok()) continue;
    const std::string key = object->meta.Key();
    (*cache)[key] = std::make_shared<const T>(std::move(object).value());
  }
  EXPECT_EQ(cache->size(), json.size());
  return Cost{HeapInUse() - heap, RssKib() - rss};
}

// The informer's cache of 1000 GPU nodes as NodeGpuMemory against whole
// Nodes (the summary first: its RSS growth is not memory the Nodes freed).
// The numbers (docs/reconciler.md quotes them) print with the test; the
// summary must stay well under a tenth of the Nodes.
TEST(ClusterGpusTest, ASummaryPerNodeCostsAFractionOfTheNodes) {
  constexpr int kNodes = 1000;
  std::vector<std::string> json;
  for (int i = 0; i < kNodes; ++i) json.push_back(GpuNodeJson(i, i % 2 == 0));
  const Cost summary = CacheCost<NodeGpuMemory>(json, DecodeNodeGpuMemory);
  const Cost nodes = CacheCost<Node>(json, kube::DecodeNode);
  std::printf(
      "1000 GPU nodes cached: NodeGpuMemory heap %zu KiB (%zu B/node), RSS +%lld KiB; whole "
      "Nodes heap %zu KiB (%zu B/node), RSS +%lld KiB\n",
      summary.heap_bytes / 1024, summary.heap_bytes / kNodes,
      static_cast<long long>(summary.rss_kib), nodes.heap_bytes / 1024, nodes.heap_bytes / kNodes,
      static_cast<long long>(nodes.rss_kib));
  RecordProperty("summary_heap_bytes", std::to_string(summary.heap_bytes));
  RecordProperty("node_heap_bytes", std::to_string(nodes.heap_bytes));
  if (nodes.heap_bytes == 0) GTEST_SKIP() << "mallinfo2 does not count this allocator";
  EXPECT_LT(summary.heap_bytes * 10, nodes.heap_bytes);
}

class ClusterGpuMemoryTest : public ::testing::Test {
 protected:
  ClusterGpuMemoryTest() {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    client_ = std::make_unique<kube::Client>(api_, kube::ClientConfig{}, options);
  }
  static kube::ResourceRef NodeRef(const std::string& name) {
    return kube::ResourceRef::Core("nodes").WithName(name);
  }
  static std::string LabelledNode(const std::string& mib) {
    return R"({"metadata":{"labels":{"nvidia.com/gpu.memory":")" + mib + R"("}}})";
  }

  std::shared_ptr<kube::testing::FakeApi> api_ = std::make_shared<kube::testing::FakeApi>();
  std::unique_ptr<kube::Client> client_;
};

TEST_F(ClusterGpuMemoryTest, FollowsTheNodes) {
  api_->Put(NodeRef("a"), LabelledNode("16384"));
  api_->Put(NodeRef("cpu"), R"({"metadata":{"labels":{"kubernetes.io/os":"linux"}}})");
  ClusterGpuMemory memory(client_.get());
  EXPECT_FALSE(memory.Synced());
  memory.Start();
  ASSERT_TRUE(WaitFor([&] { return memory.Synced(); }));
  EXPECT_EQ(memory.LargestMib(), 16384);
  EXPECT_EQ(memory.nodes(), 2u);

  api_->Put(NodeRef("b"), LabelledNode("81920"));
  ASSERT_TRUE(WaitFor([&] { return memory.LargestMib() == 81920; }));
  api_->Put(NodeRef("c"), LabelledNode("81920"));
  ASSERT_TRUE(WaitFor([&] { return memory.nodes() == 4; }));
  api_->Remove(NodeRef("b"));
  ASSERT_TRUE(WaitFor([&] { return memory.nodes() == 3; }));
  EXPECT_EQ(memory.LargestMib(), 81920);  // c still has it
  api_->Put(NodeRef("c"), R"({"metadata":{"annotations":{")" +
                              std::string(kube::kAnnotationVgpuRegister) + R"(":")" +
                              Registration(2, 24576) + R"("}}})");
  ASSERT_TRUE(WaitFor([&] { return memory.LargestMib() == 24576; }));
  api_->Remove(NodeRef("c"));
  ASSERT_TRUE(WaitFor([&] { return memory.LargestMib() == 16384; }));
  api_->Remove(NodeRef("a"));
  ASSERT_TRUE(WaitFor([&] { return memory.LargestMib() == 0; }));
  memory.Stop();
}

}  // namespace
}  // namespace muster::reconciler
