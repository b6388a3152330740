#include "base/guarded_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace muster::base {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Clock::time_point kNever = Clock::time_point::max();
// A refused or answered connection's input is drained this long after the
// reply, so closing it does not reset the connection before the client has
// read the reply.
constexpr auto kLinger = std::chrono::seconds(2);
constexpr size_t kReadChunk = size_t{16} << 10;

// ---- Counting a request head, not parsing it.

enum class Head { kPartial, kComplete, kTooLarge, kLineTooLong };

// cpp-httplib reads a head line by line up to an empty CRLF line. HeadScan
// counts the same lines and bytes, so the guard can refuse a head before
// holding more of it than the limits.
struct HeadScan {
  size_t bytes = 0;  // of the head so far
  size_t line = 0;   // of the current line so far
  int lines = 0;     // complete lines: the request line, then headers
  char prev = 0;

  // Feeds `data`; *used is how much of it belongs to the head.
  Head Feed(const GuardOptions& o, std::string_view data, size_t* used) {
    for (size_t i = 0; i < data.size(); ++i) {
      const char c = data[i];
      ++bytes;
      ++line;
      if (lines == 0 && line > o.max_request_line) return Head::kLineTooLong;
      if (bytes > o.max_head_bytes) return Head::kTooLarge;
      if (c == '\n') {
        if (line == 2 && prev == '\r') {
          *used = i + 1;
          return Head::kComplete;
        }
        line = 0;
        if (++lines > o.max_headers + 1) return Head::kTooLarge;
      }
      prev = c;
    }
    *used = data.size();
    return Head::kPartial;
  }
};

// ---- Sockets.

std::string ErrorReply(int status, std::string_view reason, std::string_view body) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + std::string(body);
}

void CloseFd(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// The peer's address ("127.0.0.1", "::1") and port; "" when unknown.
std::string AddressOf(int fd, bool peer, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? getpeername(fd, sa, &len) : getsockname(fd, sa, &len)) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    if (port != nullptr) *port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    if (port != nullptr) *port = ntohs(in6->sin6_port);
  }
  return text;
}

