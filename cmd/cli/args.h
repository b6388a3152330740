// The arguments of `muster job|queue|why`, in kubectl's and vcctl's style:
// "--name=value", "--name value", "-n value", "-n=value", boolean flags
// ("--all-namespaces", "-A"), "--" ending the flags, and positional
// arguments anywhere. Each verb declares its flags (FlagSpec); unknown flags
// and missing values are errors naming the flag, which callers answer with
// kExitUsage (cli.h).
//
// Pure; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace muster::cli {

struct FlagSpec {
  std::string name;           // long name, without "--"
  char short_name = 0;        // 0: none
  bool takes_value = true;    // false: a boolean flag
  std::string value_name;     // for help: "NAME", "FORMAT"
  std::string help;           // one line
  std::string default_value;  // shown in help when set
};

struct Args {
  std::vector<std::string> positional;
  // By long name; a boolean flag given is "true".
  std::map<std::string, std::string, std::less<>> values;
  bool help = false;  // --help or -h was given

  bool Has(std::string_view name) const { return values.count(name) > 0; }
  // The flag's value, or `fallback` when not given.
  std::string Get(std::string_view name, std::string fallback = "") const;
  bool Bool(std::string_view name) const { return Get(name) == "true"; }
};

// InvalidArgument for an unknown flag ("unknown flag --frob"), a flag without
// its value, or a boolean flag given a value other than true/false.
StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const std::vector<FlagSpec>& specs);

// The "flags:" block of a verb's --help, one line per flag, aligned.
std::string FlagsHelp(const std::vector<FlagSpec>& specs);

}  // namespace muster::cli
