#include "extender/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <string>
#include <vector>

#include "extender/bind_barrier.h"
#include "kube/client/informer.h"
#include "model/quantity.h"

namespace muster::extender {
namespace {

constexpr std::array<std::string_view, 4> kResults = {"ok", "bad_request", "fault", kOtherLabel};

// 50us .. 5s, roughly 1-2.5-5 per decade: the fast path (well under 1 ms)
// and a bind that waits on the API server (seconds) both resolve.
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
          0.025,   0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0};
}

std::string Str(std::string_view s) { return std::string(s); }

template <typename Set>
std::string_view Bounded(const Set& set, std::string_view value) {
  return std::find(set.begin(), set.end(), value) != set.end() ? value : kOtherLabel;
}

// The fixed set plus "other", to create every series up front.
template <typename Set>
std::vector<std::string_view> WithOther(const Set& set) {
  std::vector<std::string_view> out(set.begin(), set.end());
  if (std::find(out.begin(), out.end(), kOtherLabel) == out.end()) out.push_back(kOtherLabel);
  return out;
}

// One series of `family` per value of the fixed set `values` plus "other",
// labelled `label`, keyed by the value.
template <typename Metric, typename Set>
std::map<std::string_view, Metric*> SeriesPerValue(prometheus::Family<Metric>& family,
                                                   const std::string& label, const Set& values) {
  std::map<std::string_view, Metric*> series;
  for (std::string_view value : WithOther(values))
    series[value] = &family.Add({{label, Str(value)}});
  return series;
}

// A metric value of `resource` in the resource's own unit: cores and GPUs,
// not muster's thousandths.
double MetricValue(std::string_view resource, int64_t amount) {
  return IsMilliResource(resource) ? static_cast<double>(amount) / 1000.0
                                   : static_cast<double>(amount);
}

}  // namespace

const std::array<std::string_view, 23>& ReasonCodes() {
  static constexpr std::array<std::string_view, 23> kCodes = {
      kReasonFits,         kReasonInsufficient,   kReasonExceedsNode,       kReasonNodeUnknown,
      kReasonAdmitted,     kReasonBadRequest,     kReasonBindPost,          kReasonBound,
      kReasonAlreadyBound, kReasonBoundElsewhere, kReasonPodUnknown,        kReasonPodMismatch,
      kReasonPodFinished,  kReasonApiError,       kReasonVictimsKept,       kReasonNoVictims,
      kReasonGangWaiting,  kReasonNoPodGroup,     kReasonReservedElsewhere, kReasonBreaksGang,
      kReasonConformance,  kReasonGpuRequest,     kReasonPodGroupInvalid};
  return kCodes;
}

