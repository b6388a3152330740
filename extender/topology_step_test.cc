// The network-tier step: what each PodGroup asks becomes the gang's domains.
#include "extender/topology_step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gang/testing/builders.h"
#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using gang::test::MakeGang;
using test::MakeNode;
using test::MakePod;
using test::MakePodGroup;
using ::testing::HasSubstr;

// zone z / racks r1 (n1, n2) and r2 (n3).
// The pass's PodGroups by gang key.
GroupsByKey GroupsOf(const std::vector<PodGroup>& groups) {
  GroupsByKey out;
  for (const PodGroup& g : groups) out.emplace(g.GangKey(), std::make_shared<const PodGroup>(g));
  return out;
}

gang::ClusterView TwoRacks() {
  auto node = [](const std::string& name, const std::string& rack) {
    return MakeNode(name).Gpu(8).Pods(110).Label("zone", "z").Label("rack", rack);
  };
  return gang::test::MakeView({node("n1", "r1"), node("n2", "r1"), node("n3", "r2")});
}

// The domains the gang may use: the shared list cut at its tier.
std::vector<NetworkDomain> Allowed(const gang::Gang& g) {
  std::vector<NetworkDomain> out;
  if (g.domains == nullptr) return out;
  for (const NetworkDomain& d : *g.domains) {
    if (d.tier <= g.domain_tier) out.push_back(d);
  }
  return out;
}

TEST(TopologyStepTest, WhatThePodGroupAsksBecomesTheGangsDomains) {
  const topology::NetworkTiers tiers = *topology::ParseNetworkTiers("zone=zone,rack=rack").tiers;
  struct Case {
    std::string name;
    PodGroup group;
    int want_top_tier;  // the highest tier among the domains; -1: none
    bool want_required;
    std::string want_level;
    std::string want_held = "";  // a substring of the hold's message
  };
  auto group = [] { return MakePodGroup("g").MinMember(2); };
  auto annotated = [&](std::string_view key, std::string value) {
    PodGroup g = group();
    g.meta.annotations[std::string(key)] = std::move(value);
    return g;
  };
  auto volcano = [&](std::string mode, std::optional<int32_t> tier, std::string name = "") {
    PodGroup g = group();
    g.spec.network_topology = NetworkTopologySpec{.mode = std::move(mode),
                                                  .highest_tier_allowed = tier,
                                                  .highest_tier_name = std::move(name)};
    return g;
  };
  const std::vector<Case> cases = {
      {"nothing asked: preferred, up to the top", group(), 2, false, "zone"},
      {"required rack", annotated(kAnnotationNetworkTierRequired, "rack"), 1, true, "rack"},
      {"preferred rack", annotated(kAnnotationNetworkTierPreferred, "rack"), 1, false, "rack"},
      {"Volcano hard, tier 1", volcano("hard", 1), 1, true, "rack"},
      {"Volcano soft, tier 2", volcano("soft", 2), 2, false, "zone"},
      {"Volcano by name, mode defaults to hard", volcano("", std::nullopt, "rack"), 1, true,
       "rack"},
      {"an unknown level is held, naming the field",
       annotated(kAnnotationNetworkTierRequired, "rak"), -1, false, "",
       "annotation muster.io/network-tier-required: no network level \"rak\" (levels: zone, rack)"},
      {"a tier out of range is held", volcano("hard", 7), -1, false, "",
       "spec.networkTopology.highestTierAllowed: 7 is not a tier (1..2)"},
  };
  for (const Case& c : cases) {
    std::vector<gang::Gang> gangs = {
        MakeGang("g").MinMember(2).Pending(MakePod("g-0").Gpu(1)).Pending(MakePod("g-1").Gpu(1))};
    const std::vector<gang::Wait> held =
        ApplyNetworkTiers(tiers, TwoRacks(), GroupsOf({c.group}), gangs);
    if (!c.want_held.empty()) {
      ASSERT_EQ(held.size(), 1u) << c.name;
      EXPECT_EQ(held[0].reason, kWaitBadNetworkTopology) << c.name;
      EXPECT_THAT(held[0].message, HasSubstr(c.want_held)) << c.name;
      continue;
    }
    EXPECT_TRUE(held.empty()) << c.name;
    const gang::Gang& g = gangs[0];
    const std::vector<NetworkDomain> domains = Allowed(g);
    ASSERT_FALSE(domains.empty()) << c.name;
    EXPECT_EQ(domains.front().tier, 1) << c.name;
    EXPECT_EQ(domains.front().nodes, (std::vector<std::string>{"n1", "n2"})) << c.name;
    EXPECT_EQ(domains.back().tier, c.want_top_tier) << c.name;
    EXPECT_EQ(g.domains_required, c.want_required) << c.name;
    EXPECT_EQ(g.domain_level, c.want_level) << c.name;
  }
}

TEST(TopologyStepTest, NoTiersSingleMembersAndPlacedGangsGetNoDomains) {
  const topology::NetworkTiers tiers = *topology::ParseNetworkTiers("rack=rack").tiers;
  std::vector<gang::Gang> gangs = {MakeGang("one").MinMember(1).Pending(MakePod("one-0").Gpu(1)),
                                   MakeGang("done")
                                       .MinMember(2)
                                       .Bound(MakePod("done-0").Gpu(1), "n1")
                                       .Bound(MakePod("done-1").Gpu(1), "n1")};
  const GroupsByKey groups = GroupsOf({MakePodGroup("one"), MakePodGroup("done")});
  EXPECT_TRUE(ApplyNetworkTiers(tiers, TwoRacks(), groups, gangs).empty());
  EXPECT_TRUE(Allowed(gangs[0]).empty());
  EXPECT_TRUE(Allowed(gangs[1]).empty());
  std::vector<gang::Gang> more = {MakeGang("g").MinMember(2).Pending(MakePod("g-0").Gpu(1))};
  ApplyNetworkTiers(topology::NetworkTiers{}, TwoRacks(), GroupsOf({MakePodGroup("g")}), more);
  EXPECT_TRUE(Allowed(more[0]).empty());
}

}  // namespace
}  // namespace muster::extender
