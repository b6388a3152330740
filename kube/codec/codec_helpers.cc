#include "kube/codec/codec_helpers.h"

#include <limits>

namespace muster::kube {
namespace {

std::string_view TextOf(const JsonValue& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

const char* KindOf(const JsonValue& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "a boolean";
  if (v.IsObject()) return "an object";
  if (v.IsArray()) return "an array";
  if (v.IsString()) return "a string";
  return "a number";
}

// Reads one int32 value at the current path.
void Int32From(DecodeContext& ctx, const JsonValue& v, int32_t* out) {
  if (!v.IsNumber()) return ctx.Fail(std::string("expected an integer, got ") + KindOf(v));
  if (!v.IsInt64()) {
    return ctx.Fail(v.IsUint64() ? "integer out of range" : "expected an integer, got a fraction");
  }
  int64_t value = v.GetInt64();
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return ctx.Fail("integer " + std::to_string(value) + " out of range");
  }
  *out = static_cast<int32_t>(value);
}

// Reads one array of strings at the current path.
void StringListFrom(DecodeContext& ctx, const JsonValue& v, std::vector<std::string>* out) {
  if (!ExpectArray(ctx, v)) return;
  out->reserve(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) {
      auto scope = ctx.Index(i);
      return ctx.Fail(std::string("expected a string, got ") + KindOf(v[i]));
    }
    out->emplace_back(TextOf(v[i]));
  }
}

}  // namespace

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
    if (!it->value.IsNull()) StringListFrom(ctx, it->value, &list);
    (*out)[name] = std::move(list);
  }
  return !ctx.failed();
}

}  // namespace muster::kube
