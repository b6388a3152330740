#include "extender/gang_observer.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <map>

#include "extender/metrics.h"
#include "kube/codec/json.h"
#include "model/resources.h"

namespace muster::extender {
namespace {

using gang::MemberState;

double ToSeconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

// The GPUs the gang's bound members hold (a shared GPU counts its fraction).
double BoundGpus(const gang::Gang& g) {
  int64_t milli = 0;
  for (const gang::Member& m : g.members) {
    if (m.state == MemberState::kBound) milli += m.request.milli_gpus();
  }
  return static_cast<double>(milli) / kMilliPerGpu;
}

std::string GangsJson(const WritePlan& plan, const QueueStep& queues) {
  std::string debug = "[";
  for (const GangOutcome& g : plan.gangs) {
    if (debug.size() > 1) debug += ",";
    kube::JsonWriter w;
    w.StartObject();
    w.StringField("podGroup", g.key);
    w.StringField("phase", g.phase);
    w.IntField("minMember", g.min_member);
    w.IntField("members", g.members);
    w.IntField("scheduled", g.scheduled);
    w.IntField("reserved", g.reserved);
    w.IntField("priority", g.priority);
    if (auto q = queues.queue_of.find(g.key); q != queues.queue_of.end()) {
      w.StringField("queue", q->second);
    }
    if (auto at = queues.position.find(g.key); at != queues.position.end()) {
      w.IntField("position", at->second);  // in the planning order, 0 first
    }
    if (g.wait.has_value()) {
      w.StringField("waitReason", g.wait->reason);
      w.StringField("waitMessage", g.wait->message);
    }
    w.EndObject();
    debug += w.TakeString();
  }
  return debug + "]";
}

std::string QueuesJson(const queue::Shares& shares) {
  kube::JsonWriter w;
  w.StartObject();
  w.Key("queues");
  w.StartArray();
  for (const auto& [name, q] : shares.queues) {
    w.StartObject();
    w.StringField("name", name);
    w.ResourcesField("deserved", q.deserved);
    w.ResourcesField("allocated", q.allocated);
    w.ResourcesField("demand", q.demand);
    w.Key("share");  // -1: it holds what it deserves none of
    w.Double(std::isfinite(q.share) ? q.share : -1);
    w.StringField("dominant", q.dominant);
    w.EndObject();
  }
  w.EndArray();
  w.Key("problems");
  w.StartArray();
  for (const std::string& problem : shares.problems) w.String(problem);
  w.EndArray();
  w.EndObject();
  return w.TakeString();
}

// The preemption started, and per victim gang reclaimed its queue.
void CountPreemption(const PassFacts& facts, ExtenderMetrics& metrics) {
  const gang::Preemption& p = *facts.result.preemption;
  for (const std::string& v : p.victims) {
    if (!facts.inputs.groups.contains(v)) continue;
    if (!Contains(p.reclaimed, v)) continue;
    const auto q = facts.queues.queue_of.find(v);
    metrics.CountReclaim(q == facts.queues.queue_of.end() ? "" : q->second);
  }
  metrics.CountPreemption();
}

}  // namespace

void GangObserver::ObservePass(const PassFacts& facts, const WritePlan& plan,
                               const GangRecords& records, Duration since_last_pass) {
  if (metrics_ != nullptr) CountPass(facts, plan, records, since_last_pass);
  std::string gangs = GangsJson(plan, facts.queues);
  std::string queues = QueuesJson(facts.queues.shares);
  base::MutexLock lock(&mu_);
  debug_json_ = std::move(gangs);
  queues_debug_json_ = std::move(queues);
}

void GangObserver::CountPass(const PassFacts& facts, const WritePlan& plan,
                             const GangRecords& records, Duration since_last_pass) {
  for (const GangOutcome& g : plan.gangs) {
    if (g.waited.has_value()) metrics_->ObserveGangWait(ToSeconds(*g.waited));
  }
  if (facts.result.preemption.has_value()) CountPreemption(facts, *metrics_);
  metrics_->SetQueueShares(facts.queues.shares);
  metrics_->CountReservations(facts.applied.size(), facts.result.expired.size());
  metrics_->CountPlansHeld(facts.plans_held);
  const double dt = ToSeconds(since_last_pass);
  std::map<std::string, int64_t, std::less<>> phases;
  for (const gang::Gang& g : facts.inputs.gangs) {
    // Partial: members hold GPUs while the gang is not sure to start, i.e.
    // bound and reserved members together are short of minMember. A gang
    // whose whole reservation is being claimed pod by pod is not partial.
    const int32_t scheduled = CountScheduled(g);
    if (scheduled > 0 && scheduled + CountReserved(g) < g.spec.min_member) {
      metrics_->AddPartialGpuSeconds(dt * BoundGpus(g));
    }
    if (facts.inputs.implicit.contains(g.key)) continue;  // not a PodGroup object
    const auto record = records.find(g.key);
    const std::string& phase = record != records.end() && record->second.written
                                   ? record->second.written->phase
                                   : facts.inputs.groups.at(g.key)->status.phase;
    ++phases[phase.empty() ? std::string(kPodGroupPending) : phase];
  }
  metrics_->SetGangPhases(phases);
}

void GangObserver::ObservePassDuration(double seconds) {
  if (metrics_ != nullptr) metrics_->ObserveGangPass(seconds);
}

void GangObserver::ObserveBatch(const base::WriteExecutor::BatchReport& report) {
  auto count = [&](int rank) {
    const auto it = report.find(rank);
    return it == report.end() ? base::WriteExecutor::RankCount{} : it->second;
  };
  const auto pods = count(kRankPod), statuses = count(kRankPodGroupStatus),
             events = count(kRankEvent), evictions = count(kRankEviction);
  if (metrics_ != nullptr) metrics_->CountEvictions(evictions.written);
  if (pods.queued + evictions.queued > 0) {
    spdlog::info("gang: {} pods woken, {} statuses, {} events, {}/{} evicted", pods.queued,
                 statuses.queued, events.queued, evictions.written, evictions.queued);
  }
}

std::string GangObserver::DebugJson() const {
  base::MutexLock lock(&mu_);
  return debug_json_;
}

std::string GangObserver::QueuesDebugJson() const {
  base::MutexLock lock(&mu_);
  return queues_debug_json_;
}

}  // namespace muster::extender
