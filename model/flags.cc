#include "model/flags.h"

#include <charconv>

namespace muster {

Status FlagError(std::string_view flag, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "flag --" + std::string(flag) + ": " + what);
}

Status ParseIntFlag(std::string_view flag, const std::string& value, int64_t min, int64_t max,
                    int64_t* out) {
  int64_t v = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, v);
  if (value.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    return FlagError(flag, "\"" + value + "\" is not an integer in [" + std::to_string(min) + ", " +
                               std::to_string(max) + "]");
  }
  *out = v;
  return Status::Ok();
}

}  // namespace muster
