#include "base/ops_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <string>

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
      // Only the ops endpoints: an extender verb or /debug/state is not here.
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

}  // namespace
}  // namespace muster::base
