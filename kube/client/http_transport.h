// HttpTransport: the seam between the API client and the network.
//
// Client speaks Kubernetes (paths, verbs, retries, error mapping); the
// transport only moves one HTTP request and its answer. The production
// implementation (NewHttpTransport) sits on cpp-httplib:
//  - http:// (tests) and https:// with a CA bundle, client certificate and
//    key taken from PEM in memory, or insecure-skip-tls-verify;
//  - TCP_NODELAY on every socket (see build-notes: without it each call
//    waits on a delayed ACK), HTTP/1.1 keep-alive, connect/read/write
//    timeouts from ClientConfig::timeout;
//  - a pool of ClientConfig::max_connections keep-alive connections for Send() (a cpp-httplib
//    client serialises its requests) and a dedicated connection per Stream(), so a
//    watch never blocks other calls;
//  - Prewarm(n): background threads open or refresh pooled connections with a
//    GET /version each, so a burst of n requests finds n connections whose
//    handshakes are done. A connection idle longer than
//    ClientConfig::connection_fresh_for counts as closed by the server
//    (kube-apiserver closes keep-alive connections idle for 90 s:
//    IdleTimeout in k8s.io/apiserver/pkg/server/secure_serving.go), and a
//    request on it would reconnect first;
//  - the bearer token header on every request, re-read from
//    ClientConfig::bearer_token_file at most once a minute;
//  - cancellation: a request's CancelToken (and the transport's Cancel())
//    shuts the request's socket down, so even a watch blocked in read()
//    returns at once. One limit of cpp-httplib: a cancel that lands while
//    connect() or the TLS handshake is in progress takes effect when that
//    step ends (at most ClientConfig::timeout), because cpp-httplib holds
//    its socket lock across it.
//
// Transport failures (no HTTP status) come back as Unavailable with
// http_code 0 and reason kReasonNotSent when the request provably never
// reached the server (connect, TLS handshake or a write failed: the server
// cannot have acted on an incomplete request) or kReasonMaybeSent otherwise
// (the connection broke while or after the request was written, or a read
// timed out). Cancellation yields Cancelled. TLS configuration and
// verification failures yield FailedPrecondition.
//
// Creating a transport sets SIGPIPE to ignored when it is at its default:
// cpp-httplib writes to sockets without MSG_NOSIGNAL, and a peer closing a
// connection mid-write must not kill the process.
//
// Thread-safety: every method of an HttpTransport is thread-safe.
// REQUIRES: no call is in flight when the transport is destroyed (Cancel()
// first and let the callers return).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/client/cancel.h"
#include "kube/client/kubeconfig.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::kube {

inline constexpr char kReasonNotSent[] = "TransportNotSent";
inline constexpr char kReasonMaybeSent[] = "TransportMaybeSent";

struct HttpRequest {
  std::string method;  // "GET", "POST", "PATCH", "DELETE"
  std::string target;  // path and query, already percent-encoded: "/api/v1/nodes?limit=2000"
  std::string body;
  std::string content_type;                                  // "" when there is no body
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  Duration read_timeout{0};       // 0: the transport's default (ClientConfig::timeout)
  CancelToken* cancel = nullptr;  // may be null; must outlive the call
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // keys lower-cased; the last value wins
  std::string body;

  // The header value, "" when absent. `name` is matched case-insensitively.
  std::string Header(std::string_view name) const;
};

// Receives a streamed body in chunks as they arrive; returns false to stop.
using ChunkHandler = std::function<bool(std::string_view chunk)>;

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;

  // One request, whole body in memory. A non-2xx answer is an OK result with
  // that status: mapping statuses to errors is the client's job.
  virtual StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;

  // One request whose body is handed to `on_data` as it arrives (watches).
  // `*http_status` is set before the first `on_data` call; the body of a
  // non-2xx answer is streamed the same way. Returns OK when the server ended
  // the body normally; Cancelled when `on_data` returned false or the request
  // was cancelled; Unavailable when the connection broke.
  virtual Status Stream(const HttpRequest& request, const ChunkHandler& on_data,
                        int* http_status) = 0;

  // Aborts every call in flight and makes every later call fail with
  // Cancelled (shutdown). Idempotent.
  virtual void Cancel() = 0;

  // Announces a burst of up to `connections` concurrent requests: without
  // blocking the caller, the transport opens (or refreshes) pooled
  // connections in the background so that many are ready before the burst,
  // sparing its requests the TCP and TLS handshakes. A hint: the default
  // does nothing (transports without a pool).
  virtual void Prewarm(int connections) { (void)connections; }
};

// A cpp-httplib transport for `config`. InvalidArgument for a malformed
// server URL or unparsable PEM material.
StatusOr<std::unique_ptr<HttpTransport>> NewHttpTransport(const ClientConfig& config);

// The parts of ClientConfig::server.
struct ServerUrl {
  bool tls = true;
  std::string host;         // without brackets for IPv6
  int port = 443;           // the scheme's default when the URL has none
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
};
StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

}  // namespace muster::kube
