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

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "model/gpu_topology.h"
#include "model/status.h"

namespace muster::kube {

StatusOr<GpuTopologySpec> DecodeGpuTopology(std::string_view json);
std::string EncodeGpuTopology(const GpuTopologySpec& spec);

// Topology profiles, the fallback for nodes without the annotation: a JSON
// object whose keys name a GPU model ("<nvidia.com/gpu.product>/<nvidia.com/
// gpu.count>") and whose values are the annotation's JSON. Errors name the
// key and the path inside it.
StatusOr<std::map<std::string, GpuTopologySpec, std::less<>>> DecodeGpuTopologyProfiles(
    std::string_view json);

}  // namespace muster::kube
