// kube/client against a real kube-apiserver (e2e tier, label "e2e").
//
// Runs inside the CTest fixture that brings the loopback control plane up
// (e2e/CMakeLists.txt); KUBECONFIG points at its admin kubeconfig. Every verb
// muster uses is exercised and asserted through the API: list (paged), watch
// through informers (including a relist forced by a real 410 Gone), create,
// merge / strategic-merge / JSON patches, status patches, pods/binding,
// pods/eviction, delete with preconditions, and the error mapping.
// MUSTER_E2E_DIR names the cluster's state directory (for etcd's port).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/informer.h"
#include "kube/client/kubeconfig.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::kube {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr auto kWait = std::chrono::seconds(60);

// Polls `pred` every 100 ms until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& pred, Duration timeout = kWait) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

// What a pod informer's handlers saw, in order ("add p", "update p", "delete p").
class EventLog {
 public:
  InformerHandlers<Pod> Handlers() {
    return {[this](const Pod& p) { Record("add " + p.meta.name); },
            [this](const Pod&, const Pod& p) { Record("update " + p.meta.name); },
            [this](const Pod& p) { Record("delete " + p.meta.name); }};
  }
  bool Saw(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& e : entries_) {
      if (e == entry) return true;
    }
    return false;
  }

 private:
  void Record(std::string entry) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back(std::move(entry));
  }
  std::mutex mu_;
  std::vector<std::string> entries_;
};

class ClientE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<ClientConfig> config = ResolveConfig("");
    ASSERT_TRUE(config.ok()) << config.status() << " (is KUBECONFIG set by the e2e fixture?)";
    StatusOr<std::unique_ptr<Client>> client = Client::New(*config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(client).value().release();
    ns_ = "client-e2e-" + std::to_string(getpid());
    std::string body =
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns_ + R"("}})";
    StatusOr<std::string> created = client_->Create(ResourceRef::Core("namespaces"), body);
    ASSERT_TRUE(created.ok()) << created.status();
    // Pods need the namespace's default ServiceAccount (made by the controller manager).
    ASSERT_TRUE(WaitUntil([] {
      return client_->Get(ResourceRef::Core("serviceaccounts", ns_, "default")).ok();
    })) << "no default ServiceAccount in "
        << ns_;
  }

  static void TearDownTestSuite() {
    if (client_ == nullptr) return;
    (void)client_->Delete(ResourceRef::Core("namespaces", "", ns_));
    delete client_;
    client_ = nullptr;
  }

  static ResourceRef Pods() { return ResourceRef::Core("pods", ns_); }

  // A pod no scheduler picks up (we bind it ourselves), asking for one GPU.
  static std::string PodJson(const std::string& name) {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
           R"(","annotations":{"muster.io/run-seconds":"600"}},"spec":{"schedulerName":"e2e-nobody","tolerations":[{"operator":"Exists"}],"containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"100m","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}})";
  }

  static Pod CreatePod(const std::string& name) {
    StatusOr<std::string> created = client_->Create(Pods(), PodJson(name));
    EXPECT_TRUE(created.ok()) << created.status();
    StatusOr<Pod> pod = created.ok() ? DecodePod(*created) : StatusOr<Pod>(created.status());
    EXPECT_TRUE(pod.ok()) << pod.status();
    return pod.ok() ? *pod : Pod{};
  }

  static std::string AnyFakeNode() {
    StatusOr<std::string> list = client_->List(ResourceRef::Core("nodes"));
    EXPECT_TRUE(list.ok()) << list.status();
    StatusOr<ObjectList<Node>> nodes = DecodeNodeList(list.ok() ? *list : "{}");
    EXPECT_TRUE(nodes.ok() && !nodes->items.empty());
    return nodes.ok() && !nodes->items.empty() ? nodes->items.front().meta.name : "";
  }

  static Client* client_;
  static std::string ns_;
};

Client* ClientE2eTest::client_ = nullptr;
std::string ClientE2eTest::ns_;

