// Queue (scheduling.volcano.sh/v1beta1, cluster-scoped): a team's share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/object_meta.h"
#include "model/resources.h"

namespace muster {

inline constexpr std::string_view kDefaultQueue = "default";
inline constexpr std::string_view kRootQueue = "root";

struct QueueSpec {
  int32_t weight = 1;
  // Absent dimensions of capability are unlimited (Resources::Has).
  std::optional<Resources> capability;
  std::optional<Resources> deserved;
  std::optional<Resources> guarantee;  // spec.guarantee.resource
  std::optional<bool> reclaimable;     // nil reads as true (Volcano default)
  std::string parent;
  int32_t priority = 0;
  std::string type;
  friend bool operator==(const QueueSpec&, const QueueSpec&) = default;
};

struct QueueStatus {
  std::string state;  // Open Closed Closing Unknown
  Resources allocated;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t inqueue = 0;
  int32_t unknown = 0;
  int32_t completed = 0;
  friend bool operator==(const QueueStatus&, const QueueStatus&) = default;
};

struct Queue {
  ObjectMeta meta;
  QueueSpec spec;
  QueueStatus status;
  bool IsReclaimable() const { return spec.reclaimable.value_or(true); }
  // A queue with no state yet is Open (Volcano's controller sets it so).
  bool IsOpen() const { return status.state.empty() || status.state == "Open"; }
  friend bool operator==(const Queue&, const Queue&) = default;
};

}  // namespace muster
