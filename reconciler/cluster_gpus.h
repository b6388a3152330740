// What the reconciler knows of the cluster's GPUs: the memory of the largest
// GPU whose memory is known, for admission's GPU memory checks
// (gpu_fraction.h CheckGpuMemory: a vGPU larger than any GPU, memory asked
// where no GPU's memory is known).
//
// A node's GPU memory (MiB) is the largest of Volcano's vGPU registration
// (annotation volcano.sh/node-vgpu-register, kube/codec/vgpu_codec.h) and GPU
// feature discovery's label nvidia.com/gpu.memory: the two sources the
// extender's GPU ledger reads (extender/gpu_ledger.h; it takes the label
// only for GPUs the registration gives no memory, so on a node whose label
// says more than its registration the reconciler admits memory the extender
// will not place - the Job then waits, it is not refused). A registration
// that does not decode gives nothing (the label may still).
//
// Memory: the Node informer decodes each node into NodeGpuMemory - its name,
// uid and resourceVersion and one number - not into a Node, whose labels and
// annotations (GPU feature discovery alone writes dozens) would be kept for
// every node of the cluster. cluster_gpus_test.cc measures both on 1000
// synthetic GPU nodes. The largest memory is kept as a count per distinct
// value (a handful: one per GPU model), updated by the informer's events, so
// a Job's check reads one number.
//
// Thread-safety: ClusterGpuMemory is thread-safe; Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "base/mutex.h"
#include "kube/client/client.h"
#include "kube/client/informer.h"
#include "kube/codec/core_codec.h"
#include "model/object_meta.h"
#include "model/status.h"

namespace muster::reconciler {

// GPU feature discovery's label: the memory of each GPU of the node, MiB.
inline constexpr std::string_view kLabelGpuMemoryMib = "nvidia.com/gpu.memory";

// What the Node informer keeps of a node.
struct NodeGpuMemory {
  ObjectMeta meta;          // name, uid, resourceVersion only
  int64_t largest_mib = 0;  // 0: no GPU of known memory
  friend bool operator==(const NodeGpuMemory&, const NodeGpuMemory&) = default;
};

// The largest GPU memory of a node from its vGPU registration annotation
// (nullptr: none) and its nvidia.com/gpu.memory label ("" : none); 0 when
// neither tells.
int64_t LargestGpuMemoryMib(const std::string* vgpu_registration, std::string_view memory_label);

// A core/v1 Node (or NodeList) decoded into NodeGpuMemory. Only a document
// that is not JSON, or metadata of the wrong type, fails: a label or
// registration that does not read gives 0.
StatusOr<NodeGpuMemory> DecodeNodeGpuMemory(std::string_view json);
StatusOr<kube::ObjectList<NodeGpuMemory>> DecodeNodeGpuMemoryList(std::string_view json);

class ClusterGpuMemory {
 public:
  // `client` must outlive this.
  explicit ClusterGpuMemory(kube::Client* client);
  ClusterGpuMemory(const ClusterGpuMemory&) = delete;
  ClusterGpuMemory& operator=(const ClusterGpuMemory&) = delete;

  void Start() { nodes_.Start(); }
  void Stop() { nodes_.Stop(); }
  // The first list of nodes has landed: LargestMib() speaks for the cluster.
  bool Synced() const { return nodes_.HasSynced(); }
  // Why the nodes are not listed yet: the latest list's error (403 when the
  // reconciler may not list nodes), Ok when no list has failed since the
  // last one that succeeded (kube::Informer::last_list_error).
  Status ListError() const { return nodes_.last_list_error(); }
  // The memory of the largest GPU of known memory, MiB; 0 when none.
  int64_t LargestMib() const MUSTER_EXCLUDES(mu_);
  size_t nodes() const { return nodes_.size(); }

 private:
  void Count(const NodeGpuMemory& node, int delta) MUSTER_EXCLUDES(mu_);

  mutable base::Mutex mu_;
  std::map<int64_t, int64_t> nodes_by_mib_ MUSTER_GUARDED_BY(mu_);  // largest_mib > 0 -> nodes
  kube::Informer<NodeGpuMemory> nodes_;  // last: its handlers use the members above
};

}  // namespace muster::reconciler
