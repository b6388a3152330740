// A hash for maps keyed by std::string that also looks up by
// std::string_view, without building a string per lookup (pod uids, gang
// keys: the extender looks them up by the thousand per pass and request).
// Use with std::equal_to<>:
//   std::unordered_map<std::string, V, base::StringHash, std::equal_to<>>
//
// Thread-safety: stateless.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

namespace muster::base {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace muster::base
