// Test-only: the extender server on an ephemeral loopback port over a
// fake-clock cluster (fixture::TestCluster), with a Binder that records the
// Bindings, for server_test.cc and server_hostile_test.cc.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/metrics.h"
#include "extender/server.h"
#include "extender/testing/golden.h"

namespace muster::extender::fixture {

// Records the Bindings; checks at every POST that the reservation already
// counts and never takes the node past its GPUs.
class FakeBinder final : public Binder {
 public:
  explicit FakeBinder(ClusterAccess* cluster) : cluster_(cluster) {}
  Status Bind(const Binding& binding) override {
    const ClusterSnapshot snapshot = cluster_->Snapshot({});
    const NodeInfo* node = snapshot.FindNode(binding.target_node);
    std::lock_guard<std::mutex> lock(mu_);
    bindings_.push_back(binding);
    if (node != nullptr) {
      max_gpus_ = std::max(max_gpus_, node->allocated.gpus());
      over_ = over_ || node->allocated.gpus() > node->allocatable.gpus();
    }
    return answer_;
  }
  void Answer(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = std::move(s);
  }
  // What GetPod finds: the API server's pods, by namespace/name.
  void AddApiPod(Pod pod) {
    std::lock_guard<std::mutex> lock(mu_);
    api_pods_[pod.meta.namespace_ + "/" + pod.meta.name] = std::move(pod);
  }
  StatusOr<Pod> GetPod(std::string_view ns, std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = api_pods_.find(std::string(ns) + "/" + std::string(name));
    if (it == api_pods_.end()) return Status(StatusCode::kNotFound, "pods not found");
    return it->second;
  }
  std::vector<Binding> bindings() {
    std::lock_guard<std::mutex> lock(mu_);
    return bindings_;
  }
  bool overcommitted() {
    std::lock_guard<std::mutex> lock(mu_);
    return over_;
  }

 private:
  ClusterAccess* const cluster_;
  std::mutex mu_;
  std::vector<Binding> bindings_;
  std::map<std::string, Pod> api_pods_;
  Status answer_;
  int64_t max_gpus_ = 0;
  bool over_ = false;
};

inline ServerOptions TestOptions() {
  ServerOptions options;
  options.port = 0;
  return options;
}

// A server on an ephemeral loopback port over a fake-clock cluster.
struct Harness {
  explicit Harness(ServerOptions options = TestOptions()) {
    server =
        std::make_unique<Server>(options, ServerDeps{.pipeline = &cluster.pipeline,
                                                     .binder = &binder,
                                                     .metrics = &metrics,
                                                     .cluster = &cluster.cache,
                                                     .ready = [this] { return ready.load(); }});
    const Status started = server->Start();
    EXPECT_TRUE(started.ok()) << started;
  }
  std::unique_ptr<httplib::Client> Client() {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", server->port());
    client->set_keep_alive(true);
    client->set_read_timeout(10, 0);
    return client;
  }
  httplib::Result Post(const std::string& verb, const std::string& body) {
    return Client()->Post(("/scheduler/" + verb).c_str(), body, "application/json");
  }
  httplib::Result Get(const std::string& path) { return Client()->Get(path.c_str()); }

  TestCluster cluster;
  ExtenderMetrics metrics;
  FakeBinder binder{&cluster.cache};
  std::atomic<bool> ready{true};
  std::unique_ptr<Server> server;
};

// A testdata file, or with "codec:" a fixture of kube/codec's testdata.
inline std::string Fixture(const std::string& file) {
  const std::string codec = "codec:";
  if (file.starts_with(codec)) return CodecFixture(file.substr(codec.size()));
  return ReadTestdata(file);
}

}  // namespace muster::extender::fixture
