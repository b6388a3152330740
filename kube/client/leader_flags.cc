#include "kube/client/leader_flags.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

namespace muster::kube {
namespace {

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string RandomHex() {
  std::random_device device;
  char out[17];
  std::snprintf(out, sizeof out, "%08x%08x", device(), device());
  return out;
}

}  // namespace

Status ParseLeaseFlag(const std::string& value, LeaderElectionOptions* options) {
  const size_t slash = value.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == value.size() ||
      value.find('/', slash + 1) != std::string::npos) {
    return FlagError("leader-lease", "\"" + value + "\" is not NAMESPACE/NAME");
  }
  options->lease_namespace = value.substr(0, slash);
  options->lease_name = value.substr(slash + 1);
  return Status::Ok();
}

std::string LeaderFlagsUsage(const LeaderElectionOptions& defaults) {
  const bool follow = defaults.mode == LeaderMode::kFollow;
  std::string usage =
      "  --leader-elect BOOL        act only while leader (default false: always act)\n"
      "  --leader-lease NS/NAME     the Lease (default " +
      LeaseKey(defaults) + ")\n";
  if (follow) {
    usage +=
        "                             held by kube-scheduler: this replica leads while the\n"
        "                             holder is its own pod\n"
        "  --leader-identity ID       this pod's name (default: the hostname)\n";
  } else {
    usage +=
        "  --leader-identity ID       this process (default: hostname_<random>)\n"
        "  --leader-lease-duration D  a rival takes an unrenewed Lease after D (default " +
        FormatGoDuration(defaults.lease_duration) + ")\n";
  }
  usage += "  --leader-renew-deadline D  stop acting D after the last renewal (default " +
           FormatGoDuration(defaults.renew_deadline) +
           ")\n"
           "  --leader-retry-period D    between two reads of the Lease (default " +
           FormatGoDuration(defaults.retry_period) + ")\n";
  return usage;
}

Status FinishLeaderFlags(LeaderFlags* flags) {
  if (!flags->enabled) return Status::Ok();
  LeaderElectionOptions& options = flags->election;
  if (options.identity.empty()) {
    options.identity = Hostname();
    if (options.identity.empty()) return FlagError("leader-identity", "no hostname to default to");
    if (options.mode == LeaderMode::kAcquire) options.identity += "_" + RandomHex();
  }
  Status valid = ValidateLeaderElectionOptions(options);
  if (!valid.ok()) return FlagError("leader-renew-deadline", valid.message());
  return Status::Ok();
}

StatusOr<std::unique_ptr<Election>> Election::Start(const ClientConfig& config,
                                                    const LeaderElectionOptions& options) {
  ClientConfig lease_config = config;
  // One attempt per retry period, each short: a hung read must not outlast
  // the lead it is meant to renew.
  lease_config.timeout = std::max<Duration>(options.retry_period, options.renew_deadline / 3);
  lease_config.max_connections = 2;
  ClientOptions lease_options;
  lease_options.retry.max_attempts = 1;
  lease_options.field_manager = "muster-leader-election";
  StatusOr<std::unique_ptr<Client>> client = Client::New(lease_config, lease_options);
  if (!client.ok()) return client.status();
  std::unique_ptr<Election> election(new Election());
  election->client_ = std::move(client).value();
  election->store_ =
      NewKubeLeaseStore(election->client_.get(), options.lease_namespace, options.lease_name);
  election->elector_ =
      std::make_unique<LeaderElector>(election->store_.get(), RealClock(), options);
  election->elector_->Start();
  return election;
}

std::function<std::string()> RoleOf(const Election* election) {
  if (election == nullptr) return nullptr;
  return [election] { return std::string(election->Leading() ? "leader" : "standby"); };
}

Election::~Election() {
  if (elector_) elector_->Stop();
}

}  // namespace muster::kube
