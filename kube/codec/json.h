// The JSON layer every codec is written in: RapidJSON plus a DecodeContext
// that tracks the JSON path of the value being read and keeps the first
// error, so a malformed document yields one Status naming the bad field
// ("spec.containers[0].resources.requests[\"nvidia.com/gpu\"]: ...").
//
// Rules for decoders (kube/codec/*.cc):
//  - Every access checks the JSON type first; RapidJSON accessors on the wrong
//    type are undefined behaviour. The Read* helpers below do this.
//  - Absent and null read as "unset": the output keeps its default.
//  - Unknown keys are ignored (Kubernetes objects grow).
//  - After the first error, later reads are no-ops; check ctx.status() once.
//
// Thread-safety: a DecodeContext belongs to one decode on one thread.
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/resources.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::kube {

using JsonValue = rapidjson::Value;

class DecodeContext {
 public:
  // `case_insensitive_keys`: match object keys ignoring ASCII case, as Go's
  // encoding/json does (the extender wire types need this).
  explicit DecodeContext(bool case_insensitive_keys = false)
      : case_insensitive_(case_insensitive_keys) {
    segments_.reserve(16);  // Kubernetes objects nest about 15 levels
  }

  // RAII path segment; pops itself on destruction. The path is kept as
  // segments and spelled out only for an error: a decode that succeeds (a
  // pod has hundreds of fields) builds no strings for it.
  class Scope {
   public:
    ~Scope() { ctx_->segments_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    friend class DecodeContext;
    explicit Scope(DecodeContext* ctx) : ctx_(ctx) {}
    DecodeContext* ctx_;
  };
  // REQUIRES: `key` outlives the scope (a literal, a key of the document
  // being decoded, or a string declared before the scope).
  Scope Key(std::string_view key) {
    segments_.push_back(Segment{.key = key});
    return Scope(this);
  }
  Scope Index(size_t index) {
    segments_.push_back(Segment{.key = {}, .index = index});
    return Scope(this);
  }

  // Records "<path>: <what>" unless an error was already recorded.
  void Fail(std::string_view what);
  // As Fail, at the path of `key` below the current one.
  void FailAt(std::string_view key, std::string_view what);
  bool failed() const { return failed_; }
  Status status() const;
  // The current path, "" at the document root.
  std::string path() const;
  bool case_insensitive() const { return case_insensitive_; }

 private:
  struct Segment {
    static constexpr size_t kKey = ~size_t{0};
    std::string_view key;  // when index == kKey
    size_t index = kKey;
  };
  bool case_insensitive_;
  bool failed_ = false;
  std::string error_;
  std::vector<Segment> segments_;
};

// The member `key` of `obj`, or nullptr when obj is not an object, the key is
// absent or its value is null.
const JsonValue* Member(const DecodeContext& ctx, const JsonValue& obj, std::string_view key);

// "a string", "an object", "null", ...: for error messages.
const char* JsonTypeName(const JsonValue& v);

// Value readers: read `v` itself (already at the current path). On a wrong
// type or an out-of-range number they record an error and return false.
bool Int32From(DecodeContext& ctx, const JsonValue& v, int32_t* out);
// Null elements read as "" (Go's zero value).
bool StringListFrom(DecodeContext& ctx, const JsonValue& v, std::vector<std::string>* out);

// Type checks at the current path; on mismatch they record an error.
bool ExpectObject(DecodeContext& ctx, const JsonValue& v);
bool ExpectArray(DecodeContext& ctx, const JsonValue& v);

// Scalar readers. Absent/null leaves *out unchanged and returns true; a value
// of the wrong type or out of range records an error and returns false.
bool ReadString(DecodeContext& ctx, const JsonValue& obj, std::string_view key, std::string* out);
bool ReadBool(DecodeContext& ctx, const JsonValue& obj, std::string_view key, bool* out);
bool ReadInt32(DecodeContext& ctx, const JsonValue& obj, std::string_view key, int32_t* out);
bool ReadInt64(DecodeContext& ctx, const JsonValue& obj, std::string_view key, int64_t* out);
bool ReadOptionalBool(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                      std::optional<bool>* out);
bool ReadOptionalInt32(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::optional<int32_t>* out);
bool ReadOptionalInt64(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::optional<int64_t>* out);
// RFC 3339 timestamps (Time and MicroTime).
bool ReadTime(DecodeContext& ctx, const JsonValue& obj, std::string_view key, Time* out);
bool ReadOptionalTime(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                      std::optional<Time>* out);
// Go duration strings ("10m", "1h30m").
bool ReadOptionalDuration(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                          std::optional<Duration>* out);
bool ReadStringMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                   std::map<std::string, std::string>* out);
bool ReadStringList(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                    std::vector<std::string>* out);
// A Kubernetes ResourceList ({"cpu": "500m", "nvidia.com/gpu": 8}); bare JSON
// numbers are accepted as quantities, as the API server does.
bool ReadResources(DecodeContext& ctx, const JsonValue& obj, std::string_view key, Resources* out);
bool ReadOptionalResources(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                           std::optional<Resources>* out);
// Any value, kept verbatim as compact JSON ("" when absent or null).
bool ReadRaw(DecodeContext& ctx, const JsonValue& obj, std::string_view key, std::string* out);
// The value `v` as compact JSON.
std::string ToCompactJson(const JsonValue& v);

// Reads the object at `key` with `decode(ctx, value, out)`.
template <typename T, typename Fn>
bool ReadObject(DecodeContext& ctx, const JsonValue& obj, std::string_view key, T* out,
                Fn&& decode) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  decode(ctx, *v, out);
  return !ctx.failed();
}