TEST_F(ClientE2eTest, ListsNodesInPagesAndDecodesRealNodes) {
  StatusOr<std::vector<std::string>> pages =
      client_->ListAll(ResourceRef::Core("nodes"), ListOptions{.limit = 1});
  ASSERT_TRUE(pages.ok()) << pages.status();
  ASSERT_GE(pages->size(), 2u) << "a limit of 1 must page through the fake nodes";
  for (const std::string& page : *pages) {
    StatusOr<ObjectList<Node>> nodes = DecodeNodeList(page);
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    for (const Node& node : nodes->items) {
      EXPECT_EQ(node.allocatable.gpus(), 8) << node.meta.name;
      EXPECT_TRUE(node.IsReady()) << node.meta.name;
    }
  }
}

TEST_F(ClientE2eTest, NodeInformerSyncsTheWholeCluster) {
  Informer<Node> nodes(client_, ResourceRef::Core("nodes"), DecodeNode, DecodeNodeList);
  nodes.Start();
  ASSERT_TRUE(nodes.WaitForSync(kWait));
  StatusOr<std::string> list = client_->List(ResourceRef::Core("nodes"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(nodes.List().size(), DecodeNodeList(*list)->items.size());
  EXPECT_EQ(nodes.stats().decode_failures, 0);
}

TEST_F(ClientE2eTest, PatchesAndStatusUpdatesReachTheServerAndTheInformer) {
  EventLog log;
  Informer<Pod> pods(client_, Pods(), DecodePod, DecodePodList);
  pods.AddHandlers(log.Handlers());
  pods.Start();
  ASSERT_TRUE(pods.WaitForSync(kWait));
  CreatePod("patched");
  ASSERT_TRUE(WaitUntil([&] { return log.Saw("add patched"); }));

  const ResourceRef pod = Pods().WithName("patched");
  ASSERT_TRUE(
      client_->Patch(pod, PatchType::kMerge, R"({"metadata":{"labels":{"merge":"yes"}}})").ok());
  ASSERT_TRUE(
      client_
          ->Patch(pod, PatchType::kStrategicMerge, R"({"metadata":{"labels":{"strategic":"yes"}}})")
          .ok());
  ASSERT_TRUE(
      client_
          ->Patch(pod, PatchType::kJson,
                  R"([{"op":"add","path":"/metadata/annotations/muster.io~1json","value":"yes"}])")
          .ok());
  ASSERT_TRUE(
      client_
          ->PatchStatus(
              pod, PatchType::kStrategicMerge,
              R"({"status":{"conditions":[{"type":"muster.io/E2E","status":"True","reason":"Checked"}]}})")
          .ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto cached = pods.Get(ns_ + "/patched");
    if (cached == nullptr) return false;
    bool has_condition = false;
    for (const auto& c : cached->status.conditions) has_condition |= c.type == "muster.io/E2E";
    return cached->meta.labels.count("merge") && cached->meta.labels.count("strategic") &&
           cached->meta.annotations.count("muster.io/json") && has_condition;
  })) << "the informer never saw all four writes";

  // A malformed JSON patch is the server's 422, mapped and explained.
  StatusOr<std::string> bad = client_->Patch(pod, PatchType::kJson, R"([{"op":"frobnicate"}])");
  ASSERT_FALSE(bad.ok());
  EXPECT_GE(bad.status().http_code(), 400);
}

