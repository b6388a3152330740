// The extender's HTTP server: the kube-scheduler verbs over the pipeline,
// plus health, readiness, metrics and a debug view of the cache.
//
//   POST {prefix}/filter|prioritize|preempt -> Pipeline verb -> reply as given
//   POST {prefix}/bind  -> ReserveBind -> BindBarrier::Hold (a gang member, until its
//                          gang's other reserved members reach bind) -> Binder::Bind
//                          (the Binding POST) -> FinishBind
//   GET  /healthz       -> 200 "ok" while the process serves
//   GET  /readyz        -> 200 once the injected predicate holds (caches synced), else 503
//   GET  /metrics       -> ExtenderMetrics::Text()
//   GET  /debug/state   -> JSON: every node's allocatable/allocated/free, reservations,
//                          PodGroups, Queues, gangs, fair share, and the watched objects
//                          that do not decode ("undecodable": kind, key, problem)
//
// HTTP/1.1 keep-alive on cpp-httplib with TCP_NODELAY (without it every reply
// waits on the peer's delayed ACK, ~40 ms), guarded against hostile clients
// (base/guarded_server.h): ServerOptions::threads workers (binds arrive in
// parallel and block on the API server) taken only by requests whose head has
// arrived, idle connections and heads being received wait without a worker;
// a head limit (431 over max_head_bytes or max_headers, 414 for a request
// line over 8 KiB), a whole-request deadline (408), connection caps in total
// and per client address (over them the longest-idle connection is closed,
// or the newcomer gets 503 unread), an idle keep-alive timeout; a request
// body limit (413 with a text body over it; a body sent chunked, without
// Content-Length or compressed is refused unread with 411 or 415, since
// cpp-httplib would buffer it whole whatever its size), a read timeout per
// body read, and optional TLS with optional client-certificate verification. A handler never lets
// an exception out: cpp-httplib's own exceptions (and any std::bad_alloc) become a 500 with a text
// body, never a dead worker.
//
// Thread-safety: Start() and Stop() from one owner thread; handlers run
// concurrently on the pool, so the pipeline, binder and metrics must be
// thread-safe (they are).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/guarded_server.h"
#include "base/http_serving.h"
#include "extender/bind_barrier.h"
#include "extender/metrics.h"
#include "extender/pipeline.h"
#include "model/api_objects.h"
#include "model/pod.h"
#include "model/status.h"
#include "model/time.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace muster::kube {
class Client;
}  // namespace muster::kube

namespace muster::extender {

// The one I/O step of bind: POST the Binding. Implementations must be
// thread-safe and return within the scheduler's bind timeout.
class Binder {
 public:
  virtual ~Binder() = default;
  // Status of the POST pods/<binding.meta.name>/binding in binding.meta.namespace_.
  virtual Status Bind(const Binding& binding) = 0;
  // The pod as the API server has it now (a quorum read). The server asks
  // only when a bind names a pod its watch has not delivered yet: a pod
  // created a moment ago reaches kube-scheduler's watch and then its bind
  // call before it reaches muster's. Default: Unimplemented (no lookup).
  virtual StatusOr<Pod> GetPod(std::string_view ns, std::string_view name);
};

struct KubeBinderOptions {
  // The whole bind, retries included, must end before kube-scheduler's
  // extender httpTimeout (5 s by default) gives up on the call.
  // A gang member's bind may first wait at the bind barrier
  // (ServerOptions::gang_bind_hold, 1.5 s): 1.5 + 3.3 < 5.
  Duration deadline = std::chrono::milliseconds(3300);
  Duration initial_backoff = std::chrono::milliseconds(100);
};

// Binds through the API server, retrying transient failures (5xx, a broken
// connection, a timeout) until the deadline. A retry after a POST that did
// land answers 409 "already assigned to node", which FinishBind counts as
// success (AlreadyAssignedTo), so retrying a maybe-sent POST is safe.
class KubeBinder final : public Binder {
 public:
  // `client` must outlive the binder.
  explicit KubeBinder(kube::Client* client, KubeBinderOptions options = {});
  Status Bind(const Binding& binding) override;
  StatusOr<Pod> GetPod(std::string_view ns, std::string_view name) override;