template <typename T, typename Fn>
bool ReadOptionalObject(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                        std::optional<T>* out, Fn&& decode) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  out->emplace();
  decode(ctx, *v, &**out);
  return !ctx.failed();
}

// Reads the array at `key`, each element with `decode(ctx, element, &item)`.
template <typename T, typename Fn>
bool ReadArray(DecodeContext& ctx, const JsonValue& obj, std::string_view key, std::vector<T>* out,
               Fn&& decode) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectArray(ctx, *v)) return false;
  out->clear();
  out->reserve(v->Size());
  for (rapidjson::SizeType i = 0; i < v->Size() && !ctx.failed(); ++i) {
    auto index_scope = ctx.Index(i);
    out->emplace_back();
    decode(ctx, (*v)[i], &out->back());
  }
  return !ctx.failed();
}

// Reads an object of objects ({"name": {...}}) into a map.
template <typename T, typename Fn>
bool ReadObjectMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                   std::map<std::string, T>* out, Fn&& decode) {
  const JsonValue* v = Member(ctx, obj, key);
  if (v == nullptr || ctx.failed()) return !ctx.failed();
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *v)) return false;
  out->clear();
  for (auto it = v->MemberBegin(); it != v->MemberEnd() && !ctx.failed(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    auto entry_scope = ctx.Key(name);
    T& item = (*out)[name];
    if (it->value.IsNull()) continue;
    decode(ctx, it->value, &item);
  }
  return !ctx.failed();
}

// Parses `json` (which need not be NUL-terminated) and decodes the root
// object with `decode`. Parse errors name the byte offset; decode errors the
// JSON path. `what` prefixes the message ("decode Pod").
template <typename T, typename Fn>
StatusOr<T> DecodeDocument(std::string_view json, std::string_view what, Fn&& decode,
                           bool case_insensitive_keys = false);

// The message of a decoder's error without the "decode <Kind>: " context
// DecodeDocument puts first, so that it starts with the JSON path of the
// first bad field ("spec.minResources.cpu: ..."): what a user is told on the
// object. A message without that context is returned whole.
std::string DecodeProblem(const Status& error);

Status ParseDocument(std::string_view json, rapidjson::Document* doc);
// ParseDocument over `buffer`, parsed in place: the document's strings point
// into the buffer (which must outlive it) instead of being copied, which
// saves a third of the parse of a request carrying thousands of node names.
// Same results and errors as ParseDocument.
Status ParseDocumentInPlace(std::string* buffer, rapidjson::Document* doc);

template <typename T, typename Fn>
StatusOr<T> DecodeDocument(std::string_view json, std::string_view what, Fn&& decode,
                           bool case_insensitive_keys) {
  rapidjson::Document doc;
  Status parsed = ParseDocument(json, &doc);
  if (!parsed.ok()) return parsed.Annotate(what);
  DecodeContext ctx(case_insensitive_keys);
  T out{};
  if (ExpectObject(ctx, doc)) decode(ctx, static_cast<const JsonValue&>(doc), &out);
  if (ctx.failed()) return ctx.status().Annotate(what);
  return out;
}

// JsonWriter: thin helpers over rapidjson::Writer for the Kubernetes style of
// output (omit empty fields, quantities as strings, RFC 3339 times).
class JsonWriter {
 public:
  JsonWriter() : writer_(buffer_) {}

  rapidjson::Writer<rapidjson::StringBuffer>& raw() { return writer_; }
  std::string TakeString() const { return std::string(buffer_.GetString(), buffer_.GetSize()); }

  void StartObject() { writer_.StartObject(); }
  void EndObject() { writer_.EndObject(); }
  void StartArray() { writer_.StartArray(); }
  void EndArray() { writer_.EndArray(); }
  void Key(std::string_view k) {
    writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  }
  void String(std::string_view s) {
    writer_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  void Int(int64_t v) { writer_.Int64(v); }
  // REQUIRES: finite (JSON has no NaN or infinity).
  void Double(double v) { writer_.Double(v); }
  void Bool(bool v) { writer_.Bool(v); }
  void Null() { writer_.Null(); }
  // Writes `json` (a complete JSON value) verbatim.
  void RawValue(std::string_view json) {
    writer_.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  }

  // Field writers. The *IfSet forms omit the key for empty/zero/unset values
  // (Go's omitempty).
  void StringField(std::string_view key, std::string_view value);
  void StringFieldIfSet(std::string_view key, std::string_view value);
  void IntField(std::string_view key, int64_t value);
  void IntFieldIfSet(std::string_view key, int64_t value);
  void BoolFieldIfSet(std::string_view key, bool value);
  template <typename T>
  void OptionalIntField(std::string_view key, const std::optional<T>& value) {
    if (value) IntField(key, *value);
  }
  void OptionalBoolField(std::string_view key, const std::optional<bool>& value);
  // Seconds precision unless `value` has a fraction (then microseconds).
  void TimeField(std::string_view key, Time value);
  void TimeFieldIfSet(std::string_view key, Time value);
  void MicroTimeFieldIfSet(std::string_view key, Time value);
  void DurationFieldIfSet(std::string_view key, const std::optional<Duration>& value);
  void StringMapFieldIfSet(std::string_view key, const std::map<std::string, std::string>& m);
  void StringListFieldIfSet(std::string_view key, const std::vector<std::string>& list);
  void ResourcesField(std::string_view key, const Resources& r);
  void ResourcesFieldIfSet(std::string_view key, const Resources& r);
  void RawFieldIfSet(std::string_view key, std::string_view json);

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

}  // namespace muster::kube
