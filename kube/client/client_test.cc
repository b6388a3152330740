#include "kube/client/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/testing/loopback_server.h"

namespace muster::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::LoopbackServer;
using testing::RecordedRequest;
using testing::RequestLog;

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ApiStatusJson(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

struct Reply {
  int status = 200;
  std::string body = "{}";
  std::map<std::string, std::string> headers;
};

// A loopback API server answering from a queue of canned replies (200 "{}"
// once the queue is empty), and a client whose waits advance a FakeClock.
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<LoopbackServer>([this](httplib::Server& s) {
      auto handler = [this](const httplib::Request& req, httplib::Response& res) {
        log_.Add(req);
        Reply reply = NextReply();
        res.status = reply.status;
        for (const auto& [name, value] : reply.headers) res.set_header(name.c_str(), value);
        res.set_content(reply.body, "application/json");
      };
      s.Get(".*", handler);
      s.Post(".*", handler);
      s.Patch(".*", handler);
      s.Delete(".*", handler);
    });
    ASSERT_TRUE(server_->Start());
  }

  std::unique_ptr<Client> MakeClient(ClientConfig config = {}, int max_attempts = 5,
                                     std::function<bool()> write_fence = nullptr) {
    if (config.server.empty()) config.server = server_->url();
    ClientOptions options;
    options.write_fence = std::move(write_fence);
    options.retry.max_attempts = max_attempts;
    options.clock = &clock_;
    options.random = [] { return 0.0; };  // no jitter: exact waits
    options.sleeper = [this](Duration d, CancelToken*) {
      std::lock_guard<std::mutex> lock(mu_);
      sleeps_.push_back(d);
      clock_.Advance(d);
      if (sleep_hook_) sleep_hook_();
      return true;
    };
    StatusOr<std::unique_ptr<Client>> client = Client::New(config, std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  void Push(Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_.push_back(std::move(reply));
  }
  Reply NextReply() {
    std::lock_guard<std::mutex> lock(mu_);
    if (replies_.empty()) return Reply{};
    Reply r = replies_.front();
    replies_.pop_front();
    return r;
  }
  std::vector<Duration> sleeps() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }

  FakeClock clock_;
  RequestLog log_;
  std::unique_ptr<LoopbackServer> server_;
  std::mutex mu_;
  std::deque<Reply> replies_;
  std::vector<Duration> sleeps_;
  std::function<void()> sleep_hook_;  // runs in each retry's wait
};

const ResourceRef kPod = ResourceRef::Core("pods", "default", "p1");

TEST_F(ClientTest, GetReturnsBodyOfTheObjectPath) {
  Push({200, R"({"kind":"Pod","metadata":{"name":"p1"}})"});
  auto client = MakeClient();
  StatusOr<std::string> body = client->Get(kPod);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, R"({"kind":"Pod","metadata":{"name":"p1"}})");
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_.Snapshot()[0].path, "/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(log_.Snapshot()[0].method, "GET");
}

