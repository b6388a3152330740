// `muster why`: a table of situations (built from PodGroups, Jobs, pods,
// queues and muster's /debug/state) -> the screen, compared with a golden in
// cmd/cli/testdata/why_<name>.txt. MUSTER_UPDATE_GOLDENS=1 rewrites them.
#include "cmd/cli/why_explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/cli/cli.h"
#include "cmd/cli/why_inputs.h"
#include "model/clock.h"

namespace muster::cli {
namespace {

using ::testing::HasSubstr;

Resources Gpus(int64_t cpu_cores, int64_t gpus) {
  return Resources{{"cpu", cpu_cores * 1000}, {"nvidia.com/gpu", gpus * kMilliPerGpu}};
}

// --- builders ----------------------------------------------------------------

Job MakeJob(const std::string& name, int32_t min_available, const std::string& phase = "Pending") {
  Job job;
  job.meta.name = name;
  job.meta.namespace_ = "ml";
  job.meta.uid = "uid1";
  job.spec.scheduler_name = "volcano";
  job.spec.min_available = min_available;
  job.status.state.phase = phase;
  return job;
}

PodGroup MakeGroup(const std::string& name, int32_t min_member, const std::string& phase,
                   const std::string& reason = "", const std::string& message = "") {
  PodGroup group;
  group.meta.name = name;
  group.meta.namespace_ = "ml";
  group.spec.min_member = min_member;
  group.status.phase = phase;
  if (!reason.empty()) {
    group.status.conditions.push_back(
        {.type = "Unschedulable", .status = "True", .reason = reason, .message = message});
  }
  return group;
}

Pod MakePod(const std::string& name, const std::string& node,
            const std::string& scheduler = "volcano") {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_ = "ml";
  pod.spec.scheduler_name = scheduler;
  pod.spec.node_name = node;
  pod.status.phase = node.empty() ? "Pending" : "Running";
  return pod;
}

Queue MakeQueue(const std::string& name, int32_t weight, const std::string& state = "Open") {
  Queue q;
  q.meta.name = name;
  q.spec.weight = weight;
  q.status.state = state;
  return q;
}

// muster's view: `free_gpus` per node (8 allocatable, 32 cpu), node-1 first.
DebugState MakeState(const std::vector<int64_t>& free_gpus) {
  DebugState state;
  for (size_t i = 0; i < free_gpus.size(); ++i) {
    state.nodes.push_back({.name = "node-" + std::to_string(i + 1),
                           .allocatable = Gpus(32, 8),
                           .free = Gpus(static_cast<int64_t>(free_gpus[i]) * 4, free_gpus[i])});
  }
  return state;
}

DebugGang MakeGang(const std::string& key, const std::string& queue, int64_t position,
                   const std::string& reason = "", const std::string& message = "") {
  return {.key = key,
          .phase = "Pending",
          .min_member = 1,
          .members = 1,
          .queue = queue,
          .position = position,
          .wait_reason = reason,
          .wait_message = message};
}

// Adds other gangs so the target is `position`th (0 first) of `total`.
void Rank(DebugState& state, DebugGang target, int64_t total) {
  for (int64_t i = 0; i < total; ++i) {
    if (i == target.position) {
      state.gangs.push_back(target);
    } else {
      DebugGang other = MakeGang("other/g" + std::to_string(i), "default", i);
      other.phase = "Running";
      other.scheduled = 1;
      state.gangs.push_back(other);
    }
  }
}

// A Job of `members` x (cpu, gpus) in queue `queue`, its PodGroup and muster's view.
WhyInputs JobWaiting(int32_t members, int64_t gpus, const std::string& queue = "default") {
  WhyInputs in;
  in.ns = "ml";
  in.asked = {.kind = WhyKind::kJob, .name = "train"};
  in.job = MakeJob("train", members);
  in.job->spec.queue = queue;
  in.pod_group_name = "train-uid1";
  in.needs = {{.task = "worker", .count = members, .request = Gpus(2, gpus)}};
  in.queue_name = queue;
  in.queue = MakeQueue(queue, 1);
  return in;
}

void SetGang(WhyInputs& in, const std::string& phase, const std::string& reason,
             const std::string& message, int64_t position, int64_t total) {
  const int32_t min = in.job.has_value() ? in.job->spec.min_available : 3;
  in.pod_group = MakeGroup(in.pod_group_name, min, phase, reason, message);
  in.pod_group->spec.queue = in.queue_name;
  DebugGang gang = MakeGang("ml/" + in.pod_group_name, in.queue_name, position, reason, message);
  gang.phase = phase;
  gang.min_member = min;
  gang.members = static_cast<int32_t>(in.members.size());
  for (const Pod& p : in.members) gang.scheduled += p.spec.node_name.empty() ? 0 : 1;
  Rank(*in.muster, gang, total);
}

// --- the situations ------------------------------------------------------------

WhyInputs Resources8PerMember() {
  WhyInputs in = JobWaiting(4, 8);
  in.muster = MakeState({0, 2, 4, 1});
  SetGang(in, "Pending", "NotEnoughResources",
          "not admitted: spec.minResources needs nvidia.com/gpu=32 (7 free)", 2, 7);
  in.muster->queues.push_back({.name = "default",
                               .deserved = Gpus(128, 32),
                               .allocated = Gpus(100, 25),
                               .share = 0.78,
                               .dominant = "nvidia.com/gpu"});
  return in;
}

WhyInputs ResourcesSpread() {
  WhyInputs in = JobWaiting(4, 2);
  in.muster = MakeState({2, 2, 2, 1});
  SetGang(in, "Inqueue", "NotEnoughResources",
          "3/4 members placeable: 1 need nvidia.com/gpu=2, largest free is 1", 0, 3);
  return in;
}

WhyInputs QueueCapability() {
  WhyInputs in = JobWaiting(4, 1, "small");
  in.queue->spec.capability = Resources{{"nvidia.com/gpu", 2000}};
  in.muster = MakeState({8, 8});
  SetGang(in, "Pending", "QueueCapability",
          "not admitted: queue small is at its capability: needs nvidia.com/gpu=4 (2 left)", 1, 2);
  in.muster->gangs.push_back(MakeGang("ml/holder-uid2", "small", 0));
  in.muster->gangs.back().scheduled = 2;
  in.muster->gangs.back().phase = "Running";
  in.muster->gangs.back().position.reset();
  return in;
}

WhyInputs MembersMissing() {
  WhyInputs in;
  in.ns = "ml";
  in.asked = {.kind = WhyKind::kPodGroup, .name = "trio"};
  in.pod_group_name = "trio";
  in.members = {MakePod("trio-0", "")};
  in.needs = {{.count = 1, .request = Resources{{"cpu", 100}}}};
  in.queue_name = "default";
  in.queue = MakeQueue("default", 1);
  in.muster = MakeState({8});
  SetGang(in, "Pending", "NotEnoughTasks", "1/3 members exist", 0, 1);
  return in;
}

WhyInputs InvalidJob() {
  WhyInputs in = JobWaiting(2, 0);
  in.job->status.state = {.phase = "Failed",
                          .reason = "InvalidSpec",
                          .message =
                              "spec.plugins.mpi: --master names task \"launcher\", which the "
                              "job does not have"};
  in.needs.clear();
  in.muster = MakeState({8});
  return in;
}

WhyInputs UndecodableJob() {
  WhyInputs in = JobWaiting(2, 0);
  in.job->spec = JobSpec{};
  in.job->status.state = {.phase = "Failed", .reason = "InvalidSpec"};
  in.job_problem =
      "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantity \"1.2.3\" of "
      "cpu is invalid: it has more than one decimal point";
  in.needs.clear();
  in.muster = MakeState({8});
  return in;
}

WhyInputs Running() {
  WhyInputs in = JobWaiting(2, 1);
  in.job->status.state.phase = "Running";
  in.members = {MakePod("train-worker-0", "node-2"), MakePod("train-worker-1", "node-1")};
  in.muster = MakeState({7, 7});
  SetGang(in, "Running", "", "", 0, 1);
  return in;
}

WhyInputs OverShare() {
  WhyInputs in = JobWaiting(2, 4, "batch");
  in.queue->spec.weight = 1;
  in.muster = MakeState({8, 8});
  SetGang(in, "Inqueue", "QueueOverShare",
          "queue batch would go past its deserved share while queue research, below its own, "
          "waits for capacity",
          1, 2);
  in.muster->queues.push_back({.name = "batch",
                               .deserved = Gpus(16, 8),
                               .allocated = Gpus(24, 8),
                               .share = 1.0,
                               .dominant = "nvidia.com/gpu"});
  return in;
}

WhyInputs NeverFits() {
  WhyInputs in = JobWaiting(2, 16);
  in.muster = MakeState({8, 8});
  SetGang(in, "Inqueue", "Unplaceable",
          "2 need nvidia.com/gpu=16, largest allocatable is 8 on an empty cluster", 0, 1);
  return in;
}

WhyInputs Topology() {
  WhyInputs in = JobWaiting(4, 8);
  in.muster = MakeState({8, 8, 8, 8});
  SetGang(in, "Inqueue", "NetworkTopology",
          "its minimum must fit in one rack: none has 4 nodes with nvidia.com/gpu=8 free", 0, 1);
  return in;
}

WhyInputs QueueClosed() {
  WhyInputs in = JobWaiting(2, 1, "retired");
  in.queue->status.state = "Closed";
  in.muster = MakeState({8});
  SetGang(in, "Pending", "QueueClosed", "queue \"retired\" is not Open: it admits no new gangs", 0,
          1);
  return in;
}

WhyInputs NotMuster() {
  WhyInputs in;
  in.ns = "ml";
  in.asked = {.kind = WhyKind::kPod, .name = "web-0"};
  in.pod = MakePod("web-0", "", "default-scheduler");
  return in;
}

WhyInputs MusterUnreachable() {
  WhyInputs in = JobWaiting(4, 8);
  in.pod_group = MakeGroup("train-uid1", 4, "Pending", "NotEnoughResources",
                           "not admitted: spec.minResources needs nvidia.com/gpu=32 (7 free)");
  in.muster_problem = "no muster pod answered in muster-system (pods/proxy: forbidden)";
  return in;
}

WhyInputs NoPodGroupYet() {
  WhyInputs in = JobWaiting(2, 1);
  in.muster = MakeState({8});
  return in;
}

// A user bound to muster-cli in a namespace cannot read the cluster-scoped
// queue: the screen says so and answers the rest.
WhyInputs QueueForbidden() {
  WhyInputs in = Resources8PerMember();
  in.queue.reset();
  in.muster->queues.clear();
  in.queue_problem =
      "queues.scheduling.volcano.sh \"default\" is forbidden: User \"alice\" cannot get resource "
      "\"queues\"";
  return in;
}

// A PodGroup with no pod at all: muster plans nothing and says nothing.
WhyInputs MembersNone() {
  WhyInputs in = MembersMissing();
  in.members.clear();
  in.needs.clear();
  in.pod_group->status.conditions.clear();
  in.pod_group->status.phase = "Inqueue";
  in.muster->gangs[0].wait_reason.clear();
  in.muster->gangs[0].wait_message.clear();
  in.muster->gangs[0].members = 0;
  in.muster->gangs[0].position.reset();
  return in;
}

struct Case {
  std::string golden;
  WhyInputs (*build)();
  WhyVerdict verdict;
  std::string verdict_words;  // a phrase the first line must have
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"resources", Resources8PerMember, WhyVerdict::kResources,
       "its gang of 4 needs 8 nvidia.com/gpu per member and no node has that free"},
      {"resources_spread", ResourcesSpread, WhyVerdict::kResources, "does not fit"},
      {"queue_capability", QueueCapability, WhyVerdict::kQueueCapability, "at its capability"},
      {"members", MembersMissing, WhyVerdict::kMembers, "1 of the 3 pods"},
      {"members_none", MembersNone, WhyVerdict::kMembers, "0 of the 3 pods"},
      {"invalid", InvalidJob, WhyVerdict::kInvalid, "refused as invalid: spec.plugins.mpi"},
      {"invalid_undecodable", UndecodableJob, WhyVerdict::kInvalid, "requests.cpu"},
      {"running", Running, WhyVerdict::kRunning, "on node-1, node-2"},
      {"over_share", OverShare, WhyVerdict::kQueueOverShare, "deserved share"},
      {"never_fits", NeverFits, WhyVerdict::kNeverFits, "empty cluster"},
      {"topology", Topology, WhyVerdict::kNetworkTopology, "network domain"},
      {"queue_closed", QueueClosed, WhyVerdict::kQueueClosed, "not Open"},
      {"not_muster", NotMuster, WhyVerdict::kNotMuster, "not scheduled by muster"},
      {"unreachable", MusterUnreachable, WhyVerdict::kResources, "does not fit"},
      {"no_podgroup", NoPodGroupYet, WhyVerdict::kNoPodGroup, "does not exist yet"},
      {"queue_forbidden", QueueForbidden, WhyVerdict::kResources, "no node has that free"},
  };
  return kCases;
}

