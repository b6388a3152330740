// The extender server over real loopback HTTP: each verb end to end, the
// wire-level behaviour kube-scheduler relies on (200+Error vs 400, the body
// limit), readiness, metrics, /debug/state, concurrent binds, TLS and the
// Binding POST's retries. Hostile bodies and clients: server_hostile_test.cc.
#include "extender/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "extender/metrics.h"
#include "extender/testing/golden.h"
#include "extender/testing/metrics_text.h"
#include "extender/testing/server_harness.h"
#include "kube/client/client.h"
#include "kube/client/http_transport.h"
#include "kube/codec/extender_types.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using fixture::AddGoldenCluster;
using fixture::FakeBinder;
using fixture::Fixture;
using fixture::Harness;
using fixture::TestOptions;
using test::MakeNode;
using test::MakePod;

TEST(ServerTest, EveryVerbOverHttp) {
  struct Case {
    std::string name;
    std::string verb;
    std::string request;
    std::string golden;
  };
  const std::vector<Case> cases = {
      {"filter, names", "filter", "codec:filter_args_cache.json", "filter_cache_reply.json"},
      {"filter, Node objects", "filter", "codec:filter_args_noncache.json",
       "filter_noncache_reply.json"},
      {"prioritize", "prioritize", "filter_args_v134_cache.json", "prioritize_binpack_reply.json"},
      {"preempt", "preempt", "codec:preempt_args_cache.json", "preempt_cache_reply.json"},
      {"bind", "bind", "codec:bind_args.json", "bind_success_reply.json"},
      {"filter, truncated body: 200 with Error", "filter", "filter_args_truncated.json",
       "filter_error_reply.json"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    AddGoldenCluster(h.cluster);
    httplib::Result res = h.Post(c.verb, Fixture(c.request));
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    fixture::ExpectGolden(res->body, c.golden);
  }
}

// kube-scheduler asks for gzip on every call; a compressed reply would cost
// more than the decision (see NeverCompressVerbReplies), so verbs answer plain.
TEST(ServerTest, VerbRepliesAreNeverCompressed) {
  Harness h;
  AddGoldenCluster(h.cluster);
  for (const std::string verb : {"filter", "prioritize"}) {
    SCOPED_TRACE(verb);
    auto client = h.Client();
    client->set_decompress(false);
    httplib::Result res =
        client->Post(("/scheduler/" + verb).c_str(), httplib::Headers{{"Accept-Encoding", "gzip"}},
                     Fixture("codec:filter_args_cache.json"), "application/json");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Encoding"), "");
    ASSERT_FALSE(res->body.empty());
    EXPECT_EQ(res->body.front(), verb == "filter" ? '{' : '[') << "plain JSON";
  }
}

TEST(ServerTest, BindPostsTheBindingAndReservesTheNode) {
  Harness h;
  AddGoldenCluster(h.cluster);
  const std::string body = Fixture("codec:bind_args.json");
  StatusOr<kube::ExtenderBindingArgs> args = kube::DecodeExtenderBindingArgs(body);
  ASSERT_TRUE(args.ok()) << args.status();
  httplib::Result res = h.Post("bind", body);
  ASSERT_TRUE(res);
  fixture::ExpectSameJson(res->body, R"({"Error":""})");
  const std::vector<Binding> bindings = h.binder.bindings();
  ASSERT_EQ(bindings.size(), 1u);
  EXPECT_EQ(bindings[0].meta.name, "train-0");
  EXPECT_EQ(bindings[0].meta.namespace_, "ml");
  EXPECT_EQ(bindings[0].target_node, args->node);
  EXPECT_EQ(h.cluster.cache.Snapshot({}).FindNode(args->node)->allocated.gpus(),
            h.cluster.cache.Snapshot({}).FindNode(args->node)->allocatable.gpus());
}

// kube-scheduler can bind a pod muster's watch has not delivered yet (it was
// created a moment ago): the server reads it from the API and binds it.
TEST(ServerTest, BindLearnsAPodTheWatchHasNotDeliveredYet) {
  const std::string uid = "0b6f3c1e-1111-4c1a-9d7e-aaaaaaaaaaaa";  // ml/train-0 of bind_args.json
  const Pod api_pod = test::MakePod("train-0").Namespace("ml").Uid(uid).Gpu(8);
  struct Case {
    std::string name;
    std::optional<Pod> in_api;  // what the API server has under ml/train-0
    std::string want_error;     // "" = bound
  };
  Pod recreated = api_pod;
  recreated.meta.uid = "another-incarnation";
  const std::vector<Case> cases = {
      {"the API has it: bound", api_pod, ""},
      {"the API has another pod of that name", recreated, "not in cache yet"},
      {"the API has none", std::nullopt, "not in cache yet"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    AddGoldenCluster(h.cluster);
    h.cluster.cache.DeletePod(uid);  // not watched yet
    if (c.in_api) h.binder.AddApiPod(*c.in_api);
    httplib::Result res = h.Post("bind", Fixture("codec:bind_args.json"));
    ASSERT_TRUE(res);
    if (c.want_error.empty()) {
      fixture::ExpectSameJson(res->body, R"({"Error":""})");
      ASSERT_EQ(h.binder.bindings().size(), 1u);
      EXPECT_EQ(h.cluster.cache.Snapshot({}).FindNode("gpu-a1")->allocated.gpus(), 8)
          << "the learned pod's GPUs are reserved";
    } else {
      EXPECT_NE(res->body.find(c.want_error), std::string::npos) << res->body;
      EXPECT_TRUE(h.binder.bindings().empty());
    }
  }
}

TEST(ServerTest, AFailedBindingPostIsAnErrorAndFreesTheReservation) {
  Harness h;
  AddGoldenCluster(h.cluster);
  h.binder.Answer(Status(StatusCode::kNotFound, "pods \"train-0\" not found"));
  const std::string body = Fixture("codec:bind_args.json");
  httplib::Result res = h.Post("bind", body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << "bind faults travel in Error";
  StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(res->body);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->error.find("NotFound: pods \"train-0\" not found"), std::string::npos)
      << result->error;
  const auto samples = fixture::ParseMetricsText(h.metrics.Text());
  EXPECT_EQ(fixture::FindSample(samples, "muster_extender_bind_failures_total",
                                {{"reason", "api_error"}}),
            1.0);
  StatusOr<kube::ExtenderBindingArgs> args = kube::DecodeExtenderBindingArgs(body);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(h.cluster.cache.Snapshot({}).FindNode(args->node)->assumed_pods, 0);
}

TEST(ServerTest, BodiesThatDoNotDecode) {
  struct Case {
    std::string verb;
    int want_status;
    std::string want_prefix;  // of the body (prioritize, preempt) or of Error (bind)
  };
  const std::vector<Case> cases = {
      {"bind", 200, "muster: decode ExtenderBindingArgs: invalid JSON at offset"},
      {"prioritize", 400, "muster: decode ExtenderArgs: invalid JSON at offset"},
      {"preempt", 400, "muster: decode ExtenderPreemptionArgs: invalid JSON at offset"},
  };
  Harness h;
  const std::string truncated = fixture::ReadTestdata("filter_args_truncated.json");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.verb);
    httplib::Result res = h.Post(c.verb, truncated);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.want_status);
    std::string text = res->body;
    if (c.verb == "bind") {
      StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(res->body);
      ASSERT_TRUE(result.ok()) << res->body;
      text = result->error;
    }
    EXPECT_TRUE(text.starts_with(c.want_prefix)) << text;
  }
  httplib::Result health = h.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << "still serving";
}

