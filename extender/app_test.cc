#include "extender/app.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::extender {
namespace {

TEST(ParseExtenderFlagsTest, ErrorsNameTheFlag) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string want;  // a substring of the error
  };
  const std::vector<Case> cases = {
      {"unknown flag", {"--frobnicate", "1"}, "unknown flag --frobnicate"},
      {"missing value", {"--port"}, "flag --port: needs a value"},
      {"port not a number", {"--port", "http"}, "flag --port: \"http\" is not an integer"},
      {"port out of range",
       {"--port=70000"},
       "flag --port: \"70000\" is not an integer in [1, 65535]"},
      {"port with junk", {"--port", "80x"}, "flag --port"},
      {"metrics port out of range",
       {"--metrics-port=65536"},
       "flag --metrics-port: \"65536\" is not an integer in [0, 65535]"},
      {"body limit zero", {"--max-body-bytes", "0"}, "flag --max-body-bytes"},
      {"qps zero", {"--kube-api-qps=0"}, "flag --kube-api-qps"},
      {"burst not a number", {"--kube-api-burst", "lots"}, "flag --kube-api-burst"},
      {"body limit negative", {"--max-body-bytes=-5"}, "flag --max-body-bytes"},
      {"score mode",
       {"--score-mode", "random"},
       "flag --score-mode: \"random\" is not binpack or spread"},
      {"empty resource", {"--managed-resource="}, "flag --managed-resource: empty resource name"},
      {"cert without key", {"--tls-cert", "c.pem"}, "flag --tls-key"},
      {"key without cert", {"--tls-key", "k.pem"}, "flag --tls-cert"},
      {"client CA without TLS", {"--client-ca", "ca.pem"}, "flag --client-ca: needs --tls-cert"},
      {"relative prefix",
       {"--prefix", "scheduler"},
       "flag --prefix: prefix \"scheduler\" must start with '/'"},
      {"prefix with a regex", {"--prefix", "/a(b)"}, "flag --prefix"},
      {"positional", {"serve"}, "unexpected argument \"serve\""},
      {"lease without namespace", {"--leader-lease=x"}, "flag --leader-lease"},
      {"follow deadline not above the retry period",
       {"--leader-elect=true", "--leader-renew-deadline=1s"},
       "retry period must be shorter than the renew deadline"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<ExtenderFlags> flags = ParseExtenderFlags(c.args);
    ASSERT_FALSE(flags.ok());
    EXPECT_EQ(flags.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(flags.status().message().find(c.want), std::string::npos) << flags.status();
  }
}

// The extender elects nothing itself: with --leader-elect it follows
// kube-scheduler's Lease, as the pod whose name is its hostname.
TEST(ParseExtenderFlagsTest, LeaderElectionFollowsKubeSchedulersLease) {
  StatusOr<ExtenderFlags> flags = ParseExtenderFlags({});
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(flags->leader.enabled);
  flags = ParseExtenderFlags({"--leader-elect=true"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->leader.election.mode, kube::LeaderMode::kFollow);
  EXPECT_EQ(kube::LeaseKey(flags->leader.election), "muster-system/volcano-scheduler");
  EXPECT_FALSE(flags->leader.election.identity.empty());
  EXPECT_EQ(flags->leader.election.identity.find('_'), std::string::npos)
      << "the bare pod name, which kube-scheduler's identity starts with";
  flags = ParseExtenderFlags({"--leader-elect=true", "--leader-identity=volcano-scheduler-abc12",
                              "--leader-lease=ops/sched"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->leader.election.identity, "volcano-scheduler-abc12");
  EXPECT_EQ(kube::LeaseKey(flags->leader.election), "ops/sched");
}

TEST(ParseExtenderFlagsTest, DefaultsAndValues) {
  StatusOr<ExtenderFlags> defaults = ParseExtenderFlags({});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->server.listen_address, "127.0.0.1");
  EXPECT_EQ(defaults->server.prefix, "/scheduler");
  EXPECT_EQ(defaults->server.max_body_bytes, size_t{16} << 20);
  EXPECT_EQ(defaults->policy.score_strategy, ScoreStrategy::kBinpack);
  EXPECT_EQ(defaults->kube_api_qps, 50);
  EXPECT_EQ(defaults->kube_api_burst, 100);
  EXPECT_FALSE(defaults->help);
  EXPECT_EQ(defaults->metrics_port, 0) << "no second listener unless asked";

  StatusOr<ExtenderFlags> flags = ParseExtenderFlags({"--listen",
                                                      "0.0.0.0",
                                                      "--port=9443",
                                                      "--prefix",
                                                      "/muster/",
                                                      "--kubeconfig",
                                                      "/k.yaml",
                                                      "--tls-cert",
                                                      "c.pem",
                                                      "--tls-key=k.pem",
                                                      "--client-ca",
                                                      "ca.pem",
                                                      "--max-body-bytes",
                                                      "1024",
                                                      "--managed-resource",
                                                      "rdma/hca",
                                                      "--managed-resource=example.com/fpga",
                                                      "--score-mode",
                                                      "spread",
                                                      "--kube-api-qps=500",
                                                      "--kube-api-burst",
                                                      "1000",
                                                      "--metrics-listen=10.0.0.5",
                                                      "--metrics-port",
                                                      "8080"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->server.listen_address, "0.0.0.0");
  EXPECT_EQ(flags->server.port, 9443);
  EXPECT_EQ(flags->server.prefix, "/muster/");
  EXPECT_EQ(flags->kubeconfig, "/k.yaml");
  EXPECT_EQ(flags->server.tls_cert_path, "c.pem");
  EXPECT_EQ(flags->server.tls_key_path, "k.pem");
  EXPECT_EQ(flags->server.client_ca_path, "ca.pem");
  EXPECT_EQ(flags->server.max_body_bytes, 1024u);
  EXPECT_EQ(flags->policy.extra_managed_resources,
            (std::vector<std::string>{"rdma/hca", "example.com/fpga"}));
  EXPECT_EQ(flags->policy.score_strategy, ScoreStrategy::kSpread);
  EXPECT_EQ(flags->kube_api_qps, 500);
  EXPECT_EQ(flags->kube_api_burst, 1000);
  EXPECT_EQ(flags->metrics_listen, "10.0.0.5");
  EXPECT_EQ(flags->metrics_port, 8080);
}

TEST(RunExtenderTest, BadFlagsExitTwoAndHelpExitsZero) {
  EXPECT_EQ(RunExtender({"--port", "x"}), 2);
  EXPECT_EQ(RunExtender({"--help"}), 0);
}

}  // namespace
}  // namespace muster::extender
