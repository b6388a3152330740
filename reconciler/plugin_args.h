// The arguments of Volcano's job plugins (spec.plugins["<name>"]), parsed
// with Volcano's defaults and Go's flag syntax, as Volcano's plugins read
// them (pkg/controllers/job/plugins/*/: flag.FlagSet with ContinueOnError).
//
// The parsers accept "--k=v", "-k=v", "--k v", "-k v", and for booleans a
// bare "--k" (true) or "--k=<bool>" (1 t T TRUE true True 0 f F FALSE false
// False). Unknown flags, values that do not parse and non-flag words are
// ignored; "--" ends the flags. The last occurrence of a flag wins.
//
// Where muster departs from Volcano:
//   - a parse continues past an unknown or malformed flag (Go's FlagSet stops
//     at it, silently dropping the flags after it);
//   - a port that is not 1..65535 is the plugin's default (Volcano does this
//     for --ssh-port only).
//
// Thread-compatible; every function is pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace muster::reconciler {

// ssh: where the keys go unless --ssh-key-file-path says otherwise.
inline constexpr std::string_view kSshDefaultKeyPath = "/root/.ssh";

struct SvcArgs {
  bool publish_not_ready_addresses = false;
  bool disable_network_policy = false;
  bool inject_hosts_env = true;
  friend bool operator==(const SvcArgs&, const SvcArgs&) = default;
};
struct SshArgs {
  std::string key_file_path = std::string(kSshDefaultKeyPath);  // --ssh-key-file-path
  std::string private_key;                                      // --ssh-private-key (PEM text)
  std::string public_key;                                       // --ssh-public-key (OpenSSH line)
  int32_t port = 22;                                            // --ssh-port
  friend bool operator==(const SshArgs&, const SshArgs&) = default;
};
struct MpiArgs {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 22;
  friend bool operator==(const MpiArgs&, const MpiArgs&) = default;
};
struct PyTorchArgs {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 23456;
  bool wait_master_enabled = false;           // --wait-master-enabled
  int32_t wait_master_timeout_seconds = 300;  // --wait-master-timeout
  std::string wait_master_image = "busybox:1.36.1";
  friend bool operator==(const PyTorchArgs&, const PyTorchArgs&) = default;
};
struct TensorFlowArgs {
  std::string ps = "ps";
  std::string worker = "worker";
  std::string chief = "chief";
  std::string evaluator = "evaluator";
  int32_t port = 2222;
  friend bool operator==(const TensorFlowArgs&, const TensorFlowArgs&) = default;
};

// ray (Volcano >= 1.11, pkg/controllers/job/plugins/distributed-framework/
// ray/ray.go): which task and container are the head and the workers, and
// the head's GCS, dashboard and client-server ports.
struct RayArgs {
  std::string head = "head";
  std::string head_container = "head";  // --headContainer
  std::string worker = "worker";
  std::string worker_container = "worker";  // --workerContainer
  int32_t port = 6379;                      // --port (GCS)
  int32_t dashboard_port = 8265;            // --dashboardPort
  int32_t client_port = 10001;              // --clientPort
  friend bool operator==(const RayArgs&, const RayArgs&) = default;
};

SvcArgs ParseSvcArgs(const std::vector<std::string>& args);
// An empty --ssh-key-file-path is the default path.
SshArgs ParseSshArgs(const std::vector<std::string>& args);
MpiArgs ParseMpiArgs(const std::vector<std::string>& args);
// --wait-master-timeout in whole seconds ("600") or a Go duration ("10m"); a
// timeout that does not parse, is not positive or exceeds INT32_MAX seconds,
// and an empty --wait-master-image, are the defaults.
PyTorchArgs ParsePyTorchArgs(const std::vector<std::string>& args);
TensorFlowArgs ParseTensorFlowArgs(const std::vector<std::string>& args);
RayArgs ParseRayArgs(const std::vector<std::string>& args);

}  // namespace muster::reconciler
