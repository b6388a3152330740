#include "reconciler/ssh_keys.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kube/client/pem.h"

namespace muster::reconciler {
namespace {

constexpr int kRsaBits = 2048;  // Volcano's key size
constexpr std::string_view kSshRsa = "ssh-rsa";

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct BnDeleter {
  void operator()(BIGNUM* n) const { BN_free(n); }
};
using PkeyPtr = kube::EvpPkeyPtr;
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using BnPtr = std::unique_ptr<BIGNUM, BnDeleter>;

// The failing call and OpenSSL's first queued reason, which says why.
Status OpenSslError(std::string_view what) {
  unsigned long code = ERR_get_error();
  std::string message = "ssh key: " + std::string(what) + " failed";
  if (code != 0) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof(reason));
    message += ": ";
    message += reason;
  }
  ERR_clear_error();
  return InternalError(std::move(message));
}

// The SSH wire "string": a 4-byte big-endian length, then the bytes (RFC 4251 §5).
void AppendSshString(std::string_view bytes, std::string* out) {
  const auto n = static_cast<uint32_t>(bytes.size());
  out->push_back(static_cast<char>(n >> 24));
  out->push_back(static_cast<char>(n >> 16));
  out->push_back(static_cast<char>(n >> 8));
  out->push_back(static_cast<char>(n));
  out->append(bytes);
}

// The SSH "mpint" of a non-negative number: its big-endian magnitude, with a
// leading zero byte when the top bit is set so it does not read as negative.
void AppendSshMpint(const BIGNUM* n, std::string* out) {
  std::vector<unsigned char> bytes(static_cast<size_t>(BN_num_bytes(n)));
  BN_bn2bin(n, bytes.data());
  std::string magnitude;
  if (!bytes.empty() && (bytes[0] & 0x80) != 0) magnitude.push_back('\0');
  magnitude.append(bytes.begin(), bytes.end());
  AppendSshString(magnitude, out);
}

StatusOr<std::string> PrivateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr) return OpenSslError("BIO_new");
  // The "traditional" encoding of an RSA key is PKCS#1 ("RSA PRIVATE KEY"),
  // what Go's x509.MarshalPKCS1PrivateKey gives Volcano; PKCS#8 would not
  // match images that grep the header.
  if (PEM_write_bio_PrivateKey_traditional(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) !=
      1) {
    return OpenSslError("PEM_write_bio_PrivateKey_traditional");
  }
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  if (size <= 0 || data == nullptr) return OpenSslError("BIO_get_mem_data");
  return std::string(data, static_cast<size_t>(size));
}

StatusOr<std::string> PublicKeyOpenSsh(EVP_PKEY* key) {
  BIGNUM* raw_n = nullptr;
  BIGNUM* raw_e = nullptr;
  if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &raw_n) != 1) {
    return OpenSslError("EVP_PKEY_get_bn_param(n)");
  }
  BnPtr n(raw_n);
  if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &raw_e) != 1) {
    return OpenSslError("EVP_PKEY_get_bn_param(e)");
  }
  BnPtr e(raw_e);
  std::string blob;
  AppendSshString(kSshRsa, &blob);
  AppendSshMpint(e.get(), &blob);
  AppendSshMpint(n.get(), &blob);
  return std::string(kSshRsa) + " " + kube::EncodeBase64(blob) + "\n";
}

}  // namespace

StatusOr<SshKeyPair> GenerateSshKeyPair() {
  PkeyPtr key(EVP_RSA_gen(kRsaBits));
  if (key == nullptr) return OpenSslError("EVP_RSA_gen");
  SshKeyPair pair;
  MUSTER_ASSIGN_OR_RETURN(pair.private_pem, PrivateKeyPem(key.get()));
  MUSTER_ASSIGN_OR_RETURN(pair.public_openssh, PublicKeyOpenSsh(key.get()));
  return pair;
}

}  // namespace muster::reconciler
