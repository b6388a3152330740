#include "base/guarded_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "base/http_serving.h"
#include "base/testing/hostile_http.h"

namespace muster::base {
namespace {

using testing::Connect;
using testing::ReadResponse;
using testing::SendAll;
using testing::StatusOf;

// A guarded server with /healthz and POST /echo on an ephemeral port.
struct Served {
  explicit Served(const GuardOptions& options) : http(NewGuardedServer(options)) {
    ReuseAddressOnly(*http);
    http->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    http->Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    port = BindPort(*http, "127.0.0.1", 0);
    EXPECT_GT(port, 0);
    listener.Start(http.get());
  }

  // A whole request and its answer on a new connection.
  std::string Echo(const std::string& body) {
    const int fd = Connect(port);
    EXPECT_GE(fd, 0);
    SendAll(fd, EchoRequest(body));
    std::string response = ReadResponse(fd);
    close(fd);
    return response;
  }
  static std::string EchoRequest(const std::string& body) {
    return "POST /echo HTTP/1.1\r\nHost: muster\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  }

  std::unique_ptr<httplib::Server> http;
  ListenThread listener;  // after http: stopped first
  int port = 0;
};

GuardOptions ShortDeadline() {
  GuardOptions options;
  options.request_deadline = std::chrono::seconds(3);
  options.keep_alive_timeout = std::chrono::seconds(2);
  options.threads = 2;
  return options;
}

// Each hostile head or trickle gets its 4xx with a text body and a close,
// memory stays bounded, and the server serves on.
TEST(GuardedServerTest, HostileHeadsAndTricklesGetTheirAnswerAndAClose) {
  Served s(ShortDeadline());
  testing::ExpectHostileCasesRefused(s.port, testing::HostileHeadCases("/healthz", "/echo"),
                                     24 * 1024, [&s] {
                                       const std::string echo = s.Echo("still here");
                                       EXPECT_EQ(StatusOf(echo), 200) << echo;
                                       EXPECT_EQ(testing::BodyOf(echo), "still here");
                                     });
  const GuardStats stats = GuardStatsOf(*s.http);
  EXPECT_EQ(stats.line_too_long, 1);
  EXPECT_EQ(stats.head_too_large, 2);
  EXPECT_EQ(stats.timed_out, 2);
}

// Idle connections hold no worker: 2000 of them (over both caps, so most
// evict an older idle one) while /healthz answers from another client, and
// each is closed by the server.
TEST(GuardedServerTest, TwoThousandIdleConnectionsAreShedAndHealthAnswers) {
  GuardOptions options = ShortDeadline();
  options.max_connections = 256;
  options.max_connections_per_client = 64;
  Served s(options);
  testing::ExpectIdleConnectionsShed(s.port, 2000, 20);
  const GuardStats stats = GuardStatsOf(*s.http);
  EXPECT_GT(stats.evicted_idle, 0);
  EXPECT_EQ(StatusOf(s.Echo("after")), 200);
}

// Connections that started a request are not evicted: over the cap the
// newcomer gets 503 unread, at once.
TEST(GuardedServerTest, OverTheCapANewcomerGets503AtOnce) {
  GuardOptions options = ShortDeadline();
  options.request_deadline = std::chrono::seconds(20);
  options.max_connections_per_client = 4;
  Served s(options);
  testing::ExpectOverCapRefused(s.port, 4, [&s] { return GuardStatsOf(*s.http).open_connections; });
  EXPECT_GE(GuardStatsOf(*s.http).refused, 1);
  EXPECT_EQ(StatusOf(s.Echo("after")), 200);
}

// Keep-alive: many requests on one connection, and two sent at once
// (pipelined) are both answered in order.
TEST(GuardedServerTest, KeepAliveAndPipelinedRequests) {
  Served s(ShortDeadline());
  const int fd = Connect(s.port);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(SendAll(fd, Served::EchoRequest("n" + std::to_string(i))));
    const std::string response = ReadResponse(fd);
    EXPECT_EQ(testing::BodyOf(response), "n" + std::to_string(i)) << response;
    EXPECT_FALSE(testing::AsksToClose(response));
  }
  ASSERT_TRUE(SendAll(fd, Served::EchoRequest("first") + Served::EchoRequest("second")));
  // One read may hold both answers.
  std::string both = ReadResponse(fd);
  EXPECT_EQ(testing::BodyOf(both), "first");
  if (both.find("\r\n\r\nsecond") == std::string::npos) both += ReadResponse(fd);
  EXPECT_NE(both.find("\r\n\r\nsecond"), std::string::npos) << both;
  // Idle past the keep-alive timeout: closed by the server.
  EXPECT_TRUE(testing::ClosedByPeer(fd, 15));
  close(fd);
  EXPECT_GE(GuardStatsOf(*s.http).idle_closed, 1);
}

// A head at the limits is served; one byte or one header more is not.
TEST(GuardedServerTest, HeadLimitsAreExact) {
  GuardOptions options = ShortDeadline();
  options.max_head_bytes = 1024;
  options.max_headers = 3;
  Served s(options);
  const struct {
    std::string name;
    std::string head;
    int want;
  } cases[] = {
      {"3 headers", "GET /healthz HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", 200},
      {"4 headers", "GET /healthz HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", 431},
      {"1024 bytes",
       "GET /healthz HTTP/1.1\r\nA: " + std::string(1024 - 23 - 3 - 4, 'x') + "\r\n\r\n", 200},
      {"1025 bytes",
       "GET /healthz HTTP/1.1\r\nA: " + std::string(1024 - 23 - 3 - 3, 'x') + "\r\n\r\n", 431},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const int fd = Connect(s.port);
    ASSERT_GE(fd, 0);
    SendAll(fd, c.head);
    const std::string response = ReadResponse(fd);
    close(fd);
    EXPECT_EQ(StatusOf(response), c.want) << response.substr(0, 200);
  }
}

// A server that never listened, and one stopped at once, shut down cleanly.
TEST(GuardedServerTest, StopsCleanly) {
  { auto never = NewGuardedServer({}); }
  for (int i = 0; i < 10; ++i) {
    Served s(ShortDeadline());
  }
  EXPECT_EQ(GuardStatsOf(httplib::Server()).admitted, 0);
}

}  // namespace
}  // namespace muster::base
