// The leadership state machine against the real Lease codec and client, on
// an in-memory API (testing/fake_api.h) and a fake clock: acquire, renew,
// wait out a rival, lose, fence, release, and following kube-scheduler's
// Lease.
#include "kube/client/leader_election.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/resource_ref.h"
#include "kube/client/testing/fake_api.h"
#include "kube/codec/lease_codec.h"

namespace muster::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const ResourceRef kLease = LeaseRef("muster-system", "muster-reconciler");

// A store that can be cut off from the API, as a replica behind a broken
// network would be: every call fails Unavailable while `partitioned`.
class PartitionableStore final : public LeaseStore {
 public:
  explicit PartitionableStore(std::unique_ptr<LeaseStore> store) : store_(std::move(store)) {}
  StatusOr<Lease> Get() override { return partitioned ? Cut() : store_->Get(); }
  StatusOr<Lease> Create(const Lease& l) override {
    return partitioned ? Cut() : store_->Create(l);
  }
  StatusOr<Lease> Update(const Lease& l) override {
    return partitioned ? Cut() : store_->Update(l);
  }
  bool partitioned = false;

 private:
  static Status Cut() { return Status(StatusCode::kUnavailable, "partitioned"); }
  std::unique_ptr<LeaseStore> store_;
};

LeaderElectionOptions Acquire(std::string identity) {
  return LeaderElectionOptions{.mode = LeaderMode::kAcquire,
                               .lease_namespace = "muster-system",
                               .lease_name = "muster-reconciler",
                               .identity = std::move(identity)};
}

// One replica: its own client on the shared API, its own store and elector.
struct Replica {
  Replica(std::shared_ptr<testing::FakeApi> api, const Clock& clock, LeaderElectionOptions opts)
      : client(std::move(api), ClientConfig{}, ClientOptions{}),
        store(NewKubeLeaseStore(&client, opts.lease_namespace, opts.lease_name)),
        elector(&store, clock, std::move(opts)) {}
  Client client;
  PartitionableStore store;
  LeaderElector elector;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  std::unique_ptr<Replica> NewReplica(LeaderElectionOptions options) {
    return std::make_unique<Replica>(api_, clock_, std::move(options));
  }
  Lease Stored() {
    Client client(api_, ClientConfig{}, ClientOptions{});
    StatusOr<std::string> json = client.Get(kLease);
    EXPECT_TRUE(json.ok()) << json.status();
    StatusOr<Lease> lease = DecodeLease(json.ok() ? *json : "{}");
    EXPECT_TRUE(lease.ok()) << lease.status();
    return lease.ok() ? *lease : Lease{};
  }
  void Advance(Duration d) { clock_.Advance(d); }

  std::shared_ptr<testing::FakeApi> api_ = std::make_shared<testing::FakeApi>();
  FakeClock clock_;
};

TEST_F(LeaderElectionTest, FirstCandidateCreatesTheLeaseAndLeads) {
  auto a = NewReplica(Acquire("a"));
  EXPECT_FALSE(a->elector.Leading());
  a->elector.Tick();
  EXPECT_TRUE(a->elector.Leading());
  const Lease lease = Stored();
  EXPECT_EQ(lease.holder_identity, "a");
  EXPECT_EQ(lease.lease_duration_seconds, 8);
  EXPECT_EQ(lease.renew_time, clock_.Now());
  EXPECT_EQ(lease.acquire_time, clock_.Now());
  EXPECT_EQ(lease.lease_transitions, 0);
}

TEST_F(LeaderElectionTest, RenewingMovesRenewTimeAndKeepsTheAcquisition) {
  auto a = NewReplica(Acquire("a"));
  a->elector.Tick();
  const Time acquired = clock_.Now();
  for (int i = 0; i < 20; ++i) {
    Advance(seconds(1));
    a->elector.Tick();
    ASSERT_TRUE(a->elector.Leading()) << "renewal " << i;
  }
  const Lease lease = Stored();
  EXPECT_EQ(lease.renew_time, clock_.Now());
  EXPECT_EQ(lease.acquire_time, acquired);
  EXPECT_EQ(lease.lease_transitions, 0);
}

