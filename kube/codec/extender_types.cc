#include "kube/codec/extender_types.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/json_text.h"

namespace muster::kube {
namespace {

// Every extender decoder matches keys ignoring case, as Go's encoding/json does.
constexpr bool kCaseInsensitive = true;

// ---------------------------------------------------------------------------
// Decoding helpers.

// One NodeList item: kept verbatim for the echo in non-cache mode, and decoded.
// A null item reads as a zero Node (Go leaves a struct untouched on null).
void DecodeNodeWithRaw(DecodeContext& ctx, const JsonValue& v, NodeWithRaw* out) {
  out->raw_json = ToCompactJson(v);
  if (v.IsNull()) return;
  if (!ExpectObject(ctx, v)) return;
  DecodeNodeFrom(ctx, v, &out->node);
}

// A *v1.NodeList ({"metadata": {}, "items": [...]}); null leaves *out unset.
void ReadNodeList(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                  std::optional<std::vector<NodeWithRaw>>* out) {
  const JsonValue* list = Member(ctx, obj, key);
  if (list == nullptr || ctx.failed()) return;
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *list)) return;
  std::vector<NodeWithRaw> nodes;
  // "items" is read by hand rather than with ReadArray: each element is also
  // kept as raw JSON, and a null element is a zero Node, not an error.
  if (const JsonValue* items = Member(ctx, *list, "items"); items != nullptr) {
    auto items_scope = ctx.Key("items");
    if (!ExpectArray(ctx, *items)) return;
    nodes.resize(items->Size());
    for (rapidjson::SizeType i = 0; i < items->Size() && !ctx.failed(); ++i) {
      auto index_scope = ctx.Index(i);
      DecodeNodeWithRaw(ctx, (*items)[i], &nodes[i]);
    }
  }
  if (!ctx.failed()) *out = std::move(nodes);
}

// A *[]string; null leaves *out unset, [] sets it to an empty list.
void ReadOptionalStringList(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                            std::optional<std::vector<std::string>>* out) {
  if (Member(ctx, obj, key) == nullptr) return;
  std::vector<std::string> list;
  if (ReadStringList(ctx, obj, key, &list)) *out = std::move(list);
}

// A map[string]string. Unlike ReadStringMap, a null value keeps its key with
// an empty reason: Go's decoder does the same, and a node named in FailedNodes
// is filtered out whatever its reason says.
void ReadFailedNodes(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                     FailedNodesMap* out) {
  const JsonValue* map = Member(ctx, obj, key);
  if (map == nullptr || ctx.failed()) return;
  auto scope = ctx.Key(key);
  if (!ExpectObject(ctx, *map)) return;
  FailedNodesMap result;
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string reason;
    if (it->value.IsString()) {
      reason.assign(it->value.GetString(), it->value.GetStringLength());
    } else if (!it->value.IsNull()) {
      return ctx.FailAt(name, std::string("expected a string, got ") + JsonTypeName(it->value));
    }
    result.insert_or_assign(std::move(name), std::move(reason));
  }
  *out = std::move(result);
}

// Decodes a Pod, accepting null as the zero Pod (the element of a []*v1.Pod).
void DecodePodOrNull(DecodeContext& ctx, const JsonValue& v, Pod* out) {
  if (v.IsNull()) return;
  if (!ExpectObject(ctx, v)) return;
  DecodePodFrom(ctx, v, out);
}

void DecodeMetaPod(DecodeContext& ctx, const JsonValue& v, MetaPod* out) {
  if (v.IsNull()) return;
  if (!ExpectObject(ctx, v)) return;
  ReadString(ctx, v, "UID", &out->uid);
}

void DecodeMetaVictims(DecodeContext& ctx, const JsonValue& v, MetaVictims* out) {
  if (!ExpectObject(ctx, v)) return;
  ReadArray(ctx, v, "Pods", &out->pods, DecodeMetaPod);
  ReadInt64(ctx, v, "NumPDBViolations", &out->num_pdb_violations);
}

void DecodeVictims(DecodeContext& ctx, const JsonValue& v, Victims* out) {
  if (!ExpectObject(ctx, v)) return;
  ReadArray(ctx, v, "Pods", &out->pods, DecodePodOrNull);
  ReadInt64(ctx, v, "NumPDBViolations", &out->num_pdb_violations);
}

