#include "base/ops_server.h"

#include <httplib.h>

#include <memory>
#include <utility>

namespace muster::base {
namespace {
constexpr const char* kText = "text/plain; charset=utf-8";
}  // namespace

void AddOpsEndpoints(httplib::Server& http, OpsEndpoints endpoints) {
  auto shared = std::make_shared<const OpsEndpoints>(std::move(endpoints));
  http.Get("/metrics", [shared](const httplib::Request&, httplib::Response& res) {
    res.set_content(shared->metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/healthz",
           [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", kText); });
  http.Get("/readyz", [shared](const httplib::Request&, httplib::Response& res) {
    const bool ready = !shared->ready || shared->ready();
    res.status = ready ? 200 : 503;
    if (!ready) {
      res.set_content(shared->not_ready_reason + "\n", kText);
    } else if (shared->role) {
      res.set_content("ok (" + shared->role() + ")\n", kText);
    } else {
      res.set_content("ok\n", kText);
    }
  });
  if (shared->debug_state) {
    http.Get("/debug/state", [shared](const httplib::Request&, httplib::Response& res) {
      res.set_content(shared->debug_state(), "application/json");
    });
  }
}

OpsServer::OpsServer(OpsEndpoints endpoints, const OpsServerOptions& options)
    : http_(NewGuardedServer(options.connections)) {
  ReuseAddressOnly(*http_);
  AddOpsEndpoints(*http_, std::move(endpoints));
}

OpsServer::~OpsServer() { Stop(); }

bool OpsServer::Start(const std::string& address, int port, std::string* error) {
  port_ = BindPort(*http_, address, port);
  if (port_ <= 0) {
    *error = CannotListenMessage(address, port);
    return false;
  }
  listener_.Start(http_.get());
  return true;
}

void OpsServer::Stop() { listener_.Stop(); }

GuardStats OpsServer::guard_stats() const { return GuardStatsOf(*http_); }

}  // namespace muster::base