// gtest prints the case by its golden's name.
void PrintTo(const Case& c, std::ostream* os) { *os << c.golden; }

std::string GoldenPath(const std::string& name) {
  return std::string(MUSTER_TESTDATA_DIR) + "/why_" + name + ".txt";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t LineCount(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class WhyScreenTest : public ::testing::TestWithParam<Case> {};

TEST_P(WhyScreenTest, MatchesGolden) {
  const Case& c = GetParam();
  const WhyInputs in = c.build();
  EXPECT_EQ(VerdictOf(in), c.verdict);
  const std::string screen = ExplainWhy(in);
  const std::string first = screen.substr(0, screen.find('\n'));
  EXPECT_THAT(first, HasSubstr(c.verdict_words));
  EXPECT_LE(LineCount(screen), 25u) << screen;
  EXPECT_THAT(screen, HasSubstr("What would make it run:"));
  if (std::getenv("MUSTER_UPDATE_GOLDENS") != nullptr) {
    std::ofstream(GoldenPath(c.golden)) << screen;
  }
  EXPECT_EQ(screen, ReadFile(GoldenPath(c.golden)))
      << "golden " << GoldenPath(c.golden) << " (MUSTER_UPDATE_GOLDENS=1 rewrites it)";
}

INSTANTIATE_TEST_SUITE_P(Why, WhyScreenTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.golden; });

// Remedies that must be concrete, checked apart from the goldens.
TEST(WhyRemedies, NameTheConcreteAction) {
  EXPECT_THAT(ExplainWhy(QueueCapability()),
              HasSubstr("kubectl patch queue small --type merge -p "
                        "'{\"spec\":{\"capability\":{\"nvidia.com/gpu\":\"4\"}}}'"));
  EXPECT_THAT(ExplainWhy(QueueCapability()), HasSubstr("ml/holder-uid2"));
  EXPECT_THAT(ExplainWhy(Resources8PerMember()),
              HasSubstr("4 nvidia.com/gpu more must free up on one node"));
  EXPECT_THAT(ExplainWhy(Resources8PerMember()),
              HasSubstr("largest free: node-3 with 4 nvidia.com/gpu, 16 cpu"));
  EXPECT_THAT(ExplainWhy(Resources8PerMember()), HasSubstr("3rd of 7 gangs"));
  EXPECT_THAT(ExplainWhy(MembersMissing()), HasSubstr("create the missing 2 pods"));
  EXPECT_THAT(ExplainWhy(InvalidJob()), HasSubstr("fix spec.plugins.mpi in the Job"));
  EXPECT_THAT(ExplainWhy(MusterUnreachable()), HasSubstr("--muster-url"));
}

// cpu reads in cores ("15.5 cpu", not the API's "15500m").
TEST(WhyRemedies, CpuInCores) {
  WhyInputs in = Resources8PerMember();
  in.muster->nodes[2].free.Set("cpu", 15500);
  EXPECT_THAT(ExplainWhy(in), HasSubstr("largest free: node-3 with 4 nvidia.com/gpu, 15.5 cpu"));
}

// A gang on many nodes names a few: the screen stays one screen.
TEST(WhyRemedies, RunningOnManyNodesNamesAFew) {
  WhyInputs in = Running();
  for (int i = 3; i <= 6; ++i)
    in.members.push_back(MakePod("w" + std::to_string(i), "node-" + std::to_string(i)));
  EXPECT_THAT(ExplainWhy(in), HasSubstr("on node-1, node-2, node-3, node-4 and 2 other nodes"));
}

TEST(WhyTarget, ParsesKubectlSpellings) {
  const struct {
    std::string text;
    WhyKind kind;
    std::string name;
  } kCases[] = {
      {"train", WhyKind::kAny, "train"},
      {"job/train", WhyKind::kJob, "train"},
      {"vcjob/train", WhyKind::kJob, "train"},
      {"Jobs/train", WhyKind::kJob, "train"},
      {"pg/train-1", WhyKind::kPodGroup, "train-1"},
      {"podgroup/x", WhyKind::kPodGroup, "x"},
      {"pod/p-0", WhyKind::kPod, "p-0"},
  };
  for (const auto& c : kCases) {
    StatusOr<WhyTarget> t = ParseWhyTarget(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().message();
    EXPECT_EQ(t->kind, c.kind) << c.text;
    EXPECT_EQ(t->name, c.name) << c.text;
  }
  for (const std::string bad : {"deploy/x", "job/", "", "pod/a/b"}) {
    EXPECT_FALSE(ParseWhyTarget(bad).ok()) << bad;
  }
}

TEST(WhyDebugState, DecodesTheExtendersDocument) {
  const std::string json = R"({"generation":3,"nodes":[{"name":"n1","known":true,
      "allocatable":{"cpu":32000,"nvidia.com/gpu":8000},"allocated":{},
      "free":{"cpu":30000,"nvidia.com/gpu":4000},"boundPods":1,"assumedPods":0}],
      "podGroups":[],"queues":[],
      "gangs":[{"podGroup":"ml/a","phase":"Inqueue","minMember":4,"members":4,"scheduled":0,
      "reserved":0,"priority":0,"queue":"q","position":2,"waitReason":"NotEnoughResources",
      "waitMessage":"m"}],
      "fairShare":{"queues":[{"name":"q","deserved":{"nvidia.com/gpu":"16"},
      "allocated":{"cpu":"500m"},"demand":{},"share":0.5,"dominant":"nvidia.com/gpu"}],
      "problems":[]},"undecodable":[]})";
  StatusOr<DebugState> state = DecodeDebugState(json);
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_EQ(state->nodes.size(), 1u);
  EXPECT_EQ(state->nodes[0].free.Get("nvidia.com/gpu"), 4000);
  ASSERT_EQ(state->gangs.size(), 1u);
  EXPECT_EQ(state->gangs[0].position, 2);
  EXPECT_EQ(state->gangs[0].wait_reason, "NotEnoughResources");
  ASSERT_EQ(state->queues.size(), 1u);
  EXPECT_EQ(state->queues[0].deserved.Get("nvidia.com/gpu"), 16000);
  EXPECT_EQ(state->queues[0].allocated.Get("cpu"), 500);
  EXPECT_DOUBLE_EQ(state->queues[0].share, 0.5);
  EXPECT_FALSE(DecodeDebugState(R"({"nodes":{}})").ok());
  EXPECT_FALSE(DecodeDebugState("not json").ok());
}