// A map[string]*T; null leaves *out unset. A null entry is kept as a zero T
// (ReadObjectMap does that), which is how kube-scheduler reads a nil pointer.
template <typename T, typename Fn>
void ReadOptionalObjectMap(DecodeContext& ctx, const JsonValue& obj, std::string_view key,
                           std::optional<std::map<std::string, T>>* out, Fn&& decode) {
  if (Member(ctx, obj, key) == nullptr) return;
  std::map<std::string, T> map;
  if (ReadObjectMap(ctx, obj, key, &map, decode)) *out = std::move(map);
}

void ReadPod(DecodeContext& ctx, const JsonValue& obj, Pod* out) {
  ReadObject(ctx, obj, "Pod", out, DecodePodFrom);
}

void DecodeArgsFrom(DecodeContext& ctx, const JsonValue& v, ExtenderArgs* out) {
  ReadPod(ctx, v, &out->pod);
  ReadNodeList(ctx, v, "Nodes", &out->nodes);
  ReadOptionalStringList(ctx, v, "NodeNames", &out->node_names);
}

void DecodeFilterResultFrom(DecodeContext& ctx, const JsonValue& v, ExtenderFilterResult* out) {
  ReadNodeList(ctx, v, "Nodes", &out->nodes);
  ReadOptionalStringList(ctx, v, "NodeNames", &out->node_names);
  ReadFailedNodes(ctx, v, "FailedNodes", &out->failed_nodes);
  ReadFailedNodes(ctx, v, "FailedAndUnresolvableNodes", &out->failed_and_unresolvable_nodes);
  ReadString(ctx, v, "Error", &out->error);
}

void DecodeHostPriority(DecodeContext& ctx, const JsonValue& v, HostPriority* out) {
  if (v.IsNull()) return;
  if (!ExpectObject(ctx, v)) return;
  ReadString(ctx, v, "Host", &out->host);
  ReadInt64(ctx, v, "Score", &out->score);
}

void DecodeBindingArgsFrom(DecodeContext& ctx, const JsonValue& v, ExtenderBindingArgs* out) {
  ReadString(ctx, v, "PodName", &out->pod_name);
  ReadString(ctx, v, "PodNamespace", &out->pod_namespace);
  ReadString(ctx, v, "PodUID", &out->pod_uid);
  ReadString(ctx, v, "Node", &out->node);
}

void DecodeBindingResultFrom(DecodeContext& ctx, const JsonValue& v, ExtenderBindingResult* out) {
  ReadString(ctx, v, "Error", &out->error);
}

void DecodePreemptionArgsFrom(DecodeContext& ctx, const JsonValue& v, ExtenderPreemptionArgs* out) {
  ReadPod(ctx, v, &out->pod);
  ReadOptionalObjectMap(ctx, v, "NodeNameToVictims", &out->node_name_to_victims, DecodeVictims);
  ReadOptionalObjectMap(ctx, v, "NodeNameToMetaVictims", &out->node_name_to_meta_victims,
                        DecodeMetaVictims);
}

void DecodePreemptionResultFrom(DecodeContext& ctx, const JsonValue& v,
                                ExtenderPreemptionResult* out) {
  ReadOptionalObjectMap(ctx, v, "NodeNameToMetaVictims", &out->node_name_to_meta_victims,
                        DecodeMetaVictims);
}

// ---------------------------------------------------------------------------
// Encoding helpers. Keys are PascalCase and nothing is omitted: an unset
// optional is written as null, as Go marshals a nil pointer, map or slice.

// Opens a NodeList object up to its items array; the caller closes both.
void StartNodeList(JsonWriter& w) {
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("items");
  w.StartArray();
}

void WriteNodeItem(JsonWriter& w, const NodeWithRaw& n) {
  // Echo what kube-scheduler sent; a node built locally has no raw form.
  if (n.raw_json.empty()) {
    EncodeNodeTo(w, n.node);
  } else {
    w.RawValue(n.raw_json);
  }
}

void WriteNodeList(JsonWriter& w, std::string_view key,
                   const std::optional<std::vector<NodeWithRaw>>& nodes) {
  w.Key(key);
  if (!nodes) return w.Null();
  StartNodeList(w);
  for (const NodeWithRaw& n : *nodes) WriteNodeItem(w, n);
  w.EndArray();
  w.EndObject();
}

