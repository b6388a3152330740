#include "kube/client/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace muster::kube {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// base64 of "ca-pem", "cert-pem", "key-pem".
constexpr char kCaB64[] = "Y2EtcGVt";
constexpr char kCertB64[] = "Y2VydC1wZW0=";
constexpr char kKeyB64[] = "a2V5LXBlbQ==";

// A fresh temporary folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "muster-kubeconfig-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  // Writes `content` to `relative` (creating folders); returns the full path.
  std::string Write(const std::string& relative, const std::string& content) const {
    fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  fs::path path_;
};

std::string Kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& extra = "") {
  return "apiVersion: v1\nkind: Config\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster + "users:\n- name: u1\n  user:\n" + user +
         "contexts:\n"
         "- name: ctx1\n  context: {cluster: c1, user: u1, namespace: team-a}\n"
         "- name: other\n  context: {cluster: c1, user: u2}\n" +
         extra + "current-context: ctx1\n";
}

TEST(KubeconfigTest, LoadsClusterAndUser) {
  struct Case {
    std::string name;
    std::string cluster;
    std::string user;
    ClientConfig want;
  };
  const std::string server = "    server: https://127.0.0.1:6443\n";
  const std::vector<Case> cases = {
      {"inline data, client certificate",
       server + "    certificate-authority-data: " + kCaB64 + "\n",
       std::string("    client-certificate-data: ") + kCertB64 +
           "\n    client-key-data: " + kKeyB64 + "\n",
       {.server = "https://127.0.0.1:6443",
        .ca_pem = "ca-pem",
        .client_cert_pem = "cert-pem",
        .client_key_pem = "key-pem"}},
      {"files relative to the kubeconfig folder",
       server + "    certificate-authority: pki/ca.crt\n",
       "    client-certificate: pki/admin.crt\n    client-key: ./pki/../pki/admin.key\n",
       {.server = "https://127.0.0.1:6443",
        .ca_pem = "ca from file",
        .client_cert_pem = "cert from file",
        .client_key_pem = "key from file"}},
      {"token user, insecure cluster",
       server + "    insecure-skip-tls-verify: true\n",
       "    token: abc.def\n",
       {.server = "https://127.0.0.1:6443",
        .bearer_token = "abc.def",
        .insecure_skip_tls_verify = true}},
      {"token file, trailing newline dropped",
       server,
       "    tokenFile: secrets/token\n",
       {.server = "https://127.0.0.1:6443", .bearer_token = "tok-from-file"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    dir.Write("kube/pki/ca.crt", "ca from file");
    dir.Write("kube/pki/admin.crt", "cert from file");
    dir.Write("kube/pki/admin.key", "key from file");
    dir.Write("kube/secrets/token", "tok-from-file\n");
    const std::string path = dir.Write("kube/config", Kubeconfig(c.cluster, c.user));
    StatusOr<ClientConfig> got = LoadKubeconfig(path);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->server, c.want.server);
    EXPECT_EQ(got->ca_pem, c.want.ca_pem);
    EXPECT_EQ(got->client_cert_pem, c.want.client_cert_pem);
    EXPECT_EQ(got->client_key_pem, c.want.client_key_pem);
    EXPECT_EQ(got->bearer_token, c.want.bearer_token);
    EXPECT_EQ(got->insecure_skip_tls_verify, c.want.insecure_skip_tls_verify);
    EXPECT_EQ(got->default_namespace, "team-a");
  }
}

TEST(KubeconfigTest, TokenFileIsRememberedForRotation) {
  TempDir dir;
  dir.Write("token", "t1");
  const std::string path =
      dir.Write("config", Kubeconfig("    server: https://h:1\n", "    tokenFile: token\n"));
  StatusOr<ClientConfig> got = LoadKubeconfig(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bearer_token_file, (dir.path() / "token").string());
}

TEST(KubeconfigTest, ExplicitContextOverridesCurrentContext) {
  TempDir dir;
  const std::string path =
      dir.Write("config", Kubeconfig("    server: https://h:1\n", "    token: t1\n"));
  // "other" names user u2, which does not exist: proves the context was used.
  StatusOr<ClientConfig> got = LoadKubeconfig(path, "other");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("no entry named \"u2\""));
}

