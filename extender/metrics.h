// The extender's metrics, all declared here, with bounded label values.
//
//   muster_extender_requests_total{verb,result}          counter
//   muster_extender_request_duration_seconds{verb}       histogram, 50us .. 5s
//   muster_extender_decisions_total{verb,reason}         counter
//   muster_extender_bind_failures_total{reason}          counter
//   muster_extender_cache_objects{kind}                  gauge
//   muster_extender_cache_synced                         gauge, 0 or 1
//   muster_extender_leader                               gauge, 1 leader / 0 standby
//   muster_gpu_sets_total{link}                          counter: pods bound with GPUs,
//                                                          by the weakest link of their set
//   muster_gpu_topology_nodes{source}                    gauge: nodes by where their GPU
//                                                          topology came from ("invalid":
//                                                          unreadable, GPUs not chosen)
//   muster_gpus{state}                                   gauge: GPUs of known nodes,
//                                                          "allocated" or "free"
//   muster_gpus_stranded                                 gauge: free GPUs with no free
//                                                          partner on their node's best link
//   muster_gpu_nodes{usage}                              gauge: nodes with GPUs, "idle",
//                                                          "partial" or "full"
//   muster_gpus_shared{use}                              gauge: GPUs with sharers ("shared")
//                                                          and those with a share left
//                                                          ("partly_used")
//   muster_gpu_shared_fraction                           gauge: GPUs' worth of compute the
//                                                          sharers hold
//   muster_gpu_share_requests_total{outcome}             counter: requests of pods sharing
//                                                          GPUs, by kShareOutcomes
//   muster_webhook_pods_total{outcome}                   counter: pods the admission webhook
//                                                          saw (pod_webhook.h: gated, passed,
//                                                          bad_request)
//   muster_extender_undecodable_objects{kind,reason}     gauge: watched objects whose
//                                                          current version does not decode,
//                                                          by kind and where the first bad
//                                                          field is (bad_spec, bad_status,
//                                                          bad_metadata, bad_object)
//
// The gang controller's (recorded by GangObserver, gang_observer.h):
//   muster_gang_wait_seconds                             histogram: gang admission to
//                                                          minMember members bound
//   muster_gang_pass_duration_seconds                    histogram: one controller pass
//   muster_gang_partial_gpu_seconds_total                counter: GPU-seconds held by gangs
//                                                          short of minMember (should stay 0)
//   muster_gang_reservations_total{outcome}              counter: "made" or "expired"
//   muster_gang_bind_holds_total{release}                counter: gang members' binds held
//                                                          at the bind barrier, by how their
//                                                          round ended (kBarrierReleases)
//   muster_gang_bind_hold_seconds                        histogram: how long one was held
//   muster_gang_preemptions_total                        counter: victim sets chosen
//   muster_gang_evictions_total                          counter: pods evicted as victims
//   muster_gangs{phase}                                  gauge: PodGroups by phase (kGangPhases)
//   muster_queue_deserved{queue,resource}                gauge: a queue's deserved share
//   muster_queue_allocated{queue,resource}               gauge: what its gangs hold
//   muster_queue_pending_demand{queue,resource}          gauge: what its gangs wait for
//   muster_queue_share{queue}                            gauge: its dominant share
//   muster_queue_reclaims_total{queue}                   counter: gangs reclaimed from it
// (cpu in cores, GPUs in GPUs). The queue and resource labels are those of
// the queues and resources that exist: a queue gone leaves the gauges.
//
// Label values come from fixed sets: verb from kVerbs, result from
// ReplyOutcomeName(), reason from the pipeline's kReason* codes, kind from
// kCacheKinds (kUndecodableKinds for undecodable objects, whose reason is
// kube::kUndecodableReasons). A value outside its set is recorded as "other", so a bug can
// never grow the series count without bound. Every series of the fixed sets
// exists from the start (at zero), so rate() works from the first scrape.
//
// Thread-safety: thread-safe; recording is lock-free after construction
// (the series are created up front and looked up in immutable maps).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "base/mutex.h"
#include "extender/pipeline.h"
#include "queue/queue.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace muster::extender {

