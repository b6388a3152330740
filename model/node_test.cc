#include "model/node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster {
namespace {

TEST(NodeTest, IsReady) {
  struct Case {
    std::string name;
    std::vector<Condition> conditions;
    bool ready;
  };
  const std::vector<Case> cases = {
      {"no conditions yet", {}, false},
      {"ready", {{.type = "Ready", .status = "True"}}, true},
      {"not ready", {{.type = "Ready", .status = "False"}}, false},
      {"unknown (kubelet stopped posting)", {{.type = "Ready", .status = "Unknown"}}, false},
      {"ready among others",
       {{.type = "MemoryPressure", .status = "False"}, {.type = "Ready", .status = "True"}},
       true},
      {"only another condition is true", {{.type = "DiskPressure", .status = "True"}}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Node node;
    node.conditions = c.conditions;
    EXPECT_EQ(node.IsReady(), c.ready);
  }
}

}  // namespace
}  // namespace muster
