// The verb plumbing `muster job` and `muster queue` share: a noun is a list
// of Verbs (name, usage, flags, what runs it), dispatched by RunNoun with
// kubectl's help and usage errors; the flags every verb of a noun takes
// (NameFlag, OutputFlag, WithConnection, WithMusterState); the one NAME a
// verb acts on (OneName); and how errors end a verb (UsageError: exit 2,
// SessionError, NotFoundAs).
//
// Flag specs, OneName, NotFoundAs and NounHelp are pure. RunNoun,
// UsageError, SessionError and PrintObjects write to the Io they are given
// (no other I/O; a Verb's `run` does the cluster's). Thread-compatible: one
// call at a time per Io.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/args.h"
#include "cmd/cli/output.h"
#include "cmd/cli/session.h"
#include "model/status.h"

namespace muster::cli {

struct Verb {
  std::string name;
  std::string usage;  // the usage line, then what the verb does
  std::vector<FlagSpec> flags;
  std::function<int(const Verb&, const Args&, Io&)> run;
};

// A noun (`job`, `queue`) and its verbs.
struct Noun {
  std::string name;
  std::string summary;  // after the noun's usage line, e.g. "(vcctl's job verbs)"
  std::vector<Verb> verbs;
};

// `own` followed by the connection flags (session.h) / muster's state flags
// (muster_state.h).
std::vector<FlagSpec> WithConnection(std::vector<FlagSpec> own);
std::vector<FlagSpec> WithMusterState(std::vector<FlagSpec> own);

// --name/-N NAME, helped as "the <kind> <note>".
FlagSpec NameFlag(std::string_view kind, std::string_view note);
// --output/-o FORMAT, helped as "output format: <formats>".
FlagSpec OutputFlag(std::string_view formats);

// The one object named, positionally or by -N (the same name given both ways
// counts once). InvalidArgument "a <kind> NAME is required" when none, "one
// <kind> NAME, not N" when several.
StatusOr<std::string> OneName(const Args& args, std::string_view kind);

// -o of a verb that lists (`list`, which takes no NAME): InvalidArgument for
// an unknown format, or "takes no NAME (use <view>)" for a positional.
StatusOr<OutputFormat> ListFormat(const Args& args, std::string_view view);
// -o of a verb that shows one object (`view`, `get`): the screen, json or
// yaml; InvalidArgument "flag -o: <verb> prints json or yaml, not wide" for
// wide.
StatusOr<OutputFormat> ObjectFormat(const Args& args, std::string_view verb);

// NotFound worded for the user ("<kind> <key> not found"); other errors as
// they are.
Status NotFoundAs(const Status& error, std::string_view kind, std::string_view key);

// A wrong argument: "muster <command>: <message>", the verb's usage line and
// where its flags are told, on io.err; returns kExitUsage.
int UsageError(Io& io, std::string_view command, const Status& error, const Verb& verb);

// Session::Open's failure: an InvalidArgument naming a flag
// (--request-timeout) is a UsageError, anything else Fail (session.h).
int SessionError(Io& io, std::string_view command, const Status& error, const Verb& verb);

// -o json|yaml of `items` (FormatObjects, job_view.h) on io.out: kExitOk, or
// Fail's code. REQUIRES: format is kJson or kYaml.
int PrintObjects(Io& io, std::string_view command, const std::vector<std::string>& items,
                 bool as_list, OutputFormat format);

// The noun's --help: its usage line and summary, then a line per verb.
std::string NounHelp(const Noun& noun);

// `muster <noun> <verb> [flags]`: `args` are those after the noun. No verb:
// the noun's help on io.err, kExitUsage; --help/-h: on io.out, kExitOk; an
// unknown verb or bad flags: kExitUsage; a verb's --help: its usage and
// flags; else what the verb's `run` returns.
int RunNoun(const Noun& noun, const std::vector<std::string>& args, Io& io);

}  // namespace muster::cli
