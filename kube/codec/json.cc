#include "kube/codec/json.h"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "kube/codec/json_text.h"
#include "model/quantity.h"

namespace muster::kube {
namespace {

bool IsIdentifier(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

std::string_view NameOf(const JsonValue& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

// Runs `fn(value)` with the path at `key` when the member is present.
template <typename Fn>
bool WithMember(DecodeContext& ctx, const JsonValue& obj, std::string_view key, Fn&& fn) {
  if (ctx.failed()) return false;
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr) return true;
  auto scope = ctx.Key(key);
  fn(*v);
  return !ctx.failed();
}

bool IntegerFrom(DecodeContext& ctx, const JsonValue& v, int64_t lo, int64_t hi, int64_t* out) {
  if (!v.IsNumber()) {
    ctx.Fail(std::string("expected an integer, got ") + JsonTypeName(v));
    return false;
  }
  if (!v.IsInt64()) {
    ctx.Fail(v.IsUint64() ? "integer out of range" : "expected an integer, got a fraction");
    return false;
  }
  int64_t value = v.GetInt64();
  if (value < lo || value > hi) {
    ctx.Fail("integer " + std::to_string(value) + " out of range");
    return false;
  }
  *out = value;
  return true;
}

// The text of a number as written (shortest exact form for doubles).
std::string NumberText(const JsonValue& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  return ToCompactJson(v);
}

bool QuantityFrom(DecodeContext& ctx, std::string_view resource, const JsonValue& v, int64_t* out) {
  std::string text;
  if (v.IsString()) {
    text = std::string(NameOf(v));
  } else if (v.IsNumber()) {
    text = NumberText(v);
  } else {
    ctx.Fail(std::string("expected a quantity, got ") + JsonTypeName(v));
    return false;
  }
  StatusOr<int64_t> parsed = ParseResourceQuantity(resource, text);
  if (!parsed.ok()) {
    ctx.Fail(parsed.status().message());
    return false;
  }
  *out = *parsed;
  return true;
}

// Kubernetes objects nest about 15 levels; anything near this is hostile.
constexpr int kMaxJsonDepth = 256;

// Max depth of containers in `root`, computed without recursion.
int NestingDepth(const JsonValue& root) {
  std::vector<std::pair<const JsonValue*, int>> stack = {{&root, 1}};
  int max_depth = 0;
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->IsObject() && !v->IsArray()) continue;
    max_depth = std::max(max_depth, depth);
    if (max_depth > kMaxJsonDepth) break;
    // Only containers go on the stack: a request's thousands of node names
    // would each be pushed and popped for nothing.
    const int child_depth = depth + 1;
    auto push = [&](const JsonValue& child) {
      if (child.IsObject() || child.IsArray()) stack.emplace_back(&child, child_depth);
    };
    if (v->IsObject()) {
      for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) push(it->value);
    } else {
      for (const auto& item : v->GetArray()) push(item);
    }
  }
  return max_depth;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

const char* JsonTypeName(const JsonValue& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kNumberType:
      return "a number";
  }
  return "unknown";
}

bool Int32From(DecodeContext& ctx, const JsonValue& v, int32_t* out) {
  int64_t value = 0;
  if (!IntegerFrom(ctx, v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                   &value)) {
    return false;
  }
  *out = static_cast<int32_t>(value);
  return true;
}

bool StringListFrom(DecodeContext& ctx, const JsonValue& v, std::vector<std::string>* out) {
  if (!ExpectArray(ctx, v)) return false;
  out->clear();
  out->reserve(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (v[i].IsNull()) {  // Go reads a null element as ""
      out->emplace_back();
      continue;
    }
    if (!v[i].IsString()) {
      auto scope = ctx.Index(i);
      ctx.Fail(std::string("expected a string, got ") + JsonTypeName(v[i]));
      return false;
    }
    out->emplace_back(NameOf(v[i]));
  }
  return true;
}

std::string DecodeContext::path() const {
  std::string path;
  for (const Segment& segment : segments_) {
    if (segment.index != Segment::kKey) {
      path += "[" + std::to_string(segment.index) + "]";
    } else if (IsIdentifier(segment.key)) {
      if (!path.empty()) path += '.';
      path += segment.key;
    } else {
      path += "[\"";
      for (char c : segment.key) {
        if (c == '"' || c == '\\') path += '\\';
        path += c;
      }
      path += "\"]";
    }
  }
  return path;
}

void DecodeContext::Fail(std::string_view what) {
  if (failed_) return;
  failed_ = true;
  const std::string where = path();
  error_ = (where.empty() ? std::string("<root>") : where) + ": " + std::string(what);
}

void DecodeContext::FailAt(std::string_view key, std::string_view what) {
  auto scope = Key(key);
  Fail(what);
}

