#include "cmd/cli/why_inputs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "cmd/cli/muster_state.h"
#include "kube/client/resource_ref.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"

namespace muster::cli {
namespace {

// Volcano's names (its job controller writes them on every pod of a Job).
constexpr std::string_view kJobNameKey = "volcano.sh/job-name";
constexpr std::string_view kTaskSpecKey = "volcano.sh/task-spec";

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The annotation, else the label (Volcano writes both on a Job's pods).
std::string MetaValue(const ObjectMeta& meta, std::string_view key) {
  const std::string k(key);
  if (auto it = meta.annotations.find(k); it != meta.annotations.end()) return it->second;
  if (auto it = meta.labels.find(k); it != meta.labels.end()) return it->second;
  return "";
}

// /debug/state writes node resources as bare integers in muster's units
// (extender/server.cc WriteResources), not as quantities: read them as such.
void ReadUnits(kube::DecodeContext& ctx, const kube::JsonValue& obj, std::string_view key,
               Resources* out) {
  const kube::JsonValue* v = kube::Member(ctx, obj, key);
  if (v == nullptr) return;
  auto scope = ctx.Key(key);
  if (!kube::ExpectObject(ctx, *v)) return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (!it->value.IsInt64()) {
      ctx.FailAt(it->name.GetString(), "want an integer");
      return;
    }
    out->Set(std::string(it->name.GetString(), it->name.GetStringLength()), it->value.GetInt64());
  }
}

void DecodeNode(kube::DecodeContext& ctx, const kube::JsonValue& v, DebugNode* out) {
  kube::ReadString(ctx, v, "name", &out->name);
  ReadUnits(ctx, v, "allocatable", &out->allocatable);
  ReadUnits(ctx, v, "free", &out->free);
}

void DecodeGang(kube::DecodeContext& ctx, const kube::JsonValue& v, DebugGang* out) {
  kube::ReadString(ctx, v, "podGroup", &out->key);
  kube::ReadString(ctx, v, "phase", &out->phase);
  kube::ReadInt32(ctx, v, "minMember", &out->min_member);
  kube::ReadInt32(ctx, v, "members", &out->members);
  kube::ReadInt32(ctx, v, "scheduled", &out->scheduled);
  kube::ReadInt32(ctx, v, "reserved", &out->reserved);
  kube::ReadString(ctx, v, "queue", &out->queue);
  kube::ReadOptionalInt64(ctx, v, "position", &out->position);
  kube::ReadString(ctx, v, "waitReason", &out->wait_reason);
  kube::ReadString(ctx, v, "waitMessage", &out->wait_message);
}

void DecodeQueueShare(kube::DecodeContext& ctx, const kube::JsonValue& v, DebugQueueShare* out) {
  kube::ReadString(ctx, v, "name", &out->name);
  // fairShare writes quantities ("8", "500m"), as a ResourceList.
  kube::ReadResources(ctx, v, "deserved", &out->deserved);
  kube::ReadResources(ctx, v, "allocated", &out->allocated);
  kube::ReadResources(ctx, v, "demand", &out->demand);
  if (const kube::JsonValue* share = kube::Member(ctx, v, "share");
      share != nullptr && share->IsNumber()) {
    out->share = share->GetDouble();
  }
  kube::ReadString(ctx, v, "dominant", &out->dominant);
}

void DecodeState(kube::DecodeContext& ctx, const kube::JsonValue& v, DebugState* out) {
  kube::ReadArray(ctx, v, "nodes", &out->nodes, DecodeNode);
  kube::ReadArray(ctx, v, "gangs", &out->gangs, DecodeGang);
  kube::ReadObject(ctx, v, "fairShare", out,
                   [](kube::DecodeContext& c, const kube::JsonValue& fs, DebugState* s) {
                     kube::ReadArray(c, fs, "queues", &s->queues, DecodeQueueShare);
                   });
}

bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }

// The Job; one that does not decode is kept by identity and status (the
// reconciler answers such a Job with Failed/InvalidSpec on its status).
StatusOr<Job> ReadJob(Session& session, const std::string& name, std::string* problem) {
  MUSTER_ASSIGN_OR_RETURN(
      std::string json,
      session.client().Get(kube::VolcanoJobsRef().WithNamespace(session.ns()).WithName(name)));
  StatusOr<Job> job = kube::DecodeJob(json);
  if (job.ok()) return job;
  *problem = kube::DecodeProblem(job.status());
  Job partial;
  partial.meta = kube::DecodeObjectIdentity(json);
  if (StatusOr<JobStatus> status = kube::DecodeJobStatusOf(json); status.ok()) {
    partial.status = *std::move(status);
  }
  return partial;
}

// The PodGroup; one that does not decode is kept by identity and status
// (muster answers it with an Unschedulable condition, reason InvalidSpec).
StatusOr<PodGroup> ReadPodGroup(Session& session, const std::string& name) {
  MUSTER_ASSIGN_OR_RETURN(
      std::string json,
      session.client().Get(kube::PodGroupsRef().WithNamespace(session.ns()).WithName(name)));
  StatusOr<PodGroup> group = kube::DecodePodGroup(json);
  if (group.ok()) return group;
  PodGroup partial;
  partial.meta = kube::DecodeObjectIdentity(json);
  if (StatusOr<PodGroupStatus> status = kube::DecodePodGroupStatusOf(json); status.ok()) {
    partial.status = *std::move(status);
  }
  return partial;
}

StatusOr<Pod> ReadPod(Session& session, const std::string& name) {
  MUSTER_ASSIGN_OR_RETURN(
      std::string json, session.client().Get(kube::ResourceRef::Core("pods", session.ns(), name)));
  return kube::DecodePod(json);
}

// The pods of the gang: by the Job's label when there is a Job, else every
// pod of the namespace naming the PodGroup.
Status ReadMembers(Session& session, WhyInputs& in) {
  kube::ListOptions options;
  if (in.job.has_value())
    options.label_selector = std::string(kJobNameKey) + "=" + in.job->meta.name;
  MUSTER_ASSIGN_OR_RETURN(
      std::string json,
      session.client().List(kube::ResourceRef::Core("pods", session.ns()), options));
  MUSTER_ASSIGN_OR_RETURN(kube::ObjectList<Pod> pods, kube::DecodePodList(json));
  for (Pod& pod : pods.items) {
    if (pod.meta.deletion_timestamp.has_value()) continue;
    if (!in.job.has_value() && pod.GroupName() != in.pod_group_name) continue;
    in.members.push_back(std::move(pod));
  }
  return Status();
}

// The Job's Warning Events (the reconciler's InvalidSpec refusal among them).
Status ReadJobWarnings(Session& session, WhyInputs& in) {
  kube::ListOptions options;
  options.field_selector = "involvedObject.name=" + in.job->meta.name + ",type=Warning";
  MUSTER_ASSIGN_OR_RETURN(
      std::string json,
      session.client().List(kube::ResourceRef::Core("events", session.ns()), options));
  MUSTER_ASSIGN_OR_RETURN(kube::ObjectList<Event> events, kube::DecodeEventList(json));
  for (Event& e : events.items) {
    if (e.involved_object.kind == "Job") in.job_warnings.push_back(std::move(e));
  }
  std::stable_sort(
      in.job_warnings.begin(), in.job_warnings.end(),
      [](const Event& a, const Event& b) { return a.last_timestamp < b.last_timestamp; });
  return Status();
}

Status ReadQueue(Session& session, WhyInputs& in) {
  if (in.pod_group.has_value() && !in.pod_group->spec.queue.empty()) {
    in.queue_name = in.pod_group->spec.queue;
  } else if (in.job.has_value() && !in.job->spec.queue.empty()) {
    in.queue_name = in.job->spec.queue;
  } else if (in.pod.has_value() && !in.pod->QueueAnnotation().empty()) {
    in.queue_name = in.pod->QueueAnnotation();
  } else {
    in.queue_name = std::string(kDefaultQueue);
  }
  StatusOr<std::string> json = session.client().Get(kube::QueuesRef().WithName(in.queue_name));
  if (!json.ok()) {
    // Queues are cluster-scoped: a user bound to muster-cli in a namespace
    // may not read them. The rest of the screen still answers.
    if (!IsNotFound(json.status())) in.queue_problem = json.status().message();
    return Status();
  }
  MUSTER_ASSIGN_OR_RETURN(Queue queue, kube::DecodeQueue(*json));
  in.queue = std::move(queue);
  return Status();
}

void ReadMusterState(Session& session, const Args& args, WhyInputs& in) {
  StatusOr<std::string> json = FetchMusterState(session, args);
  if (!json.ok()) {
    in.muster_problem = json.status().message();
    return;
  }
  StatusOr<DebugState> state = DecodeDebugState(*json);
  if (!state.ok()) {
    in.muster_problem = state.status().message();
    return;
  }
  in.muster = *std::move(state);
}

// Keeps what `read` found in `slot`; a missing object is no error here (a
// Job whose PodGroup is not made yet, a pod whose Job is gone).
template <typename T>
Status Optional(StatusOr<T> read, std::optional<T>& slot) {
  if (read.ok()) {
    slot = *std::move(read);
    return Status();
  }
  return IsNotFound(read.status()) ? Status() : read.status();
}

// The Job's PodGroup is "<job>-<uid>" (docs/reconciler.md).
Status FromJob(Session& session, Job job, WhyInputs& in) {
  in.pod_group_name = job.meta.uid.empty() ? "" : job.meta.name + "-" + job.meta.uid;
  in.job = std::move(job);
  if (in.pod_group_name.empty()) return Status();
  return Optional(ReadPodGroup(session, in.pod_group_name), in.pod_group);
}

// A Job's PodGroup names it as its controller owner.
Status FromPodGroup(Session& session, PodGroup group, WhyInputs& in) {
  in.pod_group_name = group.meta.name;
  std::string job_name;
  for (const OwnerReference& owner : group.meta.owner_references) {
    if (owner.kind == "Job") job_name = owner.name;
  }
  in.pod_group = std::move(group);
  if (job_name.empty()) return Status();
  return Optional(ReadJob(session, job_name, &in.job_problem), in.job);
}

// A pod's PodGroup is its group-name annotation (else the one Volcano makes
// for a lone pod), its Job the volcano.sh/job-name label.
Status FromPod(Session& session, Pod pod, WhyInputs& in) {
  in.pod_group_name = pod.GroupName();
  if (in.pod_group_name.empty()) in.pod_group_name = pod.ImplicitGroupName();
  const std::string job_name = MetaValue(pod.meta, kJobNameKey);
  in.pod = std::move(pod);
  if (!job_name.empty()) {
    MUSTER_RETURN_IF_ERROR(Optional(ReadJob(session, job_name, &in.job_problem), in.job));
  }
  return Optional(ReadPodGroup(session, in.pod_group_name), in.pod_group);
}

// Tries the kinds the target allows in the order Job, PodGroup, pod.
Status Resolve(Session& session, const WhyTarget& target, WhyInputs& in) {
  const auto wants = [&](WhyKind k) { return target.kind == WhyKind::kAny || target.kind == k; };
  if (wants(WhyKind::kJob)) {
    StatusOr<Job> job = ReadJob(session, target.name, &in.job_problem);
    if (job.ok()) {
      in.asked.kind = WhyKind::kJob;
      return FromJob(session, *std::move(job), in);
    }
    if (!IsNotFound(job.status())) return job.status();
  }
  if (wants(WhyKind::kPodGroup)) {
    StatusOr<PodGroup> group = ReadPodGroup(session, target.name);
    if (group.ok()) {
      in.asked.kind = WhyKind::kPodGroup;
      return FromPodGroup(session, *std::move(group), in);
    }
    if (!IsNotFound(group.status())) return group.status();
  }
  if (wants(WhyKind::kPod)) {
    StatusOr<Pod> pod = ReadPod(session, target.name);
    if (pod.ok()) {
      in.asked.kind = WhyKind::kPod;
      return FromPod(session, *std::move(pod), in);
    }
    if (!IsNotFound(pod.status())) return pod.status();
  }
  const std::string what = target.kind == WhyKind::kJob        ? "no job"
                           : target.kind == WhyKind::kPodGroup ? "no podgroup"
                           : target.kind == WhyKind::kPod      ? "no pod"
                                                               : "no job, podgroup or pod";
  return Status(StatusCode::kNotFound,
                what + " named " + target.name + " in namespace " + session.ns());
}

}  // namespace