TEST_F(LeaderElectionTest, AStandbyWaitsWhileTheLeaderRenews) {
  auto a = NewReplica(Acquire("a"));
  auto b = NewReplica(Acquire("b"));
  a->elector.Tick();
  for (int i = 0; i < 30; ++i) {
    Advance(seconds(1));
    b->elector.Tick();
    a->elector.Tick();
    ASSERT_TRUE(a->elector.Leading());
    ASSERT_FALSE(b->elector.Leading()) << "second " << i;
  }
  EXPECT_EQ(b->elector.LeaseHolder(), "a");
  EXPECT_EQ(Stored().holder_identity, "a");
}

// The leader stops renewing (killed, or cut off from the API): the standby
// takes the Lease once it has seen it unchanged for the lease duration, not
// before, and counts a transition.
TEST_F(LeaderElectionTest, StandbyTakesOverOnlyAfterTheLeaseDurationUnchanged) {
  auto a = NewReplica(Acquire("a"));
  auto b = NewReplica(Acquire("b"));
  a->elector.Tick();
  b->elector.Tick();  // first sight of a's renewal
  const Time seen = clock_.Now();
  a->store.partitioned = true;
  while (clock_.Now() - seen < seconds(8)) {
    b->elector.Tick();
    ASSERT_FALSE(b->elector.Leading()) << (clock_.Now() - seen).count() << " us after";
    Advance(milliseconds(500));
  }
  b->elector.Tick();
  EXPECT_TRUE(b->elector.Leading());
  const Lease lease = Stored();
  EXPECT_EQ(lease.holder_identity, "b");
  EXPECT_EQ(lease.acquire_time, clock_.Now());
  EXPECT_EQ(lease.lease_transitions, 1);
}

