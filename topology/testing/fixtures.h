// Real GPU topologies as test fixtures (topology.md sections 1.2 and 6.3),
// written as `nvidia-smi topo -m` would print them.
//
// Header-only, test code only.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "topology/gpu_topology.h"

namespace muster::topology::fixtures {

using Matrix = std::vector<std::vector<std::string>>;

// `n` GPUs, NUMA node by `numa_of(i)`.
inline std::vector<Gpu> Gpus(int n, int (*numa_of)(int)) {
  std::vector<Gpu> gpus;
  for (int i = 0; i < n; ++i) {
    gpus.push_back(Gpu{.index = i, .uuid = "GPU-" + std::to_string(i), .numa = numa_of(i)});
  }
  return gpus;
}

inline int HalfSocket8(int i) { return i < 4 ? 0 : 1; }
inline int PairSocket4(int i) { return i < 2 ? 0 : 1; }

// The n x n matrix with `token(i, j)` off the diagonal.
template <typename Fn>
Matrix MatrixOf(int n, Fn token) {
  Matrix m(static_cast<size_t>(n), std::vector<std::string>(static_cast<size_t>(n), "X"));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) m[i][j] = token(i, j);
    }
  }
  return m;
}

inline NodeTopology MustBuild(StatusOr<NodeTopology> t) {
  if (!t.ok()) {
    std::fprintf(stderr, "bad fixture: %s\n", t.status().ToString().c_str());
    std::abort();
  }
  return *std::move(t);
}

// PCIe paths of 8 GPUs in 2 sockets (0-3, 4-7), two GPUs per PCIe switch
// ((0,1) (2,3) (4,5) (6,7)): PIX on a switch, `same_socket` between switches
// of a socket, SYS across sockets.
inline Matrix Pcie8(const std::string& same_socket) {
  return MatrixOf(8, [&](int i, int j) -> std::string {
    if (i / 2 == j / 2) return "PIX";
    return i / 4 == j / 4 ? same_socket : "SYS";
  });
}

// DGX-1 with V100s: the hybrid cube-mesh (go-gpuallocator's NewDGX1VoltaNode).
inline NodeTopology Dgx1Volta() {
  const Matrix links = {
      {"X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"},
      {"NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"},
      {"NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"},
      {"NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"},
      {"NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"},
      {"SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"},
      {"SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"},
      {"SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"},
  };
  return MustBuild(NodeTopology::Build(Gpus(8, HalfSocket8), links, Pcie8("PHB")));
}

// DGX A100 / H100: every pair over NVSwitch (NV12 / NV18), GPUs in pairs
// behind PCIe switches, NUMA 0-3 and 4-7.
inline NodeTopology DgxNvswitch(int nvlinks) {
  const std::string nv = "NV" + std::to_string(nvlinks);
  return MustBuild(NodeTopology::Build(Gpus(8, HalfSocket8),
                                       MatrixOf(8, [&](int, int) { return nv; }), Pcie8("NODE")));
}

// A PCIe-only 2-socket server with 8 GPUs, two PCIe switches per socket.
inline NodeTopology Pcie2Socket8() {
  return MustBuild(NodeTopology::Build(Gpus(8, HalfSocket8), Pcie8("NODE")));
}

// A 4-GPU server (2 sockets) with NVLink bridges on (0,1) and (2,3).
inline NodeTopology Bridged4() {
  const Matrix links = MatrixOf(4, [](int i, int j) -> std::string {
    if (i / 2 == j / 2) return "NV4";
    return "SYS";
  });
  const Matrix pcie =
      MatrixOf(4, [](int i, int j) -> std::string { return i / 2 == j / 2 ? "PHB" : "SYS"; });
  return MustBuild(NodeTopology::Build(Gpus(4, PairSocket4), links, pcie));
}

// 4 x RTX 8000 whose bridges cross the sockets: 0<->3 and 1<->2 (NV2),
// sockets {0,1} and {2,3} (go-gpuallocator's New4xRTX8000Node).
inline NodeTopology Rtx8000x4() {
  const Matrix links = MatrixOf(4, [](int i, int j) -> std::string {
    if (i + j == 3) return "NV2";
    return i / 2 == j / 2 ? "PHB" : "SYS";
  });
  const Matrix pcie =
      MatrixOf(4, [](int i, int j) -> std::string { return i / 2 == j / 2 ? "PHB" : "SYS"; });
  return MustBuild(NodeTopology::Build(Gpus(4, PairSocket4), links, pcie));
}

// A DGX-2-like node: 16 GPUs, every pair NV6, halves on two boards.
inline NodeTopology Dgx2Like() {
  return MustBuild(NodeTopology::Build(Gpus(16, [](int i) { return i < 8 ? 0 : 1; }),
                                       MatrixOf(16, [](int, int) { return std::string("NV6"); })));
}

}  // namespace muster::topology::fixtures
