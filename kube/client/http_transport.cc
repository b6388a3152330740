#include "kube/client/http_transport.h"

#include <httplib.h>
#include <openssl/err.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "kube/client/pem.h"

namespace muster::kube {
namespace {

constexpr auto kTokenReloadInterval = std::chrono::minutes(1);
// Threads that open connections for Prewarm. Handshakes are CPU work on
// both ends; a few at a time are enough to be ready well before a burst.
constexpr int kWarmers = 4;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

// The bearer token, re-read from its file now and then: projected
// service-account tokens are rotated by the kubelet.
class TokenSource {
 public:
  TokenSource(std::string token, std::string file)
      : file_(std::move(file)), token_(std::move(token)), loaded_(Clock::now()) {}

  std::string Get() MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    if (!file_.empty() && Clock::now() - loaded_ >= kTokenReloadInterval) {
      loaded_ = Clock::now();
      StatusOr<std::string> text = ReadFileToString(file_);
      if (text.ok()) {
        std::string token = std::move(text).value();
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
          token.pop_back();
        }
        if (!token.empty()) token_ = std::move(token);
      }
    }
    return token_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  const std::string file_;
  base::Mutex mu_;
  std::string token_ MUSTER_GUARDED_BY(mu_);
  Clock::time_point loaded_ MUSTER_GUARDED_BY(mu_);
};

// One cpp-httplib client and the abort flag of the call it is serving.
struct Conn {
  std::unique_ptr<httplib::ClientImpl> cli;
  // Set by a cancel callback before it calls cli->stop(). stop() can only
  // shut down a socket that exists; a socket created afterwards (the call
  // had not connected yet) sees the flag in the socket-options hook, which
  // runs under the same cpp-httplib lock as stop(), and shuts itself down
  // so that connect/read fail at once.
  std::atomic<bool> abort{false};
  // When it last answered a request; the epoch: never, or it failed (the
  // socket may be closed).
  std::chrono::steady_clock::time_point answered{};
};

// What went wrong, in words an operator can act on.
std::string Describe(httplib::Error err) {
  switch (err) {
    case httplib::Error::Connection:
      return "cannot connect";
    case httplib::Error::ConnectionTimeout:
      return "connect timed out";
    case httplib::Error::SSLConnection:
      return "TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "TLS server certificate not trusted";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load TLS certificates";
    case httplib::Error::Write:
      return "connection lost while sending";
    case httplib::Error::Read:
      return "connection lost or timed out while reading the answer";
    default:
      return httplib::to_string(err);
  }
}

Status TransportError(httplib::Error err, const std::string& what) {
  const std::string message = what + ": " + Describe(err);
  switch (err) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::Write:
      return UnavailableError(message).WithHttp(0, kReasonNotSent);
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return FailedPreconditionError(message);
    case httplib::Error::Canceled:
      return CancelledError(message);
    default:
      return UnavailableError(message).WithHttp(0, kReasonMaybeSent);
  }
}

class HttplibTransport final : public HttpTransport {
 public:
  // REQUIRES: config.ca_pem is empty or parses (CertStoreFromPem).
  HttplibTransport(const ClientConfig& config, ServerUrl url, X509Ptr cert, EvpPkeyPtr key)
      : url_(std::move(url)),
        insecure_(config.insecure_skip_tls_verify),
        timeout_(std::max(config.timeout, Duration(std::chrono::milliseconds(1)))),
        max_connections_(std::max(config.max_connections, 1)),
        fresh_for_(config.connection_fresh_for),
        user_agent_(config.user_agent),
        ca_pem_(config.ca_pem),
        cert_(std::move(cert)),
        key_(std::move(key)),
        token_(config.bearer_token, config.bearer_token_file) {}

  ~HttplibTransport() override;

  StatusOr<HttpResponse> Send(const HttpRequest& request) override;
  Status Stream(const HttpRequest& request, const ChunkHandler& on_data, int* http_status) override;
  void Cancel() override;
  void Prewarm(int connections) override MUSTER_EXCLUDES(pool_mu_);

