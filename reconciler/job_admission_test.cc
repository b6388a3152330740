#include "reconciler/job_admission.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/volcano_codec.h"
#include "reconciler/testing/job_fixtures.h"

namespace muster::reconciler {
namespace {

using fixtures::DecodeJobAsWritten;
using fixtures::JobJson;

std::string ReadTestdata(std::string_view file) {
  std::ifstream in(std::string(MUSTER_TESTDATA_DIR) + "/" + std::string(file));
  EXPECT_TRUE(in.good()) << file;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr std::string_view kExamples[] = {"admission_ctr.json", "admission_mpi.json",
                                          "admission_pytorch.json", "admission_tensorflow.json"};

// ---------------------------------------------------------------------------
// DNS-1123 names.

TEST(JobAdmissionTest, Dns1123Names) {
  struct Case {
    std::string name;
    bool label;
    bool subdomain;
  };
  const std::vector<Case> cases = {
      {"a", true, true},
      {"worker-0", true, true},
      {"0abc", true, true},
      {"", false, false},
      {"-a", false, false},
      {"a-", false, false},
      {"A", false, false},
      {"a_b", false, false},
      {"a.b", false, true},
      {"a..b", false, false},
      {".a", false, false},
      {"a.", false, false},
      {"a.-b", false, false},
      {std::string(63, 'a'), true, true},
      {std::string(64, 'a'), false, true},
      {std::string(253, 'a'), false, true},
      {std::string(254, 'a'), false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("name \"" + c.name + "\"");
    EXPECT_EQ(IsDns1123Label(c.name), c.label);
    EXPECT_EQ(IsDns1123Subdomain(c.name), c.subdomain);
  }
}

// ---------------------------------------------------------------------------
// Defaults.

// WithDefaults: the spec as written, and as defaulted.
struct DefaultsCase {
  std::string_view desc;
  std::string_view spec;
  std::string_view want;
};
constexpr DefaultsCase kDefaultsCases[] = {
    {"everything unset", R"({"tasks":[{"replicas":2},{"replicas":3}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":5,
           "tasks":[{"name":"default0","replicas":2,"minAvailable":2,"maxRetry":3},
                    {"name":"default1","replicas":3,"minAvailable":3,"maxRetry":3}]})"},
    {"user values kept",
     R"({"queue":"q","schedulerName":"other","maxRetry":1,"minAvailable":1,
           "tasks":[{"name":"w","replicas":3,"minAvailable":1,"maxRetry":5}]})",
     R"({"queue":"q","schedulerName":"other","maxRetry":1,"minAvailable":1,
           "tasks":[{"name":"w","replicas":3,"minAvailable":1,"maxRetry":5}]})"},
    {"job minAvailable sums task minAvailable, not replicas",
     R"({"tasks":[{"name":"a","replicas":4,"minAvailable":1},{"name":"b","replicas":2}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":3,
           "tasks":[{"name":"a","replicas":4,"minAvailable":1,"maxRetry":3},
                    {"name":"b","replicas":2,"minAvailable":2,"maxRetry":3}]})"},
    {"task maxRetry 0 becomes 3, -1 (unlimited) stays",
     R"({"tasks":[{"name":"a","replicas":1,"maxRetry":0},{"name":"b","replicas":1,"maxRetry":-1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":2,
           "tasks":[{"name":"a","replicas":1,"minAvailable":1,"maxRetry":3},
                    {"name":"b","replicas":1,"minAvailable":1,"maxRetry":-1}]})"},
    {"explicit task minAvailable 0 sums to job minAvailable 0",
     R"({"tasks":[{"name":"a","replicas":2,"minAvailable":0}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":0,
           "tasks":[{"name":"a","replicas":2,"minAvailable":0,"maxRetry":3}]})"},
    {"mpi brings svc and ssh; user svc args kept",
     R"({"plugins":{"mpi":["--port=2222"],"svc":["--disable-network-policy"]},
           "tasks":[{"name":"master","replicas":1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":1,
           "plugins":{"mpi":["--port=2222"],"ssh":[],"svc":["--disable-network-policy"]},
           "tasks":[{"name":"master","replicas":1,"minAvailable":1,"maxRetry":3}]})"},
    {"pytorch brings svc", R"({"plugins":{"pytorch":[]},"tasks":[{"name":"master","replicas":1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":1,
           "plugins":{"pytorch":[],"svc":[]},
           "tasks":[{"name":"master","replicas":1,"minAvailable":1,"maxRetry":3}]})"},
    {"tensorflow brings svc, env brings nothing",
     R"({"plugins":{"env":[],"tensorflow":[]},"tasks":[{"name":"ps","replicas":1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":1,
           "plugins":{"env":[],"svc":[],"tensorflow":[]},
           "tasks":[{"name":"ps","replicas":1,"minAvailable":1,"maxRetry":3}]})"},
    {"ray brings svc (Volcano's webhook: mutate_job.go)",
     R"({"plugins":{"ray":[]},"tasks":[{"name":"head","replicas":1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":1,
           "plugins":{"ray":[],"svc":[]},
           "tasks":[{"name":"head","replicas":1,"minAvailable":1,"maxRetry":3}]})"},
    {"networkTopology mode defaults to hard",
     R"({"networkTopology":{"highestTierAllowed":1},"tasks":[{"name":"a","replicas":1}]})",
     R"({"queue":"default","schedulerName":"volcano","maxRetry":3,"minAvailable":1,
           "networkTopology":{"mode":"hard","highestTierAllowed":1},
           "tasks":[{"name":"a","replicas":1,"minAvailable":1,"maxRetry":3}]})"},
};