ExtenderMetrics::ExtenderMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& requests = prometheus::BuildCounter()
                       .Name("muster_extender_requests_total")
                       .Help("Extender requests answered, by verb and result.")
                       .Register(*registry_);
  auto& durations = prometheus::BuildHistogram()
                        .Name("muster_extender_request_duration_seconds")
                        .Help("Server-side time to answer an extender request, by verb.")
                        .Register(*registry_);
  auto& decisions = prometheus::BuildCounter()
                        .Name("muster_extender_decisions_total")
                        .Help("Nodes, victim nodes or pods decided, by verb and reason code.")
                        .Register(*registry_);
  auto& bind_failures = prometheus::BuildCounter()
                            .Name("muster_extender_bind_failures_total")
                            .Help("Bind requests answered with an Error, by reason code.")
                            .Register(*registry_);
  auto& cache_objects = prometheus::BuildGauge()
                            .Name("muster_extender_cache_objects")
                            .Help("Objects in the extender's cluster cache, by kind.")
                            .Register(*registry_);
  auto& cache_synced =
      prometheus::BuildGauge()
          .Name("muster_extender_cache_synced")
          .Help("1 once the node, pod, PodGroup and Queue caches have completed their first list.")
          .Register(*registry_);
  auto& leader = prometheus::BuildGauge()
                     .Name("muster_extender_leader")
                     .Help(
                         "1 while this replica acts: beside the kube-scheduler that holds the "
                         "leader Lease, or always without --leader-elect; 0 on a standby.")
                     .Register(*registry_);
  const auto verbs = WithOther(kVerbs);
  const auto reasons = WithOther(ReasonCodes());
  for (std::string_view verb : verbs) {
    for (std::string_view result : kResults) {
      requests_[{verb, result}] = &requests.Add({{"verb", Str(verb)}, {"result", Str(result)}});
    }
    durations_[verb] = &durations.Add({{"verb", Str(verb)}}, DurationBuckets());
    for (std::string_view reason : reasons) {
      decisions_[{verb, reason}] = &decisions.Add({{"verb", Str(verb)}, {"reason", Str(reason)}});
    }
  }
  bind_failures_ = SeriesPerValue(bind_failures, "reason", reasons);
  cache_objects_ = SeriesPerValue(cache_objects, "kind", kCacheKinds);
  cache_synced_ = &cache_synced.Add({});
  leader_ = &leader.Add({});
  auto& gpu_sets = prometheus::BuildCounter()
                       .Name("muster_gpu_sets_total")
                       .Help(
                           "Pods bound with GPUs, by the weakest link inside the GPU set chosen "
                           "(single: one GPU; unlinked: the node's links are unknown; shared: "
                           "shares of GPUs; unchosen: its GPUs are not told apart).")
                       .Register(*registry_);
  gpu_sets_ = SeriesPerValue(gpu_sets, "link", kGpuSetLinks);
  auto& gpu_nodes = prometheus::BuildGauge()
                        .Name("muster_gpu_topology_nodes")
                        .Help(
                            "Nodes by the source of their GPU topology (invalid: an unreadable "
                            "muster.io/gpu-topology annotation; see the extender log).")
                        .Register(*registry_);
  gpu_topology_nodes_ = SeriesPerValue(gpu_nodes, "source", kGpuTopologySourceNames);
  auto& gpus = prometheus::BuildGauge()
                   .Name("muster_gpus")
                   .Help(
                       "nvidia.com/gpu of the nodes in the cache: allocated (requested by bound "
                       "pods and bind-time placements) or free.")
                   .Register(*registry_);
  gpus_allocated_ = &gpus.Add({{"state", "allocated"}});
  gpus_free_ = &gpus.Add({{"state", "free"}});
  gpus_stranded_ = &prometheus::BuildGauge()
                        .Name("muster_gpus_stranded")
                        .Help(
                            "Free GPUs no other free GPU of their node is joined to by the "
                            "node's best link class: fragmentation multi-GPU pods cannot use "
                            "well (nodes with a known GPU topology only).")
                        .Register(*registry_)
                        .Add({});
  auto& usage = prometheus::BuildGauge()
                    .Name("muster_gpu_nodes")
                    .Help("Nodes with GPUs by use: idle (none allocated), partial, full.")
                    .Register(*registry_);
  gpu_nodes_ = {&usage.Add({{"usage", "idle"}}), &usage.Add({{"usage", "partial"}}),
                &usage.Add({{"usage", "full"}})};
  auto& shared = prometheus::BuildGauge()
                     .Name("muster_gpus_shared")
                     .Help(
                         "GPUs with sharers (pods holding a share of them): all of them, and those "
                         "partly used (compute left to share).")
                     .Register(*registry_);
  gpus_shared_ = &shared.Add({{"use", "shared"}});
  gpus_partly_used_ = &shared.Add({{"use", "partly_used"}});
  gpu_shared_fraction_ = &prometheus::BuildGauge()
                              .Name("muster_gpu_shared_fraction")
                              .Help(
                                  "GPUs' worth of compute the sharers hold (0.5 + 0.25 = 0.75), "
                                  "over every shared GPU.")
                              .Register(*registry_)
                              .Add({});
  auto& share_requests = prometheus::BuildCounter()
                             .Name("muster_gpu_share_requests_total")
                             .Help(
                                 "Requests of pods sharing GPUs, by outcome: bound (a bind took "
                                 "its shares), waiting (a filter found no node with them free), "
                                 "invalid (its GPU request does not read).")
                             .Register(*registry_);
  share_requests_ = SeriesPerValue(share_requests, "outcome", kShareOutcomes);
  auto& undecodable = prometheus::BuildGauge()
                          .Name("muster_extender_undecodable_objects")
                          .Help(
                              "Watched objects whose current version muster cannot decode, by "
                              "kind and where the first bad field is (PodGroups and Queues are "
                              "answered on the object; see /debug/state \"undecodable\").")
                          .Register(*registry_);
  for (std::string_view kind : WithOther(kUndecodableKinds)) {
    for (std::string_view reason : WithOther(kube::kUndecodableReasons)) {
      undecodable_[{kind, reason}] =
          &undecodable.Add({{"kind", Str(kind)}, {"reason", Str(reason)}});
    }
  }
  // The gang controller's.
  gang_wait_ = &prometheus::BuildHistogram()
                    .Name("muster_gang_wait_seconds")
                    .Help("Gang admission to minMember members bound.")
                    .Register(*registry_)
                    .Add({}, prometheus::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 0.75, 1,
                                                                     1.5, 2, 3, 4, 5, 7.5, 10, 30,
                                                                     60, 120, 300, 600});
  gang_pass_ =
      &prometheus::BuildHistogram()
           .Name("muster_gang_pass_duration_seconds")
           .Help(
               "One gang controller pass: inputs, decision, reservation (not the "
               "API writes, which run on their own thread).")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                            0.025, 0.05, 0.1, 0.25, 0.5, 1});
  partial_gpu_seconds_ =
      &prometheus::BuildCounter()
           .Name("muster_gang_partial_gpu_seconds_total")
           .Help(
               "GPU-seconds held by bound members of gangs whose bound and reserved members "
               "are short of minMember (should stay 0).")
           .Register(*registry_)
           .Add({});
  auto& reservations = prometheus::BuildCounter()
                           .Name("muster_gang_reservations_total")
                           .Help("Whole-gang reservations, by outcome.")
                           .Register(*registry_);
  reservations_made_ = &reservations.Add({{"outcome", "made"}});
  reservations_expired_ = &reservations.Add({{"outcome", "expired"}});
  plans_held_ = &prometheus::BuildCounter()
                     .Name("muster_gang_plans_held_total")
                     .Help(
                         "Gang plans held back while freed capacity was still trickling in "
                         "(--gang-settle-quiet); planned again once it settled.")
                     .Register(*registry_)
                     .Add({});
  auto& webhook_pods = prometheus::BuildCounter()
                           .Name("muster_webhook_pods_total")
                           .Help(
                               "Pods the admission webhook answered: gated (muster.io/gang added "
                               "at creation), passed (unchanged), bad_request (not an "
                               "AdmissionReview).")
                           .Register(*registry_);
  webhook_pods_ = SeriesPerValue(webhook_pods, "outcome", kWebhookOutcomes);
  auto& bind_holds = prometheus::BuildCounter()
                         .Name("muster_gang_bind_holds_total")
                         .Help(
                             "Gang members' binds held until their gang's other reserved members "
                             "reached bind too, by how the hold ended: all_arrived, deadline "
                             "(--gang-bind-hold), capacity (too many binds held at once).")
                         .Register(*registry_);
  bind_holds_ = SeriesPerValue(bind_holds, "release", kBarrierReleases);
  bind_hold_seconds_ =
      &prometheus::BuildHistogram()
           .Name("muster_gang_bind_hold_seconds")
           .Help("How long a gang member's bind was held at the bind barrier.")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                            0.25, 0.5, 1, 1.5, 2, 3});
  preemptions_ = &prometheus::BuildCounter()
                      .Name("muster_gang_preemptions_total")
                      .Help("Gang preemptions started (victim sets chosen).")
                      .Register(*registry_)
                      .Add({});
  evictions_ = &prometheus::BuildCounter()
                    .Name("muster_gang_evictions_total")
                    .Help("Pods evicted as preemption victims.")
                    .Register(*registry_)
                    .Add({});
  auto& phases = prometheus::BuildGauge()
                     .Name("muster_gangs")
                     .Help("PodGroups by phase.")
                     .Register(*registry_);
  for (std::string_view phase : kGangPhases) {
    gang_phases_[phase] = &phases.Add({{"phase", Str(phase)}});
  }
  queue_deserved_ =
      &prometheus::BuildGauge()
           .Name("muster_queue_deserved")
           .Help("A queue's deserved share, per resource (cpu in cores, GPUs in GPUs).")
           .Register(*registry_);
  queue_allocated_ = &prometheus::BuildGauge()
                          .Name("muster_queue_allocated")
                          .Help("What a queue's gangs hold (bound or reserved), per resource.")
                          .Register(*registry_);
  queue_pending_ = &prometheus::BuildGauge()
                        .Name("muster_queue_pending_demand")
                        .Help("What a queue's gangs wait for, per resource.")
                        .Register(*registry_);
  queue_share_ = &prometheus::BuildGauge()
                      .Name("muster_queue_share")
                      .Help(
                          "A queue's dominant share: max over resources of allocated / "
                          "deserved (1 = exactly its due).")
                      .Register(*registry_);
  queue_reclaims_ = &prometheus::BuildCounter()
                         .Name("muster_queue_reclaims_total")
                         .Help(
                             "Gangs evicted from a queue to give other queues their "
                             "deserved share (label: the victim's queue).")
                         .Register(*registry_);
}

