#include "extender/bind_barrier.h"

#include <utility>

namespace muster::extender {

std::string_view BarrierReleaseName(BarrierRelease release) {
  return kBarrierReleases[static_cast<int>(release)];
}

std::optional<BarrierRelease> ReleaseOnArrival(int missing, int held_after,
                                               const BindBarrierOptions& options) {
  if (missing == 0) return BarrierRelease::kAllArrived;
  if (held_after > options.max_held) return BarrierRelease::kCapacity;
  return std::nullopt;
}

BindBarrier::BindBarrier(BindBarrierOptions options) : options_(options) {}

int BindBarrier::held() const {
  base::MutexLock lock(&mu_);
  return held_;
}

BarrierOutcome BindBarrier::Hold(std::string_view gang, std::string_view pod_uid,
                                 const std::vector<std::string>& reserved) {
  const Clock::time_point start = Clock::now();
  base::MutexLock lock(&mu_);
  ForgetIdle(start);
  auto it = gangs_.find(gang);
  if (it == gangs_.end()) it = gangs_.emplace(std::string(gang), GangEntry{}).first;
  GangEntry& entry = it->second;
  entry.seen.emplace(pod_uid);
  entry.last_arrival = start;
  int missing = 0;
  for (const std::string& uid : reserved) missing += entry.seen.contains(uid) ? 0 : 1;
  if (entry.round == nullptr) {
    entry.round = std::make_shared<Round>(Round{.deadline = start + options_.max_hold});
  }
  if (std::optional<BarrierRelease> why = ReleaseOnArrival(missing, held_ + 1, options_)) {
    End(entry, *why);
    return {.release = *why};
  }
  // Held: the entry stays in gangs_ while it has a round (ForgetIdle keeps
  // it), so `entry` outlives the wait; the round is shared, since a later
  // round of the same gang may start once this one ended.
  const std::shared_ptr<Round> round = entry.round;
  ++round->held;
  ++held_;
  while (!round->ended.has_value()) {
    if (!ended_.WaitUntil(&mu_, round->deadline) && !round->ended.has_value()) {
      End(entry, BarrierRelease::kDeadline);
    }
  }
  return {.release = *round->ended,
          .held = std::chrono::duration_cast<Duration>(Clock::now() - start)};
}

void BindBarrier::End(GangEntry& entry, BarrierRelease why) {
  entry.round->ended = why;
  held_ -= entry.round->held;
  entry.round.reset();
  ended_.SignalAll();
}

void BindBarrier::ForgetIdle(Clock::time_point now) {
  constexpr auto kIdle = std::chrono::minutes(1);
  std::erase_if(gangs_, [&](const auto& kv) {
    return kv.second.round == nullptr && now - kv.second.last_arrival > kIdle;
  });
}

}  // namespace muster::extender
