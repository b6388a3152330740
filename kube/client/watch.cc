#include "kube/client/watch.h"

#include <utility>

#include "kube/client/api_error.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

constexpr auto kReadTimeoutSlack = std::chrono::seconds(30);

bool EventTypeFromName(std::string_view name, WatchEventType* out) {
  static constexpr std::pair<std::string_view, WatchEventType> kTypes[] = {
      {"ADDED", WatchEventType::kAdded},     {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted}, {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError},
  };
  for (const auto& [text, type] : kTypes) {
    if (text == name) {
      *out = type;
      return true;
    }
  }
  return false;
}

std::string WatchTarget(const ResourceRef& collection, const WatchOptions& options) {
  QueryBuilder q;
  q.Add("watch", "1");
  q.AddIfSet("resourceVersion", options.resource_version);
  if (options.allow_watch_bookmarks) q.Add("allowWatchBookmarks", "true");
  if (options.timeout_seconds > 0) q.Add("timeoutSeconds", std::to_string(options.timeout_seconds));
  q.AddIfSet("labelSelector", options.label_selector);
  q.AddIfSet("fieldSelector", options.field_selector);
  return collection.Path() + q.str();
}

Duration ReadTimeout(const WatchOptions& options) {
  if (options.read_timeout > Duration::zero()) return options.read_timeout;
  if (options.timeout_seconds > 0) {
    return std::chrono::seconds(options.timeout_seconds) + kReadTimeoutSlack;
  }
  return Duration::zero();
}

}  // namespace

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

StatusOr<WatchEvent> ParseWatchEvent(std::string_view json) {
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(ParseDocument(json, &doc).Annotate("watch event"));
  DecodeContext ctx;
  if (!ExpectObject(ctx, doc)) return ctx.status().Annotate("watch event");
  std::string type_name;
  ReadString(ctx, doc, "type", &type_name);
  WatchEvent event;
  if (!ctx.failed() && !EventTypeFromName(type_name, &event.type)) {
    ctx.FailAt("type", "unknown watch event type \"" + type_name + "\"");
  }
  const JsonValue* object = Member(ctx, doc, "object");
  if (!ctx.failed() && (object == nullptr || !object->IsObject())) {
    ctx.FailAt("object", "missing or not an object");
  }
  if (ctx.failed()) return ctx.status().Annotate("watch event");
  auto object_scope = ctx.Key("object");
  ReadObject(ctx, *object, "metadata", &event,
             [](DecodeContext& c, const JsonValue& m, WatchEvent* e) {
               ReadString(c, m, "resourceVersion", &e->resource_version);
               ReadString(c, m, "namespace", &e->namespace_);
               ReadString(c, m, "name", &e->name);
             });
  if (ctx.failed()) return ctx.status().Annotate("watch event");
  event.object_json = ToCompactJson(*object);
  return event;
}

Status WatchStreamParser::ScanByte(char c) {
  if (in_string_) {
    if (escape_) {
      escape_ = false;
    } else if (c == '\\') {
      escape_ = true;
    } else if (c == '"') {
      in_string_ = false;
    }
    return Status::Ok();
  }
  switch (c) {
    case '"':
      in_string_ = true;
      break;
    case '{':
    case '[':
      ++depth_;
      break;
    case '}':
    case ']':
      if (--depth_ < 0) return InvalidArgumentError("watch stream: unbalanced brackets");
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status WatchStreamParser::Feed(std::string_view chunk,
                               const std::function<bool(WatchEvent&&)>& on_event) {
  if (!error_.ok()) return error_;
  size_t start = 0;  // first byte of `chunk` not yet copied into buffer_
  for (size_t i = 0; i < chunk.size(); ++i) {
    const char c = chunk[i];
    if (depth_ == 0) {
      // Between events only whitespace may appear.
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
        start = i + 1;
        continue;
      }
      if (c != '{') {
        error_ = InvalidArgumentError(std::string("watch stream: unexpected byte '") + c +
                                      "' between events");
        return error_;
      }
    }
    if (Status s = ScanByte(c); !s.ok()) return error_ = s;
    if (buffer_.size() + (i + 1 - start) > max_event_bytes_) {
      return error_ = InvalidArgumentError("watch stream: event larger than " +
                                           std::to_string(max_event_bytes_) + " bytes");
    }
    if (depth_ > 0) continue;
    buffer_.append(chunk.substr(start, i + 1 - start));
    start = i + 1;
    StatusOr<WatchEvent> event = ParseWatchEvent(buffer_);
    buffer_.clear();
    if (!event.ok()) return error_ = event.status();
    if (!on_event(std::move(event).value())) return Status::Ok();
  }
  if (depth_ > 0) buffer_.append(chunk.substr(start));
  return Status::Ok();
}

Status Watch(Client& client, const ResourceRef& ref, const WatchOptions& options,
             const WatchHandler& handler, CancelToken* cancel) {
  const ResourceRef collection = ref.Collection();
  MUSTER_RETURN_IF_ERROR(collection.Validate());
  const std::string target = WatchTarget(collection, options);
  WatchStreamParser parser;
  Status stream_error;
  bool handler_stopped = false;
  auto on_event = [&](WatchEvent&& event) {
    if (event.type == WatchEventType::kError) {
      std::optional<ApiStatus> api = ParseApiStatus(event.object_json);
      stream_error = ErrorFromApiStatus(api.value_or(ApiStatus{}), "watch " + target);
      return false;
    }
    if (!handler(event)) handler_stopped = true;
    return !handler_stopped;
  };
  Status status = client.Stream(
      target,
      [&](std::string_view chunk) {
        Status parsed = parser.Feed(chunk, on_event);
        if (!parsed.ok()) stream_error = parsed;
        return stream_error.ok() && !handler_stopped;
      },
      ReadTimeout(options), cancel);
  if (!stream_error.ok()) return stream_error;
  if (handler_stopped) return Status::Ok();
  if (!status.ok()) return status;
  if (!parser.idle()) return UnavailableError("watch " + target + ": stream ended mid-event");
  return Status::Ok();
}

}  // namespace muster::kube
