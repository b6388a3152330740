// Conformance (issue 19): the pods muster never evicts, after Volcano's
// conformance plugin (pkg/scheduler/plugins/conformance/conformance.go, its
// PreemptableFn and ReclaimableFn): a pod in namespace kube-system, or of
// priority class system-cluster-critical or system-node-critical, is never a
// victim - not of preemption (the gang pass, the extender's /preempt verb),
// not of reclaim.
//
// muster evicts gangs whole where Volcano evicts tasks one by one: a gang
// with such a member is no victim at all, since taking the rest would leave
// the critical member running without its gang (or the gang restarting
// around it). Every place that chooses victims asks these two functions, so
// the rule lives here only.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "gang/gang.h"
#include "model/pod.h"

namespace muster::gang {

// What Volcano (and Kubernetes: k8s.io/api/scheduling/v1, core/v1) call them.
inline constexpr std::string_view kSystemNamespace = "kube-system";
inline constexpr std::string_view kSystemClusterCritical = "system-cluster-critical";
inline constexpr std::string_view kSystemNodeCritical = "system-node-critical";

// False for a pod in kube-system or of a system-critical priority class
// (spec.priorityClassName, exact names as Volcano compares them).
bool Evictable(const Pod& pod);

// False when any member of the gang, in whatever state, is not Evictable():
// the gang is then never chosen as a victim. A pending critical member
// counts too: it is part of the gang preemption would tear down.
bool Evictable(const Gang& gang);

}  // namespace muster::gang