TEST(KubeconfigTest, ErrorsNameTheFileAndTheField) {
  struct Case {
    std::string name;
    std::string text;  // the whole kubeconfig
    std::string context;
    StatusCode code;
    std::string message_part;
  };
  const std::string server = "    server: https://h:1\n";
  const std::vector<Case> cases = {
      {"missing context", Kubeconfig(server, "    token: t\n"), "nope", StatusCode::kNotFound,
       "contexts: no entry named \"nope\""},
      {"no current-context", "clusters: []\nusers: []\ncontexts: []\n", "",
       StatusCode::kInvalidArgument, "current-context: not set"},
      {"bad base64",
       Kubeconfig(server,
                  "    client-certificate-data: Y2VydC1wZW0=\n"
                  "    client-key-data: '!!not base64!!'\n"),
       "", StatusCode::kInvalidArgument, "users[u1].user.client-key-data: invalid base64"},
      {"truncated base64",
       Kubeconfig(server + "    certificate-authority-data: Y2E\n", "    token: t\n"), "",
       StatusCode::kInvalidArgument, "clusters[c1].cluster.certificate-authority-data"},
      {"missing file",
       Kubeconfig(server + "    certificate-authority: missing/ca.crt\n", "    token: t\n"), "",
       StatusCode::kNotFound, "clusters[c1].cluster.certificate-authority"},
      {"missing server", Kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"), "",
       StatusCode::kInvalidArgument, "clusters[c1].cluster.server: missing"},
      {"certificate without key",
       Kubeconfig(server, std::string("    client-certificate-data: ") + kCertB64 + "\n"), "",
       StatusCode::kInvalidArgument, "must be set together"},
      {"exec plugin only", Kubeconfig(server, "    exec: {command: aws}\n"), "",
       StatusCode::kUnimplemented, "users[u1].user.exec"},
      {"yaml syntax error", "clusters: [\n", "", StatusCode::kInvalidArgument, "(yaml)"},
      {"not a map", "- a\n- b\n", "", StatusCode::kInvalidArgument, "not a YAML map"},
      {"wrong type", Kubeconfig("    server: [1, 2]\n", "    token: t\n"), "",
       StatusCode::kInvalidArgument, "(yaml)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const std::string path = dir.Write("config", c.text);
    StatusOr<ClientConfig> got = LoadKubeconfig(path, c.context);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    EXPECT_THAT(got.status().message(), HasSubstr("kubeconfig " + path));
    EXPECT_THAT(got.status().message(), HasSubstr(c.message_part));
  }
}

TEST(KubeconfigTest, MissingFileIsNotFound) {
  StatusOr<ClientConfig> got = LoadKubeconfig("/nonexistent/muster/config");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("/nonexistent/muster/config"));
}

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

void WriteServiceAccount(const TempDir& root, const std::string& token) {
  const std::string sa = "var/run/secrets/kubernetes.io/serviceaccount/";
  root.Write(sa + "token", token);
  root.Write(sa + "ca.crt", "cluster-ca");
  root.Write(sa + "namespace", "muster-system\n");
}

TEST(InClusterConfigTest, ReadsServiceAccountFiles) {
  struct Case {
    std::string name;
    std::string host;
    std::string server;
  };
  const std::vector<Case> cases = {
      {"ipv4", "10.0.0.1", "https://10.0.0.1:443"},
      {"ipv6", "fd00::1", "https://[fd00::1]:443"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir root;
    WriteServiceAccount(root, "sa-token\n");
    StatusOr<ClientConfig> got = LoadInClusterConfig(
        root.path().string(),
        FakeEnv({{"KUBERNETES_SERVICE_HOST", c.host}, {"KUBERNETES_SERVICE_PORT", "443"}}));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->server, c.server);
    EXPECT_EQ(got->bearer_token, "sa-token");
    EXPECT_EQ(got->ca_pem, "cluster-ca");
    EXPECT_EQ(got->default_namespace, "muster-system");
    EXPECT_THAT(got->bearer_token_file, HasSubstr("serviceaccount/token"));
  }
}

TEST(InClusterConfigTest, ReportsWhatIsMissing) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> env;
    bool write_files;
    std::string token;
    StatusCode code;
    std::string message_part;
  };
  const std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                  {"KUBERNETES_SERVICE_PORT", "443"}};
  const std::vector<Case> cases = {
      {"no env", {}, true, "t", StatusCode::kNotFound, "KUBERNETES_SERVICE_HOST"},
      {"no port",
       {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}},
       true,
       "t",
       StatusCode::kNotFound,
       "KUBERNETES_SERVICE_PORT"},
      {"no token file", env, false, "", StatusCode::kNotFound, "serviceaccount/token"},
      {"empty token", env, true, "\n", StatusCode::kInvalidArgument, "is empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir root;
    if (c.write_files) WriteServiceAccount(root, c.token);
    StatusOr<ClientConfig> got = LoadInClusterConfig(root.path().string(), FakeEnv(c.env));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    EXPECT_THAT(got.status().message(), HasSubstr(c.message_part));
  }
}

TEST(ResolveConfigTest, FollowsKubectlOrder) {
  TempDir dir;
  auto config_with_token = [&](const std::string& file, const std::string& token) {
    return dir.Write(file, Kubeconfig("    server: https://h:1\n", "    token: " + token + "\n"));
  };
  const std::string flag_path = config_with_token("flag", "from-flag");
  const std::string env_path = config_with_token("env", "from-env");
  config_with_token("home/.kube/config", "from-home");
  TempDir root;
  WriteServiceAccount(root, "from-pod");
  const std::string home = (dir.path() / "home").string();
  const std::string in_cluster_host = "10.0.0.1";

  struct Case {
    std::string name;
    std::string flag;
    std::map<std::string, std::string> env;
    std::string token;  // "" = expect NotFound
  };
  const std::vector<Case> cases = {
      {"flag first",
       flag_path,
       {{"KUBECONFIG", env_path}, {"HOME", home}, {"KUBERNETES_SERVICE_HOST", in_cluster_host}},
       "from-flag"},
      {"then KUBECONFIG, first entry of the list",
       "",
       {{"KUBECONFIG", ":" + env_path + ":" + flag_path}, {"HOME", home}},
       "from-env"},
      {"then in-cluster",
       "",
       {{"HOME", home},
        {"KUBERNETES_SERVICE_HOST", in_cluster_host},
        {"KUBERNETES_SERVICE_PORT", "443"}},
       "from-pod"},
      {"then ~/.kube/config", "", {{"HOME", home}}, "from-home"},
      {"nothing", "", {{"HOME", "/nonexistent"}}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<ClientConfig> got = ResolveConfig(c.flag, FakeEnv(c.env), root.path().string());
    if (c.token.empty()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->bearer_token, c.token);
  }
}

}  // namespace
}  // namespace muster::kube
