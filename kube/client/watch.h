// Watch: one watch stream of a Kubernetes collection, as events.
//
// The API server answers a watch with a stream of JSON objects
// {"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": {...}},
// one after the other (newline-separated in practice). Network chunks split
// them anywhere, so WatchStreamParser frames objects itself: it tracks JSON
// nesting and strings across chunk boundaries and needs no newline.
//
// An ERROR event carries a metav1.Status; it ends the watch with the error it
// stands for (code 410: Gone, "the resourceVersion is too old: relist").
//
// An event's object is not decoded here: only its metadata (identity and
// resourceVersion) is read, and the object is handed over as the bytes the
// server sent, for the consumer's decoder to read once. Framing and reading
// the metadata cost about one scan of the bytes (the event's strings found
// with memchr), not a parse and a re-serialisation: a pod's event is 3-4 KB,
// and a burst of binds is thousands of them.
//
// Thread-safety: WatchStreamParser belongs to one thread. Watch() is
// thread-safe as far as the Client is; the handler runs on the caller's thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "kube/client/cancel.h"
#include "kube/client/client.h"
#include "kube/client/resource_ref.h"
#include "model/status.h"

namespace muster::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view WatchEventTypeName(WatchEventType type);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  std::string object_json;  // the "object" member, as the server sent it
  // From object.metadata; "" when absent (e.g. the Status of an ERROR event).
  std::string resource_version;
  std::string namespace_;
  std::string name;
};

// Reads one event document: its type, and the metadata of its object.
// InvalidArgument when it is not an object with a known "type" and an
// object "object" whose metadata, if present, is an object. The object past
// its metadata is left to the consumer's decoder (it is framed, so balanced,
// but not checked here).
StatusOr<WatchEvent> ParseWatchEvent(std::string_view json);

class WatchStreamParser {
 public:
  // A single event larger than `max_event_bytes` is an error (a runaway or
  // hostile stream must not grow memory without bound).
  explicit WatchStreamParser(size_t max_event_bytes = 64 << 20)
      : max_event_bytes_(max_event_bytes) {}

  // Consumes `chunk`; calls `on_event` for each complete event. Stops at the
  // first malformed event (and returns its error) or when `on_event` returns
  // false (and returns OK). After an error the parser stays failed.
  Status Feed(std::string_view chunk, const std::function<bool(WatchEvent&&)>& on_event);

  // True when no partial event is buffered (the stream ended cleanly).
  bool idle() const { return depth_ == 0 && buffer_.empty(); }

 private:
  // Frames from chunk[i] on to the end of the current event: its index one
  // past the event's last byte, or chunk.size() when the event goes on.
  size_t ScanEvent(std::string_view chunk, size_t i);
  // Hands the event that ends at chunk[end - 1] (its start in `chunk` at
  // `start`, earlier bytes in buffer_) to on_event.
  Status Deliver(std::string_view chunk, size_t start, size_t end,
                 const std::function<bool(WatchEvent&&)>& on_event, bool* more);

  const size_t max_event_bytes_;
  // The bytes of the event being framed that came in earlier chunks (an
  // event inside one chunk is read where it lies).
  std::string buffer_;
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  Status error_;
};

struct WatchOptions {
  std::string resource_version;  // where to start; "" = "now" (rarely wanted)
  bool allow_watch_bookmarks = true;
  int timeout_seconds = 0;  // server-side end of the watch; 0 = server default
  std::string label_selector;
  std::string field_selector;
  // How long the stream may stay silent before it counts as broken; 0 means
  // timeout_seconds + 30 s (or the transport default when no timeout is set).
  Duration read_timeout{0};
};

// Receives each event but ERROR; returns false to end the watch.
using WatchHandler = std::function<bool(const WatchEvent& event)>;

// Runs one watch of `ref`'s collection (ref.name is ignored) until the
// server ends it (OK), the handler returns false (OK), `cancel` fires
// (Cancelled), an ERROR event or HTTP error arrives (Gone for 410, otherwise
// the mapped error), the connection breaks (Unavailable) or the stream is
// malformed (InvalidArgument).
Status Watch(Client& client, const ResourceRef& ref, const WatchOptions& options,
             const WatchHandler& handler, CancelToken* cancel = nullptr);

}  // namespace muster::kube
