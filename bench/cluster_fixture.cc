#include "bench/cluster_fixture.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "extender/gpu_ledger.h"
#include "kube/codec/json.h"
#if MUSTER_BENCH_GPU_SHARING
#include "kube/codec/vgpu_codec.h"
#include "model/gpu_share.h"
#endif

namespace muster::extender::bench {
namespace {

// What one GPU counts in nvidia.com/gpu: thousandths since GPU sharing,
// whole GPUs before (see the header).
#if MUSTER_BENCH_GPU_SHARING
constexpr int64_t kGpuUnit = kMilliPerGpu;
#else
constexpr int64_t kGpuUnit = 1;
#endif

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Two 4-GPU NVLink islands {0-3} and {4-7}, SYS between, UUIDs per node.
std::string TwoIslandTopology(int node) {
  std::string gpus, link;
  for (int i = 0; i < kGpusPerNode; ++i) {
    gpus += (i ? "," : "") + std::string(R"({"i":)") + std::to_string(i) + R"(,"uuid":"GPU-)" +
            std::to_string(node) + "-" + std::to_string(i) + R"(","numa":)" +
            std::to_string(i / 4) + "}";
    link += i ? ",[" : "[";
    for (int j = 0; j < kGpusPerNode; ++j) {
      link += j ? "," : "";
      link += i == j ? R"("X")" : (i / 4 == j / 4 ? R"("NV4")" : R"("SYS")");
    }
    link += "]";
  }
  return R"({"v":1,"gpus":[)" + gpus + R"(],"link":[)" + link + "]}";
}

#if MUSTER_BENCH_GPU_SHARING
// The memory of each GPU, MiB (GPU feature discovery's nvidia.com/gpu.memory).
constexpr int64_t kGpuMemoryMib = 81920;
#endif

