#include "model/shared_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
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
  pass.Edit()->pop_back();  // shared again: copied again
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

// A summary of the test's lists: how many names, and their total length.
struct Letters {
  static Letters Of(const std::vector<std::string>& names) {
    Letters l{.names = names.size()};
    for (const std::string& n : names) l.total += n.size();
    return l;
  }
  size_t names = 0;
  size_t total = 0;
};
using Summed = SharedList<std::string, Letters>;

TEST(SharedListTest, TheSummaryFollowsEveryWayOfChangingTheList) {
  struct Case {
    std::string name;
    std::function<void(Summed&)> change;
    size_t want_names, want_total;
  };
  const std::vector<Case> cases = {
      {"none", [](Summed&) {}, 2, 4},
      {"an element", [](Summed& l) { l.Edit()[0] = "abcd"; }, 2, 6},
      {"through a loop",
       [](Summed& l) {
         for (std::string& n : l.Edit()) n += "!";
       },
       2, 6},
      {"the vector", [](Summed& l) { l.Edit()->pop_back(); }, 1, 2},
      {"an algorithm",
       [](Summed& l) { std::erase_if(*l.Edit(), [](const std::string& n) { return n == "ab"; }); },
       1, 2},
      {"push_back", [](Summed& l) { l.push_back("xyz"); }, 3, 7},
      {"emptied", [](Summed& l) { l.Edit()->clear(); }, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Summed original = std::vector<std::string>{"ab", "cd"};
    Summed list = original;
    c.change(list);
    EXPECT_EQ(list.summary().names, c.want_names);
    EXPECT_EQ(list.summary().total, c.want_total);
    EXPECT_EQ(original.summary().total, 4u) << "a copy's change leaves the others' summary";
  }
  EXPECT_EQ(Summed().summary().names, 0u) << "an empty list has the summary of none";
}

}  // namespace
}  // namespace muster
