// How answers of the Kubernetes API become muster::Status.
//
// A failed API call answers with a metav1.Status body
// ({"kind":"Status","status":"Failure","reason":"AlreadyExists",
// "message":"...","code":409}). ErrorFromHttp keeps the HTTP code and the
// reason on the Status (Status::http_code(), Status::reason()) and maps them
// to a StatusCode:
//   400 BadRequest, 422 Invalid, 413, 415 -> InvalidArgument
//   401 -> Unauthenticated          403 -> PermissionDenied
//   404 -> NotFound                 409 -> AlreadyExists (reason AlreadyExists) or Conflict
//   410 -> Gone                     429 -> ResourceExhausted
//   405 -> Unimplemented            other 4xx -> FailedPrecondition
//   500 -> Internal                 501 -> Unimplemented
//   502, 503, 504 and other 5xx -> Unavailable
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/status.h"

namespace muster::kube {

// The fields of a metav1.Status that matter to callers.
struct ApiStatus {
  std::string status;  // "Success" | "Failure"
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict", "Expired", ...
  std::string message;
  int code = 0;
};

// nullopt when `json` is not a JSON object that looks like a metav1.Status.
std::optional<ApiStatus> ParseApiStatus(std::string_view json);

StatusCode StatusCodeForHttp(int http_code, std::string_view reason);

// The error for a non-2xx answer. `what` names the call ("GET /api/v1/...").
// When the body is not a metav1.Status, its start is quoted in the message.
Status ErrorFromHttp(int http_code, std::string_view body, std::string_view what);

// The error an in-stream watch ERROR event stands for (code 410 -> Gone).
Status ErrorFromApiStatus(const ApiStatus& api_status, std::string_view what);

}  // namespace muster::kube
