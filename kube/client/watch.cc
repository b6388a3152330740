#include "kube/client/watch.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <array>
#include <cstring>
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

bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A set of bytes, for scans that stop at the next byte of interest: one
// table lookup a byte, not a chain of comparisons (a streamed list of 50 000
// pods is 190 MB to frame).
using ByteSet = std::array<bool, 256>;
constexpr ByteSet MakeByteSet(std::string_view bytes) {
  ByteSet set{};
  for (char c : bytes) set[static_cast<unsigned char>(c)] = true;
  return set;
}
constexpr ByteSet kStructuralBytes = MakeByteSet("\"{}[]");

// The index of the first byte of `set` in s[i...], or s.size().
size_t FindByteOf(const ByteSet& set, std::string_view s, size_t i) {
  while (i < s.size() && !set[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

// The index of the quote or backslash that stops a string's bytes in
// s[i...], or s.size(). Strings are most of an object's bytes: memchr
// (vectorised) finds the quote, and a backslash before it, if any.
size_t FindStringStop(std::string_view s, size_t i) {
  if (i >= s.size()) return s.size();
  const char* begin = s.data() + i;
  const size_t n = s.size() - i;
  const void* quote = std::memchr(begin, '"', n);
  const size_t until = quote ? static_cast<const char*>(quote) - begin : n;
  const void* backslash = std::memchr(begin, '\\', until);
  if (backslash != nullptr) return static_cast<const char*>(backslash) - s.data();
  return i + until;
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsJsonSpace(s[i])) ++i;
  return i;
}

// One past the end of the string that starts at s[i] ('"'); npos when it is
// not terminated.
size_t StringEnd(std::string_view s, size_t i) {
  for (i = FindStringStop(s, i + 1); i < s.size(); i = FindStringStop(s, i + 2)) {
    if (s[i] == '"') return i + 1;
  }
  return std::string_view::npos;
}

// One past the end of the value that starts at s[i]: a string, an object or
// array (strings and nesting tracked), or a scalar (up to the next
// delimiter, taken as it stands); npos when it does not end.
size_t ValueEnd(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return StringEnd(s, i);
  if (s[i] != '{' && s[i] != '[') {
    const size_t end = s.find_first_of(",}] \t\r\n", i);
    return end == i ? std::string_view::npos : end;
  }
  int depth = 0;
  for (i = FindByteOf(kStructuralBytes, s, i); i < s.size();
       i = FindByteOf(kStructuralBytes, s, i)) {
    const char c = s[i];
    if (c == '"') {
      i = StringEnd(s, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (--depth == 0) {
      return i + 1;
    }
    ++i;
  }
  return std::string_view::npos;
}

// Calls on_member(key, value) for each member of the JSON object `s`: the
// key as written between its quotes, the value's bytes. Nothing is decoded,
// so an event costs one scan, not a parse and a re-serialisation. False when
// `s` is not an object of "key": value members.
template <typename OnMember>
bool SplitObject(std::string_view s, OnMember&& on_member) {
  size_t i = SkipSpace(s, 0);
  if (i >= s.size() || s[i] != '{') return false;
  i = SkipSpace(s, i + 1);
  if (i < s.size() && s[i] == '}') return SkipSpace(s, i + 1) == s.size();
  while (true) {
    if (i >= s.size() || s[i] != '"') return false;
    const size_t key_end = StringEnd(s, i);
    if (key_end == std::string_view::npos) return false;
    const std::string_view key = s.substr(i + 1, key_end - i - 2);
    i = SkipSpace(s, key_end);
    if (i >= s.size() || s[i] != ':') return false;
    i = SkipSpace(s, i + 1);
    const size_t value_end = ValueEnd(s, i);
    if (value_end == std::string_view::npos) return false;
    on_member(key, s.substr(i, value_end - i));
    i = SkipSpace(s, value_end);
    if (i >= s.size()) return false;
    if (s[i] == '}') return SkipSpace(s, i + 1) == s.size();
    if (s[i] != ',') return false;
    i = SkipSpace(s, i + 1);
  }
}

// SAX reader of an event object's metadata: name, namespace and
// resourceVersion. It stops at the end of the metadata (apiVersion, kind and metadata come first in
// what the API server sends), so the rest of the object is not read twice.
class MetadataReader : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, MetadataReader> {
 public:
  explicit MetadataReader(WatchEvent* event) : event_(event) {}

  bool done() const { return done_; }
  bool metadata_not_object() const { return metadata_not_object_; }

  bool Key(const char* str, rapidjson::SizeType length, bool) {
    const std::string_view key(str, length);
    next_ = Field::kNone;
    if (depth_ == 1 && key == "metadata") {
      next_ = Field::kMetadata;
    } else if (depth_ == 2 && in_metadata_) {
      if (key == "name") next_ = Field::kName;
      if (key == "namespace") next_ = Field::kNamespace;
      if (key == "resourceVersion") next_ = Field::kResourceVersion;
    }
    return true;
  }
  bool StartObject() {
    ++depth_;
    if (next_ == Field::kMetadata) in_metadata_ = true;
    next_ = Field::kNone;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth_ == 2 && in_metadata_) {
      done_ = true;
      return false;  // the rest is the consumer's to decode
    }
    --depth_;
    return true;
  }
  bool StartArray() {
    if (!Default()) return false;
    ++depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool String(const char* str, rapidjson::SizeType length, bool) {
    const Field field = next_;
    if (!Default()) return false;
    std::string* out = field == Field::kName              ? &event_->name
                       : field == Field::kNamespace       ? &event_->namespace_
                       : field == Field::kResourceVersion ? &event_->resource_version
                                                          : nullptr;
    if (out != nullptr) out->assign(str, length);
    return true;
  }
  // Any other value (and the start of an array).
  bool Default() {
    if (next_ == Field::kMetadata) {
      metadata_not_object_ = true;
      return false;
    }
    next_ = Field::kNone;
    return true;
  }

 private:
  enum class Field { kNone, kMetadata, kName, kNamespace, kResourceVersion };

  WatchEvent* const event_;
  int depth_ = 0;              // objects and arrays open; the event's object is 1
  Field next_ = Field::kNone;  // what the next value is
  bool in_metadata_ = false;
  bool done_ = false;
  bool metadata_not_object_ = false;
};

Status ReadEventMetadata(std::string_view object, WatchEvent* event) {
  MetadataReader handler(event);
  rapidjson::MemoryStream bytes(object.data(), object.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
  rapidjson::Reader reader;
  const rapidjson::ParseResult parsed =
      reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag>(in, handler);
  if (handler.metadata_not_object()) return InvalidArgumentError("metadata: not an object");
  if (handler.done() || !parsed.IsError()) return Status::Ok();
  return InvalidArgumentError(std::string(rapidjson::GetParseError_En(parsed.Code())) +
                              " (at byte " + std::to_string(parsed.Offset()) + ")");
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
  std::string_view type_name, object;
  bool has_type = false, has_object = false;
  const bool split = SplitObject(json, [&](std::string_view key, std::string_view value) {
    if (key == "type" && !has_type) {
      has_type = true;
      type_name = value;
    } else if (key == "object" && !has_object) {
      has_object = true;
      object = value;
    }
  });
  if (!split) return InvalidArgumentError("watch event: not a well-formed JSON object");
  if (!has_type || type_name.size() < 2 || type_name.front() != '"') {
    return InvalidArgumentError("watch event: type: missing or not a string");
  }
  type_name = type_name.substr(1, type_name.size() - 2);
  WatchEvent event;
  if (!EventTypeFromName(type_name, &event.type)) {
    return InvalidArgumentError("watch event: type: unknown watch event type \"" +
                                std::string(type_name) + "\"");
  }
  if (!has_object || object.front() != '{') {
    return InvalidArgumentError("watch event: object: missing or not an object");
  }
  MUSTER_RETURN_IF_ERROR(ReadEventMetadata(object, &event).Annotate("watch event: object"));
  event.object_json = std::string(object);
  return event;
}

size_t WatchStreamParser::ScanEvent(std::string_view chunk, size_t i) {
  while (i < chunk.size()) {
    if (in_string_) {
      if (escape_) {
        escape_ = false;
        ++i;
        continue;
      }
      i = FindStringStop(chunk, i);
      if (i == chunk.size()) break;
      escape_ = chunk[i] == '\\';
      in_string_ = escape_;
      ++i;
      continue;
    }
    i = FindByteOf(kStructuralBytes, chunk, i);
    if (i == chunk.size()) break;
    switch (chunk[i++]) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        ++depth_;
        break;
      default:  // '}' or ']'
        if (--depth_ == 0) return i;
        break;
    }
  }
  return chunk.size();
}

Status WatchStreamParser::Deliver(std::string_view chunk, size_t start, size_t end,
                                  const std::function<bool(WatchEvent&&)>& on_event, bool* more) {
  if (buffer_.size() + (end - start) > max_event_bytes_) {
    return InvalidArgumentError("watch stream: event larger than " +
                                std::to_string(max_event_bytes_) + " bytes");
  }
  std::string_view event = chunk.substr(start, end - start);
  if (!buffer_.empty()) {
    buffer_.append(event);
    event = buffer_;
  }
  StatusOr<WatchEvent> parsed = ParseWatchEvent(event);
  buffer_.clear();
  if (!parsed.ok()) return parsed.status();
  *more = on_event(std::move(parsed).value());
  return Status::Ok();
}

Status WatchStreamParser::Feed(std::string_view chunk,
                               const std::function<bool(WatchEvent&&)>& on_event) {
  if (!error_.ok()) return error_;
  size_t i = 0;
  size_t start = 0;  // where the current event starts in `chunk` (0: in an earlier chunk)
  while (i < chunk.size()) {
    if (depth_ == 0) {
      // Between events only whitespace may appear.
      const char c = chunk[i];
      if (IsJsonSpace(c)) {
        ++i;
        continue;
      }
      if (c != '{') {
        return error_ = InvalidArgumentError(std::string("watch stream: unexpected byte '") + c +
                                             "' between events");
      }
      start = i++;
      depth_ = 1;
      continue;
    }
    i = ScanEvent(chunk, i);
    if (depth_ > 0) break;  // the event goes on in the next chunk
    bool more = true;
    if (Status s = Deliver(chunk, start, i, on_event, &more); !s.ok()) return error_ = s;
    if (!more) return Status::Ok();
  }
  if (depth_ > 0) {
    if (buffer_.size() + (chunk.size() - start) > max_event_bytes_) {
      return error_ = InvalidArgumentError("watch stream: event larger than " +
                                           std::to_string(max_event_bytes_) + " bytes");
    }
    buffer_.append(chunk.substr(start));
  }
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
