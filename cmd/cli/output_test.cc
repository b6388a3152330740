#include "cmd/cli/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace muster::cli {
namespace {

using ::testing::HasSubstr;

TEST(ParseOutputFormatTest, Table) {
  const struct {
    std::string text;
    OutputFormat want;
  } accepted[] = {{"", OutputFormat::kTable},
                  {"wide", OutputFormat::kWide},
                  {"json", OutputFormat::kJson},
                  {"yaml", OutputFormat::kYaml}};
  for (const auto& c : accepted) {
    StatusOr<OutputFormat> got = ParseOutputFormat(c.text);
    ASSERT_TRUE(got.ok()) << c.text;
    EXPECT_EQ(*got, c.want) << c.text;
  }
  for (const std::string bad : {"xml", "JSON", "name", "jsonpath={.x}"}) {
    StatusOr<OutputFormat> got = ParseOutputFormat(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("\"" + bad + "\" (one of: wide, json, yaml)"));
  }
}

TEST(TableTest, KubectlLayout) {
  Table t({"name", "PHASE", "AGE"});
  t.AddRow({"train", "Running", "5m"});
  t.AddRow({"a-much-longer-name", "", "12d"});
  EXPECT_EQ(t.Render(),
            "NAME                 PHASE     AGE\n"
            "train                Running   5m\n"
            "a-much-longer-name   <none>    12d\n");
  EXPECT_FALSE(t.empty());
  Table empty({"NAME"});
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.Render(), "NAME\n");
}

// kubectl's ages (k8s.io/apimachinery/pkg/util/duration.HumanDuration).
TEST(AgeTest, KubectlHumanDuration) {
  const Time now = Time::FromUnixSeconds(1'800'000'000);
  using std::chrono::seconds;
  const struct {
    int64_t seconds_ago;
    std::string want;
  } cases[] = {
      {0, "0s"},
      {-30, "0s"},  // a clock behind the server's
      {45, "45s"},
      {119, "119s"},
      {120, "2m"},
      {150, "2m30s"},
      {599, "9m59s"},
      {600, "10m"},
      {179 * 60 + 59, "179m"},
      {3 * 3600, "3h"},
      {3 * 3600 + 5 * 60, "3h5m"},
      {8 * 3600, "8h"},
      {47 * 3600, "47h"},
      {48 * 3600, "2d"},
      {3 * 86400 + 4 * 3600, "3d4h"},
      {8 * 86400, "8d"},
      {729 * 86400, "729d"},
      {730 * 86400, "2y"},
      {(3 * 365 + 10) * 86400, "3y10d"},
      {(9 * 365 + 10) * 86400, "9y"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Age(now - seconds(c.seconds_ago), now), c.want) << c.seconds_ago << "s ago";
  }
  EXPECT_EQ(Age(Time(), now), "<unknown>");
}

TEST(PrettyJsonTest, IndentsByTwo) {
  EXPECT_EQ(*PrettyJson(R"({"a":[1,{"b":"c"}],"d":{}})"),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ],\n  \"d\": {}\n}\n");
  EXPECT_FALSE(PrettyJson("{").ok());
}

TEST(JsonToYamlTest, KubectlStyle) {
  const struct {
    std::string json, yaml;
  } cases[] = {
      {R"({"kind":"Job","spec":{"minAvailable":2,"tasks":[{"name":"w","replicas":3}]}})",
       "kind: Job\nspec:\n  minAvailable: 2\n  tasks:\n    - name: w\n      replicas: 3\n"},
      // Strings that would read back as something else are quoted.
      {R"({"a":"true","b":"123","c":"","d":"null","e":"x: y","f":"plain"})",
       "a: \"true\"\nb: \"123\"\nc: \"\"\nd: \"null\"\ne: \"x: y\"\nf: plain\n"},
      {R"({"t":true,"n":null,"x":0.5,"big":9007199254740993})",
       "t: true\nn: null\nx: 0.5\nbig: 9007199254740993\n"},
      // Quantities read back as strings: plain, as kubectl prints them.
      {R"({"cpu":"1000m","memory":"100Mi","gpu":"1","v":"1.2.3"})",
       "cpu: 1000m\nmemory: 100Mi\ngpu: \"1\"\nv: 1.2.3\n"},
      // Empty maps and lists stay on their key's line.
      {R"({"labels":{},"items":[],"spec":{"x":[]}})", "labels: {}\nitems: []\nspec:\n  x: []\n"},
  };
  for (const auto& c : cases) {
    StatusOr<std::string> got = JsonToYaml(c.json);
    ASSERT_TRUE(got.ok()) << c.json;
    EXPECT_EQ(*got, c.yaml) << c.json;
  }
  EXPECT_FALSE(JsonToYaml("not json").ok());
}

// JSON -> YAML -> JSON gives the same document back (what -o yaml prints,
// a user can apply again).
TEST(YamlRoundTripTest, SameDocument) {
  const std::string docs[] = {
      R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"m",)"
      R"("labels":{"volcano.sh/job-type":"PyTorch"}},"spec":{"minAvailable":2,"queue":"default",)"
      R"("tasks":[{"name":"w","replicas":3,"template":{"spec":{"containers":[{"image":"busybox",)"
      R"("resources":{"requests":{"cpu":"1000m","memory":"100Mi","nvidia.com/gpu":"1"}}}]}}}]}})",
      R"({"a":"true","b":"0x1F","c":"","d":"~","e":"- item","f":"#x","g":"1e3","h":[],"i":{}})",
      R"({"n":null,"t":false,"i":-42,"f":2.5,"s":"2026-12-04T21:00:00Z"})",
  };
  for (const std::string& json : docs) {
    StatusOr<std::string> yaml = JsonToYaml(json);
    ASSERT_TRUE(yaml.ok()) << json;
    StatusOr<std::string> back = YamlToJson(*yaml);
    ASSERT_TRUE(back.ok()) << *yaml << ": " << back.status();
    EXPECT_EQ(*back, json) << *yaml;
  }
}

TEST(YamlToJsonTest, Table) {
  const struct {
    std::string yaml, json, error;
  } cases[] = {
      {"a: 1\nb: [x, 'y']\nc: {d: null}\n", R"({"a":1,"b":["x","y"],"c":{"d":null}})", ""},
      {"---\na: yes\n...\n", R"({"a":"yes"})", ""},  // YAML 1.2: yes is a string
      {R"({"already": "json"})", R"({"already":"json"})", ""},
      {"q: \"123\"\nn: 123\n", R"({"q":"123","n":123})", ""},
      {"a: [1\n", "", "not YAML: line"},
      {"a: 1\n---\nb: 2\n", "", "expected one document, found 2"},
      {"", "", "expected one document, found 0"},
  };
  for (const auto& c : cases) {
    StatusOr<std::string> got = YamlToJson(c.yaml);
    if (c.error.empty()) {
      ASSERT_TRUE(got.ok()) << c.yaml << ": " << got.status();
      EXPECT_EQ(*got, c.json) << c.yaml;
    } else {
      ASSERT_FALSE(got.ok()) << c.yaml;
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(got.status().message(), HasSubstr(c.error)) << c.yaml;
    }
  }
}

TEST(JsonListTest, KubectlList) {
  EXPECT_EQ(JsonList({}), R"({"apiVersion":"v1","kind":"List","items":[]})");
  EXPECT_EQ(JsonList({R"({"a":1})", R"({"b":2})"}),
            R"({"apiVersion":"v1","kind":"List","items":[{"a":1},{"b":2}]})");
}

}  // namespace
}  // namespace muster::cli
