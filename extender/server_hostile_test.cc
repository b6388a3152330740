// The extender server against hostile bodies and clients, over raw sockets
// where an HTTP client would not send what they send: bodies that do not
// decode, oversized and unbounded bodies, stalled clients, and the
// keep-alive kube-scheduler relies on.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/testing/hostile_http.h"
#include "extender/server.h"
#include "extender/testing/golden.h"
#include "extender/testing/server_harness.h"
#include "kube/codec/extender_types.h"

namespace muster::extender {
namespace {

using base::testing::BodyOf;
using base::testing::PeakRssKib;
using base::testing::ReadResponse;
using base::testing::ResetPeakRss;
using base::testing::SendAll;
using base::testing::StatusOf;
using fixture::AddGoldenCluster;
using fixture::Fixture;
using fixture::Harness;
using fixture::TestOptions;

// ---- Hostile bodies and clients, over raw sockets where an HTTP client
// would not send what they send.

// A loopback connection to the harness's server; reads time out after
// `recv_timeout_s` so a test that waits for a reply never hangs.
int Connect(const Harness& h, int recv_timeout_s = 30) {
  return base::testing::Connect(h.server->port(), nullptr, recv_timeout_s);
}

// The server still answers /healthz and a real filter request correctly.
void ExpectStillServing(Harness& h) {
  httplib::Result health = h.Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  httplib::Result filter = h.Post("filter", Fixture("codec:filter_args_cache.json"));
  ASSERT_TRUE(filter) << httplib::to_string(filter.error());
  EXPECT_EQ(filter->status, 200);
  fixture::ExpectGolden(filter->body, "filter_cache_reply.json");
}

// A valid request of each verb, as kube-scheduler sends it.
std::string ValidRequest(const std::string& verb) {
  if (verb == "preempt") return Fixture("codec:preempt_args_cache.json");
  if (verb == "bind") return Fixture("codec:bind_args.json");
  return Fixture("codec:filter_args_cache.json");
}

// The error text of a verb's reply: Error of a 200 for filter and bind
// (their faults travel there), the text body of a 400 for prioritize and
// preempt (they have no Error field).
std::string ErrorText(const std::string& verb, int status, const std::string& content_type,
                      const std::string& body) {
  if (verb == "filter" || verb == "bind") {
    EXPECT_EQ(status, 200) << verb << " faults travel in Error";
    EXPECT_EQ(content_type, "application/json");
    if (verb == "filter") {
      StatusOr<kube::ExtenderFilterResult> result = kube::DecodeExtenderFilterResult(body);
      EXPECT_TRUE(result.ok()) << result.status() << ": " << body;
      return result.ok() ? result->error : "";
    }
    StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(body);
    EXPECT_TRUE(result.ok()) << result.status() << ": " << body;
    return result.ok() ? result->error : "";
  }
  EXPECT_EQ(status, 400) << verb << " has no Error field";
  EXPECT_TRUE(content_type.starts_with("text/plain")) << content_type;
  return body;
}

const std::vector<std::string> kAllVerbs = {"filter", "prioritize", "preempt", "bind"};

// A body that cannot be decoded, and what the error text starts with.
struct HostileBodyCase {
  std::string name;
  std::string verb;
  std::string body;
  std::string want;  // in the error text
};

// For every verb: bodies that are not JSON, or nested too deep.
std::vector<HostileBodyCase> UndecodableBodies() {
  const std::string deep_open(100000, '[');
  const std::string deep_closed = deep_open + std::string(100000, ']');
  std::vector<HostileBodyCase> cases;
  for (const std::string& verb : kAllVerbs) {
    const std::string valid = ValidRequest(verb);
    const std::string what = verb == "bind"      ? "ExtenderBindingArgs"
                             : verb == "preempt" ? "ExtenderPreemptionArgs"
                                                 : "ExtenderArgs";
    const std::string decode = "muster: decode " + what + ": ";
    cases.push_back({"truncated JSON", verb, valid.substr(0, valid.size() / 2),
                     decode + "invalid JSON at offset"});
    cases.push_back({"empty body", verb, "", decode + "invalid JSON at offset 0"});
    cases.push_back({"100000 unclosed '['", verb, deep_open, decode + "invalid JSON at offset"});
    cases.push_back(
        {"100000 nested arrays", verb, deep_closed, decode + "JSON nested deeper than 256 levels"});
    cases.push_back({"100000 nested arrays in a field", verb,
                     "{\"Pod\":" + deep_closed + ",\"PodName\":" + deep_closed + "}",
                     decode + "JSON nested deeper than 256 levels"});
  }
  return cases;
}

// Wrong types: the error names the JSON path.
std::vector<HostileBodyCase> WrongTypes() {
  const std::string pod = R"({"metadata":{"name":"p","namespace":"d","uid":"u"}})";
  return {
      {"Pod a number", "filter", R"({"Pod": 5, "NodeNames": {"a": 1}})",
       "muster: decode ExtenderArgs: Pod: expected an object, got a number"},
      {"NodeNames an object", "filter", R"({"Pod": )" + pod + R"(, "NodeNames": {"a": 1}})",
       "muster: decode ExtenderArgs: NodeNames: expected an array, got an object"},
      {"Pod a number", "prioritize", R"({"Pod": 5, "NodeNames": {"a": 1}})",
       "muster: decode ExtenderArgs: Pod: expected an object, got a number"},
      {"a node name a number", "prioritize", R"({"Pod": )" + pod + R"(, "NodeNames": ["a", 1]})",
       "muster: decode ExtenderArgs: NodeNames[1]: expected a string, got a number"},
      {"Pod a string", "preempt", R"({"Pod": "p", "NodeNameToMetaVictims": []})",
       "muster: decode ExtenderPreemptionArgs: Pod: expected an object, got a string"},
      {"victims an array", "preempt",
       R"({"Pod": )" + pod + R"(, "NodeNameToMetaVictims": {"n1": {"Pods": {"UID": 1}}}})",
       "muster: decode ExtenderPreemptionArgs: NodeNameToMetaVictims.n1.Pods: expected "
       "an array, got an object"},
      {"PodName a number", "bind",
       R"({"PodName": 5, "PodNamespace": ["x"], "PodUID": {}, "Node": true})",
       "muster: decode ExtenderBindingArgs: PodName: expected a string, got a number"},
      {"the body an array", "bind", R"([{"PodName": "p"}])",
       "muster: decode ExtenderBindingArgs: <root>: expected an object, got an array"},
  };
}

// Each verb, each kind of body that cannot be decoded: a clear error naming
// the problem (and the JSON path where there is one), and the server serves on.
TEST(ServerTest, HostileBodiesGetAClearErrorAndTheServerStaysHealthy) {
  Harness h;
  AddGoldenCluster(h.cluster);
  std::vector<HostileBodyCase> cases = UndecodableBodies();
  for (HostileBodyCase& c : WrongTypes()) cases.push_back(std::move(c));
  for (const HostileBodyCase& c : cases) {
    SCOPED_TRACE(c.verb + ", " + c.name);
    httplib::Result res = h.Post(c.verb, c.body);
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    const std::string error =
        ErrorText(c.verb, res->status, res->get_header_value("Content-Type"), res->body);
    EXPECT_TRUE(error.starts_with(c.want)) << error;
    ExpectStillServing(h);
  }
  EXPECT_TRUE(h.binder.bindings().empty());
}

using base::testing::kMiB;

// A body the server must refuse unread, and its answer.
struct UnboundedBodyCase {
  std::string name;
  std::string headers;
  size_t body_mib;  // sent in 1 MiB blocks of '[' before the reply is read
  bool chunked;     // each block one chunk
  int want_status;
  std::string want_body;
  bool want_close;
};

// The refused bodies are sent only in part: their reply must come without
// the rest. (Sent whole, their rest would be parsed as requests: the
// server reads it line by line, bounded, but under ASan the freed lines
// sit in the allocator's quarantine and inflate the peak.)
const std::vector<UnboundedBodyCase> kUnboundedBodyCases = {
    {"100 MiB, Content-Length", "Content-Length: " + std::to_string(100 * kMiB) + "\r\n", 100,
     false, 413, "request body exceeds the limit of 16777216 bytes\n", false},
    {"chunked, the first MiB", "Transfer-Encoding: chunked\r\n", 1, true, 411,
     "Transfer-Encoding is not accepted; send the body with Content-Length\n", true},
    {"no Content-Length, the first MiB", "", 1, false, 411, "Content-Length required\n", true},
    {"gzip, the first MiB of 100",
     "Content-Encoding: gzip\r\nContent-Length: " + std::to_string(100 * kMiB) + "\r\n", 1, false,
     415, "Content-Encoding gzip is not accepted; send the body uncompressed\n", true},
};

// Sends the case's headers and body_mib times `block` to `verb` on the
// connection `fd`, then reads the one response and closes `fd`.
std::string SendPartly(int fd, const std::string& verb, const UnboundedBodyCase& c,
                       const std::string& block) {
  bool sent = SendAll(fd, "POST /scheduler/" + verb +
                              " HTTP/1.1\r\nHost: muster\r\nContent-Type: application/json\r\n" +
                              c.headers + "\r\n");
  for (size_t i = 0; sent && i < c.body_mib; ++i) {
    if (c.chunked) sent = SendAll(fd, "100000\r\n");  // hex: 1 MiB
    sent = sent && SendAll(fd, block);
    if (c.chunked) sent = sent && SendAll(fd, "\r\n");
  }
  const std::string response = ReadResponse(fd);
  close(fd);
  return response;
}

// A body far over the limit is refused (413) while it streams in, never
// held in memory; bodies whose size cpp-httplib cannot bound (chunked,
// without a length, compressed) are refused (411, 415) before any of it is
// read, and the client is told to close the connection their rest is on.
TEST(ServerTest, OversizedAndUnboundedBodiesAreRefusedUnread) {
  Harness h;  // the default limit, 16 MiB
  AddGoldenCluster(h.cluster);
  const std::string block(kMiB, '[');
  for (const std::string& verb : kAllVerbs) {
    for (const UnboundedBodyCase& c : kUnboundedBodyCases) {
      SCOPED_TRACE(verb + ", " + c.name);
      const bool reset = ResetPeakRss();
      const int64_t peak_before = PeakRssKib();
      const auto start = std::chrono::steady_clock::now();
      const int fd = Connect(h);
      ASSERT_GE(fd, 0);
      const std::string response = SendPartly(fd, verb, c, block);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      const int64_t growth_kib = PeakRssKib() - peak_before;
      EXPECT_EQ(StatusOf(response), c.want_status) << response.substr(0, 300);
      EXPECT_EQ(BodyOf(response), c.want_body);
      EXPECT_EQ(response.find("Connection: close\r\n") != std::string::npos, c.want_close);
      EXPECT_LT(took.count(), 20.0);
      // Not buffered: the peak grows by the client's 1 MiB block and the
      // server's read buffers, nowhere near the body.
      EXPECT_LT(growth_kib, 24 * 1024) << "peak RSS grew by " << growth_kib << " KiB";
      std::printf("[ %s, %s ] %d in %.2f s, peak RSS +%lld KiB%s\n", verb.c_str(), c.name.c_str(),
                  StatusOf(response), took.count(), static_cast<long long>(growth_kib),
                  reset ? "" : " (peak not reset)");
      ExpectStillServing(h);
    }
  }
  EXPECT_TRUE(h.binder.bindings().empty());
}

// A client that sends its headers and part of the body, then stalls, holds
// one worker until the read timeout, and no other request waits for it.
TEST(ServerTest, AStalledClientDoesNotBlockOthers) {
  ServerOptions options = TestOptions();
  options.threads = 2;
  options.read_timeout = std::chrono::seconds(3);
  Harness h(options);
  AddGoldenCluster(h.cluster);
  const std::string body = Fixture("codec:filter_args_cache.json");
  const std::string partial =
      "POST /scheduler/filter HTTP/1.1\r\nHost: muster\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, body.size() / 2);
  const auto start = std::chrono::steady_clock::now();
  const int stalled = Connect(h);
  ASSERT_GE(stalled, 0);
  ASSERT_TRUE(SendAll(stalled, partial));
  for (int i = 0; i < 3; ++i) ExpectStillServing(h);
  pollfd pending{.fd = stalled, .events = POLLIN, .revents = 0};
  EXPECT_EQ(poll(&pending, 1, 0), 0)
      << "the others were served while the stalled request was still being read";
  // Its worker gives up after the read timeout: 400, or a closed connection.
  const std::string response = ReadResponse(stalled);
  close(stalled);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(StatusOf(response) == 400 || response.ends_with("<connection closed>")) << response;
  EXPECT_GE(took.count(), 2.5);
  EXPECT_LT(took.count(), 15.0);
}

// As many stalled clients as workers: the next request waits for a read
// timeout to free a worker (after its 400, cpp-httplib keeps an idle
// connection for its 5 s keep-alive timeout), not for the clients.
TEST(ServerTest, StalledClientsHoldWorkersOnlyUntilTheirTimeouts) {
  ServerOptions options = TestOptions();
  options.threads = 2;
  options.read_timeout = std::chrono::seconds(1);
  Harness h(options);
  AddGoldenCluster(h.cluster);
  const std::vector<std::string> partials = {
      "POST /scheduler/bind HTTP/1.1\r\nHost: muster\r\nContent-Length: 100\r\n\r\n{\"PodName\"",
      "POST /scheduler/filter HTTP/1.1\r\nHost: muster\r\nContent-Le",  // mid-headers
  };
  std::vector<int> stalled;
  for (const std::string& partial : partials) {
    const int fd = Connect(h);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, partial));
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both taken by a worker
  const auto start = std::chrono::steady_clock::now();
  ExpectStillServing(h);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took.count(), 15.0) << "served once a read timeout freed a worker";
  std::printf("served after %.2f s with every worker held by a stalled client\n", took.count());
  for (int fd : stalled) close(fd);
  EXPECT_TRUE(h.binder.bindings().empty());
}

