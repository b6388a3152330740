#include "cmd/cli/muster_state.h"

#include <httplib.h>

#include <chrono>

#include "kube/client/resource_ref.h"
#include "kube/codec/core_codec.h"

namespace muster::cli {
namespace {

constexpr char kStatePath[] = "/debug/state";

StatusOr<std::string> FetchDirect(const std::string& url, Duration timeout) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "flag --muster-url: \"" + url + "\" is not an http:// or https:// URL");
  }
  httplib::Client http(url);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout).count();
  http.set_connection_timeout(seconds);
  http.set_read_timeout(seconds);
  httplib::Result res = http.Get(kStatePath);
  if (!res) {
    return Status(StatusCode::kUnavailable, "muster at " + url + " does not answer (" +
                                                httplib::to_string(res.error()) + ")");
  }
  if (res->status != 200) {
    return Status(StatusCode::kUnavailable, "muster at " + url + kStatePath + " answered HTTP " +
                                                std::to_string(res->status));
  }
  return res->body;
}

}  // namespace

StatusOr<std::string> FetchThroughProxy(kube::Client& client, const std::string& ns,
                                        const std::string& port) {
  kube::ListOptions options;
  options.label_selector = "app.kubernetes.io/name=muster";
  MUSTER_ASSIGN_OR_RETURN(std::string list,
                          client.List(kube::ResourceRef::Core("pods", ns), options));
  MUSTER_ASSIGN_OR_RETURN(kube::ObjectList<Pod> pods, kube::DecodePodList(list));
  std::string ready;
  Status last(StatusCode::kUnavailable,
              "no muster pod in namespace " + ns + " (label app.kubernetes.io/name=muster)");
  for (const Pod& pod : pods.items) {
    const kube::ResourceRef proxy = kube::ResourceRef::Core("pods", ns, pod.meta.name + ":" + port);
    StatusOr<std::string> readyz = client.Get(proxy.WithSubresource("proxy/readyz"));
    if (!readyz.ok()) {
      last = readyz.status();
      continue;
    }
    if (readyz->find("leader") != std::string::npos || ready.empty()) ready = pod.meta.name;
    if (readyz->find("leader") != std::string::npos) break;
  }
  if (ready.empty()) {
    return Status(StatusCode::kUnavailable, "cannot reach muster through the API server: " +
                                                last.message() + " (or give --muster-url)");
  }
  return client.Get(
      kube::ResourceRef::Core("pods", ns, ready + ":" + port).WithSubresource("proxy/debug/state"));
}

std::vector<FlagSpec> MusterStateFlags() {
  return {
      {.name = "muster-url",
       .value_name = "URL",
       .help = "read muster's state from this extender URL instead of through the API server"},
      {.name = "muster-namespace",
       .value_name = "NS",
       .help = "where muster's pods run",
       .default_value = "muster-system"},
      {.name = "muster-port",
       .value_name = "PORT",
       .help = "the muster pods' port serving /debug/state",
       .default_value = "8080"},
  };
}

StatusOr<std::string> FetchMusterState(Session& session, const Args& args) {
  if (args.Has("muster-url")) return FetchDirect(args.Get("muster-url"), session.config().timeout);
  return FetchThroughProxy(session.client(), args.Get("muster-namespace", "muster-system"),
                           args.Get("muster-port", "8080"));
}

}  // namespace muster::cli