Node MakeNode(int i, bool shared_gpus = false) {
  Node node;
  node.meta.name = NodeName(i);
  node.meta.uid = "node-uid-" + std::to_string(i);
  node.meta.labels = {{"kubernetes.io/hostname", node.meta.name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {"network.muster.io/rack", "rack-" + std::to_string(i / 32)}};
#if MUSTER_BENCH_GPU_SHARING
  if (shared_gpus) node.meta.labels[std::string(kLabelGpuMemory)] = std::to_string(kGpuMemoryMib);
#else
  (void)shared_gpus;
#endif
  node.capacity = Resources{{"cpu", 96000},
                            {"memory", int64_t{1152} << 30},
                            {"nvidia.com/gpu", kGpusPerNode * kGpuUnit},
                            {"pods", 110}};
  node.allocatable = Resources{{"cpu", 95500},
                               {"memory", int64_t{1140} << 30},
                               {"nvidia.com/gpu", kGpusPerNode * kGpuUnit},
                               {"pods", 110}};
  return node;
}

Pod MakeBoundPod(int node, int k, int64_t gpus) {
  Pod pod;
  pod.meta.namespace_ = "team-" + std::to_string(node % 16);
  pod.meta.name = "job-" + std::to_string(node) + "-worker-" + std::to_string(k);
  pod.meta.uid = "pod-uid-" + std::to_string(node) + "-" + std::to_string(k);
  pod.spec.node_name = NodeName(node);
  pod.spec.scheduler_name = "volcano";
  Container c;
  c.name = "trainer";
  c.image = "registry.example.com/ml/trainer:v1.4";
  c.resources.requests = Resources{{"cpu", 4000}, {"memory", int64_t{32} << 30}};
  if (gpus > 0) c.resources.requests.Set(kNvidiaGpu, gpus * kGpuUnit);
  c.resources.limits = c.resources.requests;
  pod.spec.containers.push_back(std::move(c));
  pod.status.phase = "Running";
  return pod;
}

#if MUSTER_BENCH_GPU_SHARING
// A bound pod holding a quarter of GPU `gpu`, with the annotations muster's
// bind writes for it (what the ledger rebuilds its share from).
Pod MakeQuarterPod(int node, int k, int gpu) {
  Pod pod = MakeBoundPod(node, k, 0);
  const GpuSlice slice{
      .gpu = gpu, .container = -1, .compute = kGpuCompute / 4, .memory_mib = kGpuMemoryMib / 4};
  pod.meta.annotations = {
      {std::string(kAnnotationGpuFraction), "0.25"},
      {std::string(kAnnotationGpuIds), std::to_string(gpu)},
      {std::string(kube::kAnnotationGpuShares), kube::EncodeGpuShares({slice}, 1)}};
  return pod;
}
#endif

// The member `key` of the object `obj`, or nullptr. Looked up through a
// const reference: clang refuses to compare non-const RapidJSON member
// iterators under C++20 (-Wambiguous-reversed-operator).
rapidjson::Value* MemberAt(rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  const rapidjson::Value& read = obj;
  const auto it = read.FindMember(key);
  return it == read.MemberEnd() ? nullptr : const_cast<rapidjson::Value*>(&it->value);
}
// The same when the member is an object.
rapidjson::Value* ObjectAt(rapidjson::Value& obj, const char* key) {
  rapidjson::Value* member = MemberAt(obj, key);
  return member != nullptr && member->IsObject() ? member : nullptr;
}

#if MUSTER_BENCH_GPU_SHARING
// Removes nvidia.com/gpu from the requests and limits of the containers of
// the list `containers`.
void DropGpus(rapidjson::Value* containers) {
  if (containers == nullptr || !containers->IsArray()) return;
  for (rapidjson::Value& c : containers->GetArray()) {
    rapidjson::Value* resources = ObjectAt(c, "resources");
    if (resources == nullptr) continue;
    for (const char* kind : {"requests", "limits"}) {
      if (rapidjson::Value* amounts = ObjectAt(*resources, kind)) {
        amounts->RemoveMember(std::string(kNvidiaGpu));
      }
    }
  }
}
#endif

// pod_full.json as compact JSON, without metadata.managedFields; "null" if
// the file does not parse (the probe call of each benchmark then fails).
// With `gpu_fraction`, it asks that share of one GPU instead of whole GPUs.
std::string PodJson(std::string_view gpu_fraction = "") {
  rapidjson::Document doc;
  if (!kube::ParseDocument(ReadTestdata("pod_full.json"), &doc).ok() || !doc.IsObject()) {
    return "null";
  }
  if (rapidjson::Value* meta = ObjectAt(doc, "metadata")) {
    meta->RemoveMember("managedFields");
    // Not a gang member: a member of a gang muster has not placed is held
    // before any fit (every node fails at once), which is not what these
    // benchmarks time.
    if (rapidjson::Value* a = ObjectAt(*meta, "annotations")) {
      a->RemoveMember("scheduling.k8s.io/group-name");
#if MUSTER_BENCH_GPU_SHARING
      if (!gpu_fraction.empty()) {
        a->AddMember(rapidjson::Value(std::string(kAnnotationGpuFraction), doc.GetAllocator()),
                     rapidjson::Value(std::string(gpu_fraction), doc.GetAllocator()),
                     doc.GetAllocator());
      }
#endif
    }
  }
#if MUSTER_BENCH_GPU_SHARING
  if (rapidjson::Value* spec = ObjectAt(doc, "spec"); spec != nullptr && !gpu_fraction.empty()) {
    for (const char* list : {"containers", "initContainers"}) {
      DropGpus(MemberAt(*spec, list));
    }
  }
#else
  (void)gpu_fraction;
#endif
  return kube::ToCompactJson(doc);
}

}  // namespace

std::string NodeName(int i) { return "gpu-node-" + std::to_string(i); }

void FillCache(ClusterCache& cache, int nodes, int pods_per_node, bool gpu_topology,
               bool shared_gpus) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> gpus_of(0, 1);
