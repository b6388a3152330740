#include "topology/gpu_topology.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace muster::topology {
namespace {

std::string Cell(std::string_view matrix, int i, int j) {
  return std::string(matrix) + "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
}

bool SquareOf(const auto& matrix, size_t n) {
  if (matrix.size() != n) return false;
  for (const auto& row : matrix) {
    if (row.size() != n) return false;
  }
  return true;
}

}  // namespace

std::string_view LinkClassName(LinkClass c) {
  switch (c) {
    case LinkClass::kNvlink:
      return "nvlink";
    case LinkClass::kPcieSwitch:
      return "pcie-switch";
    case LinkClass::kHostBridge:
      return "pcie-host";
    case LinkClass::kNuma:
      return "numa";
    case LinkClass::kSys:
      return "sys";
    case LinkClass::kUnknown:
      break;
  }
  return "unknown";
}

StatusOr<Link> ParseLinkToken(std::string_view token) {
  Link link;
  if (token.starts_with("NV") && token.size() > 2) {
    int count = 0;
    const char* end = token.data() + token.size();
    auto [ptr, ec] = std::from_chars(token.data() + 2, end, count);
    if (ec != std::errc() || ptr != end || count <= 0 || count > 64) {
      return InvalidArgumentError("\"" + std::string(token) + "\" is not NV<links>");
    }
    link.cls = LinkClass::kNvlink;
    link.nvlinks = count;
    return link;
  }
  if (token == "PIX" || token == "PXB") {
    link.cls = link.pcie = LinkClass::kPcieSwitch;
    link.multi_switch = token == "PXB";
  } else if (token == "PHB") {
    link.cls = link.pcie = LinkClass::kHostBridge;
  } else if (token == "NODE") {
    link.cls = link.pcie = LinkClass::kNuma;
  } else if (token == "SYS" || token == "SOC") {
    link.cls = link.pcie = LinkClass::kSys;
  } else {
    return InvalidArgumentError("\"" + std::string(token) +
                                "\" is not a link (NV#, PIX, PXB, PHB, NODE, SYS)");
  }
  return link;
}

StatusOr<NodeTopology> NodeTopology::Build(std::vector<Gpu> gpus,
                                           const std::vector<std::vector<std::string>>& links,
                                           const std::vector<std::vector<std::string>>& pcie,
                                           const std::vector<std::vector<double>>& gbps) {
  const size_t n = gpus.size();
  if (n == 0 || n > 16) {
    return InvalidArgumentError("gpus: " + std::to_string(n) + " GPUs, want 1..16");
  }
  for (size_t i = 0; i < n; ++i) {
    if (gpus[i].index != static_cast<int>(i)) {
      return InvalidArgumentError("gpus[" + std::to_string(i) + "].index: " +
                                  std::to_string(gpus[i].index) + ", want " + std::to_string(i));
    }
  }
  if (!SquareOf(links, n))
    return InvalidArgumentError("link: not a " + std::to_string(n) + "x" + std::to_string(n) +
                                " matrix");
  if (!pcie.empty() && !SquareOf(pcie, n)) {
    return InvalidArgumentError("pcie: not a " + std::to_string(n) + "x" + std::to_string(n) +
                                " matrix");
  }
  if (!gbps.empty() && !SquareOf(gbps, n)) {
    return InvalidArgumentError("bw: not a " + std::to_string(n) + "x" + std::to_string(n) +
                                " matrix");
  }
  NodeTopology t;
  t.gpus_ = std::move(gpus);
  t.links_.resize(n * n);
  const int size = static_cast<int>(n);
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) {
      if (i == j) continue;
      StatusOr<Link> link = ParseLinkToken(links[i][j]);
      if (!link.ok())
        return InvalidArgumentError(Cell("link", i, j) + ": " + link.status().message());
      if (!pcie.empty()) {
        StatusOr<Link> path = ParseLinkToken(pcie[i][j]);
        if (!path.ok() || path->cls == LinkClass::kNvlink) {
          return InvalidArgumentError(Cell("pcie", i, j) + ": \"" + pcie[i][j] +
                                      "\" is not a PCIe path (PIX, PXB, PHB, NODE, SYS)");
        }
        link->pcie = path->pcie;
        link->multi_switch = path->multi_switch;
      }
      if (!gbps.empty()) {
        const double v = gbps[i][j];
        if (!std::isfinite(v) || v < 0) {
          return InvalidArgumentError(Cell("bw", i, j) + ": " + std::to_string(v) +
                                      " is not a bandwidth");
        }
        link->gbps = v;
      }
      t.links_[static_cast<size_t>(i * size + j)] = *link;
    }
  }
  for (int i = 0; i < size; ++i) {
    for (int j = i + 1; j < size; ++j) {
      const Link& a = t.link(i, j);
      const Link& b = t.link(j, i);
      if (a.cls != b.cls || a.nvlinks != b.nvlinks || a.pcie != b.pcie) {
        return InvalidArgumentError(Cell("link", i, j) + " and " + Cell("link", j, i) +
                                    " disagree: the matrix must be symmetric");
      }
    }
  }
  return t;
}

StatusOr<NodeTopology> NodeTopology::Build(const GpuTopologySpec& spec) {
  if (spec.version != 1) {
    return InvalidArgumentError("v: version " + std::to_string(spec.version) + " is not 1");
  }
  return Build(spec.gpus, spec.link, spec.pcie, spec.bandwidth);
}

}  // namespace muster::topology
