#include "bench/cluster_fixture.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>

#include "kube/codec/json.h"

namespace muster::extender::bench {
namespace {

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

Node MakeNode(int i) {
  Node node;
  node.meta.name = NodeName(i);
  node.meta.uid = "node-uid-" + std::to_string(i);
  node.meta.labels = {{"kubernetes.io/hostname", node.meta.name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {"network.muster.io/rack", "rack-" + std::to_string(i / 32)}};
  node.capacity = Resources{{"cpu", 96000},
                            {"memory", int64_t{1152} << 30},
                            {"nvidia.com/gpu", kGpusPerNode * kMilliPerGpu},
                            {"pods", 110}};
  node.allocatable = Resources{{"cpu", 95500},
                               {"memory", int64_t{1140} << 30},
                               {"nvidia.com/gpu", kGpusPerNode * kMilliPerGpu},
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
  if (gpus > 0) c.resources.requests.Set(kNvidiaGpu, gpus * kMilliPerGpu);
  c.resources.limits = c.resources.requests;
  pod.spec.containers.push_back(std::move(c));
  pod.status.phase = "Running";
  return pod;
}

// pod_full.json as compact JSON, without metadata.managedFields; "null" if
// the file does not parse (the probe call of each benchmark then fails).
std::string PodJson() {
  rapidjson::Document doc;
  if (!kube::ParseDocument(ReadTestdata("pod_full.json"), &doc).ok() || !doc.IsObject()) {
    return "null";
  }
  if (auto meta = doc.FindMember("metadata"); meta != doc.MemberEnd() && meta->value.IsObject()) {
    meta->value.RemoveMember("managedFields");
    // Not a gang member: a member of a gang muster has not placed is held
    // before any fit (every node fails at once), which is not what these
    // benchmarks time.
    if (auto a = meta->value.FindMember("annotations");
        a != meta->value.MemberEnd() && a->value.IsObject()) {
      a->value.RemoveMember("scheduling.k8s.io/group-name");
    }
  }
  return kube::ToCompactJson(doc);
}

}  // namespace

std::string NodeName(int i) { return "gpu-node-" + std::to_string(i); }

void FillCache(ClusterCache& cache, int nodes, int pods_per_node, bool gpu_topology) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> gpus_of(0, 1);
  for (int i = 0; i < nodes; ++i) {
    Node node = MakeNode(i);
    if (gpu_topology) node.meta.annotations["muster.io/gpu-topology"] = TwoIslandTopology(i);
    cache.UpsertNode(std::move(node));
    std::vector<int> free(kGpusPerNode);
    std::iota(free.begin(), free.end(), 0);
    std::shuffle(free.begin(), free.end(), rng);
    int64_t used = 0;
    for (int k = 0; k < pods_per_node; ++k) {
      const int64_t gpus = std::min<int64_t>(gpus_of(rng), kGpusPerNode - used);
      Pod pod = MakeBoundPod(i, k, gpus);
      if (gpu_topology && gpus > 0) {
        pod.meta.annotations["muster.io/gpu-ids"] = std::to_string(free[static_cast<size_t>(used)]);
      }
      used += gpus;
      cache.UpsertPod(pod);
    }
  }
}

std::string NamesOnlyRequest(int nodes) {
  kube::JsonWriter w;
  w.StartObject();
  w.Key("Pod");
  w.RawValue(PodJson());
  w.Key("Nodes");
  w.Null();
  w.Key("NodeNames");
  w.StartArray();
  for (int i = 0; i < nodes; ++i) w.String(NodeName(i));
  w.EndArray();
  w.EndObject();
  return w.TakeString();
}

ClusterFixture::ClusterFixture(int nodes, bool gpu_topology)
    : nodes(nodes), body(NamesOnlyRequest(nodes)) {
  FillCache(cache, nodes, kPodsPerNode, gpu_topology);
  if (getenv("COMPACT"))
    for (int i = 0; i < nodes; ++i) cache.UpsertNode(MakeNode(i));
}

ClusterFixture& FixtureFor(int nodes, bool gpu_topology) {
  static auto* fixtures = new std::map<std::pair<int, bool>, std::unique_ptr<ClusterFixture>>();
  std::unique_ptr<ClusterFixture>& f = (*fixtures)[{nodes, gpu_topology}];
  if (f == nullptr) f = std::make_unique<ClusterFixture>(nodes, gpu_topology);
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
