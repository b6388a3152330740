// `muster job list|view|suspend|resume|delete|run`: vcctl's job verbs
// (volcano-sh/volcano pkg/cli/job) over the user's kubeconfig. Each verb
// reads its flags, plans with the pure job_view.h, does its API calls, then
// prints. The job is named by a positional argument (`muster job view
// train`) or by vcctl's -N/--name.
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cmd/cli/cli.h"
#include "cmd/cli/job_view.h"
#include "cmd/cli/output.h"
#include "cmd/cli/verbs.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::cli {
namespace {

// vcctl job run's default requests and limits.
constexpr char kVcctlResources[] = "cpu=1000m,memory=100Mi";

// The one job named, positionally or by -N.
StatusOr<std::string> JobName(const Args& args) { return OneName(args, "job"); }

// NotFound worded for the user ("job ml/x not found"); other errors as they are.
Status Named(const Status& error, std::string_view ns, std::string_view name) {
  return NotFoundAs(error, "job", ObjectKey(ns, name));
}

// --- list -------------------------------------------------------------------

struct ListedJobs {
  std::vector<Job> jobs;
  std::vector<std::string> raw;       // the same jobs as the API returned them
  std::vector<std::string> problems;  // jobs muster cannot decode, and why
};

// A Job muster cannot decode (a field of the wrong type) still has a row,
// named, its phase "<invalid>", so one bad object does not hide the others.
Job UndecodableJob(const std::string& item, const Status& error, ListedJobs& out) {
  Job job;
  job.meta = kube::DecodeObjectIdentity(item);
  job.status.state.phase = "<invalid>";
  out.problems.push_back("job " + job.meta.Key() + ": " + kube::DecodeProblem(error));
  return job;
}

StatusOr<ListedJobs> ListJobs(Session& session, const std::string& ns, std::string_view queue) {
  MUSTER_ASSIGN_OR_RETURN(std::vector<std::string> pages,
                          session.client().ListAll(kube::VolcanoJobsRef().WithNamespace(ns)));
  ListedJobs out;
  for (const std::string& page : pages) {
    MUSTER_ASSIGN_OR_RETURN(std::vector<std::string> items, ListItems(page));
    for (std::string& item : items) {
      StatusOr<Job> decoded = kube::DecodeJob(item);
      Job job = decoded.ok() ? std::move(*decoded) : UndecodableJob(item, decoded.status(), out);
      if (!JobsInQueue({job}, queue).empty()) {
        out.jobs.push_back(std::move(job));
        out.raw.push_back(std::move(item));
      }
    }
  }
  return out;
}

int RunList(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "job list";
  StatusOr<OutputFormat> format = ListFormat(args, "job view NAME");
  if (!format.ok()) return UsageError(io, command, format.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  const bool all = args.Bool("all-namespaces");
  StatusOr<ListedJobs> listed = ListJobs(*session, all ? "" : session->ns(), args.Get("queue"));
  if (!listed.ok()) return Fail(io, command, listed.status());
  for (const std::string& problem : listed->problems) {
    io.err << "muster job list: " << problem << "\n";
  }
  if (*format == OutputFormat::kJson || *format == OutputFormat::kYaml) {
    return PrintObjects(io, command, listed->raw, /*as_list=*/true, *format);
  }
  if (listed->jobs.empty()) {
    io.err << (all ? std::string("No resources found\n")
                   : "No resources found in " + session->ns() + " namespace.\n");
    return kExitOk;
  }
  const JobListLayout layout{.all_namespaces = all, .wide = *format == OutputFormat::kWide};
  io.out << JobTable(listed->jobs, layout, io.clock.Now()).Render();
  return kExitOk;
}

// --- view -------------------------------------------------------------------

// The Job's Events; a refusal to list them (RBAC) leaves the screen without.
std::vector<Event> JobEvents(Session& session, const std::string& name, Io& io) {
  kube::ListOptions options;
  options.field_selector = "involvedObject.name=" + name + ",involvedObject.kind=Job";
  StatusOr<std::string> list =
      session.client().List(kube::ResourceRef::Core("events", session.ns()), options);
  StatusOr<kube::ObjectList<Event>> events =
      list.ok() ? kube::DecodeEventList(*list) : StatusOr<kube::ObjectList<Event>>(list.status());
  if (!events.ok()) {
    io.err << "muster job view: events not shown: " << events.status().message() << "\n";
    return {};
  }
  return std::move(events->items);
}

int RunView(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "job view";
  StatusOr<OutputFormat> format = ObjectFormat(args, "view");
  if (!format.ok()) return UsageError(io, command, format.status(), verb);
  StatusOr<std::string> name = JobName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  const auto ref = kube::VolcanoJobsRef().WithNamespace(session->ns()).WithName(*name);
  StatusOr<std::string> raw = session->client().Get(ref);
  if (!raw.ok()) return Fail(io, command, Named(raw.status(), session->ns(), *name));
  if (*format != OutputFormat::kTable) {
    return PrintObjects(io, command, {*raw}, /*as_list=*/false, *format);
  }
  StatusOr<Job> job = kube::DecodeJob(*raw);
  if (!job.ok()) return Fail(io, command, job.status());
  const std::vector<Event> events = JobEvents(*session, *name, io);
  io.out << JobViewText(*job, events, io.clock.Now());
  return kExitOk;
}

// --- suspend / resume ---------------------------------------------------------

// vcctl's suspend/resume: a Command the reconciler runs once (AbortJob /
// ResumeJob), on the Job's current uid so that a Job made again under the
// same name is not the one acted on.
int RunCommand(const Verb& verb, const Args& args, Io& io, std::string_view action) {
  const std::string command = "job " + verb.name;
  StatusOr<std::string> name = JobName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  const std::string& ns = session->ns();
  StatusOr<std::string> raw =
      session->client().Get(kube::VolcanoJobsRef().WithNamespace(ns).WithName(*name));
  if (!raw.ok()) return Fail(io, command, Named(raw.status(), ns, *name));
  StatusOr<Job> job = kube::DecodeJob(*raw);
  if (!job.ok()) return Fail(io, command, job.status());
  const std::string body = CommandBody(ns, JobTarget(*job), action);
  StatusOr<std::string> created =
      session->client().Create(kube::CommandsRef().WithNamespace(ns), body);
  if (!created.ok()) return Fail(io, command, created.status());
  io.out << "job " << ObjectKey(ns, *name) << ": " << verb.name << " requested (Command "
         << kube::DecodeObjectIdentity(*created).name << ")\n";
  return kExitOk;
}

// --- delete -------------------------------------------------------------------

int RunDelete(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "job delete";
  StatusOr<std::string> name = JobName(args);
  if (!name.ok()) return UsageError(io, command, name.status(), verb);
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  const std::string& ns = session->ns();
  StatusOr<std::string> deleted =
      session->client().Delete(kube::VolcanoJobsRef().WithNamespace(ns).WithName(*name));
  if (!deleted.ok()) return Fail(io, command, Named(deleted.status(), ns, *name));
  io.out << "job " << ObjectKey(ns, *name) << " deleted\n";
  return kExitOk;
}

// --- run ----------------------------------------------------------------------

StatusOr<int32_t> PositiveFlag(const Args& args, std::string_view flag, int32_t fallback) {
  if (!args.Has(flag)) return fallback;
  const std::string text = args.Get(flag);
  try {
    size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size() && value > 0) return value;
  } catch (const std::exception&) {  // not a number: the error below
  }
  return InvalidArgumentError("flag --" + std::string(flag) + ": \"" + text +
                              "\" is not a positive integer");
}

// `job run`'s flags as a RunSpec (every flag checked before any API call).
StatusOr<RunSpec> PlanRun(const Args& args, std::string ns) {
  RunSpec spec;
  MUSTER_ASSIGN_OR_RETURN(spec.name, JobName(args));
  spec.ns = std::move(ns);
  spec.image = args.Get("image", spec.image);
  spec.scheduler = args.Get("scheduler", spec.scheduler);
  spec.queue = args.Get("queue", spec.queue);
  MUSTER_ASSIGN_OR_RETURN(spec.min_available, PositiveFlag(args, "min", 1));
  MUSTER_ASSIGN_OR_RETURN(spec.replicas, PositiveFlag(args, "replicas", 1));
  if (spec.min_available > spec.replicas) {
    return InvalidArgumentError("flag --min: " + std::to_string(spec.min_available) +
                                " is more than --replicas " + std::to_string(spec.replicas));
  }
  MUSTER_ASSIGN_OR_RETURN(spec.requests,
                          ParseResourceList("--requests", args.Get("requests", kVcctlResources)));
  MUSTER_ASSIGN_OR_RETURN(spec.limits,
                          ParseResourceList("--limits", args.Get("limits", kVcctlResources)));
  return spec;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path == "-" ? "/dev/stdin" : path, std::ios::binary);
  if (!in) return InvalidArgumentError("flag --filename: cannot read \"" + path + "\"");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `job run` creates: the manifest of -f, else the Job of the flags.
StatusOr<Manifest> PlanRunBody(const Args& args, const std::string& ns) {
  if (!args.Has("filename")) {
    MUSTER_ASSIGN_OR_RETURN(RunSpec spec, PlanRun(args, ns));
    return Manifest{.json = RunJobBody(spec), .ns = spec.ns, .name = spec.name};
  }
  for (const char* flag :
       {"name", "image", "min", "replicas", "requests", "limits", "scheduler", "queue"}) {
    if (args.Has(flag)) {
      return InvalidArgumentError("flag --" + std::string(flag) +
                                  ": not with --filename (the manifest says it)");
    }
  }
  if (!args.positional.empty())
    return InvalidArgumentError("flag --filename: no NAME with a manifest");
  MUSTER_ASSIGN_OR_RETURN(std::string text, ReadFile(args.Get("filename")));
  StatusOr<Manifest> manifest = JobManifest(text, ns, args.Has("namespace"));
  if (!manifest.ok())
    return InvalidArgumentError("flag --filename: " + manifest.status().message());
  return manifest;
}

int RunRun(const Verb& verb, const Args& args, Io& io) {
  const std::string command = "job run";
  // Every flag is checked before the cluster is asked anything: a typo is
  // told as a typo (exit 2) even with no cluster; the namespace is known
  // once the session is open, so the plan is made again then.
  if (StatusOr<Manifest> checked = PlanRunBody(args, args.Get("namespace", "default"));
      !checked.ok()) {
    return UsageError(io, command, checked.status(), verb);
  }
  StatusOr<Session> session = Session::Open(args);
  if (!session.ok()) return SessionError(io, command, session.status(), verb);
  StatusOr<Manifest> plan = PlanRunBody(args, session->ns());
  if (!plan.ok()) return UsageError(io, command, plan.status(), verb);
  StatusOr<std::string> created =
      session->client().Create(kube::VolcanoJobsRef().WithNamespace(plan->ns), plan->json);
  if (!created.ok()) return Fail(io, command, created.status());
  io.out << "job " << ObjectKey(plan->ns, plan->name) << " created\n";
  return kExitOk;
}

// --- the noun -----------------------------------------------------------------

FlagSpec JobNameFlag() { return NameFlag("job", "(vcctl's flag; or give NAME as an argument)"); }

std::function<int(const Verb&, const Args&, Io&)> Commanding(std::string_view action) {
  return [action](const Verb& v, const Args& a, Io& io) { return RunCommand(v, a, io, action); };
}

// `job run`'s own flags (vcctl's).
std::vector<FlagSpec> RunFlags() {
  return {JobNameFlag(),
          {.name = "image",
           .short_name = 'i',
           .value_name = "IMAGE",
           .help = "the container image",
           .default_value = "busybox"},
          {.name = "min",
           .short_name = 'm',
           .value_name = "N",
           .help = "minAvailable",
           .default_value = "1"},
          {.name = "replicas",
           .short_name = 'r',
           .value_name = "N",
           .help = "the task's replicas",
           .default_value = "1"},
          {.name = "requests",
           .short_name = 'R',
           .value_name = "LIST",
           .help = "the container's requests",
           .default_value = kVcctlResources},
          {.name = "limits",
           .short_name = 'L',
           .value_name = "LIST",
           .help = "the container's limits",
           .default_value = kVcctlResources},
          {.name = "scheduler",
           .short_name = 'S',
           .value_name = "NAME",
           .help = "schedulerName",
           .default_value = "volcano"},
          {.name = "queue",
           .short_name = 'q',
           .value_name = "QUEUE",
           .help = "the queue",
           .default_value = "default"},
          {.name = "filename",
           .short_name = 'f',
           .value_name = "FILE",
           .help = "a Job manifest, YAML or JSON (- for stdin)"}};
}

std::vector<Verb> Verbs() {
  std::vector<Verb> verbs;
  verbs.push_back({"list",
                   "usage: muster job list [-n NS | -A] [-q QUEUE] [-o wide|json|yaml]\n"
                   "Lists Volcano Jobs with vcctl's columns (-o wide adds QUEUE and AGE).",
                   WithConnection({{.name = "all-namespaces",
                                    .short_name = 'A',
                                    .takes_value = false,
                                    .help = "every namespace (adds a NAMESPACE column)"},
                                   {.name = "queue",
                                    .short_name = 'q',
                                    .value_name = "QUEUE",
                                    .help = "only the jobs of this queue"},
                                   OutputFlag("wide, json or yaml")}),
                   RunList});
  verbs.push_back({"view",
                   "usage: muster job view NAME [-n NS] [-o json|yaml]\n"
                   "Shows a Job: queue, phase, tasks, counters, conditions and its Events.",
                   WithConnection({JobNameFlag(), OutputFlag("json or yaml (the object)")}),
                   RunView});
  verbs.push_back({"suspend",
                   "usage: muster job suspend NAME [-n NS]\n"
                   "Suspends a Job (Command AbortJob): its pods go, it stays, resumable.",
                   WithConnection({JobNameFlag()}), Commanding(kAbortJob)});
  verbs.push_back({"resume",
                   "usage: muster job resume NAME [-n NS]\n"
                   "Resumes a suspended Job (Command ResumeJob).",
                   WithConnection({JobNameFlag()}), Commanding(kResumeJob)});
  verbs.push_back({"delete", "usage: muster job delete NAME [-n NS]\nDeletes a Job.",
                   WithConnection({JobNameFlag()}), RunDelete});
  verbs.push_back(
      {"run",
       "usage: muster job run NAME [-i IMAGE] [-r N] [-m N] [-R LIST] [-L LIST] [-q QUEUE] | "
       "muster job run -f FILE\n"
       "Creates a one-task Job as vcctl's job run does, or the Job of a YAML/JSON manifest.",
       WithConnection(RunFlags()), RunRun});
  return verbs;
}

}  // namespace

int RunJob(const std::vector<std::string>& args, Io& io) {
  return RunNoun(
      {.name = "job", .summary = "(vcctl's job verbs; -n is the namespace)", .verbs = Verbs()},
      args, io);
}

}  // namespace muster::cli
