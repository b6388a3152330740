// Command-line flags of muster's subcommands (`muster extender`, `muster
// reconciler`): "--name=value" or "--name value", "--help"/"-h", errors that
// name the flag. Each subcommand keeps its own table of setters, built from
// the setter helpers below (StringInto, IntInto, DurationInto, BoolInto).
//
// Why here and not in base/: a setter answers a Status, and base/ (below
// model) includes no muster module; the helpers belong beside the parser
// whose FlagSetter they make.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/status.h"
#include "model/time.h"

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

// The field of Flags a flag sets, e.g.
//   [](ExtenderFlags& f) -> std::string& { return f.server.prefix; }
template <typename Flags, typename T>
using FlagField = std::function<T&(Flags&)>;

// A flag taking any string. (Flags is named: StringInto<MyFlags>(...).)
template <typename Flags>
FlagSetter<Flags> StringInto(std::type_identity_t<FlagField<Flags, std::string>> field) {
  return [field = std::move(field)](const std::string& v, Flags& f) {
    field(f) = v;
    return Status::Ok();
  };
}

// A flag taking an integer in [min, max] (ParseIntFlag), stored as a T.
template <typename Flags, typename T>
FlagSetter<Flags> IntInto(std::string flag, int64_t min, int64_t max,
                          std::type_identity_t<FlagField<Flags, T>> field) {
  return
      [flag = std::move(flag), min, max, field = std::move(field)](const std::string& v, Flags& f) {
        int64_t n = 0;
        MUSTER_RETURN_IF_ERROR(ParseIntFlag(flag, v, min, max, &n));
        field(f) = static_cast<T>(n);
        return Status::Ok();
      };
}

// A flag taking a Go duration ("10s", "1m30s") of at least `min`.
template <typename Flags>
FlagSetter<Flags> DurationInto(std::string flag, Duration min,
                               std::type_identity_t<FlagField<Flags, Duration>> field) {
  return [flag = std::move(flag), min, field = std::move(field)](const std::string& v, Flags& f) {
    StatusOr<Duration> d = ParseGoDuration(v);
    if (!d.ok() || *d < min) {
      return FlagError(flag, "\"" + v + "\" is not a duration of at least " +
                                 FormatGoDuration(min) + " (e.g. 0s, 10s, 1m)");
    }
    field(f) = *d;
    return Status::Ok();
  };
}

// A flag taking true or false.
template <typename Flags>
FlagSetter<Flags> BoolInto(std::string flag, std::type_identity_t<FlagField<Flags, bool>> field) {
  return [flag = std::move(flag), field = std::move(field)](const std::string& v, Flags& f) {
    if (v != "true" && v != "false") return FlagError(flag, "\"" + v + "\" is not true or false");
    field(f) = v == "true";
    return Status::Ok();
  };
}

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
