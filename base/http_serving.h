// The plumbing every muster HTTP server shares around cpp-httplib: the
// listening socket's options, binding a port, and the listen thread with its
// stop-and-join (extender::Server and base::OpsServer).
//
// Thread-safety: a ListenThread belongs to one owner thread (Start() and
// Stop() from there); the server it runs serves on its own worker threads.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <string>
#include <thread>

namespace httplib {
class Server;
}  // namespace httplib

namespace muster::base {

// SO_REUSEADDR (a restart may bind while old connections sit in TIME_WAIT)
// but not cpp-httplib's default SO_REUSEPORT, which would let a second process
// listen on the same port and take part of its calls: a second process on the
// port must fail to bind. `on_socket`, when set, is told the listening socket.
void ReuseAddressOnly(httplib::Server& http, std::function<void(int socket)> on_socket = nullptr);

// Binds address:port (port 0: an ephemeral one) and returns the bound port,
// or -1 when the address cannot be bound. A guarded server's listen backlog
// is raised to SOMAXCONN here (base/guarded_server.h RaiseBacklog).
int BindPort(httplib::Server& http, const std::string& address, int port);

// "cannot listen on ADDR:PORT", the error of a failed BindPort.
std::string CannotListenMessage(const std::string& address, int port);

// Runs a bound server's listen loop on a thread of its own.
class ListenThread {
 public:
  ListenThread() = default;
  ~ListenThread() { Stop(); }
  ListenThread(const ListenThread&) = delete;
  ListenThread& operator=(const ListenThread&) = delete;

  // Starts http->listen_after_bind() on the thread. An exception out of the
  // listen loop goes to `on_exception`, or ends the process when it is null.
  // REQUIRES: `http` is bound (BindPort), outlives Stop(); called at most once.
  void Start(httplib::Server* http,
             std::function<void(const std::exception&)> on_exception = nullptr);
  // Stops accepting, lets the workers finish and joins. Idempotent; nothing
  // to do before Start().
  void Stop();

 private:
  httplib::Server* http_ = nullptr;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
};

}  // namespace muster::base
