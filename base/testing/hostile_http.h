// Test-only: hostile HTTP clients over raw sockets, for the tests of every
// guarded muster port (base/guarded_server_test.cc, base/ops_server_test.cc,
// extender/server_hostile_test.cc): oversized heads, trickling clients, idle
// connections, and a /healthz poller from another client address that
// records whether the port kept answering during an attack.
//
// Header-only, test code only (not compiled into any library). Every socket
// read times out (SO_RCVTIMEO), so a test never hangs on a silent server.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace muster::base::testing {

constexpr size_t kMiB = size_t{1} << 20;

// A connection to 127.0.0.1:port, from `from` when set (any 127/8 address
// is loopback: "127.0.0.2" is another client to the server's caps); -1 when
// it fails. Reads time out after `timeout_s`.
inline int Connect(int port, const char* from = nullptr, int timeout_s = 30) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return fd;
  timeval timeout{.tv_sec = timeout_s, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (from != nullptr) {
    inet_pton(AF_INET, from, &addr.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd);
      return -1;
    }
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// False once the peer stops taking bytes (it answered and closed).
inline bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One HTTP response (head + Content-Length body), or what came before the
// peer closed, then "<connection closed>".
inline std::string ReadResponse(int fd) {
  std::string data;
  char buf[4096];
  for (;;) {
    const size_t end = data.find("\r\n\r\n");
    if (end != std::string::npos) {
      const size_t cl = data.find("Content-Length: ");
      const size_t length =
          cl == std::string::npos || cl > end ? 0 : std::stoul(data.substr(cl + 16));
      if (data.size() >= end + 4 + length) return data;
    }
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return data + "<connection closed>";
    data.append(buf, static_cast<size_t>(n));
  }
}

// True when the peer has closed `fd` (reads end) before `timeout_s`; bytes
// it sent before are skipped.
inline bool ClosedByPeer(int fd, int timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
  return false;
}

// The status code of a raw HTTP response; 0 when there is none.
inline int StatusOf(const std::string& response) {
  if (!response.starts_with("HTTP/1.1 ") || response.size() < 12) return 0;
  return std::stoi(response.substr(9, 3));
}

inline bool AsksToClose(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  const size_t close = response.find("Connection: close\r\n");
  return close != std::string::npos && close < end;
}

// The body of the first response in `response`.
inline std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  const size_t cl = response.find("Content-Length: ");
  if (end == std::string::npos || cl == std::string::npos || cl > end) return "";
  return response.substr(end + 4, std::stoul(response.substr(cl + 16)));
}

// Peak resident set size of this process in KiB (VmHWM); 0 when unknown.
inline int64_t PeakRssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6));
  }
  return 0;
}

// Restarts VmHWM from the current RSS (Linux >= 4.0); false when refused.
inline bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5" << std::flush;
  return clear.good();
}

// Polls GET /healthz on a thread, from another client address (127.0.0.2),
// each on a new connection, until Stop(): how many answered 200, how many
// did not, and the slowest answer.
class HealthPoller {
 public:
  struct Result {
    int ok = 0;
    int failed = 0;
    double slowest_s = 0;
    std::string failure;  // the last one
  };

  explicit HealthPoller(int port) : thread_([this, port] { Run(port); }) {}
  ~HealthPoller() { Stop(); }
  HealthPoller(const HealthPoller&) = delete;
  HealthPoller& operator=(const HealthPoller&) = delete;

  // Stops after at least one poll has ended (a fast attack may end first).
  Result Stop() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (polls_ == 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return result_;
  }