// Waits until `fd` has one of `events` (or an error) or `until` passes.
bool WaitFor(int fd, short events, Clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{.fd = fd, .events = events, .revents = 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// One admitted connection: its socket (non-blocking), TLS session, and the
// bytes received and not yet consumed. Owned by one thread at a time (the
// waiting room or one worker). Its destruction closes it and gives back its
// place under the caps.
struct Conn {
  int fd = -1;
  SSL* ssl = nullptr;
  bool handshaken = true;  // false for TLS until the handshake completes
  bool graceful = false;   // close TLS with close_notify
  std::string peer;
  std::string buf;  // received, not consumed
  HeadScan scan;
  size_t scanned = 0;    // bytes of buf fed to scan
  bool started = false;  // a byte of the current request (or handshake) arrived
  Clock::time_point idle_since;
  Clock::time_point idle_deadline = kNever;
  Clock::time_point deadline = kNever;  // of the current request, once started
  short want = POLLIN;
  std::function<void(const std::string&)> release;

  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn() {
    if (ssl != nullptr) {
      if (graceful) SSL_shutdown(ssl);
      SSL_free(ssl);
    }
    if (fd >= 0) CloseFd(fd);
    if (release) release(peer);
  }
  // Gives up the socket (to linger) without closing it.
  int TakeFd() { return std::exchange(fd, -1); }
};

// Moves bytes over the connection, never blocking: > 0 bytes moved, 0 the
// peer closed, -1 with *want the poll events to wait for, or 0 on an error.
ssize_t Recv(Conn& c, char* p, size_t n, short* want) {
  *want = 0;
  if (c.ssl == nullptr) {
    const ssize_t r = ::recv(c.fd, p, n, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) *want = POLLIN;
    return r;
  }
  ERR_clear_error();
  const int r = SSL_read(c.ssl, p, static_cast<int>(std::min<size_t>(n, 1 << 30)));
  if (r > 0) return r;
  const int e = SSL_get_error(c.ssl, r);
  if (e == SSL_ERROR_ZERO_RETURN) return 0;
  if (e == SSL_ERROR_WANT_READ) *want = POLLIN;
  if (e == SSL_ERROR_WANT_WRITE) *want = POLLOUT;
  return -1;
}

ssize_t Send(Conn& c, const char* p, size_t n, short* want) {
  *want = 0;
  if (c.ssl == nullptr) {
    const ssize_t r = ::send(c.fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) *want = POLLOUT;
    return r;
  }
  ERR_clear_error();
  const int r = SSL_write(c.ssl, p, static_cast<int>(std::min<size_t>(n, 1 << 30)));
  if (r > 0) return r;
  const int e = SSL_get_error(c.ssl, r);
  if (e == SSL_ERROR_WANT_READ) *want = POLLIN;
  if (e == SSL_ERROR_WANT_WRITE) *want = POLLOUT;
  return -1;
}

// Writes all of `data` unless the peer stalls past `until`.
bool SendAll(Conn& c, std::string_view data, Clock::time_point until) {
  while (!data.empty()) {
    short want = 0;
    const ssize_t r = Send(c, data.data(), data.size(), &want);
    if (r > 0) {
      data.remove_prefix(static_cast<size_t>(r));
    } else if (want == 0 || !WaitFor(c.fd, want, until)) {
      return false;
    }
  }
  return true;
}

// ---- The stream cpp-httplib reads a request from and writes its reply to.

// Serves the buffered head first, then reads the body from the socket, each
// wait bounded by the read timeout and by the request deadline. Once the
// deadline has passed, reads and writes fail (so cpp-httplib's 400 is not
// sent: the guard answers 408).
class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(Conn& c, const GuardOptions& o) : c_(c), o_(o) {}

  bool is_readable() const override {
    return pos_ < c_.buf.size() || (c_.ssl != nullptr && SSL_pending(c_.ssl) > 0);
  }
  bool is_writable() const override {
    return !timed_out_ && WaitFor(c_.fd, POLLOUT, Clock::now() + o_.write_timeout);
  }
  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == c_.buf.size()) {
      const ssize_t got = Fill();
      if (got <= 0) return got;
    }
    const size_t n = std::min(size, c_.buf.size() - pos_);
    std::memcpy(ptr, c_.buf.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  // A write may take write_timeout per MiB: a reader stalled longer frees
  // the worker.
  ssize_t write(const char* ptr, size_t size) override {
    if (timed_out_) return -1;
    const auto until = Clock::now() + o_.write_timeout * static_cast<int64_t>(1 + (size >> 20));
    if (!SendAll(c_, std::string_view(ptr, size), until)) return -1;
    wrote_ = true;
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = AddressOf(c_.fd, true, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = AddressOf(c_.fd, false, &port);
  }
  socket_t socket() const override { return c_.fd; }

  bool timed_out() const { return timed_out_; }
  bool wrote() const { return wrote_; }
  // Drops what cpp-httplib consumed: the rest is the next request's.
  void Compact() {
    c_.buf.erase(0, pos_);
    pos_ = 0;
  }

 private:
  // Reads more into the (consumed) buffer: > 0 bytes, 0 at the peer's end,
  // -1 on an error, the read timeout or the deadline.
  ssize_t Fill() {
    Compact();
    char chunk[kReadChunk];
    for (;;) {
      short want = 0;
      const ssize_t r = Recv(c_, chunk, sizeof chunk, &want);
      if (r > 0) {
        c_.buf.append(chunk, static_cast<size_t>(r));
        return r;
      }
      if (want == 0) return r == 0 ? 0 : -1;
      const auto now = Clock::now();
      if (now >= c_.deadline ||
          !WaitFor(c_.fd, want, std::min(now + o_.read_timeout, c_.deadline))) {
        timed_out_ = Clock::now() >= c_.deadline;
        return -1;
      }
    }
  }

  Conn& c_;
  const GuardOptions& o_;
  size_t pos_ = 0;
  bool timed_out_ = false;
  bool wrote_ = false;
};

// Runs one request on a stream: Server::process_request.
using ServeFn = std::function<bool(httplib::Stream&, bool& connection_closed, SSL* ssl)>;

struct Counters {
  std::atomic<int64_t> admitted{0}, refused{0}, evicted_idle{0}, head_too_large{0},
      line_too_long{0}, timed_out{0}, idle_closed{0}, requests{0};
};

// A socket answered and half-closed, drained until the peer closes or
// kLinger passes.
struct Lingering {
  int fd;
  Clock::time_point until;
  size_t drained = 0;
};
constexpr size_t kMaxDrain = size_t{1} << 20;

}  // namespace

// ---- The guard: admission, the waiting room, the workers.

class ConnectionGuard {
 public:
  ConnectionGuard(const GuardOptions& options, SSL_CTX* tls, ServeFn serve)
      : o_(options), tls_(tls), serve_(std::move(serve)) {}
  ~ConnectionGuard() { Shutdown(); }
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // Starts the waiting room and the workers (the listen loop is starting).
  void Start() MUSTER_EXCLUDES(mu_);
  // An accepted socket, from the listen thread: the waiting room admits it.
  void Accept(int fd) MUSTER_EXCLUDES(mu_);
  // Closes the waiting room, lets the workers finish and joins. Idempotent.
  void Shutdown() MUSTER_EXCLUDES(mu_);
  GuardStats Stats() const MUSTER_EXCLUDES(counts_mu_);

 private:
  enum class Step { kWait, kDispatch, kDone };

  void PollLoop() MUSTER_EXCLUDES(mu_);
  bool TakeInbox(std::vector<int>* fds, std::vector<std::unique_ptr<Conn>>* back)
      MUSTER_EXCLUDES(mu_);
  void Admit(int fd) MUSTER_EXCLUDES(counts_mu_);
  bool EvictIdle(const std::string* peer);
  void Refuse(int fd);
  void Arrive(std::unique_ptr<Conn> c);
  Step Pump(Conn& c, short revents);
  Step Scan(Conn& c);
  void Answer(Conn& c, int status, std::string_view reason, std::string_view body);
  void Linger(int fd);
  void Expire(Clock::time_point now);
  void PollLingering(const std::vector<pollfd>& fds, size_t first, Clock::time_point now);
  int PollTimeoutMs(Clock::time_point now) const;
  void Dispatch(std::unique_ptr<Conn> c) MUSTER_EXCLUDES(mu_);
  void WorkLoop() MUSTER_EXCLUDES(mu_);
  void Serve(std::unique_ptr<Conn> c) MUSTER_EXCLUDES(mu_);
  void Wake();
  void Release(const std::string& peer) MUSTER_EXCLUDES(counts_mu_);

  const GuardOptions o_;
  SSL_CTX* const tls_;
  const ServeFn serve_;
  Counters counters_;

  mutable Mutex counts_mu_;
  std::map<std::string, int> per_peer_ MUSTER_GUARDED_BY(counts_mu_);
  int total_ MUSTER_GUARDED_BY(counts_mu_) = 0;

  Mutex mu_;
  CondVar work_cv_;
  bool running_ MUSTER_GUARDED_BY(mu_) = false;
  bool stopping_ MUSTER_GUARDED_BY(mu_) = false;
  std::vector<int> inbox_ MUSTER_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Conn>> returned_ MUSTER_GUARDED_BY(mu_);
  std::deque<std::unique_ptr<Conn>> jobs_ MUSTER_GUARDED_BY(mu_);

  // The waiting room's own, touched by the poll thread only.
  std::vector<std::unique_ptr<Conn>> waiting_;
  std::vector<Lingering> lingering_;

  int wake_fd_ = -1;
  std::thread poller_;
  std::vector<std::thread> workers_;
};

void ConnectionGuard::Start() {
  MutexLock lock(&mu_);
  if (running_) return;
  running_ = true;
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  poller_ = std::thread([this] { PollLoop(); });
  for (int i = 0; i < std::max(1, o_.threads); ++i) {
    workers_.emplace_back([this] { WorkLoop(); });
  }
}

void ConnectionGuard::Accept(int fd) {
  {
    MutexLock lock(&mu_);
    if (running_ && !stopping_) {
      inbox_.push_back(fd);
      fd = -1;
    }
  }
  if (fd >= 0) {
    CloseFd(fd);
    return;
  }
  Wake();
}

void ConnectionGuard::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (!running_ || stopping_) return;
    stopping_ = true;
  }
  Wake();
  poller_.join();
  work_cv_.SignalAll();
  for (std::thread& t : workers_) t.join();
  std::vector<std::unique_ptr<Conn>> left;
  {
    MutexLock lock(&mu_);
    left.swap(returned_);
    for (int fd : inbox_) CloseFd(fd);
    inbox_.clear();
  }
  left.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

