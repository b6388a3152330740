// Objects muster writes to the API server but never watches: Binding
// (pods/binding), Eviction (pods/eviction) and core/v1 Event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/object_meta.h"

namespace muster {

// POST /api/v1/namespaces/{ns}/pods/{name}/binding. The API server merges
// meta.annotations into the pod atomically with spec.nodeName.
struct Binding {
  ObjectMeta meta;          // name/namespace/uid of the pod; annotations to merge
  std::string target_node;  // target: {kind: Node, name: ...}
  friend bool operator==(const Binding&, const Binding&) = default;
};

// POST /api/v1/namespaces/{ns}/pods/{name}/eviction (policy/v1).
struct Eviction {
  ObjectMeta meta;  // name/namespace of the pod
  std::optional<int64_t> grace_period_seconds;
  std::string precondition_uid;  // deleteOptions.preconditions.uid, "" for none
  friend bool operator==(const Eviction&, const Eviction&) = default;
};

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;
  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

// core/v1 Event (what `kubectl describe` shows).
struct Event {
  ObjectMeta meta;
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  std::string type;  // "Normal" | "Warning"
  std::string source_component;
  std::string source_host;
  Time first_timestamp;
  Time last_timestamp;
  Time event_time;  // MicroTime
  int32_t count = 0;
  std::string action;
  std::string reporting_component;
  std::string reporting_instance;
  friend bool operator==(const Event&, const Event&) = default;
};

// An Event about `object` reported by `component`, counted once at `now`.
// The API server names it from "<object name>." (generateName), so two
// Events in the same instant never collide.
inline Event NewEvent(ObjectReference object, std::string_view type, std::string_view reason,
                      std::string message, std::string_view component, Time now) {
  Event e;
  e.meta.namespace_ = object.namespace_;
  e.meta.generate_name = object.name + ".";
  e.involved_object = std::move(object);
  e.reason = std::string(reason);
  e.message = std::move(message);
  e.type = std::string(type);
  e.source_component = std::string(component);
  e.reporting_component = std::string(component);
  e.first_timestamp = now;
  e.last_timestamp = now;
  e.count = 1;
  return e;
}

}  // namespace muster
