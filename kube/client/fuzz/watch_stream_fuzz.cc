// libFuzzer target: WatchStreamParser, the framer of every watch stream the
// sidecars read (and ParseWatchEvent under it). The first input byte picks
// a chunk size; the rest is the stream. The events (or the error) must be
// the same whether the stream arrives whole or in those chunks: framing may
// not depend on where the network splits the bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client/watch.h"

namespace kube = muster::kube;

namespace {

// Each event as "type ns/name@rv object", then the error, if any.
std::vector<std::string> Frame(std::string_view stream, size_t chunk) {
  kube::WatchStreamParser parser(/*max_event_bytes=*/1 << 16);
  std::vector<std::string> out;
  auto on_event = [&](kube::WatchEvent&& e) {
    out.push_back(std::string(kube::WatchEventTypeName(e.type)) + " " + e.namespace_ + "/" +
                  e.name + "@" + e.resource_version + " " + e.object_json);
    return true;
  };
  for (size_t at = 0; at < stream.size(); at += chunk) {
    muster::Status s = parser.Feed(stream.substr(at, chunk), on_event);
    if (!s.ok()) {
      out.push_back("error");
      return out;
    }
  }
  if (!parser.idle()) out.push_back("partial");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 16;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (Frame(stream, stream.size() + 1) != Frame(stream, chunk)) std::abort();
  return 0;
}
