#include "kube/client/api_error.h"

#include "kube/codec/json.h"

namespace muster::kube {
namespace {

constexpr size_t kMaxQuotedBody = 256;

std::string Quote(std::string_view body) {
  std::string text(body.substr(0, kMaxQuotedBody));
  if (body.size() > kMaxQuotedBody) text += "...";
  return text;
}

}  // namespace

std::optional<ApiStatus> ParseApiStatus(std::string_view json) {
  rapidjson::Document doc;
  if (!ParseDocument(json, &doc).ok() || !doc.IsObject()) return std::nullopt;
  DecodeContext ctx;
  ApiStatus out;
  std::string kind;
  ReadString(ctx, doc, "kind", &kind);
  ReadString(ctx, doc, "status", &out.status);
  ReadString(ctx, doc, "reason", &out.reason);
  ReadString(ctx, doc, "message", &out.message);
  ReadInt32(ctx, doc, "code", &out.code);
  if (ctx.failed()) return std::nullopt;
  if (kind != "Status" && out.status.empty() && out.reason.empty() && out.code == 0) {
    return std::nullopt;
  }
  return out;
}

StatusCode StatusCodeForHttp(int http_code, std::string_view reason) {
  switch (http_code) {
    case 400:
    case 413:
    case 415:
    case 422:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
      return StatusCode::kUnimplemented;
    case 409:
      return reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kConflict;
    case 410:
      return StatusCode::kGone;
    case 429:
      return StatusCode::kResourceExhausted;
    case 500:
      return StatusCode::kInternal;
    case 501:
      return StatusCode::kUnimplemented;
    default:
      break;
  }
  if (http_code >= 400 && http_code < 500) return StatusCode::kFailedPrecondition;
  if (http_code >= 500) return StatusCode::kUnavailable;
  return StatusCode::kInternal;  // 1xx/3xx: nothing the API server should send
}

Status ErrorFromHttp(int http_code, std::string_view body, std::string_view what) {
  std::optional<ApiStatus> api = ParseApiStatus(body);
  std::string reason = api ? api->reason : "";
  std::string message = std::string(what) + ": HTTP " + std::to_string(http_code);
  if (!reason.empty()) message += " " + reason;
  if (api && !api->message.empty()) {
    message += ": " + api->message;
  } else if (!body.empty()) {
    message += ": " + Quote(body);
  }
  return Status(StatusCodeForHttp(http_code, reason), std::move(message))
      .WithHttp(http_code, std::move(reason));
}

Status ErrorFromApiStatus(const ApiStatus& api_status, std::string_view what) {
  // A watch ERROR event without a code is still a failure of the stream.
  const int code = api_status.code != 0 ? api_status.code : 500;
  std::string message = std::string(what) + ": " +
                        (api_status.reason.empty() ? "error" : api_status.reason) + " (" +
                        std::to_string(code) + ")";
  if (!api_status.message.empty()) message += ": " + api_status.message;
  return Status(StatusCodeForHttp(code, api_status.reason), std::move(message))
      .WithHttp(code, api_status.reason);
}

}  // namespace muster::kube