void WriteOptionalStringList(JsonWriter& w, std::string_view key,
                             const std::optional<std::vector<std::string>>& list) {
  w.Key(key);
  if (!list) return w.Null();
  w.StartArray();
  for (const std::string& s : *list) w.String(s);
  w.EndArray();
}

// Always an object, {} when empty: Go would write null for a nil map, but the
// reader treats both alike and an object is the unambiguous reply.
void WriteFailedNodes(JsonWriter& w, std::string_view key, const FailedNodesMap& map) {
  w.Key(key);
  w.StartObject();
  for (const auto& [node, reason] : map) w.StringField(node, reason);
  w.EndObject();
}

void WriteMetaVictims(JsonWriter& w, const MetaVictims& victims) {
  w.StartObject();
  w.Key("Pods");
  w.StartArray();  // kube-scheduler builds this slice non-nil: [] when empty
  for (const MetaPod& pod : victims.pods) {
    w.StartObject();
    w.StringField("UID", pod.uid);
    w.EndObject();
  }
  w.EndArray();
  w.IntField("NumPDBViolations", victims.num_pdb_violations);
  w.EndObject();
}

void WriteVictims(JsonWriter& w, const Victims& victims) {
  w.StartObject();
  w.Key("Pods");
  w.StartArray();
  for (const Pod& pod : victims.pods) EncodePodTo(w, pod);
  w.EndArray();
  w.IntField("NumPDBViolations", victims.num_pdb_violations);
  w.EndObject();
}

template <typename T, typename Fn>
void WriteOptionalMap(JsonWriter& w, std::string_view key,
                      const std::optional<std::map<std::string, T>>& map, Fn&& write_value) {
  w.Key(key);
  if (!map) return w.Null();
  w.StartObject();
  for (const auto& [name, value] : *map) {
    w.Key(name);
    write_value(w, value);
  }
  w.EndObject();
}

void WritePod(JsonWriter& w, const Pod& pod) {
  w.Key("Pod");
  EncodePodTo(w, pod);
}

}  // namespace

// The extender's hottest request (a filter or prioritize names every
// candidate node): parsed in place, like DecodeDocument otherwise.
StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view json) {
  constexpr std::string_view kWhat = "decode ExtenderArgs";
  std::string buffer(json);
  rapidjson::Document doc;
  if (Status parsed = ParseDocumentInPlace(&buffer, &doc); !parsed.ok()) {
    return parsed.Annotate(kWhat);
  }
  DecodeContext ctx(kCaseInsensitive);
  ExtenderArgs out;
  if (ExpectObject(ctx, doc)) DecodeArgsFrom(ctx, doc, &out);
  if (ctx.failed()) return ctx.status().Annotate(kWhat);
  return out;
}

std::string EncodeExtenderArgs(const ExtenderArgs& args) {
  JsonWriter w;
  w.StartObject();
  WritePod(w, args.pod);
  WriteNodeList(w, "Nodes", args.nodes);
  WriteOptionalStringList(w, "NodeNames", args.node_names);
  w.EndObject();
  return w.TakeString();
}

StatusOr<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json) {
  return DecodeDocument<ExtenderFilterResult>(json, "decode ExtenderFilterResult",
                                              DecodeFilterResultFrom, kCaseInsensitive);
}

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  JsonWriter w;
  w.StartObject();
  WriteNodeList(w, "Nodes", result.nodes);
  WriteOptionalStringList(w, "NodeNames", result.node_names);
  WriteFailedNodes(w, "FailedNodes", result.failed_nodes);
  WriteFailedNodes(w, "FailedAndUnresolvableNodes", result.failed_and_unresolvable_nodes);
  w.StringField("Error", result.error);
  w.EndObject();
  return w.TakeString();
}

