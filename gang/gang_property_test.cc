// Property test of RunPass as a controller would drive it: random clusters
// and gangs arrive over time; each pass's plans are reserved, reservations
// bind (or get stuck and expire), preemptions evict whole gangs, running
// gangs finish. After every step: no gang holds part of its minimum, no node
// is overcommitted, and waits say "never fits" exactly for the gangs that do
// not fit an empty cluster. At the end every gang that fits an empty
// cluster has run. Seeds are fixed, so a failure replays.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gang/feasibility.h"
#include "gang/gang.h"
#include "gang/testing/builders.h"
#include "gang/testing/random.h"
#include "model/testing/builders.h"

namespace muster::gang {
namespace {

using muster::test::MakeNode;
using muster::test::MakePod;
using test::GangBuilder;
using test::MakeGang;
using test::MakeView;
using test::Rng;
using test::VictimsOf;

// The unit tier (optimised) runs 2000 random clusters in about 3 s. Under
// ASan+UBSan (Debug) each case costs ~30 times more: 2000 took 107 s against
// the test's 120 s timeout and timed out once CI shared the cores; the
// sanitizer tier is there for memory errors, which 200 cases exercise.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kCases = 200;
#else
constexpr int kCases = 2000;
#endif
constexpr int kMaxSteps = 400;
const Duration kStep = std::chrono::seconds(10);

std::vector<Node> RandomNodes(Rng& rng) {
  std::vector<Node> nodes;
  const int count = rng.Int(1, 12);
  for (int i = 0; i < count; ++i) {
    const int64_t gpus = int64_t{1} << rng.Int(1, 3);  // 2, 4 or 8
    const std::string name = "n" + std::to_string(10 + i);
    nodes.push_back(MakeNode(name).Cpu("32").Memory("256Gi").Gpu(gpus).Pods(110));
  }
  return nodes;
}

// Mostly uniform gangs, some with one odd-sized member, as real jobs are.
Gang RandomGang(Rng& rng, int index) {
  const std::string name = "g" + std::to_string(index);
  const int members = rng.Int(1, 8);
  const int gpus = rng.Int(1, 8);
  GangBuilder b = MakeGang(name).MinMember(rng.Int(1, members)).Priority(rng.Int(0, 2));
  for (int m = 0; m < members; ++m) {
    const int g = rng.Chance(20) ? rng.Int(1, 8) : gpus;
    b.Pending(MakePod(name + "-" + std::to_string(m)).Cpu("1").Gpu(g));
  }
  return b;
}

int32_t PlacedCount(const Gang& gang) {
  int32_t n = 0;
  for (const Member& m : gang.members) n += HoldsNode(m) ? 1 : 0;
  return n;
}

struct Sim {
  std::vector<Node> nodes;
  std::vector<Gang> arrivals;  // not yet arrived, in arrival order
  std::vector<Gang> active;    // arrived and not finished
  std::vector<bool> stuck;     // per active gang: its reservation never binds
  std::map<std::string, bool> fits_empty;
  std::vector<std::string> finished;  // keys, in finishing order
  Time now = Time::FromUnixSeconds(1'000'000);
};

Gang* Find(Sim& sim, const std::string& key) {
  for (Gang& g : sim.active) {
    if (g.key == key) return &g;
  }
  return nullptr;
}

void Arrive(Sim& sim, Rng& rng) {
  if (sim.arrivals.empty() || (!sim.active.empty() && !rng.Chance(40))) return;
  Gang gang = std::move(sim.arrivals.front());
  sim.arrivals.erase(sim.arrivals.begin());
  gang.created = sim.now;
  sim.active.push_back(std::move(gang));
  sim.stuck.push_back(false);
}

void ApplyExpired(Sim& sim, const PassResult& r) {
  for (const std::string& key : r.expired) {
    Gang* gang = Find(sim, key);
    ASSERT_NE(gang, nullptr);
    for (Member& m : gang->members.Edit()) {
      if (m.state != MemberState::kReserved) continue;
      m.state = MemberState::kPending;
      m.node.clear();
    }
    gang->reserved_since.reset();
    sim.stuck[gang - sim.active.data()] = false;
  }
}

void ApplyPlans(Sim& sim, Rng& rng, const PassResult& r) {
  for (const GangPlan& plan : r.plans) {
    Gang* gang = Find(sim, plan.key);
    ASSERT_NE(gang, nullptr);
    const bool nothing_bound = PlacedCount(*gang) == 0;
    for (const Assignment& a : plan.reserve) {
      const MemberList::Editor members = gang->members.Edit();
      auto m = std::ranges::find_if(*members,
                                    [&](const Member& x) { return x.pod->meta.uid == a.pod_uid; });
      ASSERT_NE(m, members.end());
      ASSERT_EQ(m->state, MemberState::kPending) << a.pod_name;
      m->state = MemberState::kReserved;
      m->node = a.node;
    }
    gang->reserved_since = sim.now;
    // Only a gang with nothing bound may get stuck: its expiry then returns
    // it to zero, the all-or-nothing state the controller also relies on.
    if (nothing_bound && rng.Chance(10)) sim.stuck[gang - sim.active.data()] = true;
  }
}

// The controller evicts whole victim gangs; their job controller recreates
// the pods, pending again.
void ApplyPreemption(Sim& sim, const PassResult& r) {
  if (!r.preemption) return;
  const Gang* preemptor = Find(sim, r.preemption->preemptor);
  ASSERT_NE(preemptor, nullptr);
  for (const std::string& key : r.preemption->victims) {
    Gang* victim = Find(sim, key);
    ASSERT_NE(victim, nullptr);
    ASSERT_LT(victim->priority, preemptor->priority);
    for (Member& m : victim->members.Edit()) {
      m.state = MemberState::kPending;
      m.node.clear();
    }
    victim->reserved_since.reset();
    sim.stuck[victim - sim.active.data()] = false;
  }
}

// kube-scheduler binds a random non-empty part of each reservation per step,
// so a live reservation always progresses within the timeout.
void Bind(Sim& sim, Rng& rng) {
  for (size_t i = 0; i < sim.active.size(); ++i) {
    Gang& gang = sim.active[i];
    if (sim.stuck[i]) continue;
    bool bound_any = false;
    bool left = false;
    for (Member& m : gang.members.Edit()) {
      if (m.state != MemberState::kReserved) continue;
      if (!bound_any || rng.Chance(60)) {
        m.state = MemberState::kBound;
        bound_any = true;
      } else {
        left = true;
      }
    }
    if (bound_any) gang.reserved_since = left ? std::optional<Time>(sim.now) : std::nullopt;
  }
}

void Finish(Sim& sim, Rng& rng) {
  for (size_t i = 0; i < sim.active.size();) {
    const Gang& gang = sim.active[i];
    const bool running = std::ranges::count(gang.members, MemberState::kBound, &Member::state) >=
                         gang.spec.min_member;
    if (running && rng.Chance(25)) {
      sim.finished.push_back(gang.key);
      sim.active.erase(sim.active.begin() + static_cast<ptrdiff_t>(i));
      sim.stuck.erase(sim.stuck.begin() + static_cast<ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void CheckState(const Sim& sim, int step) {
  for (const Gang& gang : sim.active) {
    const int32_t placed = PlacedCount(gang);
    ASSERT_FALSE(placed > 0 && placed < gang.spec.min_member)
        << gang.key << " holds " << placed << " of minMember " << gang.spec.min_member
        << " at step " << step;
  }
  for (const NodeView& node : MakeView(sim.nodes, sim.active).nodes) {
    for (const auto& [name, amount] : node.free.entries()) {
      ASSERT_GE(amount, 0) << node.name() << " " << name << " at step " << step;
    }
  }
}

void CheckWaits(const Sim& sim, const PassResult& r) {
  for (const Wait& wait : r.waits) {
    ASSERT_NE(wait.reason, kWaitMembers) << wait.key;  // every member exists here
    const bool never = wait.reason == kWaitNeverFits;
    ASSERT_EQ(never, !sim.fits_empty.at(wait.key)) << wait.key << ": " << wait.message;
  }
}

bool Done(const Sim& sim) {
  if (!sim.arrivals.empty()) return false;
  return std::ranges::none_of(sim.active, [&](const Gang& g) { return sim.fits_empty.at(g.key); });
}

Sim NewSim(Rng& rng) {
  Sim sim;
  sim.nodes = RandomNodes(rng);
  const ClusterView empty = MakeView(sim.nodes);
  const int gangs = rng.Int(1, 8);
  for (int i = 0; i < gangs; ++i) {
    Gang gang = RandomGang(rng, i);
    const bool fits = std::holds_alternative<GangPlan>(PlanGang(gang, empty));
    sim.fits_empty[gang.key] = fits;
    sim.arrivals.push_back(std::move(gang));
  }
  return sim;
}

void RunCase(uint32_t seed) {
  Rng rng(seed);
  Sim sim = NewSim(rng);
  PassConfig config;  // 60 s timeout: a stuck reservation expires after 6 steps
  int step = 0;
  for (; step < kMaxSteps && !Done(sim); ++step) {
    Arrive(sim, rng);
    const PassResult r = RunPass(MakeView(sim.nodes, sim.active), sim.active, VictimsOf(sim.active),
                                 sim.now, config);
    ASSERT_NO_FATAL_FAILURE(CheckWaits(sim, r));
    ASSERT_NO_FATAL_FAILURE(ApplyExpired(sim, r));
    ASSERT_NO_FATAL_FAILURE(ApplyPlans(sim, rng, r));
    ASSERT_NO_FATAL_FAILURE(ApplyPreemption(sim, r));
    ASSERT_NO_FATAL_FAILURE(CheckState(sim, step));
    Bind(sim, rng);
    Finish(sim, rng);
    ASSERT_NO_FATAL_FAILURE(CheckState(sim, step));
    sim.now = sim.now + kStep;
  }
  for (const auto& [key, fits] : sim.fits_empty) {
    if (!fits) continue;
    EXPECT_NE(std::ranges::find(sim.finished, key), sim.finished.end()) << key;
  }
  EXPECT_LT(step, kMaxSteps);
}

TEST(GangPropertyTest, RandomClustersNeverHoldPartialGangsAndEveryFittingGangRuns) {
  for (uint32_t seed = 1; seed <= kCases; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RunCase(seed);
    if (HasFatalFailure() || HasNonfatalFailure()) return;  // one replayable seed is enough
  }
}

}  // namespace
}  // namespace muster::gang
