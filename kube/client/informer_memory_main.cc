// What an informer costs in memory (issue 22), without a cluster: an
// Informer<Pod> (or Informer<Node>) lists N realistic objects - kwok pods as
// the API server returns them, with managedFields, a projected service
// account volume, tolerations, status conditions and container statuses -
// from an in-process fake API server that makes each page on request (so the
// fake holds no copy), then relists them once after a 410 Gone.
//
// Prints, as one JSON line: RSS (/proc/self/statm) and heap in use
// (mallinfo2, every arena) before the informer starts, once it synced, at the
// peak of the sync (VmHWM), after the relist, and after malloc_trim(0); per
// object; and the sync time. Run one configuration per process (RSS only
// grows): `muster_informer_memory --objects 50000 --page 500 --mode metadata`.
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "base/server_malloc.h"
#include "kube/client/client.h"
#include "kube/client/http_transport.h"
#include "kube/client/informer.h"
#include "kube/codec/core_codec.h"

namespace muster::kube {
namespace {

// A kwok pod bound at creation (bench/restart.py's fill pods), as the API
// server answers it: defaults, the service account volume, kwok's status.
// @N@ is the pod's number, @NODE@ its node.
constexpr std::string_view kPodTemplate =
    R"({"metadata":{"name":"fill-@N@","namespace":"default",)"
    R"("uid":"5b1f0a7e-3c2d-4e8f-9a6b-@N12@","resourceVersion":"@RV@",)"
    R"("creationTimestamp":"2025-03-14T09:26:53Z","labels":{"app":"fill","batch":"restart"},)"
    R"("managedFields":[{"manager":"kubectl-create","operation":"Update","apiVersion":"v1",)"
    R"("time":"2025-03-14T09:26:53Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{)"
    R"("f:labels":{".":{},"f:app":{},"f:batch":{}}},"f:spec":{"f:containers":{)"
    R"("k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},)"
    R"("f:resources":{".":{},"f:limits":{".":{},"f:nvidia.com/gpu":{}},"f:requests":{".":{},)"
    R"("f:cpu":{},"f:nvidia.com/gpu":{}}},"f:terminationMessagePath":{},)"
    R"("f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},)"
    R"("f:nodeName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},)"
    R"("f:terminationGracePeriodSeconds":{}}}},{"manager":"kwok","operation":"Update",)"
    R"("apiVersion":"v1","time":"2025-03-14T09:26:54Z","fieldsType":"FieldsV1","fieldsV1":{)"
    R"("f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},)"
    R"("f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},)"
    R"("k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},)"
    R"("f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},)"
    R"("f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},)"
    R"("f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},)"
    R"("k:{\"ip\":\"10.0.1.2\"}":{".":{},"f:ip":{}}},"f:startTime":{}}},"subresource":"status"}]},)"
    R"("spec":{"volumes":[{"name":"kube-api-access-x7k2p","projected":{"sources":[)"
    R"({"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{)"
    R"("name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{)"
    R"("items":[{"path":"namespace","fieldRef":{"apiVersion":"v1",)"
    R"("fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{)"
    R"("name":"main","image":"registry.invalid/muster/fake:1","resources":{"limits":{)"
    R"("nvidia.com/gpu":"1"},"requests":{"cpu":"100m","nvidia.com/gpu":"1"}},)"
    R"("volumeMounts":[{"name":"kube-api-access-x7k2p","readOnly":true,)"
    R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],)"
    R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
    R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Never",)"
    R"("terminationGracePeriodSeconds":0,"dnsPolicy":"ClusterFirst",)"
    R"("serviceAccountName":"default","serviceAccount":"default","nodeName":"@NODE@",)"
    R"("securityContext":{},"schedulerName":"default-scheduler","tolerations":[{)"
    R"("key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
    R"("tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists",)"
    R"("effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,)"
    R"("preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Running","conditions":[{)"
    R"("type":"Initialized","status":"True","lastProbeTime":null,)"
    R"("lastTransitionTime":"2025-03-14T09:26:54Z"},{"type":"Ready","status":"True",)"
    R"("lastProbeTime":null,"lastTransitionTime":"2025-03-14T09:26:54Z"},{)"
    R"("type":"ContainersReady","status":"True","lastProbeTime":null,)"
    R"("lastTransitionTime":"2025-03-14T09:26:54Z"},{"type":"PodScheduled","status":"True",)"
    R"("lastProbeTime":null,"lastTransitionTime":"2025-03-14T09:26:53Z"}],)"
    R"("hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":"10.0.1.2",)"
    R"("podIPs":[{"ip":"10.0.1.2"}],"startTime":"2025-03-14T09:26:54Z","containerStatuses":[{)"
    R"("name":"main","state":{"running":{"startedAt":"2025-03-14T09:26:54Z"}},"lastState":{},)"
    R"("ready":true,"restartCount":0,"image":"registry.invalid/muster/fake:1","imageID":"",)"
    R"("started":true}],"qosClass":"BestEffort"}})";

