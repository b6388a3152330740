// The reconciler's Prometheus metrics. Every series is created up front
// (label values are fixed sets), so a dashboard shows 0, not "no data".
//
//   muster_reconciler_jobs{phase}                       gauge: Jobs by phase
//   muster_reconciler_actions_total{action}             policy actions run
//   muster_reconciler_job_retries_total                 retryCount increments
//   muster_reconciler_syncs_total{result}               ok | conflict | error
//   muster_reconciler_sync_duration_seconds             histogram
//   muster_reconciler_api_writes_total{verb,resource}   create|patch|delete x
//                                                       pods|podgroups|jobs|
//                                                       commands|queues|...
//   muster_reconciler_job_to_pods_seconds               Job created -> every
//                                                       pod of its first
//                                                       version created
//   muster_reconciler_invalid_jobs_total                Jobs rejected
//   muster_reconciler_leader                            gauge: 1 while this replica
//                                                       syncs, 0 on a standby
//   muster_reconciler_undecodable_objects{kind,reason}  gauge: watched objects
//                                                       that do not decode, by
//                                                       kind (jobs|pods|podgroups|
//                                                       queues|commands) and where
//                                                       the first bad field is
//                                                       (kube::kUndecodableReasons)
//
// Thread-safety: thread-safe (prometheus-cpp metrics are atomic; the maps
// are filled in the constructor and read-only after).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace muster::reconciler {

class ReconcilerMetrics {
 public:
  ReconcilerMetrics();
  ~ReconcilerMetrics();

  void SetJobs(std::string_view phase, int64_t count);
  void CountAction(std::string_view action);
  void CountRetry();
  void CountSync(std::string_view result, double seconds);
  void CountWrite(std::string_view verb, std::string_view resource);
  void ObserveJobToPods(double seconds);
  void CountInvalidJob();
  // Label values outside the fixed sets are recorded as "other".
  void SetUndecodable(std::string_view kind, std::string_view reason, int64_t count);
  // 1 while this replica leads (always, without --leader-elect), 0 on a
  // standby.
  void SetLeader(bool leading);

  // The text exposition of every metric.
  std::string Serialize() const;
  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string_view, prometheus::Gauge*> jobs_;
  std::map<std::string_view, prometheus::Counter*> actions_;
  prometheus::Counter* retries_ = nullptr;
  std::map<std::string_view, prometheus::Counter*> syncs_;
  prometheus::Histogram* sync_seconds_ = nullptr;
  std::map<std::pair<std::string_view, std::string_view>, prometheus::Counter*> writes_;
  prometheus::Histogram* job_to_pods_ = nullptr;
  prometheus::Counter* invalid_ = nullptr;
  std::map<std::pair<std::string_view, std::string_view>, prometheus::Gauge*> undecodable_;
  prometheus::Gauge* leader_ = nullptr;
};

}  // namespace muster::reconciler
