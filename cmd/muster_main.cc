// The muster binary: one executable, one subcommand per process role
// (extender, reconciler) and the user's command line (job, queue, why:
// cmd/cli/cli.h). Each subcommand is a function that parses its own flags and
// returns the process exit code. Run through a link named kubectl-muster
// (kubectl's plugin convention), `kubectl muster job list` runs
// `kubectl-muster job list`: the same arguments, so nothing here tells them apart.
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/cli.h"
#include "cmd/version.h"
#include "extender/app.h"
#include "model/clock.h"
#include "reconciler/app.h"

namespace {

using Subcommand = std::function<int(const std::vector<std::string>& args)>;

// The command line's nouns print to the terminal and read the real clock.
Subcommand UserCommand(int (*run)(const std::vector<std::string>&, muster::cli::Io&)) {
  return [run](const std::vector<std::string>& args) {
    muster::cli::Io io{std::cout, std::cerr, muster::RealClock()};
    const int code = run(args, io);
    std::cout.flush();
    return code;
  };
}

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
      {"job",
       {UserCommand(muster::cli::RunJob),
        "Volcano Jobs: list, view, suspend, resume, delete, run (see muster job --help)"}},
      {"queue",
       {UserCommand(muster::cli::RunQueue),
        "queues: list, get, create, delete, open, close (see muster queue --help)"}},
      {"why",
       {UserCommand(muster::cli::RunWhy),
        "why a pod, Job or PodGroup waits, and what would make it run (see muster why --help)"}},
      {"version", {RunVersion, "print the version and exit"}},
  };
  return *table;
}

int Usage(std::FILE* out) {
  std::fprintf(out,
               "usage: muster <subcommand> [flags]   (or kubectl muster <subcommand> [flags])\n\n"
               "subcommands:\n");
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
