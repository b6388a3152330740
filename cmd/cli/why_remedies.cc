#include <algorithm>
#include <string>
#include <vector>

#include "cmd/cli/why_view.h"
#include "model/quantity.h"

namespace muster::cli::why_internal {
namespace {

// "kubectl -n NS" for the commands the remedies show.
std::string Kubectl(const View& v) { return "kubectl -n " + v.in->ns; }

// The field a refusal names: its message up to the first ": ".
std::string FieldOf(const std::string& message) {
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? std::string("the spec") : message.substr(0, colon);
}

// The queue's other gangs holding resources: what a full queue waits for.
std::string HoldersOf(const View& v) {
  if (!v.in->muster.has_value()) return "";
  const std::string own = v.in->ns + "/" + v.in->pod_group_name;
  std::vector<std::string> names;
  for (const DebugGang& g : v.in->muster->gangs) {
    if (g.queue != v.in->queue_name || g.key == own) continue;
    if (g.scheduled + g.reserved > 0 || g.phase == kPodGroupRunning) names.push_back(g.key);
  }
  std::string text;
  for (size_t i = 0; i < names.size() && i < 3; ++i) text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > 3) text += " and " + std::to_string(names.size() - 3) + " more";
  return text;
}

// The capability that would admit the gang: per limited resource, what the
// queue holds plus what the whole gang asks, where that exceeds the limit.
std::string RaisedCapability(const View& v) {
  const Queue& q = *v.in->queue;
  if (!q.spec.capability.has_value()) return "";
  const Resources& held = v.share != nullptr ? v.share->allocated : q.status.allocated;
  std::string fields;
  for (const auto& [name, cap] : q.spec.capability->entries()) {
    const int64_t want = held.Get(name) + v.total.Get(name);
    if (v.total.Get(name) == 0 || want <= cap) continue;
    fields += (fields.empty() ? "" : ",") + std::string("\"") + name + "\":\"" +
              FormatResourceQuantity(name, want) + "\"";
  }
  return fields;
}

std::vector<std::string> CapabilityRemedies(const View& v) {
  std::vector<std::string> out;
  const std::string& q = v.in->queue_name;
  const std::string fields = v.in->queue.has_value() ? RaisedCapability(v) : "";
  if (fields.empty()) {
    out.push_back("raise queue " + q + "'s spec.capability past what the gang needs (" + v.message +
                  ")");
  } else {
    out.push_back("raise the queue's capability: kubectl patch queue " + q +
                  " --type merge -p '{\"spec\":{\"capability\":{" + fields + "}}}'");
  }
  const std::string holders = HoldersOf(v);
  out.push_back("or wait for the queue's other gangs to finish" +
                (holders.empty() ? std::string() : ": " + holders));
  return out;
}

std::vector<std::string> ResourcesRemedies(const View& v) {
  if (v.largest_free == nullptr) {
    return {"capacity must free up: " + v.message, "or lower what each member asks"};
  }
  const std::string& r = v.scarce;
  const int64_t need = v.per_member.Get(r);
  const int64_t best = v.largest_free->free.Get(r);
  const std::string wait = "or wait: muster reserves the whole gang as soon as it fits";
  if (need > best) {
    std::vector<std::string> out = {
        Amount(r, need - best) + " more must free up on one node: a member needs " +
        FormatResourceQuantity(r, need) + ", the largest free is " +
        FormatResourceQuantity(r, best) + " (" + v.largest_free->name + ")"};
    // With none free anywhere, a smaller ask would not run either.
    if (best > 0) out.push_back("or lower the ask to at most " + Amount(r, best) + " per member");
    out.push_back(wait);
    return out;
  }
  int64_t free = 0;
  for (const DebugNode& n : v.in->muster->nodes) free += n.free.Get(r);
  return {"room for all " + std::to_string(v.min_member) + " members at once: they need " +
              Amount(r, v.total.Get(r)) + " in all, " + FormatResourceQuantity(r, free) +
              " are free, spread over the nodes",
          "or lower minMember or what each member asks", wait};
}

std::vector<std::string> NeverFitsRemedies(const View& v) {
  std::vector<std::string> out;
  if (v.largest_allocatable != nullptr) {
    const std::string& r = v.scarce;
    out.push_back("lower the ask: a member needs " + Amount(r, v.per_member.Get(r)) +
                  ", the largest node (" + v.largest_allocatable->name + ") has " +
                  FormatResourceQuantity(r, v.largest_allocatable->allocatable.Get(r)));
  } else {
    out.push_back("lower the ask: " + v.message);
  }
  out.push_back("or check nodeSelector, affinity and tolerations: no node may admit the pods");
  out.push_back("or add nodes large enough");
  return out;
}

std::vector<std::string> MembersRemedies(const View& v) {
  const WhyInputs& in = *v.in;
  if (in.job.has_value()) {
    return {
        "the reconciler creates the Job's pods once its PodGroup is Inqueue; if they stay "
        "missing: " +
        Kubectl(v) + " describe vcjob " + in.job->meta.name};
  }
  const int32_t missing = std::max(v.min_member - v.members, 1);
  return {"create the missing " + std::to_string(missing) +
              " pods with schedulerName: volcano and annotation scheduling.k8s.io/group-name: " +
              in.pod_group_name,
          "or lower minMember: " + Kubectl(v) + " patch podgroup " + in.pod_group_name +
              " --type merge -p '{\"spec\":{\"minMember\":" +
              std::to_string(std::max(v.members, 1)) + "}}'"};
}

std::vector<std::string> InvalidRemedies(const View& v) {
  const WhyInputs& in = *v.in;
  const std::string field = FieldOf(RefusalOf(v));
  if (!in.job.has_value()) {
    return {"fix " + field +
            " in the PodGroup: muster's decoder refused it (the CRD let it through)"};
  }
  return {"fix " + field +
          " in the Job, then delete it and create it again: a refused Job stays "
          "Failed"};
}

}  // namespace

