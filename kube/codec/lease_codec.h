// JSON <-> model for coordination.k8s.io/v1 Lease (model/lease.h), the
// record of leader election. Same error contract as core_codec.h: a
// malformed document is InvalidArgument naming the JSON path of the first
// bad field; absent and null read as unset.
#pragma once

#include <string>
#include <string_view>

#include "model/lease.h"
#include "model/status.h"

namespace muster::kube {

inline constexpr std::string_view kLeaseApiVersion = "coordination.k8s.io/v1";

StatusOr<Lease> DecodeLease(std::string_view json);
// The whole object, for a create: apiVersion, kind, metadata (name and
// namespace) and the spec, every spec field written (a released Lease has
// holderIdentity "").
std::string EncodeLease(const Lease& lease);
// A merge patch that replaces the spec only if the Lease is still at
// lease.meta.resource_version (the API server answers 409 Conflict
// otherwise): how a candidate takes or renews a Lease without overwriting a
// rival's write.
std::string EncodeLeaseUpdatePatch(const Lease& lease);

}  // namespace muster::kube
