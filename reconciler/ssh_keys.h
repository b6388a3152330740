// The SSH key pair of a job's ssh plugin (pkg/controllers/job/plugins/ssh): the one
// non-pure piece of the expansion, because a fresh key needs randomness.
//
// The formats are Volcano's byte for byte, so images that read
// /root/.ssh/id_rsa and id_rsa.pub keep working: the private key as RSA-2048
// PKCS#1 PEM ("-----BEGIN RSA PRIVATE KEY-----"), the public key as an
// OpenSSH authorized_keys line without a comment ("ssh-rsa AAAA...\n", as Go's
// ssh.MarshalAuthorizedKey writes it).
//
// Thread-safe: OpenSSL's default random generator is.
#pragma once

#include <string>
#include <string_view>

#include "model/status.h"

namespace muster::reconciler {

struct SshKeyPair {
  std::string private_pem;  // "-----BEGIN RSA PRIVATE KEY-----\n...-----END RSA PRIVATE KEY-----\n"
  std::string public_openssh;  // "ssh-rsa <base64 of string "ssh-rsa", mpint e, mpint n>\n"
  friend bool operator==(const SshKeyPair&, const SshKeyPair&) = default;
};

// A fresh RSA-2048 key pair. Internal when OpenSSL fails (no entropy).
StatusOr<SshKeyPair> GenerateSshKeyPair();

}  // namespace muster::reconciler
