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
// ("0,2,4,6", indices in the node's topology) and, for a pod sharing GPUs
// (model/gpu_share.h), muster.io/gpu-shares (which GPU, how much compute
// and memory): a restarted extender rebuilds the ledger from the pods,
// nothing else is needed.
//
// GPU sharing needs every GPU of a node told apart (NodeGpus::cards): from
// its topology, else Volcano's vGPU registration
// (volcano.sh/node-vgpu-register: UUIDs, memory, sharer limits), else its
// allocatable nvidia.com/gpu (indices only). A GPU's memory, when no
// registration gives it, is GPU feature discovery's label
// nvidia.com/gpu.memory (MiB). A node whose topology annotation is invalid
// has no cards: its GPUs are counted, not chosen, and not shared.
//
// Thread-safety: NodeGpus and GpuHolds are value types; GpuTopologies is not
// thread-safe (ClusterState owns it, under the cache's mutex).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gang/gang.h"
#include "model/gpu_share.h"
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
// What a container's NVIDIA_VISIBLE_DEVICES takes (downward API): the UUIDs
// when the node names them all, else the indices - the NVIDIA container
// runtime reads either.
inline constexpr std::string_view kAnnotationVisibleDevices = "muster.io/visible-devices";
// GPU feature discovery's labels, the key of a topology profile, and the
// memory of each GPU in MiB.
inline constexpr std::string_view kLabelGpuProduct = "nvidia.com/gpu.product";
inline constexpr std::string_view kLabelGpuCount = "nvidia.com/gpu.count";
inline constexpr std::string_view kLabelGpuMemory = "nvidia.com/gpu.memory";

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
  GpuTopologySource source = GpuTopologySource::kNone;
  std::string problem;  // kInvalid: why, naming the field
  // Every GPU the node's GPUs are told apart by, index i = GPU i (uuid ""
  // when unknown); null when none are (no GPUs, an invalid topology).
  std::shared_ptr<const std::vector<GpuCard>> cards;
  // Volcano's vGPU device plugin registered the node's GPUs.
  bool vgpu = false;
  // Why the node's vGPU registration is not used ("" when there is none or
  // it is): it does not decode, or names other GPUs than the topology.
  std::string vgpu_problem;

  // The layout's search tables; null when the topology is unknown.
  const topology::TopologyIndex* index() const { return layout ? &layout->index() : nullptr; }
  int count() const { return cards ? static_cast<int>(cards->size()) : 0; }
  // The healthy GPUs among `cards`, kept with them (Resolve): filter and
  // prioritize read it for every node of every request.
  GpuMask healthy = 0;
  GpuMask Healthy() const { return healthy; }
};

// What the pods hold of each GPU of a node: holders of whole GPUs (a count,
// not a bit: a stale annotation may name a GPU twice, and removing one holder
// must not free it) and the sharers' compute and memory.
struct GpuHolds {
  GpuUses uses{};
  void Add(const GpuHolding& holding, int sign) { AccountHolding(uses, holding, sign); }
  // The GPUs anyone holds, whole or shared, less what `credit` holds (a
  // retried bind's own reservation).
  GpuMask Held(const GpuHolding& credit = {}) const;
  // Whether some GPU has sharers.
  bool AnyShared() const;
  friend bool operator==(const GpuHolds&, const GpuHolds&) = default;
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
  // The node's topology, and its cards (see the file comment).
  NodeGpus Resolve(const Node& node);
  // True when Resolve would read the same inputs from both nodes.
  static bool SameInputs(const Node& a, const Node& b);

 private:
  NodeGpus FromSpec(const GpuTopologySpec& spec, GpuTopologySource source);
  NodeGpus ResolveTopology(const Node& node);

  GpuProfiles profiles_;
  std::map<std::string, std::weak_ptr<const TopologyGpuLayout>, std::less<>> interned_;
};

// "0,2,4,6" <-> mask. Parse refuses anything else (indices 0..15, no
// duplicates), naming the text.
StatusOr<GpuMask> ParseGpuIds(std::string_view text);
std::string FormatGpuIds(GpuMask gpus);
// The UUIDs of `gpus` in index order, comma-separated; "" when any is unknown.
std::string FormatGpuUuids(GpuMask gpus, const std::vector<GpuCard>& cards);
// What a pod holds of its node's GPUs as its annotations say: the shares of
// muster.io/gpu-shares when it has them, else the whole GPUs of
// muster.io/gpu-ids (empty when it names none, or what it names does not
// read: the pod then holds a count of GPUs, not which).
GpuHolding HoldingOf(const std::map<std::string, std::string>& annotations,
                     std::string* problem = nullptr);

// The whole GPUs a request asks for (nvidia.com/gpu), 0 when none, more
// than 16, or not a whole number (a shared GPU's fraction).
int GpusRequested(const Resources& request);

// The free GPUs of a node for a pod that already holds `own` there: healthy,
// held by nobody else (whole or shared). 0 when its GPUs are not told apart.
GpuMask FreeGpus(const NodeGpus& gpus, const GpuHolds& holds, const GpuHolding& own = {});

// The idle GPUs in the order a share should open them: the one whose loss
// strands the fewest GPUs for multi-GPU pods first (the topology's choice of
// one GPU), then by index.
std::vector<int> IdleOrder(const NodeGpus& gpus, GpuMask free);

// Where a pod's shares go on a node: PlaceShares over the node's cards and
// holds, `own` (the pod's reservation there, if any) credited back. nullopt
// with `why` when they do not fit, or the node's GPUs are not told apart.
std::optional<std::vector<GpuSlice>> PlaceSharesOn(const NodeGpus& gpus, const GpuHolds& holds,
                                                   std::span<const GpuShareAsk> asks,
                                                   const GpuHolding& own, std::string* why);

}  // namespace muster::extender
