// What the command line's screen tests share: the fixed "now" their objects
// are aged against and the golden-file comparison (goldens in
// cmd/cli/testdata). Test-only; header-only.
//
// Pure but for ExpectGolden, which reads (and, with MUSTER_UPDATE_GOLDENS=1,
// writes) a golden file. Thread-compatible.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "model/time.h"

namespace muster::cli::test {

// 2025-11-24T16:00:00Z.
inline const Time kNow = Time::FromUnixSeconds(1'764'000'000);

// Compares `got` with testdata/`file`; MUSTER_UPDATE_GOLDENS=1 rewrites it.
inline void ExpectGolden(const std::string& file, const std::string& got) {
  const std::string path = std::string(MUSTER_TESTDATA_DIR) + "/" + file;
  if (std::getenv("MUSTER_UPDATE_GOLDENS") != nullptr) std::ofstream(path) << got;
  std::ifstream in(path);
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "golden " << path << " (MUSTER_UPDATE_GOLDENS=1 rewrites it)";
}

}  // namespace muster::cli::test
