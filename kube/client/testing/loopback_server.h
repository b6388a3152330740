// Test-only: a real cpp-httplib server on 127.0.0.1 that replays API-server
// answers, records what it was asked, and can be stopped and restarted on
// the same port (an API-server restart).
//
// Header-only, test code only (not compiled into any library).
//
// Thread-safety: LoopbackServer and RequestLog are thread-safe; handlers run
// on the server's worker threads.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace muster::kube::testing {

// Polls `pred` until it holds or `timeout` passed; returns pred(). The only
// way these tests wait for another thread: a bounded wait on a condition.
inline bool WaitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

struct RecordedRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string body;
  std::string content_type;
  std::string authorization;
  std::string user_agent;
  int remote_port = 0;

  std::string Param(const std::string& key) const {
    auto it = params.find(key);
    return it == params.end() ? "" : it->second;
  }
  bool HasParam(const std::string& key) const { return params.count(key) > 0; }
};

class RequestLog {
 public:
  void Add(const httplib::Request& req) {
    RecordedRequest r;
    r.method = req.method;
    r.path = req.path;
    r.params = std::multimap<std::string, std::string>(req.params.begin(), req.params.end());
    r.body = req.body;
    r.content_type = req.get_header_value("Content-Type");
    r.authorization = req.get_header_value("Authorization");
    r.user_agent = req.get_header_value("User-Agent");
    r.remote_port = req.remote_port;
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(std::move(r));
  }
  std::vector<RecordedRequest> Snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<RecordedRequest> requests_;
};

class LoopbackServer {
 public:
  // `install` registers the routes on each fresh httplib::Server (a restart
  // builds a new one).
  using Installer = std::function<void(httplib::Server&)>;
  // Builds the server object (e.g. an httplib::SSLServer); null: plain HTTP.
  using Factory = std::function<std::unique_ptr<httplib::Server>()>;
  explicit LoopbackServer(Installer install, Factory factory = nullptr)
      : install_(std::move(install)), factory_(std::move(factory)) {}
  ~LoopbackServer() { Stop(); }

  // Binds 127.0.0.1:`port` (0: any free port) and serves on a thread.
  // Retries a busy port for up to two seconds (a restart right after Stop).
  bool Start(int port = 0) {
    Stop();
    std::unique_ptr<httplib::Server> server =
        factory_ ? factory_() : std::make_unique<httplib::Server>();
    server->set_tcp_nodelay(true);
    server->set_keep_alive_timeout(1);  // so Stop() does not wait on idle keep-alives
    install_(*server);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int bound = -1;
    while (bound < 0 && std::chrono::steady_clock::now() < deadline) {
      if (port == 0) {
        bound = server->bind_to_any_port("127.0.0.1");
      } else if (server->bind_to_port("127.0.0.1", port)) {
        bound = port;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (bound <= 0) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = false;
      port_ = bound;
    }
    server_ = std::move(server);
    thread_ = std::thread([s = server_.get()] { s->listen_after_bind(); });
    // httplib's stop() is a no-op until the accept loop runs: wait for it.
    return WaitFor([s = server_.get()] { return s->is_running(); });
  }

  // Releases blocked stream handlers, then stops and joins the server.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }

  int port() const {
    std::lock_guard<std::mutex> lock(mu_);
    return port_;
  }
  // "http://127.0.0.1:<port>"; pass "https" for a TLS server.
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port());
  }

  // For handlers that hold a stream open: blocks until Stop() or `timeout`.
  // Returns true when the server is stopping.
  bool WaitUntilStopping(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return stopping_; });
  }

 private:
  Installer install_;
  Factory factory_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int port_ = 0;
};

}  // namespace muster::kube::testing
