// `muster queue list|get|create|delete|open|close`: vcctl's queue verbs
// (volcano-sh/volcano pkg/cli/queue) over the user's kubeconfig. Each verb
// reads its flags, plans with the pure queue_view.h, does its API calls, then
// prints.
//
// Where muster departs from vcctl: vcctl's queue verbs take the queue's name
// with -n/--name; in muster -n is always the namespace (kubectl's rule, and
// the one `muster job` follows), so the queue is named by a positional
// argument or by --name/-N. The namespace matters only to `open`/`close`
// (and `create --state Closed`): the Command object they write is namespaced,
// and a queue's Command may live in any namespace.
#include <functional>
#include <iostream>

#include "cmd/cli/cli.h"
#include "cmd/cli/job_view.h"
#include "cmd/cli/muster_state.h"
#include "cmd/cli/output.h"
#include "cmd/cli/queue_view.h"
#include "cmd/cli/verbs.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::cli {
namespace {

StatusOr<std::string> QueueName(const Args& args) { return OneName(args, "queue"); }

Status Named(const Status& error, std::string_view name) {
  return NotFoundAs(error, "queue", name);
}

FlagSpec QueueNameFlag() {
  return NameFlag("queue", "(or give NAME as an argument; -n is the namespace, not vcctl's name)");
}

// Every PodGroup of the cluster counted per queue (vcctl's counters).
StatusOr<std::map<std::string, PodGroupCounts>> PodGroupCountsOf(Session& session) {
  MUSTER_ASSIGN_OR_RETURN(std::vector<std::string> pages,
                          session.client().ListAll(kube::PodGroupsRef()));
  std::vector<PodGroup> groups;
  for (const std::string& page : pages) {
    MUSTER_ASSIGN_OR_RETURN(kube::ObjectList<PodGroup> list, kube::DecodePodGroupList(page));
    for (PodGroup& pg : list.items) groups.push_back(std::move(pg));
  }
  return CountPodGroups(groups);
}

// muster's deserved shares; when muster cannot be asked, none and one note.
DeservedShares Deserved(Session& session, const Args& args, Io& io, std::string_view command) {
  StatusOr<std::string> state = FetchMusterState(session, args);
  StatusOr<std::map<std::string, Resources>> deserved =
      state.ok() ? ParseDeserved(*state)
                 : StatusOr<std::map<std::string, Resources>>(state.status());
  if (deserved.ok()) return *deserved;
  io.err << "muster " << command
         << ": deserved shares not shown (-): " << deserved.status().message() << "\n";
  return std::nullopt;
}

// --- list / get ---------------------------------------------------------------

int RunList(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "queue list";
  StatusOr<OutputFormat> format = ListFormat(args, "queue get NAME");
  if (!format.ok()) return UsageError(io, command, format.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<std::vector<std::string>> pages = session->client().ListAll(kube::QueuesRef());
  if (!pages.ok()) return Fail(io, command, pages.status());
  std::vector<std::string> raw;
  std::vector<Queue> queues;
  for (const std::string& page : *pages) {
    StatusOr<std::vector<std::string>> items = ListItems(page);
    if (!items.ok()) return Fail(io, command, items.status());
    for (std::string& item : *items) {
      StatusOr<Queue> queue = kube::DecodeQueue(item);
      if (!queue.ok()) {
        // A queue muster cannot decode still has a row (so one bad object
        // hides no other), its state "<invalid>", and a note why.
        const Status error = queue.status();
        queue = Queue{.meta = kube::DecodeObjectIdentity(item)};
        queue->status.state = "<invalid>";
        io.err << "muster queue list: queue " << queue->meta.name << ": "
               << kube::DecodeProblem(error) << "\n";
      }
      queues.push_back(std::move(*queue));
      raw.push_back(std::move(item));
    }
  }
  if (*format == OutputFormat::kJson || *format == OutputFormat::kYaml) {
    return PrintObjects(io, command, raw, /*as_list=*/true, *format);
  }
  if (queues.empty()) {
    io.err << "No resources found\n";
    return kExitOk;
  }
  StatusOr<std::map<std::string, PodGroupCounts>> counts = PodGroupCountsOf(*session);
  if (!counts.ok()) return Fail(io, command, counts.status());
  const bool wide = *format == OutputFormat::kWide;
  const DeservedShares deserved =
      wide ? Deserved(*session, args, io, command) : DeservedShares(std::nullopt);
  io.out << QueueTable(queues, *counts, wide, deserved).Render();
  return kExitOk;
}

int RunGet(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "queue get";
  StatusOr<OutputFormat> format = ObjectFormat(args, "get");
  if (!format.ok()) return UsageError(io, command, format.status(), verb);
  StatusOr<std::string> name = QueueName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<std::string> raw = session->client().Get(kube::QueuesRef().WithName(*name));
  if (!raw.ok()) return Fail(io, command, Named(raw.status(), *name));
  if (*format != OutputFormat::kTable) return PrintObjects(io, command, {*raw}, false, *format);
  StatusOr<Queue> queue = kube::DecodeQueue(*raw);
  if (!queue.ok()) return Fail(io, command, queue.status());
  StatusOr<std::map<std::string, PodGroupCounts>> counts = PodGroupCountsOf(*session);
  if (!counts.ok()) return Fail(io, command, counts.status());
  const auto mine = counts->find(*name);
  const DeservedShares deserved = Deserved(*session, args, io, command);
  io.out << QueueViewText(*queue, mine == counts->end() ? PodGroupCounts{} : mine->second, deserved,
                          io.clock.Now());
  return kExitOk;
}

// --- open / close (Commands) --------------------------------------------------

// The Command `action` on queue `name`, in the session's namespace; its name.
StatusOr<std::string> CommandQueue(Session& session, const std::string& name,
                                   std::string_view action) {
  StatusOr<std::string> raw = session.client().Get(kube::QueuesRef().WithName(name));
  if (!raw.ok()) return Named(raw.status(), name);
  MUSTER_ASSIGN_OR_RETURN(Queue queue, kube::DecodeQueue(*raw));
  MUSTER_ASSIGN_OR_RETURN(
      std::string created,
      session.client().Create(kube::CommandsRef().WithNamespace(session.ns()),
                              CommandBody(session.ns(), QueueTarget(queue), action)));
  return kube::DecodeObjectIdentity(created).name;
}

int RunOperate(const Verb& verb, const Args& args, Io& io, std::string_view action) {
  const std::string command = "queue " + verb.name;
  StatusOr<std::string> name = QueueName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<std::string> created = CommandQueue(*session, *name, action);
  if (!created.ok()) return Fail(io, command, created.status());
  io.out << "queue " << *name << ": " << verb.name << " requested (Command "
         << ObjectKey(session->ns(), *created) << ")\n";
  return kExitOk;
}

// --- create / delete ------------------------------------------------------------

StatusOr<QueueSpecFlags> PlanCreate(const Args& args) {
  QueueSpecFlags spec;
  MUSTER_ASSIGN_OR_RETURN(spec.name, QueueName(args));
  const std::string weight = args.Get("weight", "1");
  try {
    size_t used = 0;
    spec.weight = std::stoi(weight, &used);
    if (used != weight.size() || spec.weight < 1) throw std::invalid_argument(weight);
  } catch (const std::exception&) {
    return InvalidArgumentError("flag --weight: \"" + weight + "\" is not a positive integer");
  }
  const std::string state = args.Get("state", "Open");
  if (state != "Open" && state != "Closed") {
    return InvalidArgumentError("flag --state: \"" + state + "\" is not Open or Closed");
  }
  spec.parent = args.Get("parent");
  if (args.Has("capability")) {
    MUSTER_ASSIGN_OR_RETURN(spec.capability,
                            ParseResourceList("--capability", args.Get("capability")));
  }
  spec.reclaimable = args.Get("reclaimable", "true") == "true";
  return spec;
}

int RunCreate(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "queue create";
  StatusOr<QueueSpecFlags> spec = PlanCreate(args);
  if (!spec.ok()) return UsageError(io, command, spec.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<std::string> created = session->client().Create(kube::QueuesRef(), QueueBody(*spec));
  if (!created.ok()) return Fail(io, command, created.status());
  io.out << "queue " << spec->name << " created\n";
  // A new queue is made Open by the reconciler; Closed is asked for as
  // vcctl's `queue operate -a close` does, so the reconciler stays the one
  // writer of status.state.
  if (args.Get("state", "Open") == "Closed") {
    StatusOr<std::string> closing = CommandQueue(*session, spec->name, kCloseQueue);
    if (!closing.ok()) return Fail(io, command, closing.status());
    io.out << "queue " << spec->name << ": close requested (Command "
           << ObjectKey(session->ns(), *closing) << ")\n";
  }
  return kExitOk;
}

int RunDelete(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "queue delete";
  StatusOr<std::string> name = QueueName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  if (Status deletable = CheckQueueDeletable(*name); !deletable.ok()) {
    return Fail(io, command, deletable);
  }
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<std::string> deleted = session->client().Delete(kube::QueuesRef().WithName(*name));
  if (!deleted.ok()) return Fail(io, command, Named(deleted.status(), *name));
  io.out << "queue " << *name << " deleted\n";
  return kExitOk;
}

// --- the noun -----------------------------------------------------------------

std::vector<Verb> Verbs() {
  auto operate = [](std::string_view action) {
    return [action](const Verb& v, const Args& a, Io& io) { return RunOperate(v, a, io, action); };
  };
  return {
      {"list",
       "usage: muster queue list [-o wide|json|yaml]\n"
       "Lists queues with vcctl's columns (-o wide adds ALLOCATED and DESERVED).",
       WithMusterState(WithConnection({OutputFlag("wide, json or yaml")})), RunList},
      {"get",
       "usage: muster queue get NAME [-o json|yaml]\n"
       "Shows a queue: weight, state, resources allocated vs deserved, PodGroups.",
       WithMusterState(WithConnection({QueueNameFlag(), OutputFlag("json or yaml (the object)")})),
       RunGet},
      {"create",
       "usage: muster queue create NAME [-w N] [--state Open|Closed] [--parent P] "
       "[--capability LIST] [--reclaimable=false]\n"
       "Creates a queue.",
       WithConnection(
           {QueueNameFlag(),
            {.name = "weight",
             .short_name = 'w',
             .value_name = "N",
             .help = "the queue's weight",
             .default_value = "1"},
            {.name = "state",
             .short_name = 'S',
             .value_name = "STATE",
             .help = "Open or Closed",
             .default_value = "Open"},
            {.name = "parent", .value_name = "QUEUE", .help = "the parent queue (default: root)"},
            {.name = "capability",
             .value_name = "LIST",
             .help = "most the queue may hold, e.g. cpu=8,nvidia.com/gpu=16"},
            {.name = "reclaimable",
             .takes_value = false,
             .help = "others may reclaim what it holds above its share "
                     "(--reclaimable=false: not)",
             .default_value = "true"}}),
       RunCreate},
      {"delete", "usage: muster queue delete NAME\nDeletes a queue (never default or root).",
       WithConnection({QueueNameFlag()}), RunDelete},
      {"open",
       "usage: muster queue open NAME [-n NS]\n"
       "Opens a queue (Command OpenQueue, written in NS).",
       WithConnection({QueueNameFlag()}), operate(kOpenQueue)},
      {"close",
       "usage: muster queue close NAME [-n NS]\n"
       "Closes a queue (Command CloseQueue): running jobs finish, new ones are refused.",
       WithConnection({QueueNameFlag()}), operate(kCloseQueue)},
  };
}

}  // namespace

int RunQueue(const std::vector<std::string>& args, Io& io) {
  return RunNoun({.name = "queue",
                  .summary = "(vcctl's queue verbs; -n is the namespace, the queue is NAME)",
                  .verbs = Verbs()},
                 args, io);
}

}  // namespace muster::cli
