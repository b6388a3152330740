#include "cmd/cli/verbs.h"

#include <algorithm>
#include <utility>

#include "cmd/cli/job_view.h"
#include "cmd/cli/muster_state.h"

namespace muster::cli {

std::vector<FlagSpec> WithConnection(std::vector<FlagSpec> own) {
  for (FlagSpec& f : ConnectionFlags()) own.push_back(std::move(f));
  return own;
}

std::vector<FlagSpec> WithMusterState(std::vector<FlagSpec> own) {
  for (FlagSpec& f : MusterStateFlags()) own.push_back(std::move(f));
  return own;
}

FlagSpec NameFlag(std::string_view kind, std::string_view note) {
  return {.name = "name",
          .short_name = 'N',
          .value_name = "NAME",
          .help = "the " + std::string(kind) + " " + std::string(note)};
}

FlagSpec OutputFlag(std::string_view formats) {
  return {.name = "output",
          .short_name = 'o',
          .value_name = "FORMAT",
          .help = "output format: " + std::string(formats)};
}

StatusOr<std::string> OneName(const Args& args, std::string_view kind) {
  std::vector<std::string> names = args.positional;
  if (args.Has("name")) names.push_back(args.Get("name"));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const std::string word(kind);
  if (names.empty() || names.front().empty())
    return InvalidArgumentError("a " + word + " NAME is required");
  if (names.size() > 1) {
    return InvalidArgumentError("one " + word + " NAME, not " + std::to_string(names.size()));
  }
  return names.front();
}

StatusOr<OutputFormat> ListFormat(const Args& args, std::string_view view) {
  StatusOr<OutputFormat> format = ParseOutputFormat(args.Get("output"));
  if (format.ok() && !args.positional.empty()) {
    return InvalidArgumentError("takes no NAME (use " + std::string(view) + ")");
  }
  return format;
}

StatusOr<OutputFormat> ObjectFormat(const Args& args, std::string_view verb) {
  StatusOr<OutputFormat> format = ParseOutputFormat(args.Get("output"));
  if (format.ok() && *format == OutputFormat::kWide) {
    return InvalidArgumentError("flag -o: " + std::string(verb) + " prints json or yaml, not wide");
  }
  return format;
}

Status NotFoundAs(const Status& error, std::string_view kind, std::string_view key) {
  if (error.code() != StatusCode::kNotFound) return error;
  return Status(StatusCode::kNotFound, std::string(kind) + " " + std::string(key) + " not found");
}

int UsageError(Io& io, std::string_view command, const Status& error, const Verb& verb) {
  io.err << "muster " << command << ": " << error.message() << "\n"
         << verb.usage.substr(0, verb.usage.find('\n')) << "\n"
         << "(muster " << command << " --help for the flags)\n";
  return kExitUsage;
}

int SessionError(Io& io, std::string_view command, const Status& error, const Verb& verb) {
  if (error.code() == StatusCode::kInvalidArgument && error.message().rfind("flag ", 0) == 0) {
    return UsageError(io, command, error, verb);
  }
  return Fail(io, command, error);
}

int PrintObjects(Io& io, std::string_view command, const std::vector<std::string>& items,
                 bool as_list, OutputFormat format) {
  StatusOr<std::string> text = FormatObjects(items, as_list, format);
  if (!text.ok()) return Fail(io, command, text.status());
  io.out << *text;
  return kExitOk;
}

std::string NounHelp(const Noun& noun) {
  std::string out =
      "usage: muster " + noun.name + " <verb> [flags]   " + noun.summary + "\n\nverbs:\n";
  for (const Verb& v : noun.verbs) {
    const std::string what = v.usage.substr(v.usage.find('\n') + 1);
    out += "  " + v.name + std::string(10 - v.name.size(), ' ') + what + "\n";
  }
  return out + "\nmuster " + noun.name + " <verb> --help shows a verb's flags.\n";
}

int RunNoun(const Noun& noun, const std::vector<std::string>& args, Io& io) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? io.err : io.out) << NounHelp(noun);
    return args.empty() ? kExitUsage : kExitOk;
  }
  const auto verb = std::find_if(noun.verbs.begin(), noun.verbs.end(),
                                 [&](const Verb& v) { return v.name == args[0]; });
  if (verb == noun.verbs.end()) {
    io.err << "muster " << noun.name << ": unknown verb \"" << args[0] << "\"\n" << NounHelp(noun);
    return kExitUsage;
  }
  StatusOr<Args> parsed = ParseArgs({args.begin() + 1, args.end()}, verb->flags);
  if (!parsed.ok()) return UsageError(io, noun.name + " " + verb->name, parsed.status(), *verb);
  if (parsed->help) {
    io.out << verb->usage << "\n\n" << FlagsHelp(verb->flags);
    return kExitOk;
  }
  return verb->run(*verb, *parsed, io);
}

}  // namespace muster::cli
