// GPU topology of one node: which GPUs it has and how each pair is joined,
// in the vocabulary of `nvidia-smi topo -m` (issue #7; reference
// topology.md sections 1.1 and 5.2).
//
//   NV#   # NVLinks bonded between the two GPUs (direct or via NVSwitch)
//   PIX   at most one PCIe switch between them      PXB  several PCIe switches
//   PHB   through a PCIe host bridge                NODE across host bridges, one NUMA node
//   SYS   across the inter-socket link (SOC is the old name)
//
// A NodeTopology is built once per distinct topology (nodes of one model
// share it) and validated: a bad matrix is an InvalidArgument naming the
// cell, never a crash; the caller then treats the node as topology-unknown.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_topology.h"
#include "model/status.h"

namespace muster::topology {

// Coarse link classes, nearest last: a higher value is a better link.
enum class LinkClass : int8_t {
  kUnknown = 0,
  kSys = 1,         // SYS, SOC
  kNuma = 2,        // NODE
  kHostBridge = 3,  // PHB
  kPcieSwitch = 4,  // PIX, PXB
  kNvlink = 5,      // NV#
};
std::string_view LinkClassName(LinkClass c);  // "nvlink", "pcie-switch", ...

// One pair of GPUs.
struct Link {
  LinkClass cls = LinkClass::kUnknown;  // the best path
  int nvlinks = 0;                      // NV#: how many
  // The PCIe path when it is known besides an NVLink ("PIX" under "NV2");
  // for a PCIe-only pair, the same as `cls`.
  LinkClass pcie = LinkClass::kUnknown;
  bool multi_switch = false;  // PXB rather than PIX
  double gbps = 0;            // measured bandwidth, 0: unknown
};

// Parses one `nvidia-smi topo -m` token ("NV12", "PIX", "SYS", ...).
StatusOr<Link> ParseLinkToken(std::string_view token);

using Gpu = GpuDevice;

class NodeTopology {
 public:
  // REQUIRES nothing: everything is checked. `links` is the n x n matrix of
  // best-path tokens (diagonal "X"); `pcie`, when not empty, the PCIe path
  // of every pair even where NVLink hides it; `gbps`, when not empty, a
  // measured n x n bandwidth matrix. n must be 1..16 and match `gpus`,
  // whose indices must be 0..n-1 in order.
  static StatusOr<NodeTopology> Build(std::vector<Gpu> gpus,
                                      const std::vector<std::vector<std::string>>& links,
                                      const std::vector<std::vector<std::string>>& pcie = {},
                                      const std::vector<std::vector<double>>& gbps = {});
  // The same from a node's published spec (version 1 only).
  static StatusOr<NodeTopology> Build(const GpuTopologySpec& spec);

  int size() const { return static_cast<int>(gpus_.size()); }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const Link& link(int i, int j) const { return links_[static_cast<size_t>(i * size() + j)]; }

 private:
  std::vector<Gpu> gpus_;
  std::vector<Link> links_;  // row-major n x n; the diagonal is unused
};

}  // namespace muster::topology
