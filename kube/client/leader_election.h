// Leader election on a coordination.k8s.io/v1 Lease: client-go's algorithm
// (k8s.io/client-go/tools/leaderelection/leaderelection.go), in two modes.
//
//  kAcquire  this process competes for the Lease and renews it every
//            retry_period (the reconciler). A rival takes an unreleased
//            Lease only after seeing it unchanged for its leaseDuration,
//            measured on the rival's own clock from when it saw the change.
//  kFollow   another process of the same pod holds the Lease: kube-scheduler
//            writes "<hostname>_<uuid>" (cmd/kube-scheduler/app/options).
//            This one leads while that holder is its own pod (identity, or
//            identity + "_...") and renewed within renew_deadline of the
//            holder's renewTime - written on the same node, so one clock
//            (the extender, which must act only beside the leading
//            kube-scheduler).
//
// Fencing: Leading() is a deadline, not a flag. It holds until
// renew_deadline after the start of the last confirmed renewal (kAcquire)
// or after the holder's renewTime (kFollow), however stuck the elector
// thread is; renew_deadline < lease_duration, so a deposed leader stops
// before any rival can take the Lease. Writers check it per request
// (kube::ClientOptions::write_fence). A process that led and no longer does
// is Deposed(): its in-memory state may be stale, and muster processes then
// exit and start again as a standby (as kube-scheduler does), re-deriving
// everything from the API.
//
// Thread-safety: Tick() and Release() from one thread at a time (the
// elector's own, after Start()); Leading(), Deposed() and LeaseSeen() from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/mutex.h"
#include "model/clock.h"
#include "model/lease.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::kube {

class Client;

// Where the Lease lives: the API (KubeLeaseStore) or a fake in tests.
// Implementations must be usable from the elector's thread.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  // The Lease; NotFound when it does not exist.
  virtual StatusOr<Lease> Get() = 0;
  // AlreadyExists when a rival created it first.
  virtual StatusOr<Lease> Create(const Lease& lease) = 0;
  // Replaces the spec; Conflict unless the Lease is still at
  // lease.meta.resource_version.
  virtual StatusOr<Lease> Update(const Lease& lease) = 0;
};

// The Lease `ns`/`name` through `client`, which must outlive the store and
// must not be write-fenced (the elector's own writes decide the fence).
std::unique_ptr<LeaseStore> NewKubeLeaseStore(Client* client, std::string ns, std::string name);

enum class LeaderMode { kAcquire, kFollow };

struct LeaderElectionOptions {
  LeaderMode mode = LeaderMode::kAcquire;
  std::string lease_namespace = "muster-system";
  std::string lease_name;
  // kAcquire: the holderIdentity written (unique per process). kFollow: the
  // pod's name (its hostname), which prefixes the holder's identity.
  std::string identity;
  // kAcquire: what a rival waits, unchanged, before taking the Lease.
  Duration lease_duration = std::chrono::seconds(8);
  // How long a lead lasts after its last confirmation. < lease_duration.
  Duration renew_deadline = std::chrono::seconds(6);
  // Between two attempts. < renew_deadline.
  Duration retry_period = std::chrono::seconds(1);
};

// InvalidArgument naming the first bad field: an empty name or identity, or
// durations out of order (retry_period < renew_deadline < lease_duration).
Status ValidateLeaderElectionOptions(const LeaderElectionOptions& options);

// "ns/name" of the options' Lease.
std::string LeaseKey(const LeaderElectionOptions& options);

// True when `holder` (a Lease's holderIdentity) is the process `identity`
// names: equal, or identity followed by '_' (kube-scheduler's
// "<hostname>_<uuid>").
bool HolderIsIdentity(std::string_view holder, std::string_view identity);

class LeaderElector {
 public:
  // `store` and `clock` must outlive the elector.
  // REQUIRES: ValidateLeaderElectionOptions(options) is OK.
  LeaderElector(LeaseStore* store, const Clock& clock, LeaderElectionOptions options);
  ~LeaderElector();  // Stop()s
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // One attempt: read the Lease, then create, take, renew or follow it.
  // Failed reads and writes leave the current lead to run out on its own.
  void Tick();
  // Gives the Lease up (kAcquire, while leading): Leading() ends first, then
  // the Lease is written with holder "" and a 1 s duration, so a standby
  // takes it at its next attempt. No-op otherwise.
  void Release();

  // Tick() every retry_period on a thread of its own.
  // REQUIRES: called at most once.
  void Start();
  // Ends the thread, then Release()s. Idempotent.
  void Stop();

  // May this process write now? Cheap: one clock read.
  bool Leading() const;
  // Led once, and does not now.
  bool Deposed() const { return led_.load() && !Leading(); }
  // The holder of the last Lease read ("" before any, or when released).
  std::string LeaseHolder() const;
  const LeaderElectionOptions& options() const { return options_; }

 private:
  void Loop() MUSTER_EXCLUDES(mu_);
  void TickAcquire(Time now, StatusOr<Lease> current);
  void TickFollow(const StatusOr<Lease>& current);
  void CreateLease(Time now);
  void Lead(Time until);
  void Observe(const Lease& lease, Time now) MUSTER_REQUIRES(mu_);

  LeaseStore* const store_;
  const Clock& clock_;
  const LeaderElectionOptions options_;
  std::atomic<int64_t> leading_until_us_{0};
  std::atomic<bool> led_{false};

  mutable base::Mutex mu_;
  std::string holder_ MUSTER_GUARDED_BY(mu_);
  // kAcquire: the Lease as last read or written, and when (this clock) it
  // was first seen as it is - the start of a rival's lease_duration.
  std::optional<Lease> observed_ MUSTER_GUARDED_BY(mu_);
  Time observed_at_ MUSTER_GUARDED_BY(mu_);

  base::CondVar wake_;
  bool stop_ MUSTER_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace muster::kube