StatusOr<WhyInputs> GatherWhyInputs(Session& session, const Args& args, const WhyTarget& target) {
  WhyInputs in;
  in.ns = session.ns();
  in.asked = target;
  MUSTER_RETURN_IF_ERROR(Resolve(session, target, in));
  // A pod of another scheduler is not muster's: nothing more to read.
  if (in.pod.has_value() && in.pod->spec.scheduler_name != "volcano") return in;
  if (in.job.has_value() || !in.pod_group_name.empty()) {
    MUSTER_RETURN_IF_ERROR(ReadMembers(session, in));
  }
  in.needs = MemberNeedsOf(in.job, in.members);
  if (in.job.has_value()) MUSTER_RETURN_IF_ERROR(ReadJobWarnings(session, in));
  MUSTER_RETURN_IF_ERROR(ReadQueue(session, in));
  ReadMusterState(session, args, in);
  return in;
}

StatusOr<WhyTarget> ParseWhyTarget(std::string_view text) {
  WhyTarget target;
  const size_t slash = text.find('/');
  target.name = std::string(slash == std::string_view::npos ? text : text.substr(slash + 1));
  if (slash != std::string_view::npos) {
    const std::string kind = Lower(text.substr(0, slash));
    static const std::map<std::string, WhyKind, std::less<>> kKinds = {
        {"pod", WhyKind::kPod},           {"pods", WhyKind::kPod},
        {"job", WhyKind::kJob},           {"jobs", WhyKind::kJob},
        {"vcjob", WhyKind::kJob},         {"vcjobs", WhyKind::kJob},
        {"podgroup", WhyKind::kPodGroup}, {"podgroups", WhyKind::kPodGroup},
        {"pg", WhyKind::kPodGroup},
    };
    const auto it = kKinds.find(kind);
    if (it == kKinds.end()) {
      return Status(StatusCode::kInvalidArgument,
                    "unknown kind \"" + kind + "\" in \"" + std::string(text) +
                        "\" (want pod/, job/, vcjob/, podgroup/ or pg/)");
    }
    target.kind = it->second;
  }
  if (target.name.empty() || target.name.find('/') != std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "\"" + std::string(text) + "\" names nothing (want [KIND/]NAME)");
  }
  return target;
}

