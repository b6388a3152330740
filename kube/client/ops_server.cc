#include "kube/client/ops_server.h"

#include <httplib.h>

#include <chrono>
#include <utility>

namespace muster::kube {
namespace {
constexpr const char* kText = "text/plain; charset=utf-8";
}  // namespace

OpsServer::OpsServer(OpsEndpoints endpoints)
    : endpoints_(std::move(endpoints)), http_(std::make_unique<httplib::Server>()) {
  // SO_REUSEADDR for a quick restart, but not cpp-httplib's default
  // SO_REUSEPORT: a second process on the same port must fail, not share it.
  http_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(endpoints_.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", kText);
  });
  http_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ready = !endpoints_.ready || endpoints_.ready();
    res.status = ready ? 200 : 503;
    res.set_content(ready ? "ok\n" : endpoints_.not_ready_reason + "\n", kText);
  });
}

OpsServer::~OpsServer() { Stop(); }

Status OpsServer::Start(const std::string& address, int port) {
  port_ = port == 0 ? http_->bind_to_any_port(address)
                    : (http_->bind_to_port(address, port) ? port : -1);
  if (port_ <= 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot listen on " + address + ":" + std::to_string(port));
  }
  thread_ = std::thread([this] {
    http_->listen_after_bind();
    listen_returned_ = true;
  });
  return Status::Ok();
}

void OpsServer::Stop() {
  if (!thread_.joinable()) return;
  // stop() does nothing until the listen loop has started: repeat it until
  // the loop returned.
  while (!listen_returned_) {
    http_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  thread_.join();
}

}  // namespace muster::kube