// A replica that is not the leader sends no write at all - not even a
// retry of one begun while it led - and still reads.
TEST_F(ClientTest, AClosedWriteFenceRefusesEveryWriteUnsentButNotReads) {
  std::atomic<bool> leading{false};
  auto client = MakeClient({}, 5, [&leading] { return leading.load(); });
  struct Case {
    const char* name;
    std::function<Status(Client&)> call;
  };
  const std::vector<Case> writes = {
      {"create", [](Client& c) { return c.Create(kPod, "{}").status(); }},
      {"patch", [](Client& c) { return c.Patch(kPod, PatchType::kMerge, "{}").status(); }},
      {"status", [](Client& c) { return c.PatchStatus(kPod, PatchType::kMerge, "{}").status(); }},
      {"delete", [](Client& c) { return c.Delete(kPod).status(); }},
      {"bind", [](Client& c) { return c.Bind("default", "p1", "{}").status(); }},
      {"evict", [](Client& c) { return c.Evict("default", "p1", "{}").status(); }},
  };
  for (const Case& c : writes) {
    EXPECT_EQ(c.call(*client).code(), StatusCode::kFailedPrecondition) << c.name;
  }
  EXPECT_EQ(log_.size(), 0u) << "a fenced write reached the server";
  Push({200, "{}"});
  EXPECT_TRUE(client->Get(kPod).ok());
  EXPECT_EQ(log_.size(), 1u);

  // Fenced between attempts: the retry of a write is not sent either.
  leading = true;
  Push({503, ApiStatusJson(503, "ServiceUnavailable", "busy")});
  sleep_hook_ = [&leading] { leading = false; };
  EXPECT_EQ(client->Patch(kPod, PatchType::kMerge, "{}").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(log_.size(), 2u);
}

TEST_F(ClientTest, MapsApiErrorsWithReason) {
  struct Case {
    std::string name;
    int http;
    std::string body;
    StatusCode code;
    std::string reason;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"not found", 404, ApiStatusJson(404, "NotFound", "pods \\\"p1\\\" not found"),
       StatusCode::kNotFound, "NotFound", "pods \"p1\" not found"},
      {"already exists", 409, ApiStatusJson(409, "AlreadyExists", "exists"),
       StatusCode::kAlreadyExists, "AlreadyExists", "exists"},
      {"conflict", 409, ApiStatusJson(409, "Conflict", "the object has been modified"),
       StatusCode::kConflict, "Conflict", "modified"},
      {"invalid", 422, ApiStatusJson(422, "Invalid", "spec.x: Invalid value"),
       StatusCode::kInvalidArgument, "Invalid", "Invalid value"},
      {"bad request", 400, ApiStatusJson(400, "BadRequest", "bad"), StatusCode::kInvalidArgument,
       "BadRequest", "bad"},
      {"unauthorized", 401, ApiStatusJson(401, "Unauthorized", "Unauthorized"),
       StatusCode::kUnauthenticated, "Unauthorized", "Unauthorized"},
      {"forbidden", 403, ApiStatusJson(403, "Forbidden", "cannot get pods"),
       StatusCode::kPermissionDenied, "Forbidden", "cannot get pods"},
      {"gone", 410, ApiStatusJson(410, "Expired", "too old resource version"), StatusCode::kGone,
       "Expired", "too old"},
      {"throttled", 429, ApiStatusJson(429, "TooManyRequests", "slow down"),
       StatusCode::kResourceExhausted, "TooManyRequests", "slow down"},
      {"internal", 500, ApiStatusJson(500, "InternalError", "boom"), StatusCode::kInternal,
       "InternalError", "boom"},
      {"not implemented", 501, "", StatusCode::kUnimplemented, "", "HTTP 501"},
      {"bad gateway", 502, "", StatusCode::kUnavailable, "", "HTTP 502"},
      {"unavailable", 503, ApiStatusJson(503, "ServiceUnavailable", "etcd down"),
       StatusCode::kUnavailable, "ServiceUnavailable", "etcd down"},
      {"gateway timeout", 504, ApiStatusJson(504, "Timeout", "timed out"), StatusCode::kUnavailable,
       "Timeout", "timed out"},
      {"plain text body", 404, "404 page not found", StatusCode::kNotFound, "",
       "404 page not found"},
  };
  auto client = MakeClient({}, /*max_attempts=*/1);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Push({c.http, c.body});
    StatusOr<std::string> body = client->Get(kPod);
    ASSERT_FALSE(body.ok());
    EXPECT_EQ(body.status().code(), c.code) << body.status();
    EXPECT_EQ(body.status().http_code(), c.http);
    EXPECT_EQ(body.status().reason(), c.reason);
    EXPECT_THAT(body.status().message(), HasSubstr(c.message_part));
    EXPECT_THAT(body.status().message(), HasSubstr("GET /api/v1/namespaces/default/pods/p1"));
  }
}

TEST_F(ClientTest, RetriesServiceUnavailableWithGrowingBackoffThenSucceeds) {
  Push({503, ApiStatusJson(503, "ServiceUnavailable", "x")});
  Push({503, ApiStatusJson(503, "ServiceUnavailable", "x")});
  Push({200, R"({"ok":true})"});
  auto client = MakeClient();
  StatusOr<std::string> body = client->Get(kPod);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(*body, R"({"ok":true})");
  EXPECT_EQ(log_.size(), 3u);
  EXPECT_THAT(sleeps(), ElementsAre(milliseconds(200), milliseconds(400)));
}

