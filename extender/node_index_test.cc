#include "extender/node_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster_state.h"

namespace muster::extender {
namespace {

// The flat name index against a std::map model, over enough names that probe
// runs collide, wrap around the table and are shifted back on erase.
TEST(NodeIndexTest, FindsWhatWasInsertedAndNotWhatWasErased) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    NodeSlots slots;
    NodeIndex index;
    std::map<std::string, uint32_t> model;
    for (int step = 0; step < 20000; ++step) {
      const std::string name = "node-" + std::to_string(rng() % 3000);
      auto it = model.find(name);
      if (it == model.end()) {
        slots.push_back(std::make_shared<const NodeInfo>(NodeInfo{.name = name}));
        const auto slot = static_cast<uint32_t>(slots.size() - 1);
        index.Insert(name, slot);
        model.emplace(name, slot);
      } else if (rng() % 2 == 0) {
        index.Erase(name, slots);
        model.erase(it);
      }
      ASSERT_EQ(index.size(), model.size());
    }
    std::vector<std::string> names;
    for (int i = 0; i < 3000; ++i) {
      const std::string name = "node-" + std::to_string(i);
      auto it = model.find(name);
      EXPECT_EQ(index.Find(name, slots), it == model.end() ? NodeIndex::kNone : it->second) << name;
      names.push_back(name);
      if (i % 7 == 0) names.push_back(name);  // asked twice
      if (i % 5 == 0) names.push_back("absent-" + std::to_string(i));
    }
    EXPECT_EQ(index.Find("not-a-node", slots), NodeIndex::kNone);
    // The pipelined lookup of many names answers as Find() does, in order.
    std::vector<size_t> visited;
    const std::vector<std::string_view> views(names.begin(), names.end());
    index.FindEach(views, slots, [&](size_t i, const NodeInfo* node) {
      visited.push_back(i);
      const uint32_t slot = index.Find(names[i], slots);
      EXPECT_EQ(node, slot == NodeIndex::kNone ? nullptr : slots[slot].get()) << names[i];
    });
    ASSERT_EQ(visited.size(), names.size());
    for (size_t i = 0; i < visited.size(); ++i) ASSERT_EQ(visited[i], i);
  }
}

TEST(NodeIndexTest, FindEachOnAnEmptyIndexFindsNothing) {
  const NodeSlots slots;
  const NodeIndex index;
  const std::vector<std::string_view> names = {"a", "", "b"};
  size_t calls = 0;
  index.FindEach(names, slots, [&](size_t i, const NodeInfo* node) {
    EXPECT_EQ(i, calls++);
    EXPECT_EQ(node, nullptr);
  });
  EXPECT_EQ(calls, names.size());
}

}  // namespace
}  // namespace muster::extender
