// OpenSSL helpers for credentials held in memory: base64 (kubeconfig
// `*-data` fields) and PEM certificates/keys turned into OpenSSL objects, so
// no credential has to be written to a temporary file.
//
// Thread-safety: stateless functions; the returned objects are owned by the
// caller.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "model/status.h"

namespace muster::kube {

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509StoreDeleter {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;
using X509StorePtr = std::unique_ptr<X509_STORE, X509StoreDeleter>;

// Standard base64 with padding and no line breaks (Secret data, key blobs).
std::string EncodeBase64(std::string_view data);
// Standard base64 with padding; line breaks and spaces are ignored.
// InvalidArgument on any other malformed input.
StatusOr<std::string> DecodeBase64(std::string_view text);

// The first certificate of a PEM text.
StatusOr<X509Ptr> CertificateFromPem(std::string_view pem);
// A private key in PEM (PKCS#8, PKCS#1 RSA or SEC1 EC).
StatusOr<EvpPkeyPtr> PrivateKeyFromPem(std::string_view pem);
// A trust store holding every certificate of a PEM bundle (at least one).
StatusOr<X509StorePtr> CertStoreFromPem(std::string_view pem);

}  // namespace muster::kube