TEST(JobAdmissionTest, WithDefaults) {
  for (const DefaultsCase& c : kDefaultsCases) {
    SCOPED_TRACE(c.desc);
    const Job got = WithDefaults(DecodeJobAsWritten(JobJson("j", c.spec)));
    EXPECT_EQ(kube::EncodeJob(got), kube::EncodeJob(DecodeJobAsWritten(JobJson("j", c.want))));
  }
}

TEST(JobAdmissionTest, WithDefaultsUsesTheGivenSchedulerName) {
  const Job job = DecodeJobAsWritten(JobJson("j", R"({"tasks":[{"name":"a","replicas":1}]})"));
  EXPECT_EQ(WithDefaults(job, "muster").spec.scheduler_name, "muster");
  EXPECT_EQ(WithDefaults(job).spec.scheduler_name, "volcano");
}

TEST(JobAdmissionTest, WithDefaultsIsIdempotent) {
  for (std::string_view file : kExamples) {
    SCOPED_TRACE(file);
    const Job once = WithDefaults(DecodeJobAsWritten(ReadTestdata(file)));
    EXPECT_EQ(kube::EncodeJob(WithDefaults(once)), kube::EncodeJob(once));
  }
}

TEST(JobAdmissionTest, WithDefaultsOnTheMpiExample) {
  const Job job = WithDefaults(DecodeJobAsWritten(ReadTestdata("admission_mpi.json")));
  EXPECT_EQ(job.spec.plugins.size(), 3u);
  EXPECT_TRUE(job.spec.plugins.contains("ssh"));
  EXPECT_TRUE(job.spec.plugins.contains("svc"));
  EXPECT_EQ(job.spec.min_available, 3);  // as written
  EXPECT_EQ(job.spec.tasks[1].min_available, 2);
}

// ---------------------------------------------------------------------------
// Validation.

TEST(JobAdmissionTest, VolcanoExamplesPass) {
  for (std::string_view file : kExamples) {
    SCOPED_TRACE(file);
    EXPECT_EQ(ValidateJob(WithDefaults(DecodeJobAsWritten(ReadTestdata(file)))), Status::Ok());
  }
}

TEST(JobAdmissionTest, EveryKnownEventAndActionPasses) {
  for (std::string_view event : kKnownEvents) {
    for (std::string_view action : kKnownActions) {
      const std::string spec = R"({"policies":[{"event":")" + std::string(event) +
                               R"(","action":")" + std::string(action) +
                               R"("}],"tasks":[{"name":"a","replicas":1}]})";
      SCOPED_TRACE(spec);
      EXPECT_EQ(ValidateJob(WithDefaults(DecodeJobAsWritten(JobJson("j", spec)))), Status::Ok());
    }
  }
}

TEST(JobAdmissionTest, EverySupportedPluginPasses) {
  for (std::string_view plugin : kSupportedPlugins) {
    // mpi's default master task and ray's default head task both exist.
    const std::string spec =
        R"({"plugins":{")" + std::string(plugin) +
        R"(":[]},"tasks":[{"name":"master","replicas":1},{"name":"head","replicas":1}]})";
    SCOPED_TRACE(spec);
    EXPECT_EQ(ValidateJob(WithDefaults(DecodeJobAsWritten(JobJson("j", spec)))), Status::Ok());
  }
}

