// The property every codec fuzz target checks: whatever a decoder accepts,
// its encoder writes back in a form the decoder reads to an equal model, and
// encoding that again gives the same bytes. A violation prints the input,
// the encodings and the reason to stderr and aborts, so libFuzzer records
// the input as a crash.
//
// Thread-safety: stateless; libFuzzer calls targets on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace muster::kube::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void RoundTripFailure(std::string_view what, std::string_view input,
                                          std::string_view encoded, std::string_view detail) {
  std::fprintf(stderr,
               "round-trip property violated: %.*s\n--- input ---\n%.*s\n--- encoded ---\n%.*s\n"
               "--- detail ---\n%.*s\n",
               static_cast<int>(what.size()), what.data(), static_cast<int>(input.size()),
               input.data(), static_cast<int>(encoded.size()), encoded.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// Checks the property for one decoded `value`. `input` is only for the report.
// REQUIRES: decode(std::string_view) -> StatusOr<T>; encode(const T&) -> std::string.
template <typename T, typename Decode, typename Encode>
void CheckValueRoundTrip(const T& value, Decode&& decode, Encode&& encode, std::string_view input) {
  std::string encoded = encode(value);
  auto again = decode(encoded);
  if (!again.ok()) {
    RoundTripFailure("the encoded value does not decode", input, encoded,
                     again.status().ToString());
  }
  if (!(*again == value)) {
    RoundTripFailure("the re-decoded value differs from the first decode", input, encoded,
                     "re-encoded: " + encode(*again));
  }
  std::string reencoded = encode(*again);
  if (reencoded != encoded) {
    RoundTripFailure("encoding an equal value gave different bytes", input, encoded,
                     "re-encoded: " + reencoded);
  }
}

// Decodes `input`; when that succeeds, checks the round trip of the result.
template <typename Decode, typename Encode>
void CheckRoundTrip(std::string_view input, Decode&& decode, Encode&& encode) {
  auto decoded = decode(input);
  if (!decoded.ok()) return;
  CheckValueRoundTrip(*decoded, decode, encode, input);
}

// For list documents, which have no encoder: decodes `input` with
// `decode_list` and checks the round trip of every item with the item codec.
template <typename DecodeList, typename Decode, typename Encode>
void CheckListRoundTrip(std::string_view input, DecodeList&& decode_list, Decode&& decode,
                        Encode&& encode) {
  auto list = decode_list(input);
  if (!list.ok()) return;
  for (const auto& item : list->items) CheckValueRoundTrip(item, decode, encode, input);
}

}  // namespace muster::kube::fuzz
