// Command (bus.volcano.sh/v1alpha1, namespaced): a one-shot request to act on
// a Job or a Queue, as vcctl writes it (`vcctl job suspend` / `resume`,
// `vcctl queue operate --action open|close`). The fields are Volcano's
// (volcano-sh/apis pkg/apis/bus/v1alpha1/types.go): action, target (an
// OwnerReference; JSON "target", Go's TargetObject), reason, message.
#pragma once

#include <optional>
#include <string>

#include "model/object_meta.h"

namespace muster {

struct Command {
  ObjectMeta meta;
  std::string action;
  // Absent when the Command names no object (Volcano's API allows it; such
  // a Command cannot be run).
  std::optional<OwnerReference> target;
  std::string reason;
  std::string message;
  friend bool operator==(const Command&, const Command&) = default;
};

}  // namespace muster