// The fence: at no instant do two replicas both hold Leading(), whichever
// of them is cut off from the API and for however long - the deposed leader
// stops renew_deadline after its last renewal began, the rival starts no
// earlier than lease_duration after it last saw a change.
TEST_F(LeaderElectionTest, NeverTwoLeadersWhenTheLeaderIsCutOff) {
  struct Case {
    std::string name;
    Duration cut_after;
    Duration cut_for;
  };
  const std::vector<Case> cases = {
      {"cut for 3s (renews again in time)", seconds(5), seconds(3)},
      {"cut for 7s (deposed, nobody took over yet)", seconds(5), seconds(7)},
      {"cut for 30s (standby takes over)", seconds(5), seconds(30)},
      {"cut at once for 60s", Duration::zero(), seconds(60)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api_ = std::make_shared<testing::FakeApi>();
    auto a = NewReplica(Acquire("a"));
    auto b = NewReplica(Acquire("b"));
    a->elector.Tick();
    const Time start = clock_.Now();
    bool b_led = false;
    while (clock_.Now() - start < c.cut_after + c.cut_for + seconds(20)) {
      const Duration t = clock_.Now() - start;
      a->store.partitioned = t >= c.cut_after && t < c.cut_after + c.cut_for;
      a->elector.Tick();
      b->elector.Tick();
      ASSERT_FALSE(a->elector.Leading() && b->elector.Leading())
          << "both lead " << t.count() / 1000 << " ms in";
      b_led = b_led || b->elector.Leading();
      // Between ticks too: the fence is a deadline, not the last tick's word.
      for (int step = 0; step < 4; ++step) {
        Advance(milliseconds(250));
        ASSERT_FALSE(a->elector.Leading() && b->elector.Leading());
      }
    }
    EXPECT_EQ(b_led, c.cut_for > seconds(8)) << "takeover only when cut for a whole lease";
    EXPECT_EQ(a->elector.Deposed(), b_led);
  }
}

TEST_F(LeaderElectionTest, TheLeadRunsOutRenewDeadlineAfterTheLastRenewalBegan) {
  auto a = NewReplica(Acquire("a"));
  a->elector.Tick();
  a->store.partitioned = true;
  Advance(seconds(6) - milliseconds(1));
  a->elector.Tick();
  EXPECT_TRUE(a->elector.Leading());
  EXPECT_FALSE(a->elector.Deposed());
  Advance(milliseconds(1));
  EXPECT_FALSE(a->elector.Leading());
  EXPECT_TRUE(a->elector.Deposed());
}

// Two candidates read the same free Lease; the API's resourceVersion check
// lets one write win. The loser does not lead.
TEST_F(LeaderElectionTest, AConflictingTakeoverDoesNotLead) {
  auto a = NewReplica(Acquire("a"));
  a->elector.Tick();
  a->elector.Release();
  auto b = NewReplica(Acquire("b"));
  auto c = NewReplica(Acquire("c"));
  api_->FailNext("PATCH", kLease.Path(), 409);
  b->elector.Tick();
  c->elector.Tick();
  EXPECT_FALSE(b->elector.Leading());
  EXPECT_TRUE(c->elector.Leading());
  EXPECT_EQ(Stored().holder_identity, "c");
}

TEST_F(LeaderElectionTest, ReleaseHandsTheLeaseOverAtTheStandbysNextAttempt) {
  auto a = NewReplica(Acquire("a"));
  auto b = NewReplica(Acquire("b"));
  a->elector.Tick();
  b->elector.Tick();
  a->elector.Release();
  EXPECT_FALSE(a->elector.Leading());
  EXPECT_EQ(Stored().holder_identity, "");
  Advance(seconds(1));
  b->elector.Tick();
  EXPECT_TRUE(b->elector.Leading());
}

TEST_F(LeaderElectionTest, StopReleasesOnlyALeaseItHolds) {
  auto a = NewReplica(Acquire("a"));
  auto b = NewReplica(Acquire("b"));
  a->elector.Tick();
  b->elector.Tick();
  b->elector.Stop();  // a standby: nothing to release
  EXPECT_EQ(Stored().holder_identity, "a");
  a->elector.Stop();
  EXPECT_EQ(Stored().holder_identity, "");
  EXPECT_EQ(Stored().lease_duration_seconds, 1);
}

// ---- kFollow: the extender beside kube-scheduler.

LeaderElectionOptions Follow(std::string pod) {
  return LeaderElectionOptions{.mode = LeaderMode::kFollow,
                               .lease_namespace = "muster-system",
                               .lease_name = "muster-reconciler",
                               .identity = std::move(pod)};
}

void PutLease(testing::FakeApi& api, std::string_view holder, Time renewed) {
  Lease lease;
  lease.meta.namespace_ = "muster-system";
  lease.meta.name = "muster-reconciler";
  lease.holder_identity = std::string(holder);
  lease.lease_duration_seconds = 8;
  lease.renew_time = renewed;
  api.Put(kLease, EncodeLease(lease));
}

TEST_F(LeaderElectionTest, FollowLeadsWhileItsPodsSchedulerHoldsAFreshLease) {
  struct Case {
    std::string name;
    std::string holder;
    Duration renewed_ago;
    bool leading;
  };
  const std::vector<Case> cases = {
      {"own scheduler, just renewed", "sched-0_8d2c-41f7", Duration::zero(), true},
      {"own scheduler, renewed 5.9s ago", "sched-0_8d2c-41f7", milliseconds(5900), true},
      {"own scheduler, renewed 6s ago (deadline)", "sched-0_8d2c-41f7", seconds(6), false},
      {"exact identity", "sched-0", Duration::zero(), true},
      {"another pod", "sched-1_77aa", Duration::zero(), false},
      {"a pod whose name extends ours", "sched-01_77aa", Duration::zero(), false},
      {"released", "", Duration::zero(), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    PutLease(*api_, c.holder, clock_.Now() - c.renewed_ago);
    auto e = NewReplica(Follow("sched-0"));
    e->elector.Tick();
    EXPECT_EQ(e->elector.Leading(), c.leading);
    EXPECT_EQ(e->elector.LeaseHolder(), c.holder);
  }
}

TEST_F(LeaderElectionTest, FollowNeverWritesTheLease) {
  PutLease(*api_, "sched-1_x", clock_.Now() - seconds(60));  // long expired
  auto e = NewReplica(Follow("sched-0"));
  const size_t before = api_->Requests().size();
  e->elector.Tick();
  e->elector.Stop();
  for (size_t i = before; i < api_->Requests().size(); ++i) {
    EXPECT_EQ(api_->Requests()[i].method, "GET");
  }
  EXPECT_FALSE(e->elector.Leading());
}

TEST_F(LeaderElectionTest, FollowRunsOutWhenTheLeaseCannotBeReadAndStopsWhenItMoves) {
  PutLease(*api_, "sched-0_a", clock_.Now());
  auto e = NewReplica(Follow("sched-0"));
  e->elector.Tick();
  ASSERT_TRUE(e->elector.Leading());
  e->store.partitioned = true;
  Advance(seconds(5));
  e->elector.Tick();
  EXPECT_TRUE(e->elector.Leading()) << "a failed read keeps the lead until its deadline";
  Advance(seconds(1));
  EXPECT_FALSE(e->elector.Leading());
  EXPECT_TRUE(e->elector.Deposed());

  e->store.partitioned = false;
  PutLease(*api_, "sched-0_a", clock_.Now());
  e->elector.Tick();
  ASSERT_TRUE(e->elector.Leading());
  PutLease(*api_, "sched-1_b", clock_.Now());  // the Lease moved to the other pod
  e->elector.Tick();
  EXPECT_FALSE(e->elector.Leading()) << "stops at once, not at the deadline";
}

TEST(HolderIsIdentityTest, MatchesTheWholeIdentityOrItsKubeSchedulerForm) {
  struct Case {
    std::string_view holder, identity;
    bool want;
  };
  const std::vector<Case> cases = {
      {"pod-a", "pod-a", true},
      {"pod-a_1234-abcd", "pod-a", true},
      {"pod-ab_1234", "pod-a", false},
      {"pod-", "pod-a", false},
      {"", "pod-a", false},
      {"pod-a", "", false},
      {"pod-a-1_x", "pod-a", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HolderIsIdentity(c.holder, c.identity), c.want)
        << "holder '" << c.holder << "' identity '" << c.identity << "'";
  }
}

TEST(LeaderElectionOptionsTest, RefusesDurationsThatBreakTheFence) {
  struct Case {
    std::string name;
    LeaderElectionOptions options;
    bool ok;
  };
  auto with = [](auto change) {
    LeaderElectionOptions o = Acquire("a");
    change(o);
    return o;
  };
  const std::vector<Case> cases = {
      {"defaults", Acquire("a"), true},
      {"renew deadline = lease duration",
       with([](auto& o) { o.renew_deadline = o.lease_duration; }), false},
      {"retry period = renew deadline", with([](auto& o) { o.retry_period = o.renew_deadline; }),
       false},
      {"zero retry period", with([](auto& o) { o.retry_period = Duration::zero(); }), false},
      {"no identity", with([](auto& o) { o.identity.clear(); }), false},
      {"no Lease name", with([](auto& o) { o.lease_name.clear(); }), false},
      {"follow ignores lease duration", with([](auto& o) {
         o.mode = LeaderMode::kFollow;
         o.lease_duration = Duration::zero();
       }),
       true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ValidateLeaderElectionOptions(c.options).ok(), c.ok) << c.name;
  }
}

}  // namespace
}  // namespace muster::kube
