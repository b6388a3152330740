// The muster binary: one executable, one subcommand per process role.
// Subcommands arrive with their issues (extender, reconciler, ...); each is a
// small function that parses its own flags and returns the process exit code.
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/version.h"
#include "extender/app.h"
#include "reconciler/app.h"

namespace {

using Subcommand = std::function<int(const std::vector<std::string>& args)>;

int RunVersion(const std::vector<std::string>& /*args*/) {
  std::printf("muster %s\n", MUSTER_VERSION);
  return 0;
}

const std::map<std::string, std::pair<Subcommand, std::string_view>>& Subcommands() {
  static const auto* table = new std::map<std::string, std::pair<Subcommand, std::string_view>>{
      {"extender",
       {muster::extender::RunExtender,
        "serve the kube-scheduler extender protocol (see muster extender --help)"}},
      {"reconciler",
       {muster::reconciler::RunReconciler,
        "run Volcano Jobs: PodGroup, pods, plugins, lifecycle (see muster reconciler --help)"}},
      {"version", {RunVersion, "print the version and exit"}},
  };
  return *table;
}

int Usage(std::FILE* out) {
  std::fprintf(out, "usage: muster <subcommand> [flags]\n\nsubcommands:\n");
  for (const auto& [name, entry] : Subcommands()) {
    std::fprintf(out, "  %-12s %s\n", name.c_str(), std::string(entry.second).c_str());
  }
  return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(stderr);
  const std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") return Usage(stdout);
  auto it = Subcommands().find(name);
  if (it == Subcommands().end()) {
    std::fprintf(stderr, "muster: unknown subcommand '%s'\n", name.c_str());
    return Usage(stderr);
  }
  return it->second.first(std::vector<std::string>(argv + 2, argv + argc));
}
