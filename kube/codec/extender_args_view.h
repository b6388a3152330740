// The filter and prioritize request (ExtenderArgs) as the extender's hot
// path reads it: the pod decoded, the candidate node names left where they
// are in the request body.
//
// A request names every candidate node: 5000 names at 5000 nodes, nearly
// all of the body. Read into a DOM and then into strings, they cost more
// than the pod and each name a copy (an allocation once a name outgrows the
// small-string buffer, as cloud node names do). kube-scheduler writes them as
// a plain array of plain strings, which a scan reads into views of the body;
// anything else goes through DecodeExtenderArgs, so the answer, errors
// included, is always the one DecodeExtenderArgs gives
// (extender_args_view_test.cc, and the extender_args fuzz target compare).
//
// Thread-safety: values; the function is stateless.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/extender_types.h"
#include "model/pod.h"
#include "model/status.h"

namespace muster::kube {

// ExtenderArgs with the names as views. Move-only: node_names may view
// decoded_names, whose strings a move keeps in place and a copy would not.
struct ExtenderArgsView {
  Pod pod;
  std::optional<std::vector<NodeWithRaw>> nodes;            // non-cache mode
  std::optional<std::vector<std::string_view>> node_names;  // nodeCacheCapable mode
  // The names when they were not plain (an escape, a null element): decoded
  // here, node_names viewing them. Empty otherwise.
  std::vector<std::string> decoded_names;

  ExtenderArgsView() = default;
  ExtenderArgsView(ExtenderArgsView&&) = default;
  ExtenderArgsView& operator=(ExtenderArgsView&&) = default;
  ExtenderArgsView(const ExtenderArgsView&) = delete;
  ExtenderArgsView& operator=(const ExtenderArgsView&) = delete;
};

// DecodeExtenderArgs(json), with NodeNames as views. A plain NodeNames (one
// top-level key matching it, an array of strings without escapes or control
// characters) is scanned and viewed in `json`; every other document is
// decoded by DecodeExtenderArgs. REQUIRES: `json` outlives the result.
StatusOr<ExtenderArgsView> DecodeExtenderArgsView(std::string_view json);

}  // namespace muster::kube
