#include "cmd/cli/queue_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cmd/cli/cli.h"
#include "cmd/cli/testing/builders.h"

namespace muster::cli {
namespace {

using ::testing::HasSubstr;

using ::muster::cli::test::ExpectGolden;
using ::muster::cli::test::kNow;

class QueueBuilder {
 public:
  explicit QueueBuilder(std::string name) {
    q_.meta.name = std::move(name);
    q_.meta.uid = "uid-" + q_.meta.name;
    q_.meta.creation_timestamp = kNow - std::chrono::hours(3);
    q_.spec.parent = "root";
    q_.status.state = "Open";
  }
  QueueBuilder& Weight(int32_t w) {
    q_.spec.weight = w;
    return *this;
  }
  QueueBuilder& State(std::string s) {
    q_.status.state = std::move(s);
    return *this;
  }
  QueueBuilder& Parent(std::string p) {
    q_.spec.parent = std::move(p);
    return *this;
  }
  QueueBuilder& Allocated(Resources r) {
    q_.status.allocated = std::move(r);
    return *this;
  }
  QueueBuilder& Capability(Resources r) {
    q_.spec.capability = std::move(r);
    return *this;
  }
  QueueBuilder& Guarantee(Resources r) {
    q_.spec.guarantee = std::move(r);
    return *this;
  }
  QueueBuilder& Reclaimable(bool r) {
    q_.spec.reclaimable = r;
    return *this;
  }
  Queue Build() const { return q_; }

 private:
  Queue q_;
};

PodGroup Group(std::string queue, std::string phase) {
  PodGroup pg;
  pg.spec.queue = std::move(queue);
  pg.status.phase = std::move(phase);
  return pg;
}

std::vector<Queue> SampleQueues() {
  return {
      QueueBuilder("default").Allocated({{"cpu", 2000}}).Build(),
      QueueBuilder("research")
          .Weight(4)
          .Allocated({{"cpu", 4500}, {"nvidia.com/gpu", 8000}})
          .Capability({{"nvidia.com/gpu", 16000}})
          .Build(),
      QueueBuilder("archive").State("Closed").Parent("").Build(),
  };
}

std::map<std::string, PodGroupCounts> SampleCounts() {
  return CountPodGroups({Group("", "Running"), Group("default", "Pending"),
                         Group("research", "Running"), Group("research", "Running"),
                         Group("research", "Inqueue"), Group("research", ""),
                         Group("research", "Completed"), Group("research", "Unknown")});
}

TEST(CountPodGroupsTest, ByQueueAndPhase) {
  const struct {
    std::vector<PodGroup> groups;
    std::map<std::string, PodGroupCounts> want;
  } cases[] = {
      {{}, {}},
      {{Group("", "")}, {{"default", {.pending = 1}}}},
      {{Group("a", "Inqueue"), Group("a", "Running"), Group("b", "Completed"),
        Group("b", "Unknown"), Group("b", "Restarting")},
       {{"a", {.inqueue = 1, .running = 1}}, {"b", {.unknown = 1, .completed = 1}}}},
  };
  for (const auto& c : cases) EXPECT_EQ(CountPodGroups(c.groups), c.want);
}

TEST(ParseDeservedTest, Table) {
  const struct {
    std::string json;
    std::map<std::string, Resources> want;
    std::string error;
  } cases[] = {
      {R"({"gangs":[],"fairShare":{"queues":[{"name":"research","deserved":{"cpu":"4",)"
       R"("nvidia.com/gpu":"8"},"allocated":{}},{"name":"default","deserved":{}}],"problems":[]}})",
       {{"research", Resources{{"cpu", 4000}, {"nvidia.com/gpu", 8000}}}, {"default", Resources{}}},
       ""},
      {R"({"fairShare":{}})", {}, ""},
      {R"({"gangs":[]})", {}, ""},
      {R"({"fairShare":{"queues":{}}})", {}, "fairShare.queues"},
      {R"({"fairShare":{"queues":[{"name":"a","deserved":{"cpu":"lots"}}]}})",
       {},
       "fairShare.queues[0].deserved"},
      {"<html>", {}, "muster /debug/state"},
  };
  for (const auto& c : cases) {
    StatusOr<std::map<std::string, Resources>> got = ParseDeserved(c.json);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << c.json << ": " << got.status();
      EXPECT_EQ(*got, c.want) << c.json;
    } else {
      ASSERT_FALSE(got.ok()) << c.json;
      EXPECT_THAT(got.status().message(), HasSubstr(c.error));
    }
  }
}

TEST(QueueTableTest, VcctlColumns) {
  ExpectGolden("queue_list.txt",
               QueueTable(SampleQueues(), SampleCounts(), false, std::nullopt).Render());
}

TEST(QueueTableTest, WideWithDeserved) {
  const std::map<std::string, Resources> deserved = {
      {"research", {{"cpu", 6000}, {"nvidia.com/gpu", 12000}}}, {"default", {{"cpu", 2000}}}};
  ExpectGolden("queue_list_wide.txt",
               QueueTable(SampleQueues(), SampleCounts(), true, deserved).Render());
}

TEST(QueueTableTest, WideWithoutMuster) {
  ExpectGolden("queue_list_wide_nomuster.txt",
               QueueTable(SampleQueues(), SampleCounts(), true, std::nullopt).Render());
}

TEST(QueueViewTest, GetScreen) {
  const Queue q = QueueBuilder("research")
                      .Weight(4)
                      .Allocated({{"cpu", 4500}, {"memory", 8LL << 30}, {"nvidia.com/gpu", 8000}})
                      .Capability({{"nvidia.com/gpu", 16000}})
                      .Guarantee({{"cpu", 2000}})
                      .Reclaimable(false)
                      .Build();
  const std::map<std::string, Resources> deserved = {
      {"research", {{"cpu", 6000}, {"nvidia.com/gpu", 12000}}}};
  ExpectGolden("queue_get.txt", QueueViewText(q, SampleCounts().at("research"), deserved, kNow));
}

TEST(QueueViewTest, GetScreenWithoutMusterOrResources) {
  const std::string text =
      QueueViewText(QueueBuilder("empty").State("").Parent("").Build(), {}, std::nullopt, kNow);
  EXPECT_THAT(text, HasSubstr("State:         <none>\n"));
  EXPECT_THAT(text, HasSubstr("Reclaimable:   true\n"));
  EXPECT_THAT(text, HasSubstr("Resources:\n  <none>\n"));
  const std::string nomuster =
      QueueViewText(QueueBuilder("q").Allocated({{"cpu", 1000}}).Build(), {}, std::nullopt, kNow);
  EXPECT_THAT(nomuster, HasSubstr("cpu        1           -          unlimited    -"));
}

TEST(QueueBodyTest, Table) {
  const struct {
    QueueSpecFlags spec;
    std::string want;
  } cases[] = {
      {{.name = "q"},
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},)"
       R"("spec":{"weight":1,"reclaimable":true}})"},
      {{.name = "q",
        .weight = 3,
        .parent = "research",
        .capability = std::map<std::string, std::string>{{"cpu", "8"}, {"nvidia.com/gpu", "16"}},
        .reclaimable = false},
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},)"
       R"("spec":{"weight":3,"reclaimable":false,"parent":"research","capability":)"
       R"({"cpu":"8","nvidia.com/gpu":"16"}}})"},
  };
  for (const auto& c : cases) EXPECT_EQ(QueueBody(c.spec), c.want);
}

