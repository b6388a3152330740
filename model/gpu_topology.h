// GpuTopologySpec: a node's GPUs and their links, as its node agent
// publishes them in the annotation muster.io/gpu-topology (JSON; see
// docs/topology.md and kube/codec/gpu_topology_codec.h). The values are as
// read; topology::NodeTopology::Build validates them.
//
// Thread-safety: value types.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster {

inline constexpr std::string_view kAnnotationGpuTopology = "muster.io/gpu-topology";

struct GpuDevice {
  int index = 0;
  std::string uuid;
  int numa = -1;            // -1: unknown
  std::string pcie_switch;  // bus id of its PCIe switch, "" unknown
  bool healthy = true;
  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

struct GpuTopologySpec {
  int version = 1;
  std::vector<GpuDevice> gpus;
  // n x n `nvidia-smi topo -m` tokens: the best path per pair ("X" on the
  // diagonal), and optionally the PCIe path even where NVLink hides it.
  std::vector<std::vector<std::string>> link;
  std::vector<std::vector<std::string>> pcie;
  // Optional measured bandwidth, GB/s per direction.
  std::vector<std::vector<double>> bandwidth;
  friend bool operator==(const GpuTopologySpec&, const GpuTopologySpec&) = default;
};

}  // namespace muster