inline constexpr std::array<std::string_view, 4> kVerbs = {"filter", "prioritize", "bind",
                                                           "preempt"};
inline constexpr std::array<std::string_view, 5> kCacheKinds = {"nodes", "pods", "assumed",
                                                                "podgroups", "queues"};
// topology::LinkClassName values, "single" (one GPU), "unlinked" (chosen
// on a node whose links are unknown), "shared" (shares of GPUs) and
// "unchosen".
inline constexpr std::array<std::string_view, 9> kGpuSetLinks = {
    "nvlink", "pcie-switch", "pcie-host", "numa",    "sys",
    "single", "unlinked",    "shared",    "unchosen"};
// How a request of a pod sharing GPUs ended (CountShareRequest).
inline constexpr std::array<std::string_view, 3> kShareOutcomes = {"bound", "waiting", "invalid"};
// The watched kinds whose undecodable objects are counted.
// "podgroups" are Volcano's; Kubernetes' own (scheduling.k8s.io) are named in full.
inline constexpr std::array<std::string_view, 5> kUndecodableKinds = {
    "nodes", "pods", "podgroups", "queues", "podgroups.scheduling.k8s.io"};
// PodGroup phases, as muster_gangs counts them.
inline constexpr std::array<std::string_view, 5> kGangPhases = {
    kPodGroupPending, kPodGroupInqueue, kPodGroupRunning, kPodGroupCompleted, kPodGroupUnknown};
// Pods the admission webhook answered (pod_webhook.h): "bad_request" is a
// body that is not an AdmissionReview, answered 400 (the API server then
// applies the registration's failure policy).
inline constexpr std::array<std::string_view, 3> kWebhookOutcomes = {"gated", "passed",
                                                                     "bad_request"};
// The label value for anything outside a fixed set.
inline constexpr std::string_view kOtherLabel = "other";

class ExtenderMetrics {
 public:
  ExtenderMetrics();
  ~ExtenderMetrics();
  ExtenderMetrics(const ExtenderMetrics&) = delete;
  ExtenderMetrics& operator=(const ExtenderMetrics&) = delete;

  // One answered request: its verb, ReplyOutcomeName(outcome) and latency.
  void ObserveRequest(std::string_view verb, ReplyOutcome outcome, double seconds);
  // The decisions of one reply, by reason code.
  void CountDecisions(std::string_view verb, const DecisionCounts& decisions);
  // A bind that answered an Error, by reason code.
  void CountBindFailure(std::string_view reason);
  void SetCacheObjects(std::string_view kind, int64_t count);
  void SetCacheSynced(bool synced);
  // Leader election's role: 1 while this replica acts (always, without
  // --leader-elect), 0 on a standby.
  void SetLeader(bool leading);
  // A pod bound with GPUs (VerbReply::gpu_set).
  void CountGpuSet(std::string_view link);
  void SetGpuTopologyNodes(std::string_view source, int64_t count);
  void SetGpuUsage(const GpuUsage& usage);
  // A request of a pod sharing GPUs, by outcome (kShareOutcomes).
  void CountShareRequest(std::string_view outcome);
  void SetUndecodable(std::string_view kind, std::string_view reason, int64_t count);
  // A pod the admission webhook answered, by outcome (kWebhookOutcomes).
  void CountWebhookPod(std::string_view outcome);

  // The gang controller's.
  void ObserveGangWait(double seconds);
  void ObserveGangPass(double seconds);
  void AddPartialGpuSeconds(double gpu_seconds);
  void CountReservations(size_t made, size_t expired);
  // Plans dropped by a pass because freed capacity was still settling
  // (gang/settle.h); they are planned again.
  void CountPlansHeld(size_t held);
  // A gang member's bind held at the bind barrier (bind_barrier.h), by
  // BarrierReleaseName, and for how long.
  void ObserveBindHold(std::string_view release, double seconds);
  void CountPreemption();
  void CountEvictions(size_t evicted);
  void CountReclaim(std::string_view queue);
  // PodGroups per phase of kGangPhases (other phases are not counted; a
  // phase absent reads 0).
  void SetGangPhases(const std::map<std::string, int64_t, std::less<>>& phases);
  // Each queue's deserved share, allocation, pending demand (per resource of
  // the cluster's total) and dominant share; the reclaims counter of a new
  // queue starts at 0. Queues and resources gone since the last call leave
  // the gauges.
  void SetQueueShares(const queue::Shares& shares) MUSTER_EXCLUDES(queue_mu_);