// A kwok node (e2e/clusters/kwok-5000.yaml's shape) as the API server answers it.
constexpr std::string_view kNodeTemplate =
    R"({"metadata":{"name":"@NODE@",)"
    R"("uid":"9c4e2d1a-7b3f-4a6e-8d5c-@N12@","resourceVersion":"@RV@",)"
    R"("creationTimestamp":"2025-03-14T09:20:00Z","labels":{"beta.kubernetes.io/arch":"amd64",)"
    R"("beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",)"
    R"("kubernetes.io/hostname":"@NODE@","kubernetes.io/os":"linux","kubernetes.io/role":"agent",)"
    R"("node-role.kubernetes.io/agent":"","type":"kwok","nvidia.com/gpu.product":"NVIDIA-A100",)"
    R"("nvidia.com/gpu.count":"8","topology.kubernetes.io/zone":"zone-a"},"annotations":{)"
    R"("kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},"managedFields":[{)"
    R"("manager":"kubectl-create","operation":"Update","apiVersion":"v1",)"
    R"("time":"2025-03-14T09:20:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{)"
    R"("f:annotations":{".":{},"f:kwok.x-k8s.io/node":{},"f:node.alpha.kubernetes.io/ttl":{}},)"
    R"("f:labels":{".":{},"f:beta.kubernetes.io/arch":{},"f:beta.kubernetes.io/os":{},)"
    R"("f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{},)"
    R"("f:kubernetes.io/role":{},"f:node-role.kubernetes.io/agent":{},"f:type":{}}},)"
    R"("f:spec":{"f:taints":{}}}},{"manager":"kwok","operation":"Update","apiVersion":"v1",)"
    R"("time":"2025-03-14T09:20:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{)"
    R"("f:allocatable":{".":{},"f:cpu":{},"f:memory":{},"f:nvidia.com/gpu":{},"f:pods":{}},)"
    R"("f:capacity":{".":{},"f:cpu":{},"f:memory":{},"f:nvidia.com/gpu":{},"f:pods":{}},)"
    R"("f:conditions":{},"f:daemonEndpoints":{},"f:nodeInfo":{}}},"subresource":"status"}]},)"
    R"("spec":{"taints":[{"key":"kwok.x-k8s.io/node","value":"fake","effect":"NoSchedule"}]},)"
    R"("status":{"capacity":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8","pods":"110"},)"
    R"("allocatable":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8","pods":"110"},)"
    R"("conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2025-03-14T09:30:00Z",)"
    R"("lastTransitionTime":"2025-03-14T09:20:01Z","reason":"KubeletReady",)"
    R"("message":"kubelet is posting ready status"},{"type":"MemoryPressure","status":"False",)"
    R"("lastHeartbeatTime":"2025-03-14T09:30:00Z","lastTransitionTime":"2025-03-14T09:20:01Z",)"
    R"("reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"},)"
    R"({"type":"DiskPressure","status":"False","lastHeartbeatTime":"2025-03-14T09:30:00Z",)"
    R"("lastTransitionTime":"2025-03-14T09:20:01Z","reason":"KubeletHasNoDiskPressure",)"
    R"("message":"kubelet has no disk pressure"},{"type":"PIDPressure","status":"False",)"
    R"("lastHeartbeatTime":"2025-03-14T09:30:00Z","lastTransitionTime":"2025-03-14T09:20:01Z",)"
    R"("reason":"KubeletHasSufficientPID","message":"kubelet has sufficient PID available"}],)"
    R"("addresses":[{"type":"InternalIP","address":"10.0.0.1"}],"daemonEndpoints":{)"
    R"("kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"","systemUUID":"",)"
    R"("bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"",)"
    R"("kubeletVersion":"fake","kubeProxyVersion":"fake","operatingSystem":"linux",)"
    R"("architecture":"amd64"}}})";

