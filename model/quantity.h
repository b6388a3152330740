// Kubernetes resource quantities ("500m", "1.5", "2Gi", "1e3", "100Ki") with
// exact integer semantics.
//
// A Quantity is an exact rational value n / 10^k (binary suffixes are exact
// powers of two and fold into n). muster stores resources as integers in their
// canonical unit: CPU in millicores, everything else in base units (bytes,
// GPUs, pods). Conversions round *up* like Kubernetes' MilliValue()/Value().
//
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "model/status.h"

namespace muster {

class Quantity {
 public:
  // Parses the Kubernetes quantity grammar:
  //   <sign><digits>[.<digits>][<suffix>]
  //   suffix: Ki Mi Gi Ti Pi Ei | n u m "" k M G T P E | e<int> E<int>
  // Like Kubernetes, a value finer than 1n is rounded away from zero to 1n.
  // Values whose milli-value does not fit int64 (beyond about 9.2e15) are
  // rejected. Errors (InvalidArgument) quote the text and say what is wrong.
  static StatusOr<Quantity> Parse(std::string_view text);

  static Quantity FromInt(int64_t value) { return Quantity(value, 0); }
  static Quantity FromMilli(int64_t milli) { return Quantity(milli, 3); }

  bool is_negative() const { return unscaled_ < 0; }
  bool is_zero() const { return unscaled_ == 0; }
  // True when the value is a whole number.
  bool is_integer() const;

  // The value in thousandths, rounded towards +infinity; saturates at int64.
  int64_t MilliValueCeil() const;
  // The value as a whole number, rounded towards +infinity; saturates at int64.
  int64_t ValueCeil() const;

  // Canonical text: the smallest exact decimal form ("1500m" -> "1500m",
  // "1.5" -> "1500m", "2000m" -> "2", "1e3" -> "1k").
  std::string ToString() const;

  // Equality is on values: "1.5" == "1500m".
  friend bool operator==(const Quantity& a, const Quantity& b);

 private:
  friend StatusOr<int64_t> ParseResourceQuantity(std::string_view, std::string_view);

  Quantity() = default;
  Quantity(__int128 unscaled, int scale) : unscaled_(unscaled), scale_(scale) {}
  // Parse's core: "" on success, else why `text` is not a quantity.
  static std::string ParseInto(std::string_view text, Quantity* out);

  __int128 unscaled_ = 0;  // value = unscaled_ / 10^scale_
  int scale_ = 0;          // 0..9 (Parse rounds finer than 1n up to 1n)
};

// Prints ToString() (readable gtest failures and log lines).
inline std::ostream& operator<<(std::ostream& os, const Quantity& q) { return os << q.ToString(); }

// Resource-aware conversion of a quantity to muster's integer unit:
//   "cpu"                      -> millicores (finer than 1m rounds up)
//   "nvidia.com/gpu"           -> thousandths of a GPU ("0.5" -> 500): a pod
//                                 never asks a fraction (the API refuses it),
//                                 but a Volcano Job's task template, a queue
//                                 or a PodGroup's minResources may, and GPU
//                                 sharing counts shares of a GPU so
//                                 (model/gpu_share.h)
//   "memory", "ephemeral-storage", "storage", "hugepages-<size>" -> bytes
//                                 (rounds up); "hugepages-x.io/y" is an
//                                 extended resource like any name with a "/"
//   every other resource (pods, rdma/hca, ...) must be a whole number:
//     "0.5" for pods is InvalidArgument.
// Negative quantities are InvalidArgument for every resource.
StatusOr<int64_t> ParseResourceQuantity(std::string_view resource, std::string_view text);

// Inverse of ParseResourceQuantity: "500m"/"2" for cpu, "0.5"/"8" for
// nvidia.com/gpu (a decimal), "2Gi"/"1500000" for byte resources (largest
// exact binary suffix), plain integers otherwise.
std::string FormatResourceQuantity(std::string_view resource, int64_t value);

// True for resources muster stores in thousandths ("cpu", "nvidia.com/gpu").
bool IsMilliResource(std::string_view resource);
// True for resources whose quantities must be whole numbers.
bool IsIntegerResource(std::string_view resource);

}  // namespace muster