std::vector<std::string> Remedies(const View& v, WhyVerdict verdict) {
  const WhyInputs& in = *v.in;
  const std::string& q = in.queue_name;
  switch (verdict) {
    case WhyVerdict::kNotMuster:
      return {
          "for muster to schedule it: spec.schedulerName: volcano (and, for a gang, the "
          "annotation scheduling.k8s.io/group-name)",
          "else its own scheduler decides: " + Kubectl(v) + " describe pod " + in.pod->meta.name};
    case WhyVerdict::kInvalid:
      return InvalidRemedies(v);
    case WhyVerdict::kFinished:
      return {"nothing waits: to run it again, delete the Job and create it again"};
    case WhyVerdict::kRunning:
      return {"nothing: it runs"};
    case WhyVerdict::kNoPodGroup:
      return {"wait: the reconciler (beside muster's extender) creates PodGroup " +
              in.pod_group_name + "; if it never does: " + Kubectl(v) + " describe vcjob " +
              in.job->meta.name};
    case WhyVerdict::kQueueMissing:
      return {"create the queue: muster queue create " + q,
              "or set spec.queue to an existing queue (muster queue list)"};
    case WhyVerdict::kQueueClosed:
      return {"open the queue: muster queue open " + q,
              "or submit to an Open queue (spec.queue; muster queue list)"};
    case WhyVerdict::kMembers:
      return MembersRemedies(v);
    case WhyVerdict::kResources:
      return ResourcesRemedies(v);
    case WhyVerdict::kNeverFits:
      return NeverFitsRemedies(v);
    case WhyVerdict::kQueueCapability:
      return CapabilityRemedies(v);
    case WhyVerdict::kQueueOverShare:
      return {"nothing to do: it runs once the queue owed capacity is served, or queue " + q +
                  "'s own gangs finish",
              "or give queue " + q + " more weight: kubectl patch queue " + q +
                  " --type merge -p '{\"spec\":{\"weight\":" +
                  std::to_string(2 * (in.queue.has_value() ? in.queue->spec.weight : 1)) + "}}'"};
    case WhyVerdict::kNetworkTopology:
      return {
          "free room inside one network domain, or relax spec.networkTopology (mode soft, or "
          "a higher highestTierAllowed; docs/topology.md)"};
    case WhyVerdict::kPending:
      break;
  }
  return {"wait for muster's next pass (every second), then run muster why again"};
}

}  // namespace muster::cli::why_internal