 private:
  void Run(int port) {
    while (!stop_) {
      const auto start = std::chrono::steady_clock::now();
      const int fd = Connect(port, "127.0.0.2", 20);
      std::string response = "<cannot connect>";
      if (fd >= 0) {
        SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: muster\r\nConnection: close\r\n\r\n");
        response = ReadResponse(fd);
        close(fd);
      }
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      result_.slowest_s = std::max(result_.slowest_s, took.count());
      if (StatusOf(response) == 200 && BodyOf(response) == "ok\n") {
        ++result_.ok;
      } else {
        ++result_.failed;
        result_.failure = response.substr(0, 200);
      }
      ++polls_;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<int> polls_{0};
  Result result_;  // the thread's until Stop() joins it
  std::thread thread_;
};

// Sends `head`, then `unit` once a second until the server answers (or
// `max_units`), then reads the answer.
inline std::string Trickle(int fd, const std::string& head, const std::string& unit,
                           int max_units) {
  SendAll(fd, head);
  for (int i = 0; i < max_units; ++i) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 1000) > 0) break;
    if (!SendAll(fd, unit)) break;
  }
  return ReadResponse(fd);
}

// Sends `head`, then `blocks` blocks of 1 MiB of `fill` until the server
// stops taking them, then reads the answer.
inline std::string Flood(int fd, const std::string& head, char fill, int blocks) {
  const std::string block(kMiB, fill);
  bool sent = SendAll(fd, head);
  for (int i = 0; sent && i < blocks; ++i) sent = SendAll(fd, block);
  return ReadResponse(fd);
}

// An attack on one connection and the answer it must get.
struct HostileCase {
  std::string name;
  std::function<std::string(int fd)> attack;  // returns the server's answer
  int want_status;
};

// The head and deadline attacks, each on a GET of `get_path` or a POST to
// `post_path` (a route that reads its body). The trickles need a request
// deadline of a few seconds.
inline std::vector<HostileCase> HostileHeadCases(const std::string& get_path,
                                                 const std::string& post_path) {
  std::string many_headers = "GET " + get_path + " HTTP/1.1\r\nHost: muster\r\n";
  for (int i = 0; i < 10000; ++i) many_headers += "X-H" + std::to_string(i) + ": v\r\n";
  many_headers += "\r\n";
  const std::string get = "GET " + get_path + " HTTP/1.1\r\nHost: muster\r\n";
  const std::string post = "POST " + post_path +
                           " HTTP/1.1\r\nHost: muster\r\nContent-Type: application/json\r\n"
                           "Content-Length: 100\r\n\r\n";
  return {
      {"100 MB request line", [](int fd) { return Flood(fd, "GET /", 'a', 100); }, 414},
      {"64 MiB header line", [get](int fd) { return Flood(fd, get + "X-Big: ", 'b', 64); }, 431},
      {"10000 headers", [many_headers](int fd) { return Flood(fd, many_headers, 'c', 0); }, 431},
      {"a header line per second", [get](int fd) { return Trickle(fd, get, "X-Slow: 1\r\n", 60); },
       408},
      {"a body byte per second", [post](int fd) { return Trickle(fd, post, "[", 60); }, 408},
  };
}

// Runs each case on a new connection while /healthz is polled from another
// client: the case's status with a text body and Connection: close, then
// the connection closed, peak RSS growth under `max_growth_kib`, /healthz
// answering throughout, and `still_serving` passing after each case.
inline void ExpectHostileCasesRefused(int port, const std::vector<HostileCase>& cases,
                                      int64_t max_growth_kib,
                                      const std::function<void()>& still_serving) {
  for (const HostileCase& c : cases) {
    SCOPED_TRACE(c.name);
    HealthPoller health(port);
    const bool reset = ResetPeakRss();
    const int64_t peak_before = PeakRssKib();
    const auto start = std::chrono::steady_clock::now();
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    const std::string response = c.attack(fd);
    const bool closed = ClosedByPeer(fd, 10);
    close(fd);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const int64_t growth_kib = PeakRssKib() - peak_before;
    EXPECT_EQ(StatusOf(response), c.want_status) << response.substr(0, 300);
    EXPECT_TRUE(AsksToClose(response)) << response.substr(0, 300);
    EXPECT_FALSE(BodyOf(response).empty()) << response.substr(0, 300);
    EXPECT_TRUE(closed) << "the server left the connection open";
    EXPECT_LT(took.count(), 60.0);
    EXPECT_LT(growth_kib, max_growth_kib) << "peak RSS grew by " << growth_kib << " KiB";
    const HealthPoller::Result polled = health.Stop();
    EXPECT_EQ(polled.failed, 0) << polled.failure;
    EXPECT_GT(polled.ok, 0);
    std::printf("[ %s ] %d in %.2f s, peak RSS +%lld KiB%s, /healthz %d ok, slowest %.3f s\n",
                c.name.c_str(), StatusOf(response), took.count(),
                static_cast<long long>(growth_kib), reset ? "" : " (peak not reset)", polled.ok,
                polled.slowest_s);
    still_serving();
  }
}

