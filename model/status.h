// Status and StatusOr<T>: how every muster function reports a fault.
//
// muster code never throws across a module boundary. A function that can fail
// returns Status (or StatusOr<T> when it also produces a value). Scheduling
// verdicts such as "unschedulable" or "wait" are NOT errors and never travel
// as a Status; they are values of the policy modules.
//
// Thread-safety: Status and StatusOr are values; const access is thread-safe.
#pragma once

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace muster {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // malformed input: a bad field, an unparsable quantity
  kNotFound,            // HTTP 404
  kAlreadyExists,       // HTTP 409 with reason AlreadyExists
  kConflict,            // HTTP 409 otherwise (resourceVersion precondition)
  kGone,                // HTTP 410: the requested resourceVersion is too old
  kUnauthenticated,     // HTTP 401
  kPermissionDenied,    // HTTP 403
  kResourceExhausted,   // HTTP 429 (throttled) or a local limit
  kUnavailable,         // connection failures, HTTP 5xx except 500/501
  kDeadlineExceeded,    // a timeout elapsed
  kFailedPrecondition,  // the system is not in a state to do this
  kCancelled,           // the caller stopped the operation
  kUnimplemented,       // HTTP 501, or not supported by muster
  kInternal,            // a bug or an unexpected server answer (HTTP 500)
};

std::string_view StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Origin details for errors that came from the Kubernetes API: the HTTP
  // status code (0 when none) and the Status.reason string ("" when none).
  int http_code() const { return http_code_; }
  const std::string& reason() const { return reason_; }
  Status& WithHttp(int http_code, std::string reason) {
    http_code_ = http_code;
    reason_ = std::move(reason);
    return *this;
  }

  // Returns a copy whose message is "<context>: <message>".
  Status Annotate(std::string_view context) const;

  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int http_code_ = 0;
  std::string reason_;
};

inline std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);
Status FailedPreconditionError(std::string message);
Status DeadlineExceededError(std::string message);
Status CancelledError(std::string message);

// StatusOr<T> holds either a value or a non-OK Status.
// REQUIRES: a StatusOr is never built from an OK Status without a value.
template <typename T>
class StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok());
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace muster

#define MUSTER_STATUS_CONCAT_INNER(a, b) a##b
#define MUSTER_STATUS_CONCAT(a, b) MUSTER_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define MUSTER_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::muster::Status muster_status_ = (expr);        \
    if (!muster_status_.ok()) return muster_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its Status from the function.
#define MUSTER_ASSIGN_OR_RETURN(lhs, expr) \
  MUSTER_ASSIGN_OR_RETURN_IMPL(MUSTER_STATUS_CONCAT(muster_statusor_, __LINE__), lhs, expr)
#define MUSTER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