TEST_F(ClientTest, GivesUpAfterMaxAttempts) {
  for (int i = 0; i < 5; ++i) Push({503, ""});
  auto client = MakeClient({}, /*max_attempts=*/3);
  StatusOr<std::string> body = client->Get(kPod);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(body.status().message(), HasSubstr("after 3 attempts"));
  EXPECT_EQ(log_.size(), 3u);
}

TEST_F(ClientTest, HonoursRetryAfterOnTooManyRequestsForEveryVerb) {
  struct Case {
    std::string name;
    std::function<Status(Client&)> call;
  };
  const std::vector<Case> cases = {
      {"get", [](Client& c) { return c.Get(kPod).status(); }},
      {"create", [](Client& c) { return c.Create(kPod, "{}").status(); }},
      {"bind", [](Client& c) { return c.Bind("default", "p1", "{}").status(); }},
      {"patch", [](Client& c) { return c.Patch(kPod, PatchType::kMerge, "{}").status(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const size_t before = log_.size();
    const size_t sleeps_before = sleeps().size();
    Push({429, ApiStatusJson(429, "TooManyRequests", "slow"), {{"Retry-After", "3"}}});
    Push({200, "{}"});
    auto client = MakeClient();
    EXPECT_TRUE(c.call(*client).ok());
    EXPECT_EQ(log_.size() - before, 2u);
    ASSERT_EQ(sleeps().size(), sleeps_before + 1);
    EXPECT_EQ(sleeps().back(), seconds(3));
  }
}

TEST_F(ClientTest, CapsRetryAfter) {
  Push({429, "", {{"Retry-After", "3600"}}});
  auto client = MakeClient();
  EXPECT_TRUE(client->Get(kPod).ok());
  EXPECT_THAT(sleeps(), ElementsAre(seconds(30)));
}

TEST_F(ClientTest, DoesNotRetryPostOnServerErrors) {
  struct Case {
    std::string name;
    int http;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {"500", 500, StatusCode::kInternal},
      {"503", 503, StatusCode::kUnavailable},
  };
  auto client = MakeClient();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const size_t before = log_.size();
    Push({c.http, ApiStatusJson(c.http, "InternalError", "maybe created")});
    Push({201, "{}"});
    StatusOr<std::string> created = client->Create(kPod, R"({"metadata":{"name":"p1"}})");
    ASSERT_FALSE(created.ok());
    EXPECT_EQ(created.status().code(), c.code);
    EXPECT_EQ(log_.size() - before, 1u);
    NextReply();  // drop the unused 201
  }
  EXPECT_TRUE(sleeps().empty());
}

TEST_F(ClientTest, RetriesNonPostOnInternalError) {
  Push({500, ApiStatusJson(500, "InternalError", "transient")});
  auto client = MakeClient();
  EXPECT_TRUE(client->Delete(kPod).ok());
  EXPECT_EQ(log_.size(), 2u);
}

TEST_F(ClientTest, DoesNotRetryClientErrorsOrNotImplemented) {
  for (int http : {400, 404, 409, 422, 501}) {
    SCOPED_TRACE(http);
    const size_t before = log_.size();
    Push({http, ""});
    auto client = MakeClient();
    EXPECT_FALSE(client->Get(kPod).ok());
    EXPECT_EQ(log_.size() - before, 1u);
  }
}

TEST_F(ClientTest, RetriesPostWhenTheConnectionWasRefused) {
  const std::string url = server_->url();
  server_->Stop();  // nothing listens on the port now
  ClientConfig config;
  config.server = url;
  auto client = MakeClient(config, /*max_attempts=*/4);
  StatusOr<std::string> created = client->Create(kPod, "{}");
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(created.status().reason(), kReasonNotSent);
  // Four attempts, three waits: a refused connection never carried the POST.
  EXPECT_EQ(sleeps().size(), 3u);
}

TEST_F(ClientTest, ListAllFollowsContinueTokens) {
  Push({200, R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[{"a":1}]})"});
  Push({200, R"({"metadata":{"resourceVersion":"10","continue":"c2"},"items":[{"a":2}]})"});
  Push({200, R"({"metadata":{"resourceVersion":"10"},"items":[{"a":3}]})"});
  auto client = MakeClient();
  ListOptions options;
  options.limit = 1;
  options.label_selector = "app=x,tier!=db";
  StatusOr<std::vector<std::string>> pages =
      client->ListAll(ResourceRef::Core("pods", "default"), options);
  ASSERT_TRUE(pages.ok()) << pages.status();
  EXPECT_EQ(pages->size(), 3u);
  std::vector<RecordedRequest> requests = log_.Snapshot();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/default/pods");
  EXPECT_EQ(requests[0].Param("limit"), "1");
  EXPECT_EQ(requests[0].Param("labelSelector"), "app=x,tier!=db");
  EXPECT_FALSE(requests[0].HasParam("continue"));
  EXPECT_EQ(requests[1].Param("continue"), "c1");
  EXPECT_EQ(requests[2].Param("continue"), "c2");
  EXPECT_EQ(requests[2].Param("labelSelector"), "app=x,tier!=db");
}

TEST_F(ClientTest, ListAllRestartsWhenTheContinueTokenExpired) {
  Push({200, R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[]})"});
  Push({410, ApiStatusJson(410, "Expired", "continue token too old")});
  Push({200, R"({"metadata":{"resourceVersion":"20","continue":"c9"},"items":[{"a":1}]})"});
  Push({200, R"({"metadata":{"resourceVersion":"20"},"items":[{"a":2}]})"});
  auto client = MakeClient();
  ListOptions options;
  options.limit = 1;
  options.resource_version = "5";
  StatusOr<std::vector<std::string>> pages = client->ListAll(ResourceRef::Core("nodes"), options);
  ASSERT_TRUE(pages.ok()) << pages.status();
  ASSERT_EQ(pages->size(), 2u);
  EXPECT_THAT((*pages)[0], HasSubstr(R"("resourceVersion":"20")"));
  std::vector<RecordedRequest> requests = log_.Snapshot();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].Param("resourceVersion"), "5");
  EXPECT_FALSE(requests[1].HasParam("resourceVersion"));  // not allowed with continue
  EXPECT_EQ(requests[2].Param("resourceVersion"), "5");   // restarted from scratch
  EXPECT_FALSE(requests[2].HasParam("continue"));
  EXPECT_EQ(requests[3].Param("continue"), "c9");
}

