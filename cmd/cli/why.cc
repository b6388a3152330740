// `muster why [KIND/]NAME`: parse -> gather (why_inputs.h, the API reads)
// -> explain (why_explain.h, pure) -> print.
#include <ostream>
#include <string>
#include <vector>

#include "cmd/cli/args.h"
#include "cmd/cli/cli.h"
#include "cmd/cli/muster_state.h"
#include "cmd/cli/session.h"
#include "cmd/cli/why_explain.h"
#include "cmd/cli/why_inputs.h"

namespace muster::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: muster why [pod/|job/|vcjob/|podgroup/|pg/]NAME [flags]";

std::vector<FlagSpec> WhyFlags() {
  std::vector<FlagSpec> flags = ConnectionFlags();
  for (FlagSpec& f : MusterStateFlags()) flags.push_back(std::move(f));
  return flags;
}

void PrintHelp(Io& io, const std::vector<FlagSpec>& flags) {
  io.out << kUsage << "\n\n"
         << "Explains in one screen why a Volcano Job, a PodGroup or a pod waits: the PodGroup's\n"
            "condition, its queue's share and capability, its place in muster's planning order,\n"
            "what one member needs and the largest free fit, and what would make it run.\n"
            "A bare NAME is looked up as a Job, then a PodGroup, then a pod. muster's own view\n"
            "(/debug/state) is read through the API server, or from --muster-url; without it the\n"
            "screen says what the API alone shows.\n\n"
         << FlagsHelp(flags);
}

int Usage(Io& io, const std::string& problem) {
  io.err << "muster why: " << problem << "\n" << kUsage << "\n";
  return kExitUsage;
}

}  // namespace

int RunWhy(const std::vector<std::string>& argv, Io& io) {
  const std::vector<FlagSpec> flags = WhyFlags();
  StatusOr<Args> args = ParseArgs(argv, flags);
  if (!args.ok()) return Usage(io, args.status().message());
  if (args->help) {
    PrintHelp(io, flags);
    return kExitOk;
  }
  if (args->positional.size() != 1) {
    return Usage(io,
                 args->positional.empty() ? "name what to explain" : "explain one thing at a time");
  }
  StatusOr<WhyTarget> target = ParseWhyTarget(args->positional.front());
  if (!target.ok()) return Usage(io, target.status().message());
  StatusOr<Session> session = Session::Open(*args);
  if (!session.ok()) return Fail(io, "why", session.status());
  StatusOr<WhyInputs> inputs = GatherWhyInputs(*session, *args, *target);
  if (!inputs.ok()) return Fail(io, "why", inputs.status());
  io.out << ExplainWhy(*inputs);
  return kExitOk;
}

}  // namespace muster::cli
