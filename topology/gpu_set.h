// The best set of GPUs inside one node (issue #7; topology.md section 5.4).
//
// A request for k GPUs on a node whose free GPUs are `free` takes the k-set
// that maximises, in this order:
//   1. its weakest link class (NVLink > PCIe switch > host bridge > NUMA > SYS);
//   2. how good the GPUs left free stay: the sum, over the request sizes the
//      cluster sees (2, 4, 8 by default), of the best weakest-link class a set
//      of that size among them still has - so a 1-GPU pod takes the GPU whose
//      loss hurts least and does not break an NVLink pair (k8s-device-plugin
//      #1193);
//   3. its weakest bandwidth (measured, else NVLinks x 25 GB/s, else nominal
//      per class);
//   4. the sum of its pair weights (go-gpuallocator's: 100 per NVLink plus
//      the PCIe path's 50/40/30/20/10);
//   5. how good the GPUs left free stay, finer: the sum over the request
//      sizes of the best pair-weight sum a set of that size among them has -
//      on NVSwitch nodes, where every link class is the same, this keeps
//      PCIe switches and NUMA nodes whole;
//   6. the fewest NUMA nodes;
//   7. the lowest indices.
// Exact: every k-subset of the free GPUs is scored from tables built once per
// topology over all 2^n GPU masks (n <= 16: at most 65 536 entries).
//
// Thread-safety: a TopologyIndex is immutable after construction; share it
// between threads and nodes of the same topology.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "topology/gpu_topology.h"

namespace muster::topology {

using GpuMask = uint32_t;  // bit i: GPU i

struct GpuChoice {
  GpuMask mask = 0;
  std::vector<int> gpus;  // indices, ascending
  // The weakest link inside the set (kNvlink for a single GPU: nothing to cross).
  LinkClass bottleneck = LinkClass::kUnknown;
  double gbps = 0;    // the weakest bandwidth inside the set (0 for a single GPU)
  int leftover = 0;   // rule 2's score of the GPUs left free
  int numa_span = 0;  // distinct NUMA nodes
  friend bool operator==(const GpuChoice&, const GpuChoice&) = default;
};

class TopologyIndex {
 public:
  // `sizes`: the request sizes whose future the leftover rule protects.
  explicit TopologyIndex(NodeTopology topology, std::vector<int> sizes = {2, 4, 8});

  const NodeTopology& topology() const { return topology_; }
  GpuMask all() const { return all_; }
  // The healthy GPUs.
  GpuMask healthy() const { return healthy_; }

  // The best k GPUs among `free` (unhealthy ones never count); nothing when
  // fewer than k are free. REQUIRES: k >= 1.
  std::optional<GpuChoice> Choose(GpuMask free, int k) const;

  // The best weakest-link class any k of `free` could have (kUnknown when
  // fewer than k): what "the best link class the node could offer" means.
  LinkClass BestClass(GpuMask free, int k) const;

  // Rule 2's score of GPUs `rest` left free: the sum, over the protected
  // request sizes, of the best weakest-link class a set of that size among
  // them has (0 for a size they cannot hold). Higher keeps more options.
  int Leftover(GpuMask rest) const;

  // The GPUs of `free` (healthy ones) stranded for multi-GPU requests: none
  // of the others in `free` is joined to them by the node's best link class
  // (on two NVLink islands: the last free GPU of an island). A placement that
  // strands fewer leaves more usable capacity behind.
  int Stranded(GpuMask free) const;

 private:
  void InitBestPartners();
  int64_t LeftoverWeight(GpuMask rest) const;

  NodeTopology topology_;
  std::vector<int> sizes_;
  GpuMask all_ = 0;
  GpuMask healthy_ = 0;
  // Per GPU mask: weakest class, weakest bandwidth, sum of pair weights,
  // NUMA nodes (bitmask).
  // Per GPU: the others joined to it by the best link class of any pair.
  std::vector<GpuMask> best_partners_;
  std::vector<int8_t> cls_;
  std::vector<float> gbps_;
  std::vector<int32_t> weight_;
  std::vector<uint32_t> numa_;
  // Per request size s (sizes_ order), per mask: the best weakest class of
  // an s-subset of the mask (0 when it has fewer than s).
  std::vector<std::vector<int8_t>> best_;
  // The same for the best sum of pair weights.
  std::vector<std::vector<int32_t>> best_weight_;
};

}  // namespace muster::topology
