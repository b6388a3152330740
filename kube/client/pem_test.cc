// Base64 (kube/client/pem.h): kubeconfig data and Secret data.
#include "kube/client/pem.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace muster::kube {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
      {std::string("\0\xff\xfe", 3), "AP/+"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(EncodeBase64(in), want) << in;
}

TEST(Base64Test, DecodeReadsWhatEncodeWrote) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  StatusOr<std::string> back = DecodeBase64(EncodeBase64(all));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, all);
}

}  // namespace
}  // namespace muster::kube