// The verbs port is guarded (base/guarded_server.h): a 100 MB request line,
// a 64 MiB header line, 10000 headers, a head or a body trickled a byte a
// second, 2000 idle connections and a connection over the cap each get
// their answer (414, 431, 408, closed, 503) and a close, memory stays
// bounded, /healthz answers another client throughout, and a real filter
// still matches its golden after each.
TEST(ServerTest, HostileHeadsTricklesAndConnectionsAreRefused) {
  ServerOptions options = TestOptions();
  options.request_deadline = std::chrono::seconds(3);
  options.keep_alive_timeout = std::chrono::seconds(2);
  options.max_connections = 256;
  options.max_connections_per_client = 64;
  Harness h(options);
  AddGoldenCluster(h.cluster);
  const int port = h.server->port();
  base::testing::ExpectHostileCasesRefused(
      port, base::testing::HostileHeadCases("/healthz", "/scheduler/filter"), 24 * 1024,
      [&h] { ExpectStillServing(h); });
  base::testing::ExpectIdleConnectionsShed(port, 2000, 20);
  ExpectStillServing(h);
  base::testing::ExpectOverCapRefused(port, 64,
                                      [&h] { return h.server->guard_stats().open_connections; });
  ExpectStillServing(h);
  const base::GuardStats stats = h.server->guard_stats();
  EXPECT_EQ(stats.line_too_long, 1);
  EXPECT_EQ(stats.head_too_large, 2);
  EXPECT_EQ(stats.timed_out, 2);
  EXPECT_GE(stats.refused, 1);
  EXPECT_GT(stats.evicted_idle, 0);
  EXPECT_TRUE(h.binder.bindings().empty());
}

// kube-scheduler keeps its connection: many requests on one socket, which
// cpp-httplib's default (5 per connection) would close.
TEST(ServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Harness h;
  AddGoldenCluster(h.cluster);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(h.server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string body = Fixture("codec:filter_args_cache.json");
  const std::string request =
      "POST /scheduler/filter HTTP/1.1\r\nHost: muster\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    const std::string response = ReadResponse(fd);
    EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
    ASSERT_EQ(response.find("Connection: close"), std::string::npos) << response;
  }
  close(fd);
}

}  // namespace
}  // namespace muster::extender
