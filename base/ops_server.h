// OpsServer: the operator-facing HTTP endpoints of a muster process -
// /metrics (Prometheus text), /healthz (alive) and /readyz (caches synced) -
// on an address of their own. The reconciler serves only these; the
// extender serves them beside its verbs (AddOpsEndpoints on its own server)
// and, with --metrics-port, here too, so a Pod can expose metrics to
// Prometheus while the verbs stay on loopback.
//
//   GET /metrics -> 200, OpsEndpoints::metrics() as text/plain; version=0.0.4
//   GET /healthz -> 200 "ok\n" while the process serves
//   GET /readyz  -> 200 "ok\n" once OpsEndpoints::ready() holds, else 503
//                   "<not_ready_reason>\n"; with OpsEndpoints::role, "ok (<role>)\n"
//                   (a standby replica is ready too: its caches are warm)
//   GET /debug/state -> 200, OpsEndpoints::debug_state() as JSON, when set
//
// The port is a guarded server (guarded_server.h): request-head limits (431,
// 414), a whole-request deadline (408), connection caps (503) and an idle
// keep-alive timeout, from OpsServerOptions.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/guarded_server.h"
#include "base/http_serving.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace muster::base {

struct OpsEndpoints {
  std::function<std::string()> metrics;  // required: the exposition text
  std::function<bool()> ready;           // null: always ready
  std::string not_ready_reason = "caches not synced yet";
  // Leader election's role for /readyz's body ("leader", "standby"); null:
  // none is named.
  std::function<std::string()> role;
  // GET /debug/state's JSON (the extender's view, read by `muster why`
  // through the API server's pod proxy); null: no such endpoint.
  std::function<std::string()> debug_state;
};

// Routes GET /metrics, /healthz and /readyz of `http` to `endpoints`, whose
// functions then run on the server's worker threads and must be thread-safe.
void AddOpsEndpoints(httplib::Server& http, OpsEndpoints endpoints);

// The ops port's connection guard. Defaults as GuardOptions, with fewer
// workers: its requests are small and quick.
struct OpsServerOptions {
  GuardOptions connections = {.threads = 4};
};

// Thread-safety: Start() and Stop() from one owner thread; the endpoint
// functions run on the server's worker threads and must be thread-safe.
class OpsServer {
 public:
  explicit OpsServer(OpsEndpoints endpoints, const OpsServerOptions& options = {});
  ~OpsServer();  // Stop()s
  OpsServer(const OpsServer&) = delete;
  OpsServer& operator=(const OpsServer&) = delete;

  // Binds address:port (port 0: an ephemeral one, see port()) and serves on
  // a thread. False when the address cannot be bound, with *error set to
  // CannotListenMessage (the caller's Unavailable).
  // REQUIRES: called at most once.
  [[nodiscard]] bool Start(const std::string& address, int port, std::string* error);
  // Stops accepting and joins. Idempotent.
  void Stop();
  int port() const { return port_; }
  // What the connection guard did (GuardStatsOf). Thread-safe.
  GuardStats guard_stats() const;

 private:
  std::unique_ptr<httplib::Server> http_;
  ListenThread listener_;  // after http_: stopped before the server goes
  int port_ = 0;
};

}  // namespace muster::base