TEST(ServerTest, BodyLimit) {
  ServerOptions options = TestOptions();
  options.max_body_bytes = 4096;
  Harness h(options);
  struct Case {
    std::string name;
    size_t size;
    int want_status;
  };
  const std::vector<Case> cases = {
      {"at the limit: decoded (and rejected as JSON)", 4096, 400},
      {"over the limit", 4097, 413},
      {"far over the limit", 1 << 20, 413},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    httplib::Result res = h.Post("prioritize", std::string(c.size, ' '));
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, c.want_status);
    if (c.want_status == 413) {
      EXPECT_EQ(res->body, "request body exceeds the limit of 4096 bytes\n");
    }
  }
}

TEST(ServerTest, ReadyOnlyOnceSynced) {
  Harness h;
  h.ready = false;
  httplib::Result before = h.Get("/readyz");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, 503);
  h.ready = true;
  httplib::Result after = h.Get("/readyz");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  httplib::Result health = h.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  httplib::Result missing = h.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(ServerTest, MetricsCountTheVerbs) {
  Harness h;
  AddGoldenCluster(h.cluster);
  const std::string args = Fixture("codec:filter_args_cache.json");
  ASSERT_TRUE(h.Post("filter", args));
  ASSERT_TRUE(h.Post("filter", args));
  ASSERT_TRUE(h.Post("prioritize", args));
  ASSERT_TRUE(h.Post("preempt", "{"));
  httplib::Result res = h.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(res->get_header_value("Content-Type").starts_with("text/plain; version=0.0.4"));
  const auto samples = fixture::ParseMetricsText(res->body);
  const std::string requests = "muster_extender_requests_total";
  EXPECT_EQ(fixture::FindSample(samples, requests, {{"verb", "filter"}, {"result", "ok"}}), 2.0);
  EXPECT_EQ(fixture::FindSample(samples, requests, {{"verb", "prioritize"}, {"result", "ok"}}),
            1.0);
  EXPECT_EQ(
      fixture::FindSample(samples, requests, {{"verb", "preempt"}, {"result", "bad_request"}}),
      1.0);
  EXPECT_EQ(fixture::FindSample(samples, "muster_extender_request_duration_seconds_count",
                                {{"verb", "filter"}}),
            2.0);
  const std::optional<double> fits = fixture::FindSample(samples, "muster_extender_decisions_total",
                                                         {{"verb", "filter"}, {"reason", "fits"}});
  ASSERT_TRUE(fits.has_value());
  EXPECT_GT(*fits, 0);
}