ExtenderMetrics::~ExtenderMetrics() = default;

void ExtenderMetrics::ObserveRequest(std::string_view verb, ReplyOutcome outcome, double seconds) {
  const std::string_view v = Bounded(kVerbs, verb);
  requests_.at({v, Bounded(kResults, ReplyOutcomeName(outcome))})->Increment();
  durations_.at(v)->Observe(seconds);
}

void ExtenderMetrics::CountDecisions(std::string_view verb, const DecisionCounts& decisions) {
  const std::string_view v = Bounded(kVerbs, verb);
  for (const auto& [reason, count] : decisions) {
    if (count <= 0) continue;
    decisions_.at({v, Bounded(ReasonCodes(), reason)})->Increment(static_cast<double>(count));
  }
}

void ExtenderMetrics::CountBindFailure(std::string_view reason) {
  bind_failures_.at(Bounded(ReasonCodes(), reason))->Increment();
}

void ExtenderMetrics::SetCacheObjects(std::string_view kind, int64_t count) {
  cache_objects_.at(Bounded(kCacheKinds, kind))->Set(static_cast<double>(count));
}

void ExtenderMetrics::SetCacheSynced(bool synced) { cache_synced_->Set(synced ? 1 : 0); }

void ExtenderMetrics::SetLeader(bool leading) { leader_->Set(leading ? 1 : 0); }

