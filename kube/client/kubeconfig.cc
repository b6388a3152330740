#include "kube/client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "kube/client/pem.h"

namespace muster::kube {
namespace {

constexpr char kServiceAccountDir[] = "var/run/secrets/kubernetes.io/serviceaccount";

// Where a kubeconfig value came from, for error messages and relative paths.
struct Source {
  std::string file;  // the kubeconfig path as given
  std::filesystem::path dir;

  Status Error(StatusCode code, const std::string& field, const std::string& what) const {
    return Status(code, "kubeconfig " + file + ": " + field + ": " + what);
  }
  std::string Resolve(const std::string& path) const {
    std::filesystem::path p(path);
    return p.is_absolute() ? p.string() : (dir / p).lexically_normal().string();
  }
};

// Token files usually end with a newline, which must not reach the header.
std::string TrimTrailingSpace(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// The scalar at `key` of map `node`; "" when absent or null. yaml-cpp throws
// on a non-scalar, which the boundary in LoadKubeconfig turns into a Status.
std::string ScalarOf(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || value.IsNull()) return "";
  return value.as<std::string>();
}

// The inner map of the entry named `name` in a kubeconfig list such as
// `clusters: [{name: x, cluster: {...}}]`.
StatusOr<YAML::Node> FindNamed(const Source& src, const YAML::Node& root, const char* list,
                               const char* inner, const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (entry.IsMap() && ScalarOf(entry, "name") == name) {
        const YAML::Node value = entry[inner];
        if (!value || !value.IsMap()) {
          return src.Error(StatusCode::kInvalidArgument,
                           std::string(list) + "[" + name + "]." + inner, "missing or not a map");
        }
        return value;
      }
    }
  }
  return src.Error(StatusCode::kNotFound, list, "no entry named \"" + name + "\"");
}

// Reads `<key>-data` (base64) or `<key>` (a file path) into *out.
Status ReadDataOrFile(const Source& src, const YAML::Node& node, const std::string& field,
                      const std::string& key, std::string* out) {
  const std::string data = ScalarOf(node, (key + "-data").c_str());
  if (!data.empty()) {
    StatusOr<std::string> decoded = DecodeBase64(data);
    if (!decoded.ok()) {
      return src.Error(StatusCode::kInvalidArgument, field + "." + key + "-data",
                       decoded.status().message());
    }
    *out = std::move(decoded).value();
    return Status::Ok();
  }
  const std::string path = ScalarOf(node, key.c_str());
  if (path.empty()) return Status::Ok();
  StatusOr<std::string> text = ReadFileToString(src.Resolve(path));
  if (!text.ok())
    return src.Error(text.status().code(), field + "." + key, text.status().message());
  *out = std::move(text).value();
  return Status::Ok();
}

Status ApplyCluster(const Source& src, const YAML::Node& cluster, const std::string& field,
                    ClientConfig* config) {
  config->server = ScalarOf(cluster, "server");
  if (config->server.empty()) {
    return src.Error(StatusCode::kInvalidArgument, field + ".server", "missing");
  }
  const YAML::Node insecure = cluster["insecure-skip-tls-verify"];
  if (insecure && !insecure.IsNull()) config->insecure_skip_tls_verify = insecure.as<bool>();
  return ReadDataOrFile(src, cluster, field, "certificate-authority", &config->ca_pem);
}

Status ApplyToken(const Source& src, const YAML::Node& user, const std::string& field,
                  ClientConfig* config) {
  config->bearer_token = ScalarOf(user, "token");
  const std::string token_file = ScalarOf(user, "tokenFile");
  if (!config->bearer_token.empty() || token_file.empty()) return Status::Ok();
  config->bearer_token_file = src.Resolve(token_file);
  StatusOr<std::string> token = ReadFileToString(config->bearer_token_file);
  if (!token.ok()) {
    return src.Error(token.status().code(), field + ".tokenFile", token.status().message());
  }
  config->bearer_token = TrimTrailingSpace(std::move(token).value());
  return Status::Ok();
}

Status ApplyUser(const Source& src, const YAML::Node& user, const std::string& field,
                 ClientConfig* config) {
  MUSTER_RETURN_IF_ERROR(
      ReadDataOrFile(src, user, field, "client-certificate", &config->client_cert_pem));
  MUSTER_RETURN_IF_ERROR(ReadDataOrFile(src, user, field, "client-key", &config->client_key_pem));
  if (config->client_cert_pem.empty() != config->client_key_pem.empty()) {
    return src.Error(StatusCode::kInvalidArgument, field,
                     "client-certificate and client-key must be set together");
  }
  MUSTER_RETURN_IF_ERROR(ApplyToken(src, user, field, config));
  const bool has_credentials = !config->client_cert_pem.empty() || !config->bearer_token.empty();
  for (const char* unsupported : {"exec", "auth-provider"}) {
    if (!has_credentials && user[unsupported]) {
      return src.Error(StatusCode::kUnimplemented, field + "." + unsupported,
                       "credential plugins are not supported; use a token or client certificate");
    }
  }
  return Status::Ok();
}