TEST(QueueTargetTest, Owner) {
  const OwnerReference ref = QueueTarget(QueueBuilder("research").Build());
  EXPECT_EQ(ref.api_version, "scheduling.volcano.sh/v1beta1");
  EXPECT_EQ(ref.kind, "Queue");
  EXPECT_EQ(ref.uid, "uid-research");
  EXPECT_TRUE(ref.controller);
}

TEST(CheckQueueDeletableTest, DefaultAndRootRefused) {
  EXPECT_EQ(CheckQueueDeletable("default").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckQueueDeletable("root").code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(CheckQueueDeletable("root").message(), HasSubstr("`root` queue can not be deleted"));
  EXPECT_TRUE(CheckQueueDeletable("research").ok());
}

TEST(RunQueueTest, AnswersWithoutCluster) {
  const std::string none = "--kubeconfig=/nonexistent/kubeconfig";
  const struct {
    std::vector<std::string> args;
    int code;
    std::string out, err;
  } cases[] = {
      {{}, kExitUsage, "", "usage: muster queue <verb>"},
      {{"-h"}, kExitOk, "close", ""},
      {{"operate"}, kExitUsage, "", "unknown verb \"operate\""},
      {{"create", "--help"}, kExitOk, "--reclaimable", ""},
      {{"list", "--help"}, kExitOk, "--muster-url", ""},
      {{"get"}, kExitUsage, "", "a queue NAME is required"},
      {{"get", "q", "-o", "wide"}, kExitUsage, "", "not wide"},
      {{"create", "q", "-w", "0"}, kExitUsage, "", "flag --weight: \"0\" is not a positive"},
      {{"create", "q", "--state", "Closing"}, kExitUsage, "", "flag --state: \"Closing\""},
      {{"create", "q", "--capability", "gpu"}, kExitUsage, "", "flag --capability"},
      {{"create", "q", "--reclaimable=maybe"}, kExitUsage, "", "flag --reclaimable takes no value"},
      {{"delete", "default"}, kExitFailure, "", "`default` queue can not be deleted"},
      {{"delete", "root", none}, kExitFailure, "", "`root` queue can not be deleted"},
      {{"list", none}, kExitNoCluster, "", "no cluster"},
      {{"close", "q", none}, kExitNoCluster, "", "no cluster"},
  };
  FakeClock clock(kNow);
  for (const auto& c : cases) {
    std::ostringstream out, err;
    Io io{out, err, clock};
    const std::string shown = ::testing::PrintToString(c.args);
    EXPECT_EQ(RunQueue(c.args, io), c.code) << shown << "\nerr: " << err.str();
    EXPECT_THAT(out.str(), HasSubstr(c.out)) << shown;
    EXPECT_THAT(err.str(), HasSubstr(c.err)) << shown;
  }
}

}  // namespace
}  // namespace muster::cli
