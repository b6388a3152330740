#include "kube/codec/admission_codec.h"

#include "kube/codec/codec_helpers.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

void DecodeKindFrom(DecodeContext& ctx, const JsonValue& v, AdmissionRequest* out) {
  ReadString(ctx, v, "group", &out->group);
  ReadString(ctx, v, "kind", &out->kind);
}

void DecodeRequestFrom(DecodeContext& ctx, const JsonValue& v, AdmissionRequest* out) {
  ReadString(ctx, v, "uid", &out->uid);
  ReadObject(ctx, v, "kind", out, DecodeKindFrom);
  ReadString(ctx, v, "operation", &out->operation);
  ReadString(ctx, v, "namespace", &out->namespace_);
  ReadBool(ctx, v, "dryRun", &out->dry_run);
  if (out->group.empty() && out->kind == "Pod") {
    Pod pod;
    if (ReadObject(ctx, v, "object", &pod, DecodePodFrom) && Member(ctx, v, "object") != nullptr) {
      out->pod = std::move(pod);
    }
  }
}

struct Review {
  std::optional<AdmissionRequest> request;
};

void DecodeReviewFrom(DecodeContext& ctx, const JsonValue& v, Review* out) {
  AdmissionRequest request;
  if (Member(ctx, v, "request") == nullptr) return;
  if (ReadObject(ctx, v, "request", &request, DecodeRequestFrom)) out->request = std::move(request);
}

}  // namespace

StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view json) {
  StatusOr<Review> review =
      DecodeDocument<Review>(json, "decode AdmissionReview", DecodeReviewFrom);
  if (!review.ok()) return review.status();
  if (!review->request.has_value()) {
    return Status(StatusCode::kInvalidArgument, "decode AdmissionReview: request: missing");
  }
  return *std::move(review->request);
}

std::string EncodeAdmissionReview(const AdmissionResponse& response) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, kAdmissionApiVersion, "AdmissionReview");
  w.Key("response");
  w.StartObject();
  w.StringField("uid", response.uid);
  w.Key("allowed");
  w.Bool(response.allowed);
  if (!response.patch_base64.empty()) {
    w.StringField("patchType", "JSONPatch");
    w.StringField("patch", response.patch_base64);
  }
  if (!response.message.empty()) {
    w.Key("status");
    w.StartObject();
    w.StringField("message", response.message);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
