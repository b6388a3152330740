#include "model/flags.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace muster {
namespace {

struct Flags {
  std::string name;
  int64_t count = 0;
  bool help = false;
};

const FlagTable<Flags>& Table() {
  static const auto* table = new FlagTable<Flags>{
      {"name",
       [](const std::string& v, Flags& f) {
         f.name = v;
         return Status::Ok();
       }},
      {"count",
       [](const std::string& v, Flags& f) { return ParseIntFlag("count", v, 1, 10, &f.count); }}};
  return *table;
}

TEST(FlagsTest, ParsesBothSpellingsAndHelp) {
  Flags flags;
  ASSERT_TRUE(
      ParseFlagArgs({"--name=a=b", "--count", "3", "-h"}, Table(), flags, &flags.help).ok());
  EXPECT_EQ(flags.name, "a=b");  // only the first '=' splits
  EXPECT_EQ(flags.count, 3);
  EXPECT_TRUE(flags.help);
}

TEST(FlagsTest, BadInputNamesWhatIsWrong) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const Case cases[] = {
      {{"--nope=1"}, "unknown flag --nope"},
      {{"--count"}, "flag --count: needs a value"},
      {{"--count=11"}, "flag --count: \"11\" is not an integer in [1, 10]"},
      {{"--count=2x"}, "flag --count: \"2x\" is not an integer in [1, 10]"},
      {{"stray"}, "unexpected argument \"stray\""},
  };
  for (const Case& c : cases) {
    Flags flags;
    Status s = ParseFlagArgs(c.args, Table(), flags, &flags.help);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.args[0];
    EXPECT_EQ(s.message(), c.want);
  }
}

// What the setter helpers fill.
struct Settings {
  std::string path;
  int port = 0;
  double qps = 0;
  Duration timeout{};
  bool enabled = false;
  bool help = false;
};

const FlagTable<Settings>& SettingsTable() {
  static const auto* table = new FlagTable<Settings>{
      {"path", StringInto<Settings>([](Settings& s) -> std::string& { return s.path; })},
      {"port",
       IntInto<Settings, int>("port", 1, 65535, [](Settings& s) -> int& { return s.port; })},
      {"qps",
       IntInto<Settings, double>("qps", 1, 100, [](Settings& s) -> double& { return s.qps; })},
      {"timeout", DurationInto<Settings>("timeout", std::chrono::seconds(1),
                                         [](Settings& s) -> Duration& { return s.timeout; })},
      {"enabled", BoolInto<Settings>("enabled", [](Settings& s) -> bool& { return s.enabled; })},
  };
  return *table;
}

struct SetterCase {
  std::string arg;
  std::string want_error;  // empty: parses
  std::function<bool(const Settings&)> holds;
};

const std::vector<SetterCase>& SetterCases() {
  static const auto* cases = new std::vector<SetterCase>{
      {"--path=/a b", "", [](const Settings& s) { return s.path == "/a b"; }},
      {"--path=", "", [](const Settings& s) { return s.path.empty(); }},
      {"--port=8080", "", [](const Settings& s) { return s.port == 8080; }},
      {"--port=0", "flag --port: \"0\" is not an integer in [1, 65535]", nullptr},
      {"--qps=20", "", [](const Settings& s) { return s.qps == 20.0; }},
      {"--qps=1.5", "flag --qps: \"1.5\" is not an integer in [1, 100]", nullptr},
      {"--timeout=1m30s", "",
       [](const Settings& s) { return s.timeout == std::chrono::seconds(90); }},
      {"--timeout=1s", "", [](const Settings& s) { return s.timeout == std::chrono::seconds(1); }},
      {"--timeout=500ms",
       "flag --timeout: \"500ms\" is not a duration of at least 1s (e.g. 0s, 10s, 1m)", nullptr},
      {"--timeout=soon",
       "flag --timeout: \"soon\" is not a duration of at least 1s (e.g. 0s, 10s, 1m)", nullptr},
      {"--enabled=true", "", [](const Settings& s) { return s.enabled; }},
      {"--enabled=false", "", [](const Settings& s) { return !s.enabled; }},
      {"--enabled=yes", "flag --enabled: \"yes\" is not true or false", nullptr},
  };
  return *cases;
}

TEST(FlagSettersTest, EachHelperSetsItsFieldOrNamesTheFlag) {
  for (const SetterCase& c : SetterCases()) {
    Settings settings;
    settings.enabled = c.arg == "--enabled=false";  // false must be set, not kept
    const Status s = ParseFlagArgs({c.arg}, SettingsTable(), settings, &settings.help);
    if (c.want_error.empty()) {
      ASSERT_TRUE(s.ok()) << c.arg << ": " << s.ToString();
      EXPECT_TRUE(c.holds(settings)) << c.arg;
    } else {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.arg;
      EXPECT_EQ(s.message(), c.want_error) << c.arg;
    }
  }
}

}  // namespace
}  // namespace muster