TEST(WhyNeeds, FromTemplatesUntilPodsExist) {
  Job job = MakeJob("train", 2);
  job.spec.tasks.push_back({.name = "worker",
                            .replicas = 2,
                            .template_json =
                                R"({"spec":{"containers":[{"name":"m","resources":{"requests":)"
                                R"({"cpu":"1","nvidia.com/gpu":"2"}}}]}})"});
  std::vector<MemberNeed> needs = MemberNeedsOf(job, {});
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].task, "worker");
  EXPECT_EQ(needs[0].count, 2);
  EXPECT_EQ(needs[0].request.Get("nvidia.com/gpu"), 2000);
  Pod a = MakePod("a", "");
  a.spec.containers.push_back({.name = "m"});
  a.spec.containers[0].resources.requests = Resources{{"cpu", 500}};
  a.meta.labels["volcano.sh/task-spec"] = "ps";
  needs = MemberNeedsOf(job, {a, a});
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].task, "ps");
  EXPECT_EQ(needs[0].count, 2);
}

TEST(WhyOrdinal, EnglishSuffixes) {
  const std::pair<int64_t, std::string> kCases[] = {{1, "1st"},   {2, "2nd"},   {3, "3rd"},
                                                    {4, "4th"},   {11, "11th"}, {12, "12th"},
                                                    {13, "13th"}, {21, "21st"}, {102, "102nd"}};
  for (const auto& [n, want] : kCases) EXPECT_EQ(Ordinal(n), want);
}

// Exit codes that need no cluster: --help, and wrong arguments.
TEST(WhyCommand, HelpAndUsage) {
  const struct {
    std::vector<std::string> args;
    int code;
    std::string out_has;
    std::string err_has;
  } kCases[] = {
      {{"--help"}, kExitOk, "usage: muster why", ""},
      {{}, kExitUsage, "", "name what to explain"},
      {{"a", "b"}, kExitUsage, "", "one thing at a time"},
      {{"deploy/x"}, kExitUsage, "", "unknown kind"},
      {{"--frob", "x"}, kExitUsage, "", "--frob"},
  };
  for (const auto& c : kCases) {
    std::ostringstream out;
    std::ostringstream err;
    FakeClock clock;
    Io io{out, err, clock};
    EXPECT_EQ(RunWhy(c.args, io), c.code) << err.str();
    EXPECT_THAT(out.str(), HasSubstr(c.out_has));
    EXPECT_THAT(err.str(), HasSubstr(c.err_has));
  }
}

}  // namespace
}  // namespace muster::cli
