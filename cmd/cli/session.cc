#include "cmd/cli/session.h"

#include <cstdlib>
#include <ostream>

#include "kube/client/kubeconfig.h"

namespace muster::cli {
namespace {

// kubectl's order for the file when a context is asked for by name.
std::string KubeconfigPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    const std::string list = env;
    return list.substr(0, list.find(':'));
  }
  const char* home = std::getenv("HOME");
  return std::string(home == nullptr ? "" : home) + "/.kube/config";
}

StatusOr<kube::ClientConfig> LoadConfig(const Args& args) {
  const std::string flag = args.Get("kubeconfig");
  StatusOr<kube::ClientConfig> config =
      args.Has("context") ? kube::LoadKubeconfig(KubeconfigPath(flag), args.Get("context"))
                          : kube::ResolveConfig(flag);
  if (!config.ok() && config.status().code() == StatusCode::kNotFound) {
    return Status(StatusCode::kUnavailable,
                  "no cluster: " + config.status().message() +
                      " (set --kubeconfig or KUBECONFIG, as for kubectl)");
  }
  return config;
}

}  // namespace

int ExitCodeFor(const Status& error) {
  switch (error.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:  // a flag's value (ParseArgs, Session::Open)
      return error.message().rfind("flag ", 0) == 0 ? kExitUsage : kExitFailure;
    case StatusCode::kNotFound:
      return kExitNotFound;
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return kExitForbidden;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return kExitNoCluster;
    default:
      return kExitFailure;
  }
}

int Fail(Io& io, std::string_view command, const Status& error) {
  io.err << "muster " << command << ": " << error.message() << "\n";
  switch (error.code()) {
    case StatusCode::kPermissionDenied:
    case StatusCode::kUnauthenticated:
      io.err << "  your credentials may not do this: ask your cluster admin for a role "
                "(docs/operator-guide.md, \"The muster command line\")\n";
      break;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      io.err << "  is the cluster up? check --kubeconfig / --context\n";
      break;
    default:
      break;
  }
  return ExitCodeFor(error);
}

std::vector<FlagSpec> ConnectionFlags() {
  return {
      {.name = "namespace",
       .short_name = 'n',
       .value_name = "NS",
       .help = "the namespace (default: the context's, else default)"},
      {.name = "kubeconfig",
       .value_name = "FILE",
       .help = "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)"},
      {.name = "context", .value_name = "NAME", .help = "the kubeconfig context to use"},
      {.name = "request-timeout",
       .value_name = "DURATION",
       .help = "give up on an API call after this long",
       .default_value = "20s"},
  };
}

StatusOr<Session> Session::Open(const Args& args) {
  MUSTER_ASSIGN_OR_RETURN(kube::ClientConfig config, LoadConfig(args));
  StatusOr<Duration> timeout = ParseGoDuration(args.Get("request-timeout", "20s"));
  if (!timeout.ok() || *timeout <= Duration(0)) {
    return Status(StatusCode::kInvalidArgument, "flag --request-timeout: \"" +
                                                    args.Get("request-timeout") +
                                                    "\" is not a positive duration (e.g. 20s)");
  }
  config.timeout = *timeout;
  config.user_agent = "muster-cli";
  kube::ClientOptions options;
  options.retry.max_attempts = 2;
  options.field_manager = "muster-cli";
  MUSTER_ASSIGN_OR_RETURN(std::unique_ptr<kube::Client> client,
                          kube::Client::New(config, std::move(options)));
  Session session;
  session.ns_ = args.Get("namespace", config.default_namespace.empty() ? std::string("default")
                                                                       : config.default_namespace);
  session.config_ = std::move(config);
  session.client_ = std::move(client);
  return session;
}

}  // namespace muster::cli
