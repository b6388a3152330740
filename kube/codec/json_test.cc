// The shared JSON layer's contract: hostile input is refused with a message,
// never a crash; Go's null semantics hold.
#include "kube/codec/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/core_codec.h"

namespace muster::kube {
namespace {

using ::testing::HasSubstr;

TEST(JsonTest, RefusesHostileNestingInsteadOfOverflowingTheStack) {
  struct Case {
    std::string name;
    int depth;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"realistic depth", 40, true},
      {"at the limit", 250, true},
      {"just past the limit", 300, false},
      {"a megabyte of brackets", 500'000, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    // A pod whose podAntiAffinity (kept verbatim) nests `depth` arrays.
    std::string nested = std::string(c.depth, '[') + std::string(c.depth, ']');
    std::string json =
        R"({"metadata":{"name":"p"},"spec":{"affinity":{"podAntiAffinity":{"x":)" + nested + "}}}}";
    StatusOr<Pod> pod = DecodePod(json);
    EXPECT_EQ(pod.ok(), c.ok) << pod.status();
    if (!c.ok) {
      EXPECT_THAT(pod.status().message(), HasSubstr("nested deeper than 256 levels"));
    }
  }
}

TEST(JsonTest, NullElementsOfStringListsReadAsEmptyStrings) {
  StatusOr<Pod> pod = DecodePod(R"({"metadata":{"name":"p","finalizers":["a",null,"b"]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.finalizers, (std::vector<std::string>{"a", "", "b"}));
}

TEST(JsonTest, ParseErrorsNameTheOffset) {
  StatusOr<Pod> pod = DecodePod(R"({"metadata": {"name": "p",}})");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(pod.status().message(), HasSubstr("invalid JSON at offset"));
}

TEST(JsonTest, KeysAreExactUnlessCaseInsensitiveIsAsked) {
  rapidjson::Document doc;
  ASSERT_TRUE(ParseDocument(R"({"nodeNames": ["a"], "NodeNames": ["b"], "pod": 1})", &doc).ok());
  DecodeContext exact;
  DecodeContext folded(/*case_insensitive_keys=*/true);
  std::vector<std::string> names;
  ASSERT_TRUE(ReadStringList(folded, doc, "NodeNames", &names));
  EXPECT_EQ(names, std::vector<std::string>{"b"}) << "an exact match wins over a folded one";
  EXPECT_EQ(Member(exact, doc, "Pod"), nullptr);
  EXPECT_NE(Member(folded, doc, "Pod"), nullptr);
}

}  // namespace
}  // namespace muster::kube
