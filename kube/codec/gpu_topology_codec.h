// The node annotation muster.io/gpu-topology <-> GpuTopologySpec
// (model/gpu_topology.h). Format (docs/topology.md), version 1:
//
//   {"v": 1,
//    "gpus": [{"i": 0, "uuid": "GPU-...", "numa": 0, "pcisw": "0000:15:00.0", "ok": true}, ...],
//    "link": [["X", "NV2", ...], ...],      n x n nvidia-smi topo -m tokens
//    "pcie": [["X", "PIX", ...], ...],      optional: the PCIe path under NVLink
//    "bw":   [[0, 96.4, ...], ...]}          optional: measured GB/s
//
// Errors name the JSON path ("gpus[2].numa: expected an integer, got a
// string"); shape only - the matrices' meaning is checked by
// topology::NodeTopology::Build.
#pragma once

#include <string>
#include <string_view>

#include "model/gpu_topology.h"
#include "model/status.h"

namespace muster::kube {

StatusOr<GpuTopologySpec> DecodeGpuTopology(std::string_view json);
std::string EncodeGpuTopology(const GpuTopologySpec& spec);

}  // namespace muster::kube