TEST_F(ClientTest, PatchSendsTheContentTypeOfEachPatchKind) {
  struct Case {
    std::string name;
    PatchType type;
    std::string content_type;
    std::string patch;
  };
  const std::vector<Case> cases = {
      {"merge", PatchType::kMerge, "application/merge-patch+json", R"({"metadata":{}})"},
      {"strategic", PatchType::kStrategicMerge, "application/strategic-merge-patch+json",
       R"({"spec":{}})"},
      {"json", PatchType::kJson, "application/json-patch+json",
       R"([{"op":"add","path":"/metadata/labels/a","value":"b"}])"},
  };
  auto client = MakeClient();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(client->PatchStatus(kPod, c.type, c.patch).ok());
    RecordedRequest r = log_.Snapshot().back();
    EXPECT_EQ(r.method, "PATCH");
    EXPECT_EQ(r.path, "/api/v1/namespaces/default/pods/p1/status");
    EXPECT_EQ(r.content_type, c.content_type);
    EXPECT_EQ(r.body, c.patch);
    EXPECT_EQ(r.Param("fieldManager"), "muster");
  }
}

TEST_F(ClientTest, DeleteSendsPreconditionsAndPolicy) {
  auto client = MakeClient();
  DeleteOptions options;
  options.precondition_uid = "uid-1";
  options.grace_period_seconds = 0;
  options.propagation_policy = "Background";
  ASSERT_TRUE(client->Delete(kPod, options).ok());
  RecordedRequest r = log_.Snapshot().back();
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(r.path, "/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(r.body, R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,)"
                    R"("propagationPolicy":"Background","preconditions":{"uid":"uid-1"}})");
}

