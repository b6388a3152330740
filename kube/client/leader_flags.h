// The leader-election flags both sidecars take, and the election they
// start: `muster extender` follows kube-scheduler's Lease (kFollow),
// `muster reconciler` holds a Lease of its own (kAcquire).
//
//   --leader-elect BOOL        elect (default false: this replica always acts)
//   --leader-lease NS/NAME     the Lease
//   --leader-identity ID       kFollow: the pod's name; kAcquire: this process
//   --leader-lease-duration D, --leader-renew-deadline D, --leader-retry-period D
//
// Thread-compatible (flag parsing happens once, at start).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kube/client/client.h"
#include "kube/client/leader_election.h"
#include "model/flags.h"

namespace muster::kube {

struct LeaderFlags {
  bool enabled = false;
  LeaderElectionOptions election;
};

// "ns/name" into the options' Lease, or FlagError naming --leader-lease.
Status ParseLeaseFlag(const std::string& value, LeaderElectionOptions* options);

// Registers the --leader-* flags in `table`, setting field(flags).
template <typename Flags>
void AddLeaderFlags(FlagTable<Flags>& table, FlagField<Flags, LeaderFlags> field) {
  auto options = [field](Flags& f) -> LeaderElectionOptions& { return field(f).election; };
  table["leader-elect"] =
      BoolInto<Flags>("leader-elect", [field](Flags& f) -> bool& { return field(f).enabled; });
  table["leader-lease"] = [options](const std::string& v, Flags& f) {
    return ParseLeaseFlag(v, &options(f));
  };
  table["leader-identity"] = [options](const std::string& v, Flags& f) {
    if (v.empty()) return FlagError("leader-identity", "empty identity");
    options(f).identity = v;
    return Status::Ok();
  };
  table["leader-lease-duration"] =
      DurationInto<Flags>("leader-lease-duration", std::chrono::seconds(1),
                          [options](Flags& f) -> Duration& { return options(f).lease_duration; });
  table["leader-renew-deadline"] =
      DurationInto<Flags>("leader-renew-deadline", std::chrono::milliseconds(100),
                          [options](Flags& f) -> Duration& { return options(f).renew_deadline; });
  table["leader-retry-period"] =
      DurationInto<Flags>("leader-retry-period", std::chrono::milliseconds(100),
                          [options](Flags& f) -> Duration& { return options(f).retry_period; });
}

// The usage lines of the --leader-* flags, with `defaults`' values.
std::string LeaderFlagsUsage(const LeaderElectionOptions& defaults);

// With --leader-elect: fills a missing identity - the hostname (a pod's
// name; kFollow), or hostname_<random hex> (unique per process; kAcquire) -
// and validates the options (FlagError naming the flag at fault).
Status FinishLeaderFlags(LeaderFlags* flags);

// A running election: its own API client (never write-fenced: its writes
// are what the fence is about), the Lease store and the elector's thread.
class Election {
 public:
  // Starts electing on `config`'s API server.
  // REQUIRES: ValidateLeaderElectionOptions(options) is OK.
  static StatusOr<std::unique_ptr<Election>> Start(const ClientConfig& config,
                                                   const LeaderElectionOptions& options);
  ~Election();  // stops the elector (a leading kAcquire replica releases)

  bool Leading() const { return elector_->Leading(); }
  bool Deposed() const { return elector_->Deposed(); }
  std::string LeaseHolder() const { return elector_->LeaseHolder(); }
  const LeaderElectionOptions& options() const { return elector_->options(); }

 private:
  Election() = default;
  std::unique_ptr<Client> client_;
  std::unique_ptr<LeaseStore> store_;
  std::unique_ptr<LeaderElector> elector_;  // last: stopped before the store goes
};

// For /readyz's body: "leader" or "standby" while `election` runs; null
// (no role named) without an election. `election` must outlive the function.
std::function<std::string()> RoleOf(const Election* election);

}  // namespace muster::kube
