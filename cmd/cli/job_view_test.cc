#include "cmd/cli/job_view.h"

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

class JobBuilder {
 public:
  explicit JobBuilder(std::string name, std::string ns = "ml") {
    job_.meta.name = std::move(name);
    job_.meta.namespace_ = std::move(ns);
    job_.meta.uid = "uid-" + job_.meta.name;
    job_.meta.creation_timestamp = kNow - std::chrono::hours(30);
    job_.spec.min_available = 1;
  }
  JobBuilder& Created(Duration ago) {
    job_.meta.creation_timestamp = kNow - ago;
    return *this;
  }
  JobBuilder& Queue(std::string q) {
    job_.spec.queue = std::move(q);
    return *this;
  }
  JobBuilder& Type(std::string t) {
    job_.meta.labels[std::string(kJobTypeLabel)] = std::move(t);
    return *this;
  }
  JobBuilder& Phase(std::string phase, std::string reason = "", std::string message = "") {
    job_.status.state = {
        .phase = std::move(phase), .reason = std::move(reason), .message = std::move(message)};
    return *this;
  }
  JobBuilder& Min(int32_t min) {
    job_.spec.min_available = min;
    return *this;
  }
  JobBuilder& Task(std::string name, int32_t replicas, std::string image, Resources requests) {
    TaskSpec t;
    t.name = std::move(name);
    t.replicas = replicas;
    Container c;
    c.name = "main";
    c.image = std::move(image);
    c.resources.requests = std::move(requests);
    t.template_pod.spec.containers.push_back(std::move(c));
    job_.spec.tasks.push_back(std::move(t));
    return *this;
  }
  JobBuilder& Counts(int32_t pending, int32_t running, int32_t succeeded, int32_t failed,
                     int32_t unknown = 0) {
    job_.status.pending = pending;
    job_.status.running = running;
    job_.status.succeeded = succeeded;
    job_.status.failed = failed;
    job_.status.unknown = unknown;
    return *this;
  }
  JobBuilder& Retries(int32_t n) {
    job_.status.retry_count = n;
    return *this;
  }
  JobBuilder& Condition(std::string phase, Duration ago) {
    job_.status.conditions.push_back(
        {.status = std::move(phase), .last_transition_time = kNow - ago});
    return *this;
  }
  Job Build() const { return job_; }

 private:
  Job job_;
};

const Resources kSmall{{"cpu", 1000}, {"memory", 100 * 1024 * 1024}};
const Resources kGpu{{"cpu", 500}, {"nvidia.com/gpu", 1000}};

std::vector<Job> SampleJobs() {
  return {
      JobBuilder("train")
          .Queue("research")
          .Type("PyTorch")
          .Min(4)
          .Task("master", 1, "pytorch:2", kGpu)
          .Task("worker", 3, "pytorch:2", kGpu)
          .Phase("Running")
          .Counts(0, 4, 0, 0)
          .Build(),
      JobBuilder("sleeper")
          .Created(std::chrono::minutes(5))
          .Task("main", 2, "busybox", kSmall)
          .Phase("Aborted")
          .Retries(1)
          .Build(),
      JobBuilder("fresh", "dev")
          .Created(std::chrono::seconds(42))
          .Task("t", 1, "busybox", kSmall)
          .Build(),
  };
}

TEST(JobTableTest, VcctlColumns) {
  ExpectGolden("job_list.txt", JobTable(SampleJobs(), {}, kNow).Render());
}

TEST(JobTableTest, AllNamespacesWide) {
  ExpectGolden("job_list_all_wide.txt",
               JobTable(SampleJobs(), {.all_namespaces = true, .wide = true}, kNow).Render());
}

TEST(JobTableTest, HeadersPerLayout) {
  const struct {
    JobListLayout layout;
    std::string first, last;
  } cases[] = {
      {{}, "NAME", "RETRYCOUNT"},
      {{.all_namespaces = true}, "NAMESPACE", "RETRYCOUNT"},
      {{.wide = true}, "NAME", "AGE"},
      {{.all_namespaces = true, .wide = true}, "NAMESPACE", "AGE"},
  };
  for (const auto& c : cases) {
    const std::string header = JobTable({}, c.layout, kNow).Render();
    EXPECT_EQ(header.substr(0, c.first.size()), c.first) << header;
    EXPECT_EQ(header.substr(header.size() - c.last.size() - 1), c.last + "\n") << header;
  }
}

