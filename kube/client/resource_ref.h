// ResourceRef: which API resource a call is about, and the REST path for it.
//
//   core group ("")  -> /api/v1/...
//   other groups     -> /apis/<group>/<version>/...
//   namespace set    -> .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
//   namespace empty  -> .../<resource>[...]: cluster-scoped objects, or a
//                       list/watch across all namespaces
//
// Thread-safety: a value type; QueryBuilder belongs to one thread.
#pragma once

#include <string>
#include <string_view>

#include "model/status.h"

namespace muster::kube {

struct ResourceRef {
  std::string group;     // "" for the core group
  std::string version;   // "v1", "v1beta1"
  std::string resource;  // plural, lower-case: "pods", "podgroups"
  std::string namespace_;
  std::string name;
  std::string subresource;  // "status", "binding", "eviction", "proxy/metrics"; needs a name

  static ResourceRef Core(std::string resource, std::string ns = "", std::string name = "");

  ResourceRef WithNamespace(std::string ns) const;
  ResourceRef WithName(std::string name) const;
  ResourceRef WithSubresource(std::string subresource) const;
  // The collection this object belongs to (name and subresource cleared).
  ResourceRef Collection() const;

  // InvalidArgument when version/resource are missing, or a subresource has
  // no name.
  Status Validate() const;
  // The percent-encoded path, e.g. "/api/v1/namespaces/default/pods/p1/binding".
  std::string Path() const;
  // "pods default/p1" for messages.
  std::string DebugString() const;
};

// Volcano's collections: jobs.batch.volcano.sh/v1alpha1,
// podgroups.scheduling.volcano.sh/v1beta1, queues.scheduling.volcano.sh/v1beta1.
ResourceRef VolcanoJobsRef();
ResourceRef PodGroupsRef();
ResourceRef QueuesRef();
// podgroups.scheduling.k8s.io/v1beta1: Kubernetes' own gangs (1.37+, served
// only with the GenericWorkload gate and that version in --runtime-config).
ResourceRef KubernetesPodGroupsRef();
// leases.coordination.k8s.io/v1: leader election's records.
ResourceRef LeaseRef(std::string ns, std::string name);
// commands.bus.volcano.sh/v1alpha1 (vcctl's Commands, namespaced).
ResourceRef CommandsRef();

// RFC 3986 percent-encoding of everything but unreserved characters.
std::string PercentEncode(std::string_view text);

// Builds "?k=v&k2=v2" with percent-encoded values ("" when empty).
class QueryBuilder {
 public:
  QueryBuilder& Add(std::string_view key, std::string_view value);
  QueryBuilder& AddIfSet(std::string_view key, std::string_view value) {
    return value.empty() ? *this : Add(key, value);
  }
  const std::string& str() const { return query_; }

 private:
  std::string query_;
};

}  // namespace muster::kube
