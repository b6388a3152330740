#include "reconciler/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <string>

namespace muster::reconciler {
namespace {

constexpr std::string_view kOther = "other";
constexpr std::array<std::string_view, 11> kPhases = {
    "Pending",   "Running",     "Restarting", "Aborting", "Aborted", "Completing",
    "Completed", "Terminating", "Terminated", "Failed",   kOther};
constexpr std::array<std::string_view, 8> kActions = {"AbortJob",   "RestartJob",   "RestartTask",
                                                      "RestartPod", "TerminateJob", "CompleteJob",
                                                      "ResumeJob",  kOther};
constexpr std::array<std::string_view, 3> kResults = {"ok", "conflict", "error"};
constexpr std::array<std::string_view, 3> kVerbs = {"create", "patch", "delete"};
constexpr std::array<std::string_view, 11> kResources = {
    "pods",     "podgroups",       "jobs",
    "services", "configmaps",      "secrets",
    "events",   "networkpolicies", "persistentvolumeclaims",
    "commands", "queues"};

constexpr std::array<std::string_view, 6> kUndecodableKinds = {"jobs",   "pods",     "podgroups",
                                                               "queues", "commands", kOther};
// kube::kUndecodableReasons and "other" (metrics stay free of kube/).
constexpr std::array<std::string_view, 5> kUndecodableReasons = {
    "bad_spec", "bad_status", "bad_metadata", "bad_object", kOther};

template <typename Set>
std::string_view Bounded(const Set& set, std::string_view value) {
  return std::find(set.begin(), set.end(), value) != set.end() ? value : kOther;
}

template <typename Map>
auto Lookup(const Map& map, std::string_view key) {
  auto it = map.find(key);
  return it != map.end() ? it->second : map.at(kOther);
}

}  // namespace

ReconcilerMetrics::ReconcilerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& jobs = prometheus::BuildGauge()
                   .Name("muster_reconciler_jobs")
                   .Help("Volcano Jobs by phase (status.state.phase)")
                   .Register(*registry_);
  for (std::string_view p : kPhases) jobs_[p] = &jobs.Add({{"phase", std::string(p)}});
  leader_ = &prometheus::BuildGauge()
                 .Name("muster_reconciler_leader")
                 .Help(
                     "1 while this replica syncs Jobs and Queues (it holds the leader Lease, or "
                     "runs without --leader-elect); 0 on a standby.")
                 .Register(*registry_)
                 .Add({});
  auto& actions = prometheus::BuildCounter()
                      .Name("muster_reconciler_actions_total")
                      .Help("Lifecycle policy actions executed, by action")
                      .Register(*registry_);
  for (std::string_view a : kActions) actions_[a] = &actions.Add({{"action", std::string(a)}});
  retries_ = &prometheus::BuildCounter()
                  .Name("muster_reconciler_job_retries_total")
                  .Help("Increments of a Job's status.retryCount (restarts of job, task or pod)")
                  .Register(*registry_)
                  .Add({});
  auto& syncs = prometheus::BuildCounter()
                    .Name("muster_reconciler_syncs_total")
                    .Help("Job syncs by result (conflict: the Job changed meanwhile, redone)")
                    .Register(*registry_);
  for (std::string_view r : kResults) syncs_[r] = &syncs.Add({{"result", std::string(r)}});
  sync_seconds_ = &prometheus::BuildHistogram()
                       .Name("muster_reconciler_sync_duration_seconds")
                       .Help("Time of one Job sync, API writes included")
                       .Register(*registry_)
                       .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025,
                                                                        0.005, 0.01, 0.025, 0.05,
                                                                        0.1, 0.25, 0.5, 1, 2.5, 5});
  auto& writes = prometheus::BuildCounter()
                     .Name("muster_reconciler_api_writes_total")
                     .Help("API writes by verb and resource")
                     .Register(*registry_);
  for (std::string_view v : kVerbs) {
    for (std::string_view r : kResources) {
      writes_[{v, r}] = &writes.Add({{"verb", std::string(v)}, {"resource", std::string(r)}});
    }
  }
  job_to_pods_ = &prometheus::BuildHistogram()
                      .Name("muster_reconciler_job_to_pods_seconds")
                      .Help("From a Job's creation to every pod of its first version created")
                      .Register(*registry_)
                      .Add({}, prometheus::Histogram::BucketBoundaries{0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                                                       5, 10, 30, 60, 120, 300});
  invalid_ = &prometheus::BuildCounter()
                  .Name("muster_reconciler_invalid_jobs_total")
                  .Help("Jobs rejected by validation (status InvalidSpec)")
                  .Register(*registry_)
                  .Add({});
  auto& undecodable = prometheus::BuildGauge()
                          .Name("muster_reconciler_undecodable_objects")
                          .Help(
                              "Watched objects whose current version muster cannot decode, by "
                              "kind and where the first bad field is (a Job is answered with "
                              "InvalidSpec naming it)")
                          .Register(*registry_);
  for (std::string_view kind : kUndecodableKinds) {
    for (std::string_view reason : kUndecodableReasons) {
      undecodable_[{kind, reason}] =
          &undecodable.Add({{"kind", std::string(kind)}, {"reason", std::string(reason)}});
    }
  }
}

ReconcilerMetrics::~ReconcilerMetrics() = default;

void ReconcilerMetrics::SetJobs(std::string_view phase, int64_t count) {
  Lookup(jobs_, phase)->Set(static_cast<double>(count));
}
void ReconcilerMetrics::CountAction(std::string_view action) {
  Lookup(actions_, action)->Increment();
}
void ReconcilerMetrics::CountRetry() { retries_->Increment(); }
void ReconcilerMetrics::CountSync(std::string_view result, double seconds) {
  syncs_.at(result)->Increment();
  sync_seconds_->Observe(seconds);
}
void ReconcilerMetrics::CountWrite(std::string_view verb, std::string_view resource) {
  auto it = writes_.find({verb, resource});
  if (it != writes_.end()) it->second->Increment();
}
void ReconcilerMetrics::ObserveJobToPods(double seconds) { job_to_pods_->Observe(seconds); }
void ReconcilerMetrics::CountInvalidJob() { invalid_->Increment(); }
void ReconcilerMetrics::SetUndecodable(std::string_view kind, std::string_view reason,
                                       int64_t count) {
  undecodable_.at({Bounded(kUndecodableKinds, kind), Bounded(kUndecodableReasons, reason)})
      ->Set(static_cast<double>(count));
}

std::string ReconcilerMetrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void ReconcilerMetrics::SetLeader(bool leading) { leader_->Set(leading ? 1 : 0); }

}  // namespace muster::reconciler
