// The kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1)
// and their codecs, field for field the Go types of its types.go.
//
// Wire rules honoured here:
//  - Keys are the Go field names in PascalCase; decoding matches keys
//    case-insensitively (Go's encoding/json does, and upstream promises
//    lower-case documents keep working). Encoding writes PascalCase.
//  - No omitempty: unset pointer/map/slice fields are written as null, and
//    null is accepted for every field. Where the model cannot tell nil from
//    empty (FailedNodesMap, MetaVictims::pods, Victims::pods) the encoder
//    writes {} / []: kube-scheduler reads nil and empty alike, builds the
//    victim slices non-nil itself, and an object is the unambiguous reply.
//    A null map entry or list element decodes as the zero value (as Go's
//    nil pointer would), a null FailedNodes reason as "".
//  - Embedded Kubernetes objects use normal API JSON (core_codec.h).
//  - In non-cache mode, nodes are echoed back verbatim (NodeWithRaw::raw_json)
//    so kube-scheduler gets exactly the Node objects it sent.
//  - Decode errors are InvalidArgument naming the type and the JSON path,
//    e.g. "decode HostPriorityList: [1].Score: expected an integer, got a
//    string".
//
// Thread-safety: value types; the codec functions are stateless.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/status.h"

namespace muster::kube {

inline constexpr int64_t kMinExtenderPriority = 0;
inline constexpr int64_t kMaxExtenderPriority = 10;

struct NodeWithRaw {
  Node node;
  // The node exactly as received (compact JSON); "null" for a null item.
  // The encoder writes it verbatim, or EncodeNodeTo(node) when it is empty.
  std::string raw_json;
  friend bool operator==(const NodeWithRaw&, const NodeWithRaw&) = default;
};

// filter and prioritize request.
struct ExtenderArgs {
  Pod pod;
  std::optional<std::vector<NodeWithRaw>> nodes;       // non-cache mode
  std::optional<std::vector<std::string>> node_names;  // nodeCacheCapable mode
  friend bool operator==(const ExtenderArgs&, const ExtenderArgs&) = default;
};

using FailedNodesMap = std::map<std::string, std::string>;

struct ExtenderFilterResult {
  std::optional<std::vector<NodeWithRaw>> nodes;
  std::optional<std::vector<std::string>> node_names;
  FailedNodesMap failed_nodes;
  FailedNodesMap failed_and_unresolvable_nodes;
  std::string error;
  friend bool operator==(const ExtenderFilterResult&, const ExtenderFilterResult&) = default;
};

struct HostPriority {
  std::string host;
  int64_t score = 0;
  friend bool operator==(const HostPriority&, const HostPriority&) = default;
};
using HostPriorityList = std::vector<HostPriority>;

struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
  friend bool operator==(const ExtenderBindingArgs&, const ExtenderBindingArgs&) = default;
};

struct ExtenderBindingResult {
  std::string error;
  friend bool operator==(const ExtenderBindingResult&, const ExtenderBindingResult&) = default;
};

struct MetaPod {
  std::string uid;
  friend bool operator==(const MetaPod&, const MetaPod&) = default;
};

struct MetaVictims {
  std::vector<MetaPod> pods;
  int64_t num_pdb_violations = 0;
  friend bool operator==(const MetaVictims&, const MetaVictims&) = default;
};

struct Victims {
  std::vector<Pod> pods;
  int64_t num_pdb_violations = 0;
  friend bool operator==(const Victims&, const Victims&) = default;
};

struct ExtenderPreemptionArgs {
  Pod pod;
  std::optional<std::map<std::string, Victims>> node_name_to_victims;
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
  friend bool operator==(const ExtenderPreemptionArgs&, const ExtenderPreemptionArgs&) = default;
};

struct ExtenderPreemptionResult {
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
  friend bool operator==(const ExtenderPreemptionResult&,
                         const ExtenderPreemptionResult&) = default;
};

// Both directions for every type: muster decodes requests and encodes
// replies; tests and benchmarks play kube-scheduler with the other half.
StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view json);
std::string EncodeExtenderArgs(const ExtenderArgs& args);

StatusOr<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json);
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);

// The filter reply of the verb's hot path, from the candidates and their
// verdicts (views into the caller's data, valid during the call) instead of
// owning maps: a reply to 5000 names costs no allocation but its text.
// Encodes exactly as EncodeExtenderFilterResult would the equivalent
// ExtenderFilterResult, with the failed maps' keys in the candidates' order
// (JSON object order carries no meaning; kube-scheduler reads them into Go
// maps).
struct FilterReplyView {
  enum class Outcome {
    kPass,          // NodeNames (cache mode) or Nodes
    kFailed,        // FailedNodes
    kUnresolvable,  // FailedAndUnresolvableNodes
  };
  struct Verdict {
    Outcome outcome = Outcome::kPass;
    std::string_view reason;  // the failed map's value
  };

  bool cache_mode = true;
  // The caller vouches that no candidate name needs escaping in JSON, so
  // none is checked (see PlainJsonStrings).
  bool plain_names = false;
  std::span<const std::string_view> names;  // the candidates, in order
  std::span<const NodeWithRaw> nodes;       // !cache_mode: their Node items (raw_json echoed)
  std::span<const Verdict> verdicts;        // the distinct verdicts
  // Per candidate, its index in `verdicts`. REQUIRES: each < verdicts.size().
  std::span<const uint32_t> verdict_of;
};
std::string EncodeFilterReplyView(const FilterReplyView& reply);

StatusOr<HostPriorityList> DecodeHostPriorityList(std::string_view json);
// Written by hand like EncodeFilterReplyView.
std::string EncodeHostPriorityList(const HostPriorityList& list);

// The prioritize reply of the verb's hot path, from the caller's names and
// scores (parallel; valid during the call) rather than a HostPriorityList
// of copies. Encodes exactly as EncodeHostPriorityList the equivalent list.
struct PriorityReplyView {
  std::span<const std::string_view> hosts;
  std::span<const int64_t> scores;  // scores[i] for hosts[i]
  // The caller vouches that no host needs escaping in JSON, so none is
  // checked (see PlainJsonStrings).
  bool plain_hosts = false;
};
std::string EncodePriorityReplyView(const PriorityReplyView& reply);

// True when no string decoded from `json` (a JSON document) can need
// escaping when written back: the document escapes nothing (no backslash),
// and JSON strings hold no raw quote or control character. One memchr: a
// request naming 5000 nodes then needs no check per name in its reply.
bool PlainJsonStrings(std::string_view json);

StatusOr<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json);
std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args);

StatusOr<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json);
std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result);

StatusOr<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json);
std::string EncodeExtenderPreemptionArgs(const ExtenderPreemptionArgs& args);

StatusOr<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json);
std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result);

}  // namespace muster::kube
