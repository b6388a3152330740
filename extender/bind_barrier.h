// A gang's binds let go together. A member's bind, once PlanBind has found it
// on its reservation and before its Binding is POSTed, waits here until every
// other member of its gang that holds a reservation and is not bound yet has
// reached bind too; then all of them are POSTed at once.
//
// Why: kube-scheduler runs one scheduling cycle per pod, so an extender's
// gang reaches bind member by member (a 100-pod gang in ~1.5 s, 8 pods in
// 50-300 ms), and the GPUs of the members bound first idle until the last one
// is. Kubernetes' own gang scheduling holds its members at the Permit stage
// (WaitOnPermit, pkg/scheduler/framework/runtime) and binds them together;
// an extender has no Permit, but kube-scheduler calls the bind verb from each
// pod's own binding goroutine, so holding the call holds no other pod's
// scheduling.
//
// A round (a gang's members held together) ends at the first of:
//   kAllArrived  no reserved, unbound member of the gang is missing;
//   kDeadline    BindBarrierOptions::max_hold after the round's first member
//                arrived: a member kube-scheduler has not reached (in backoff,
//                failed another filter) never keeps the others longer, and
//                the hold plus the POST stay inside kube-scheduler's extender
//                httpTimeout;
//   kCapacity    holding one more bind would hold more than `max_held` of
//                the server's workers (filter and prioritize must still be
//                served): the arriving member's round goes at once.
// A member that arrives after its round ended waits only for the members
// not seen at bind yet, so the late ones of a gang never wait for those
// already released.
//
// Thread-safety: thread-safe; Hold() blocks the calling thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "model/time.h"

namespace muster::extender {

enum class BarrierRelease { kAllArrived, kDeadline, kCapacity };
std::string_view BarrierReleaseName(BarrierRelease release);
inline constexpr std::array<std::string_view, 3> kBarrierReleases = {"all_arrived", "deadline",
                                                                     "capacity"};

struct BindBarrierOptions {
  // The longest a round holds its binds; zero turns the barrier off.
  Duration max_hold = std::chrono::milliseconds(1500);
  // Binds held at once, all gangs together (each holds a server worker).
  int max_held = 48;
};

// The pure rule: does the round end now, as member `held_after` (binds held
// by every round, this one included) arrives with `missing` members of its
// gang not seen at bind? nullopt: hold it.
std::optional<BarrierRelease> ReleaseOnArrival(int missing, int held_after,
                                               const BindBarrierOptions& options);

// What Hold() did, for the metrics.
struct BarrierOutcome {
  BarrierRelease release = BarrierRelease::kAllArrived;
  Duration held{0};  // how long this bind waited
};

class BindBarrier {
 public:
  explicit BindBarrier(BindBarrierOptions options);
  BindBarrier(const BindBarrier&) = delete;
  BindBarrier& operator=(const BindBarrier&) = delete;

  bool enabled() const { return options_.max_hold > Duration::zero(); }

  // Blocks until the round of `gang` that `pod_uid` joins ends. `reserved`:
  // the uids of the gang's members that hold a reservation and are not bound
  // (the pod's own may be among them). REQUIRES: enabled().
  BarrierOutcome Hold(std::string_view gang, std::string_view pod_uid,
                      const std::vector<std::string>& reserved) MUSTER_EXCLUDES(mu_);

  // Binds held now, all gangs together (for tests).
  int held() const MUSTER_EXCLUDES(mu_);

 private:
  using Clock = std::chrono::steady_clock;
  struct Round {
    Clock::time_point deadline;
    int held = 0;
    std::optional<BarrierRelease> ended;
  };
  struct GangEntry {
    std::set<std::string, std::less<>> seen;  // members that reached bind
    std::shared_ptr<Round> round;             // the one holding binds; null: none
    Clock::time_point last_arrival;
  };

  // Ends `entry`'s round for `why` and wakes its members.
  void End(GangEntry& entry, BarrierRelease why) MUSTER_REQUIRES(mu_);
  // Forgets gangs without a round and no arrival for a minute.
  void ForgetIdle(Clock::time_point now) MUSTER_REQUIRES(mu_);

  const BindBarrierOptions options_;
  mutable base::Mutex mu_;
  base::CondVar ended_;
  std::map<std::string, GangEntry, std::less<>> gangs_ MUSTER_GUARDED_BY(mu_);
  int held_ MUSTER_GUARDED_BY(mu_) = 0;
};

}  // namespace muster::extender
