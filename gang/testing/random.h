// A seeded random source for the gang planner's randomized tests
// (gang_property_test, pass_equivalence_test): a failing seed replays.
//
// Header-only, test code only. Not thread-safe (one per test case).
#pragma once

#include <cstdint>
#include <random>

namespace muster::gang::test {

class Rng {
 public:
  explicit Rng(uint32_t seed) : engine_(seed) {}
  // Uniform in [lo, hi]. REQUIRES: lo <= hi. Modulo bias is irrelevant here
  // and keeps the sequence the same on every standard library.
  int Int(int lo, int hi) { return lo + static_cast<int>(engine_() % (hi - lo + 1)); }
  bool Chance(int percent) { return Int(1, 100) <= percent; }

 private:
  std::mt19937 engine_;
};

}  // namespace muster::gang::test
