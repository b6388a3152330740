#include "kube/codec/gpu_topology_codec.h"

#include <cmath>

#include "kube/codec/codec_helpers.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

void DecodeGpuFrom(DecodeContext& ctx, const JsonValue& v, GpuDevice* out) {
  if (!BeginObject(ctx, v)) return;
  int32_t index = 0, numa = -1;
  ReadInt32(ctx, v, "i", &index);
  ReadString(ctx, v, "uuid", &out->uuid);
  ReadInt32(ctx, v, "numa", &numa);
  ReadString(ctx, v, "pcisw", &out->pcie_switch);
  ReadBool(ctx, v, "ok", &out->healthy);
  out->index = index;
  out->numa = numa;
}

// An array of arrays, each element read by `element(ctx, value, &item)`.
template <typename T, typename Fn>
void ReadMatrix(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                std::vector<std::vector<T>>* out, Fn&& element) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return;
  auto scope = ctx.Key(key);
  if (!ExpectArray(ctx, *v)) return;
  out->assign(v->Size(), {});
  for (rapidjson::SizeType i = 0; i < v->Size() && !ctx.failed(); ++i) {
    auto row_scope = ctx.Index(i);
    const JsonValue& row = (*v)[i];
    if (!ExpectArray(ctx, row)) return;
    (*out)[i].resize(row.Size());
    for (rapidjson::SizeType j = 0; j < row.Size() && !ctx.failed(); ++j) {
      auto cell_scope = ctx.Index(j);
      element(ctx, row[j], &(*out)[i][j]);
    }
  }
}

void TokenFrom(DecodeContext& ctx, const JsonValue& v, std::string* out) {
  if (!v.IsString()) return ctx.Fail(std::string("expected a string, got ") + JsonTypeName(v));
  out->assign(v.GetString(), v.GetStringLength());
}

// GB/s in [0, 1e6], kept to 1 MB/s: beyond what any link carries, and a
// value the writer and the parser agree on to the bit.
void GbpsFrom(DecodeContext& ctx, const JsonValue& v, double* out) {
  if (!v.IsNumber()) return ctx.Fail(std::string("expected a number, got ") + JsonTypeName(v));
  const double gbps = v.GetDouble();
  if (!(gbps >= 0 && gbps <= 1e6)) return ctx.Fail("expected GB/s in [0, 1e6]");
  *out = std::round(gbps * 1000) / 1000;
}

void DecodeSpecFrom(DecodeContext& ctx, const JsonValue& v, GpuTopologySpec* out) {
  int32_t version = 1;
  ReadInt32(ctx, v, "v", &version);
  out->version = version;
  ReadArray(ctx, v, "gpus", &out->gpus, DecodeGpuFrom);
  ReadMatrix(ctx, v, "link", &out->link, TokenFrom);
  ReadMatrix(ctx, v, "pcie", &out->pcie, TokenFrom);
  ReadMatrix(ctx, v, "bw", &out->bandwidth, GbpsFrom);
}

void WriteTokens(JsonWriter& w, std::string_view key,
                 const std::vector<std::vector<std::string>>& m) {
  if (m.empty()) return;
  w.Key(key);
  w.StartArray();
  for (const auto& row : m) {
    w.StartArray();
    for (const std::string& token : row) w.String(token);
    w.EndArray();
  }
  w.EndArray();
}

}  // namespace

StatusOr<GpuTopologySpec> DecodeGpuTopology(std::string_view json) {
  return DecodeDocument<GpuTopologySpec>(json, "decode " + std::string(kAnnotationGpuTopology),
                                         DecodeSpecFrom);
}

StatusOr<std::map<std::string, GpuTopologySpec, std::less<>>> DecodeGpuTopologyProfiles(
    std::string_view json) {
  using Profiles = std::map<std::string, GpuTopologySpec, std::less<>>;
  return DecodeDocument<Profiles>(
      json, "decode GPU topology profiles",
      [](DecodeContext& ctx, const JsonValue& v, Profiles* out) {
        for (auto it = v.MemberBegin(); it != v.MemberEnd() && !ctx.failed(); ++it) {
          std::string key(it->name.GetString(), it->name.GetStringLength());
          auto scope = ctx.Key(key);
          if (!ExpectObject(ctx, it->value)) return;
          DecodeSpecFrom(ctx, it->value, &(*out)[key]);
        }
      });
}

std::string EncodeGpuTopology(const GpuTopologySpec& spec) {
  JsonWriter w;
  w.StartObject();
  w.IntField("v", spec.version);
  w.Key("gpus");
  w.StartArray();
  for (const GpuDevice& gpu : spec.gpus) {
    w.StartObject();
    w.IntField("i", gpu.index);
    w.StringFieldIfSet("uuid", gpu.uuid);
    w.IntField("numa", gpu.numa);
    w.StringFieldIfSet("pcisw", gpu.pcie_switch);
    w.Key("ok");
    w.Bool(gpu.healthy);
    w.EndObject();
  }
  w.EndArray();
  WriteTokens(w, "link", spec.link);
  WriteTokens(w, "pcie", spec.pcie);
  if (!spec.bandwidth.empty()) {
    w.Key("bw");
    w.StartArray();
    for (const auto& row : spec.bandwidth) {
      w.StartArray();
      for (double gbps : row) w.Double(std::isfinite(gbps) ? gbps : 0);
      w.EndArray();
    }
    w.EndArray();
  }
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