struct ValidateCase {
  std::string desc;
  std::string name;  // metadata.name
  std::string spec;
  std::string want;  // "" = valid, else the start of the error message
};

void RunValidateCases(const std::vector<ValidateCase>& cases) {
  for (const ValidateCase& c : cases) {
    SCOPED_TRACE(c.desc);
    const Status status = ValidateJob(WithDefaults(DecodeJobAsWritten(JobJson(c.name, c.spec))));
    if (c.want.empty()) {
      EXPECT_EQ(status, Status::Ok());
      continue;
    }
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(status.message().substr(0, c.want.size()), c.want);
  }
}

constexpr std::string_view kOneTask = R"("tasks":[{"name":"a","replicas":2}])";

std::string WithOneTask(std::string_view fields) {
  return "{" + std::string(fields) + (fields.empty() ? "" : ",") + std::string(kOneTask) + "}";
}

TEST(JobAdmissionTest, MetadataAndSpecScalars) {
  const std::string long_scheduler(64, 's');
  RunValidateCases({
      {"bad job name", "My_Job", WithOneTask(""),
       R"(metadata.name: "My_Job" is not a DNS-1123 label (lowercase letters)"},
      {"empty job name", "", WithOneTask(""), R"(metadata.name: "" is not a DNS-1123 label)"},
      {"63-char job name leaves no room for pods", std::string(63, 'j'),
       R"({"tasks":[{"name":"a","replicas":1}]})", "spec.tasks[0].name: pod name "},
      {"59-char job name, pod j-a-0 is 63", std::string(59, 'j'),
       R"({"tasks":[{"name":"a","replicas":1}]})", ""},
      {"64-char job name", std::string(64, 'j'), WithOneTask(""), "metadata.name: "},
      {"minAvailable < 0", "j", WithOneTask(R"("minAvailable":-1)"),
       "spec.minAvailable: -1 must be >= 0"},
      {"maxRetry < 0", "j", WithOneTask(R"("maxRetry":-1)"), "spec.maxRetry: -1 must be >= 0"},
      {"ttl < 0", "j", WithOneTask(R"("ttlSecondsAfterFinished":-5)"),
       "spec.ttlSecondsAfterFinished: -5 must be >= 0"},
      {"ttl 0", "j", WithOneTask(R"("ttlSecondsAfterFinished":0)"), ""},
      {"minSuccess 0", "j", WithOneTask(R"("minSuccess":0)"),
       "spec.minSuccess: 0 must be >= 1 when set"},
      {"minSuccess 1", "j", WithOneTask(R"("minSuccess":1)"), ""},
      {"queue not a subdomain", "j", WithOneTask(R"("queue":"Team_A")"),
       R"(spec.queue: "Team_A" is not a DNS-1123 subdomain)"},
      {"queue with dots", "j", WithOneTask(R"("queue":"team.a")"), ""},
      {"queue root", "j", WithOneTask(R"("queue":"root")"), R"(spec.queue: "root" is the root)"},
      {"schedulerName too long", "j", WithOneTask(R"("schedulerName":")" + long_scheduler + "\""),
       "spec.schedulerName: longer than 63"},
      {"networkTopology bad mode", "j", WithOneTask(R"("networkTopology":{"mode":"strict"})"),
       R"(spec.networkTopology.mode: "strict" is not one of hard, soft)"},
      {"networkTopology soft", "j", WithOneTask(R"("networkTopology":{"mode":"soft"})"), ""},
      {"networkTopology tier < 0", "j",
       WithOneTask(R"("networkTopology":{"highestTierAllowed":-1})"),
       "spec.networkTopology.highestTierAllowed: -1 must be >= 0"},
      {"networkTopology tier fields exclusive", "j",
       WithOneTask(R"("networkTopology":{"highestTierAllowed":1,"highestTierName":"rack"})"),
       "spec.networkTopology: set highestTierAllowed or highestTierName, not both"},
      {"networkTopology tier name only", "j",
       WithOneTask(R"("networkTopology":{"highestTierName":"rack"})"), ""},
      {"metadata checked before spec", "Bad", WithOneTask(R"("minAvailable":-1)"),
       "metadata.name: "},
  });
}

