#include "bench/cluster_fixture.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
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

Node MakeNode(int i) {
  Node node;
  node.meta.name = NodeName(i);
  node.meta.uid = "node-uid-" + std::to_string(i);
  node.meta.labels = {{"kubernetes.io/hostname", node.meta.name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {"network.muster.io/rack", "rack-" + std::to_string(i / 32)}};
  node.capacity = Resources{{"cpu", 96000},
                            {"memory", int64_t{1152} << 30},
                            {"nvidia.com/gpu", kGpusPerNode},
                            {"pods", 110}};
  node.allocatable = Resources{{"cpu", 95500},
                               {"memory", int64_t{1140} << 30},
                               {"nvidia.com/gpu", kGpusPerNode},
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
  if (gpus > 0) c.resources.requests.Set(kNvidiaGpu, gpus);
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
  }
  return kube::ToCompactJson(doc);
}

}  // namespace

std::string NodeName(int i) { return "gpu-node-" + std::to_string(i); }

void FillCache(ClusterCache& cache, int nodes, int pods_per_node) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> gpus_of(0, 1);
  for (int i = 0; i < nodes; ++i) {
    cache.UpsertNode(MakeNode(i));
    int64_t used = 0;
    for (int k = 0; k < pods_per_node; ++k) {
      const int64_t gpus = std::min<int64_t>(gpus_of(rng), kGpusPerNode - used);
      used += gpus;
      cache.UpsertPod(MakeBoundPod(i, k, gpus));
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

ClusterFixture::ClusterFixture(int nodes) : nodes(nodes), body(NamesOnlyRequest(nodes)) {
  FillCache(cache, nodes, kPodsPerNode);
  if (getenv("COMPACT"))
    for (int i = 0; i < nodes; ++i) cache.UpsertNode(MakeNode(i));
}

ClusterFixture& FixtureFor(int nodes) {
  static auto* fixtures = new std::map<int, std::unique_ptr<ClusterFixture>>();
  std::unique_ptr<ClusterFixture>& f = (*fixtures)[nodes];
  if (f == nullptr) f = std::make_unique<ClusterFixture>(nodes);
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
