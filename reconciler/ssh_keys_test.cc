#include "reconciler/ssh_keys.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client/pem.h"

namespace muster::reconciler {
namespace {

// Reads one SSH wire string (RFC 4251) from `blob` at *pos.
bool ReadSshString(std::string_view blob, size_t* pos, std::string* out) {
  if (blob.size() - *pos < 4) return false;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<uint8_t>(blob[*pos + i]);
  *pos += 4;
  if (blob.size() - *pos < n) return false;
  *out = std::string(blob.substr(*pos, n));
  *pos += n;
  return true;
}

// The mpint the key's `param` should be written as.
std::string Mpint(const EVP_PKEY* key, const char* param) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, param, &bn), 1);
  std::vector<unsigned char> bytes(static_cast<size_t>(BN_num_bytes(bn)));
  BN_bn2bin(bn, bytes.data());
  BN_free(bn);
  std::string out;
  if (!bytes.empty() && (bytes[0] & 0x80) != 0) out.push_back('\0');
  out.append(bytes.begin(), bytes.end());
  return out;
}

TEST(SshKeysTest, PrivateKeyParsesBackAndPublicKeyMatches) {
  StatusOr<SshKeyPair> pair = GenerateSshKeyPair();
  ASSERT_TRUE(pair.ok()) << pair.status();

  // PKCS#1 PEM, as Go's x509.MarshalPKCS1PrivateKey + pem.Encode.
  EXPECT_EQ(pair->private_pem.rfind("-----BEGIN RSA PRIVATE KEY-----\n", 0), 0u);
  EXPECT_NE(pair->private_pem.find("-----END RSA PRIVATE KEY-----\n"), std::string::npos);
  StatusOr<kube::EvpPkeyPtr> key = kube::PrivateKeyFromPem(pair->private_pem);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(EVP_PKEY_get_base_id(key->get()), EVP_PKEY_RSA);
  EXPECT_EQ(EVP_PKEY_get_bits(key->get()), 2048);

  // "ssh-rsa <base64>\n", as Go's ssh.MarshalAuthorizedKey.
  const std::string& pub = pair->public_openssh;
  ASSERT_EQ(pub.rfind("ssh-rsa ", 0), 0u) << pub;
  ASSERT_EQ(pub.back(), '\n');
  const std::string b64 = pub.substr(8, pub.size() - 9);
  EXPECT_EQ(b64.find_first_of(" \n"), std::string::npos);
  StatusOr<std::string> blob = kube::DecodeBase64(b64);
  ASSERT_TRUE(blob.ok()) << blob.status();

  size_t pos = 0;
  std::string type, e, n;
  ASSERT_TRUE(ReadSshString(*blob, &pos, &type));
  ASSERT_TRUE(ReadSshString(*blob, &pos, &e));
  ASSERT_TRUE(ReadSshString(*blob, &pos, &n));
  EXPECT_EQ(pos, blob->size());
  EXPECT_EQ(type, "ssh-rsa");
  EXPECT_EQ(e, Mpint(key->get(), OSSL_PKEY_PARAM_RSA_E));
  EXPECT_EQ(n, Mpint(key->get(), OSSL_PKEY_PARAM_RSA_N));
  EXPECT_EQ(e, std::string("\x01\x00\x01", 3));  // 65537
  ASSERT_EQ(n.size(), 257u);                     // 2048 bits, top bit set: a leading zero
  EXPECT_EQ(n[0], '\0');
}

TEST(SshKeysTest, EveryPairIsFresh) {
  StatusOr<SshKeyPair> a = GenerateSshKeyPair();
  StatusOr<SshKeyPair> b = GenerateSshKeyPair();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->private_pem, b->private_pem);
  EXPECT_NE(a->public_openssh, b->public_openssh);
}

}  // namespace
}  // namespace muster::reconciler
