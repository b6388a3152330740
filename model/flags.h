// Command-line flags of muster's subcommands (`muster extender`, `muster
// reconciler`): "--name=value" or "--name value", "--help"/"-h", errors that
// name the flag. Each subcommand keeps its own table of setters.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace muster {

// InvalidArgument "flag --<flag>: <what>".
Status FlagError(std::string_view flag, const std::string& what);

// `value` as an integer in [min, max], or FlagError naming `flag`.
Status ParseIntFlag(std::string_view flag, const std::string& value, int64_t min, int64_t max,
                    int64_t* out);

template <typename Flags>
using FlagSetter = std::function<Status(const std::string& value, Flags& flags)>;
template <typename Flags>
using FlagTable = std::map<std::string, FlagSetter<Flags>, std::less<>>;

// Runs the setter of every flag in `args` on `flags`; "--help"/"-h" set
// *help. InvalidArgument for an unknown flag, a flag without a value or a
// stray positional argument; a setter's error is returned as it is (setters
// name their flag with FlagError).
template <typename Flags>
Status ParseFlagArgs(const std::vector<std::string>& args, const FlagTable<Flags>& setters,
                     Flags& flags, bool* help) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      *help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      return Status(StatusCode::kInvalidArgument, "unexpected argument \"" + arg + "\"");
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    auto setter = setters.find(name);
    if (setter == setters.end()) {
      return Status(StatusCode::kInvalidArgument, "unknown flag --" + name);
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return FlagError(name, "needs a value");
    }
    MUSTER_RETURN_IF_ERROR(setter->second(value, flags));
  }
  return Status::Ok();
}

}  // namespace muster