TEST_F(ClientTest, SubresourcePostsGoToTheirPaths) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Bind("ns1", "p1", R"({"kind":"Binding"})").ok());
  ASSERT_TRUE(client->Evict("ns1", "p2", R"({"kind":"Eviction"})").ok());
  ASSERT_TRUE(client->Create(ResourceRef::Core("pods", "ns1", "ignored"), "{}").ok());
  std::vector<RecordedRequest> r = log_.Snapshot();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].method, "POST");
  EXPECT_EQ(r[0].path, "/api/v1/namespaces/ns1/pods/p1/binding");
  EXPECT_EQ(r[0].body, R"({"kind":"Binding"})");
  EXPECT_EQ(r[0].content_type, "application/json");
  EXPECT_EQ(r[1].path, "/api/v1/namespaces/ns1/pods/p2/eviction");
  EXPECT_EQ(r[2].path, "/api/v1/namespaces/ns1/pods");
}

TEST_F(ClientTest, SendsBearerTokenAndUserAgent) {
  ClientConfig config;
  config.bearer_token = "s3cret";
  config.user_agent = "muster-test/1";
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(kPod).ok());
  RecordedRequest r = log_.Snapshot().back();
  EXPECT_EQ(r.authorization, "Bearer s3cret");
  EXPECT_EQ(r.user_agent, "muster-test/1");
}

TEST_F(ClientTest, PrependsTheServerUrlPathPrefix) {
  ClientConfig config;
  config.server = server_->url() + "/k8s/clusters/c-1/";
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(kPod).ok());
  EXPECT_EQ(log_.Snapshot().back().path, "/k8s/clusters/c-1/api/v1/namespaces/default/pods/p1");
}

TEST_F(ClientTest, SendsNoAuthorizationWithoutToken) {
  auto client = MakeClient();
  ASSERT_TRUE(client->Get(kPod).ok());
  EXPECT_EQ(log_.Snapshot().back().authorization, "");
}

TEST_F(ClientTest, ReusesOneKeepAliveConnectionForSequentialCalls) {
  auto client = MakeClient();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get(kPod).ok());
  std::vector<RecordedRequest> r = log_.Snapshot();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].remote_port, r[1].remote_port);
  EXPECT_EQ(r[1].remote_port, r[2].remote_port);
}

// The ports of the connections that asked `path`, in order.
std::vector<int> PortsAsking(const RequestLog& log, const std::string& path) {
  std::vector<int> ports;
  for (const RecordedRequest& r : log.Snapshot()) {
    if (r.path == path) ports.push_back(r.remote_port);
  }
  return ports;
}

TEST_F(ClientTest, PrewarmOpensTheConnectionsABurstThenUses) {
  ClientConfig config;
  // The pool holds the four: a request of the burst that comes while a
  // warm-up is still in flight waits for its connection rather than opening
  // a fifth (the server logs the warm-up before the client has it back).
  config.max_connections = 4;
  auto client = MakeClient(config);
  client->Prewarm(4);
  ASSERT_TRUE(testing::WaitFor([&] { return PortsAsking(log_, "/version").size() == 4; }));
  const std::vector<int> warmed = PortsAsking(log_, "/version");
  EXPECT_EQ(std::set<int>(warmed.begin(), warmed.end()).size(), 4u) << "one connection each";
  std::vector<std::thread> burst;
  for (int i = 0; i < 4; ++i) burst.emplace_back([&] { EXPECT_TRUE(client->Get(kPod).ok()); });
  for (std::thread& t : burst) t.join();
  // Every request of the burst went over a connection opened beforehand.
  for (int port : PortsAsking(log_, "/api/v1/namespaces/default/pods/p1")) {
    EXPECT_THAT(warmed, ::testing::Contains(port));
  }
}

TEST_F(ClientTest, PrewarmCountsFreshConnectionsAndStopsAtThePoolSize) {
  ClientConfig config;
  config.max_connections = 3;
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(kPod).ok());  // one connection open and fresh
  client->Prewarm(10);                  // more than the pool holds
  ASSERT_TRUE(testing::WaitFor([&] { return PortsAsking(log_, "/version").size() == 2; }));
  client->Prewarm(3);  // all three are fresh: nothing to do
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(PortsAsking(log_, "/version").size(), 2u);
}