TEST(JobsInQueueTest, FiltersByQueueWithDefault) {
  const struct {
    std::string queue;
    std::vector<std::string> names;
  } cases[] = {
      {"", {"train", "sleeper", "fresh"}},
      {"research", {"train"}},
      {"default", {"sleeper", "fresh"}},
      {"nope", {}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> names;
    for (const Job& j : JobsInQueue(SampleJobs(), c.queue)) names.push_back(j.meta.name);
    EXPECT_EQ(names, c.names) << "queue " << c.queue;
  }
}

Event MakeEvent(std::string type, std::string reason, std::string message, Duration ago) {
  Event e;
  e.type = std::move(type);
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.source_component = "vc-controller-manager";
  e.last_timestamp = kNow - ago;
  return e;
}

TEST(JobViewTest, DescribeScreen) {
  const Job job = JobBuilder("train")
                      .Queue("research")
                      .Type("PyTorch")
                      .Min(4)
                      .Task("master", 1, "pytorch:2", kGpu)
                      .Task("worker", 3, "pytorch:2", kGpu)
                      .Phase("Running", "Restarted", "pod worker-1 failed")
                      .Counts(0, 4, 0, 0)
                      .Retries(1)
                      .Condition("Pending", std::chrono::hours(30))
                      .Condition("Running", std::chrono::hours(29))
                      .Build();
  std::vector<Event> events;
  // Twelve events, newest first: the screen shows the last ten, oldest first.
  for (int i = 0; i < 12; ++i) {
    const std::string n = std::to_string(i);
    events.push_back(MakeEvent("Normal", "Event" + n, "message " + n, std::chrono::minutes(i)));
  }
  events.push_back(MakeEvent("Warning", "CommandIssued", "Start to execute command AbortJob",
                             std::chrono::seconds(30)));
  ExpectGolden("job_view.txt", JobViewText(job, events, kNow));
}

TEST(JobViewTest, NoTasksNoEvents) {
  const std::string text = JobViewText(JobBuilder("empty").Build(), {}, kNow);
  EXPECT_THAT(text, HasSubstr("Tasks:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Events:\n  <none>\n"));
  EXPECT_THAT(text, HasSubstr("Phase:          Pending\n"));
}

TEST(CommandBodyTest, AsVcctlWritesIt) {
  const Job job = JobBuilder("train").Build();
  EXPECT_EQ(CommandBody("ml", JobTarget(job), kAbortJob),
            R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command","metadata":)"
            R"({"generateName":"train-abortjob-","namespace":"ml","ownerReferences":[)"
            R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train",)"
            R"("uid":"uid-train","controller":true,"blockOwnerDeletion":true}]},)"
            R"("action":"AbortJob","target":{"apiVersion":"batch.volcano.sh/v1alpha1",)"
            R"("kind":"Job","name":"train","uid":"uid-train","controller":true,)"
            R"("blockOwnerDeletion":true}})");
}

TEST(ParseResourceListTest, Table) {
  using List = std::map<std::string, std::string>;
  const struct {
    std::string text;
    List want;
    std::string error;  // "" when valid
  } cases[] = {
      {"", {}, ""},
      {"cpu=1000m,memory=100Mi", {{"cpu", "1000m"}, {"memory", "100Mi"}}, ""},
      {"nvidia.com/gpu=2", {{"nvidia.com/gpu", "2"}}, ""},
      {"cpu", {}, "flag --requests: \"cpu\" is not NAME=QUANTITY"},
      {"cpu=", {}, "is not NAME=QUANTITY"},
      {"=1", {}, "is not NAME=QUANTITY"},
      {"cpu=1,", {}, "\"\" is not NAME=QUANTITY"},
      {"cpu=lots", {}, "flag --requests: "},
  };
  for (const auto& c : cases) {
    StatusOr<List> got = ParseResourceList("--requests", c.text);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
      EXPECT_EQ(*got, c.want) << c.text;
    } else {
      ASSERT_FALSE(got.ok()) << c.text;
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(got.status().message(), HasSubstr(c.error)) << c.text;
    }
  }
}

TEST(RunJobBodyTest, VcctlShape) {
  RunSpec spec;
  spec.name = "hello";
  spec.ns = "ml";
  spec.replicas = 2;
  spec.min_available = 2;
  spec.requests = {{"cpu", "100m"}};
  EXPECT_EQ(RunJobBody(spec),
            R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":)"
            R"({"name":"hello","namespace":"ml"},"spec":{"minAvailable":2,)"
            R"("schedulerName":"volcano","queue":"default","tasks":[{"name":"hello",)"
            R"("replicas":2,"template":{"metadata":{"name":"hello"},"spec":)"
            R"({"restartPolicy":"Never","containers":[{"name":"hello","image":"busybox",)"
            R"("imagePullPolicy":"IfNotPresent","resources":{"requests":{"cpu":"100m"}}}]}}}]}})");
}

TEST(JobManifestTest, Table) {
  const std::string kInX =
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"m",)"
      R"("namespace":"x"}})";
  const std::string yaml =
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: m\nspec:\n"
      "  minAvailable: 1\n";
  const struct {
    std::string text, ns;
    bool ns_given;
    std::string want_json, error;
  } cases[] = {
      {yaml, "ml", false,
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"m",)"
       R"("namespace":"ml"},"spec":{"minAvailable":1}})",
       ""},
      {kInX, "default", false, kInX, ""},
      {kInX, "ml", true, "", "the manifest's namespace \"x\" is not -n's \"ml\""},
      {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "ml", false, "", "not a Volcano Job"},
      {"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec: {}\n", "ml", false, "",
       "metadata.name"},
      {"kind: [unclosed\n", "ml", false, "", "not YAML"},
      {yaml + "---\n" + yaml, "ml", false, "", "expected one document, found 2"},
  };
  for (const auto& c : cases) {
    StatusOr<Manifest> got = JobManifest(c.text, c.ns, c.ns_given);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
      EXPECT_EQ(got->json, c.want_json);
      EXPECT_EQ(got->name, "m");
    } else {
      ASSERT_FALSE(got.ok()) << c.text;
      EXPECT_THAT(got.status().message(), HasSubstr(c.error)) << c.text;
    }
  }
}