TEST(JobAdmissionTest, Tasks) {
  const std::string job40(40, 'j');
  const std::string task20(20, 't');
  RunValidateCases({
      {"no tasks", "j", R"({"tasks":[]})", "spec.tasks: at least one task is required"},
      {"tasks absent", "j", R"({})", "spec.tasks: at least one task is required"},
      {"unnamed tasks get default<i>", "j", R"({"tasks":[{"replicas":1},{"replicas":1}]})", ""},
      {"task name not a label", "j", R"({"tasks":[{"name":"Worker","replicas":1}]})",
       R"(spec.tasks[0].name: "Worker" is not a DNS-1123 label)"},
      {"duplicate task name", "j",
       R"({"tasks":[{"name":"worker","replicas":1},{"name":"worker","replicas":1}]})",
       R"(spec.tasks[1].name: duplicate task name "worker" (task names must be unique))"},
      {"replicas < 0", "j", R"({"tasks":[{"name":"a","replicas":-1}]})",
       "spec.tasks[0].replicas: -1 must be >= 0"},
      {"task minAvailable < 0", "j", R"({"tasks":[{"name":"a","replicas":1,"minAvailable":-1}]})",
       "spec.tasks[0].minAvailable: -1 must be >= 0"},
      {"task minAvailable > replicas", "j",
       R"({"tasks":[{"name":"a","replicas":2,"minAvailable":3}]})",
       "spec.tasks[0].minAvailable: 3 is more than the 2 replicas of the task"},
      {"task minAvailable == replicas", "j",
       R"({"tasks":[{"name":"a","replicas":2,"minAvailable":2}]})", ""},
      {"task maxRetry -1 is unlimited", "j",
       R"({"tasks":[{"name":"a","replicas":1,"maxRetry":-1}]})", ""},
      {"task maxRetry < -1", "j", R"({"tasks":[{"name":"a","replicas":1,"maxRetry":-2}]})",
       "spec.tasks[0].maxRetry: -2 must be >= -1 (-1 means unlimited)"},
      {"longest pod name is 63", job40, R"({"tasks":[{"name":")" + task20 + R"(","replicas":10}]})",
       ""},
      {"longest pod name is 64", job40, R"({"tasks":[{"name":")" + task20 + R"(","replicas":11}]})",
       R"(spec.tasks[0].name: pod name ")" + job40 + "-" + task20 + R"(-10" is 64 characters)"},
      {"job minAvailable > all replicas", "j",
       R"({"minAvailable":5,"tasks":[{"name":"a","replicas":1},{"name":"b","replicas":3}]})",
       "spec.minAvailable: 5 is more than the 4 replicas of all tasks"},
      {"job minAvailable == all replicas", "j",
       R"({"minAvailable":4,"tasks":[{"name":"a","replicas":1},{"name":"b","replicas":3}]})", ""},
      {"tasks checked in order", "j",
       R"({"tasks":[{"name":"a","replicas":1,"policies":[{"event":"Nope","action":"AbortJob"}]},
                    {"name":"B","replicas":1}]})",
       "spec.tasks[0].policies[0].event: "},
  });
}

TEST(JobAdmissionTest, TopologyPolicy) {
  auto task = [](std::string_view policy, std::string_view resources,
                 std::string_view init_resources = "") {
    std::string containers =
        R"("containers":[{"name":"c","image":"i","resources":)" + std::string(resources) + "}]";
    if (!init_resources.empty()) {
      containers += R"(,"initContainers":[{"name":"i","image":"i","resources":)" +
                    std::string(init_resources) + "}]";
    }
    return R"({"tasks":[{"name":"a","replicas":1,"topologyPolicy":")" + std::string(policy) +
           R"(","template":{"spec":{)" + containers + "}}}]}";
  };
  constexpr std::string_view kCpuPath = "spec.tasks[0].template.spec.containers[0].resources.";
  RunValidateCases({
      {"unknown policy", "j", task("numa", R"({})"),
       R"(spec.tasks[0].topologyPolicy: "numa" is not one of none, best-effort, restricted, )"
       R"(single-numa-node)"},
      {"none allows fractional cpu", "j", task("none", R"({"requests":{"cpu":"1500m"}})"), ""},
      {"restricted with fractional cpu", "j", task("restricted", R"({"requests":{"cpu":"1500m"}})"),
       std::string(kCpuPath) +
           R"(requests.cpu: topologyPolicy "restricted" needs a whole, non-zero number of CPUs)"},
      {"single-numa-node without cpu", "j", task("single-numa-node", R"({})"),
       std::string(kCpuPath) + "requests.cpu: "},
      {"best-effort with whole cpus", "j", task("best-effort", R"({"requests":{"cpu":"2"}})"), ""},
      {"limits count when there are no requests", "j",
       task("restricted", R"({"limits":{"cpu":"2","memory":"1Gi"}})"), ""},
      {"init containers too", "j",
       task("restricted", R"({"requests":{"cpu":"2"}})", R"({"requests":{"cpu":"500m"}})"),
       "spec.tasks[0].template.spec.initContainers[0].resources.requests.cpu: "},
  });
}