 private:
  std::unique_ptr<Conn> NewConn(bool keep_alive);
  std::unique_ptr<Conn> Acquire() MUSTER_EXCLUDES(pool_mu_);
  // Back to the pool; `answered`: the request on it succeeded.
  void Release(std::unique_ptr<Conn> conn, bool answered) MUSTER_EXCLUDES(pool_mu_);
  // `request` on the pooled `conn`, which then goes back to the pool.
  Status Exchange(std::unique_ptr<Conn> conn, const HttpRequest& request, httplib::Response& res)
      MUSTER_EXCLUDES(pool_mu_);
  // A warmer thread: carries out the warm-ups Prewarm asked for.
  void WarmLoop() MUSTER_EXCLUDES(pool_mu_);
  // Answered a request within fresh_for_: kube-apiserver has not closed it.
  bool Fresh(const Conn& conn) const {
    return conn.answered > std::chrono::steady_clock::now() - fresh_for_;
  }
  // Connections that are Fresh and wait in the pool.
  int FreshIdle() const MUSTER_REQUIRES(pool_mu_);
  // Claims the connection the next warm-up is for: the stalest idle one, or
  // a slot for a new one (*open_new, null returned); false when none is
  // pending, or the pool is full of fresh ones (the rest are dropped).
  bool ClaimToWarm(std::unique_ptr<Conn>* conn, bool* open_new) MUSTER_REQUIRES(pool_mu_);
  httplib::Request BuildRequest(const HttpRequest& request);
  Status Execute(Conn& conn, const HttpRequest& request, httplib::Request& req,
                 httplib::Response& res);

  const ServerUrl url_;
  const bool insecure_;
  const Duration timeout_;
  const int max_connections_;
  const Duration fresh_for_;
  const std::string user_agent_;
  // The CA bundle; every connection gets its own X509_STORE from it (NewConn).
  const std::string ca_pem_;
  const X509Ptr cert_;
  const EvpPkeyPtr key_;
  TokenSource token_;
  CancelToken shutdown_;

  base::Mutex pool_mu_;
  base::CondVar pool_cv_;
  // Oldest answer first: Acquire takes the freshest from the back, warmers
  // the stalest from the front.
  std::vector<std::unique_ptr<Conn>> idle_ MUSTER_GUARDED_BY(pool_mu_);
  int total_ MUSTER_GUARDED_BY(pool_mu_) = 0;  // idle, in use and being opened
  // Warm-ups asked for and not started yet.
  int warm_pending_ MUSTER_GUARDED_BY(pool_mu_) = 0;
  bool stopping_ MUSTER_GUARDED_BY(pool_mu_) = false;
  base::CondVar warm_cv_;
  std::vector<std::thread> warmers_ MUSTER_GUARDED_BY(pool_mu_);  // started by the first Prewarm
};

HttplibTransport::~HttplibTransport() {
  Cancel();
  std::vector<std::thread> warmers;
  {
    base::MutexLock lock(&pool_mu_);
    warmers.swap(warmers_);
  }
  for (std::thread& t : warmers) t.join();
}

void HttplibTransport::Cancel() {
  {
    base::MutexLock lock(&pool_mu_);
    stopping_ = true;
    warm_cv_.SignalAll();
  }
  shutdown_.Cancel();
}

void HttplibTransport::Prewarm(int connections) {
  base::MutexLock lock(&pool_mu_);
  if (stopping_) return;
  // Ready for the burst: in use (back soon, fresh), idle and fresh, or
  // about to be warmed for an earlier call.
  const int in_use = total_ - static_cast<int>(idle_.size());
  const int ready = in_use + FreshIdle() + warm_pending_;
  const int wanted = std::min(connections, max_connections_);
  if (ready >= wanted) return;
  warm_pending_ += wanted - ready;
  if (warmers_.empty()) {
    for (int i = 0; i < kWarmers; ++i) warmers_.emplace_back([this] { WarmLoop(); });
  }
  warm_cv_.SignalAll();
}

int HttplibTransport::FreshIdle() const {
  return static_cast<int>(
      std::count_if(idle_.begin(), idle_.end(), [&](const auto& c) { return Fresh(*c); }));
}

bool HttplibTransport::ClaimToWarm(std::unique_ptr<Conn>* conn, bool* open_new) {
  if (warm_pending_ == 0) return false;
  if (!idle_.empty() && !Fresh(*idle_.front())) {
    *conn = std::move(idle_.front());
    idle_.erase(idle_.begin());
  } else if (total_ < max_connections_) {
    ++total_;
    *open_new = true;
  } else {
    warm_pending_ = 0;
    return false;
  }
  --warm_pending_;
  return true;
}

