#include "cmd/cli/args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace muster::cli {
namespace {

using ::testing::HasSubstr;
using Values = std::map<std::string, std::string, std::less<>>;

const std::vector<FlagSpec>& Specs() {
  static const std::vector<FlagSpec> specs = {
      {.name = "namespace", .short_name = 'n', .value_name = "NS", .help = "the namespace"},
      {.name = "all-namespaces", .short_name = 'A', .takes_value = false, .help = "all"},
      {.name = "output", .short_name = 'o', .value_name = "FORMAT", .help = "format"},
      {.name = "weight", .value_name = "N", .help = "weight", .default_value = "1"},
  };
  return specs;
}

TEST(ParseArgsTest, Accepted) {
  const struct {
    std::vector<std::string> argv;
    std::vector<std::string> positional;
    Values values;
    bool help;
  } cases[] = {
      {{}, {}, {}, false},
      {{"train"}, {"train"}, {}, false},
      {{"-n", "ml", "train"}, {"train"}, {{"namespace", "ml"}}, false},
      {{"train", "--namespace=ml"}, {"train"}, {{"namespace", "ml"}}, false},
      {{"--namespace", "ml"}, {}, {{"namespace", "ml"}}, false},
      {{"-n=ml"}, {}, {{"namespace", "ml"}}, false},
      {{"-A"}, {}, {{"all-namespaces", "true"}}, false},
      {{"--all-namespaces=false"}, {}, {{"all-namespaces", "false"}}, false},
      {{"-o", "wide", "-o", "json"}, {}, {{"output", "json"}}, false},  // the last wins
      {{"--help"}, {}, {}, true},
      {{"a", "-h", "b"}, {"a", "b"}, {}, true},
      {{"--", "-n", "--frob"}, {"-n", "--frob"}, {}, false},
      {{"-"}, {"-"}, {}, false},  // "-" alone is an argument (stdin)
      {{"--output="}, {}, {{"output", ""}}, false},
  };
  for (const auto& c : cases) {
    StatusOr<Args> got = ParseArgs(c.argv, Specs());
    const std::string shown = ::testing::PrintToString(c.argv);
    ASSERT_TRUE(got.ok()) << shown << ": " << got.status();
    EXPECT_EQ(got->positional, c.positional) << shown;
    EXPECT_EQ(got->values, c.values) << shown;
    EXPECT_EQ(got->help, c.help) << shown;
  }
}

TEST(ParseArgsTest, Refused) {
  const struct {
    std::vector<std::string> argv;
    std::string error;
  } cases[] = {
      {{"--frob"}, "unknown flag --frob"},
      {{"--frob=1"}, "unknown flag --frob"},
      {{"-x"}, "unknown flag -x"},
      {{"-nml"}, "unknown flag -nml"},  // no joined short values
      {{"-n"}, "flag -n needs a value (NS)"},
      {{"train", "--namespace"}, "flag --namespace needs a value (NS)"},
      {{"-A=yes"}, "flag -A takes no value (or true/false), not \"yes\""},
  };
  for (const auto& c : cases) {
    StatusOr<Args> got = ParseArgs(c.argv, Specs());
    const std::string shown = ::testing::PrintToString(c.argv);
    ASSERT_FALSE(got.ok()) << shown;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << shown;
    EXPECT_EQ(got.status().message(), c.error) << shown;
  }
}

TEST(ArgsTest, GetHasBool) {
  StatusOr<Args> args = ParseArgs({"-A", "-n", "ml"}, Specs());
  ASSERT_TRUE(args.ok());
  EXPECT_TRUE(args->Has("namespace"));
  EXPECT_FALSE(args->Has("output"));
  EXPECT_EQ(args->Get("output", "wide"), "wide");
  EXPECT_EQ(args->Get("namespace", "x"), "ml");
  EXPECT_TRUE(args->Bool("all-namespaces"));
  EXPECT_FALSE(args->Bool("namespace"));
}

TEST(FlagsHelpTest, AlignedWithDefaults) {
  EXPECT_EQ(FlagsHelp(Specs()),
            "flags:\n"
            "  -n, --namespace NS    the namespace\n"
            "  -A, --all-namespaces  all\n"
            "  -o, --output FORMAT   format\n"
            "      --weight N        weight (default 1)\n"
            "  -h, --help            this help\n");
}

}  // namespace
}  // namespace muster::cli