GuardStats ConnectionGuard::Stats() const {
  GuardStats s;
  s.admitted = counters_.admitted;
  s.refused = counters_.refused;
  s.evicted_idle = counters_.evicted_idle;
  s.head_too_large = counters_.head_too_large;
  s.line_too_long = counters_.line_too_long;
  s.timed_out = counters_.timed_out;
  s.idle_closed = counters_.idle_closed;
  s.requests = counters_.requests;
  MutexLock lock(&counts_mu_);
  s.open_connections = total_;
  return s;
}

void ConnectionGuard::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0 && ::write(wake_fd_, &one, sizeof one) < 0) {
    // Full (it is drained at each wake-up) or gone: the poller wakes anyway.
  }
}

void ConnectionGuard::Release(const std::string& peer) {
  MutexLock lock(&counts_mu_);
  --total_;
  if (auto it = per_peer_.find(peer); it != per_peer_.end() && --it->second <= 0) {
    per_peer_.erase(it);
  }
}

bool ConnectionGuard::TakeInbox(std::vector<int>* fds, std::vector<std::unique_ptr<Conn>>* back) {
  MutexLock lock(&mu_);
  if (stopping_) return false;
  fds->swap(inbox_);
  back->swap(returned_);
  return true;
}

// ---- The waiting room (the poll thread).

