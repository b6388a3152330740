// Decode throughput of the Kubernetes codecs on realistic inputs:
//  - a 5000-node NodeList as the API server returns it to an informer's
//    initial list (labels, taints, GPU capacity, conditions, images);
//  - one realistic Pod (kube/codec/testdata/pod_full.json);
//  - a nodeCacheCapable filter request naming 5000 nodes;
//  - a watch stream of 1000 events of that Pod, framed (WatchStreamParser:
//    what every watch event costs before its object is decoded; compare
//    with BM_DecodePod, the decode that follows).
// Reported: bytes/s (MB/s) and time per object (items_per_second inverse).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kube/client/watch.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

std::string NodeJson(int i) {
  const std::string n = std::to_string(i);
  const std::string rack = std::to_string(i / 32);
  std::string images;
  for (int k = 0; k < 8; ++k) {
    images += std::string(k ? "," : "") + R"({"names":["registry.example.com/ml/trainer@sha256:)" +
              std::string(64, static_cast<char>('a' + k)) +
              R"(","registry.example.com/ml/trainer:v1.)" + std::to_string(k) +
              R"("],"sizeBytes":)" + std::to_string(1'000'000'000 + k) + "}";
  }
  return R"({"metadata":{"name":"gpu-node-)" + n + R"(","uid":"6f1c2a9e-0000-4000-8000-)" +
         std::string(12 - n.size(), '0') + n + R"(","resourceVersion":")" +
         std::to_string(100000 + i) +
         R"(","creationTimestamp":"2026-01-15T08:00:00Z","labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"gpu-node-)" +
         n +
         R"(","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"p4d.24xlarge","topology.kubernetes.io/region":"eu-west-1","topology.kubernetes.io/zone":"eu-west-1a","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"8","nvidia.com/gpu.memory":"81920","network.muster.io/rack":"rack-)" +
         rack + R"(","network.muster.io/spine":"spine-)" + std::to_string(i / 256) +
         R"("},"annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true","kwok.x-k8s.io/node":"fake"}},"spec":{"podCIDR":"10.244.)" +
         std::to_string(i % 250) + R"(.0/24","podCIDRs":["10.244.)" + std::to_string(i % 250) +
         R"(.0/24"],"providerID":"kwok://gpu-node-)" + n +
         R"(","taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"96","ephemeral-storage":"7812500Mi","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1152Gi","nvidia.com/gpu":"8","pods":"110"},"allocatable":{"cpu":"95500m","ephemeral-storage":"7200Gi","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"1140Gi","nvidia.com/gpu":"8","pods":"110"},"conditions":[{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-30T06:00:00Z","lastTransitionTime":"2026-01-15T08:00:00Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},{"type":"DiskPressure","status":"False","lastHeartbeatTime":"2026-11-30T06:00:00Z","lastTransitionTime":"2026-01-15T08:00:00Z","reason":"KubeletHasNoDiskPressure","message":"kubelet has no disk pressure"},{"type":"PIDPressure","status":"False","lastHeartbeatTime":"2026-11-30T06:00:00Z","lastTransitionTime":"2026-01-15T08:00:00Z","reason":"KubeletHasSufficientPID","message":"kubelet has sufficient PID available"},{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-30T06:00:00Z","lastTransitionTime":"2026-01-15T08:00:10Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],"addresses":[{"type":"InternalIP","address":"10.0.)" +
         std::to_string(i / 250) + "." + std::to_string(i % 250) +
         R"("},{"type":"Hostname","address":"gpu-node-)" + n +
         R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.0","kubeletVersion":"v1.34.4","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"},"images":[)" +
         images + "]}}";
}

std::string NodeListJson(int count) {
  std::string out =
      R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"987654"},"items":[)";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + NodeJson(i);
  return out + "]}";
}

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_DecodeNodeList5000(benchmark::State& state) {
  const std::string json = NodeListJson(5000);
  for (auto _ : state) {
    auto list = DecodeNodeList(json);
    if (!list.ok() || list->items.size() != 5000) {
      state.SkipWithError(list.ok() ? "wrong item count" : list.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(list);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 5000));
  state.counters["bytes_per_node"] = static_cast<double>(json.size()) / 5000;
}
BENCHMARK(BM_DecodeNodeList5000)->Unit(benchmark::kMillisecond);

void BM_DecodePod(benchmark::State& state) {
  const std::string json = ReadTestdata("pod_full.json");
  for (auto _ : state) {
    auto pod = DecodePod(json);
    if (!pod.ok()) {
      state.SkipWithError(pod.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DecodePod)->Unit(benchmark::kMicrosecond);

void BM_DecodeFilterArgs5000Names(benchmark::State& state) {
  const std::string pod = ReadTestdata("pod_full.json");
  std::string json = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < 5000; ++i)
    json += (i ? ",\"gpu-node-" : "\"gpu-node-") + std::to_string(i) + "\"";
  json += "]}";
  for (auto _ : state) {
    auto args = DecodeExtenderArgs(json);
    if (!args.ok()) {
      state.SkipWithError(args.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(args);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodeFilterArgs5000Names)->Unit(benchmark::kMicrosecond);

void BM_FrameWatchStream1000PodEvents(benchmark::State& state) {
  const std::string pod = ReadTestdata("pod_full.json");
  // The API server's framing: one compact event a line.
  rapidjson::Document doc;
  if (Status s = ParseDocument(pod, &doc); !s.ok()) state.SkipWithError(s.ToString().c_str());
  const std::string compact_pod = ToCompactJson(doc);
  std::string stream;
  constexpr int kEvents = 1000;
  for (int i = 0; i < kEvents; ++i)
    stream += R"({"type":"MODIFIED","object":)" + compact_pod + "}\n";
  constexpr size_t kChunk = 16 << 10;  // what one read of the socket hands over
  for (auto _ : state) {
    WatchStreamParser parser;
    int events = 0;
    for (size_t at = 0; at < stream.size(); at += kChunk) {
      Status s = parser.Feed(std::string_view(stream).substr(at, kChunk), [&](WatchEvent&& e) {
        benchmark::DoNotOptimize(e);
        ++events;
        return true;
      });
      if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    }
    if (events != kEvents) state.SkipWithError("events lost");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEvents));
}
BENCHMARK(BM_FrameWatchStream1000PodEvents)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace muster::kube
