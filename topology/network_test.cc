#include "topology/network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace muster::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Labels = std::map<std::string, std::string>;

NetworkTiers ZoneSpineRack() {
  return *ParseNetworkTiers("zone=topology.kubernetes.io/zone,spine=net/spine,rack=net/rack").tiers;
}

std::vector<std::string> Describe(const std::vector<NetworkDomain>& domains) {
  std::vector<std::string> out;
  for (const NetworkDomain& d : domains) {
    std::string nodes;
    for (const std::string& n : d.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    out.push_back(std::to_string(d.tier) + " " + d.id + " [" + nodes + "]");
  }
  return out;
}

TEST(NetworkTiersTest, DomainsArePathQualifiedAndLowestFirst) {
  const Labels a1 = {{"topology.kubernetes.io/zone", "a"}, {"net/spine", "s1"}, {"net/rack", "r1"}};
  const Labels a2 = {{"topology.kubernetes.io/zone", "a"}, {"net/spine", "s1"}, {"net/rack", "r2"}};
  // The same rack label under another zone is another rack.
  const Labels b1 = {{"topology.kubernetes.io/zone", "b"}, {"net/spine", "s1"}, {"net/rack", "r1"}};
  // No rack label: a rack of its own.
  const Labels loose = {{"topology.kubernetes.io/zone", "a"}, {"net/spine", "s1"}};
  const std::vector<NetworkDomain> domains = DomainsOf(
      ZoneSpineRack(), {{"n1", &a1}, {"n2", &a1}, {"n3", &a2}, {"n4", &b1}, {"n5", &loose}});
  EXPECT_THAT(Describe(domains),
              ElementsAre("1 zone=a/spine=s1/rack=(n5) [n5]", "1 zone=a/spine=s1/rack=r1 [n1,n2]",
                          "1 zone=a/spine=s1/rack=r2 [n3]", "1 zone=b/spine=s1/rack=r1 [n4]",
                          "2 zone=a/spine=s1 [n1,n2,n3,n5]", "2 zone=b/spine=s1 [n4]",
                          "3 zone=a [n1,n2,n3,n5]", "3 zone=b [n4]"));
}

TEST(NetworkTiersTest, AMissingUpperLabelIsolatesTheNodeAllTheWayDown) {
  const Labels no_zone = {{"net/spine", "s1"}, {"net/rack", "r1"}};
  const Labels full = {
      {"topology.kubernetes.io/zone", "a"}, {"net/spine", "s1"}, {"net/rack", "r1"}};
  const std::vector<NetworkDomain> domains =
      DomainsOf(ZoneSpineRack(), {{"x", &no_zone}, {"y", &full}});
  EXPECT_THAT(Describe(domains),
              ElementsAre("1 zone=(x)/spine=(x)/rack=(x) [x]", "1 zone=a/spine=s1/rack=r1 [y]",
                          "2 zone=(x)/spine=(x) [x]", "2 zone=a/spine=s1 [y]", "3 zone=(x) [x]",
                          "3 zone=a [y]"));
}

TEST(NetworkTiersTest, TierNumbersCountBottomUp) {
  const NetworkTiers tiers = ZoneSpineRack();
  EXPECT_EQ(tiers.TierOf("rack"), 1);
  EXPECT_EQ(tiers.TierOf("zone"), 3);
  EXPECT_EQ(tiers.TierOf("node"), 0);
  EXPECT_EQ(tiers.TierOf("pod"), std::nullopt);
  EXPECT_EQ(tiers.NameOf(2), "spine");
  EXPECT_EQ(tiers.NameOf(0), "node");
}

TEST(NetworkTiersTest, ParseErrorsNameTheEntry) {
  EXPECT_TRUE(ParseNetworkTiers("").tiers->levels.empty());
  for (const auto& [flag, want] : std::vector<std::pair<std::string, std::string>>{
           {"rack", "\"rack\" is not <name>=<node label key>"},
           {"rack=", "\"rack=\" is not"},
           {"=k", "\"=k\" is not"},
           {"rack=a,rack=b", "\"rack\" is reserved or used twice"},
           {"node=kubernetes.io/hostname", "\"node\" is reserved"}}) {
    const ParsedTiers parsed = ParseNetworkTiers(flag);
    EXPECT_FALSE(parsed.tiers.has_value()) << flag;
    EXPECT_THAT(parsed.error, HasSubstr(want)) << flag;
  }
}

}  // namespace
}  // namespace muster::topology
