#include "kube/codec/admission_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using codec_test::ReadTestdata;

// A pod CREATE as kube-apiserver 1.37 sends it to a mutating webhook.
TEST(AdmissionCodecTest, DecodesAPodCreate) {
  StatusOr<AdmissionRequest> request =
      DecodeAdmissionReview(ReadTestdata("admission_review_pod_create.json"));
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(request->kind, "Pod");
  EXPECT_EQ(request->operation, "CREATE");
  EXPECT_EQ(request->namespace_, "ml");
  EXPECT_FALSE(request->dry_run);
  ASSERT_TRUE(request->pod.has_value());
  EXPECT_EQ(request->pod->spec.scheduler_name, "volcano");
  EXPECT_EQ(request->pod->GroupName(), "train");
  EXPECT_EQ(request->pod->spec.scheduling_gates, (std::vector<std::string>{"example.com/quota"}));
}

TEST(AdmissionCodecTest, RequestsThatAreNotAboutPods) {
  struct Case {
    std::string name, json;
    std::string want_error;  // "" for success
  };
  const std::vector<Case> cases = {
      {"another kind: no pod decoded",
       R"({"request":{"uid":"u","kind":{"group":"apps","kind":"Deployment"},"object":{"spec":3}}})",
       ""},
      {"a pod without an object (a DELETE)",
       R"({"request":{"uid":"u","kind":{"group":"","kind":"Pod"},"operation":"DELETE"}})", ""},
      {"no request", R"({"kind":"AdmissionReview"})", "decode AdmissionReview: request: missing"},
      {"a request that is not an object", R"({"request":[1]})",
       "decode AdmissionReview: request: expected an object, got an array"},
      {"a pod object of the wrong shape",
       R"({"request":{"uid":"u","kind":{"kind":"Pod"},"object":{"spec":{"schedulerName":7}}}})",
       "decode AdmissionReview: request.object.spec.schedulerName: expected a string, got a "
       "number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<AdmissionRequest> request = DecodeAdmissionReview(c.json);
    if (c.want_error.empty()) {
      ASSERT_TRUE(request.ok()) << request.status();
      EXPECT_FALSE(request->pod.has_value());
    } else {
      ASSERT_FALSE(request.ok());
      EXPECT_EQ(request.status().message(), c.want_error);
    }
  }
}

TEST(AdmissionCodecTest, EncodesTheReply) {
  EXPECT_EQ(EncodeAdmissionReview({.uid = "u1", .patch_base64 = "W10="}),
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
            R"("response":{"uid":"u1","allowed":true,"patchType":"JSONPatch","patch":"W10="}})");
  EXPECT_EQ(EncodeAdmissionReview({.uid = "u2"}),
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
            R"("response":{"uid":"u2","allowed":true}})");
  EXPECT_EQ(EncodeAdmissionReview({.uid = "u3", .allowed = false, .message = "no"}),
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
            R"("response":{"uid":"u3","allowed":false,"status":{"message":"no"}}})");
}

}  // namespace
}  // namespace muster::kube
