#include "model/pod.h"

#include "model/gpu_share.h"

namespace muster {

Resources Pod::EffectiveRequest() const {
  Resources request = ContainerRequest();
  if (const int32_t fraction = GpuFractionOf(*this); fraction > 0) {
    request.Set(kNvidiaGpu, request.milli_gpus() + fraction);
  }
  return request;
}

Resources Pod::ContainerRequest() const {
  Resources app;
  for (const Container& c : spec.containers) app += c.resources.requests;

  // Init containers run before the app containers. A sidecar (restartPolicy
  // "Always") keeps running once started, so it adds to everything after it;
  // a regular init container runs alone on top of the sidecars started
  // before it, then exits.
  Resources sidecars;
  Resources init_peak;
  for (const Container& c : spec.init_containers) {
    if (c.restart_policy == "Always") {
      sidecars += c.resources.requests;
      init_peak = Resources::Max(init_peak, sidecars);
    } else {
      init_peak = Resources::Max(init_peak, sidecars + c.resources.requests);
    }
  }
  return Resources::Max(app + sidecars, init_peak) + spec.overhead;
}

std::string Pod::GroupName() const {
  const std::string key(kGroupNameAnnotation);
  if (auto it = meta.annotations.find(key); it != meta.annotations.end()) return it->second;
  if (auto it = meta.labels.find(key); it != meta.labels.end()) return it->second;
  return "";
}

std::string Pod::ImplicitGroupName() const {
  for (const OwnerReference& owner : meta.owner_references) {
    if (owner.controller && !owner.uid.empty()) return "podgroup-" + owner.uid;
  }
  return meta.uid.empty() ? std::string() : "podgroup-" + meta.uid;
}

std::string Pod::QueueAnnotation() const {
  auto it = meta.annotations.find(std::string(kQueueNameAnnotation));
  return it == meta.annotations.end() ? std::string() : it->second;
}

}  // namespace muster
