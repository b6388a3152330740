#include "model/shared_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Names = SharedList<std::string>;

TEST(SharedListTest, CopiesShareUntilOneChanges) {
  const Names built = std::vector<std::string>{"w-0", "w-1"};
  Names pass = built;
  EXPECT_TRUE(pass.SharesWith(built)) << "a copy copies no element";

  pass.Edit()[1] = "w-1 (terminating)";
  EXPECT_FALSE(pass.SharesWith(built));
  EXPECT_THAT(pass, ElementsAre("w-0", "w-1 (terminating)"));
  EXPECT_THAT(built, ElementsAre("w-0", "w-1")) << "the other copy is as it was";

  Names again = pass;
  pass.Edit().pop_back();  // shared again: copied again
  EXPECT_THAT(again, ElementsAre("w-0", "w-1 (terminating)"));
  EXPECT_THAT(pass, ElementsAre("w-0"));
}

TEST(SharedListTest, AListNoOtherCopySharesIsChangedInPlace) {
  Names list = {"a", "b"};
  const std::string* first = &list[0];
  list.Edit()[0] = "z";
  EXPECT_EQ(&list[0], first) << "no other copy: not copied";
  {
    const Names other = list;
    EXPECT_TRUE(other.SharesWith(list));
  }  // the only other copy let go
  list.Edit()[1] = "y";
  EXPECT_EQ(&list[0], first);
  EXPECT_THAT(list, ElementsAre("z", "y"));
}

TEST(SharedListTest, EmptyListsReadAsEmptyAndGrow) {
  struct Case {
    std::string name;
    Names list;
  };
  const std::vector<Case> cases = {
      {"default", Names()},
      {"from an empty vector", Names(std::vector<std::string>{})},
      {"from an empty initializer list", Names{}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.list.empty());
    EXPECT_EQ(c.list.size(), 0u);
    EXPECT_THAT(c.list, IsEmpty());
    EXPECT_EQ(c.list.begin(), c.list.end());
    Names grown = c.list;
    grown.push_back("x");
    EXPECT_THAT(grown, ElementsAre("x"));
    EXPECT_TRUE(c.list.empty()) << "the copy grew, not the original";
  }
}

}  // namespace
}  // namespace muster