namespace {

// The hot replies (a filter or prioritize answer names every candidate) are
// written by hand rather than through JsonWriter, which writes character by
// character: each is written twice by one routine over two sinks, first
// measuring (MeasureSink), then copying every piece into a buffer allocated
// once at the measured size (WriteSink). Strings are checked for escaping
// once, in the measuring pass; node names and muster's reasons never need it.

// True when `s` has a byte rapidjson's writer escapes: below 0x20, '"' or
// '\\'. Checks eight bytes at a time (a reply holds thousands of names).
bool NeedsEscape(std::string_view s) {
  const auto word_at = [&s](size_t i) {
    uint64_t v;
    std::memcpy(&v, s.data() + i, sizeof(v));
    return v;
  };
  if (s.size() < 8) {
    bool escape = false;
    for (char c : s) escape |= static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
    return escape;
  }
  uint64_t found = 0;
  for (size_t i = 0; i + 8 <= s.size(); i += 8) found |= JsonEscapeBytes(word_at(i));
  // The last (partial) word, read as the last eight bytes: a padded copy
  // would stall on store forwarding.
  found |= JsonEscapeBytes(word_at(s.size() - 8));
  return found != 0;
}

// `s` as a JSON string, escaped as rapidjson escapes it.
std::string EscapedString(std::string_view s) {
  JsonWriter w;
  w.String(s);
  return w.TakeString();
}

// Pass 1: the exact size of the text, and whether every string is plain.
// With `plain_names`, the caller vouches that no node name needs escaping.
class MeasureSink {
 public:
  explicit MeasureSink(bool plain_names) : plain_names_(plain_names) {}
  void Char(char /*c*/) { ++size_; }
  void Raw(std::string_view s) { size_ += s.size(); }
  template <size_t N>
  void Raw(const char (&/*literal*/)[N]) {
    size_ += N - 1;
  }
  void String(std::string_view s) { size_ += StringSize(s); }
  void Name(std::string_view s) { size_ += plain_names_ ? s.size() + 2 : StringSize(s); }
  // A failed node's reason: the nodes in one state share one reason buffer,
  // and a reply has few states, so each buffer is checked about once.
  void Reason(std::string_view s) {
    for (size_t i = 0; i < std::min(next_seen_, seen_.size()); ++i) {
      if (seen_[i].reason.data() == s.data() && seen_[i].reason.size() == s.size()) {
        size_ += seen_[i].size;
        return;
      }
    }
    const size_t size = StringSize(s);
    seen_[next_seen_++ % seen_.size()] = Seen{.reason = s, .size = size};
    size_ += size;
  }
  size_t size() const { return size_; }
  bool plain() const { return plain_; }

 private:
  struct Seen {
    std::string_view reason;
    size_t size = 0;
  };
  size_t StringSize(std::string_view s) {
    if (!NeedsEscape(s)) return s.size() + 2;
    plain_ = false;
    return EscapedString(s).size();
  }