TEST_F(ClientE2eTest, BindsEvictsAndDeletesPods) {
  EventLog log;
  Informer<Pod> pods(client_, Pods(), DecodePod, DecodePodList);
  pods.AddHandlers(log.Handlers());
  pods.Start();
  ASSERT_TRUE(pods.WaitForSync(kWait));

  // Binding: spec.nodeName and our placement annotation land atomically.
  Pod bound = CreatePod("bound");
  const std::string node = AnyFakeNode();
  Binding binding;
  binding.meta.name = "bound";
  binding.meta.namespace_ = ns_;
  binding.meta.uid = bound.meta.uid;
  binding.meta.annotations["muster.io/placement"] = "e2e";
  binding.target_node = node;
  StatusOr<std::string> bind = client_->Bind(ns_, "bound", EncodeBinding(binding));
  ASSERT_TRUE(bind.ok()) << bind.status();
  ASSERT_TRUE(WaitUntil([&] {
    auto p = pods.Get(ns_ + "/bound");
    return p && p->spec.node_name == node && p->meta.annotations.count("muster.io/placement") &&
           p->status.phase == "Running";
  })) << "the bound pod never ran on "
      << node << " (kwok)";

  // Binding again is a conflict the caller can recognise.
  StatusOr<std::string> again = client_->Bind(ns_, "bound", EncodeBinding(binding));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().http_code(), 409);

  // Eviction: the running pod is deleted gracefully (kwok finishes the deletion).
  Eviction eviction;
  eviction.meta.name = "bound";
  eviction.meta.namespace_ = ns_;
  eviction.precondition_uid = bound.meta.uid;
  StatusOr<std::string> evicted = client_->Evict(ns_, "bound", EncodeEviction(eviction));
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  ASSERT_TRUE(WaitUntil([&] { return log.Saw("delete bound"); }));

  // Delete honours the UID precondition.
  Pod doomed = CreatePod("doomed");
  StatusOr<std::string> wrong =
      client_->Delete(Pods().WithName("doomed"), DeleteOptions{.precondition_uid = "not-its-uid"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kConflict);
  ASSERT_TRUE(
      client_->Delete(Pods().WithName("doomed"), DeleteOptions{.precondition_uid = doomed.meta.uid})
          .ok());
  ASSERT_TRUE(WaitUntil([&] { return log.Saw("delete doomed"); }));
}

TEST_F(ClientE2eTest, MapsServerErrorsWithTheirReasons) {
  CreatePod("twice");
  StatusOr<std::string> dup = client_->Create(Pods(), PodJson("twice"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.status().reason(), "AlreadyExists");

  StatusOr<std::string> missing = client_->Get(Pods().WithName("no-such-pod"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().http_code(), 404);
}

// The cluster's etcd client port, from the e2e cluster's state file.
int EtcdPort() {
  const char* dir = std::getenv("MUSTER_E2E_DIR");
  if (dir == nullptr) return 0;
  std::ifstream state(std::string(dir) + "/state");
  std::string kind, name;
  int port = 0;
  while (state >> kind) {
    if (kind == "port" && state >> name >> port && name == "etcd") return port;
    state.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Compacts etcd's history up to its current revision (etcd's JSON gateway).
Status CompactEtcd(int port) {
  httplib::Client etcd("127.0.0.1", port);
  auto range = etcd.Post("/v3/kv/range", R"({"key":"AA=="})", "application/json");
  if (!range || range->status != 200) return UnavailableError("etcd range failed");
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(ParseDocument(range->body, &doc));
  if (!doc.HasMember("header") || !doc["header"].HasMember("revision") ||
      !doc["header"]["revision"].IsString()) {
    return InternalError("etcd range answer without header.revision: " + range->body);
  }
  std::string revision = doc["header"]["revision"].GetString();
  auto compacted =
      etcd.Post("/v3/kv/compaction", R"({"revision":")" + revision + R"("})", "application/json");
  if (!compacted || compacted->status != 200) return UnavailableError("etcd compaction failed");
  return Status::Ok();
}

std::string EventJson(const std::string& ns, const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
         R"("},"involvedObject":{"kind":"Pod","apiVersion":"v1","namespace":")" + ns +
         R"(","name":"some-pod"},"reason":"E2E","message":"client e2e","type":"Normal","source":{"component":"muster-e2e"}})";
}

