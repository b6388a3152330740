#include "model/flags.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace muster
