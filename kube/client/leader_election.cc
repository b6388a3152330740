#include "kube/client/leader_election.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "kube/client/client.h"
#include "kube/client/resource_ref.h"
#include "kube/codec/lease_codec.h"

namespace muster::kube {
namespace {

class KubeLeaseStore final : public LeaseStore {
 public:
  KubeLeaseStore(Client* client, std::string ns, std::string name)
      : client_(client), ref_(LeaseRef(std::move(ns), std::move(name))) {}

  StatusOr<Lease> Get() override { return Decoded(client_->Get(ref_)); }
  StatusOr<Lease> Create(const Lease& lease) override {
    return Decoded(client_->Create(ref_.Collection(), EncodeLease(lease)));
  }
  StatusOr<Lease> Update(const Lease& lease) override {
    return Decoded(client_->Patch(ref_, PatchType::kMerge, EncodeLeaseUpdatePatch(lease)));
  }

 private:
  static StatusOr<Lease> Decoded(StatusOr<std::string> json) {
    if (!json.ok()) return json.status();
    return DecodeLease(*json);
  }

  Client* const client_;
  const ResourceRef ref_;
};

int32_t WholeSeconds(Duration d) {
  return static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

}  // namespace

std::unique_ptr<LeaseStore> NewKubeLeaseStore(Client* client, std::string ns, std::string name) {
  return std::make_unique<KubeLeaseStore>(client, std::move(ns), std::move(name));
}

Status ValidateLeaderElectionOptions(const LeaderElectionOptions& options) {
  auto invalid = [](std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  };
  if (options.lease_namespace.empty() || options.lease_name.empty()) {
    return invalid("leader election: the Lease needs a namespace and a name");
  }
  if (options.identity.empty()) return invalid("leader election: empty identity");
  if (options.retry_period <= Duration::zero()) {
    return invalid("leader election: retry period must be positive");
  }
  if (options.retry_period >= options.renew_deadline) {
    return invalid("leader election: retry period must be shorter than the renew deadline");
  }
  if (options.mode == LeaderMode::kAcquire && options.renew_deadline >= options.lease_duration) {
    return invalid("leader election: renew deadline must be shorter than the lease duration");
  }
  if (options.mode == LeaderMode::kAcquire && WholeSeconds(options.lease_duration) < 1) {
    return invalid("leader election: lease duration must be at least 1s");
  }
  return Status::Ok();
}

std::string LeaseKey(const LeaderElectionOptions& options) {
  return options.lease_namespace + "/" + options.lease_name;
}

bool HolderIsIdentity(std::string_view holder, std::string_view identity) {
  if (identity.empty() || !holder.starts_with(identity)) return false;
  return holder.size() == identity.size() || holder[identity.size()] == '_';
}

LeaderElector::LeaderElector(LeaseStore* store, const Clock& clock, LeaderElectionOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

LeaderElector::~LeaderElector() { Stop(); }

bool LeaderElector::Leading() const {
  return clock_.Now().unix_micros() < leading_until_us_.load();
}

std::string LeaderElector::LeaseHolder() const {
  base::MutexLock lock(&mu_);
  return holder_;
}

void LeaderElector::Lead(Time until) {
  leading_until_us_.store(until.unix_micros());
  if (clock_.Now() < until && !led_.exchange(true)) {
    spdlog::info("leader election: leading on Lease {} as {}", LeaseKey(options_),
                 options_.identity);
  }
}

void LeaderElector::Tick() {
  // The lead counts from before the read: a renewal the API confirms later
  // than sent must not extend the lead past what a rival allows.
  const Time now = clock_.Now();
  StatusOr<Lease> current = store_->Get();
  if (current.ok()) {
    base::MutexLock lock(&mu_);
    holder_ = current->holder_identity;
  }
  if (options_.mode == LeaderMode::kFollow) {
    TickFollow(current);
  } else {
    TickAcquire(now, std::move(current));
  }
}

void LeaderElector::TickFollow(const StatusOr<Lease>& current) {
  if (!current.ok()) {
    if (current.status().code() != StatusCode::kNotFound) {
      spdlog::warn("leader election: reading Lease {}: {}", LeaseKey(options_),
                   current.status().ToString());
      return;  // the lead, if any, runs out on its own
    }
    leading_until_us_.store(0);
    return;
  }
  if (!HolderIsIdentity(current->holder_identity, options_.identity) || !current->renew_time) {
    leading_until_us_.store(0);
    return;
  }
  Lead(*current->renew_time + options_.renew_deadline);
}

void LeaderElector::Observe(const Lease& lease, Time now) {
  if (!observed_ || !(*observed_ == lease)) {
    observed_ = lease;
    observed_at_ = now;
  }
}

void LeaderElector::CreateLease(Time now) {
  Lease lease;
  lease.meta.namespace_ = options_.lease_namespace;
  lease.meta.name = options_.lease_name;
  lease.holder_identity = options_.identity;
  lease.lease_duration_seconds = WholeSeconds(options_.lease_duration);
  lease.acquire_time = now;
  lease.renew_time = now;
  StatusOr<Lease> created = store_->Create(lease);
  if (!created.ok()) {
    spdlog::info("leader election: creating Lease {}: {}", LeaseKey(options_),
                 created.status().ToString());
    return;
  }
  {
    base::MutexLock lock(&mu_);
    Observe(*created, now);
    holder_ = created->holder_identity;
  }
  Lead(now + options_.renew_deadline);
}

void LeaderElector::TickAcquire(Time now, StatusOr<Lease> current) {
  if (!current.ok()) {
    if (current.status().code() == StatusCode::kNotFound) return CreateLease(now);
    spdlog::warn("leader election: reading Lease {}: {}", LeaseKey(options_),
                 current.status().ToString());
    return;
  }
  Lease next = *current;
  {
    base::MutexLock lock(&mu_);
    Observe(*current, now);
    const bool mine = current->holder_identity == options_.identity;
    const Duration held_for = std::chrono::seconds(current->lease_duration_seconds);
    if (!mine && !current->holder_identity.empty() && now < observed_at_ + held_for) {
      leading_until_us_.store(0);  // a rival holds it
      return;
    }
    if (!mine) {
      next.acquire_time = now;
      next.lease_transitions = current->lease_transitions + 1;
    }
  }
  next.holder_identity = options_.identity;
  next.lease_duration_seconds = WholeSeconds(options_.lease_duration);
  next.renew_time = now;
  StatusOr<Lease> written = store_->Update(next);
  if (!written.ok()) {
    spdlog::info("leader election: writing Lease {}: {}", LeaseKey(options_),
                 written.status().ToString());
    return;
  }
  {
    base::MutexLock lock(&mu_);
    Observe(*written, now);
    holder_ = written->holder_identity;
  }
  Lead(now + options_.renew_deadline);
}

void LeaderElector::Release() {
  if (options_.mode != LeaderMode::kAcquire || !Leading()) return;
  leading_until_us_.store(0);  // stop writing before the Lease says so
  Lease released;
  {
    base::MutexLock lock(&mu_);
    if (!observed_) return;
    released = *observed_;
  }
  const Time now = clock_.Now();
  released.holder_identity.clear();
  released.lease_duration_seconds = 1;
  released.acquire_time = now;
  released.renew_time = now;
  if (StatusOr<Lease> written = store_->Update(released); !written.ok()) {
    spdlog::warn("leader election: releasing Lease {}: {}", LeaseKey(options_),
                 written.status().ToString());
    return;
  }
  spdlog::info("leader election: released Lease {}", LeaseKey(options_));
}

void LeaderElector::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LeaderElector::Loop() {
  for (;;) {
    Tick();
    base::MutexLock lock(&mu_);
    const auto next = std::chrono::steady_clock::now() + options_.retry_period;
    while (!stop_ && wake_.WaitUntil(&mu_, next)) {
    }
    if (stop_) return;
  }
}

void LeaderElector::Stop() {
  {
    base::MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
  Release();
}

}  // namespace muster::kube
