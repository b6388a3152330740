#include "kube/codec/codec_helpers.h"

#include <limits>

namespace muster::kube {
namespace {

std::string_view TextOf(const JsonValue& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

}  // namespace

void WriteTypeMeta(JsonWriter& w, std::string_view api_version, std::string_view kind) {
  w.StringField("apiVersion", api_version);
  w.StringField("kind", kind);
}

void WriteSchedulingGates(JsonWriter& w, const std::vector<std::string>& gates) {
  w.StartArray();
  for (const std::string& gate : gates) {
    w.StartObject();
    w.StringField("name", gate);
    w.EndObject();
  }
  w.EndArray();
}

bool BeginObject(DecodeContext& ctx, const JsonValue& v) {
  if (ctx.failed() || v.IsNull()) return false;
  return ExpectObject(ctx, v);
}

bool ReadRawObject(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                   std::string* out) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  *out = ToCompactJson(*v);
  return true;
}

bool ReadInt32Map(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                  std::map<std::string, int32_t>* out) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  out->clear();
  for (auto it = v->MemberBegin(); it != v->MemberEnd() && !ctx.failed(); ++it) {
    if (it->value.IsNull()) continue;
    std::string name(TextOf(it->name));
    auto entry_scope = ctx.Key(name);
    int32_t value = 0;
    Int32From(ctx, it->value, &value);
    if (!ctx.failed()) (*out)[name] = value;
  }
  return !ctx.failed();
}

bool ReadStringListMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::map<std::string, std::vector<std::string>>* out) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  out->clear();
  for (auto it = v->MemberBegin(); it != v->MemberEnd() && !ctx.failed(); ++it) {
    std::string name(TextOf(it->name));
    auto entry_scope = ctx.Key(name);
    std::vector<std::string> list;
    if (!it->value.IsNull()) StringListFrom(ctx, it->value, &list);  // json.h
    (*out)[name] = std::move(list);
  }
  return !ctx.failed();
}

}  // namespace muster::kube