 private:
  kube::Client* const client_;
  const KubeBinderOptions options_;
};

// True for a bind failure worth another attempt within the deadline.
bool BindRetryable(const Status& post);

struct ServerOptions {
  std::string listen_address = "127.0.0.1";
  int port = 8888;  // 0: an ephemeral port (tests), see Server::port()
  std::string prefix = "/scheduler";
  size_t max_body_bytes = size_t{16} << 20;
  // Workers run requests whose head has arrived (an idle keep-alive
  // connection holds none); binds block on the API server in parallel, and
  // gang members' binds wait for their gang at the bind barrier (a 100-pod
  // gang holds 100 workers until its last member reaches bind).
  int threads = 128;
  // A gang member's bind waits for the gang's other reserved members to
  // reach bind, at most this long (bind_barrier.h); zero: no barrier. The
  // barrier holds at most `threads` - kWorkersNeverHeld binds at once.
  // The hold plus KubeBinderOptions::deadline stay inside kube-scheduler's
  // extender httpTimeout (5 s in manifests/scheduler).
  Duration gang_bind_hold = std::chrono::milliseconds(1500);
  // TLS when both are set; with client_ca_path, clients must present a
  // certificate signed by that CA (mTLS).
  std::string tls_cert_path;
  std::string tls_key_path;
  std::string client_ca_path;
  // How long one socket read of a request body may wait; the request
  // deadline bounds the whole request however the client trickles it.
  Duration read_timeout = std::chrono::seconds(10);
  // Request line plus headers (431 over it; never buffered beyond it), and
  // the header fields of one request (431 over it).
  size_t max_head_bytes = size_t{64} << 10;
  int max_headers = 100;
  // From a request's first byte to its last body byte: 408 past it.
  Duration request_deadline = std::chrono::seconds(30);
  // Open connections in total and per client address. kube-scheduler keeps
  // up to ~25 idle keep-alive connections (apimachinery's transport
  // defaults) plus parallel binds, all from one address: keep per-client
  // generous. Over a cap the longest-idle connection is closed to make room;
  // only when none is idle does the newcomer get 503.
  int max_connections = 512;
  int max_connections_per_client = 256;
  // How long a connection may wait for its next request (its first
  // included) before it is closed.
  Duration keep_alive_timeout = std::chrono::seconds(5);
};

// An object a watch delivered that muster cannot decode, as /debug/state
// lists it under "undecodable".
struct UndecodableEntry {
  std::string kind;     // "nodes", "pods", "podgroups", "queues"
  std::string key;      // "namespace/name", or the name of a cluster-scoped object
  std::string problem;  // "<JSON path>: <why>" of the first bad field
  std::string reason;   // kube::UndecodableReason: bad_spec, bad_status, ...
};

struct ServerDeps {
  const Pipeline* pipeline = nullptr;  // required
  Binder* binder = nullptr;            // required
  ExtenderMetrics* metrics = nullptr;  // required
  ClusterAccess* cluster = nullptr;    // required: /debug/state
  std::function<bool()> ready;         // null: always ready
  // "leader" or "standby" for /readyz's body; null: none named.
  std::function<std::string()> role;
  // JSON array for /debug/state's "gangs" (GangController::DebugJson);
  // null: no gang controller, "gangs" is [].
  std::function<std::string()> gangs;
  // JSON object for /debug/state's "fairShare" (GangController::
  // QueuesDebugJson); null: "fairShare" is {}.
  std::function<std::string()> queues;
  // The objects of the watches that do not decode, for /debug/state's
  // "undecodable"; null: "undecodable" is [].
  std::function<std::vector<UndecodableEntry>()> undecodable;
};

class Server {
 public:
  // Everything in `deps` must outlive the server.
  Server(ServerOptions options, ServerDeps deps);
  ~Server();  // Stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Workers the bind barrier never holds: filter, prioritize and the
  // binds' own POSTs must go on while gangs assemble.
  static constexpr int kWorkersNeverHeld = 16;

  // Binds the listening socket and starts serving on a thread. InvalidArgument
  // for bad options (a TLS file that does not load, a prefix without a
  // leading '/'), Unavailable when the address cannot be bound.
  // REQUIRES: called at most once.
  Status Start();
  // Stops accepting, lets the workers finish and joins. Idempotent.
  void Stop();
  // The port bound by Start() (the ephemeral one when options.port was 0).
  int port() const { return port_; }
  // What the connection guard did (refusals, limits hit). Thread-safe after
  // Start().
  base::GuardStats guard_stats() const;
  // GET /debug/state's JSON (see the top of this file). Thread-safe.
  std::string DebugState();

 private:
  void Route();
  void HandleVerb(std::string_view verb, const std::string& body, int* status,
                  std::string* content_type, std::string* reply);
  VerbReply Bind(const std::string& body);
  // For a bind that named a pod the cache does not know: read the pod from
  // the API and add it (unless the watch did meanwhile). True when the pod
  // exists with the bind's uid, so the bind is worth planning again.
  bool LearnPodFromApi(const kube::ExtenderBindingArgs& args);

  const ServerOptions options_;
  const ServerDeps deps_;
  BindBarrier barrier_;
  std::unique_ptr<httplib::Server> http_;
  base::ListenThread listener_;  // after http_: stopped before the server goes
  int port_ = 0;
};

// "/scheduler/" -> "/scheduler"; "" stays "". InvalidArgument unless it is
// empty or starts with '/'.
StatusOr<std::string> NormalizePrefix(std::string_view prefix);

}  // namespace muster::extender