void HttplibTransport::WarmLoop() {
  for (;;) {
    std::unique_ptr<Conn> conn;
    bool open_new = false;
    {
      base::MutexLock lock(&pool_mu_);
      while (!stopping_ && !ClaimToWarm(&conn, &open_new)) warm_cv_.Wait(&pool_mu_);
      if (stopping_) {
        if (open_new) --total_;
        if (conn) idle_.insert(idle_.begin(), std::move(conn));
        return;
      }
    }
    if (open_new) conn = NewConn(/*keep_alive=*/true);
    // Any cheap request opens the connection: /version is readable by every
    // client (the system:public-info-viewer role).
    httplib::Response res;
    (void)Exchange(std::move(conn), HttpRequest{.method = "GET", .target = "/version"}, res);
  }
}

std::unique_ptr<Conn> HttplibTransport::NewConn(bool keep_alive) {
  auto conn = std::make_unique<Conn>();
  if (url_.tls) {
    auto ssl = std::make_unique<httplib::SSLClient>(url_.host, url_.port, cert_.get(), key_.get());
    if (!ca_pem_.empty()) {
      // A store per connection, never one shared: cpp-httplib 0.11 adds the
      // system's default verify paths to the client's store on its first
      // handshake, unlocked, and new connections handshaking at once on a
      // shared store corrupted the heap (seen with the gang controller's
      // parallel writes right after a restart). set_ca_cert_store takes
      // ownership of the store.
      StatusOr<X509StorePtr> store = CertStoreFromPem(ca_pem_);
      if (store.ok()) ssl->set_ca_cert_store(store->release());
      // Without a CA path cpp-httplib also loads the system's CA bundle into
      // the store on the first handshake: ~100 ms of parsing per connection,
      // and every public CA trusted for the API server. A directory that
      // cannot exist adds a lookup that finds nothing, so only the
      // kubeconfig's CA is trusted.
      ssl->set_ca_cert_path("", "/dev/null/muster-trusts-only-the-kubeconfig-ca");
    }
    ssl->enable_server_certificate_verification(!insecure_);
    conn->cli = std::move(ssl);
  } else {
    conn->cli = std::make_unique<httplib::ClientImpl>(url_.host, url_.port);
  }
  httplib::ClientImpl& cli = *conn->cli;
  cli.set_tcp_nodelay(true);
  cli.set_keep_alive(keep_alive);
  cli.set_url_encode(false);  // targets arrive percent-encoded
  cli.set_connection_timeout(timeout_);
  cli.set_write_timeout(timeout_);
  cli.set_read_timeout(timeout_);
  Conn* raw = conn.get();
  cli.set_socket_options([raw](socket_t sock) {
    if (raw->abort.load()) ::shutdown(sock, SHUT_RDWR);
  });
  return conn;
}

