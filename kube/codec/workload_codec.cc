#include "kube/codec/workload_codec.h"

#include <string>

#include "kube/codec/codec_helpers.h"
#include "model/pod.h"

namespace muster::kube {
namespace {

// spec.schedulingPolicy: exactly one of gang and basic (the API server's
// validation, pkg/apis/scheduling/validation).
struct SchedulingPolicy {
  bool basic = false;
  bool gang = false;
  int32_t min_count = 0;
};

void DecodeGangPolicyFrom(DecodeContext& ctx, const JsonValue& v, SchedulingPolicy* out) {
  if (!BeginObject(ctx, v)) return;
  ReadInt32(ctx, v, "minCount", &out->min_count);
  if (!ctx.failed() && out->min_count < 1) ctx.FailAt("minCount", "must be at least 1");
}

void DecodeSchedulingPolicyFrom(DecodeContext& ctx, const JsonValue& v, SchedulingPolicy* out) {
  if (!BeginObject(ctx, v)) return;
  out->basic = Member(ctx, v, "basic") != nullptr;
  out->gang = Member(ctx, v, "gang") != nullptr;
  ReadObject(ctx, v, "gang", out, DecodeGangPolicyFrom);
  if (ctx.failed()) return;
  if (out->basic == out->gang) ctx.Fail("must set exactly one of basic and gang");
}

void DecodeSpecFrom(DecodeContext& ctx, const JsonValue& v, PodGroupSpec* out) {
  if (!BeginObject(ctx, v)) return;
  SchedulingPolicy policy;
  if (Member(ctx, v, "schedulingPolicy") == nullptr) {
    ctx.FailAt("schedulingPolicy", "is required");
    return;
  }
  ReadObject(ctx, v, "schedulingPolicy", &policy, DecodeSchedulingPolicyFrom);
  out->min_member = policy.gang ? policy.min_count : 1;
  ReadString(ctx, v, "priorityClassName", &out->priority_class_name);
}

void DecodeStatusFrom(DecodeContext& ctx, const JsonValue& v, PodGroupStatus* out) {
  if (!BeginObject(ctx, v)) return;
  ReadArray(ctx, v, "conditions", &out->conditions, DecodeConditionFrom);
}

}  // namespace

void DecodeKubernetesPodGroupFrom(DecodeContext& ctx, const JsonValue& v, PodGroup* out) {
  if (!BeginObject(ctx, v)) return;
  out->api = PodGroupApi::kKubernetes;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  if (Member(ctx, v, "spec") == nullptr) ctx.FailAt("spec", "is required");
  ReadObject(ctx, v, "spec", &out->spec, DecodeSpecFrom);
  ReadObject(ctx, v, "status", &out->status, DecodeStatusFrom);
  if (auto it = out->meta.annotations.find(std::string(kQueueNameAnnotation));
      it != out->meta.annotations.end()) {
    out->spec.queue = it->second;
  }
}

StatusOr<PodGroup> DecodeKubernetesPodGroup(std::string_view json) {
  return DecodeDocument<PodGroup>(json, "decode PodGroup (scheduling.k8s.io/v1beta1)",
                                  DecodeKubernetesPodGroupFrom);
}

StatusOr<ObjectList<PodGroup>> DecodeKubernetesPodGroupList(std::string_view json) {
  return DecodeDocument<ObjectList<PodGroup>>(
      json, "decode PodGroupList (scheduling.k8s.io/v1beta1)",
      [](DecodeContext& ctx, const JsonValue& v, ObjectList<PodGroup>* out) {
        DecodeListFrom(ctx, v, out, DecodeKubernetesPodGroupFrom);
      });
}

}  // namespace muster::kube
