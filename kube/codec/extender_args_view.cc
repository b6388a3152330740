#include "kube/codec/extender_args_view.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "kube/codec/json_text.h"

namespace muster::kube {
namespace {

constexpr size_t kNone = std::string_view::npos;

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t SkipSpace(std::string_view json, size_t i) {
  while (i < json.size() && IsJsonSpace(json[i])) ++i;
  return i;
}

// REQUIRES: json[i] == '"'. Past the closing quote of the string there, or
// kNone when it holds an escape or a control character (or does not end).
// Eight bytes at a time: the names are nearly all of a 5000-node request.
size_t PlainStringEnd(std::string_view json, size_t i) {
  size_t j = i + 1;
  // (Little-endian: the lowest byte of the word is the first in the text.)
  for (; std::endian::native == std::endian::little && j + sizeof(uint64_t) <= json.size();
       j += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, json.data() + j, sizeof(word));
    if (const uint64_t stop = JsonEscapeBytes(word); stop != 0) {
      j += static_cast<size_t>(std::countr_zero(stop)) / 8;
      return json[j] == '"' ? j + 1 : kNone;
    }
  }
  for (; j < json.size(); ++j) {
    const auto c = static_cast<unsigned char>(json[j]);
    if (c == '"') return j + 1;
    if (c == '\\' || c < 0x20) return kNone;
  }
  return kNone;
}

// REQUIRES: json[i] == '"'. Past the closing quote, escapes skipped.
size_t StringEnd(std::string_view json, size_t i) {
  for (size_t j = i + 1; j < json.size(); ++j) {
    if (json[j] == '\\') {
      ++j;
    } else if (json[j] == '"') {
      return j + 1;
    }
  }
  return kNone;
}

// Past the value starting at json[i], or kNone. It only finds the value's
// end (strings and brackets), it does not check it: DecodeExtenderArgs
// reads every value but the names and rejects what is not JSON.
size_t ValueEnd(std::string_view json, size_t i) {
  if (i >= json.size()) return kNone;
  if (json[i] == '"') return StringEnd(json, i);
  if (json[i] != '{' && json[i] != '[') {
    while (i < json.size() && json[i] != ',' && json[i] != '}' && json[i] != ']' &&
           !IsJsonSpace(json[i])) {
      ++i;
    }
    return i;
  }
  size_t depth = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      i = StringEnd(json, i);
      if (i == kNone) return kNone;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  return kNone;
}

bool IsAscii(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// A plain NodeNames array: where it is in the document, and its names.
struct PlainNames {
  size_t begin = 0;  // the '['
  size_t end = 0;    // past the ']'
  std::vector<std::string_view> names;
};

// REQUIRES: json[i] == '['. The array of plain strings there, or nullopt.
std::optional<PlainNames> ScanNames(std::string_view json, size_t i) {
  PlainNames out{.begin = i};
  i = SkipSpace(json, i + 1);
  if (i < json.size() && json[i] == ']') {
    out.end = i + 1;
    return out;
  }
  while (i < json.size() && json[i] == '"') {
    const size_t end = PlainStringEnd(json, i);
    if (end == kNone) return std::nullopt;
    out.names.push_back(json.substr(i + 1, end - i - 2));
    i = SkipSpace(json, end);
    if (i >= json.size()) return std::nullopt;
    if (json[i] == ']') {
      out.end = i + 1;
      return out;
    }
    if (json[i] != ',') return std::nullopt;
    i = SkipSpace(json, i + 1);
  }
  return std::nullopt;
}

// The document's one plain NodeNames array, when its top level is an object
// of plain ASCII keys with exactly one key that Go's case-insensitive match
// reads as NodeNames, holding such an array. nullopt for anything else
// (no names, null, escapes, duplicates): the full decoder takes those.
std::optional<PlainNames> FindPlainNames(std::string_view json) {
  std::optional<PlainNames> found;
  size_t i = SkipSpace(json, 0);
  if (i >= json.size() || json[i] != '{') return std::nullopt;
  i = SkipSpace(json, i + 1);
  while (i < json.size() && json[i] == '"') {
    const size_t key_end = PlainStringEnd(json, i);
    if (key_end == kNone) return std::nullopt;
    const std::string_view key = json.substr(i + 1, key_end - i - 2);
    if (!IsAscii(key)) return std::nullopt;
    i = SkipSpace(json, key_end);
    if (i >= json.size() || json[i] != ':') return std::nullopt;
    i = SkipSpace(json, i + 1);
    if (EqualsIgnoreCase(key, "NodeNames")) {
      // (a second one: the full decoder picks, as Member() does)
      if (found.has_value() || i >= json.size() || json[i] != '[') return std::nullopt;
      found = ScanNames(json, i);
      if (!found.has_value()) return std::nullopt;
      i = found->end;
    } else {
      i = ValueEnd(json, i);
      if (i == kNone) return std::nullopt;
    }
    i = SkipSpace(json, i);
    if (i < json.size() && json[i] == ',') {
      i = SkipSpace(json, i + 1);
      continue;
    }
    if (i < json.size() && json[i] == '}') return found;
    return std::nullopt;
  }
  return std::nullopt;
}

ExtenderArgsView ViewOf(ExtenderArgs args) {
  ExtenderArgsView view;
  view.pod = std::move(args.pod);
  view.nodes = std::move(args.nodes);
  if (args.node_names.has_value()) {
    view.decoded_names = std::move(*args.node_names);
    view.node_names.emplace(view.decoded_names.begin(), view.decoded_names.end());
  }
  return view;
}

}  // namespace

StatusOr<ExtenderArgsView> DecodeExtenderArgsView(std::string_view json) {
  if (std::optional<PlainNames> plain = FindPlainNames(json)) {
    // The rest of the document, the names' array replaced by null (absent,
    // to the decoder): the pod, Nodes, and the check that all of it is JSON.
    std::string rest;
    rest.reserve(json.size() - (plain->end - plain->begin) + 4);
    rest.append(json.substr(0, plain->begin)).append("null").append(json.substr(plain->end));
    StatusOr<ExtenderArgs> args = DecodeExtenderArgs(rest);
    if (args.ok()) {
      ExtenderArgsView view = ViewOf(*std::move(args));
      view.node_names = std::move(plain->names);
      return view;
    }
    // Not JSON after all: the full decoder words the error for the document.
  }
  StatusOr<ExtenderArgs> args = DecodeExtenderArgs(json);
  if (!args.ok()) return args.status();
  return ViewOf(*std::move(args));
}

}  // namespace muster::kube