// Everything that may throw YAML::Exception; the caller catches.
StatusOr<ClientConfig> ParseKubeconfig(const Source& src, const std::string& text,
                                       const std::string& context_flag) {
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap()) return src.Error(StatusCode::kInvalidArgument, "(root)", "not a YAML map");
  std::string context_name = context_flag;
  if (context_name.empty()) context_name = ScalarOf(root, "current-context");
  if (context_name.empty()) {
    return src.Error(StatusCode::kInvalidArgument, "current-context", "not set");
  }
  MUSTER_ASSIGN_OR_RETURN(YAML::Node context,
                          FindNamed(src, root, "contexts", "context", context_name));
  const std::string context_field = "contexts[" + context_name + "].context";
  const std::string cluster_name = ScalarOf(context, "cluster");
  const std::string user_name = ScalarOf(context, "user");
  if (cluster_name.empty()) {
    return src.Error(StatusCode::kInvalidArgument, context_field + ".cluster", "missing");
  }
  ClientConfig config;
  config.default_namespace = ScalarOf(context, "namespace");
  MUSTER_ASSIGN_OR_RETURN(YAML::Node cluster,
                          FindNamed(src, root, "clusters", "cluster", cluster_name));
  MUSTER_RETURN_IF_ERROR(
      ApplyCluster(src, cluster, "clusters[" + cluster_name + "].cluster", &config));
  if (!user_name.empty()) {
    MUSTER_ASSIGN_OR_RETURN(YAML::Node user, FindNamed(src, root, "users", "user", user_name));
    MUSTER_RETURN_IF_ERROR(ApplyUser(src, user, "users[" + user_name + "].user", &config));
  }
  return config;
}

std::optional<std::string> NonEmpty(const EnvLookup& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return NotFoundError("cannot read " + path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return UnavailableError("cannot open " + path);
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return UnavailableError("cannot read " + path);
  return out.str();
}

StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  Source src{path, std::filesystem::path(path).parent_path()};
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status().Annotate("kubeconfig " + path);
  try {
    return ParseKubeconfig(src, *text, context);
  } catch (const YAML::Exception& e) {
    return src.Error(StatusCode::kInvalidArgument, "(yaml)", e.what());
  }
}

StatusOr<ClientConfig> LoadInClusterConfig(const std::string& root_dir, const EnvLookup& env) {
  const std::optional<std::string> host = NonEmpty(env, "KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = NonEmpty(env, "KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    return NotFoundError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  const std::filesystem::path dir = std::filesystem::path(root_dir) / kServiceAccountDir;
  ClientConfig config;
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  config.bearer_token_file = (dir / "token").string();
  MUSTER_ASSIGN_OR_RETURN(std::string token, ReadFileToString(config.bearer_token_file));
  config.bearer_token = TrimTrailingSpace(std::move(token));
  if (config.bearer_token.empty()) {
    return InvalidArgumentError("in-cluster config: " + config.bearer_token_file + " is empty");
  }
  MUSTER_ASSIGN_OR_RETURN(config.ca_pem, ReadFileToString((dir / "ca.crt").string()));
  StatusOr<std::string> ns = ReadFileToString((dir / "namespace").string());
  if (ns.ok()) config.default_namespace = TrimTrailingSpace(std::move(ns).value());
  return config;
}

StatusOr<ClientConfig> ResolveConfig(const std::string& flag_kubeconfig, const EnvLookup& env,
                                     const std::string& root_dir) {
  if (!flag_kubeconfig.empty()) return LoadKubeconfig(flag_kubeconfig);
  if (std::optional<std::string> list = NonEmpty(env, "KUBECONFIG")) {
    std::stringstream entries(*list);
    std::string first;
    while (std::getline(entries, first, ':') && first.empty()) {
    }
    if (!first.empty()) return LoadKubeconfig(first);
  }
  if (NonEmpty(env, "KUBERNETES_SERVICE_HOST")) return LoadInClusterConfig(root_dir, env);
  if (std::optional<std::string> home = NonEmpty(env, "HOME")) {
    const std::string path = *home + "/.kube/config";
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return LoadKubeconfig(path);
  }
  return NotFoundError(
      "no Kubernetes config: pass --kubeconfig, set KUBECONFIG, run in a pod, or create "
      "~/.kube/config");
}

}  // namespace muster::kube
