// ClientConfig and where it comes from: a kubeconfig file, the in-cluster
// service account, or the usual lookup order of kubectl.
//
// Credentials are held in memory as PEM text; files named by a kubeconfig are
// read once here (relative paths resolve against the kubeconfig's own
// folder, as kubectl does). Exec plugins and auth-provider users are not
// supported and are reported as Unimplemented.
//
// Errors name the file and the field, e.g. `kubeconfig /home/u/.kube/config:
// users[admin].user.client-key-data: invalid base64`.
//
// Thread-safety: stateless functions; ClientConfig is a value.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "model/status.h"
#include "model/time.h"

namespace muster::kube {

struct ClientConfig {
  std::string server;  // "https://host:port" (or "http://host:port" in tests), optional path prefix
  std::string ca_pem;  // trusted CA bundle; "" means the system defaults
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;
  // When set, the token is re-read from this file at most once a minute
  // (projected service-account tokens rotate); bearer_token is its first value.
  std::string bearer_token_file;
  bool insecure_skip_tls_verify = false;
  double qps = 50;
  int burst = 100;
  Duration timeout = std::chrono::seconds(30);  // connect/read/write timeout of normal requests
  // Keep-alive connections for normal requests (HTTP/1.1: one request in
  // flight each); more concurrent requests wait for one. Watches have their own.
  int max_connections = 8;
  // A pooled connection idle longer than this is assumed closed by the server
  // (HttpTransport::Prewarm refreshes it); below kube-apiserver's 90 s idle
  // timeout.
  Duration connection_fresh_for = std::chrono::seconds(60);
  std::string user_agent = "muster/0.1";
  std::string default_namespace;  // the context's namespace (in-cluster: the pod's)
};

// Reads an environment variable; nullopt when unset. Injected for tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnv();

// Loads `path`. `context` "" means the file's current-context.
StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The service-account config of a pod: KUBERNETES_SERVICE_HOST/PORT and
// <root_dir>/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}.
// `root_dir` is "/" in production and a temporary folder in tests.
StatusOr<ClientConfig> LoadInClusterConfig(const std::string& root_dir = "/",
                                           const EnvLookup& env = ProcessEnv());

// kubectl's order: the --kubeconfig flag, then $KUBECONFIG (the first entry
// of a colon-separated list), then the in-cluster config when
// KUBERNETES_SERVICE_HOST is set, then $HOME/.kube/config. NotFound when
// none applies.
StatusOr<ClientConfig> ResolveConfig(const std::string& flag_kubeconfig,
                                     const EnvLookup& env = ProcessEnv(),
                                     const std::string& root_dir = "/");

// Reads a whole file. NotFound when it does not exist.
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace muster::kube
