#include "extender/pod_webhook.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <optional>
#include <string>
#include <vector>

#include "extender/testing/metrics_text.h"
#include "kube/client/pem.h"
#include "kube/codec/admission_codec.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakePod;

const std::vector<std::string> kVolcano = {"volcano"};

kube::AdmissionRequest Create(const Pod& pod) {
  return {.uid = "req-1", .kind = "Pod", .operation = "CREATE", .namespace_ = "ml", .pod = pod};
}

TEST(AdmitPodTest, WhichPodsAreGatedAtCreation) {
  struct Case {
    std::string name;
    kube::AdmissionRequest request;
    bool gate;
    std::string why;
  };
  const Pod member = MakePod("train-0").Namespace("ml").SchedulerName("volcano").Group("train");
  kube::AdmissionRequest update = Create(member);
  update.operation = "UPDATE";
  const std::vector<Case> cases = {
      {"a Volcano PodGroup member of the volcano scheduler", Create(member), true,
       "member of PodGroup train"},
      {"another scheduler's member",
       Create(MakePod("p").SchedulerName("default-scheduler").Group("train")), false,
       "scheduler \"default-scheduler\" is not muster's"},
      {"a plain volcano pod", Create(MakePod("p").SchedulerName("volcano")), false,
       "names no Volcano PodGroup"},
      {"a member bound at creation",
       Create(MakePod("p").SchedulerName("volcano").Group("train").NodeName("n1")), false,
       "bound at creation to n1"},
      {"a member gated already (muster's reconciler)",
       Create(MakePod("p").SchedulerName("volcano").Group("train").Gate("muster.io/gang")), false,
       "gated already"},
      {"a member of Kubernetes' own PodGroup too",
       Create(MakePod("p").SchedulerName("volcano").Group("train").SchedulingGroup("train")), false,
       "joins Kubernetes' PodGroup"},
      {"an update", update, false, "not a pod being created"},
      {"not a pod",
       {.uid = "u", .kind = "Deployment", .operation = "CREATE"},
       false,
       "not a pod being created"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PodAdmission admission = AdmitPod(c.request, kVolcano);
    EXPECT_EQ(admission.gate, c.gate);
    EXPECT_EQ(admission.why, c.why);
  }
}

TEST(AdmitPodTest, TheGateIsAddedAfterTheGatesThePodHas) {
  const Pod pod = MakePod("p").SchedulerName("volcano").Group("train").Gate("example.com/quota");
  const kube::AdmissionResponse reply = AdmissionReply(Create(pod), {.gate = true});
  EXPECT_EQ(reply.uid, "req-1");
  EXPECT_TRUE(reply.allowed);
  StatusOr<std::string> patch = kube::DecodeBase64(reply.patch_base64);
  ASSERT_TRUE(patch.ok()) << patch.status();
  EXPECT_EQ(*patch, R"([{"op":"add","path":"/spec/schedulingGates","value":)"
                    R"([{"name":"example.com/quota"},{"name":"muster.io/gang"}]}])");
  EXPECT_EQ(AdmissionReply(Create(pod), {.gate = false}).patch_base64, "")
      << "a passed pod is allowed unchanged";
}

// extender/testdata/tls/README.md describes the certificates.
std::string TlsFile(const std::string& name) {
  return std::string(MUSTER_TESTDATA_DIR) + "/tls/" + name;
}

// The webhook over HTTPS, as the API server calls it: a review in, a review
// out; a body that is not a review gets 400 (the failure policy decides).
TEST(PodWebhookTest, AnswersReviewsOverTls) {
  ExtenderMetrics metrics;
  PodWebhook webhook({.listen_address = "127.0.0.1",
                      .cert_path = TlsFile("server.pem"),
                      .key_path = TlsFile("server-key.pem")},
                     kVolcano, &metrics);
  ASSERT_TRUE(webhook.Start().ok());
  httplib::SSLClient client("127.0.0.1", webhook.port());
  client.set_ca_cert_path(TlsFile("ca.pem").c_str());
  client.enable_server_certificate_verification(true);
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"r1",)"
      R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"ml",)"
      R"("object":{"metadata":{"name":"a-0","annotations":{"scheduling.k8s.io/group-name":"a"}},)"
      R"("spec":{"schedulerName":"volcano","containers":[{"name":"c"}]}}}})";
  httplib::Result res = client.Post("/mutate-pods", review, "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find(R"("uid":"r1","allowed":true,"patchType":"JSONPatch")"),
            std::string::npos)
      << res->body;
  httplib::Result bad = client.Post("/mutate-pods", "{", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  const auto samples = fixture::ParseMetricsText(metrics.Text());
  EXPECT_EQ(fixture::FindSample(samples, "muster_webhook_pods_total", {{"outcome", "gated"}}), 1);
  EXPECT_EQ(fixture::FindSample(samples, "muster_webhook_pods_total", {{"outcome", "bad_request"}}),
            1);
}

TEST(PodWebhookTest, ACertificateThatDoesNotLoadIsReported) {
  ExtenderMetrics metrics;
  PodWebhook webhook({.cert_path = "/nonexistent.pem", .key_path = "/nonexistent-key.pem"},
                     kVolcano, &metrics);
  const Status started = webhook.Start();
  EXPECT_EQ(started.code(), StatusCode::kInvalidArgument) << started;
}

}  // namespace
}  // namespace muster::extender
