// Small helpers shared by the object codecs (core_codec.cc, volcano_codec.cc),
// on top of json.h. Decode helpers keep the Read* contract: absent and null
// read as unset, wrong types record an error at the JSON path, nothing is
// read after the first error.
//
// Thread-safety: stateless functions; the DecodeContext belongs to one decode.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/json.h"

namespace muster::kube {

// "apiVersion" and "kind", the head of every object the encoders write.
void WriteTypeMeta(JsonWriter& w, std::string_view api_version, std::string_view kind);

// The list of scheduling gates as spec.schedulingGates holds it:
// [{"name": GATE}, ...].
void WriteSchedulingGates(JsonWriter& w, const std::vector<std::string>& gates);

// True when `v` is an object to decode. Null is the zero value (false, no
// error), as Go's encoding/json reads it; any other type records an error.
bool BeginObject(DecodeContext& ctx, const JsonValue& v);

// The object at `key` verbatim as compact JSON; a non-object is an error.
bool ReadRawObject(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                   std::string* out);

// {"name": 3, ...} into a map of int32; null entries are skipped.
bool ReadInt32Map(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                  std::map<std::string, int32_t>* out);

// {"name": ["a", "b"], ...}; a null entry keeps its key with an empty list.
bool ReadStringListMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                       std::map<std::string, std::vector<std::string>>* out);

}  // namespace muster::kube
