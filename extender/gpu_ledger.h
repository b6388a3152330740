// GPU ledger: which GPUs of a node muster knows, how they are linked, and
// which of them the pods hold (issue #7; docs/topology.md).
//
// A node's topology comes from its annotation muster.io/gpu-topology, else
// from a profile keyed by its GPU feature discovery labels
// ("<nvidia.com/gpu.product>/<nvidia.com/gpu.count>"); an annotation that
// does not decode or validate makes the node topology-unknown, with the
// reason kept (never a crash, never a guess). Nodes of one model share one
// TopologyIndex (its tables are built once per distinct topology).
//
// Which GPUs a pod holds is the annotation muster.io/gpu-ids the bind wrote
// ("0,2,4,6", indices in the node's topology): a restarted extender rebuilds
// the ledger from the pods, nothing else is needed.
//
// Thread-safety: NodeGpus and GpuHolds are value types; GpuTopologies is not
// thread-safe (ClusterState owns it, under the cache's mutex).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gang/gang.h"
#include "model/gpu_topology.h"
#include "model/node.h"
#include "model/resources.h"
#include "model/status.h"
#include "topology/gpu_set.h"

namespace muster::extender {

using topology::GpuMask;

// Written into the Binding (so onto the pod) by bind: the GPUs chosen, as
// indices and as UUIDs (when the node's topology names them), both in
// ascending index order, comma-separated.
inline constexpr std::string_view kAnnotationGpuIds = "muster.io/gpu-ids";
inline constexpr std::string_view kAnnotationGpuUuids = "muster.io/gpu-uuids";
// GPU feature discovery's labels, the key of a topology profile.
inline constexpr std::string_view kLabelGpuProduct = "nvidia.com/gpu.product";
inline constexpr std::string_view kLabelGpuCount = "nvidia.com/gpu.count";

// Where a node's GPU topology came from.
enum class GpuTopologySource : uint8_t { kNone, kAnnotation, kProfile, kInvalid };
inline constexpr int kGpuTopologySources = 4;
// The sources' names, in enum order (metric labels).
inline constexpr std::array<std::string_view, kGpuTopologySources> kGpuTopologySourceNames = {
    "none", "annotation", "profile", "invalid"};
inline std::string_view GpuTopologySourceName(GpuTopologySource source) {
  return kGpuTopologySourceNames[static_cast<size_t>(source)];
}

// A TopologyIndex as the gang planner sees it (gang::GpuLayout).
class TopologyGpuLayout final : public gang::GpuLayout {
 public:
  explicit TopologyGpuLayout(topology::NodeTopology topology) : index_(std::move(topology)) {}
  const topology::TopologyIndex& index() const { return index_; }
  std::optional<gang::GpuPick> Pick(uint32_t free, int k) const override;
  int BestLink(int k) const override;

 private:
  topology::TopologyIndex index_;
};

struct NodeGpus {
  // Null when the topology is unknown (source kNone or kInvalid).
  std::shared_ptr<const TopologyGpuLayout> layout;
  // UUID per GPU index ("" unknown); null with `index`.
  std::shared_ptr<const std::vector<std::string>> uuids;
  GpuTopologySource source = GpuTopologySource::kNone;
  std::string problem;  // kInvalid: why, naming the field

  // The layout's search tables; null when the topology is unknown.
  const topology::TopologyIndex* index() const { return layout ? &layout->index() : nullptr; }
};

// How many pods hold each GPU of a node (a count, not a bit: a stale
// annotation may name a GPU twice, and removing one holder must not free it).
struct GpuHolds {
  std::array<uint8_t, 16> count{};  // saturates at 255
  void Add(GpuMask gpus, int sign);
  // The GPUs held by anyone, less one holding of each GPU in `credit`.
  GpuMask Held(GpuMask credit = 0) const;
};

// Profile key -> topology, as an admin publishes them in the ConfigMap
// muster-gpu-topology-profiles (mounted as a file; docs/topology.md).
using GpuProfiles = std::map<std::string, GpuTopologySpec, std::less<>>;
// Parses {"<product>/<count>": <the annotation's JSON>, ...}. Every profile
// must decode and validate: a bad file is refused whole, naming the key.
StatusOr<GpuProfiles> ParseGpuProfiles(std::string_view json);

// Resolves nodes' topologies, sharing one TopologyIndex per distinct
// topology (UUIDs aside).
class GpuTopologies {
 public:
  explicit GpuTopologies(GpuProfiles profiles = {});
  NodeGpus Resolve(const Node& node);
  // True when Resolve would read the same inputs from both nodes.
  static bool SameInputs(const Node& a, const Node& b);

 private:
  NodeGpus FromSpec(const GpuTopologySpec& spec, GpuTopologySource source);

  GpuProfiles profiles_;
  std::map<std::string, std::weak_ptr<const TopologyGpuLayout>, std::less<>> interned_;
};

// "0,2,4,6" <-> mask. Parse refuses anything else (indices 0..15, no
// duplicates), naming the text.
StatusOr<GpuMask> ParseGpuIds(std::string_view text);
std::string FormatGpuIds(GpuMask gpus);
// The UUIDs of `gpus` in index order, comma-separated; "" when any is unknown.
std::string FormatGpuUuids(GpuMask gpus, const std::vector<std::string>& uuids);

// The whole GPUs a request asks for (nvidia.com/gpu), 0 when none or not a
// whole number.
int GpusRequested(const Resources& request);

// The free GPUs of a node for a pod that already holds `own` there: healthy,
// held by nobody else. 0 when the topology is unknown.
GpuMask FreeGpus(const NodeGpus& gpus, const GpuHolds& holds, GpuMask own = 0);

}  // namespace muster::extender