std::string ReplaceAll(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

std::string ObjectJson(std::string_view tmpl, int64_t i, int64_t rv) {
  char n12[16];
  std::snprintf(n12, sizeof n12, "%012lld", static_cast<long long>(i));
  std::string s = ReplaceAll(std::string(tmpl), "@N12@", n12);
  s = ReplaceAll(std::move(s), "@NODE@", "kwok-node-" + std::to_string(i % 5000));
  s = ReplaceAll(std::move(s), "@RV@", std::to_string(rv));
  return ReplaceAll(std::move(s), "@N@", std::to_string(i));
}

// Answers lists of `objects` objects, page by page (continue = the next
// index), each made on request (every list the same versions); a watch
// waits for cancellation or ExpireWatch.
class SyntheticApi final : public HttpTransport {
 public:
  SyntheticApi(std::string_view tmpl, int64_t objects) : tmpl_(tmpl), objects_(objects) {}

  // The watch (open now or next) ends with an ERROR 410 event: the informer
  // lists again.
  void ExpireWatch() { expire_ = true; }

  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    const int64_t limit = Param(request.target, "limit=", objects_);
    const int64_t from = Param(request.target, "continue=", 0);
    const int64_t to = std::min(objects_, from + limit);
    std::string body = R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"9",)";
    body += R"("continue":")" + (to < objects_ ? std::to_string(to) : "") + R"("},"items":[)";
    for (int64_t i = from; i < to; ++i) {
      if (i > from) body += ',';
      body += ObjectJson(tmpl_, i, 1000 + i);
    }
    body += "]}";
    list_bytes_ += static_cast<int64_t>(body.size());
    return HttpResponse{.status = 200, .body = std::move(body)};
  }

  Status Stream(const HttpRequest& request, const ChunkHandler& on_data,
                int* http_status) override {
    *http_status = 200;
    while (request.cancel == nullptr || !request.cancel->WaitFor(std::chrono::milliseconds(5))) {
      if (expire_.exchange(false)) {
        on_data(R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired","code":410}})"
                "\n");
        return Status::Ok();
      }
    }
    return CancelledError("watch cancelled");
  }

  void Cancel() override {}
  int64_t list_bytes() const { return list_bytes_; }

 private:
  static int64_t Param(const std::string& target, std::string_view key, int64_t otherwise) {
    const size_t at = target.find(key);
    if (at == std::string::npos || target[at + key.size()] == '&') return otherwise;
    return std::atoll(target.c_str() + at + key.size());
  }

  const std::string_view tmpl_;
  const int64_t objects_;
  std::atomic<bool> expire_{false};
  std::atomic<int64_t> list_bytes_{0};
};

struct Memory {
  int64_t rss = 0;   // bytes resident
  int64_t heap = 0;  // bytes malloc'ed and not freed
  int64_t free = 0;  // bytes freed but kept by malloc (its arenas' free chunks)
};

Memory Now() {
  Memory m;
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  m.rss = resident * 4096;
  struct mallinfo2 info = mallinfo2();
  m.heap = static_cast<int64_t>(info.uordblks + info.hblkhd);
  m.free = static_cast<int64_t>(info.fordblks);
  return m;
}

int64_t PeakRss() {  // VmHWM
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024;
  }
  return 0;
}

