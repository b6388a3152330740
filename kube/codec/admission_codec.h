// JSON <-> model for admission.k8s.io/v1 AdmissionReview: the body the API
// server POSTs to a mutating admission webhook and the reply it reads
// (k8s.io/api/admission/v1/types.go). Only what muster's pod webhook needs:
// the request's identity, operation and object (decoded as a Pod when the
// request is about core/v1 pods), and a reply that allows, optionally with a
// JSONPatch. Same error contract as core_codec.h: a malformed document is
// InvalidArgument naming the JSON path of the first bad field.
//
// Thread-safety: value types; the codec functions are stateless.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/pod.h"
#include "model/status.h"

namespace muster::kube {

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";

struct AdmissionRequest {
  std::string uid;         // request.uid: the reply must echo it
  std::string group;       // request.kind.group ("" for core)
  std::string kind;        // request.kind.kind ("Pod")
  std::string operation;   // request.operation: CREATE, UPDATE, DELETE, CONNECT
  std::string namespace_;  // request.namespace (the object may not carry it yet)
  bool dry_run = false;    // request.dryRun
  // request.object, for a core/v1 Pod only (nullopt for any other kind).
  std::optional<Pod> pod;
};

struct AdmissionResponse {
  std::string uid;
  bool allowed = true;
  // A JSONPatch (RFC 6902) document, base64-encoded as the API server
  // expects (kube/client/pem.h EncodeBase64); "" for none. Written with
  // patchType "JSONPatch".
  std::string patch_base64;
  std::string message;  // status.message when not allowed
};

// The AdmissionReview's `request`. A review without one is InvalidArgument.
StatusOr<AdmissionRequest> DecodeAdmissionReview(std::string_view json);

// An AdmissionReview (apiVersion admission.k8s.io/v1) carrying `response`.
std::string EncodeAdmissionReview(const AdmissionResponse& response);

}  // namespace muster::kube
