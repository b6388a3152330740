#include "kube/codec/extender_args_view.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/extender_types.h"

namespace muster::kube {
namespace {

// Whether `s` lies inside `text` (a view of it rather than a copy).
bool Inside(std::string_view s, std::string_view text) {
  return std::less_equal<const char*>()(text.data(), s.data()) &&
         std::less_equal<const char*>()(s.data() + s.size(), text.data() + text.size());
}

std::optional<std::vector<std::string>> Copied(
    const std::optional<std::vector<std::string_view>>& names) {
  if (!names.has_value()) return std::nullopt;
  return std::vector<std::string>(names->begin(), names->end());
}

// The contract: DecodeExtenderArgs's answer, value or error, whichever path
// read the names; `viewed` says which path that was (views of the body, or
// names decoded into the result).
TEST(ExtenderArgsViewTest, AnswersAsTheFullDecoder) {
  const std::string pod = R"("Pod":{"metadata":{"name":"p","namespace":"ml"}})";
  struct Case {
    std::string name;
    std::string body;
    bool viewed;  // the names (if any) are views of the body
  };
  const std::string long_name = "ip-10-0-12-34.us-west-2.compute.internal";
  const std::vector<Case> cases = {
      {"plain names", "{" + pod + R"(,"Nodes":null,"NodeNames":["a","bb","ccc"]})", true},
      {"a cloud node name", "{" + pod + R"(,"NodeNames":[")" + long_name + R"("]})", true},
      {"every length across a word",
       "{" + pod +
           R"(,"NodeNames":["","1","12345678","123456789","1234567890123456","12345678901234567"]})",
       true},
      {"UTF-8 in a name", "{" + pod + R"(,"NodeNames":["n\u00f6de","nöde"]})", false},
      {"raw UTF-8 only", "{" + pod + R"(,"NodeNames":["nöde-α"]})", true},
      {"spaces everywhere", " { " + pod + R"( , "NodeNames" : [ "a" , "b" ] } )", true},
      {"names first", R"({"NodeNames":["a","b"],)" + pod + "}", true},
      {"lower-case key", "{" + pod + R"(,"nodenames":["a"]})", true},
      {"empty list", "{" + pod + R"(,"NodeNames":[]})", true},
      {"null list", "{" + pod + R"(,"Nodes":null,"NodeNames":null})", false},
      {"absent", "{" + pod + "}", false},
      {"non-cache mode", "{" + pod + R"(,"Nodes":{"items":[{"metadata":{"name":"n1"}}]}})", false},
      {"both modes", "{" + pod + R"(,"Nodes":{"items":[]},"NodeNames":["a"]})", true},
      {"an escaped name", "{" + pod + R"(,"NodeNames":["a\u002db","c\"d"]})", false},
      {"a null name", "{" + pod + R"(,"NodeNames":["a",null]})", false},
      {"the key twice", "{" + pod + R"(,"NodeNames":["a"],"nodeNames":["b"]})", false},
      {"an escaped key", "{" + pod + R"(,"Node\u004eames":["a"]})", false},
      {"a non-ASCII key", "{" + pod + R"(,"NodeNameſ":["a"],"NodeNames":["b"]})", false},
      {"the key's text inside the pod",
       R"({"Pod":{"metadata":{"name":"p","annotations":{"x":"\"NodeNames\":[\"no\"]]}"}}},)"
       R"("NodeNames":["yes"]})",
       true},
      {"brackets in the pod's strings",
       R"({"Pod":{"metadata":{"name":"p]}","labels":{"a[":"{"}}},"NodeNames":["yes"]})", true},
      // Errors: whatever the full decoder says.
      {"a trailing comma", "{" + pod + R"(,"NodeNames":["a",]})", false},
      {"a number", "{" + pod + R"(,"NodeNames":["a",1]})", false},
      {"not a list", "{" + pod + R"(,"NodeNames":"a"})", false},
      {"a control character", "{" + pod + ",\"NodeNames\":[\"a\tb\"]}", false},
      {"a control character, then the list's end", "{" + pod + ",\"NodeNames\":[\"a\t]}", false},
      {"unterminated name", "{" + pod + R"(,"NodeNames":["abcdefghijklmnop)", false},
      {"unterminated list", "{" + pod + R"(,"NodeNames":["a")", false},
      {"garbage after", "{" + pod + R"(,"NodeNames":["a"]} x)", false},
      {"a broken pod", R"({"Pod":{"metadata":{"name":"p"},"NodeNames":["a"]})", false},
      {"a pod of the wrong type", R"({"Pod":[],"NodeNames":["a"]})", false},
      {"not an object", R"(["a"])", false},
      {"empty", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const StatusOr<ExtenderArgs> want = DecodeExtenderArgs(c.body);
    const StatusOr<ExtenderArgsView> got = DecodeExtenderArgsView(c.body);
    ASSERT_EQ(got.ok(), want.ok()) << (got.ok() ? want.status() : got.status());
    if (!want.ok()) {
      EXPECT_EQ(got.status(), want.status());
      continue;
    }
    EXPECT_EQ(got->pod, want->pod);
    EXPECT_EQ(got->nodes, want->nodes);
    EXPECT_EQ(Copied(got->node_names), want->node_names);
    const bool has_names = want->node_names.has_value() && !want->node_names->empty();
    EXPECT_EQ(!got->decoded_names.empty(), has_names && !c.viewed);
    for (std::string_view name : got->node_names.value_or(std::vector<std::string_view>{})) {
      EXPECT_EQ(Inside(name, c.body), c.viewed) << name;
    }
  }
}

// The views outlive a move of the result (the verbs move it around), also
// when they view names the decoder had to copy.
TEST(ExtenderArgsViewTest, NamesSurviveAMove) {
  const std::string long_name(40, 'n');
  const std::string body = R"({"Pod":null,"NodeNames":[")" + long_name + R"(","a\u002db"]})";
  StatusOr<ExtenderArgsView> decoded = DecodeExtenderArgsView(body);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExtenderArgsView moved = *std::move(decoded);
  ExtenderArgsView again = std::move(moved);
  ASSERT_TRUE(again.node_names.has_value());
  EXPECT_EQ(*again.node_names, (std::vector<std::string_view>{long_name, "a-b"}));
}

}  // namespace
}  // namespace muster::kube