// Quota names ("limits.nvidia.com/gpu") in a container: the API server would
// take them for extended resources of their own, in whole units.
TEST(JobAdmissionTest, ContainerResourcesAreNotQuotaNames) {
  auto task = [](std::string_view list, std::string_view resources) {
    return R"({"tasks":[{"name":"a","replicas":1,"template":{"spec":{")" + std::string(list) +
           R"(":[{"name":"c","image":"i","resources":)" + std::string(resources) + "}]}}}]}";
  };
  RunValidateCases({
      {"a share of a GPU", "j", task("containers", R"({"limits":{"nvidia.com/gpu":"0.5"}})"), ""},
      {"limits.nvidia.com/gpu", "j",
       task("containers", R"({"limits":{"limits.nvidia.com/gpu":"0.5","cpu":"1"}})"),
       R"(spec.tasks[0].template.spec.containers[0].resources.limits[limits.nvidia.com/gpu]: )"
       R"("limits.nvidia.com/gpu" names a quota, not a container's resource: ask "nvidia.com/gpu")"},
      {"requests.cpu in an init container", "j",
       task("initContainers", R"({"requests":{"requests.cpu":"1"}})"),
       R"(spec.tasks[0].template.spec.initContainers[0].resources.requests[requests.cpu]: )"},
      {"a domain that merely contains limits", "j",
       task("containers", R"({"limits":{"example.com/limits.x":"1"}})"), ""},
  });
}

// A job with one task and the job policies `policies` (a JSON array).
std::string JobPolicies(std::string_view policies) {
  return WithOneTask(R"("policies":)" + std::string(policies));
}

TEST(JobAdmissionTest, PolicyEventsAndExitCodes) {
  RunValidateCases({
      {"event and exitCode", "j",
       JobPolicies(R"([{"event":"PodFailed","exitCode":1,"action":"RestartJob"}])"),
       "spec.policies[0]: set event/events or exitCode, not both"},
      {"events and exitCode", "j",
       JobPolicies(R"([{"events":["PodFailed"],"exitCode":1,"action":"RestartJob"}])"),
       "spec.policies[0]: set event/events or exitCode, not both"},
      {"neither event nor exitCode", "j", JobPolicies(R"([{"action":"RestartJob"}])"),
       "spec.policies[0]: one of event, events or exitCode is required"},
      {"exitCode 0", "j", JobPolicies(R"([{"exitCode":0,"action":"RestartJob"}])"),
       "spec.policies[0].exitCode: 0 is not a failure (exitCode must be non-zero)"},
      {"exitCode policy", "j", JobPolicies(R"([{"exitCode":137,"action":"RestartPod"}])"), ""},
      {"duplicate exitCode", "j",
       JobPolicies(
           R"([{"exitCode":137,"action":"RestartPod"},{"exitCode":137,"action":"AbortJob"}])"),
       "spec.policies[1].exitCode: duplicate exitCode 137 (already handled by "
       "spec.policies[0].exitCode)"},
      {"duplicate event across policies", "j",
       JobPolicies(
           R"([{"event":"PodFailed","action":"RestartJob"},{"event":"PodFailed","action":"AbortJob"}])"),
       R"(spec.policies[1].event: duplicate event "PodFailed" (already handled by )"
       R"(spec.policies[0].event)"},
      {"duplicate event through events", "j",
       JobPolicies(R"([{"events":["PodEvicted"],"action":"RestartJob"},
                        {"events":["PodFailed","PodEvicted"],"action":"AbortJob"}])"),
       R"(spec.policies[1].events[1]: duplicate event "PodEvicted")"},
      {"same event in event and events of one policy is merged", "j",
       JobPolicies(R"([{"event":"PodFailed","events":["PodFailed"],"action":"RestartJob"}])"), ""},
      {"several events in one policy", "j",
       JobPolicies(R"([{"events":["PodFailed","PodEvicted"],"action":"RestartJob"}])"), ""},
  });
}

