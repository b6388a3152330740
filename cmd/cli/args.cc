#include "cmd/cli/args.h"

#include <algorithm>
#include <optional>

namespace muster::cli {
namespace {

const FlagSpec* FindLong(const std::vector<FlagSpec>& specs, std::string_view name) {
  auto it =
      std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return s.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

const FlagSpec* FindShort(const std::vector<FlagSpec>& specs, char name) {
  auto it = std::find_if(specs.begin(), specs.end(),
                         [&](const FlagSpec& s) { return s.short_name == name; });
  return it == specs.end() ? nullptr : &*it;
}

// One flag argument ("--name", "--name=v", "-n", "-n=v"): which spec, and the
// value written inline (nullopt when none).
struct FlagToken {
  const FlagSpec* spec = nullptr;
  std::string shown;  // as the user wrote it, for errors
  std::optional<std::string> inline_value;
};

StatusOr<FlagToken> ReadFlagToken(const std::string& arg, const std::vector<FlagSpec>& specs) {
  const bool is_long = arg.rfind("--", 0) == 0;
  const size_t eq = arg.find('=');
  FlagToken token;
  token.shown = arg.substr(0, eq);
  if (eq != std::string::npos) token.inline_value = arg.substr(eq + 1);
  if (is_long) {
    token.spec = FindLong(specs, std::string_view(token.shown).substr(2));
  } else if (token.shown.size() == 2) {
    token.spec = FindShort(specs, token.shown[1]);
  }
  if (token.spec == nullptr) return InvalidArgumentError("unknown flag " + token.shown);
  return token;
}

}  // namespace

std::string Args::Get(std::string_view name, std::string fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      args.positional.insert(args.positional.end(), argv.begin() + i + 1, argv.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      args.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      args.positional.push_back(arg);
      continue;
    }
    MUSTER_ASSIGN_OR_RETURN(FlagToken token, ReadFlagToken(arg, specs));
    const FlagSpec& spec = *token.spec;
    if (!spec.takes_value) {
      const std::string v = token.inline_value.value_or("true");
      if (v != "true" && v != "false") {
        return InvalidArgumentError("flag " + token.shown +
                                    " takes no value (or true/false), not \"" + v + "\"");
      }
      args.values[spec.name] = v;
      continue;
    }
    if (token.inline_value) {
      args.values[spec.name] = *token.inline_value;
    } else if (i + 1 < argv.size()) {
      args.values[spec.name] = argv[++i];
    } else {
      return InvalidArgumentError("flag " + token.shown + " needs a value" +
                                  (spec.value_name.empty() ? "" : " (" + spec.value_name + ")"));
    }
  }
  return args;
}

std::string FlagsHelp(const std::vector<FlagSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> lines;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    std::string left = s.short_name != 0 ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + s.name;
    if (s.takes_value) left += " " + (s.value_name.empty() ? std::string("VALUE") : s.value_name);
    std::string right = s.help;
    if (!s.default_value.empty()) right += " (default " + s.default_value + ")";
    width = std::max(width, left.size());
    lines.emplace_back(std::move(left), std::move(right));
  }
  std::string out = "flags:\n";
  for (const auto& [left, right] : lines) {
    out += "  " + left + std::string(width - left.size() + 2, ' ') + right + "\n";
  }
  out += "  -h, --help" + std::string(width > 10 ? width - 10 + 2 : 2, ' ') + "this help\n";
  return out;
}

}  // namespace muster::cli
