#include "extender/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "extender/testing/metrics_text.h"

namespace muster::extender {
namespace {

using fixture::FindSample;
using fixture::ParseMetricsText;
using Labels = std::map<std::string, std::string>;

TEST(MetricsTest, EverySeriesOfTheFixedSetsExistsAtZero) {
  ExtenderMetrics metrics;
  const auto samples = ParseMetricsText(metrics.Text());
  for (std::string_view verb : kVerbs) {
    SCOPED_TRACE(verb);
    const std::string v(verb);
    EXPECT_EQ(
        FindSample(samples, "muster_extender_requests_total", {{"verb", v}, {"result", "ok"}}),
        0.0);
    EXPECT_EQ(FindSample(samples, "muster_extender_request_duration_seconds_count", {{"verb", v}}),
              0.0);
    EXPECT_EQ(FindSample(samples, "muster_extender_decisions_total",
                         {{"verb", v}, {"reason", "insufficient"}}),
              0.0);
  }
  EXPECT_EQ(FindSample(samples, "muster_extender_bind_failures_total", {{"reason", "api_error"}}),
            0.0);
  EXPECT_EQ(FindSample(samples, "muster_extender_cache_synced", {}), 0.0);
}

TEST(MetricsTest, UndecodableObjectsByKindAndReasonExistAtZeroAndAreBounded) {
  ExtenderMetrics metrics;
  auto samples = ParseMetricsText(metrics.Text());
  for (std::string_view kind : kUndecodableKinds) {
    for (std::string_view reason : {"bad_spec", "bad_status", "bad_metadata", "bad_object"}) {
      EXPECT_EQ(FindSample(samples, "muster_extender_undecodable_objects",
                           {{"kind", std::string(kind)}, {"reason", std::string(reason)}}),
                0.0)
          << kind << " " << reason;
    }
  }
  metrics.SetUndecodable("podgroups", "bad_spec", 3);
  metrics.SetUndecodable("jobs", "because", 2);  // not the extender's: other/other
  samples = ParseMetricsText(metrics.Text());
  EXPECT_EQ(FindSample(samples, "muster_extender_undecodable_objects",
                       {{"kind", "podgroups"}, {"reason", "bad_spec"}}),
            3.0);
  EXPECT_EQ(FindSample(samples, "muster_extender_undecodable_objects",
                       {{"kind", "other"}, {"reason", "other"}}),
            2.0);
}

// A sample RecordsAndBoundsLabels expects after its observations.
struct SampleCase {
  std::string name;
  std::string metric;
  Labels labels;
  double want;
};

const std::vector<SampleCase> kRecordedSamples = {
    {"requests by verb and result",
     "muster_extender_requests_total",
     {{"verb", "filter"}, {"result", "ok"}},
     2},
    {"a fault", "muster_extender_requests_total", {{"verb", "bind"}, {"result", "fault"}}, 1},
    {"an unknown verb is other",
     "muster_extender_requests_total",
     {{"verb", "other"}, {"result", "bad_request"}},
     1},
    {"latency count", "muster_extender_request_duration_seconds_count", {{"verb", "filter"}}, 2},
    {"latency sum", "muster_extender_request_duration_seconds_sum", {{"verb", "filter"}}, 0.0031},
    {"the 50us bucket is empty",
     "muster_extender_request_duration_seconds_bucket",
     {{"verb", "filter"}, {"le", "5e-05"}},
     0},
    {"the 1ms bucket holds the fast one",
     "muster_extender_request_duration_seconds_bucket",
     {{"verb", "filter"}, {"le", "0.001"}},
     1},
    {"a 1.5s bind lands under 2.5s",
     "muster_extender_request_duration_seconds_bucket",
     {{"verb", "bind"}, {"le", "2.5"}},
     1},
    {"decisions by reason",
     "muster_extender_decisions_total",
     {{"verb", "filter"}, {"reason", "fits"}},
     3},
    {"insufficient",
     "muster_extender_decisions_total",
     {{"verb", "filter"}, {"reason", "insufficient"}},
     2},
    {"an unknown reason is other",
     "muster_extender_decisions_total",
     {{"verb", "filter"}, {"reason", "other"}},
     1},
    {"bind failures", "muster_extender_bind_failures_total", {{"reason", "api_error"}}, 1},
    {"an unknown bind failure", "muster_extender_bind_failures_total", {{"reason", "other"}}, 1},
    {"cache nodes", "muster_extender_cache_objects", {{"kind", "nodes"}}, 16},
    {"cache pods", "muster_extender_cache_objects", {{"kind", "pods"}}, 200},
    {"synced", "muster_extender_cache_synced", {}, 1},
};

TEST(MetricsTest, RecordsAndBoundsLabels) {
  ExtenderMetrics metrics;
  metrics.ObserveRequest("filter", ReplyOutcome::kOk, 0.0001);
  metrics.ObserveRequest("filter", ReplyOutcome::kOk, 0.003);
  metrics.ObserveRequest("bind", ReplyOutcome::kFault, 1.5);
  metrics.ObserveRequest("/etc/passwd", ReplyOutcome::kBadRequest, 0.1);
  metrics.CountDecisions("filter", {{kReasonFits, 3}, {kReasonInsufficient, 2}, {"made-up", 1}});
  metrics.CountBindFailure(kReasonApiError);
  metrics.CountBindFailure("something new");
  metrics.SetCacheObjects("nodes", 16);
  metrics.SetCacheObjects("pods", 200);
  metrics.SetCacheSynced(true);
  const auto samples = ParseMetricsText(metrics.Text());
  for (const SampleCase& c : kRecordedSamples) {
    SCOPED_TRACE(c.name);
    const std::optional<double> got = FindSample(samples, c.metric, c.labels);
    ASSERT_TRUE(got.has_value());
    EXPECT_NEAR(*got, c.want, 1e-9);
  }
}

TEST(MetricsTest, RequestDurationsReadsCountAndSum) {
  struct Case {
    std::string verb;
    uint64_t count;
    double sum;
  };
  ExtenderMetrics metrics;
  metrics.ObserveRequest("filter", ReplyOutcome::kOk, 0.0001);
  metrics.ObserveRequest("filter", ReplyOutcome::kBadRequest, 0.002);
  metrics.ObserveRequest("/etc/passwd", ReplyOutcome::kOk, 0.5);
  const std::vector<Case> cases = {
      {"filter", 2, 0.0021},
      {"prioritize", 0, 0},
      {"other", 1, 0.5},
      {"made-up verb reads other", 1, 0.5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.verb);
    const ExtenderMetrics::DurationTotals got = metrics.RequestDurations(c.verb);
    EXPECT_EQ(got.count, c.count);
    EXPECT_NEAR(got.sum_seconds, c.sum, 1e-12);
  }
}

TEST(MetricsTest, TheTextFormatDeclaresTypes) {
  ExtenderMetrics metrics;
  const std::string text = metrics.Text();
  for (const char* want : {"# TYPE muster_extender_requests_total counter",
                           "# TYPE muster_extender_request_duration_seconds histogram",
                           "# TYPE muster_extender_cache_objects gauge"}) {
    SCOPED_TRACE(want);
    EXPECT_NE(text.find(want), std::string::npos);
  }
}

}  // namespace
}  // namespace muster::extender
