#include "kube/client/pem.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <climits>
#include <memory>
#include <string>

namespace muster::kube {
namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

struct EvpEncodeDeleter {
  void operator()(EVP_ENCODE_CTX* c) const { EVP_ENCODE_CTX_free(c); }
};

// The most recent OpenSSL error as text, clearing the thread's queue so it
// cannot leak into a later, unrelated report.
std::string TakeOpenSslError() {
  const unsigned long code = ERR_peek_last_error();
  std::string text = "unknown OpenSSL error";
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    text = buf;
  }
  ERR_clear_error();
  return text;
}

StatusOr<BioPtr> MemoryBio(std::string_view data) {
  if (data.size() > static_cast<size_t>(INT_MAX)) return InvalidArgumentError("PEM too large");
  BioPtr bio(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
  if (!bio) return InternalError("BIO_new_mem_buf: " + TakeOpenSslError());
  return bio;
}

}  // namespace

std::string EncodeBase64(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock adds a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

StatusOr<std::string> DecodeBase64(std::string_view text) {
  if (text.size() > static_cast<size_t>(INT_MAX / 2))
    return InvalidArgumentError("base64 too large");
  std::unique_ptr<EVP_ENCODE_CTX, EvpEncodeDeleter> ctx(EVP_ENCODE_CTX_new());
  if (!ctx) return InternalError("EVP_ENCODE_CTX_new failed");
  std::string out(text.size() / 4 * 3 + 80, '\0');
  EVP_DecodeInit(ctx.get());
  int len = 0;
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  if (EVP_DecodeUpdate(ctx.get(), dst, &len, reinterpret_cast<const unsigned char*>(text.data()),
                       static_cast<int>(text.size())) < 0) {
    return InvalidArgumentError("invalid base64");
  }
  int tail = 0;
  if (EVP_DecodeFinal(ctx.get(), dst + len, &tail) < 0) {
    return InvalidArgumentError("invalid base64 (truncated)");
  }
  out.resize(static_cast<size_t>(len + tail));
  return out;
}

StatusOr<X509Ptr> CertificateFromPem(std::string_view pem) {
  MUSTER_ASSIGN_OR_RETURN(BioPtr bio, MemoryBio(pem));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return InvalidArgumentError("no PEM certificate: " + TakeOpenSslError());
  return cert;
}

StatusOr<EvpPkeyPtr> PrivateKeyFromPem(std::string_view pem) {
  MUSTER_ASSIGN_OR_RETURN(BioPtr bio, MemoryBio(pem));
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return InvalidArgumentError("no PEM private key: " + TakeOpenSslError());
  return key;
}

StatusOr<X509StorePtr> CertStoreFromPem(std::string_view pem) {
  MUSTER_ASSIGN_OR_RETURN(BioPtr bio, MemoryBio(pem));
  X509StorePtr store(X509_STORE_new());
  if (!store) return InternalError("X509_STORE_new: " + TakeOpenSslError());
  int count = 0;
  while (true) {
    X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) break;
    if (X509_STORE_add_cert(store.get(), cert.get()) != 1) {
      return InvalidArgumentError("X509_STORE_add_cert: " + TakeOpenSslError());
    }
    ++count;
  }
  // Reading past the last certificate leaves a "no start line" error behind.
  ERR_clear_error();
  if (count == 0) return InvalidArgumentError("no PEM certificate in CA bundle");
  return store;
}

}  // namespace muster::kube