struct Flags {
  int64_t objects = 50000;
  int64_t page = kDefaultListPageSize;  // as the informers list
  std::string kind = "pods";            // or "nodes"
  std::string mode = "full";            // or "metadata"
  bool server_malloc = true;            // base::ConfigureServerMalloc, as the servers run
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--objects") f.objects = std::atoll(value.c_str());
    if (key == "--page") f.page = std::atoll(value.c_str());
    if (key == "--kind") f.kind = value;
    if (key == "--mode") f.mode = value;
    if (key == "--server-malloc") f.server_malloc = value != "0";
  }
  return f;
}

template <typename T>
int Run(const Flags& flags, std::string_view tmpl, ResourceRef ref,
        typename Informer<T>::ItemDecoder item, typename Informer<T>::ListDecoder list) {
  auto api = std::make_shared<SyntheticApi>(tmpl, flags.objects);
  ClientConfig config;
  config.qps = 1e6;
  config.burst = 1000000;
  Client client(api, config);
  InformerOptions options;
  options.page_size = flags.page;
  options.backoff.initial = std::chrono::milliseconds(1);
  options.cache_mode = flags.mode == "metadata" ? CacheMode::kMetadataOnly : CacheMode::kFull;
  std::atomic<int64_t> told{0};
  const Memory before = Now();
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := RSS
  const auto start = std::chrono::steady_clock::now();
  Informer<T> informer(&client, std::move(ref), item, list, options);
  informer.AddHandlers({.on_add = [&](const T&) { ++told; },
                        .on_update = [&](const T&, const T&) { ++told; },
                        .on_delete = [&](const T&) { ++told; }});
  informer.Start();
  if (!informer.WaitForSync(std::chrono::minutes(5))) return 1;
  const double sync_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Memory synced = Now();
  const int64_t peak = PeakRss();
  std::ofstream("/proc/self/clear_refs") << "5";
  api->ExpireWatch();
  while (informer.stats().lists < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const Memory relisted = Now();
  const int64_t relist_peak = PeakRss();
  malloc_trim(0);
  const Memory trimmed = Now();
  const double n = static_cast<double>(flags.objects);
  constexpr double kMiB = 1 << 20;
  std::printf(R"({"kind":"%s","mode":"%s","objects":%lld,"page":%lld,"size":%zu,"told":%lld)",
              flags.kind.c_str(), flags.mode.c_str(), static_cast<long long>(flags.objects),
              static_cast<long long>(flags.page), informer.size(),
              static_cast<long long>(told.load()));
  const std::pair<const char*, double> figures[] = {
      {"json_bytes_per_object", api->list_bytes() / 2.0 / n},  // two lists
      {"sync_s", sync_s},
      {"rss_idle_mib", before.rss / kMiB},
      {"rss_synced_mib", synced.rss / kMiB},
      {"rss_peak_mib", peak / kMiB},
      {"rss_relisted_mib", relisted.rss / kMiB},
      {"rss_relist_peak_mib", relist_peak / kMiB},
      {"rss_trimmed_mib", trimmed.rss / kMiB},
      {"heap_synced_mib", (synced.heap - before.heap) / kMiB},
      {"heap_free_synced_mib", synced.free / kMiB},
      {"heap_per_object_b", (synced.heap - before.heap) / n},
      {"rss_per_object_b", (synced.rss - before.rss) / n},
      {"rss_trimmed_per_object_b", (trimmed.rss - before.rss) / n},
  };
  for (const auto& [name, value] : figures) std::printf(R"(,"%s":%.2f)", name, value);
  std::printf("}\n");
  informer.Stop();
  return 0;
}

}  // namespace
}  // namespace muster::kube

int main(int argc, char** argv) {
  using namespace muster::kube;
  const Flags flags = Parse(argc, argv);
  if (flags.server_malloc) muster::base::ConfigureServerMalloc();
  if (flags.kind == "nodes") {
    return Run<muster::Node>(flags, kNodeTemplate, ResourceRef::Core("nodes"), &DecodeNode,
                             &DecodeNodeList);
  }
  return Run<muster::Pod>(flags, kPodTemplate, ResourceRef::Core("pods"), &DecodePod,
                          &DecodePodList);
}
