#include "base/http_serving.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <utility>

#include "base/guarded_server.h"

namespace muster::base {

void ReuseAddressOnly(httplib::Server& http, std::function<void(int socket)> on_socket) {
  http.set_socket_options([on_socket = std::move(on_socket)](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (on_socket) on_socket(sock);
  });
}

int BindPort(httplib::Server& http, const std::string& address, int port) {
  const int bound =
      port == 0 ? http.bind_to_any_port(address) : (http.bind_to_port(address, port) ? port : -1);
  if (bound <= 0) return -1;
  RaiseBacklog(http);
  return bound;
}

std::string CannotListenMessage(const std::string& address, int port) {
  return "cannot listen on " + address + ":" + std::to_string(port);
}

void ListenThread::Start(httplib::Server* http,
                         std::function<void(const std::exception&)> on_exception) {
  http_ = http;
  thread_ = std::thread([this, on_exception = std::move(on_exception)] {
    try {
      http_->listen_after_bind();
    } catch (const std::exception& e) {
      if (!on_exception) throw;
      on_exception(e);
    }
    listen_returned_ = true;
  });
}

void ListenThread::Stop() {
  if (!thread_.joinable()) return;
  // cpp-httplib's stop() does nothing until the listen loop has started, so
  // a Stop() right after Start() repeats it until the loop is gone.
  while (!listen_returned_) {
    http_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  thread_.join();
}

}  // namespace muster::base
