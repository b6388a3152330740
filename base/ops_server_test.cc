#include "base/ops_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>

#include "base/testing/hostile_http.h"

namespace muster::base {
namespace {

struct Reply {
  int status = 0;
  std::string body;
};

Reply Get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result res = client.Get(path);
  if (!res) return {};
  return {res->status, res->body};
}

TEST(OpsServerTest, ServesMetricsHealthAndReadinessOverLoopback) {
  std::atomic<bool> ready{false};
  OpsServer server({.metrics = [] { return std::string("muster_up 1\n"); },
                    .ready = [&ready] { return ready.load(); },
                    .not_ready_reason = "informers not synced"});
  std::string error;
  ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  ASSERT_GT(server.port(), 0);

  const struct {
    std::string path;
    bool ready;
    int status;
    std::string body;
  } cases[] = {
      {"/metrics", false, 200, "muster_up 1\n"},
      {"/healthz", false, 200, "ok\n"},
      {"/readyz", false, 503, "informers not synced\n"},
      {"/readyz", true, 200, "ok\n"},
      // Only the ops endpoints: no extender verb, no /debug/state unless given.
      {"/scheduler/filter", true, 404, ""},
      {"/debug/state", true, 404, ""},
  };
  for (const auto& c : cases) {
    ready = c.ready;
    const Reply reply = Get(server.port(), c.path);
    EXPECT_EQ(reply.status, c.status) << c.path;
    if (!c.body.empty()) {
      EXPECT_EQ(reply.body, c.body) << c.path;
    }
  }
}

// The extender's --metrics-port serves its /debug/state too, so `muster why`
// reaches it through the API server's pod proxy while the verbs stay on
// loopback.
TEST(OpsServerTest, ServesDebugStateWhenGiven) {
  OpsServer server({.metrics = [] { return std::string(); },
                    .debug_state = [] { return std::string(R"({"gangs":[]})"); }});
  std::string error;
  ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  const Reply reply = Get(server.port(), "/debug/state");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, R"({"gangs":[]})");
}

// With leader election, /readyz names the role; a standby is ready too (its
// caches are warm), so a rolling update can wait for it.
TEST(OpsServerTest, ReadinessNamesTheLeaderElectionRole) {
  std::atomic<bool> ready{false};
  std::atomic<bool> leading{false};
  OpsServer server({.metrics = [] { return std::string(); },
                    .ready = [&ready] { return ready.load(); },
                    .not_ready_reason = "caches not synced yet",
                    .role = [&leading] { return std::string(leading ? "leader" : "standby"); }});
  std::string error;
  ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  const struct {
    bool ready, leading;
    int status;
    std::string body;
  } cases[] = {
      {false, false, 503, "caches not synced yet\n"},
      {true, false, 200, "ok (standby)\n"},
      {true, true, 200, "ok (leader)\n"},
  };
  for (const auto& c : cases) {
    ready = c.ready;
    leading = c.leading;
    const Reply reply = Get(server.port(), "/readyz");
    EXPECT_EQ(reply.status, c.status);
    EXPECT_EQ(reply.body, c.body);
  }
}

TEST(OpsServerTest, PortInUseIsUnavailableAndStopIsIdempotent) {
  OpsServer first({.metrics = [] { return std::string(); }});
  std::string error;
  ASSERT_TRUE(first.Start("127.0.0.1", 0, &error)) << error;
  OpsServer second({.metrics = [] { return std::string(); }});
  // Unavailable: the caller's Status for a port taken.
  EXPECT_FALSE(second.Start("127.0.0.1", first.port(), &error));
  EXPECT_EQ(error, CannotListenMessage("127.0.0.1", first.port()));
  EXPECT_NE(error.find(std::to_string(first.port())), std::string::npos);
  first.Stop();
  first.Stop();
}

TEST(OpsServerTest, StopRightAfterStartReturns) {
  for (int i = 0; i < 20; ++i) {
    OpsServer server({.metrics = [] { return std::string(); }});
    std::string error;
    ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  }
}

// The ops port is guarded: hostile heads and trickles get their 4xx and a
// close, idle connections are shed, over the cap a newcomer gets 503, and
// /healthz answers from another client throughout; /metrics serves after.
TEST(OpsServerTest, HostileClientsAreRefusedAndHealthAnswersThroughout) {
  OpsServerOptions options;
  options.connections.request_deadline = std::chrono::seconds(3);
  options.connections.keep_alive_timeout = std::chrono::seconds(2);
  options.connections.max_connections = 256;
  options.connections.max_connections_per_client = 64;
  OpsServer server({.metrics = [] { return std::string("muster_up 1\n"); }}, options);
  std::string error;
  ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  const auto metrics_served = [&server] {
    const Reply reply = Get(server.port(), "/metrics");
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.body, "muster_up 1\n");
  };
  testing::ExpectHostileCasesRefused(
      server.port(), testing::HostileHeadCases("/healthz", "/metrics"), 24 * 1024, metrics_served);
  testing::ExpectIdleConnectionsShed(server.port(), 2000, 20);
  metrics_served();
  testing::ExpectOverCapRefused(server.port(), 64,
                                [&server] { return server.guard_stats().open_connections; });
  metrics_served();
  const GuardStats stats = server.guard_stats();
  EXPECT_EQ(stats.line_too_long, 1);
  EXPECT_EQ(stats.head_too_large, 2);
  EXPECT_EQ(stats.timed_out, 2);
  EXPECT_GE(stats.refused, 1);
}

}  // namespace
}  // namespace muster::base