void ExtenderMetrics::CountGpuSet(std::string_view link) {
  gpu_sets_.at(Bounded(kGpuSetLinks, link))->Increment();
}

void ExtenderMetrics::SetGpuTopologyNodes(std::string_view source, int64_t count) {
  gpu_topology_nodes_.at(Bounded(kGpuTopologySourceNames, source))->Set(static_cast<double>(count));
}

void ExtenderMetrics::SetGpuUsage(const GpuUsage& usage) {
  gpus_allocated_->Set(static_cast<double>(usage.allocated) / kMilliPerGpu);
  gpus_free_->Set(static_cast<double>(usage.free) / kMilliPerGpu);
  gpus_stranded_->Set(static_cast<double>(usage.stranded));
  gpu_nodes_[0]->Set(static_cast<double>(usage.idle_nodes));
  gpu_nodes_[1]->Set(static_cast<double>(usage.partial_nodes));
  gpu_nodes_[2]->Set(static_cast<double>(usage.full_nodes));
  gpus_shared_->Set(static_cast<double>(usage.shared_gpus));
  gpus_partly_used_->Set(static_cast<double>(usage.partly_used_gpus));
  gpu_shared_fraction_->Set(static_cast<double>(usage.shared_compute) / kGpuCompute);
}

void ExtenderMetrics::CountShareRequest(std::string_view outcome) {
  share_requests_.at(Bounded(kShareOutcomes, outcome))->Increment();
}

