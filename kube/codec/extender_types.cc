#include "kube/codec/extender_types.h"

#include <algorithm>
#include <utility>

#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"

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

// Appends `s` as a JSON string. Node names and muster's reasons never need
// escaping, so the common case is one copy; anything else goes through the
// JSON writer (rapidjson writes character by character, which at 5000 names
// and reasons is most of a reply's cost).
bool NeedsEscape(std::string_view s) {
  bool escape = false;  // no early exit: the loop stays a straight scan
  for (char c : s) escape |= static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
  return escape;
}

void AppendJsonString(std::string* out, std::string_view s, bool known_plain = false) {
  if (known_plain || !NeedsEscape(s)) {
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  JsonWriter w;
  w.String(s);
  out->append(w.TakeString());
}

void AppendFailedNodes(std::string* out, std::string_view key,
                       const std::vector<std::pair<std::string_view, std::string_view>>& failed) {
  out->append(",\"").append(key).append("\":{");
  // Nodes in the same state share one reason buffer: check it once.
  std::string_view plain_reason;
  for (size_t i = 0; i < failed.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(out, failed[i].first);
    out->push_back(':');
    const std::string_view reason = failed[i].second;
    bool known_plain = reason.data() == plain_reason.data() && reason.size() == plain_reason.size();
    if (!known_plain && !NeedsEscape(reason)) {
      plain_reason = reason;
      known_plain = true;
    }
    AppendJsonString(out, reason, known_plain);
  }
  out->push_back('}');
}

size_t EstimatedSize(const FilterReplyView& reply) {
  size_t size = 128;
  for (std::string_view name : reply.node_names) size += name.size() + 3;
  for (const NodeWithRaw* n : reply.nodes) size += n->raw_json.size() + 1;
  for (const auto* failed : {&reply.failed_nodes, &reply.failed_and_unresolvable_nodes}) {
    for (const auto& [node, reason] : *failed) size += node.size() + reason.size() + 6;
  }
  return size;
}

}  // namespace

// Written by hand rather than through JsonWriter: see AppendJsonString.
std::string EncodeFilterReplyView(const FilterReplyView& reply) {
  std::string out;
  out.reserve(EstimatedSize(reply));
  if (reply.cache_mode) {
    out.append("{\"Nodes\":null,\"NodeNames\":[");
    for (size_t i = 0; i < reply.node_names.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(&out, reply.node_names[i]);
    }
    out.push_back(']');
  } else {
    out.append("{\"Nodes\":{\"metadata\":{},\"items\":[");
    for (size_t i = 0; i < reply.nodes.size(); ++i) {
      if (i > 0) out.push_back(',');
      // Echo what kube-scheduler sent; a node built locally has no raw form.
      const NodeWithRaw& n = *reply.nodes[i];
      out.append(n.raw_json.empty() ? EncodeNode(n.node) : n.raw_json);
    }
    out.append("]},\"NodeNames\":null");
  }
  AppendFailedNodes(&out, "FailedNodes", reply.failed_nodes);
  AppendFailedNodes(&out, "FailedAndUnresolvableNodes", reply.failed_and_unresolvable_nodes);
  out.append(",\"Error\":\"\"}");
  return out;
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

// Written by hand like EncodeFilterReplyView: one entry per candidate node.
std::string EncodeHostPriorityList(const HostPriorityList& list) {
  std::string out;
  size_t size = 2;
  for (const HostPriority& p : list) size += p.host.size() + 36;
  out.reserve(size);
  out.push_back('[');
  for (size_t i = 0; i < list.size(); ++i) {
    out.append(i > 0 ? ",{\"Host\":" : "{\"Host\":");
    AppendJsonString(&out, list[i].host);
    out.append(",\"Score\":").append(std::to_string(list[i].score)).push_back('}');
  }
  out.push_back(']');
  return out;
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
