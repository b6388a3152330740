// OpsServer: the operator-facing HTTP endpoints of a muster process -
// /metrics (Prometheus text), /healthz (alive) and /readyz (caches synced) -
// on an address of their own. The reconciler serves only these; the
// extender serves them beside its verbs and, with --metrics-port, here too,
// so a Pod can expose metrics to Prometheus while the verbs stay on loopback.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "model/status.h"

namespace httplib {
class Server;
}

namespace muster::kube {

struct OpsEndpoints {
  std::function<std::string()> metrics;  // required: the exposition text
  std::function<bool()> ready;           // null: always ready
  std::string not_ready_reason = "caches not synced yet";
};

// Thread-safety: Start() and Stop() from one owner thread; the endpoint
// functions run on the server's worker threads and must be thread-safe.
class OpsServer {
 public:
  explicit OpsServer(OpsEndpoints endpoints);
  ~OpsServer();  // Stop()s
  OpsServer(const OpsServer&) = delete;
  OpsServer& operator=(const OpsServer&) = delete;

  // Binds address:port (port 0: an ephemeral one, see port()) and serves on
  // a thread. Unavailable when the address cannot be bound.
  // REQUIRES: called at most once.
  Status Start(const std::string& address, int port);
  // Stops accepting and joins. Idempotent.
  void Stop();
  int port() const { return port_; }

 private:
  const OpsEndpoints endpoints_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
};

}  // namespace muster::kube
