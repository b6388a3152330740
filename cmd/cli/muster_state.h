// muster's own view of the cluster - the extender's /debug/state: every
// gang's phase, place in the planning order and wait reason, each queue's
// deserved share and holdings, each node's free resources - for `muster why`
// and the queue verbs' deserved column.
//
// Two ways to reach it:
//   --muster-url URL   straight to an extender port (its verbs port, or its
//                      --metrics-port, which serves /debug/state too), e.g.
//                      after `kubectl port-forward`;
//   otherwise          through the API server's pod proxy
//                      (/api/v1/namespaces/NS/pods/POD:PORT/proxy/debug/state)
//                      to the replica whose /readyz says "leader" (a standby
//                      plans nothing: its gangs list is empty), among the pods
//                      of --muster-namespace (muster-system) labelled
//                      app.kubernetes.io/name=muster; PORT is --muster-port
//                      (8080, the metrics port of manifests/deploy). The user
//                      needs `get` on pods/proxy there.
//
// Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "cmd/cli/args.h"
#include "cmd/cli/session.h"
#include "model/status.h"

namespace muster::cli {

// --muster-url, --muster-namespace, --muster-port.
std::vector<FlagSpec> MusterStateFlags();

// The /debug/state JSON text. Unavailable (naming what was tried) when no
// replica answers; InvalidArgument for a malformed --muster-url.
StatusOr<std::string> FetchMusterState(Session& session, const Args& args);

// The API server path of FetchMusterState: the pods labelled
// app.kubernetes.io/name=muster in `ns`, each one's /readyz through the pod
// proxy on `port`, then /debug/state of the first that says "leader" (else
// the first that answered). Unavailable when none answers.
StatusOr<std::string> FetchThroughProxy(kube::Client& client, const std::string& ns,
                                        const std::string& port);

}  // namespace muster::cli
