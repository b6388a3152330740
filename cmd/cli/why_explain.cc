#include "cmd/cli/why_explain.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "cmd/cli/why_view.h"
#include "model/quantity.h"

namespace muster::cli {
namespace {

using why_internal::Amount;
using why_internal::MakeView;
using why_internal::RefusalOf;
using why_internal::Remedies;
using why_internal::View;

// Wait reasons, as muster writes them (gang/gang.h kWait*,
// extender/queue_step.h, docs/operator-guide.md "Why is my gang pending?").
constexpr std::string_view kMembersReason = "NotEnoughTasks";
constexpr std::string_view kResourcesReason = "NotEnoughResources";
constexpr std::string_view kNeverFitsReason = "Unplaceable";
constexpr std::string_view kCapabilityReason = "QueueCapability";
constexpr std::string_view kOverShareReason = "QueueOverShare";
constexpr std::string_view kTopologyReason = "NetworkTopology";
constexpr std::string_view kBadTopologyReason = "BadNetworkTopology";
constexpr std::string_view kQueueNotFoundReason = "QueueNotFound";
constexpr std::string_view kQueueClosedReason = "QueueClosed";
constexpr std::string_view kInvalidReason = "InvalidSpec";

// "1 node", "16 nodes".
std::string Count(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string KindName(WhyKind kind) {
  switch (kind) {
    case WhyKind::kPod:
      return "pod";
    case WhyKind::kPodGroup:
      return "podgroup";
    default:
      return "job";
  }
}

// A quantity for people: cpu in cores to one decimal above a core ("95.9",
// where the API's form is "95900m"); the API's form otherwise.
std::string Human(std::string_view resource, int64_t value) {
  if (resource != kCpu || value < 1000 || value % 1000 == 0) {
    return FormatResourceQuantity(resource, value);
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(value) / 1000);
  return text;
}

// "cpu=1, nvidia.com/gpu=8": a request without the pod slot.
std::string Request(Resources r) {
  r.Erase(kPods);
  return r.ToString();
}

const Condition* ConditionOf(const std::optional<PodGroup>& group) {
  if (!group.has_value() || group->status.conditions.empty()) return nullptr;
  for (const Condition& c : group->status.conditions) {
    if (c.type == "Unschedulable" && c.status == "True") return &c;
  }
  return &group->status.conditions.back();
}

int32_t ScheduledPods(const std::vector<Pod>& pods) {
  return static_cast<int32_t>(std::count_if(pods.begin(), pods.end(), [](const Pod& p) {
    return !p.spec.node_name.empty() && !p.IsTerminal();
  }));
}

// The resource a member cannot get: the first that exceeds every node's free
// (nvidia.com/gpu first), else the GPU when it asks one, else cpu.
std::string ScarceOf(const Resources& per_member, const std::vector<DebugNode>& nodes) {
  std::vector<std::string> short_of;
  for (const Resources::Entry& e : per_member.entries()) {
    if (e.first == kPods || e.second <= 0) continue;
    const bool fits = std::any_of(nodes.begin(), nodes.end(), [&](const DebugNode& n) {
      return n.free.Get(e.first) >= e.second;
    });
    if (!fits) short_of.push_back(e.first);
  }
  const auto gpu = std::find(short_of.begin(), short_of.end(), kNvidiaGpu);
  if (gpu != short_of.end()) return *gpu;
  if (!short_of.empty()) return short_of.front();
  return per_member.Get(kNvidiaGpu) > 0 ? std::string(kNvidiaGpu) : std::string(kCpu);
}

template <typename Amount>
const DebugNode* MostOf(const std::vector<DebugNode>& nodes, Amount amount) {
  const DebugNode* best = nullptr;
  for (const DebugNode& n : nodes) {
    if (best == nullptr || amount(n) > amount(*best)) best = &n;
  }
  return best;
}

void FindMusterFacts(View& v) {
  const WhyInputs& in = *v.in;
  if (!in.muster.has_value()) return;
  const std::string key = in.ns + "/" + in.pod_group_name;
  for (const DebugGang& g : in.muster->gangs) {
    if (!in.pod_group_name.empty() && g.key == key) v.gang = &g;
  }
  for (const DebugQueueShare& q : in.muster->queues) {
    if (q.name == in.queue_name) v.share = &q;
  }
  const auto& nodes = in.muster->nodes;
  v.scarce = ScarceOf(v.per_member, nodes);
  v.largest_free = MostOf(nodes, [&](const DebugNode& n) { return n.free.Get(v.scarce); });
  v.largest_allocatable =
      MostOf(nodes, [&](const DebugNode& n) { return n.allocatable.Get(v.scarce); });
}

}  // namespace

namespace why_internal {

// "8 nvidia.com/gpu", "500m cpu", "2Gi memory".
std::string Amount(std::string_view resource, int64_t value) {
  return Human(resource, value) + " " + std::string(resource);
}

View MakeView(const WhyInputs& in) {
  View v;
  v.in = &in;
  v.subject = KindName(in.asked.kind) + " " + in.ns + "/" + in.asked.name;
  for (const MemberNeed& need : in.needs) {
    v.per_member = Resources::Max(v.per_member, need.request);
    Resources all = need.request;
    all *= need.count;
    v.total += all;
  }
  v.scarce = v.per_member.Get(kNvidiaGpu) > 0 ? std::string(kNvidiaGpu) : std::string(kCpu);
  FindMusterFacts(v);
  v.condition = ConditionOf(in.pod_group);
  if (v.gang != nullptr && !v.gang->wait_reason.empty()) {
    v.reason = v.gang->wait_reason;
    v.message = v.gang->wait_message;
  } else if (v.condition != nullptr && v.condition->type == "Unschedulable") {
    v.reason = v.condition->reason;
    v.message = v.condition->message;
  }
  v.min_member = v.gang != nullptr          ? v.gang->min_member
                 : in.pod_group.has_value() ? in.pod_group->spec.min_member
                 : in.job.has_value()       ? in.job->spec.min_available
                                            : 0;
  v.members = v.gang != nullptr ? v.gang->members : static_cast<int32_t>(in.members.size());
  v.scheduled = v.gang != nullptr ? v.gang->scheduled : ScheduledPods(in.members);
  return v;
}

// The refusal's message: the Job's status, else its newest Warning Event.
std::string RefusalOf(const View& v) {
  const WhyInputs& in = *v.in;
  if (in.job.has_value() && !in.job->status.state.message.empty()) {
    return in.job->status.state.message;
  }
  if (!in.job_warnings.empty()) return in.job_warnings.back().message;
  if (!in.job_problem.empty()) return in.job_problem;
  return v.message;
}

}  // namespace why_internal

namespace {

bool JobRefused(const WhyInputs& in) {
  if (!in.job_problem.empty()) return true;
  return in.job.has_value() && in.job->status.state.reason == kInvalidReason;
}

bool JobOver(const WhyInputs& in) {
  static const std::set<std::string, std::less<>> kOver = {
      "Completed", "Completing", "Failed", "Aborted", "Aborting", "Terminated", "Terminating"};
  return in.job.has_value() && kOver.contains(in.job->status.state.phase);
}

bool Runs(const View& v) {
  const WhyInputs& in = *v.in;
  if (v.gang != nullptr && v.gang->phase == kPodGroupRunning) return true;
  if (in.pod_group.has_value() && in.pod_group->status.phase == kPodGroupRunning) return true;
  if (v.min_member > 0 && v.scheduled >= v.min_member) return true;
  return in.pod.has_value() && !in.pod->spec.node_name.empty() && !in.pod_group.has_value();
}

WhyVerdict VerdictOfReason(std::string_view reason) {
  static const std::vector<std::pair<std::string_view, WhyVerdict>> kByReason = {
      {kMembersReason, WhyVerdict::kMembers},
      {kResourcesReason, WhyVerdict::kResources},
      {kNeverFitsReason, WhyVerdict::kNeverFits},
      {kCapabilityReason, WhyVerdict::kQueueCapability},
      {kOverShareReason, WhyVerdict::kQueueOverShare},
      {kTopologyReason, WhyVerdict::kNetworkTopology},
      {kBadTopologyReason, WhyVerdict::kNetworkTopology},
      {kQueueNotFoundReason, WhyVerdict::kQueueMissing},
      {kQueueClosedReason, WhyVerdict::kQueueClosed},
      {kInvalidReason, WhyVerdict::kInvalid},
  };
  for (const auto& [r, verdict] : kByReason) {
    if (r == reason) return verdict;
  }
  return WhyVerdict::kPending;
}

WhyVerdict VerdictOfView(const View& v) {
  const WhyInputs& in = *v.in;
  if (in.pod.has_value() && in.pod->spec.scheduler_name != "volcano") return WhyVerdict::kNotMuster;
  if (JobRefused(in)) return WhyVerdict::kInvalid;
  if (JobOver(in)) return WhyVerdict::kFinished;
  if (Runs(v)) return WhyVerdict::kRunning;
  if (in.job.has_value() && !in.pod_group.has_value()) return WhyVerdict::kNoPodGroup;
  if (const WhyVerdict by_reason = VerdictOfReason(v.reason); by_reason != WhyVerdict::kPending) {
    return by_reason;
  }
  // A plain PodGroup short of pods waits for them whether or not muster
  // says so: muster gives a gang with no pods no wait reason at all.
  if (!in.job.has_value() && in.pod_group.has_value() && v.members < v.min_member) {
    return WhyVerdict::kMembers;
  }
  if (!in.queue.has_value() && !in.queue_name.empty() && in.queue_problem.empty()) {
    return WhyVerdict::kQueueMissing;
  }
  if (in.queue.has_value() && !in.queue->IsOpen()) return WhyVerdict::kQueueClosed;
  return WhyVerdict::kPending;
}

// The nodes the gang's pods are bound to, sorted and unique.
std::string NodesOf(const std::vector<Pod>& pods) {
  std::set<std::string> nodes;
  for (const Pod& p : pods) {
    if (!p.spec.node_name.empty() && !p.IsTerminal()) nodes.insert(p.spec.node_name);
  }
  if (nodes.empty()) return "no node yet";
  // A few names say where; a gang on 100 nodes must not fill the screen.
  constexpr size_t kShown = 4;
  std::string out;
  size_t shown = 0;
  for (const std::string& n : nodes) {
    if (shown++ == kShown) break;
    out += (out.empty() ? "" : ", ") + n;
  }
  if (nodes.size() > kShown) {
    out += " and " + Count(static_cast<int64_t>(nodes.size() - kShown), "other node");
  }
  return out;
}

std::string ResourcesVerdict(const View& v) {
  const int64_t need = v.per_member.Get(v.scarce);
  const int64_t best = v.largest_free == nullptr ? 0 : v.largest_free->free.Get(v.scarce);
  const std::string gang = "its gang of " + std::to_string(v.min_member);
  if (need > best && v.largest_free != nullptr) {
    return gang + " needs " + Amount(v.scarce, need) + " per member and no node has that free";
  }
  return gang + " does not fit in the free capacity now (" + v.message + ")";
}

std::string VerdictLine(const View& v, WhyVerdict verdict) {
  const WhyInputs& in = *v.in;
  const std::string& s = v.subject;
  switch (verdict) {
    case WhyVerdict::kNotMuster:
      return s + " is not scheduled by muster: its schedulerName is \"" +
             (in.pod->spec.scheduler_name.empty() ? std::string("default-scheduler")
                                                  : in.pod->spec.scheduler_name) +
             "\", not volcano";
    case WhyVerdict::kInvalid:
      return s + " was refused as invalid: " + RefusalOf(v);
    case WhyVerdict::kFinished:
      return s + " does not wait: it has finished (" + in.job->status.state.phase + ")";
    case WhyVerdict::kRunning:
      return s + " is running: " + std::to_string(v.scheduled) + " of " +
             std::to_string(std::max(v.members, v.scheduled)) + " members scheduled, on " +
             NodesOf(in.members.empty() && in.pod ? std::vector<Pod>{*in.pod} : in.members);
    case WhyVerdict::kNoPodGroup:
      return s + " is waiting: its PodGroup " + in.pod_group_name +
             " does not exist yet (the reconciler creates it)";
    case WhyVerdict::kQueueMissing:
      return s + " is waiting: its queue " + in.queue_name + " does not exist";
    case WhyVerdict::kQueueClosed:
      return s + " is waiting: its queue " + in.queue_name + " is not Open and admits no new gangs";
    case WhyVerdict::kMembers:
      return s + " is waiting for members: " + std::to_string(v.members) + " of the " +
             std::to_string(v.min_member) + " pods its minMember asks exist";
    case WhyVerdict::kResources:
      return s + " is waiting: " + ResourcesVerdict(v);
    case WhyVerdict::kNeverFits:
      return s + " can never run as it is: it does not fit even on an empty cluster";
    case WhyVerdict::kQueueCapability:
      return s + " is waiting: its queue " + in.queue_name + " is at its capability";
    case WhyVerdict::kQueueOverShare:
      return s + " is waiting: its queue " + in.queue_name +
             " is at its deserved share and another queue below its own waits";
    case WhyVerdict::kNetworkTopology:
      return s + " is waiting: its gang must fit inside one network domain and none has room";
    case WhyVerdict::kPending:
      break;
  }
  return s + " is pending: " +
         (in.muster.has_value() ? "muster has not planned it yet" : "the API shows no reason yet");
}

// "Queue:     " - the detail lines' labels, aligned.
std::string Line(std::string_view label, const std::string& text) {
  std::string out(label);
  out.resize(std::max<size_t>(out.size() + 1, 11), ' ');
  return out + text;
}

void JobAndPodLines(const View& v, std::vector<std::string>& out) {
  const WhyInputs& in = *v.in;
  if (in.job.has_value()) {
    const JobState& state = in.job->status.state;
    std::string text =
        in.job->meta.name + ": phase " + (state.phase.empty() ? "(none yet)" : state.phase);
    if (in.job_problem.empty())
      text += ", minAvailable " + std::to_string(in.job->spec.min_available);
    if (!state.reason.empty()) text += ", reason " + state.reason;
    if (!in.job_problem.empty()) text += " (muster cannot read its spec)";
    out.push_back(Line("Job:", text));
  }
  if (in.pod.has_value()) {
    const Pod& p = *in.pod;
    std::string text =
        p.meta.name + ": " + (p.status.phase.empty() ? "Pending" : p.status.phase) +
        ", schedulerName " +
        (p.spec.scheduler_name.empty() ? "default-scheduler" : p.spec.scheduler_name);
    text += p.spec.node_name.empty() ? ", not bound" : ", on " + p.spec.node_name;
    out.push_back(Line("Pod:", text));
  }
}

void PodGroupLines(const View& v, std::vector<std::string>& out) {
  const WhyInputs& in = *v.in;
  if (!in.pod_group.has_value()) {
    if (!in.pod_group_name.empty()) {
      out.push_back(Line("PodGroup:", in.pod_group_name + " does not exist"));
    }
    return;
  }
  std::string phase = in.pod_group->status.phase;
  if (phase.empty()) phase = v.gang != nullptr ? v.gang->phase : std::string("-");
  out.push_back(Line("PodGroup:", in.pod_group_name + ": phase " + phase + ", minMember " +
                                      std::to_string(v.min_member) + ", " +
                                      Count(v.members, "member") + " existing, " +
                                      std::to_string(v.scheduled) + " scheduled"));
  const Condition* c = v.condition;
  if (c != nullptr) {
    out.push_back(
        Line("", c->type + " " + c->reason + (c->message.empty() ? "" : ": " + c->message)));
  }
  const bool muster_differs =
      v.gang != nullptr && !v.gang->wait_reason.empty() &&
      (c == nullptr || c->reason != v.gang->wait_reason || c->message != v.gang->wait_message);
  if (muster_differs) {
    out.push_back(Line("", "muster now: " + v.gang->wait_reason + ": " + v.gang->wait_message));
  }
}

// The resources the queue line shows: those a member asks (cpu, GPUs,
// extended ones) and those the capability limits.
std::vector<std::string> FocusOf(const View& v) {
  std::set<std::string> names;
  for (const auto& [name, amount] : v.per_member.entries()) {
    if (name != kPods && name != kMemory && name != kEphemeralStorage && amount > 0) {
      names.insert(name);
    }
  }
  const std::optional<Queue>& q = v.in->queue;
  if (q.has_value() && q->spec.capability.has_value()) {
    for (const auto& [name, amount] : q->spec.capability->entries()) names.insert(name);
  }
  if (names.empty()) names.insert(std::string(kCpu));
  return {names.begin(), names.end()};
}

std::string ShareText(const View& v) {
  const Resources& allocated =
      v.share != nullptr ? v.share->allocated : v.in->queue->status.allocated;
  std::string text;
  for (const std::string& name : FocusOf(v)) {
    text += (text.empty() ? "" : ", ") + name + " " + Human(name, allocated.Get(name));
    if (v.share != nullptr) text += "/" + Human(name, v.share->deserved.Get(name));
  }
  if (v.share == nullptr) return "allocated " + text;
  char share[32];
  std::snprintf(share, sizeof(share), "%.2f", v.share->share);
  return "allocated/deserved " + text + " (share " +
         (v.share->share < 0 ? std::string("over: deserves none") : std::string(share)) + ")";
}

void QueueLine(const View& v, std::vector<std::string>& out) {
  const WhyInputs& in = *v.in;
  if (in.queue_name.empty()) return;
  if (!in.queue.has_value()) {
    out.push_back(
        Line("Queue:", in.queue_name + (in.queue_problem.empty()
                                            ? " does not exist"
                                            : ": cannot read it (" + in.queue_problem + ")")));
    return;
  }
  const Queue& q = *in.queue;
  std::string text = in.queue_name + ": " + (q.status.state.empty() ? "Open" : q.status.state) +
                     ", weight " + std::to_string(q.spec.weight) + ", " + ShareText(v);
  if (q.spec.capability.has_value() && !q.spec.capability->empty()) {
    text += ", capability " + Request(*q.spec.capability);
  }
  out.push_back(Line("Queue:", text));
}

void OrderLine(const View& v, std::vector<std::string>& out) {
  if (!v.in->muster.has_value()) return;
  if (v.gang == nullptr) {
    out.push_back(Line("Order:", "not in muster's last pass (no pods of the gang seen yet?)"));
    return;
  }
  if (!v.gang->position.has_value()) {
    // muster ranks only gangs with pods to place (extender/queue_step.cc).
    out.push_back(Line("Order:", std::string("not in the planning order: no pods to place yet") +
                                     (v.in->job.has_value() ? " (a Job's pods are created once "
                                                              "muster admits it)"
                                                            : "")));
    return;
  }
  const auto ranked = std::count_if(v.in->muster->gangs.begin(), v.in->muster->gangs.end(),
                                    [](const DebugGang& g) { return g.position.has_value(); });
  out.push_back(Line("Order:", Ordinal(*v.gang->position + 1) + " of " + std::to_string(ranked) +
                                   " gangs in muster's planning order"));
}

void NeedsLine(const View& v, std::vector<std::string>& out) {
  std::string text;
  for (const MemberNeed& n : v.in->needs) {
    text += (text.empty() ? "" : "; ") + std::to_string(n.count) + " x " +
            (n.task.empty() ? std::string("member") : n.task) + ": " + Request(n.request);
  }
  if (!text.empty()) out.push_back(Line("Needs:", text));
}

// "node-3 with 4 nvidia.com/gpu, 30 cpu".
std::string NodeText(const DebugNode& n, const Resources& r, const std::string& scarce) {
  std::string text = n.name + " with " + Amount(scarce, r.Get(scarce));
  if (scarce != kCpu) text += ", " + Amount(kCpu, r.Get(kCpu));
  return text;
}

void CapacityLine(const View& v, WhyVerdict verdict, std::vector<std::string>& out) {
  if (v.largest_free == nullptr) return;
  int64_t free = 0;
  for (const DebugNode& n : v.in->muster->nodes) free += n.free.Get(v.scarce);
  std::string text = "largest free: " + NodeText(*v.largest_free, v.largest_free->free, v.scarce) +
                     "; " + Amount(v.scarce, free) + " free on " +
                     Count(static_cast<int64_t>(v.in->muster->nodes.size()), "node");
  if (verdict == WhyVerdict::kNeverFits) {
    text = "largest allocatable: " +
           NodeText(*v.largest_allocatable, v.largest_allocatable->allocatable, v.scarce);
  }
  out.push_back(Line("Capacity:", text));
}

// How much the screen shows: a refused or finished Job, and a pod muster
// does not schedule, need no queue or capacity.
bool ShowsPlanning(WhyVerdict verdict) {
  return verdict != WhyVerdict::kNotMuster && verdict != WhyVerdict::kInvalid &&
         verdict != WhyVerdict::kFinished;
}
}  // namespace

std::string Ordinal(int64_t n) {
  const int64_t tens = n % 100;
  const int64_t ones = n % 10;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    if (ones == 1) suffix = "st";
    if (ones == 2) suffix = "nd";
    if (ones == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

WhyVerdict VerdictOf(const WhyInputs& in) { return VerdictOfView(MakeView(in)); }

std::string ExplainWhy(const WhyInputs& in) {
  const View v = MakeView(in);
  const WhyVerdict verdict = VerdictOfView(v);
  std::vector<std::string> lines = {VerdictLine(v, verdict), ""};
  JobAndPodLines(v, lines);
  if (verdict != WhyVerdict::kNotMuster) PodGroupLines(v, lines);
  if (ShowsPlanning(verdict)) {
    QueueLine(v, lines);
    if (verdict != WhyVerdict::kRunning) OrderLine(v, lines);
    NeedsLine(v, lines);
    if (verdict != WhyVerdict::kRunning) CapacityLine(v, verdict, lines);
  }
  lines.push_back("");
  lines.push_back("What would make it run:");
  for (const std::string& r : Remedies(v, verdict)) lines.push_back("  - " + r);
  if (!in.muster.has_value() && verdict != WhyVerdict::kNotMuster) {
    lines.push_back("");
    lines.push_back("Note: muster's own view was not read (" + in.muster_problem +
                    "); this is what the API alone shows.");
    lines.push_back(
        "  To reach muster: kubectl -n muster-system port-forward deploy/volcano-scheduler "
        "8080:8080, then add --muster-url http://127.0.0.1:8080 (or ask for the Role "
        "muster-cli-state)");
  }
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

}  // namespace muster::cli