  const bool plain_names_;
  size_t size_ = 0;
  bool plain_ = true;
  std::array<Seen, 8> seen_{};
  size_t next_seen_ = 0;
};

// memcpy(dst, src, n), inline for the short pieces a reply is made of
// (names, reasons): a call to memcpy per piece cost 30 us of a prioritize
// reply to 5000 names.
void CopyShort(char* dst, const char* src, size_t n) {
  if (n > 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {  // two overlapping words
    uint64_t head;
    uint64_t tail;
    std::memcpy(&head, src, 8);
    std::memcpy(&tail, src + n - 8, 8);
    std::memcpy(dst, &head, 8);
    std::memcpy(dst + n - 8, &tail, 8);
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// Pass 2: the bytes, into [begin, end). Never writes past `end` (the passes
// run the same routine, so it never has to stop). With `plain` (every
// string of pass 1 was), no string is checked again.
class WriteSink {
 public:
  WriteSink(char* begin, char* end, bool plain) : p_(begin), end_(end), plain_(plain) {}
  void Char(char c) {
    if (p_ < end_) *p_++ = c;
  }
  void Raw(std::string_view s) {
    const size_t n = std::min(s.size(), static_cast<size_t>(end_ - p_));
    CopyShort(p_, s.data(), n);
    p_ += n;
  }
  // A literal: a copy of known size, which the compiler inlines.
  template <size_t N>
  void Raw(const char (&literal)[N]) {
    if (static_cast<size_t>(end_ - p_) < N - 1) return Raw(std::string_view(literal, N - 1));
    std::memcpy(p_, literal, N - 1);
    p_ += N - 1;
  }
  void String(std::string_view s) {
    if (plain_ || !NeedsEscape(s)) {
      Char('"');
      Raw(s);
      Char('"');
    } else {
      Raw(EscapedString(s));
    }
  }
  void Name(std::string_view s) { String(s); }
  void Reason(std::string_view s) { String(s); }

 private:
  char* p_;
  char* const end_;
  const bool plain_;
};

// Runs write(sink) over both passes and returns the text.
template <typename Fn>
std::string WriteTwice(bool plain_names, Fn&& write) {
  MeasureSink measure(plain_names);
  write(measure);
  std::string out(measure.size(), '\0');
  WriteSink sink(out.data(), out.data() + out.size(), measure.plain());
  write(sink);
  return out;
}

// The candidates of a FilterReplyView by the outcome of their verdict, in
// order: sorted out once, so the writing passes run no unpredictable branch
// per candidate (three lists times two passes of mispredicted branches cost
// 50 us at 5000 names).
class ByOutcome {
 public:
  explicit ByOutcome(const FilterReplyView& reply) {
    size_t size = std::min(reply.names.size(), reply.verdict_of.size());
    if (!reply.cache_mode) size = std::min(size, reply.nodes.size());
    std::array<size_t, 3> count{};
    for (size_t i = 0; i < size; ++i) ++count[Index(reply, i)];
    for (size_t o = 0; o < lists_.size(); ++o) lists_[o].reserve(count[o]);
    for (size_t i = 0; i < size; ++i) lists_[Index(reply, i)].push_back(static_cast<uint32_t>(i));
  }
  const std::vector<uint32_t>& of(FilterReplyView::Outcome outcome) const {
    return lists_[static_cast<size_t>(outcome)];
  }

 private:
  static size_t Index(const FilterReplyView& reply, size_t i) {
    return static_cast<size_t>(reply.verdicts[reply.verdict_of[i]].outcome);
  }

  std::array<std::vector<uint32_t>, 3> lists_;  // by Outcome
};

template <typename Sink>
void WriteFailedNodesView(Sink& out, std::string_view key, const FilterReplyView& reply,
                          const std::vector<uint32_t>& failed) {
  out.Raw(",\"");
  out.Raw(key);
  out.Raw("\":{");
  for (size_t k = 0; k < failed.size(); ++k) {
    if (k > 0) out.Char(',');
    const uint32_t i = failed[k];
    out.Name(reply.names[i]);
    out.Char(':');
    out.Reason(reply.verdicts[reply.verdict_of[i]].reason);
  }
  out.Char('}');
}

template <typename Sink>
void WriteFilterReplyView(Sink& out, const FilterReplyView& reply, const ByOutcome& by) {
  using Outcome = FilterReplyView::Outcome;
  const std::vector<uint32_t>& pass = by.of(Outcome::kPass);
  if (reply.cache_mode) {
    out.Raw("{\"Nodes\":null,\"NodeNames\":[");
    for (size_t k = 0; k < pass.size(); ++k) {
      if (k > 0) out.Char(',');
      out.Name(reply.names[pass[k]]);
    }
    out.Char(']');
  } else {
    out.Raw("{\"Nodes\":{\"metadata\":{},\"items\":[");
    for (size_t k = 0; k < pass.size(); ++k) {
      if (k > 0) out.Char(',');
      // Echo what kube-scheduler sent; a node built locally has no raw form.
      const NodeWithRaw& n = reply.nodes[pass[k]];
      if (n.raw_json.empty()) {
        out.Raw(EncodeNode(n.node));
      } else {
        out.Raw(n.raw_json);
      }
    }
    out.Raw("]},\"NodeNames\":null");
  }
  WriteFailedNodesView(out, "FailedNodes", reply, by.of(Outcome::kFailed));
  WriteFailedNodesView(out, "FailedAndUnresolvableNodes", reply, by.of(Outcome::kUnresolvable));
  out.Raw(",\"Error\":\"\"}");
}

// host(i) and score(i) for i in [0, size).
template <typename Sink, typename Host, typename Score>
void WriteHostPriorities(Sink& out, size_t size, Host&& host, Score&& score) {
  out.Char('[');
  for (size_t i = 0; i < size; ++i) {
    if (i > 0) out.Char(',');
    out.Raw("{\"Host\":");
    out.Name(host(i));
    out.Raw(",\"Score\":");
    char digits[24];
    const auto written = std::to_chars(digits, digits + sizeof(digits), score(i));
    out.Raw(std::string_view(digits, static_cast<size_t>(written.ptr - digits)));
    out.Char('}');
  }
  out.Char(']');
}

}  // namespace

std::string EncodeFilterReplyView(const FilterReplyView& reply) {
  const ByOutcome by(reply);
  return WriteTwice(reply.plain_names, [&](auto& sink) { WriteFilterReplyView(sink, reply, by); });
}

// The one extender document whose root is an array, so it does not go
// through DecodeDocument. A null root is an empty list, as in Go.
StatusOr<HostPriorityList> DecodeHostPriorityList(std::string_view json) {
  constexpr std::string_view kWhat = "decode HostPriorityList";
  rapidjson::Document doc;
  if (Status parsed = ParseDocument(json, &doc); !parsed.ok()) return parsed.Annotate(kWhat);
  DecodeContext ctx(kCaseInsensitive);
  HostPriorityList list;
  if (!doc.IsNull() && ExpectArray(ctx, doc)) {
    list.resize(doc.Size());
    for (rapidjson::SizeType i = 0; i < doc.Size() && !ctx.failed(); ++i) {
      auto scope = ctx.Index(i);
      DecodeHostPriority(ctx, doc[i], &list[i]);
    }
  }
  if (ctx.failed()) return ctx.status().Annotate(kWhat);
  return list;
}

bool PlainJsonStrings(std::string_view json) { return json.find('\\') == std::string_view::npos; }

// Written by hand like EncodeFilterReplyView: one entry per candidate node.
std::string EncodeHostPriorityList(const HostPriorityList& list) {
  return WriteTwice(/*plain_names=*/false, [&](auto& sink) {
    WriteHostPriorities(
        sink, list.size(), [&](size_t i) -> std::string_view { return list[i].host; },
        [&](size_t i) { return list[i].score; });
  });
}

std::string EncodePriorityReplyView(const PriorityReplyView& reply) {
  const size_t size = std::min(reply.hosts.size(), reply.scores.size());
  return WriteTwice(reply.plain_hosts, [&](auto& sink) {
    WriteHostPriorities(
        sink, size, [&](size_t i) -> std::string_view { return reply.hosts[i]; },
        [&](size_t i) { return reply.scores[i]; });
  });
}

StatusOr<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json) {
  return DecodeDocument<ExtenderBindingArgs>(json, "decode ExtenderBindingArgs",
                                             DecodeBindingArgsFrom, kCaseInsensitive);
}

std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args) {
  JsonWriter w;
  w.StartObject();
  w.StringField("PodName", args.pod_name);
  w.StringField("PodNamespace", args.pod_namespace);
  w.StringField("PodUID", args.pod_uid);
  w.StringField("Node", args.node);
  w.EndObject();
  return w.TakeString();
}

StatusOr<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json) {
  return DecodeDocument<ExtenderBindingResult>(json, "decode ExtenderBindingResult",
                                               DecodeBindingResultFrom, kCaseInsensitive);
}

std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result) {
  JsonWriter w;
  w.StartObject();
  w.StringField("Error", result.error);
  w.EndObject();
  return w.TakeString();
}

StatusOr<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json) {
  return DecodeDocument<ExtenderPreemptionArgs>(json, "decode ExtenderPreemptionArgs",
                                                DecodePreemptionArgsFrom, kCaseInsensitive);
}

std::string EncodeExtenderPreemptionArgs(const ExtenderPreemptionArgs& args) {
  JsonWriter w;
  w.StartObject();
  WritePod(w, args.pod);
  WriteOptionalMap(w, "NodeNameToVictims", args.node_name_to_victims, WriteVictims);
  WriteOptionalMap(w, "NodeNameToMetaVictims", args.node_name_to_meta_victims, WriteMetaVictims);
  w.EndObject();
  return w.TakeString();
}

StatusOr<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json) {
  return DecodeDocument<ExtenderPreemptionResult>(json, "decode ExtenderPreemptionResult",
                                                  DecodePreemptionResultFrom, kCaseInsensitive);
}

std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result) {
  JsonWriter w;
  w.StartObject();
  WriteOptionalMap(w, "NodeNameToMetaVictims", result.node_name_to_meta_victims, WriteMetaVictims);
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