#if MUSTER_BENCH_GPU_SHARING
  // Sharers draw from their own generator: the whole-GPU pods are the same
  // with or without them.
  std::mt19937 share_rng(43);
  std::uniform_int_distribution<int> one_or_two(1, 2);
  std::uniform_int_distribution<int> sharers_of(1, 3);
#endif
  const bool name_gpus = gpu_topology || shared_gpus;
  for (int i = 0; i < nodes; ++i) {
    Node node = MakeNode(i, shared_gpus);
    if (gpu_topology) node.meta.annotations["muster.io/gpu-topology"] = TwoIslandTopology(i);
    cache.UpsertNode(std::move(node));
    std::vector<int> free(kGpusPerNode);
    std::iota(free.begin(), free.end(), 0);
    std::shuffle(free.begin(), free.end(), rng);
    int64_t used = 0;
    for (int k = 0; k < pods_per_node; ++k) {
      const int64_t gpus = std::min<int64_t>(gpus_of(rng), kGpusPerNode - used);
      Pod pod = MakeBoundPod(i, k, gpus);
      if (name_gpus && gpus > 0) {
        pod.meta.annotations["muster.io/gpu-ids"] = std::to_string(free[static_cast<size_t>(used)]);
      }
      used += gpus;
      cache.UpsertPod(pod);
    }
#if MUSTER_BENCH_GPU_SHARING
    if (!shared_gpus || i % 2 != 0) continue;
    // 1-2 of the GPUs left free get 1-3 quarters each: 0.25-0.75 left.
    const int shared = std::min<int>(one_or_two(share_rng), kGpusPerNode - static_cast<int>(used));
    int k = pods_per_node;
    for (int s = 0; s < shared; ++s) {
      const int gpu = free[static_cast<size_t>(used) + static_cast<size_t>(s)];
      for (int n = sharers_of(share_rng); n > 0; --n) {
        cache.UpsertPod(MakeQuarterPod(i, k++, gpu));
      }
    }
#endif
  }
}

std::string NamesOnlyRequest(int nodes, std::string_view gpu_fraction) {
  kube::JsonWriter w;
  w.StartObject();
  w.Key("Pod");
  w.RawValue(PodJson(gpu_fraction));
  w.Key("Nodes");
  w.Null();
  w.Key("NodeNames");
  w.StartArray();
  for (int i = 0; i < nodes; ++i) w.String(NodeName(i));
  w.EndArray();
  w.EndObject();
  return w.TakeString();
}

ClusterFixture::ClusterFixture(int nodes, bool gpu_topology, bool shared_gpus)
    : nodes(nodes), body(NamesOnlyRequest(nodes)), share_body(NamesOnlyRequest(nodes, "0.5")) {
  FillCache(cache, nodes, kPodsPerNode, gpu_topology, shared_gpus);
  // The queues read (see the header): what the gang controller's first pass
  // publishes for an unlimited "default" queue.
  cache.Exclusive([&](ClusterState& state) {
    state.queue_gate().Publish(
        QueueBoard{.queues = {{"default", QueueRoom{.path = {"default"}}}}, .at = clock.Now()},
        [](std::string_view) { return true; }, std::chrono::seconds(30));
  });
}

ClusterFixture& FixtureFor(int nodes, bool gpu_topology, bool shared_gpus) {
  static auto* fixtures =
      new std::map<std::tuple<int, bool, bool>, std::unique_ptr<ClusterFixture>>();
  std::unique_ptr<ClusterFixture>& f = (*fixtures)[{nodes, gpu_topology, shared_gpus}];
  if (f == nullptr) f = std::make_unique<ClusterFixture>(nodes, gpu_topology, shared_gpus);
  return *f;
}

Percentiles PercentilesOf(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return Percentiles{.p50 = samples[samples.size() / 2], .p99 = samples[samples.size() * 99 / 100]};
}

int64_t RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

}  // namespace muster::extender::bench