TEST_F(ClientTest, PrewarmRefreshesAConnectionIdleLongerThanTheServerKeepsIt) {
  ClientConfig config;
  config.max_connections = 4;
  config.connection_fresh_for = milliseconds(0);  // every idle connection is stale
  auto client = MakeClient(config);
  ASSERT_TRUE(client->Get(kPod).ok());
  const int port = log_.Snapshot().back().remote_port;
  client->Prewarm(1);
  ASSERT_TRUE(testing::WaitFor([&] { return PortsAsking(log_, "/version").size() == 1; }));
  // Refreshed, not replaced by a second connection.
  EXPECT_EQ(PortsAsking(log_, "/version")[0], port);
}

TEST_F(ClientTest, RateLimitsBeforeEachRequest) {
  ClientConfig config;
  config.qps = 2;
  config.burst = 1;
  auto client = MakeClient(config);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get(kPod).ok());
  // The first call takes the burst token; each later one waits 1/qps (the
  // fake clock only moves when the limiter sleeps).
  EXPECT_THAT(sleeps(), ElementsAre(milliseconds(500), milliseconds(500)));
}

TEST_F(ClientTest, CancelledTokenStopsBeforeSending) {
  auto client = MakeClient();
  CancelToken cancel;
  cancel.Cancel();
  StatusOr<std::string> body = client->Get(kPod, &cancel);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(log_.size(), 0u);
}

TEST_F(ClientTest, RejectsRefsWithoutNameWhereOneIsNeeded) {
  auto client = MakeClient();
  EXPECT_EQ(client->Patch(ResourceRef::Core("pods", "ns"), PatchType::kMerge, "{}").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Delete(ResourceRef::Core("pods", "ns")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client->Get(ResourceRef{}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(log_.size(), 0u);
}

// "first|rv|continue|json": what ListEach handed over.
std::string DescribePage(const ListPage& page) {
  return std::string(page.first ? "first" : "next") + "|" + page.meta.resource_version + "|" +
         page.meta.continue_token + "|" + page.json;
}

struct ListEachCase {
  std::string name;
  std::vector<Reply> replies;
  int fail_at;  // the handler answers an error on this page (0-based); -1: never
  std::vector<std::string> want_pages;  // DescribePage
  StatusCode want_code;
  size_t want_requests;
};

std::vector<ListEachCase> ListEachCases() {
  const std::string p1 = R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[1]})";
  const std::string p2 = R"({"metadata":{"resourceVersion":"10"},"items":[2]})";
  const std::string r1 = R"({"metadata":{"resourceVersion":"20","continue":"c9"},"items":[]})";
  const std::string expired = ApiStatusJson(410, "Expired", "continue token too old");
  const std::string forbidden = ApiStatusJson(403, "Forbidden", "no");
  return {
      {"two pages",
       {{200, p1}, {200, p2}},
       -1,
       {"first|10|c1|" + p1, "next|10||" + p2},
       StatusCode::kOk,
       2},
      {"an expired continue token restarts the list at a first page",
       {{200, p1}, {410, expired}, {200, r1}, {200, p2}},
       -1,
       {"first|10|c1|" + p1, "first|20|c9|" + r1, "next|10||" + p2},
       StatusCode::kOk,
       4},
      {"the handler's error ends the list (the next page was asked for already)",
       {{200, p1}, {200, p2}},
       0,
       {"first|10|c1|" + p1},
       StatusCode::kInternal,
       2},
      {"an error answer ends the list",
       {{200, p1}, {403, forbidden}},
       -1,
       {"first|10|c1|" + p1},
       StatusCode::kPermissionDenied,
       2},
  };
}

// ListEach hands each page over as it arrives - its JSON, its metadata,
// whether it (re)starts the list - and stops at the first error.
TEST_F(ClientTest, ListEachHandsOverEachPageAsItArrives) {
  for (const ListEachCase& c : ListEachCases()) {
    SCOPED_TRACE(c.name);
    const size_t requests_before = log_.size();
    for (const Reply& r : c.replies) Push(r);
    auto client = MakeClient({}, /*max_attempts=*/1);
    std::vector<std::string> pages;
    Status listed =
        client->ListEach(ResourceRef::Core("pods"), ListOptions{.limit = 1}, [&](ListPage page) {
          pages.push_back(DescribePage(page));
          if (static_cast<int>(pages.size()) - 1 != c.fail_at) {
            return Status::Ok();
          }
          return InternalError("handler failed");
        });
    EXPECT_EQ(listed.code(), c.want_code) << listed;
    EXPECT_EQ(pages, c.want_pages);
    EXPECT_EQ(log_.size() - requests_before, c.want_requests);
    std::lock_guard<std::mutex> lock(mu_);
    replies_.clear();  // what a case did not ask for
  }
}

// The API server encodes the next page while the handler decodes this one:
// the next request is out before the handler returns, so a restart's list of
// 50 000 pods takes the longer of the two sides, not their sum.
TEST_F(ClientTest, ListEachAsksForTheNextPageWhileTheHandlerHoldsThisOne) {
  Push({200, R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[1]})"});
  Push({200, R"({"metadata":{"resourceVersion":"10","continue":"c2"},"items":[2]})"});
  Push({200, R"({"metadata":{"resourceVersion":"10"},"items":[3]})"});
  auto client = MakeClient();
  std::vector<size_t> requests_seen_in_handler;
  Status listed =
      client->ListEach(ResourceRef::Core("pods"), ListOptions{.limit = 1}, [&](ListPage page) {
        const size_t want = requests_seen_in_handler.size() + 2;  // this page's and the next's
        const auto deadline = std::chrono::steady_clock::now() + seconds(10);
        while (!page.meta.continue_token.empty() && log_.size() < want &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(milliseconds(1));
        }
        requests_seen_in_handler.push_back(log_.size());
        return Status::Ok();
      });
  ASSERT_TRUE(listed.ok()) << listed;
  // The last page has no next one to ask for.
  EXPECT_THAT(requests_seen_in_handler, ElementsAre(2, 3, 3));
  std::vector<RecordedRequest> requests = log_.Snapshot();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].Param("continue"), "c1");
  EXPECT_EQ(requests[2].Param("continue"), "c2");
}