void ConnectionGuard::PollLoop() {
  std::vector<int> fds;
  std::vector<std::unique_ptr<Conn>> back;
  std::vector<pollfd> polled;
  while (TakeInbox(&fds, &back)) {
    for (int fd : fds) Admit(fd);
    for (auto& c : back) Arrive(std::move(c));
    fds.clear();
    back.clear();
    polled.assign(1, pollfd{.fd = wake_fd_, .events = POLLIN, .revents = 0});
    for (const auto& c : waiting_) polled.push_back({.fd = c->fd, .events = c->want, .revents = 0});
    for (const Lingering& l : lingering_)
      polled.push_back({.fd = l.fd, .events = POLLIN, .revents = 0});
    const int n = ::poll(polled.data(), polled.size(), PollTimeoutMs(Clock::now()));
    if (n < 0 && errno != EINTR) break;
    uint64_t drained = 0;
    if (polled[0].revents != 0 && ::read(wake_fd_, &drained, sizeof drained) < 0) {
      // Nothing to drain (another wake-up took it).
    }
    const size_t conns = waiting_.size();
    for (size_t i = 0; i < conns; ++i) {
      if (polled[i + 1].revents == 0) continue;
      const Step step = Pump(*waiting_[i], polled[i + 1].revents);
      if (step == Step::kDispatch) Dispatch(std::move(waiting_[i]));
      if (step == Step::kDone) waiting_[i].reset();
    }
    std::erase(waiting_, nullptr);
    const auto now = Clock::now();
    PollLingering(polled, conns + 1, now);
    Expire(now);
  }
  waiting_.clear();
  for (const Lingering& l : lingering_) ::close(l.fd);
  lingering_.clear();
}

int ConnectionGuard::PollTimeoutMs(Clock::time_point now) const {
  Clock::time_point next = now + std::chrono::seconds(1);
  for (const auto& c : waiting_) next = std::min(next, c->started ? c->deadline : c->idle_deadline);
  for (const Lingering& l : lingering_) next = std::min(next, l.until);
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000));
}

