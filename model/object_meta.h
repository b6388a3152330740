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

  // "namespace/name", or "name" for cluster-scoped objects: the cache key.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

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