// Opens `count` connections that send nothing, all at once, while /healthz
// is polled from another client: /healthz answers throughout, and every
// idle connection is closed by the server (evicted over a cap or after the
// keep-alive timeout) within `close_within_s`.
inline void ExpectIdleConnectionsShed(int port, int count, int close_within_s) {
  HealthPoller health(port);
  std::vector<int> idle;
  for (int i = 0; i < count; ++i) {
    const int fd = Connect(port, nullptr, 5);
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_EQ(static_cast<int>(idle.size()), count) << "connects refused by the kernel";
  int closed = 0;
  for (int fd : idle) {
    closed += ClosedByPeer(fd, close_within_s) ? 1 : 0;
    close(fd);
  }
  EXPECT_EQ(closed, static_cast<int>(idle.size()));
  const HealthPoller::Result polled = health.Stop();
  EXPECT_EQ(polled.failed, 0) << polled.failure;
  EXPECT_GT(polled.ok, 0);
  std::printf(
      "[ %d idle connections ] all closed by the server: %d; /healthz %d ok, slowest %.3f s\n",
      count, closed, polled.ok, polled.slowest_s);
}

// Waits up to 10 s until `open_connections()` is `want`.
inline bool OpenConnectionsReach(const std::function<int64_t()>& open_connections, int64_t want) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (open_connections() != want) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Fills the per-client cap with connections that started a request (a
// request line, no end of head), then one more: it gets 503 with
// Connection: close at once, unread, while another client's /healthz is
// served. The open connections are closed afterwards. `open_connections`
// is the server's count (GuardStats::open_connections): the fill starts
// once the connections of earlier steps are gone - one a client just closed
// still counts while a worker finishes with it, and would take a place of
// the cap that is not idle, so not evictable.
inline void ExpectOverCapRefused(int port, int cap,
                                 const std::function<int64_t()>& open_connections) {
  ASSERT_TRUE(OpenConnectionsReach(open_connections, 0))
      << open_connections() << " connections of earlier steps still open";
  std::vector<int> busy;
  for (int i = 0; i < cap; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET /healthz HTTP/1.1\r\n"));
    busy.push_back(fd);
  }
  ASSERT_TRUE(OpenConnectionsReach(open_connections, cap)) << open_connections();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // their bytes are seen
  HealthPoller health(port);
  const auto start = std::chrono::steady_clock::now();
  const int extra = Connect(port);
  ASSERT_GE(extra, 0);
  const std::string response = ReadResponse(extra);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  const bool closed = ClosedByPeer(extra, 10);
  close(extra);
  EXPECT_EQ(StatusOf(response), 503) << response;
  EXPECT_TRUE(AsksToClose(response)) << response;
  EXPECT_TRUE(closed) << "the refused connection was left open";
  EXPECT_LT(took.count(), 5.0) << "answered at once, not after a worker freed";
  for (int fd : busy) close(fd);
  const HealthPoller::Result polled = health.Stop();
  EXPECT_EQ(polled.failed, 0) << polled.failure;
}

}  // namespace muster::base::testing