TEST(JobAdmissionTest, PolicyWildcardAndUnknownEvents) {
  RunValidateCases({
      {"event after *", "j",
       JobPolicies(
           R"([{"event":"*","action":"RestartJob"},{"event":"PodFailed","action":"AbortJob"}])"),
       R"(spec.policies[1].event: event "PodFailed" conflicts with "*" at spec.policies[0].event)"},
      {"* after event", "j",
       JobPolicies(
           R"([{"event":"PodFailed","action":"RestartJob"},{"event":"*","action":"AbortJob"}])"),
       R"(spec.policies[1].event: event "*" conflicts with "PodFailed" at spec.policies[0].event)"},
      {"* with another event in one policy", "j",
       JobPolicies(R"([{"events":["*","TaskFailed"],"action":"RestartJob"}])"),
       R"(spec.policies[0].events[1]: event "TaskFailed" conflicts with "*")"},
      {"* beside an exitCode policy", "j",
       JobPolicies(R"([{"event":"*","action":"RestartJob"},{"exitCode":3,"action":"AbortJob"}])"),
       ""},
      {"unknown event", "j", JobPolicies(R"([{"event":"PodCrashed","action":"RestartJob"}])"),
       R"(spec.policies[0].event: unknown event "PodCrashed" (known: *, PodFailed, PodEvicted, )"
       R"(PodPending, Unknown, TaskCompleted, TaskFailed, JobUpdated))"},
      {"internal event", "j", JobPolicies(R"([{"event":"OutOfSync","action":"RestartJob"}])"),
       R"(spec.policies[0].event: event "OutOfSync" is internal to the job controller)"},
      {"empty event in events", "j", JobPolicies(R"([{"events":[""],"action":"RestartJob"}])"),
       R"(spec.policies[0].events[0]: unknown event "")"},
  });
}

TEST(JobAdmissionTest, PolicyActions) {
  RunValidateCases({
      {"unknown action", "j", JobPolicies(R"([{"event":"PodFailed","action":"Reboot"}])"),
       R"(spec.policies[0].action: unknown action "Reboot" (known: AbortJob, RestartJob, )"
       R"(RestartTask, RestartPod, TerminateJob, CompleteJob, ResumeJob))"},
      {"RestartPartition", "j",
       JobPolicies(R"([{"event":"PodFailed","action":"RestartPartition"}])"),
       R"(spec.policies[0].action: action "RestartPartition" is not supported by muster)"},
      {"internal action", "j", JobPolicies(R"([{"event":"PodFailed","action":"SyncJob"}])"),
       R"(spec.policies[0].action: action "SyncJob" is internal to the controllers)"},
      {"missing action", "j", JobPolicies(R"([{"event":"PodFailed"}])"),
       "spec.policies[0].action: required (known: AbortJob"},
      {"action of an exitCode policy is checked", "j",
       JobPolicies(R"([{"exitCode":1,"action":"Reboot"}])"),
       R"(spec.policies[0].action: unknown action "Reboot")"},
  });
}

TEST(JobAdmissionTest, TaskPolicies) {
  RunValidateCases({
      {"task-level policy", "j",
       R"({"tasks":[{"name":"a","replicas":1,"policies":[
           {"event":"PodFailed","action":"RestartPod"},{"event":"TaskFailed","action":"Reboot"}]}]})",
       R"(spec.tasks[0].policies[1].action: unknown action "Reboot")"},
      {"task and job lists are separate", "j",
       R"({"policies":[{"event":"PodFailed","action":"RestartJob"}],
           "tasks":[{"name":"a","replicas":1,"policies":[{"event":"PodFailed","action":"RestartPod"}]}]})",
       ""},
      {"task policies before job policies", "j",
       R"({"policies":[{"event":"Bad","action":"RestartJob"}],
           "tasks":[{"name":"a","replicas":1,"policies":[{"event":"PodFailed","action":"Bad"}]}]})",
       "spec.tasks[0].policies[0].action: "},
  });
}

