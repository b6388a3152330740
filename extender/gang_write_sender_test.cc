// The gang controller's typed writes through the generic executor: their
// slots (send order and coalescing) and what reaches the API.
#include "extender/gang_write_sender.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::extender {
namespace {

using ::testing::ElementsAre;

PodGroupStatus StatusOfPhase(std::string phase) {
  PodGroupStatus s;
  s.phase = std::move(phase);
  return s;
}

// The writes `send` saw, in order (one at a time).
struct Sent {
  std::mutex mu;
  std::vector<GangWrite> writes;
  std::function<bool(const GangWrite&)> Recorder() {
    return [this](const GangWrite& w) {
      std::lock_guard<std::mutex> lock(mu);
      writes.push_back(w);
      return true;
    };
  }
};

// A slow API server sees one write per object: later patches and statuses
// replace queued ones; events and evictions are all kept.
TEST(GangWriteSenderTest, PendingWritesCoalescePerObject) {
  const std::vector<GangWrite> first = {
      AnnotateReservedNode{
          .gang = "ml/a", .namespace_ = "ml", .name = "a-0", .uid = "u0", .node = "old"},
      PodGroupStatusWrite{"ml/a", "ml", "a", StatusOfPhase("Pending")},
      CreateEvent{Event{.reason = "GangReserved"}}};
  const std::vector<GangWrite> second = {
      AnnotateReservedNode{
          .gang = "ml/a", .namespace_ = "ml", .name = "a-0", .uid = "u0", .node = "new"},
      AnnotateReservedNode{
          .gang = "ml/a", .namespace_ = "ml", .name = "a-1", .uid = "u1", .node = "b"},
      PodGroupStatusWrite{"ml/a", "ml", "a", StatusOfPhase("Inqueue")},
      CreateEvent{Event{.reason = "GangReservationExpired"}}, EvictPod{"ml", "lo-0", "ul"}};
  Sent sent;
  std::vector<base::WriteExecutor::Write> queued;
  for (const auto* pass : {&first, &second}) {
    for (const GangWrite& w : *pass) queued.push_back(ToExecutorWrite(w, sent.Recorder()));
  }
  base::WriteExecutor executor({.parallelism = 1});
  executor.Submit(std::move(queued));  // both passes queued before any is sent
  std::vector<std::string> kinds;
  for (const GangWrite& w : sent.writes) kinds.push_back(std::to_string(w.index()));
  // Pods first, then the status, the events in order, the eviction.
  ASSERT_EQ(sent.writes.size(), 6u);
  EXPECT_EQ(std::get<AnnotateReservedNode>(sent.writes[0]).node, "new");
  EXPECT_EQ(std::get<AnnotateReservedNode>(sent.writes[1]).node, "b");
  EXPECT_EQ(std::get<PodGroupStatusWrite>(sent.writes[2]).status.phase, "Inqueue");
  EXPECT_EQ(std::get<CreateEvent>(sent.writes[3]).event.reason, "GangReserved");
  EXPECT_EQ(std::get<CreateEvent>(sent.writes[4]).event.reason, "GangReservationExpired");
  EXPECT_EQ(std::get<EvictPod>(sent.writes[5]).name, "lo-0");
}

// Each kind is encoded by kube/codec and sent where the API expects it.
TEST(GangWriteSenderTest, SendsEachKindToItsObject) {
  auto api = std::make_shared<kube::testing::FakeApi>();
  kube::Client client(api, kube::ClientConfig{});
  const std::vector<GangWrite> writes = {
      LiftGate{.gang = "ml/a",
               .namespace_ = "ml",
               .name = "a-0",
               .uid = "u0",
               .gate_index = 1,
               .node = "gpu-1",
               .pin = true},
      LiftGate{.gang = "ml/a",
               .namespace_ = "ml",
               .name = "a-1",
               .uid = "u1",
               .gate_index = 0,
               .node = "gpu-1",
               .pin = false},
      AnnotateReservedNode{
          .gang = "ml/a", .namespace_ = "ml", .name = "a-2", .uid = "u2", .node = "gpu-2"},
      PodGroupStatusWrite{"ml/a", "ml", "a", StatusOfPhase("Inqueue")},
      AnswerBrokenPodGroup{"ml/b", "ml", "b", "Pending", Condition{.type = "Unschedulable"}},
      QueueStatusWrite{"q", QueueStatus{.running = 2}},
      CreateEvent{Event{.meta = {.name = "e", .namespace_ = "ml"}, .reason = "GangReserved"}},
      EvictPod{"ml", "lo-0", "ul"},
  };
  for (const GangWrite& w : writes) SendGangWrite(client, w);
  std::vector<std::string> sent;
  for (const auto& r : api->Requests()) sent.push_back(r.method + " " + r.path + " " + r.body);
  const Eviction eviction{.meta = {.name = "lo-0", .namespace_ = "ml"}, .precondition_uid = "ul"};
  EXPECT_THAT(
      sent,
      ElementsAre(
          "PATCH /api/v1/namespaces/ml/pods/a-0 " +
              kube::EncodeLiftGatePatch(1, kGangSchedulingGate, "gpu-1"),
          "PATCH /api/v1/namespaces/ml/pods/a-1 " +
              kube::EncodeLiftGatePatch(0, kGangSchedulingGate),
          "PATCH /api/v1/namespaces/ml/pods/a-2 " +
              std::string(R"({"metadata":{"annotations":{"muster.io/reserved-node":"gpu-2"}}})"),
          "PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/a " +
              kube::EncodePodGroupStatusPatch(StatusOfPhase("Inqueue")),
          "PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/b " +
              kube::EncodePodGroupConditionsPatch("Pending", {Condition{.type = "Unschedulable"}}),
          "PATCH /apis/scheduling.volcano.sh/v1beta1/queues/q/status " +
              kube::EncodeQueueStatusPatch(QueueStatus{.running = 2}),
          "POST /api/v1/namespaces/ml/events " +
              kube::EncodeEvent(std::get<CreateEvent>(writes[6]).event),
          "POST /api/v1/namespaces/ml/pods/lo-0/eviction " + kube::EncodeEviction(eviction)));
}

// A PodGroup deleted meanwhile needs no answer (not retried); a status that
// could not be written is retried.
TEST(GangWriteSenderTest, AGonePodGroupNeedsNoAnswerButAFailedStatusIsRetried) {
  auto api = std::make_shared<kube::testing::FakeApi>();
  kube::Client client(api, kube::ClientConfig{});
  EXPECT_TRUE(SendGangWrite(
      client, AnswerBrokenPodGroup{.key = "ml/gone", .namespace_ = "ml", .name = "gone"}));
  EXPECT_FALSE(SendGangWrite(client, PodGroupStatusWrite{"ml/gone", "ml", "gone", {}}));
}

}  // namespace
}  // namespace muster::extender