// Over a cap, the longest-idle connection of the peer (or of all, for
// peer null) makes room; a newcomer is refused only when none is idle.
void ConnectionGuard::Admit(int fd) {
  const std::string peer = AddressOf(fd, true, nullptr);
  const auto counts = [&] {
    MutexLock lock(&counts_mu_);
    auto it = per_peer_.find(peer);
    return std::pair(it == per_peer_.end() ? 0 : it->second, total_);
  };
  if ((counts().first >= o_.max_connections_per_client && !EvictIdle(&peer)) ||
      (counts().second >= o_.max_connections && !EvictIdle(nullptr))) {
    Refuse(fd);
    return;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto c = std::make_unique<Conn>();
  c->fd = fd;
  c->peer = peer;
  {
    MutexLock lock(&counts_mu_);
    ++total_;
    ++per_peer_[peer];
  }
  c->release = [this](const std::string& p) { Release(p); };
  if (tls_ != nullptr) {
    c->ssl = SSL_new(tls_);
    if (c->ssl == nullptr || SSL_set_fd(c->ssl, fd) != 1) return;  // c closes
    SSL_set_accept_state(c->ssl);
    c->handshaken = false;
  }
  ++counters_.admitted;
  const auto now = Clock::now();
  c->idle_since = now;
  c->idle_deadline = now + o_.keep_alive_timeout;
  waiting_.push_back(std::move(c));
}

// A connection whose request bytes are on the socket but not yet pumped
// is not idle: it is marked started (and found by the next poll) instead.
bool ConnectionGuard::EvictIdle(const std::string* peer) {
  std::unique_ptr<Conn>* oldest = nullptr;
  for (;;) {
    oldest = nullptr;
    for (auto& c : waiting_) {
      if (c->started || (peer != nullptr && c->peer != *peer)) continue;
      if (oldest == nullptr || c->idle_since < (*oldest)->idle_since) oldest = &c;
    }
    if (oldest == nullptr) return false;
    char byte;
    if (::recv((*oldest)->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) break;
    (*oldest)->started = true;
    (*oldest)->deadline = Clock::now() + o_.request_deadline;
  }
  ++counters_.evicted_idle;
  oldest->reset();  // closes it and releases its place
  std::erase(waiting_, nullptr);
  return true;
}

// 503 without reading the request. Over TLS there is no session to answer
// in: the connection is closed.
void ConnectionGuard::Refuse(int fd) {
  ++counters_.refused;
  if (tls_ != nullptr) {
    CloseFd(fd);
    return;
  }
  const std::string reply =
      ErrorReply(503, "Service Unavailable", "too many connections; retry later\n");
  [[maybe_unused]] const ssize_t n =
      ::send(fd, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  Linger(fd);
}

void ConnectionGuard::Linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  if (lingering_.size() >= static_cast<size_t>(std::max(1, o_.max_connections))) {
    ::close(fd);
    return;
  }
  lingering_.push_back({fd, Clock::now() + kLinger});
}

void ConnectionGuard::PollLingering(const std::vector<pollfd>& fds, size_t first,
                                    Clock::time_point now) {
  char sink[kReadChunk];
  for (size_t i = 0; i < lingering_.size(); ++i) {
    Lingering& l = lingering_[i];
    bool done = now >= l.until;
    if (!done && first + i < fds.size() && fds[first + i].revents != 0) {
      const ssize_t r = ::recv(l.fd, sink, sizeof sink, MSG_DONTWAIT);
      if (r > 0) l.drained += static_cast<size_t>(r);
      done = r == 0 || l.drained > kMaxDrain ||
             (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
    if (done) {
      ::close(l.fd);
      l.fd = -1;
    }
  }
  std::erase_if(lingering_, [](const Lingering& l) { return l.fd < 0; });
}

// A connection back from a worker: the next request may already be here.
void ConnectionGuard::Arrive(std::unique_ptr<Conn> c) {
  Step step = c->buf.empty() ? Step::kWait : Scan(*c);
  // TLS may hold decrypted or buffered records poll() cannot see.
  if (step == Step::kWait && c->ssl != nullptr && SSL_has_pending(c->ssl) == 1) {
    step = Pump(*c, 0);
  }
  if (step == Step::kDispatch) {
    Dispatch(std::move(c));
  } else if (step == Step::kWait) {
    waiting_.push_back(std::move(c));
  }
}

// Reads what the socket has: the handshake, then the head up to its end or
// a limit.
ConnectionGuard::Step ConnectionGuard::Pump(Conn& c, short revents) {
  if (!c.started && (revents & POLLIN) != 0 && !c.handshaken) {
    c.started = true;
    c.deadline = Clock::now() + o_.request_deadline;
  }
  for (;;) {
    if (!c.handshaken) {
      ERR_clear_error();
      const int r = SSL_do_handshake(c.ssl);
      if (r == 1) {
        c.handshaken = true;
        continue;
      }
      const int e = SSL_get_error(c.ssl, r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return Step::kDone;
      c.want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      return Step::kWait;
    }
    char chunk[kReadChunk];
    short want = 0;
    const ssize_t r = Recv(c, chunk, sizeof chunk, &want);
    if (r <= 0) {
      if (want == 0) return Step::kDone;  // closed or broken
      c.want = want;
      return Step::kWait;
    }
    if (!c.started) {
      c.started = true;
      c.deadline = Clock::now() + o_.request_deadline;
    }
    c.buf.append(chunk, static_cast<size_t>(r));
    if (const Step step = Scan(c); step != Step::kWait) return step;
  }
}

// Counts the unscanned bytes of the head: dispatches a whole head, answers
// one over a limit.
ConnectionGuard::Step ConnectionGuard::Scan(Conn& c) {
  if (!c.started) {
    c.started = true;
    c.deadline = Clock::now() + o_.request_deadline;
  }
  size_t used = 0;
  const Head head = c.scan.Feed(o_, std::string_view(c.buf).substr(c.scanned), &used);
  c.scanned += used;
  switch (head) {
    case Head::kPartial:
      return Step::kWait;
    case Head::kComplete:
      return Step::kDispatch;
    case Head::kLineTooLong:
      ++counters_.line_too_long;
      Answer(
          c, 414, "URI Too Long",
          "request line exceeds the limit of " + std::to_string(o_.max_request_line) + " bytes\n");
      return Step::kDone;
    case Head::kTooLarge:
      ++counters_.head_too_large;
      Answer(c, 431, "Request Header Fields Too Large",
             "request headers exceed the limit of " + std::to_string(o_.max_head_bytes) +
                 " bytes or " + std::to_string(o_.max_headers) + " fields\n");
      return Step::kDone;
  }
  return Step::kDone;
}

// Writes an error reply (best effort, never blocking the waiting room) and
// lets the connection linger so the client reads it.
void ConnectionGuard::Answer(Conn& c, int status, std::string_view reason, std::string_view body) {
  const std::string reply = ErrorReply(status, reason, body);
  short want = 0;
  [[maybe_unused]] const ssize_t n = Send(c, reply.data(), reply.size(), &want);
  c.buf.clear();
  c.buf.shrink_to_fit();
  if (c.ssl == nullptr) Linger(c.TakeFd());
}

void ConnectionGuard::Expire(Clock::time_point now) {
  for (auto& c : waiting_) {
    if (!c->started && now >= c->idle_deadline) {
      ++counters_.idle_closed;
      c.reset();
    } else if (c->started && now >= c->deadline) {
      ++counters_.timed_out;
      if (c->handshaken) Answer(*c, 408, "Request Timeout", "request not received in time\n");
      c.reset();
    }
  }
  std::erase(waiting_, nullptr);
}

// ---- The workers.

void ConnectionGuard::Dispatch(std::unique_ptr<Conn> c) {
  ++counters_.requests;
  {
    MutexLock lock(&mu_);
    jobs_.push_back(std::move(c));
  }
  work_cv_.Signal();
}

void ConnectionGuard::WorkLoop() {
  for (;;) {
    std::unique_ptr<Conn> c;
    {
      MutexLock lock(&mu_);
      while (jobs_.empty() && !stopping_) work_cv_.Wait(&mu_);
      if (jobs_.empty()) return;  // stopping, and every queued request served
      c = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Serve(std::move(c));
  }
}

void ConnectionGuard::Serve(std::unique_ptr<Conn> c) {
  GuardedStream stream(*c, o_);
  bool closed = false;
  bool ok = false;
  try {
    ok = serve_(stream, closed, c->ssl);
  } catch (
      ...) {  // cpp-httplib answers handler exceptions itself; anything else ends the connection
  }
  if (stream.timed_out()) {
    ++counters_.timed_out;
    if (!stream.wrote()) {
      SendAll(*c, ErrorReply(408, "Request Timeout", "request not received in time\n"),
              Clock::now() + o_.write_timeout);
    }
    return;
  }
  c->graceful = ok;
  if (!ok || closed) return;
  stream.Compact();
  const auto now = Clock::now();
  c->scan = HeadScan();
  c->scanned = 0;
  c->started = false;
  c->want = POLLIN;
  c->idle_since = now;
  c->idle_deadline = now + o_.keep_alive_timeout;
  c->deadline = kNever;
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    returned_.push_back(std::move(c));
  }
  Wake();
}

namespace {

// The listen loop's task queue: each accepted socket goes to the guard's
// admission at once (Server::process_and_close_socket), never to a queue
// that would grow with the connections.
class AdmittingQueue final : public httplib::TaskQueue {
 public:
  explicit AdmittingQueue(ConnectionGuard* guard) : guard_(guard) { guard_->Start(); }
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { guard_->Shutdown(); }

 private:
  ConnectionGuard* const guard_;
};

class GuardAccess {
 public:
  virtual ~GuardAccess() = default;
  virtual GuardStats Stats() const = 0;
  virtual void RaiseBacklog() = 0;
};

template <class Base>
class Guarded final : public Base, public GuardAccess {
 public:
  template <class... Args>
  explicit Guarded(const GuardOptions& options, Args&&... args)
      : Base(std::forward<Args>(args)...) {
    guard_ = std::make_unique<ConnectionGuard>(
        options, TlsContext(), [this](httplib::Stream& strm, bool& closed, SSL* ssl) {
          return this->process_request(strm, /*close_connection=*/false, closed,
                                       [ssl](httplib::Request& req) { req.ssl = ssl; });
        });
    this->new_task_queue = [this] { return new AdmittingQueue(guard_.get()); };
  }
  ~Guarded() override { guard_.reset(); }
  GuardStats Stats() const override { return guard_->Stats(); }
  // cpp-httplib listens with a backlog of 5: a burst of connections beyond
  // it would wait for SYN retransmits. Listening again on the bound socket
  // raises it (Linux). On the binding thread, before the listen loop runs:
  // never racing stop()'s close of the socket.
  void RaiseBacklog() override {
    const socket_t sock = this->svr_sock_;
    if (sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    guard_->Accept(sock);
    return true;
  }
  SSL_CTX* TlsContext() {
    if constexpr (std::is_same_v<Base, httplib::SSLServer>) {
      return this->is_valid() ? this->ssl_context() : nullptr;
    } else {
      return nullptr;
    }
  }

  std::unique_ptr<ConnectionGuard> guard_;
};

}  // namespace

std::unique_ptr<httplib::Server> NewGuardedServer(const GuardOptions& options) {
  return std::make_unique<Guarded<httplib::Server>>(options);
}

std::unique_ptr<httplib::Server> NewGuardedTlsServer(const GuardOptions& options,
                                                     const std::string& cert_path,
                                                     const std::string& key_path,
                                                     const std::string& client_ca_path) {
  // OpenSSL writes to the socket with write(2): a peer gone mid-reply must
  // not end the process with SIGPIPE.
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    signal(SIGPIPE, SIG_IGN);
  }
  const char* ca = client_ca_path.empty() ? nullptr : client_ca_path.c_str();
  return std::make_unique<Guarded<httplib::SSLServer>>(options, cert_path.c_str(), key_path.c_str(),
                                                       ca);
}

void RaiseBacklog(httplib::Server& server) {
  if (auto* guarded = dynamic_cast<GuardAccess*>(&server)) guarded->RaiseBacklog();
}

GuardStats GuardStatsOf(const httplib::Server& server) {
  const auto* guarded = dynamic_cast<const GuardAccess*>(&server);
  return guarded == nullptr ? GuardStats{} : guarded->Stats();
}

}  // namespace muster::base
