// JSON -> model for Kubernetes' own gang API: scheduling.k8s.io/v1beta1
// PodGroup (Kubernetes 1.37+, feature gate GenericWorkload; the API changed in
// every release from 1.35, so only v1beta1 is read). Same error contract as
// core_codec.h. muster never writes these objects (kube-scheduler owns their
// status), so there is no encoder.
#pragma once

#include <string_view>

#include "kube/codec/core_codec.h"
#include "model/pod_group.h"

namespace muster::kube {

// The apiVersion of Kubernetes' PodGroups (and of Events about them).
inline constexpr std::string_view kKubernetesSchedulingApiVersion = "scheduling.k8s.io/v1beta1";

// A PodGroup of api kKubernetes, as muster's gang model reads it:
//   spec.schedulingPolicy.gang.minCount -> spec.min_member; a `basic` policy
//     (pods scheduled one by one) -> 1;
//   the annotation scheduling.volcano.sh/queue-name -> spec.queue ("" reads
//     as queue `default`): the API has no queue of its own;
//   spec.priorityClassName -> spec.priority_class_name;
//   status.conditions -> status.conditions (status.phase stays "").
// A schedulingPolicy that sets neither or both of gang and basic is an error
// naming the field, as is a gang minCount below 1 (the API server refuses
// both; an object that gets past it still gets an answer).
void DecodeKubernetesPodGroupFrom(DecodeContext& ctx, const JsonValue& v, PodGroup* out);
StatusOr<PodGroup> DecodeKubernetesPodGroup(std::string_view json);
StatusOr<ObjectList<PodGroup>> DecodeKubernetesPodGroupList(std::string_view json);

}  // namespace muster::kube