Status DecodeContext::status() const {
  return failed_ ? InvalidArgumentError(error_) : Status::Ok();
}

const JsonValue* Member(const DecodeContext& ctx, const JsonValue& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  const JsonValue* folded = nullptr;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    std::string_view name = NameOf(it->name);
    if (name == key) return it->value.IsNull() ? nullptr : &it->value;
    if (folded == nullptr && ctx.case_insensitive() && EqualsIgnoreCase(name, key)) {
      folded = &it->value;
    }
  }
  return (folded == nullptr || folded->IsNull()) ? nullptr : folded;
}

bool ExpectObject(DecodeContext& ctx, const JsonValue& v) {
  if (v.IsObject()) return true;
  ctx.Fail(std::string("expected an object, got ") + JsonTypeName(v));
  return false;
}

bool ExpectArray(DecodeContext& ctx, const JsonValue& v) {
  if (v.IsArray()) return true;
  ctx.Fail(std::string("expected an array, got ") + JsonTypeName(v));
  return false;
}

bool ReadString(DecodeContext& ctx, const JsonValue& obj, std::string_view key, std::string* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!v.IsString()) return ctx.Fail(std::string("expected a string, got ") + JsonTypeName(v));
    out->assign(v.GetString(), v.GetStringLength());
  });
}

bool ReadBool(DecodeContext& ctx, const JsonValue& obj, std::string_view key, bool* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!v.IsBool()) return ctx.Fail(std::string("expected a boolean, got ") + JsonTypeName(v));
    *out = v.GetBool();
  });
}

bool ReadInt32(DecodeContext& ctx, const JsonValue& obj, std::string_view key, int32_t* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) { Int32From(ctx, v, out); });
}

bool ReadInt64(DecodeContext& ctx, const JsonValue& obj, std::string_view key, int64_t* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    IntegerFrom(ctx, v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                out);
  });
}

bool ReadOptionalBool(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                      std::optional<bool>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!v.IsBool()) return ctx.Fail(std::string("expected a boolean, got ") + JsonTypeName(v));
    *out = v.GetBool();
  });
}

bool ReadOptionalInt32(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::optional<int32_t>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    int32_t value = 0;
    if (Int32From(ctx, v, &value)) *out = value;
  });
}

bool ReadOptionalInt64(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::optional<int64_t>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    int64_t value = 0;
    if (IntegerFrom(ctx, v, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max(), &value)) {
      *out = value;
    }
  });
}

bool ReadTime(DecodeContext& ctx, const JsonValue& obj, std::string_view key, Time* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!v.IsString()) return ctx.Fail(std::string("expected a timestamp, got ") + JsonTypeName(v));
    StatusOr<Time> t = ParseRfc3339(NameOf(v));
    if (!t.ok()) return ctx.Fail(t.status().message());
    *out = *t;
  });
}

bool ReadOptionalTime(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                      std::optional<Time>* out) {
  Time t;
  bool present = Member(ctx, obj, key) != nullptr;
  if (!ReadTime(ctx, obj, key, &t)) return false;
  if (present) *out = t;
  return true;
}

bool ReadOptionalDuration(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                          std::optional<Duration>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!v.IsString()) return ctx.Fail(std::string("expected a duration, got ") + JsonTypeName(v));
    StatusOr<Duration> d = ParseGoDuration(NameOf(v));
    if (!d.ok()) return ctx.Fail(d.status().message());
    *out = *d;
  });
}

bool ReadStringMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                   std::map<std::string, std::string>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!ExpectObject(ctx, v)) return;
    out->clear();
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      if (it->value.IsNull()) continue;
      if (!it->value.IsString()) {
        return ctx.FailAt(NameOf(it->name),
                          std::string("expected a string, got ") + JsonTypeName(it->value));
      }
      out->emplace(std::string(NameOf(it->name)), std::string(NameOf(it->value)));
    }
  });
}

bool ReadStringList(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                    std::vector<std::string>* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) { StringListFrom(ctx, v, out); });
}

bool ReadResources(DecodeContext& ctx, const JsonValue& obj, std::string_view key, Resources* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) {
    if (!ExpectObject(ctx, v)) return;
    Resources result;
    for (auto it = v.MemberBegin(); it != v.MemberEnd() && !ctx.failed(); ++it) {
      std::string_view name = NameOf(it->name);
      if (it->value.IsNull()) continue;
      auto scope = ctx.Key(name);
      int64_t amount = 0;
      if (QuantityFrom(ctx, name, it->value, &amount)) result.Set(name, amount);
    }
    if (!ctx.failed()) *out = std::move(result);
  });
}

