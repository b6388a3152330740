// A cpp-httplib server whose connections are guarded against hostile
// clients, for every muster HTTP port (extender::Server, base::OpsServer).
//
// cpp-httplib 0.11 buffers a request line and headers without limit, has no
// deadline for a whole request, and holds a worker thread per connection
// while it waits for the next request: one byte per read timeout held a
// worker forever, a 64 MiB header line took 92 MiB, and a few hundred slow or
// idle clients took every worker (and /healthz with them). The guarded server
// keeps cpp-httplib's parser, routing and replies (Server::process_request)
// and replaces only what happens around them:
//
//   accept -> admission (the listen thread: caps per client address and in
//             total; over a cap the longest-idle connection of that scope is
//             closed to make room, or else the newcomer gets 503 unread)
//          -> waiting room (one poll thread: idle connections and request
//             heads being received; no worker is held, and a head is counted
//             up to its blank line: over max_head_bytes or max_headers 431,
//             a request line over max_request_line 414, past the request
//             deadline 408, idle past keep_alive_timeout closed)
//          -> a worker (a whole head is buffered: cpp-httplib parses it, reads
//             the body within the request deadline, runs the handler, writes
//             the reply), then back to the waiting room for keep-alive.
//
// So a worker is taken only by a request whose head has fully arrived, and
// holds it at most until the request deadline plus the handler's own time.
// base::BindPort raises the listening socket's backlog to SOMAXCONN
// (cpp-httplib's is 5) once bound. Error replies are written by the guard with a text body and
// "Connection: close"; over TLS the 503 of an over-cap connection is a plain
// close (there is no session to answer in).
//
// Thread-safety: the returned server is used like any httplib::Server (routes
// set before listening; base::ListenThread runs and stops it). Handlers run
// concurrently on GuardOptions::threads workers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace httplib {
class Server;
}  // namespace httplib

namespace muster::base {

struct GuardOptions {
  // Request line plus headers, CRLFs included: 431 over it. The oversized
  // head is never held beyond this many bytes.
  size_t max_head_bytes = size_t{64} << 10;
  // Header lines of one request: 431 over it.
  int max_headers = 100;
  // The request line alone: 414 over it (cpp-httplib's own URI limit).
  size_t max_request_line = size_t{8} << 10;
  // From the first byte of a request (of the TLS handshake, on a new TLS
  // connection) to the last byte of its body: 408 (or a close, once part of
  // the reply is out) past it.
  std::chrono::milliseconds request_deadline = std::chrono::seconds(30);
  // How long a connection may wait for the first byte of its next request
  // (its first one included) before it is closed.
  std::chrono::milliseconds keep_alive_timeout = std::chrono::seconds(5);
  // One read of a body (within the request deadline) and one write.
  std::chrono::milliseconds read_timeout = std::chrono::seconds(10);
  std::chrono::milliseconds write_timeout = std::chrono::seconds(5);
  // Open connections in total and per client address (IPv4/IPv6 address
  // without the port). kube-scheduler keeps up to ~25 idle keep-alive
  // connections plus parallel binds from one address: keep per-client
  // generous.
  int max_connections = 512;
  int max_connections_per_client = 128;
  // Worker threads running requests (parsing, handler, reply).
  int threads = 8;
};

// What the guard did since the server started listening (monotonic counts).
struct GuardStats {
  int64_t admitted = 0;
  int64_t refused = 0;           // 503 (or closed, TLS) over a connection cap
  int64_t evicted_idle = 0;      // idle connections closed to admit a newcomer
  int64_t head_too_large = 0;    // 431
  int64_t line_too_long = 0;     // 414
  int64_t timed_out = 0;         // 408 or closed past the request deadline
  int64_t idle_closed = 0;       // closed after keep_alive_timeout without a request
  int64_t requests = 0;          // handed to cpp-httplib
  int64_t open_connections = 0;  // now (not monotonic)
};

// A plain-HTTP guarded server. The server owns its task queue: callers must
// not set new_task_queue, and its read/write/keep-alive timeout setters have
// no effect (the GuardOptions ones apply). Everything else (routes,
// handlers, socket options, tcp_nodelay, payload limit) is cpp-httplib's.
std::unique_ptr<httplib::Server> NewGuardedServer(const GuardOptions& options);

// The TLS variant (httplib::SSLServer's certificate loading and client
// verification: with a client_ca_path, clients must present a certificate it
// signed). Check is_valid() for files that did not load.
// REQUIRES: cert_path and key_path non-empty; client_ca_path may be empty.
std::unique_ptr<httplib::Server> NewGuardedTlsServer(const GuardOptions& options,
                                                     const std::string& cert_path,
                                                     const std::string& key_path,
                                                     const std::string& client_ca_path);

// Raises a bound guarded server's listen backlog to SOMAXCONN (base::BindPort
// does, for every muster server); no-op for any other server.
// REQUIRES: bound, and its listen loop not started (the owner thread).
void RaiseBacklog(httplib::Server& server);

// The guard's counts of a server made by the functions above; all zero for
// any other server. Thread-safe.
GuardStats GuardStatsOf(const httplib::Server& server);

}  // namespace muster::base