TEST(ServerTest, DebugStateShowsTheCache) {
  Harness h;
  AddGoldenCluster(h.cluster);
  h.cluster.cache.UpsertPodGroup(test::MakePodGroup("train").Namespace("ml").MinMember(4));
  h.cluster.cache.UpsertQueue(test::MakeQueue("research").Weight(3).State("Open"));
  ASSERT_TRUE(h.Post("bind", Fixture("codec:bind_args.json")));
  httplib::Result res = h.Get("/debug/state");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  rapidjson::Document doc;
  doc.Parse(res->body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << res->body;
  EXPECT_EQ(doc["knownNodes"].GetInt64(), 5);
  EXPECT_EQ(doc["reservations"].GetInt64(), 1);
  std::map<std::string, const rapidjson::Value*> nodes;
  for (const auto& n : doc["nodes"].GetArray()) nodes[n["name"].GetString()] = &n;
  ASSERT_EQ(nodes.count("gpu-a2"), 1u) << res->body;
  const rapidjson::Value& a2 = *nodes["gpu-a2"];
  // Amounts in muster's units: GPUs in thousandths.
  EXPECT_EQ(a2["allocatable"]["nvidia.com/gpu"].GetInt64(), 8 * kMilliPerGpu);
  EXPECT_EQ(a2["allocated"]["nvidia.com/gpu"].GetInt64(), 4 * kMilliPerGpu);
  EXPECT_EQ(a2["free"]["nvidia.com/gpu"].GetInt64(), 4 * kMilliPerGpu);
  EXPECT_EQ(a2["boundPods"].GetInt64(), 1);
  int64_t assumed = 0;
  for (const auto& [name, node] : nodes) assumed += (*node)["assumedPods"].GetInt64();
  EXPECT_EQ(assumed, 1) << "the bind's reservation";
  std::map<std::string, const rapidjson::Value*> groups;
  for (const auto& g : doc["podGroups"].GetArray()) groups[g["name"].GetString()] = &g;
  ASSERT_EQ(groups.count("ml/train"), 1u) << res->body;
  EXPECT_EQ((*groups["ml/train"])["minMember"].GetInt64(), 4);
  EXPECT_EQ(std::string((*groups["ml/train"])["queue"].GetString()), "default");
  EXPECT_TRUE(doc["gangs"].IsArray()) << "no gang controller here: an empty list";
  ASSERT_EQ(doc["queues"].Size(), 1u);
  EXPECT_EQ(std::string(doc["queues"][0]["name"].GetString()), "research");
  EXPECT_EQ(doc["queues"][0]["weight"].GetInt64(), 3);
}

// What the watches delivered and muster cannot decode is listed, with the
// JSON path of the first bad field, so an operator finds it from one place.
TEST(ServerTest, DebugStateListsTheObjectsThatDoNotDecode) {
  fixture::TestCluster cluster;
  ExtenderMetrics metrics;
  FakeBinder binder{&cluster.cache};
  const std::vector<UndecodableEntry> entries = {
      {"podgroups", "ml/bad", R"(spec.minResources["nvidia.com/gpu"]: quantity "lots" ...)",
       "bad_spec"},
      {"queues", "negative", R"(spec.capability.cpu: quantity "-1" of cpu is negative)",
       "bad_spec"}};
  Server server(TestOptions(), ServerDeps{.pipeline = &cluster.pipeline,
                                          .binder = &binder,
                                          .metrics = &metrics,
                                          .cluster = &cluster.cache,
                                          .undecodable = [&] { return entries; }});
  ASSERT_TRUE(server.Start().ok());
  httplib::Client client("127.0.0.1", server.port());
  httplib::Result res = client.Get("/debug/state");
  ASSERT_TRUE(res);
  rapidjson::Document doc;
  doc.Parse(res->body.c_str());
  ASSERT_FALSE(doc.HasParseError()) << res->body;
  ASSERT_TRUE(doc["undecodable"].IsArray()) << res->body;
  ASSERT_EQ(doc["undecodable"].Size(), 2u);
  const rapidjson::Value& first = doc["undecodable"][0];
  EXPECT_EQ(std::string(first["kind"].GetString()), "podgroups");
  EXPECT_EQ(std::string(first["key"].GetString()), "ml/bad");
  EXPECT_EQ(std::string(first["problem"].GetString()), entries[0].problem);
  EXPECT_EQ(std::string(first["reason"].GetString()), "bad_spec");
  EXPECT_EQ(std::string(doc["undecodable"][1]["key"].GetString()), "negative");
  server.Stop();
  // Without the dependency: an empty list.
  Harness h;
  res = h.Get("/debug/state");
  ASSERT_TRUE(res);
  doc.Parse(res->body.c_str());
  ASSERT_TRUE(doc["undecodable"].IsArray()) << res->body;
  EXPECT_EQ(doc["undecodable"].Size(), 0u);
}

// 32 binds of 2-GPU pods race over parallel connections for one 8-GPU node:
// exactly 4 succeed, and no POST ever sees the node past 8 GPUs. Fewer
// workers than connections: queued connections must wait, not be dropped.
TEST(ServerTest, ConcurrentBindsNeverOvercommit) {
  ServerOptions options = TestOptions();
  options.threads = 4;
  Harness h(options);
  h.cluster.Add(MakeNode("n1").Gpu(8));
  constexpr int kPods = 32;
  for (int i = 0; i < kPods; ++i) h.cluster.Add(MakePod("p" + std::to_string(i)).Gpu(2));
  std::atomic<int> bound{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kPods; ++i) {
    threads.emplace_back([&, i] {
      const std::string name = "p" + std::to_string(i);
      httplib::Result res =
          h.Post("bind", kube::EncodeExtenderBindingArgs({.pod_name = name,
                                                          .pod_namespace = "default",
                                                          .pod_uid = "uid-" + name,
                                                          .node = "n1"}));
      if (!res || res->status != 200) {
        ADD_FAILURE() << name << ": "
                      << (res ? std::to_string(res->status) : httplib::to_string(res.error()));
        return;
      }
      StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(res->body);
      if (!result.ok()) return;
      ++(result->error.empty() ? bound : refused);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bound, 4);
  EXPECT_EQ(refused, kPods - 4);
  EXPECT_EQ(h.binder.bindings().size(), 4u) << "a Binding for every success, none other";
  EXPECT_FALSE(h.binder.overcommitted());
  EXPECT_EQ(h.cluster.cache.Snapshot({}).FindNode("n1")->allocated.gpus(), 8);
}

// A gang's members reach bind one scheduling cycle apart; no Binding is
// POSTed until the last reserved member has arrived, then all of them are
// (the bind barrier, bind_barrier.h).
TEST(ServerTest, AGangsBindingsArePostedOnlyOnceEveryReservedMemberReachedBind) {
  Harness h;
  h.cluster.Add(MakeNode("n1").Gpu(8));
  h.cluster.Add(test::MakePodGroup("train").Namespace("ml").MinMember(3));
  const Resources two_gpus = test::Res({{"nvidia.com/gpu", "2"}});
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    h.cluster.Add(MakePod("train-" + n).Namespace("ml").Uid("u" + n).Gpu(2).Group("train"));
    h.cluster.With([&](ClusterState& s) { s.Assume("u" + n, "n1", two_gpus); });
  }
  const auto bind = [&h](int i) {
    const std::string n = std::to_string(i);
    httplib::Result res = h.Post(
        "bind",
        kube::EncodeExtenderBindingArgs(
            {.pod_name = "train-" + n, .pod_namespace = "ml", .pod_uid = "u" + n, .node = "n1"}));
    EXPECT_TRUE(res && res->status == 200 && res->body == R"({"Error":""})")
        << (res ? res->body : httplib::to_string(res.error()));
  };
  std::thread first(bind, 0);
  std::thread second(bind, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(h.binder.bindings().empty()) << "train-2 has not reached bind yet";
  bind(2);
  first.join();
  second.join();
  EXPECT_EQ(h.binder.bindings().size(), 3u);
  EXPECT_EQ(fixture::FindSample(fixture::ParseMetricsText(h.metrics.Text()),
                                "muster_gang_bind_holds_total", {{"release", "all_arrived"}}),
            3);
}

// extender/testdata/tls/README.md describes the certificates.
std::string TlsFile(const std::string& name) {
  return std::string(MUSTER_TESTDATA_DIR) + "/tls/" + name;
}

TEST(ServerTest, TlsWithOptionalClientCertificates) {
  struct Case {
    std::string name;
    bool require_client_cert;
    std::string client;  // "" for none, else <client>.pem + <client>-key.pem
    bool want_served;
  };
  const std::vector<Case> cases = {
      {"TLS, no client certificate", false, "", true},
      {"mTLS, a client certificate from the CA", true, "client", true},
      {"mTLS, no client certificate", true, "", false},
      {"mTLS, a certificate no CA vouches for", true, "rogue", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ServerOptions options = TestOptions();
    options.tls_cert_path = TlsFile("server.pem");
    options.tls_key_path = TlsFile("server-key.pem");
    if (c.require_client_cert) options.client_ca_path = TlsFile("ca.pem");
    Harness h(options);
    std::unique_ptr<httplib::SSLClient> client =
        c.client.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", h.server->port())
                         : std::make_unique<httplib::SSLClient>("127.0.0.1", h.server->port(),
                                                                TlsFile(c.client + ".pem"),
                                                                TlsFile(c.client + "-key.pem"));
    client->set_ca_cert_path(TlsFile("ca.pem").c_str());
    client->enable_server_certificate_verification(true);
    httplib::Result res = client->Get("/healthz");
    EXPECT_EQ(res && res->status == 200, c.want_served)
        << (res ? std::to_string(res->status) : httplib::to_string(res.error()));
  }
}

TEST(ServerTest, StartRejectsBadOptions) {
  Harness first;
  struct Case {
    std::string name;
    ServerOptions options;
    StatusCode want;
  };
  ServerOptions bad_prefix = TestOptions();
  bad_prefix.prefix = "scheduler";
  ServerOptions missing_cert = TestOptions();
  missing_cert.tls_cert_path = "/nonexistent/cert.pem";
  missing_cert.tls_key_path = "/nonexistent/key.pem";
  ServerOptions half_tls = TestOptions();
  half_tls.tls_cert_path = "/nonexistent/cert.pem";
  ServerOptions taken = TestOptions();
  taken.port = first.server->port();
  const std::vector<Case> cases = {
      {"prefix without '/'", bad_prefix, StatusCode::kInvalidArgument},
      {"TLS files that do not load", missing_cert, StatusCode::kInvalidArgument},
      {"a certificate without its key", half_tls, StatusCode::kInvalidArgument},
      {"a port in use", taken, StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fixture::TestCluster cluster;
    ExtenderMetrics metrics;
    FakeBinder binder(&cluster.cache);
    Server server(c.options, {.pipeline = &cluster.pipeline,
                              .binder = &binder,
                              .metrics = &metrics,
                              .cluster = &cluster.cache});
    EXPECT_EQ(server.Start().code(), c.want);
  }
}

// Answers POSTs from a script (its last answer repeats) and records them.
class ScriptedTransport final : public kube::HttpTransport {
 public:
  explicit ScriptedTransport(std::vector<int> statuses) : statuses_(std::move(statuses)) {}
  StatusOr<kube::HttpResponse> Send(const kube::HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request.method + " " + request.target);
    const int status = statuses_[std::min(requests_.size(), statuses_.size()) - 1];
    return kube::HttpResponse{.status = status, .body = "{}"};
  }
  Status Stream(const kube::HttpRequest&, const kube::ChunkHandler&, int*) override {
    return Status(StatusCode::kUnimplemented, "no streams here");
  }
  void Cancel() override {}
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  const std::vector<int> statuses_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

TEST(KubeBinderTest, RetriesTransientFailuresWithinTheDeadline) {
  struct Case {
    std::string name;
    std::vector<int> statuses;
    StatusCode want;
    size_t min_posts;
    size_t max_posts;
  };
  const std::vector<Case> cases = {
      {"created at once", {201}, StatusCode::kOk, 1, 1},
      {"503 then created", {503, 201}, StatusCode::kOk, 2, 2},
      {"500 twice then created", {500, 500, 201}, StatusCode::kOk, 3, 3},
      {"404 is final", {404}, StatusCode::kNotFound, 1, 1},
      {"409 is final (FinishBind reads it)", {409}, StatusCode::kConflict, 1, 1},
      // Backoffs of 1+2+4+8+16 ms fit in 40 ms, 32 more do not: at most 6 tries.
      {"503 until the deadline", {503}, StatusCode::kUnavailable, 2, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto transport = std::make_shared<ScriptedTransport>(c.statuses);
    kube::ClientOptions client_options;
    client_options.retry.max_attempts = 1;  // the binder's own retries only
    kube::Client client(transport, kube::ClientConfig{}, client_options);
    KubeBinder binder(&client, {.deadline = std::chrono::milliseconds(40),
                                .initial_backoff = std::chrono::milliseconds(1)});
    Binding binding;
    binding.meta.name = "train-0";
    binding.meta.namespace_ = "ml";
    binding.target_node = "gpu-a1";
    EXPECT_EQ(binder.Bind(binding).code(), c.want);
    const std::vector<std::string> posts = transport->requests();
    EXPECT_GE(posts.size(), c.min_posts);
    EXPECT_LE(posts.size(), c.max_posts);
    for (const std::string& post : posts) {
      EXPECT_TRUE(post.starts_with("POST /api/v1/namespaces/ml/pods/train-0/binding")) << post;
    }
  }
}

TEST(BindRetryableTest, OnlyTransientFailures) {
  struct Case {
    std::string name;
    Status post;
    bool want;
  };
  const std::vector<Case> cases = {
      {"5xx", Status(StatusCode::kUnavailable, "503"), true},
      {"500", Status(StatusCode::kInternal, "500"), true},
      {"timeout", Status(StatusCode::kDeadlineExceeded, "timeout"), true},
      {"429", Status(StatusCode::kResourceExhausted, "429"), true},
      {"409", Status(StatusCode::kConflict, "already assigned"), false},
      {"404", Status(StatusCode::kNotFound, "gone"), false},
      {"403", Status(StatusCode::kPermissionDenied, "forbidden"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(BindRetryable(c.post), c.want);
  }
}

}  // namespace
}  // namespace muster::extender
