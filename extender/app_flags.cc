// `muster extender`'s flags: the table of setters, the checks of their
// combinations, and the usage text (extender/app.h).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "extender/app.h"
#include "model/flags.h"

namespace muster::extender {
namespace {

using Flags = ExtenderFlags;

// The flag setting a string of ServerOptions.
using ServerStringField = std::string ServerOptions::*;
FlagSetter<Flags> ServerString(ServerStringField field) {
  return StringInto<Flags>([field](Flags& f) -> std::string& { return f.server.*field; });
}

FlagTable<ExtenderFlags> Setters() {
  return FlagTable<ExtenderFlags>{
      {"listen", ServerString(&ServerOptions::listen_address)},
      {"prefix", ServerString(&ServerOptions::prefix)},
      {"tls-cert", ServerString(&ServerOptions::tls_cert_path)},
      {"tls-key", ServerString(&ServerOptions::tls_key_path)},
      {"client-ca", ServerString(&ServerOptions::client_ca_path)},
      {"webhook-listen",
       StringInto<Flags>([](Flags& f) -> auto& { return f.webhook.listen_address; })},
      {"webhook-cert", StringInto<Flags>([](Flags& f) -> auto& { return f.webhook.cert_path; })},
      {"webhook-key", StringInto<Flags>([](Flags& f) -> auto& { return f.webhook.key_path; })},
      {"webhook-port", IntInto<Flags, int>("webhook-port", 0, 65535,
                                           [](Flags& f) -> auto& { return f.webhook.port; })},
      {"kubeconfig", StringInto<Flags>([](Flags& f) -> auto& { return f.kubeconfig; })},
      {"metrics-listen", StringInto<Flags>([](Flags& f) -> auto& { return f.metrics_listen; })},
      {"metrics-port", IntInto<Flags, int>("metrics-port", 0, 65535,
                                           [](Flags& f) -> auto& { return f.metrics_port; })},
      {"port",
       IntInto<Flags, int>("port", 1, 65535, [](Flags& f) -> auto& { return f.server.port; })},
      {"max-body-bytes",
       IntInto<Flags, size_t>("max-body-bytes", 1, int64_t{1} << 40,
                              [](Flags& f) -> auto& { return f.server.max_body_bytes; })},
      {"max-head-bytes",
       IntInto<Flags, size_t>("max-head-bytes", 1024, int64_t{1} << 30,
                              [](Flags& f) -> auto& { return f.server.max_head_bytes; })},
      {"max-headers", IntInto<Flags, int>("max-headers", 1, 100000,
                                          [](Flags& f) -> auto& { return f.server.max_headers; })},
      {"request-deadline",
       DurationInto<Flags>("request-deadline", std::chrono::seconds(1),
                           [](Flags& f) -> auto& { return f.server.request_deadline; })},
      {"keep-alive-timeout",
       DurationInto<Flags>("keep-alive-timeout", std::chrono::seconds(1),
                           [](Flags& f) -> auto& { return f.server.keep_alive_timeout; })},
      {"max-connections",
       IntInto<Flags, int>("max-connections", 1, 1000000,
                           [](Flags& f) -> auto& { return f.server.max_connections; })},
      {"max-connections-per-client",
       IntInto<Flags, int>("max-connections-per-client", 1, 1000000,
                           [](Flags& f) -> auto& { return f.server.max_connections_per_client; })},
      {"kube-api-qps", IntInto<Flags, double>("kube-api-qps", 1, 100000,
                                              [](Flags& f) -> auto& { return f.kube_api_qps; })},
      {"kube-api-burst", IntInto<Flags, int>("kube-api-burst", 1, 100000,
                                             [](Flags& f) -> auto& { return f.kube_api_burst; })},
      {"managed-resource",
       [](const std::string& v, ExtenderFlags& f) {
         if (v.empty()) return FlagError("managed-resource", "empty resource name");
         f.policy.extra_managed_resources.push_back(v);
         return Status::Ok();
       }},
      {"scheduler-name",
       [](const std::string& v, ExtenderFlags& f) {
         if (v.empty()) return FlagError("scheduler-name", "empty scheduler name");
         // The first --scheduler-name replaces the default.
         if (!f.scheduler_names_given) f.policy.gang_schedulers.clear();
         f.scheduler_names_given = true;
         f.policy.gang_schedulers.push_back(v);
         return Status::Ok();
       }},
      {"gang-reservation-timeout",
       DurationInto<Flags>("gang-reservation-timeout", std::chrono::seconds(1),
                           [](Flags& f) -> auto& { return f.gang.pass.reservation_timeout; })},
      {"gang-head-of-line-after",
       DurationInto<Flags>("gang-head-of-line-after", Duration::zero(),
                           [](Flags& f) -> auto& { return f.gang.pass.head_of_line_after; })},
      {"gang-settle-quiet",
       DurationInto<Flags>("gang-settle-quiet", Duration::zero(),
                           [](Flags& f) -> auto& { return f.gang.settle.quiet; })},
      {"gang-settle-max", DurationInto<Flags>("gang-settle-max", std::chrono::milliseconds(1),
                                              [](Flags& f) -> auto& { return f.gang.settle.max; })},
      {"gang-bind-hold",
       DurationInto<Flags>("gang-bind-hold", Duration::zero(),
                           [](Flags& f) -> auto& { return f.server.gang_bind_hold; })},
      {"gang-preemption",
       BoolInto<Flags>("gang-preemption",
                       [](Flags& f) -> auto& { return f.gang.pass.preemption; })},
      {"queue-reclaim",
       BoolInto<Flags>("queue-reclaim", [](Flags& f) -> auto& { return f.gang.pass.reclaim; })},
      {"queue-reclaim-after",
       DurationInto<Flags>("queue-reclaim-after", Duration::zero(),
                           [](Flags& f) -> auto& { return f.gang.reclaim.after; })},
      {"network-tiers",
       [](const std::string& v, ExtenderFlags& f) {
         topology::ParsedTiers parsed = topology::ParseNetworkTiers(v);
         if (!parsed.tiers) return FlagError("network-tiers", parsed.error);
         f.gang.network_tiers = *std::move(parsed.tiers);
         return Status::Ok();
       }},
      {"gpu-topology-profiles",
       [](const std::string& v, ExtenderFlags& f) {
         std::ifstream in(v);
         if (!in) return FlagError("gpu-topology-profiles", "cannot read \"" + v + "\"");
         std::stringstream text;
         text << in.rdbuf();
         StatusOr<GpuProfiles> profiles = ParseGpuProfiles(text.str());
         if (!profiles.ok()) return FlagError("gpu-topology-profiles", profiles.status().message());
         f.gpu_profiles = *std::move(profiles);
         return Status::Ok();
       }},
      {"queue-reclaim-cooldown",
       DurationInto<Flags>("queue-reclaim-cooldown", Duration::zero(),
                           [](Flags& f) -> auto& { return f.gang.reclaim.cooldown; })},
      {"score-mode",
       [](const std::string& v, ExtenderFlags& f) {
         if (v == "binpack") {
           f.policy.score_strategy = ScoreStrategy::kBinpack;
         } else if (v == "spread") {
           f.policy.score_strategy = ScoreStrategy::kSpread;
         } else {
           return FlagError("score-mode", "\"" + v + "\" is not binpack or spread");
         }
         return Status::Ok();
       }},
  };
}

const FlagTable<ExtenderFlags>& AllSetters() {
  static const auto* setters = [] {
    auto* table = new FlagTable<ExtenderFlags>(Setters());
    kube::AddLeaderFlags<Flags>(*table, [](Flags& f) -> kube::LeaderFlags& { return f.leader; });
    return table;
  }();
  return *setters;
}

Status CheckCombination(const ExtenderFlags& flags) {
  if (flags.server.tls_cert_path.empty() != flags.server.tls_key_path.empty()) {
    return FlagError(flags.server.tls_cert_path.empty() ? "tls-cert" : "tls-key",
                     "--tls-cert and --tls-key go together");
  }
  if (!flags.server.client_ca_path.empty() && flags.server.tls_cert_path.empty()) {
    return FlagError("client-ca", "needs --tls-cert and --tls-key");
  }
  StatusOr<std::string> prefix = NormalizePrefix(flags.server.prefix);
  if (!prefix.ok()) return FlagError("prefix", prefix.status().message());
  const bool webhook_tls = !flags.webhook.cert_path.empty() && !flags.webhook.key_path.empty();
  if (flags.webhook.port != 0 && !webhook_tls) {
    return FlagError("webhook-port", "needs --webhook-cert and --webhook-key");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ExtenderFlags> ParseExtenderFlags(const std::vector<std::string>& args) {
  ExtenderFlags flags;
  MUSTER_RETURN_IF_ERROR(ParseFlagArgs(args, AllSetters(), flags, &flags.help));
  MUSTER_RETURN_IF_ERROR(CheckCombination(flags));
  if (!flags.help) MUSTER_RETURN_IF_ERROR(kube::FinishLeaderFlags(&flags.leader));
  return flags;
}

namespace {

// The policy flags' part of the usage: gangs, queues, topology.
std::string PolicyUsage() {
  return "  --managed-resource NAME    fit this resource too, besides nvidia.com/gpu (repeatable)\n"
         "  --score-mode MODE          binpack (default) or spread\n"
         "  --scheduler-name NAME      a schedulerName muster's profile serves: its pods that\n"
         "                             name no PodGroup are each in Volcano's PodGroup of one,\n"
         "                             in a queue (repeatable; default volcano)\n"
         "  --gang-reservation-timeout D  release a gang's unclaimed reservations after D\n"
         "                             without progress (default 60s)\n"
         "  --gang-head-of-line-after D  keep nodes draining for the first waiting gang once\n"
         "                             it is D old (default 10s)\n"
         "  --gang-settle-quiet D      while capacity is being freed and a gang waits for it,\n"
         "                             hold new gang plans until nothing was freed for D\n"
         "                             (default 300ms; 0s: plan at once)\n"
         "  --gang-settle-max D        hold them at most D from the first capacity freed\n"
         "                             (default 1.5s)\n"
         "  --gang-bind-hold D         hold a gang member's bind until the gang's other\n"
         "                             reserved members reach bind, at most D, then POST\n"
         "                             them together (default 1.5s; 0s: bind each at once;\n"
         "                             D + 3.3s must stay below the scheduler's httpTimeout)\n"
         "  --gang-preemption BOOL     evict whole lower-priority gangs for a gang that does\n"
         "                             not fit (default true)\n"
         "  --queue-reclaim BOOL       evict whole gangs of queues above their deserved share\n"
         "                             for a queue below its own (default true)\n"
         "  --queue-reclaim-after D    reclaim only for a queue below its share for D (default "
         "5s)\n"
         "  --queue-reclaim-cooldown D a queue spares one that reclaimed from it for D (default "
         "60s)\n"
         "  --network-tiers LEVELS     network levels top to bottom, name=node-label-key joined "
         "by\n"
         "                             commas (e.g. "
         "zone=topology.kubernetes.io/zone,rack=net/rack):\n"
         "                             gangs are packed into the lowest level that holds them\n"
         "  --gpu-topology-profiles FILE  GPU topologies by model (JSON, docs/topology.md) for\n"
         "                             nodes without the muster.io/gpu-topology annotation\n";
}

}  // namespace

std::string ExtenderUsage() {
  return "usage: muster extender [flags]\n"
         "  --listen ADDR              listen address (default 127.0.0.1)\n"
         "  --port N                   listen port (default 8888)\n"
         "  --metrics-port N           also serve /metrics, /healthz, /readyz and /debug/state\n"
         "                             (no verbs) on this port (default 0: only on --port)\n"
         "  --metrics-listen ADDR      the address of --metrics-port (default 0.0.0.0)\n"
         "  --prefix PATH              URL prefix of the verbs (default /scheduler)\n"
         "  --kubeconfig PATH          kubeconfig (default: $KUBECONFIG, in-cluster, "
         "~/.kube/config)\n"
         "  --tls-cert PATH            serve HTTPS with this certificate (with --tls-key)\n"
         "  --tls-key PATH             the certificate's private key\n"
         "  --client-ca PATH           require client certificates signed by this CA\n"
         "  --webhook-port N           serve the pods' mutating admission webhook on HTTPS\n"
         "                             (POST /mutate-pods; default 0: none): members of a\n"
         "                             Volcano PodGroup get the muster.io/gang gate at creation\n"
         "  --webhook-listen ADDR      the webhook's address (default 0.0.0.0)\n"
         "  --webhook-cert PATH        its serving certificate (PEM; required with the port)\n"
         "  --webhook-key PATH         the certificate's private key\n"
         "  --max-body-bytes N         request body limit (default 16777216)\n"
         "  --max-head-bytes N         request line + headers limit, 431 over it (default 65536)\n"
         "  --max-headers N            header count limit, 431 over it (default 100)\n"
         "  --request-deadline D       first byte to last body byte of a request, 408 past it\n"
         "                             (default 30s)\n"
         "  --keep-alive-timeout D     close a connection idle this long (default 5s)\n"
         "  --max-connections N        open connections (default 512); over it the longest idle\n"
         "                             one is closed, or the newcomer gets 503\n"
         "  --max-connections-per-client N  the same, per client address (default 256)\n"
         "  --kube-api-qps N           API requests per second, per client (default 50)\n"
         "  --kube-api-burst N         API request burst, per client (default 100)\n" +
         PolicyUsage() + kube::LeaderFlagsUsage(DefaultLeaderFlags().election);
}

kube::LeaderFlags DefaultLeaderFlags() {
  return kube::LeaderFlags{.enabled = false,
                           .election = {.mode = kube::LeaderMode::kFollow,
                                        .lease_namespace = "muster-system",
                                        .lease_name = "volcano-scheduler"}};
}
}  // namespace muster::extender
