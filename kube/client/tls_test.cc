// The transport over TLS, as against a real API server: CA, server name
// (an IP SAN), client certificates, all from PEM held in memory. The
// certificates are minted per test run, so nothing secret is checked in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/http_transport.h"
#include "kube/client/pem.h"
#include "kube/client/testing/loopback_server.h"

namespace muster::kube {
namespace {

using ::testing::HasSubstr;
using testing::LoopbackServer;

struct KeyPair {
  X509Ptr cert;
  EvpPkeyPtr key;
};

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  ASSERT_NE(ext, nullptr) << value;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A P-256 certificate for `cn`, signed by `issuer` (self-signed when null).
KeyPair MakeCert(const std::string& cn, const KeyPair* issuer, bool is_ca) {
  static int serial = 1;
  KeyPair out{X509Ptr(X509_new()), EvpPkeyPtr(EVP_EC_gen("P-256"))};
  X509* x = out.cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, out.key.get());
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* issuer_cert = issuer != nullptr ? issuer->cert.get() : x;
  X509_set_issuer_name(x, X509_get_subject_name(issuer_cert));
  if (is_ca) {
    AddExtension(x, issuer_cert, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(x, issuer_cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(x, issuer_cert, NID_basic_constraints, "CA:FALSE");
    AddExtension(x, issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth");
    AddExtension(x, issuer_cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  }
  X509_sign(x, issuer != nullptr ? issuer->key.get() : out.key.get(), EVP_sha256());
  return out;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  return pem;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  return pem;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = MakeCert("test-ca", nullptr, /*is_ca=*/true);
    other_ca_ = MakeCert("other-ca", nullptr, /*is_ca=*/true);
    server_cert_ = MakeCert("kube-apiserver", &ca_, false);
    client_cert_ = MakeCert("admin", &ca_, false);
    server_ = std::make_unique<LoopbackServer>(
        [this](httplib::Server& s) {
          s.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
            Record(req);
            res.set_content(R"({"items":[]})", "application/json");
          });
        },
        [this] {
          StatusOr<X509StorePtr> client_ca = CertStoreFromPem(CertPem(ca_.cert.get()));
          EXPECT_TRUE(client_ca.ok());
          // SSLServer takes ownership of the store and references cert and key.
          return std::unique_ptr<httplib::Server>(std::make_unique<httplib::SSLServer>(
              server_cert_.cert.get(), server_cert_.key.get(), client_ca->release()));
        });
    ASSERT_TRUE(server_->Start());
  }

  void Record(const httplib::Request& req) {
    std::string cn;
    if (req.ssl != nullptr) {
      X509* peer = SSL_get1_peer_certificate(req.ssl);
      if (peer != nullptr) {
        char buf[256] = {};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof(buf));
        cn = buf;
        X509_free(peer);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    peers_.push_back(cn);
    authorizations_.push_back(req.get_header_value("Authorization"));
  }

  ClientConfig Config() {
    ClientConfig config;
    config.server = server_->url("https");
    config.ca_pem = CertPem(ca_.cert.get());
    config.client_cert_pem = CertPem(client_cert_.cert.get());
    config.client_key_pem = KeyPem(client_cert_.key.get());
    config.timeout = std::chrono::seconds(5);
    return config;
  }

  Status ListNodes(const ClientConfig& config) {
    ClientOptions options;
    options.retry.max_attempts = 1;
    StatusOr<std::unique_ptr<Client>> client = Client::New(config, options);
    if (!client.ok()) return client.status();
    return (*client)->List(ResourceRef::Core("nodes")).status();
  }

  std::vector<std::string> peers() {
    std::lock_guard<std::mutex> lock(mu_);
    return peers_;
  }

  KeyPair ca_, other_ca_, server_cert_, client_cert_;
  std::unique_ptr<LoopbackServer> server_;
  std::mutex mu_;
  std::vector<std::string> peers_;
  std::vector<std::string> authorizations_;
};

TEST_F(TlsTest, AuthenticatesWithClientCertificateFromMemory) {
  Status s = ListNodes(Config());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(peers(), ::testing::ElementsAre("admin"));
}

TEST_F(TlsTest, SendsBearerTokenOverTls) {
  ClientConfig config = Config();
  config.bearer_token = "tok";
  ASSERT_TRUE(ListNodes(config).ok());
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_THAT(authorizations_, ::testing::ElementsAre("Bearer tok"));
}

TEST_F(TlsTest, RejectsServersAndClientsItCannotTrust) {
  struct Case {
    std::string name;
    std::function<void(ClientConfig*)> edit;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"server signed by another CA",
       [this](ClientConfig* c) { c->ca_pem = CertPem(other_ca_.cert.get()); }, false},
      {"no client certificate",
       [](ClientConfig* c) {
         c->client_cert_pem.clear();
         c->client_key_pem.clear();
       },
       false},
      {"client certificate from another CA",
       [this](ClientConfig* c) {
         c->client_cert_pem = CertPem(other_ca_.cert.get());
         c->client_key_pem = KeyPem(other_ca_.key.get());
       },
       false},
      {"insecure skip verify trusts any server",
       [this](ClientConfig* c) {
         c->ca_pem = CertPem(other_ca_.cert.get());
         c->insecure_skip_tls_verify = true;
       },
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ClientConfig config = Config();
    c.edit(&config);
    const size_t before = peers().size();
    Status s = ListNodes(config);
    EXPECT_EQ(s.ok(), c.ok) << s;
    if (!c.ok) {
      EXPECT_TRUE(s.code() == StatusCode::kUnavailable ||
                  s.code() == StatusCode::kFailedPrecondition)
          << s;
      EXPECT_EQ(peers().size(), before);  // the request never reached a handler
    }
  }
}

// Many connections opening at once, each with its first TLS handshake (the
// extender's gang writes after a restart): all succeed. With one CA store
// shared by every connection, cpp-httplib's unlocked first-handshake setup
// corrupted the heap (under ASan: a heap-use-after-free or double free).
TEST_F(TlsTest, ManyFirstHandshakesAtOnce) {
  ClientConfig config = Config();
  config.max_connections = 6;
  for (int round = 0; round < 20; ++round) {
    StatusOr<std::unique_ptr<Client>> client = Client::New(config);
    ASSERT_TRUE(client.ok()) << client.status();
    std::vector<std::thread> threads;
    std::atomic<int> failed{0};
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&] {
        if (!(*client)->List(ResourceRef::Core("nodes")).ok()) ++failed;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0) << "round " << round;
  }
}

TEST(TransportConfigTest, RejectsBadCredentialsUpFront) {
  KeyPair ca = MakeCert("ca", nullptr, true);
  KeyPair other = MakeCert("other", nullptr, true);
  struct Case {
    std::string name;
    ClientConfig config;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"bad server URL", {.server = "ftp://x"}, "scheme"},
      {"bad port", {.server = "https://h:99999"}, "bad host or port"},
      {"CA not PEM", {.server = "https://h:1", .ca_pem = "nope"}, "certificate authority"},
      {"key not PEM",
       {.server = "https://h:1",
        .client_cert_pem = CertPem(ca.cert.get()),
        .client_key_pem = "nope"},
       "client key"},
      {"certificate and key do not match",
       {.server = "https://h:1",
        .client_cert_pem = CertPem(ca.cert.get()),
        .client_key_pem = KeyPem(other.key.get())},
       "do not match"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<std::unique_ptr<HttpTransport>> t = NewHttpTransport(c.config);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(c.message_part));
  }
}

TEST(ServerUrlTest, ParsesSchemesHostsPortsAndPrefixes) {
  struct Case {
    std::string url;
    bool tls;
    std::string host;
    int port;
    std::string prefix;
  };
  const std::vector<Case> cases = {
      {"https://127.0.0.1:6443", true, "127.0.0.1", 6443, ""},
      {"https://kubernetes.default.svc", true, "kubernetes.default.svc", 443, ""},
      {"http://localhost:8080/", false, "localhost", 8080, ""},
      {"https://[fd00::1]:6443", true, "fd00::1", 6443, ""},
      {"https://rancher.example/k8s/clusters/c-1/", true, "rancher.example", 443,
       "/k8s/clusters/c-1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.url);
    StatusOr<ServerUrl> u = ParseServerUrl(c.url);
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->tls, c.tls);
    EXPECT_EQ(u->host, c.host);
    EXPECT_EQ(u->port, c.port);
    EXPECT_EQ(u->path_prefix, c.prefix);
  }
  for (const char* bad : {"127.0.0.1:6443", "https://", "https://h:x", "https://[::1:6443"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseServerUrl(bad).ok());
  }
}

}  // namespace
}  // namespace muster::kube