// Events are watched straight from etcd in the e2e cluster (cluster.sh:
// --watch-cache-sizes=events#0), so after a compaction a watch from an old
// resourceVersion gets a real 410 Gone, and the informer must relist.
TEST_F(ClientE2eTest, RelistsAfterARealGoneAndKeepsTheCacheRight) {
  const int etcd_port = EtcdPort();
  ASSERT_GT(etcd_port, 0) << "MUSTER_E2E_DIR/state names no etcd port";
  const ResourceRef events = ResourceRef::Core("events", ns_);
  StatusOr<std::string> first = client_->Create(events, EventJson(ns_, "before-gone"));
  ASSERT_TRUE(first.ok()) << first.status();

  Informer<Event> informer(client_, events, DecodeEvent, DecodeEventList);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(kWait));
  ASSERT_NE(informer.Get(ns_ + "/before-gone"), nullptr);
  const std::string old_version = informer.resource_version();
  const int64_t lists_before = informer.stats().lists;

  // Move etcd past the informer's version and compact the history away.
  ASSERT_TRUE(client_->Create(events, EventJson(ns_, "moves-etcd-on")).ok());
  ASSERT_TRUE(WaitUntil([&] { return informer.Get(ns_ + "/moves-etcd-on") != nullptr; }));
  ASSERT_TRUE(client_->Delete(events.WithName("before-gone")).ok());
  ASSERT_TRUE(CompactEtcd(etcd_port).ok());

  informer.ResumeWatchFromForTesting(old_version);
  ASSERT_TRUE(client_->Create(events, EventJson(ns_, "after-gone")).ok());  // ends the watch
  ASSERT_TRUE(WaitUntil([&] { return informer.stats().gone >= 1; }))
      << "the server never answered 410 Gone for compacted resourceVersion " << old_version;
  ASSERT_TRUE(WaitUntil([&] { return informer.stats().lists > lists_before; }));
  ASSERT_TRUE(WaitUntil([&] { return informer.Get(ns_ + "/after-gone") != nullptr; }));

  StatusOr<std::string> list = client_->List(events);
  ASSERT_TRUE(list.ok());
  StatusOr<ObjectList<Event>> server_events = DecodeEventList(*list);
  ASSERT_TRUE(server_events.ok()) << server_events.status();
  std::vector<std::string> server_names;
  for (const Event& e : server_events->items) server_names.push_back(e.meta.name);
  std::vector<std::string> cached_names;
  for (const auto& e : informer.List()) cached_names.push_back(e->meta.name);
  EXPECT_EQ(cached_names, server_names) << "after the relist the cache equals the server";
  EXPECT_EQ(informer.Get(ns_ + "/before-gone"), nullptr);
}

TEST_F(ClientE2eTest, VolcanoObjectsRoundTripThroughTheServer) {
  const ResourceRef queues{"scheduling.volcano.sh", "v1beta1", "queues"};
  const std::string name = ns_ + "-q";
  StatusOr<std::string> created = client_->Create(
      queues,
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
          name + R"("},"spec":{"weight":3,"capability":{"nvidia.com/gpu":"16"}}})");
  ASSERT_TRUE(created.ok()) << created.status();
  // What each server response shows is asserted, never a later GET: the
  // extender and the reconciler running in this cluster rewrite a queue's
  // status right after it appears (its counts, its state), so a GET races them.
  QueueStatus status;
  status.allocated = Resources{{"nvidia.com/gpu", 4 * kMilliPerGpu + kMilliPerGpu / 2}};
  StatusOr<std::string> patched = client_->PatchStatus(queues.WithName(name), PatchType::kMerge,
                                                       EncodeQueueStatusPatch(status));
  ASSERT_TRUE(patched.ok()) << patched.status();
  StatusOr<Queue> queue = DecodeQueue(*patched);
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->spec.weight, 3);
  EXPECT_EQ(queue->spec.capability->gpus(), 16);
  EXPECT_EQ(queue->status.allocated.milli_gpus(), 4500) << "4.5 GPUs, as the server stored them";
  StatusOr<std::string> opened =
      client_->PatchStatus(queues.WithName(name), PatchType::kMerge, EncodeQueueStatePatch("Open"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  StatusOr<Queue> open_queue = DecodeQueue(*opened);
  ASSERT_TRUE(open_queue.ok()) << open_queue.status();
  EXPECT_EQ(open_queue->status.state, "Open");
  EXPECT_TRUE(client_->Delete(queues.WithName(name)).ok());
}

}  // namespace
}  // namespace muster::kube