std::unique_ptr<Conn> HttplibTransport::Acquire() {
  {
    base::MutexLock lock(&pool_mu_);
    while (idle_.empty() && total_ >= max_connections_) pool_cv_.Wait(&pool_mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Conn> conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++total_;
  }
  return NewConn(/*keep_alive=*/true);
}

void HttplibTransport::Release(std::unique_ptr<Conn> conn, bool answered) {
  base::MutexLock lock(&pool_mu_);
  if (answered) {
    conn->answered = std::chrono::steady_clock::now();
    idle_.push_back(std::move(conn));
  } else {
    conn->answered = {};
    idle_.insert(idle_.begin(), std::move(conn));
  }
  pool_cv_.Signal();
}

httplib::Request HttplibTransport::BuildRequest(const HttpRequest& request) {
  httplib::Request req;
  req.method = request.method;
  req.path = url_.path_prefix + request.target;
  req.set_header("Accept", "application/json");
  req.set_header("User-Agent", user_agent_);
  const std::string token = token_.Get();
  if (!token.empty()) req.set_header("Authorization", "Bearer " + token);
  for (const auto& [name, value] : request.headers) req.set_header(name.c_str(), value);
  if (!request.content_type.empty()) {
    req.set_header("Content-Type", request.content_type);
    req.body = request.body;
  }
  return req;
}

Status HttplibTransport::Execute(Conn& conn, const HttpRequest& request, httplib::Request& req,
                                 httplib::Response& res) {
  conn.abort = false;
  conn.cli->set_read_timeout(request.read_timeout > Duration::zero() ? request.read_timeout
                                                                     : timeout_);
  Conn* raw = &conn;
  ScopedCancelCallback on_cancel(&shutdown_, request.cancel, [raw] {
    raw->abort = true;
    raw->cli->stop();
  });
  const std::string what = request.method + " " + request.target;
  if (conn.abort.load()) return CancelledError(what + ": cancelled");
  httplib::Error err = httplib::Error::Success;
  if (conn.cli->send(req, res, err)) return Status::Ok();
  if (conn.abort.load()) return CancelledError(what + ": cancelled");
  return TransportError(err, what);
}

Status HttplibTransport::Exchange(std::unique_ptr<Conn> conn, const HttpRequest& request,
                                  httplib::Response& res) {
  httplib::Request req = BuildRequest(request);
  Status status = Execute(*conn, request, req, res);
  Release(std::move(conn), status.ok());
  return status;
}

StatusOr<HttpResponse> HttplibTransport::Send(const HttpRequest& request) {
  httplib::Response res;
  MUSTER_RETURN_IF_ERROR(Exchange(Acquire(), request, res));
  HttpResponse out;
  out.status = res.status;
  out.body = std::move(res.body);
  for (const auto& [name, value] : res.headers) out.headers[Lower(name)] = value;
  return out;
}

Status HttplibTransport::Stream(const HttpRequest& request, const ChunkHandler& on_data,
                                int* http_status) {
  httplib::Request req = BuildRequest(request);
  req.response_handler = [http_status](const httplib::Response& res) {
    *http_status = res.status;
    return true;
  };
  req.content_receiver = [&on_data](const char* data, size_t len, uint64_t, uint64_t) {
    return on_data(std::string_view(data, len));
  };
  httplib::Response res;
  // A dedicated connection: a watch holds it for minutes.
  std::unique_ptr<Conn> conn = NewConn(/*keep_alive=*/false);
  return Execute(*conn, request, req, res);
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  auto it = headers.find(Lower(name));
  return it == headers.end() ? "" : it->second;
}

namespace {

// Splits "host:port", "[v6]:port" or "host" into *out; false when malformed.
bool SplitAuthority(std::string_view authority, ServerUrl* out) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    out->host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() == ':') port_text = after.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    out->host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out->host.empty()) return false;
  if (port_text.empty()) return true;
  int port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (ec != std::errc() || ptr != end || port <= 0 || port > 65535) return false;
  out->port = port;
  return true;
}

}  // namespace

StatusOr<ServerUrl> ParseServerUrl(std::string_view url) {
  const std::string quoted = "server URL \"" + std::string(url) + "\"";
  ServerUrl out;
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
  } else if (rest.substr(0, 7) == "http://") {
    out.tls = false;
    out.port = 80;
    rest.remove_prefix(7);
  } else {
    return InvalidArgumentError(quoted + ": scheme must be https:// or http://");
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    out.path_prefix = std::string(prefix);
  }
  if (!SplitAuthority(rest.substr(0, slash), &out)) {
    return InvalidArgumentError(quoted + ": bad host or port");
  }
  return out;
}

StatusOr<std::unique_ptr<HttpTransport>> NewHttpTransport(const ClientConfig& config) {
  MUSTER_ASSIGN_OR_RETURN(ServerUrl url, ParseServerUrl(config.server));
  X509Ptr cert;
  EvpPkeyPtr key;
  if (!config.ca_pem.empty()) {
    StatusOr<X509StorePtr> store = CertStoreFromPem(config.ca_pem);
    if (!store.ok()) return store.status().Annotate("certificate authority");
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    StatusOr<X509Ptr> c = CertificateFromPem(config.client_cert_pem);
    if (!c.ok()) return c.status().Annotate("client certificate");
    StatusOr<EvpPkeyPtr> k = PrivateKeyFromPem(config.client_key_pem);
    if (!k.ok()) return k.status().Annotate("client key");
    if (X509_check_private_key(c->get(), k->get()) != 1) {
      ERR_clear_error();
      return InvalidArgumentError("client certificate and client key do not match");
    }
    cert = std::move(c).value();
    key = std::move(k).value();
  }
  IgnoreSigpipeOnce();
  return std::unique_ptr<HttpTransport>(
      std::make_unique<HttplibTransport>(config, std::move(url), std::move(cert), std::move(key)));
}

}  // namespace muster::kube