StatusOr<DebugState> DecodeDebugState(std::string_view json) {
  return kube::DecodeDocument<DebugState>(json, "decode muster's /debug/state", DecodeState);
}

std::vector<MemberNeed> MemberNeedsOf(const std::optional<Job>& job, const std::vector<Pod>& pods) {
  std::vector<MemberNeed> needs;
  if (!pods.empty()) {
    // One entry per task (or per distinct request, for pods of no Job).
    for (const Pod& pod : pods) {
      const std::string task = MetaValue(pod.meta, kTaskSpecKey);
      const Resources request = pod.EffectiveRequest();
      auto same = std::find_if(needs.begin(), needs.end(), [&](const MemberNeed& n) {
        return n.task == task && n.request == request;
      });
      if (same == needs.end()) {
        needs.push_back({.task = task, .count = 1, .request = request});
      } else {
        ++same->count;
      }
    }
    return needs;
  }
  if (!job.has_value()) return needs;
  for (const TaskSpec& task : job->spec.tasks) {
    // A template is a PodTemplateSpec: metadata and spec, as a pod has.
    StatusOr<Pod> templ = kube::DecodePod(task.template_json);
    if (!templ.ok()) continue;
    needs.push_back(
        {.task = task.name, .count = task.replicas, .request = templ->EffectiveRequest()});
  }
  return needs;
}

}  // namespace muster::cli