  // Every metric in the Prometheus text exposition format (version 0.0.4).
  std::string Text() const;

  // The count and sum of request_duration_seconds{verb} so far (verb
  // bounded as ObserveRequest bounds it). Across one request of a lone
  // sequential client, the change of the sum is that request's exact handler
  // time, which the histogram's buckets only bracket (bench/extender_http_bench.cc).
  struct DurationTotals {
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  DurationTotals RequestDurations(std::string_view verb) const;

 private:
  using Key = std::pair<std::string_view, std::string_view>;

  std::shared_ptr<prometheus::Registry> registry_;
  std::map<Key, prometheus::Counter*> requests_;
  std::map<std::string_view, prometheus::Histogram*> durations_;
  std::map<Key, prometheus::Counter*> decisions_;
  std::map<std::string_view, prometheus::Counter*> bind_failures_;
  std::map<std::string_view, prometheus::Gauge*> cache_objects_;
  prometheus::Gauge* cache_synced_ = nullptr;
  prometheus::Gauge* leader_ = nullptr;
  std::map<std::string_view, prometheus::Counter*> gpu_sets_;
  std::map<std::string_view, prometheus::Gauge*> gpu_topology_nodes_;
  prometheus::Gauge* gpus_allocated_ = nullptr;
  prometheus::Gauge* gpus_free_ = nullptr;
  prometheus::Gauge* gpus_stranded_ = nullptr;
  std::array<prometheus::Gauge*, 3> gpu_nodes_{};  // idle, partial, full
  prometheus::Gauge* gpus_shared_ = nullptr;
  prometheus::Gauge* gpus_partly_used_ = nullptr;
  prometheus::Gauge* gpu_shared_fraction_ = nullptr;
  std::map<std::string_view, prometheus::Counter*> share_requests_;
  std::map<Key, prometheus::Gauge*> undecodable_;
  // The gang controller's.
  prometheus::Histogram* gang_wait_ = nullptr;
  prometheus::Histogram* gang_pass_ = nullptr;
  prometheus::Counter* partial_gpu_seconds_ = nullptr;
  prometheus::Counter* reservations_made_ = nullptr;
  prometheus::Counter* reservations_expired_ = nullptr;
  prometheus::Counter* plans_held_ = nullptr;
  std::map<std::string_view, prometheus::Counter*> bind_holds_;
  std::map<std::string_view, prometheus::Counter*> webhook_pods_;
  prometheus::Histogram* bind_hold_seconds_ = nullptr;
  prometheus::Counter* preemptions_ = nullptr;
  prometheus::Counter* evictions_ = nullptr;
  std::map<std::string_view, prometheus::Gauge*> gang_phases_;
  prometheus::Family<prometheus::Gauge>* queue_deserved_ = nullptr;
  prometheus::Family<prometheus::Gauge>* queue_allocated_ = nullptr;
  prometheus::Family<prometheus::Gauge>* queue_pending_ = nullptr;
  prometheus::Family<prometheus::Gauge>* queue_share_ = nullptr;
  prometheus::Family<prometheus::Counter>* queue_reclaims_ = nullptr;
  // The queues (and their resources) SetQueueShares set last: those not set
  // again are removed.
  base::Mutex queue_mu_;
  std::map<std::string, std::set<std::string>> queue_labelled_ MUSTER_GUARDED_BY(queue_mu_);
};

// The fixed set of decision/bind-failure reason codes (the pipeline's kReason*).
const std::array<std::string_view, 23>& ReasonCodes();

}  // namespace muster::extender