TEST(JobAdmissionTest, Plugins) {
  constexpr std::string_view kMpiTasks =
      R"("tasks":[{"name":"mpimaster","replicas":1},{"name":"mpiworker","replicas":2}])";
  auto mpi = [&](std::string_view args) {
    return R"({"plugins":{"mpi":)" + std::string(args) + "}," + std::string(kMpiTasks) + "}";
  };
  RunValidateCases({
      {"unknown plugin", "j", WithOneTask(R"("plugins":{"horovod":[]})"),
       R"(spec.plugins: unknown plugin "horovod" (known: env, mpi, pytorch, ray, ssh, svc, )"
       R"(tensorflow))"},
      {"ray without its head task", "j", WithOneTask(R"("plugins":{"ray":[]})"),
       R"(spec.plugins.ray: head task "head" (--head) does not exist (tasks: a))"},
      {"ray --head names a task", "j", WithOneTask(R"("plugins":{"ray":["--head=a"]})"), ""},
      {"hcclrank", "j", WithOneTask(R"("plugins":{"hcclrank":[]})"),
       R"(spec.plugins: Volcano plugin "hcclrank" is not supported by muster)"},
      {"mpi default master missing", "j", mpi("[]"),
       R"(spec.plugins.mpi: master task "master" (--master) does not exist (tasks: mpimaster, )"
       R"(mpiworker))"},
      {"mpi --master=", "j", mpi(R"(["--master=mpimaster","--worker=mpiworker","--port=22"])"), ""},
      {"mpi -master=", "j", mpi(R"(["-master=mpimaster"])"), ""},
      {"mpi --master value", "j", mpi(R"(["--master","mpimaster"])"), ""},
      {"mpi flags end at --", "j", mpi(R"(["--","--master=mpimaster"])"),
       R"(spec.plugins.mpi: master task "master" (--master) does not exist)"},
      {"mpi master names a missing task", "j", mpi(R"(["--master=launcher"])"),
       R"(spec.plugins.mpi: master task "launcher" (--master) does not exist)"},
      {"plugins before dependsOn and volumes", "j",
       R"({"plugins":{"horovod":[]},"volumes":[{"mountPath":""}],
           "tasks":[{"name":"a","replicas":1,"dependsOn":{"name":["a"]}}]})",
       "spec.plugins: "},
  });
}

TEST(JobAdmissionTest, DependsOn) {
  RunValidateCases({
      {"unknown task", "j",
       R"({"tasks":[{"name":"a","replicas":1},{"name":"b","replicas":1,"dependsOn":{"name":["ghost"]}}]})",
       R"(spec.tasks[1].dependsOn.name[0]: no task named "ghost" (tasks: a, b))"},
      {"itself", "j", R"({"tasks":[{"name":"a","replicas":1,"dependsOn":{"name":["a"]}}]})",
       R"(spec.tasks[0].dependsOn.name[0]: task "a" cannot depend on itself)"},
      {"bad iteration", "j",
       R"({"tasks":[{"name":"a","replicas":1},
                    {"name":"b","replicas":1,"dependsOn":{"name":["a"],"iteration":"some"}}]})",
       R"(spec.tasks[1].dependsOn.iteration: "some" is not one of any, all)"},
      {"two-task cycle", "j",
       R"({"tasks":[{"name":"a","replicas":1,"dependsOn":{"name":["b"]}},
                    {"name":"b","replicas":1,"dependsOn":{"name":["a"]}}]})",
       "spec.tasks[0].dependsOn: tasks depend on each other in a cycle a -> b -> a (dependsOn "
       "must form a directed acyclic graph)"},
      {"three-task cycle", "j",
       R"({"tasks":[{"name":"a","replicas":1,"dependsOn":{"name":["b"]}},
                    {"name":"b","replicas":1,"dependsOn":{"name":["c"]}},
                    {"name":"c","replicas":1,"dependsOn":{"name":["a"]}}]})",
       "spec.tasks[0].dependsOn: tasks depend on each other in a cycle a -> b -> c -> a"},
      {"cycle reached from an acyclic task", "j",
       R"({"tasks":[{"name":"a","replicas":1,"dependsOn":{"name":["b"]}},
                    {"name":"b","replicas":1,"dependsOn":{"name":["c"]}},
                    {"name":"c","replicas":1,"dependsOn":{"name":["b"]}}]})",
       "spec.tasks[1].dependsOn: tasks depend on each other in a cycle b -> c -> b"},
      {"diamond", "j",
       R"({"tasks":[{"name":"a","replicas":1},
                    {"name":"b","replicas":1,"dependsOn":{"name":["a"]}},
                    {"name":"c","replicas":1,"dependsOn":{"name":["a"],"iteration":"all"}},
                    {"name":"d","replicas":1,"dependsOn":{"name":["b","c"],"iteration":"any"}}]})",
       ""},
  });
}

