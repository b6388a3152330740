#include "kube/codec/lease_codec.h"

#include "kube/codec/codec_helpers.h"
#include "kube/codec/core_codec.h"

namespace muster::kube {
namespace {

void DecodeLeaseSpecFrom(DecodeContext& ctx, const JsonValue& v, Lease* out) {
  if (!BeginObject(ctx, v)) return;
  ReadString(ctx, v, "holderIdentity", &out->holder_identity);
  ReadInt32(ctx, v, "leaseDurationSeconds", &out->lease_duration_seconds);
  ReadOptionalTime(ctx, v, "acquireTime", &out->acquire_time);
  ReadOptionalTime(ctx, v, "renewTime", &out->renew_time);
  ReadInt32(ctx, v, "leaseTransitions", &out->lease_transitions);
}

void DecodeLeaseFrom(DecodeContext& ctx, const JsonValue& v, Lease* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadObject(ctx, v, "spec", out, DecodeLeaseSpecFrom);
}

// Every field, so a patch replaces all of a rival's: client-go's
// LeaderElectionRecordToLeaseSpec writes them all too.
void EncodeLeaseSpec(JsonWriter& w, const Lease& lease) {
  w.Key("spec");
  w.StartObject();
  w.StringField("holderIdentity", lease.holder_identity);
  w.IntField("leaseDurationSeconds", lease.lease_duration_seconds);
  // Set times are written even when zero (the epoch): unset is absent.
  if (lease.acquire_time) w.StringField("acquireTime", FormatRfc3339Micro(*lease.acquire_time));
  if (lease.renew_time) w.StringField("renewTime", FormatRfc3339Micro(*lease.renew_time));
  w.IntField("leaseTransitions", lease.lease_transitions);
  w.EndObject();
}

}  // namespace

StatusOr<Lease> DecodeLease(std::string_view json) {
  return DecodeDocument<Lease>(json, "decode Lease", DecodeLeaseFrom);
}

std::string EncodeLease(const Lease& lease) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, kLeaseApiVersion, "Lease");
  w.Key("metadata");
  w.StartObject();
  w.StringField("name", lease.meta.name);
  w.StringFieldIfSet("namespace", lease.meta.namespace_);
  w.EndObject();
  EncodeLeaseSpec(w, lease);
  w.EndObject();
  return w.TakeString();
}

std::string EncodeLeaseUpdatePatch(const Lease& lease) {
  JsonWriter w;
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.StringField("resourceVersion", lease.meta.resource_version);
  w.EndObject();
  EncodeLeaseSpec(w, lease);
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
