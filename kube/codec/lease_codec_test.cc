#include "kube/codec/lease_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using codec_test::At;
using codec_test::ReadTestdata;

// kube-scheduler's Lease as client-go's resourcelock writes it: the holder
// is "<pod name>_<uuid>", the times are MicroTime.
TEST(LeaseCodecTest, DecodesKubeSchedulersLease) {
  StatusOr<Lease> lease = DecodeLease(ReadTestdata("lease_kube_scheduler.json"));
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(lease->meta.Key(), "muster-system/volcano-scheduler");
  EXPECT_EQ(lease->meta.resource_version, "88213");
  EXPECT_EQ(lease->holder_identity,
            "volcano-scheduler-7d9c5b6f4-x2lqp_1b8f0d3e-7a2c-4f4e-b5d1-0c9e2f6a7b3d");
  EXPECT_EQ(lease->lease_duration_seconds, 8);
  EXPECT_EQ(lease->lease_transitions, 3);
  EXPECT_EQ(lease->acquire_time, At("2026-11-30T08:12:40.318214Z"));
  EXPECT_EQ(lease->renew_time, At("2026-11-30T09:40:02.120007Z"));
}

TEST(LeaseCodecTest, AnEmptySpecIsAFreeLease) {
  StatusOr<Lease> lease = DecodeLease(R"({"metadata":{"name":"l","namespace":"n"},"spec":{}})");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ(lease->holder_identity, "");
  EXPECT_FALSE(lease->renew_time.has_value());
}

TEST(LeaseCodecTest, BadFieldsAreNamed) {
  struct Case {
    std::string json, path;
  };
  const std::vector<Case> cases = {
      {R"({"spec":{"holderIdentity":7}})", "spec.holderIdentity"},
      {R"({"spec":{"renewTime":"yesterday"}})", "spec.renewTime"},
      {R"({"spec":{"leaseDurationSeconds":"8"}})", "spec.leaseDurationSeconds"},
      {R"({"spec":[]})", "spec"},
  };
  for (const Case& c : cases) {
    StatusOr<Lease> lease = DecodeLease(c.json);
    ASSERT_FALSE(lease.ok()) << c.json;
    EXPECT_EQ(lease.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(lease.status().message().find(c.path), std::string::npos) << lease.status().message();
  }
}

Lease Reconcilers() {
  Lease lease;
  lease.meta.namespace_ = "muster-system";
  lease.meta.name = "muster-reconciler";
  lease.holder_identity = "muster-reconciler-0_5f1c";
  lease.lease_duration_seconds = 8;
  lease.acquire_time = At("2026-12-03T21:40:00.25Z");
  lease.renew_time = At("2026-12-03T21:40:07.500125Z");
  lease.lease_transitions = 2;
  return lease;
}

TEST(LeaseCodecTest, CreateMatchesTheGolden) {
  EXPECT_EQ(EncodeLease(Reconcilers()), ReadTestdata("lease_create.json"));
}

// A release writes holderIdentity "" (not omitted: a merge patch that left
// it out would keep the old holder) at the version read.
TEST(LeaseCodecTest, ReleasePatchMatchesTheGolden) {
  Lease released = Reconcilers();
  released.meta.resource_version = "4711";
  released.holder_identity.clear();
  released.lease_duration_seconds = 1;
  released.acquire_time = released.renew_time = At("2026-12-03T21:40:09Z");
  EXPECT_EQ(EncodeLeaseUpdatePatch(released), ReadTestdata("lease_release_patch.json"));
}

TEST(LeaseCodecTest, RoundTripsThroughCreate) {
  StatusOr<Lease> decoded = DecodeLease(EncodeLease(Reconcilers()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, Reconcilers());
}

}  // namespace
}  // namespace muster::kube