TEST(JobAdmissionTest, Volumes) {
  auto volumes = [](std::string_view list) {
    return WithOneTask(R"("volumes":)" + std::string(list));
  };
  RunValidateCases({
      {"mountPath required", "j", volumes(R"([{"volumeClaimName":"data"}])"),
       "spec.volumes[0].mountPath: required"},
      {"mountPath with ':'", "j", volumes(R"([{"mountPath":"/data:rw","volumeClaimName":"d"}])"),
       R"(spec.volumes[0].mountPath: "/data:rw" must not contain ':')"},
      {"duplicate mountPath", "j", volumes(R"([{"mountPath":"/data","volumeClaimName":"a"},
                   {"mountPath":"/data","volumeClaimName":"b"}])"),
       R"(spec.volumes[1].mountPath: duplicate mount path "/data" (already used by )"
       R"(spec.volumes[0]))"},
      {"no claim", "j", volumes(R"([{"mountPath":"/data"}])"),
       "spec.volumes[0]: set one of volumeClaimName (an existing PVC) or volumeClaim (a PVC to "
       "create)"},
      {"both claims", "j", volumes(R"([{"mountPath":"/data","volumeClaimName":"d",
                    "volumeClaim":{"accessModes":["ReadWriteOnce"]}}])"),
       "spec.volumes[0]: set volumeClaimName (an existing PVC) or volumeClaim (a PVC to create), "
       "not both"},
      {"bad claim name", "j", volumes(R"([{"mountPath":"/data","volumeClaimName":"Bad_Claim"}])"),
       R"(spec.volumes[0].volumeClaimName: "Bad_Claim" is not a DNS-1123 subdomain)"},
      {"valid volumes", "j", volumes(R"([{"mountPath":"/data","volumeClaimName":"data.pvc"},
                   {"mountPath":"/scratch","volumeClaim":{"accessModes":["ReadWriteOnce"],
                    "resources":{"requests":{"storage":"1Gi"}}}}])"),
       ""},
  });
}

TEST(JobAdmissionTest, ExamplesBrokenOneWay) {
  // Each fixture stays valid except for one edit, so a rule firing on a
  // realistic job is seen with its full message.
  Job mpi = WithDefaults(DecodeJobAsWritten(ReadTestdata("admission_mpi.json")));
  mpi.spec.plugins["mpi"] = {"--master=launcher"};
  EXPECT_EQ(ValidateJob(mpi).message(),
            R"(spec.plugins.mpi: master task "launcher" (--master) does not exist (tasks: )"
            R"(mpimaster, mpiworker))");

  Job ctr = WithDefaults(DecodeJobAsWritten(ReadTestdata("admission_ctr.json")));
  ctr.spec.min_available = 5;
  EXPECT_EQ(ValidateJob(ctr).message(),
            "spec.minAvailable: 5 is more than the 4 replicas of all tasks");

  Job tf = WithDefaults(DecodeJobAsWritten(ReadTestdata("admission_tensorflow.json")));
  tf.spec.tasks[1].name = "ps";
  EXPECT_EQ(ValidateJob(tf).message(),
            R"(spec.tasks[1].name: duplicate task name "ps" (task names must be unique))");
}

TEST(JobAdmissionTest, WithoutDefaultsAnUnnamedTaskIsInvalid) {
  const Job job = DecodeJobAsWritten(JobJson("j", R"({"queue":"q","tasks":[{"replicas":1}]})"));
  EXPECT_EQ(ValidateJob(job).message(),
            R"(spec.tasks[0].name: "" is not a DNS-1123 label (lowercase letters, digits and '-', )"
            R"(starting and ending with a letter or digit, at most 63 characters))");
}

}  // namespace
}  // namespace muster::reconciler
