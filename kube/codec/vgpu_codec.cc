#include "kube/codec/vgpu_codec.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

namespace muster::kube {
namespace {

// Splits on `sep`, keeping empty pieces.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

template <typename Int>
bool ParseInt(std::string_view text, Int* out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Status Bad(std::string_view annotation, std::string_view where, std::string_view why) {
  return InvalidArgumentError(std::string(annotation) + ": " + std::string(where) + ": " +
                              std::string(why));
}

}  // namespace

StatusOr<std::vector<VgpuRegistration>> DecodeVgpuRegistration(std::string_view text) {
  std::vector<VgpuRegistration> gpus;
  const std::vector<std::string_view> records = Split(text, ':');
  for (size_t r = 0; r < records.size(); ++r) {
    const std::string_view record = records[r];
    // The plugin ends every record with ':', so the last piece is empty.
    if (record.empty() && r + 1 == records.size()) break;
    const std::string where = "record " + std::to_string(r);
    const std::vector<std::string_view> f = Split(record, ',');
    if (f.size() < 6) {
      return Bad(kAnnotationVgpuRegister, where,
                 "expected UUID,count,memory,type,health,mode, got " + std::to_string(f.size()) +
                     " fields");
    }
    VgpuRegistration gpu{
        .uuid = std::string(f[0]), .type = std::string(f[3]), .mode = std::string(f[5])};
    if (gpu.uuid.empty()) return Bad(kAnnotationVgpuRegister, where, "empty UUID");
    if (!ParseInt(f[1], &gpu.split) || gpu.split < 0) {
      return Bad(kAnnotationVgpuRegister, where,
                 "count \"" + std::string(f[1]) + "\" is not a count");
    }
    if (!ParseInt(f[2], &gpu.memory_mib) || gpu.memory_mib < 0) {
      return Bad(kAnnotationVgpuRegister, where,
                 "memory \"" + std::string(f[2]) + "\" is not a number of MiB");
    }
    if (f[4] != "true" && f[4] != "false") {
      return Bad(kAnnotationVgpuRegister, where,
                 "health \"" + std::string(f[4]) + "\" is not true or false");
    }
    gpu.healthy = f[4] == "true";
    gpus.push_back(std::move(gpu));
    if (gpus.size() > static_cast<size_t>(kMaxNodeGpus)) {
      return Bad(kAnnotationVgpuRegister, where,
                 "more than " + std::to_string(kMaxNodeGpus) + " GPUs on one node");
    }
  }
  if (gpus.empty()) return Bad(kAnnotationVgpuRegister, "value", "no GPU registered");
  return gpus;
}

std::string EncodeVgpuRegistration(const std::vector<VgpuRegistration>& gpus) {
  std::string out;
  for (const VgpuRegistration& g : gpus) {
    out += g.uuid + "," + std::to_string(g.split) + "," + std::to_string(g.memory_mib) + "," +
           g.type + "," + (g.healthy ? "true" : "false") + "," + g.mode + ":";
  }
  return out;
}

StatusOr<VgpuPodDevices> DecodeVgpuDevices(std::string_view text) {
  VgpuPodDevices pod;
  const std::vector<std::string_view> containers = Split(text, ';');
  for (size_t c = 0; c < containers.size(); ++c) {
    std::vector<VgpuDevice>& devices = pod.emplace_back();
    const std::vector<std::string_view> items = Split(containers[c], ':');
    for (size_t d = 0; d < items.size(); ++d) {
      if (items[d].empty()) continue;  // every device ends with ':'
      const std::string where = "container " + std::to_string(c) + " device " + std::to_string(d);
      const std::vector<std::string_view> f = Split(items[d], ',');
      VgpuDevice device;
      if (f.size() != 4 || f[0].empty() || !ParseInt(f[2], &device.memory_mib) ||
          !ParseInt(f[3], &device.cores)) {
        return Bad(kAnnotationVgpuIds, where, "expected UUID,type,memory,cores");
      }
      device.uuid = std::string(f[0]);
      device.type = std::string(f[1]);
      devices.push_back(std::move(device));
    }
  }
  return pod;
}

std::string EncodeVgpuDevices(const VgpuPodDevices& devices) {
  std::string out;
  for (size_t c = 0; c < devices.size(); ++c) {
    if (c > 0) out += ';';
    for (const VgpuDevice& d : devices[c]) {
      out += d.uuid + "," + d.type + "," + std::to_string(d.memory_mib) + "," +
             std::to_string(d.cores) + ":";
    }
  }
  return out;
}

StatusOr<std::vector<GpuSlice>> DecodeGpuShares(std::string_view text) {
  std::vector<GpuSlice> slices;
  const std::vector<std::string_view> containers = Split(text, ';');
  for (size_t c = 0; c < containers.size(); ++c) {
    if (containers[c].empty()) continue;
    for (std::string_view item : Split(containers[c], ',')) {
      const std::vector<std::string_view> f = Split(item, ':');
      GpuSlice slice{.container = static_cast<int>(c)};
      if (f.size() != 3 || !ParseInt(f[0], &slice.gpu) || !ParseInt(f[1], &slice.compute) ||
          !ParseInt(f[2], &slice.memory_mib)) {
        return Bad(kAnnotationGpuShares, "\"" + std::string(item) + "\"",
                   "expected <gpu>:<compute thousandths>:<memory MiB>");
      }
      if (slice.gpu < 0 || slice.gpu >= kMaxNodeGpus || slice.compute < 0 ||
          slice.compute > kGpuCompute || slice.memory_mib < 0) {
        return Bad(kAnnotationGpuShares, "\"" + std::string(item) + "\"", "out of range");
      }
      slices.push_back(slice);
    }
  }
  if (slices.empty()) return Bad(kAnnotationGpuShares, "value", "no share");
  return slices;
}

std::string EncodeGpuShares(const std::vector<GpuSlice>& slices, int containers) {
  std::vector<std::string> segments(static_cast<size_t>(std::max(containers, 1)));
  for (const GpuSlice& s : slices) {
    std::string& segment = segments[static_cast<size_t>(std::max(s.container, 0))];
    if (!segment.empty()) segment += ',';
    segment += std::to_string(s.gpu) + ":" + std::to_string(s.compute) + ":" +
               std::to_string(s.memory_mib);
  }
  std::string out;
  for (size_t c = 0; c < segments.size(); ++c) out += (c > 0 ? ";" : "") + segments[c];
  return out;
}

}  // namespace muster::kube
