// Test-only helpers for the object codec tests (core_codec_test.cc,
// volcano_codec_test.cc): fixtures, JSON edits by JSON Pointer, and a walk
// over every value of a document with the path a decode error would name.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "model/quantity.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::kube::codec_test {

// The instant of an RFC 3339 text; a bad literal fails the test.
inline Time At(std::string_view rfc3339) {
  StatusOr<Time> t = ParseRfc3339(rfc3339);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Time();
}

// Bytes of a memory quantity ("2Gi"); a bad literal fails the test.
inline int64_t Bytes(std::string_view quantity) {
  StatusOr<int64_t> v = ParseResourceQuantity("memory", quantity);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : 0;
}

// decode -> encode -> decode gives an equal model, and encoding that again
// gives the same bytes.
template <typename T>
inline void ExpectRoundTrip(std::string_view json, StatusOr<T> (*decode)(std::string_view),
                            std::string (*encode)(const T&)) {
  StatusOr<T> first = decode(json);
  ASSERT_TRUE(first.ok()) << first.status();
  std::string encoded = encode(*first);
  StatusOr<T> second = decode(encoded);
  ASSERT_TRUE(second.ok()) << second.status() << "\n" << encoded;
  EXPECT_TRUE(*second == *first) << encoded;
  EXPECT_EQ(encode(*second), encoded);
}

// Decodes a document and reports only the status: the shape shared by the
// error-path and robustness tests.
using StatusOfDecode = std::function<Status(std::string_view)>;

template <typename Fn>
StatusOfDecode StatusOf(Fn decode) {
  return [decode](std::string_view json) { return decode(json).status(); };
}

// The text of kube/codec/testdata/<name>; aborts when missing (a test bug).
inline std::string ReadTestdata(std::string_view name) {
  std::string path = std::string(MUSTER_TESTDATA_DIR) + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::abort();
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses `json`; aborts on a parse error (fixtures and edits are test input).
inline rapidjson::Document Parse(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    std::fprintf(stderr, "test JSON does not parse: %.*s\n", static_cast<int>(json.size()),
                 json.data());
    std::abort();
  }
  return doc;
}

// Compact JSON written by RapidJSON's own writer (independent of the codec).
inline std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// `json` with the value at JSON Pointer `pointer` replaced by (or set to)
// the JSON value `value_json`.
inline std::string WithValueAt(std::string_view json, const char* pointer,
                               std::string_view value_json) {
  rapidjson::Document doc = Parse(json);
  rapidjson::Document value = Parse(value_json);
  rapidjson::Value copy(value, doc.GetAllocator());
  rapidjson::Pointer(pointer).Set(doc, copy);
  return Compact(doc);
}

// One value inside a document.
struct JsonLocation {
  rapidjson::Pointer pointer;
  std::string path;  // as DecodeContext names it: spec.containers[0].resources
  rapidjson::Type type;
  bool in_string_array;  // an element of an array of strings
};

inline bool IsPlainKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

inline std::string KeyPath(const std::string& parent, std::string_view key) {
  if (IsPlainKey(key)) return parent.empty() ? std::string(key) : parent + "." + std::string(key);
  std::string quoted = parent + "[\"";
  for (char c : key) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"]";
}

inline void CollectLocations(const rapidjson::Value& v, const rapidjson::Pointer& pointer,
                             const std::string& path, std::vector<JsonLocation>* out) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      rapidjson::Pointer child = pointer.Append(it->name.GetString(), it->name.GetStringLength());
      std::string child_path =
          KeyPath(path, std::string_view(it->name.GetString(), it->name.GetStringLength()));
      out->push_back({child, child_path, it->value.GetType(), false});
      CollectLocations(it->value, child, child_path, out);
    }
  } else if (v.IsArray()) {
    bool strings = v.Size() > 0 && v[0].IsString();
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      rapidjson::Pointer child = pointer.Append(i);
      std::string child_path = path + "[" + std::to_string(i) + "]";
      out->push_back({child, child_path, v[i].GetType(), strings});
      CollectLocations(v[i], child, child_path, out);
    }
  }
}

// Every value below the root of `doc`, parents before children.
inline std::vector<JsonLocation> AllLocations(const rapidjson::Value& doc) {
  std::vector<JsonLocation> out;
  CollectLocations(doc, rapidjson::Pointer(), "", &out);
  return out;
}

// `doc` with the value at `pointer` replaced by `replacement`, as JSON.
inline std::string Replaced(const rapidjson::Document& doc, const rapidjson::Pointer& pointer,
                            const rapidjson::Value& replacement) {
  rapidjson::Document copy;
  copy.CopyFrom(doc, copy.GetAllocator());
  rapidjson::Value value(replacement, copy.GetAllocator());
  pointer.Set(copy, value);
  return Compact(copy);
}

// A JSON value of another type than `type`, so that a decoder that models the
// field must reject it.
inline rapidjson::Value OtherTypeThan(rapidjson::Type type) {
  rapidjson::Value v;
  switch (type) {
    case rapidjson::kStringType:
      v.SetInt(7);
      break;
    case rapidjson::kNumberType:
      v.SetString(rapidjson::StringRef("7"));
      break;
    case rapidjson::kObjectType:
      v.SetArray();
      break;
    case rapidjson::kArrayType:
      v.SetObject();
      break;
    case rapidjson::kTrueType:
    case rapidjson::kFalseType:
      v.SetString(rapidjson::StringRef("true"));
      break;
    case rapidjson::kNullType:
      v.SetBool(true);
      break;
  }
  return v;
}

}  // namespace muster::kube::codec_test
