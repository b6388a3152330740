// ObjectMeta and shared small types of Kubernetes objects, as muster holds them.
//
// muster models only the fields it reasons about. It never writes an object
// back whole (writes are patches of owned fields), so what it does not model
// is never lost on the server.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/time.h"

namespace muster {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;  // "" for cluster-scoped objects
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  Time creation_timestamp;                 // zero when unset
  std::optional<Time> deletion_timestamp;  // set once deletion has begun
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;

  // ObjectKey(namespace_, name): the cache key.
  std::string Key() const;
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

// "namespace/name", or "name" for cluster-scoped objects (ns empty).
inline std::string ObjectKey(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  if (!ns.empty()) key.append(ns).push_back('/');
  key.append(name);
  return key;
}

inline std::string ObjectMeta::Key() const { return ObjectKey(namespace_, name); }

// A condition as Kubernetes writes it on Pods, Nodes and PodGroups.
struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;
  Time last_transition_time;
  Time last_probe_time;       // Pods only
  Time last_heartbeat_time;   // Nodes only
  std::string transition_id;  // PodGroups only (Volcano's session UID)
  friend bool operator==(const Condition&, const Condition&) = default;
};

}  // namespace muster