// A watch holds its own connection: other calls proceed while it streams,
// and cancelling it returns at once even though the server sends nothing.
class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<LoopbackServer>([this](httplib::Server& s) {
      s.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
        log_.Add(req);
        if (!req.has_param("watch")) {
          res.set_content(R"({"items":[]})", "application/json");
          return;
        }
        res.set_chunked_content_provider("application/json", [this](size_t, httplib::DataSink&) {
          ++held_;
          server_->WaitUntilStopping(std::chrono::seconds(30));
          return false;
        });
      });
    });
    ASSERT_TRUE(server_->Start());
    ClientConfig config;
    config.server = server_->url();
    auto client = Client::New(config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(client).value();
  }
  void TearDown() override { server_->Stop(); }

  RequestLog log_;
  std::atomic<int> held_{0};
  std::unique_ptr<LoopbackServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(StreamTest, WatchDoesNotBlockOtherCallsAndCancelsPromptly) {
  CancelToken cancel;
  Status stream_status;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    stream_status = client_->Stream(
        "/api/v1/pods?watch=1", [](std::string_view) { return true; }, seconds(300), &cancel);
    done = true;
  });
  ASSERT_TRUE(testing::WaitFor([&] { return held_.load() == 1; }));
  StatusOr<std::string> list = client_->List(ResourceRef::Core("pods"));
  EXPECT_TRUE(list.ok()) << list.status();
  EXPECT_FALSE(done.load());
  const auto start = std::chrono::steady_clock::now();
  cancel.Cancel();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
  EXPECT_EQ(stream_status.code(), StatusCode::kCancelled) << stream_status;
}

TEST_F(StreamTest, ShutdownAbortsStreamsAndLaterCalls) {
  Status stream_status;
  std::thread watcher([&] {
    stream_status = client_->Stream(
        "/api/v1/pods?watch=1", [](std::string_view) { return true; }, seconds(300));
  });
  ASSERT_TRUE(testing::WaitFor([&] { return held_.load() == 1; }));
  client_->Shutdown();
  watcher.join();
  EXPECT_EQ(stream_status.code(), StatusCode::kCancelled) << stream_status;
  EXPECT_EQ(client_->List(ResourceRef::Core("pods")).status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace muster::kube
