#include "base/http_serving.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

namespace muster::base {
namespace {

TEST(HttpServingTest, ServesUntilStoppedAndTellsTheListeningSocket) {
  httplib::Server http;
  int listen_fd = -1;
  ReuseAddressOnly(http, [&listen_fd](int sock) { listen_fd = sock; });
  http.Get("/ping", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("pong", "text/plain");
  });
  const int port = BindPort(http, "127.0.0.1", 0);
  ASSERT_GT(port, 0);
  EXPECT_GE(listen_fd, 0);
  ListenThread listener;
  listener.Stop();  // before Start(): nothing to do
  listener.Start(&http);
  httplib::Client client("127.0.0.1", port);
  httplib::Result res = client.Get("/ping");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "pong");
  listener.Stop();
  listener.Stop();  // idempotent
  EXPECT_FALSE(client.Get("/ping"));
}

// Not SO_REUSEPORT: a second server on a bound port fails instead of sharing it.
TEST(HttpServingTest, ASecondServerCannotBindTheSamePort) {
  httplib::Server first;
  ReuseAddressOnly(first);
  const int port = BindPort(first, "127.0.0.1", 0);
  ASSERT_GT(port, 0);
  httplib::Server second;
  ReuseAddressOnly(second);
  EXPECT_EQ(BindPort(second, "127.0.0.1", port), -1);
  EXPECT_EQ(CannotListenMessage("127.0.0.1", port),
            "cannot listen on 127.0.0.1:" + std::to_string(port));
}

}  // namespace
}  // namespace muster::base
