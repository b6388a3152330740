// Byte-level rules of JSON text that the codecs' hand-written paths share
// with the DOM decoder: which bytes a JSON string must escape (the extender
// replies' writer, the request's name scan), and how a key matches a field
// name whatever its case (Member(), the name scan).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace muster::kube {

// Bit 7 of each byte of `word` (eight bytes of text) that a JSON string must
// escape: '"', '\\' or a byte below 0x20. Exact for the lowest such byte; a
// byte above it may be flagged falsely (a subtraction's borrow), so read only
// whether any byte is flagged, or which is the lowest.
inline uint64_t JsonEscapeBytes(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  constexpr uint64_t kHighs = 0x8080808080808080;
  const auto has_less = [](uint64_t v, uint64_t n) { return (v - kOnes * n) & ~v & kHighs; };
  return has_less(word, 0x20) | has_less(word ^ (kOnes * '"'), 1) |
         has_less(word ^ (kOnes * '\\'), 1);
}

// Equal but for ASCII case: the match Member() falls back to when no key is
// spelled exactly as the field (Go's encoding/json folds case).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace muster::kube
