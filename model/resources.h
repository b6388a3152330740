// Resources: a bundle of named resource amounts in muster's integer units
// (cpu in millicores, nvidia.com/gpu in thousandths of a GPU, memory in
// bytes, other extended resources in whole units). See model/quantity.h for
// the units.
//
// A name that is absent reads as 0, but presence is kept: Queue capability
// treats an absent dimension as unlimited (Has()), which 0 could not say.
//
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/status.h"

namespace muster {

inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kPods = "pods";
inline constexpr std::string_view kEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";
// nvidia.com/gpu is held in thousandths: one GPU is 1000.
inline constexpr int64_t kMilliPerGpu = 1000;

class Resources {
 public:
  using Entry = std::pair<std::string, int64_t>;

  Resources() = default;
  // REQUIRES: names unique. Entries are kept sorted by name.
  Resources(std::initializer_list<Entry> entries);

  // Builds from a Kubernetes ResourceList ({"cpu": "500m", ...}); the first
  // bad entry yields InvalidArgument naming the resource.
  static StatusOr<Resources> FromQuantities(const std::map<std::string, std::string>& list);
  // The ResourceList form, quantities formatted per resource.
  std::map<std::string, std::string> ToQuantities() const;

  int64_t Get(std::string_view name) const;
  bool Has(std::string_view name) const;
  void Set(std::string_view name, int64_t value);
  void Erase(std::string_view name);

  int64_t milli_cpu() const { return Get(kCpu); }
  int64_t memory() const { return Get(kMemory); }
  // nvidia.com/gpu in thousandths of a GPU, muster's unit (a shared GPU is
  // asked by the fraction, model/gpu_share.h).
  int64_t milli_gpus() const { return Get(kNvidiaGpu); }
  // Whole GPUs: milli_gpus() / 1000, a fraction rounded down.
  int64_t gpus() const { return Get(kNvidiaGpu) / kMilliPerGpu; }

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  // True when every amount is zero (or there are none).
  bool IsZero() const;

  // Per-name arithmetic; names present in either side are present in the
  // result. Amounts saturate at the int64 limits instead of overflowing.
  Resources& operator+=(const Resources& other);
  Resources& operator-=(const Resources& other);
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  Resources& operator*=(int64_t factor);

  // Per-name max / min over the union of names (absent reads as 0).
  static Resources Max(const Resources& a, const Resources& b);
  static Resources Min(const Resources& a, const Resources& b);
  // Negative amounts become 0.
  Resources ClampedAtZero() const;

  // True when every positive amount here is <= the same amount in `capacity`.
  // An absent name in `capacity` is 0 unless `absent_is_unlimited`.
  bool FitsIn(const Resources& capacity, bool absent_is_unlimited = false) const;
  // Names whose request exceeds `capacity` (same rule as FitsIn), sorted.
  std::vector<std::string> Exceeding(const Resources& capacity,
                                     bool absent_is_unlimited = false) const;

  // Dominant share (DRF): max over names of this[name] / total[name], for
  // names with a positive amount here. A positive amount of a resource the
  // total lacks (or has 0 of) is +infinity. Empty/zero -> 0.
  double DominantShare(const Resources& total) const;
  // As DominantShare, also reporting which resource dominates ("" if none).
  std::pair<double, std::string> DominantShareWithName(const Resources& total) const;

  // Equality is on values: {cpu: 0} equals {}.
  friend bool operator==(const Resources& a, const Resources& b);

  // "cpu=500m, memory=2Gi, nvidia.com/gpu=8" (sorted; for messages and logs);
  // "none" when empty.
  std::string ToString() const;

 private:
  std::vector<Entry> entries_;  // sorted by name, unique
};

// What a pod with `request` holds on its node: the request plus one "pods"
// slot (a node's allocatable "pods" caps how many it runs). The one rule for
// the cache's accounting, the gang planner and the gang controller.
inline Resources WithPodSlot(Resources request) {
  request.Set(kPods, request.Get(kPods) + 1);
  return request;
}

// Prints ToString() (readable gtest failures and log lines).
inline std::ostream& operator<<(std::ostream& os, const Resources& r) { return os << r.ToString(); }

}  // namespace muster