bool ReadOptionalResources(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                           std::optional<Resources>* out) {
  if (Member(ctx, obj, key) == nullptr) return !ctx.failed();
  Resources r;
  if (!ReadResources(ctx, obj, key, &r)) return false;
  *out = std::move(r);
  return true;
}

bool ReadRaw(DecodeContext& ctx, const JsonValue& obj, std::string_view key, std::string* out) {
  return WithMember(ctx, obj, key, [&](const JsonValue& v) { *out = ToCompactJson(v); });
}

std::string ToCompactJson(const JsonValue& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

Status CheckParsed(const rapidjson::Document& doc) {
  if (doc.HasParseError()) {
    return InvalidArgumentError("invalid JSON at offset " + std::to_string(doc.GetErrorOffset()) +
                                ": " + rapidjson::GetParseError_En(doc.GetParseError()));
  }
  // Later steps (ToCompactJson, the writer) recurse; bound the depth here.
  if (NestingDepth(doc) > kMaxJsonDepth) {
    return InvalidArgumentError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels");
  }
  return Status::Ok();
}

}  // namespace

std::string DecodeProblem(const Status& error) {
  std::string_view message = error.message();
  // DecodeDocument's `what` is "decode <Kind>" (one word after "decode",
  // maybe a dotted annotation key): no ": " inside it.
  if (message.starts_with("decode ")) {
    const size_t colon = message.find(": ");
    if (colon != std::string_view::npos) message.remove_prefix(colon + 2);
  }
  return std::string(message);
}

Status ParseDocument(std::string_view json, rapidjson::Document* doc) {
  // Iterative parsing: deep nesting in hostile input cannot overflow the stack.
  doc->Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  return CheckParsed(*doc);
}

Status ParseDocumentInPlace(std::string* buffer, rapidjson::Document* doc) {
  if (buffer->find('\0') != std::string::npos) {
    // In-place parsing stops at the first NUL; the ordinary parser reports it.
    return ParseDocument(*buffer, doc);
  }
  doc->ParseInsitu<rapidjson::kParseIterativeFlag>(buffer->data());
  return CheckParsed(*doc);
}

void JsonWriter::StringField(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
}

void JsonWriter::StringFieldIfSet(std::string_view key, std::string_view value) {
  if (!value.empty()) StringField(key, value);
}

void JsonWriter::IntField(std::string_view key, int64_t value) {
  Key(key);
  Int(value);
}

void JsonWriter::IntFieldIfSet(std::string_view key, int64_t value) {
  if (value != 0) IntField(key, value);
}

void JsonWriter::BoolFieldIfSet(std::string_view key, bool value) {
  if (!value) return;
  Key(key);
  Bool(true);
}

void JsonWriter::OptionalBoolField(std::string_view key, const std::optional<bool>& value) {
  if (!value) return;
  Key(key);
  Bool(*value);
}

void JsonWriter::TimeField(std::string_view key, Time value) {
  // Kubernetes writes `Time` to the second but accepts a fraction; keep one
  // we were given so decode(encode(x)) == x.
  StringField(
      key, value.unix_micros() % 1'000'000 == 0 ? FormatRfc3339(value) : FormatRfc3339Micro(value));
}

void JsonWriter::TimeFieldIfSet(std::string_view key, Time value) {
  if (!value.is_zero()) TimeField(key, value);
}

void JsonWriter::MicroTimeFieldIfSet(std::string_view key, Time value) {
  if (!value.is_zero()) StringField(key, FormatRfc3339Micro(value));
}

void JsonWriter::DurationFieldIfSet(std::string_view key, const std::optional<Duration>& value) {
  if (value) StringField(key, FormatGoDuration(*value));
}

void JsonWriter::StringMapFieldIfSet(std::string_view key,
                                     const std::map<std::string, std::string>& m) {
  if (m.empty()) return;
  Key(key);
  StartObject();
  for (const auto& [k, v] : m) StringField(k, v);
  EndObject();
}

void JsonWriter::StringListFieldIfSet(std::string_view key, const std::vector<std::string>& list) {
  if (list.empty()) return;
  Key(key);
  StartArray();
  for (const auto& s : list) String(s);
  EndArray();
}

void JsonWriter::ResourcesField(std::string_view key, const Resources& r) {
  Key(key);
  StartObject();
  for (const auto& [name, value] : r.entries()) {
    StringField(name, FormatResourceQuantity(name, value));
  }
  EndObject();
}

void JsonWriter::ResourcesFieldIfSet(std::string_view key, const Resources& r) {
  if (!r.empty()) ResourcesField(key, r);
}

void JsonWriter::RawFieldIfSet(std::string_view key, std::string_view json) {
  if (json.empty()) return;
  Key(key);
  RawValue(json);
}

}  // namespace muster::kube
