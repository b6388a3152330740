// What every `muster job|queue|why` verb shares: where it prints, how it
// reaches the API server (the user's kubeconfig, as kubectl finds it, through
// the same kube::Client as the sidecars), and how a failure becomes a message
// and an exit code.
//
// Exit codes (docs/operator-guide.md, "The muster command line"):
//   0 done; 1 the API server refused or failed the call (any other error);
//   2 wrong arguments (a usage line follows; an InvalidArgument whose message
//   starts "flag " is one); 3 the object named does not
//   exist; 4 not allowed (401/403: RBAC, credentials); 5 no cluster (no
//   kubeconfig, the API server or muster cannot be reached).
//
// Thread-compatible: one verb runs on one thread.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/args.h"
#include "kube/client/client.h"
#include "model/clock.h"
#include "model/status.h"

namespace muster::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitForbidden = 4;
inline constexpr int kExitNoCluster = 5;

// Where a verb prints, and its clock (fixed in tests, for ages).
struct Io {
  std::ostream& out;
  std::ostream& err;
  const Clock& clock;
};

// The exit code for an error (see above).
int ExitCodeFor(const Status& error);

// Prints "muster <command>: <message>" (plus a hint for the common causes:
// RBAC, no cluster) to io.err and returns ExitCodeFor(error).
int Fail(Io& io, std::string_view command, const Status& error);

// The flags every verb that talks to the cluster takes: --kubeconfig,
// --context, --namespace/-n, --request-timeout.
std::vector<FlagSpec> ConnectionFlags();

// A connection to the API server for one verb.
class Session {
 public:
  // Loads the config as kubectl does (--kubeconfig, $KUBECONFIG, in-cluster,
  // ~/.kube/config; --context picks a context) and makes a client that
  // retries little: a user waits at the terminal. The namespace is -n's, else
  // the context's, else "default". Unavailable (exit 5) when there is no
  // config; InvalidArgument for a bad --request-timeout.
  static StatusOr<Session> Open(const Args& args);

  kube::Client& client() { return *client_; }
  const std::string& ns() const { return ns_; }
  const kube::ClientConfig& config() const { return config_; }

 private:
  kube::ClientConfig config_;
  std::unique_ptr<kube::Client> client_;
  std::string ns_;
};

}  // namespace muster::cli
