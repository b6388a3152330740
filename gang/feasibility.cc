#include "gang/feasibility.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace muster::gang {
namespace {

// Parses a whole label value for Gt/Lt; Kubernetes requires both sides to be
// integers and treats anything else as a non-match.
std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// One requirement against the value of its key (nullptr: the key is absent).
bool Matches(const NodeSelectorRequirement& req, const std::string* value) {
  const auto in_values = [&] {
    return value != nullptr && std::ranges::find(req.values, *value) != req.values.end();
  };
  if (req.op == "In") return in_values();
  if (req.op == "NotIn") return !in_values();
  if (req.op == "Exists") return value != nullptr;
  if (req.op == "DoesNotExist") return value == nullptr;
  if (req.op != "Gt" && req.op != "Lt") return false;  // unknown operators never match
  if (value == nullptr || req.values.size() != 1) return false;
  const std::optional<int64_t> have = ParseInt(*value);
  const std::optional<int64_t> want = ParseInt(req.values.front());
  if (!have || !want) return false;
  return req.op == "Gt" ? *have > *want : *have < *want;
}

const std::string* Label(const Node& node, const std::string& key) {
  const auto it = node.meta.labels.find(key);
  return it == node.meta.labels.end() ? nullptr : &it->second;
}

// metadata.name is the only field Kubernetes supports in matchFields.
const std::string* Field(const Node& node, const std::string& key) {
  return key == "metadata.name" ? &node.meta.name : nullptr;
}

// Requirements inside a term are ANDed; an empty term matches nothing
// (Kubernetes: "a null or empty node selector term matches no objects").
bool TermMatches(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  return std::ranges::all_of(term.match_expressions,
                             [&](const auto& r) { return Matches(r, Label(node, r.key)); }) &&
         std::ranges::all_of(term.match_fields,
                             [&](const auto& r) { return Matches(r, Field(node, r.key)); });
}

bool SelectorMatches(const Pod& pod, const Node& node) {
  for (const auto& [key, value] : pod.spec.node_selector) {
    const std::string* have = Label(node, key);
    if (have == nullptr || *have != value) return false;
  }
  return true;
}

// Required node affinity: terms are ORed; no required terms admits every node.
bool AffinityMatches(const Pod& pod, const Node& node) {
  if (!pod.spec.affinity || !pod.spec.affinity->node_affinity) return true;
  const std::vector<NodeSelectorTerm>& terms = pod.spec.affinity->node_affinity->required;
  if (terms.empty()) return true;
  return std::ranges::any_of(terms, [&](const auto& t) { return TermMatches(t, node); });
}

// Kubernetes' Toleration.ToleratesTaint: an empty effect matches every
// effect, an empty key (with Exists) every key, Exists ignores the value.
bool Tolerates(const Toleration& tol, const Taint& taint) {
  if (!tol.effect.empty() && tol.effect != taint.effect) return false;
  if (!tol.key.empty() && tol.key != taint.key) return false;
  if (tol.op == "Exists") return true;
  if (tol.op.empty() || tol.op == "Equal") return tol.value == taint.value;
  return false;
}

// PreferNoSchedule only steers scoring, so only the two hard effects count.
bool TaintsTolerated(const Pod& pod, const Node& node) {
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const auto tolerates = [&](const Toleration& t) { return Tolerates(t, taint); };
    if (!std::ranges::any_of(pod.spec.tolerations, tolerates)) return false;
  }
  return true;
}

}  // namespace

bool NodeAdmits(const NodeView& node, const Pod& pod) {
  return node.schedulable && SelectorMatches(pod, *node.node) && AffinityMatches(pod, *node.node) &&
         TaintsTolerated(pod, *node.node);
}

bool SameNodeConstraints(const Pod& a, const Pod& b) {
  return a.spec.node_selector == b.spec.node_selector && a.spec.affinity == b.spec.affinity &&
         a.spec.tolerations == b.spec.tolerations;
}

Resources SlotRequest(const Member& member) { return WithPodSlot(member.request); }

std::optional<size_t> FindNode(const ClusterView& view, std::string_view name) {
  const auto it =
      std::ranges::lower_bound(view.nodes, name, std::less<>{},
                               [](const NodeView& n) -> std::string_view { return n.name(); });
  if (it == view.nodes.end() || it->name() != name) return std::nullopt;
  return static_cast<size_t>(it - view.nodes.begin());
}

}  // namespace muster::gang
