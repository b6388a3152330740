#include "kube/client/resource_ref.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace muster::kube {

ResourceRef VolcanoJobsRef() {
  return ResourceRef{.group = "batch.volcano.sh", .version = "v1alpha1", .resource = "jobs"};
}

ResourceRef PodGroupsRef() {
  return ResourceRef{
      .group = "scheduling.volcano.sh", .version = "v1beta1", .resource = "podgroups"};
}

ResourceRef KubernetesPodGroupsRef() {
  return ResourceRef{.group = "scheduling.k8s.io", .version = "v1beta1", .resource = "podgroups"};
}

ResourceRef QueuesRef() {
  return ResourceRef{.group = "scheduling.volcano.sh", .version = "v1beta1", .resource = "queues"};
}

ResourceRef LeaseRef(std::string ns, std::string name) {
  return ResourceRef{.group = "coordination.k8s.io",
                     .version = "v1",
                     .resource = "leases",
                     .namespace_ = std::move(ns),
                     .name = std::move(name)};
}

ResourceRef CommandsRef() {
  return ResourceRef{.group = "bus.volcano.sh", .version = "v1alpha1", .resource = "commands"};
}

ResourceRef ResourceRef::Core(std::string resource, std::string ns, std::string name) {
  ResourceRef ref;
  ref.version = "v1";
  ref.resource = std::move(resource);
  ref.namespace_ = std::move(ns);
  ref.name = std::move(name);
  return ref;
}

ResourceRef ResourceRef::WithNamespace(std::string ns) const {
  ResourceRef ref = *this;
  ref.namespace_ = std::move(ns);
  return ref;
}

ResourceRef ResourceRef::WithName(std::string name) const {
  ResourceRef ref = *this;
  ref.name = std::move(name);
  return ref;
}

ResourceRef ResourceRef::WithSubresource(std::string subresource) const {
  ResourceRef ref = *this;
  ref.subresource = std::move(subresource);
  return ref;
}

ResourceRef ResourceRef::Collection() const {
  ResourceRef ref = *this;
  ref.name.clear();
  ref.subresource.clear();
  return ref;
}

Status ResourceRef::Validate() const {
  if (version.empty() || resource.empty()) {
    return InvalidArgumentError("resource ref \"" + DebugString() +
                                "\": version and resource "
                                "are required");
  }
  if (!subresource.empty() && name.empty()) {
    return InvalidArgumentError("resource ref \"" + DebugString() + "\": subresource " +
                                subresource + " needs a name");
  }
  return Status::Ok();
}

std::string ResourceRef::Path() const {
  std::string path = group.empty() ? "/api/" + PercentEncode(version)
                                   : "/apis/" + PercentEncode(group) + "/" + PercentEncode(version);
  if (!namespace_.empty()) path += "/namespaces/" + PercentEncode(namespace_);
  path += "/" + PercentEncode(resource);
  if (!name.empty()) path += "/" + PercentEncode(name);
  // A subresource may have segments of its own ("proxy/debug/state"): each
  // is encoded, the slashes between them kept.
  for (size_t start = 0; !subresource.empty() && start <= subresource.size();) {
    const size_t slash = std::min(subresource.find('/', start), subresource.size());
    path += "/" + PercentEncode(std::string_view(subresource).substr(start, slash - start));
    start = slash + 1;
  }
  return path;
}

std::string ResourceRef::DebugString() const {
  std::string text = resource;
  if (!group.empty()) text += "." + group;
  if (!namespace_.empty() || !name.empty()) text += " ";
  if (!namespace_.empty()) text += namespace_ + "/";
  text += name;
  if (!subresource.empty()) text += "/" + subresource;
  return text;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

QueryBuilder& QueryBuilder::Add(std::string_view key, std::string_view value) {
  query_ += query_.empty() ? '?' : '&';
  query_ += PercentEncode(key);
  query_ += '=';
  query_ += PercentEncode(value);
  return *this;
}

}  // namespace muster::kube
