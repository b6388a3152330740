// FetchThroughProxy: which replica `muster why` reads muster's view from,
// through the API server's pod proxy (the path a user without --muster-url
// takes; the e2e cluster runs muster as processes, not pods, so it is
// covered here).
#include "cmd/cli/muster_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/http_transport.h"

namespace muster::cli {
namespace {

using ::testing::HasSubstr;

// An API server that answers GETs by path from a table (404 otherwise) and
// records what was asked.
class TableApi final : public kube::HttpTransport {
 public:
  explicit TableApi(std::map<std::string, kube::HttpResponse> answers)
      : answers_(std::move(answers)) {}
  StatusOr<kube::HttpResponse> Send(const kube::HttpRequest& request) override {
    const std::string path = request.target.substr(0, request.target.find('?'));
    asked.push_back(path);
    auto it = answers_.find(path);
    if (it != answers_.end()) return it->second;
    return kube::HttpResponse{.status = 404, .body = R"({"kind":"Status","code":404})"};
  }
  Status Stream(const kube::HttpRequest&, const kube::ChunkHandler&, int*) override {
    return Status(StatusCode::kUnimplemented, "no watch here");
  }
  void Cancel() override {}
  std::vector<std::string> asked;

 private:
  std::map<std::string, kube::HttpResponse> answers_;
};

constexpr char kPods[] = "/api/v1/namespaces/muster-system/pods";

std::string PodList(const std::vector<std::string>& names) {
  std::string items;
  for (const std::string& n : names) {
    if (!items.empty()) items += ",";
    items += R"({"metadata":{"name":")" + n + R"(","namespace":"muster-system"},"spec":{}})";
  }
  return R"({"kind":"PodList","metadata":{},"items":[)" + items + "]}";
}

std::string Proxy(const std::string& pod, const std::string& what) {
  return std::string(kPods) + "/" + pod + "%3A8080/proxy/" + what;
}

kube::HttpResponse Ok(std::string body) { return {.status = 200, .body = std::move(body)}; }

struct Case {
  std::string name;
  std::vector<std::string> pods;
  std::map<std::string, std::string> readyz;  // pod -> body; absent: 503
  std::string want_state_from;                // "" : an error is expected
};

TEST(FetchThroughProxyTest, AsksTheLeaderElseAReadyReplica) {
  const std::vector<Case> cases = {
      {"the leader, listed second",
       {"v-a", "v-b"},
       {{"v-a", "ok (standby)\n"}, {"v-b", "ok (leader)\n"}},
       "v-b"},
      {"no election: the first ready", {"v-a", "v-b"}, {{"v-a", "ok\n"}, {"v-b", "ok\n"}}, "v-a"},
      {"a replica not ready is skipped", {"v-a", "v-b"}, {{"v-b", "ok (standby)\n"}}, "v-b"},
      {"none ready", {"v-a"}, {}, ""},
      {"no muster pod", {}, {}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::map<std::string, kube::HttpResponse> answers = {{kPods, Ok(PodList(c.pods))}};
    for (const std::string& pod : c.pods) {
      auto r = c.readyz.find(pod);
      answers[Proxy(pod, "readyz")] = r == c.readyz.end()
                                          ? kube::HttpResponse{.status = 503, .body = "not synced"}
                                          : Ok(r->second);
      answers[Proxy(pod, "debug/state")] = Ok(R"({"from":")" + pod + R"("})");
    }
    auto api = std::make_shared<TableApi>(answers);
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    kube::Client client(api, kube::ClientConfig{}, options);
    StatusOr<std::string> state = FetchThroughProxy(client, "muster-system", "8080");
    if (c.want_state_from.empty()) {
      ASSERT_FALSE(state.ok());
      EXPECT_EQ(state.status().code(), StatusCode::kUnavailable);
      EXPECT_THAT(state.status().message(), HasSubstr("--muster-url"));
      continue;
    }
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(*state, R"({"from":")" + c.want_state_from + R"("})");
  }
}

}  // namespace
}  // namespace muster::cli