TEST(FormatObjectsTest, ListOrObject) {
  const std::string list = R"({"kind":"JobList","items":[{"kind":"Job","metadata":{"name":"a"}}]})";
  StatusOr<std::vector<std::string>> items = ListItems(list);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ(items->front(), R"({"kind":"Job","metadata":{"name":"a"}})");
  EXPECT_EQ(*FormatObjects(*items, /*as_list=*/false, OutputFormat::kYaml),
            "kind: Job\nmetadata:\n  name: a\n");
  EXPECT_EQ(*FormatObjects(*items, /*as_list=*/true, OutputFormat::kYaml),
            "apiVersion: v1\nkind: List\nitems:\n  - kind: Job\n    metadata:\n      name: a\n");
  EXPECT_EQ(*FormatObjects({}, /*as_list=*/true, OutputFormat::kJson),
            "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": []\n}\n");
  EXPECT_EQ(*FormatObjects({R"({"metadata":{"name":"a","managedFields":[{"manager":"x"}]}})"},
                           /*as_list=*/false, OutputFormat::kYaml),
            "metadata:\n  name: a\n");
  EXPECT_FALSE(FormatObjects({"{"}, /*as_list=*/false, OutputFormat::kJson).ok());
  EXPECT_TRUE(ListItems(R"({"items":null})")->empty());
  EXPECT_FALSE(ListItems("[").ok());
}

// The command line's answers that need no cluster: help, usage errors, and
// no cluster at all (a kubeconfig that does not exist).
struct CliCase {
  std::vector<std::string> args;
  int code;
  std::string out, err;  // substrings expected ("" = not checked)
};

void RunCases(int (*run)(const std::vector<std::string>&, Io&), const std::vector<CliCase>& cases) {
  FakeClock clock(kNow);
  for (const CliCase& c : cases) {
    std::ostringstream out, err;
    Io io{out, err, clock};
    const std::string shown = ::testing::PrintToString(c.args);
    EXPECT_EQ(run(c.args, io), c.code) << shown << "\nout: " << out.str() << "\nerr: " << err.str();
    EXPECT_THAT(out.str(), HasSubstr(c.out)) << shown;
    EXPECT_THAT(err.str(), HasSubstr(c.err)) << shown;
  }
}

TEST(RunJobTest, AnswersWithoutCluster) {
  const std::string none = "--kubeconfig=/nonexistent/kubeconfig";
  RunCases(
      RunJob,
      {
          {{}, kExitUsage, "", "usage: muster job <verb>"},
          {{"--help"}, kExitOk, "suspend", ""},
          {{"frob"}, kExitUsage, "", "unknown verb \"frob\""},
          {{"list", "--help"}, kExitOk, "usage: muster job list", ""},
          {{"list", "-h"}, kExitOk, "--all-namespaces", ""},
          {{"run", "--help"}, kExitOk, "cpu=1000m,memory=100Mi", ""},
          {{"list", "--frob"}, kExitUsage, "", "muster job list: unknown flag --frob"},
          {{"list", "-o", "xml"}, kExitUsage, "", "unknown output format \"xml\""},
          {{"list", "-n"}, kExitUsage, "", "flag -n needs a value"},
          {{"list", "train"}, kExitUsage, "", "takes no NAME"},
          {{"view"}, kExitUsage, "", "a job NAME is required"},
          {{"view", "a", "-N", "b"}, kExitUsage, "", "one job NAME, not 2"},
          {{"view", "a", "-o", "wide"}, kExitUsage, "", "not wide"},
          {{"suspend"}, kExitUsage, "", "a job NAME is required"},
          {{"run", "x", "-m", "3", "-r", "2", none}, kExitUsage, "", "flag --min: 3 is more than"},
          {{"run", "x", "-r", "two", none}, kExitUsage, "", "flag --replicas: \"two\""},
          {{"run", "x", "-R", "cpu", none}, kExitUsage, "", "flag --requests"},
          {{"run", "-f", "/nonexistent.yaml", none},
           kExitUsage,
           "",
           "cannot read \"/nonexistent.yaml\""},
          {{"run", "-f", "j.yaml", "-i", "x", none},
           kExitUsage,
           "",
           "flag --image: not with --filename"},
          {{"run", "x", none}, kExitNoCluster, "", "no cluster"},
          {{"list", none}, kExitNoCluster, "", "no cluster"},
          {{"view", "train", none}, kExitNoCluster, "", "is the cluster up?"},
          {{"list", "--request-timeout", "soon", "--kubeconfig", "/nonexistent"},
           kExitNoCluster,
           "",
           ""},
      });
}

}  // namespace
}  // namespace muster::cli