void ExtenderMetrics::SetUndecodable(std::string_view kind, std::string_view reason,
                                     int64_t count) {
  undecodable_.at({Bounded(kUndecodableKinds, kind), Bounded(kube::kUndecodableReasons, reason)})
      ->Set(static_cast<double>(count));
}

void ExtenderMetrics::ObserveGangWait(double seconds) { gang_wait_->Observe(seconds); }

void ExtenderMetrics::ObserveGangPass(double seconds) { gang_pass_->Observe(seconds); }

void ExtenderMetrics::AddPartialGpuSeconds(double gpu_seconds) {
  partial_gpu_seconds_->Increment(gpu_seconds);
}

void ExtenderMetrics::CountReservations(size_t made, size_t expired) {
  reservations_made_->Increment(static_cast<double>(made));
  reservations_expired_->Increment(static_cast<double>(expired));
}

void ExtenderMetrics::CountWebhookPod(std::string_view outcome) {
  webhook_pods_.at(Bounded(kWebhookOutcomes, outcome))->Increment();
}

void ExtenderMetrics::ObserveBindHold(std::string_view release, double seconds) {
  bind_holds_.at(Bounded(kBarrierReleases, release))->Increment();
  bind_hold_seconds_->Observe(seconds);
}

void ExtenderMetrics::CountPlansHeld(size_t held) {
  plans_held_->Increment(static_cast<double>(held));
}

void ExtenderMetrics::CountPreemption() { preemptions_->Increment(); }

void ExtenderMetrics::CountEvictions(size_t evicted) {
  evictions_->Increment(static_cast<double>(evicted));
}

void ExtenderMetrics::CountReclaim(std::string_view queue) {
  queue_reclaims_->Add({{"queue", Str(queue)}}).Increment();
}

void ExtenderMetrics::SetGangPhases(const std::map<std::string, int64_t, std::less<>>& phases) {
  for (const auto& [phase, gauge] : gang_phases_) {
    const auto it = phases.find(phase);
    gauge->Set(it == phases.end() ? 0 : static_cast<double>(it->second));
  }
}

void ExtenderMetrics::SetQueueShares(const queue::Shares& shares) {
  base::MutexLock lock(&queue_mu_);
  const std::array<prometheus::Family<prometheus::Gauge>*, 3> per_resource = {
      queue_deserved_, queue_allocated_, queue_pending_};
  std::map<std::string, std::set<std::string>> labelled;
  for (const auto& [name, q] : shares.queues) {
    std::set<std::string>& resources = labelled[name];
    for (const auto& [resource, total] : shares.total.entries()) {
      const std::map<std::string, std::string> labels = {{"queue", name}, {"resource", resource}};
      queue_deserved_->Add(labels).Set(MetricValue(resource, q.deserved.Get(resource)));
      queue_allocated_->Add(labels).Set(MetricValue(resource, q.allocated.Get(resource)));
      queue_pending_->Add(labels).Set(
          MetricValue(resource, (q.demand - q.allocated).Get(resource)));
      resources.insert(resource);
    }
    queue_share_->Add({{"queue", name}}).Set(q.share);
    // At 0 from the queue's first pass, so rate() and the dashboards see a
    // queue that has never been reclaimed from (Add is a lookup after that).
    queue_reclaims_->Add({{"queue", name}});
  }
  // Queues (or resources) gone since the last call leave the metrics.
  for (const auto& [name, resources] : queue_labelled_) {
    const auto now = labelled.find(name);
    for (const std::string& resource : resources) {
      if (now != labelled.end() && now->second.contains(resource)) continue;
      for (auto* family : per_resource) {
        family->Remove(&family->Add({{"queue", name}, {"resource", resource}}));
      }
    }
    if (now == labelled.end()) queue_share_->Remove(&queue_share_->Add({{"queue", name}}));
  }
  queue_labelled_ = std::move(labelled);
}

ExtenderMetrics::DurationTotals ExtenderMetrics::RequestDurations(std::string_view verb) const {
  const prometheus::ClientMetric m = durations_.at(Bounded(kVerbs, verb))->Collect();
  return DurationTotals{.count = m.histogram.sample_count, .sum_seconds = m.histogram.sample_sum};
}

std::string ExtenderMetrics::Text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace muster::extender
