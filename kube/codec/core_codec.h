// JSON <-> model for core/v1 objects: Pod, Node, Binding, Eviction, Event,
// and the list wrappers the API server returns (PodList, NodeList).
//
// Decoders never throw and never abort on hostile input: a malformed document
// yields InvalidArgument naming the JSON path of the first bad field, e.g.
// `decode Pod: spec.containers[1].resources.requests["nvidia.com/gpu"]:
// quantity "0.5" of nvidia.com/gpu is not a whole number`.
//
// Decode*From(ctx, value, out) forms decode an already-parsed value (used by
// list, watch and extender codecs); the string forms parse a whole document.
// Encoders write Kubernetes JSON (camelCase, omitempty) for the fields the
// model holds; they are used for creates and golden tests, never for a full
// PUT of a decoded object.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/json.h"
#include "model/api_objects.h"
#include "model/node.h"
#include "model/pod.h"

namespace muster::kube {

// A list response: the items and the list's metadata.
template <typename T>
struct ObjectList {
  std::string resource_version;
  std::string continue_token;  // metadata.continue; "" on the last page
  std::vector<T> items;
};

// The Decode*From functions accept null (the output keeps its defaults) and
// record an error for any other non-object value. The Encode* functions below
// that take a JsonWriter write one JSON value; the caller writes its key.
void DecodeObjectMetaFrom(DecodeContext& ctx, const JsonValue& v, ObjectMeta* out);
void EncodeObjectMeta(JsonWriter& w, const ObjectMeta& meta);
// The identity of any object - metadata.namespace, name, uid,
// resourceVersion and generation - each read on its own, so that an object
// whose full decode fails can still be named and answered (a patch, an
// Event). A field that is absent or of the wrong type stays empty (0); a
// document that is not a JSON object yields an empty ObjectMeta.
ObjectMeta DecodeObjectIdentity(std::string_view json);
void DecodeConditionFrom(DecodeContext& ctx, const JsonValue& v, Condition* out);
void EncodeCondition(JsonWriter& w, const Condition& c);
void DecodeOwnerReferenceFrom(DecodeContext& ctx, const JsonValue& v, OwnerReference* out);
void EncodeOwnerReference(JsonWriter& w, const OwnerReference& ref);

void DecodePodFrom(DecodeContext& ctx, const JsonValue& v, Pod* out);
void DecodePodSpecFrom(DecodeContext& ctx, const JsonValue& v, PodSpec* out);
StatusOr<Pod> DecodePod(std::string_view json);
StatusOr<ObjectList<Pod>> DecodePodList(std::string_view json);
std::string EncodePod(const Pod& pod);
void EncodePodTo(JsonWriter& w, const Pod& pod);
void EncodePodSpec(JsonWriter& w, const PodSpec& spec);

void DecodeNodeFrom(DecodeContext& ctx, const JsonValue& v, Node* out);
StatusOr<Node> DecodeNode(std::string_view json);
StatusOr<ObjectList<Node>> DecodeNodeList(std::string_view json);
std::string EncodeNode(const Node& node);
void EncodeNodeTo(JsonWriter& w, const Node& node);

// Binding and Eviction decoders read the metadata their encoders write (name,
// namespace, and for Binding uid and annotations); other metadata is ignored.
StatusOr<Binding> DecodeBinding(std::string_view json);
std::string EncodeBinding(const Binding& binding);

StatusOr<Eviction> DecodeEviction(std::string_view json);
std::string EncodeEviction(const Eviction& eviction);

// A merge patch that sets annotations on one object:
//   {"metadata":{"uid":UID,"annotations":{KEY:VALUE,...}}}
// uid_precondition, when set, makes the server refuse the patch (409) if the
// object was deleted and re-created under the same name meanwhile; keys are
// written in map order.
std::string EncodeAnnotationsPatch(const std::map<std::string, std::string>& annotations,
                                   std::string_view uid_precondition = {});

// The JSON patch (RFC 6902) that sets a pod's spec.schedulingGates to
// `gates`, in order: "add" replaces the member when present, so the gates
// the pod has must be listed (the admission webhook's, which can only add
// gates at creation):
//   [{"op":"add","path":"/spec/schedulingGates","value":[{"name":G},...]}]
std::string EncodeSchedulingGatesPatch(const std::vector<std::string>& gates);

// The JSON patch (RFC 6902) that lifts scheduling gate `gate` at `index` of
// a pod's spec.schedulingGates, guarded by a test so a list changed
// meanwhile fails the patch rather than removing another gate:
//   [{"op":"test","path":"/spec/schedulingGates/I/name","value":GATE},
//    {"op":"remove","path":"/spec/schedulingGates/I"}]
// With `pin_node`, the same patch first tests that the pod has no affinity
// and adds one requiring that node by metadata.name (allowed while the pod
// is gated, KEP-3838).
std::string EncodeLiftGatePatch(size_t index, std::string_view gate,
                                std::string_view pin_node = {});

StatusOr<Event> DecodeEvent(std::string_view json);
StatusOr<ObjectList<Event>> DecodeEventList(std::string_view json);
std::string EncodeEvent(const Event& event);

// Decodes {"metadata": {"resourceVersion", "continue"}, "items": [...]}.
template <typename T, typename Fn>
void DecodeListFrom(DecodeContext& ctx, const JsonValue& v, ObjectList<T>* out, Fn&& decode_item) {
  ReadObject(ctx, v, "metadata", out, [](DecodeContext& c, const JsonValue& m, ObjectList<T>* l) {
    ReadString(c, m, "resourceVersion", &l->resource_version);
    ReadString(c, m, "continue", &l->continue_token);
  });
  ReadArray(ctx, v, "items", &out->items, decode_item);
}

}  // namespace muster::kube
