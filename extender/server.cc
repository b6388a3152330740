#include "extender/server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/ops_server.h"
#include "kube/client/client.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/json.h"
#include "model/quantity.h"

namespace muster::extender {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

// cpp-httplib routes are regular expressions: escape everything but the
// characters NormalizePrefix allows unescaped.
std::string EscapeRegex(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-') {
      out += c;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

void WriteResources(kube::JsonWriter& w, std::string_view key, const Resources& r) {
  w.Key(key);
  w.StartObject();
  for (const auto& [name, amount] : r.entries()) {
    w.Key(name);
    w.Int(amount);
  }
  w.EndObject();
}

// Free amount of every resource the node has or hands out.
Resources FreeOf(const NodeInfo& node) {
  Resources free = node.allocatable;
  for (const auto& [name, amount] : node.allocated.entries()) {
    free.Set(name, node.allocatable.Get(name) - amount);
  }
  return free;
}

// The pods sharing each GPU, by node then GPU index.
using SharersByGpu = std::map<std::string, std::map<int, std::vector<std::string>>, std::less<>>;

// A node's GPUs when some are shared or Volcano's vGPU plugin registered
// them: per GPU its holders, sharers and what it has left to share. Compute
// in GPUs ("0.5"), memory in MiB.
void WriteGpus(kube::JsonWriter& w, const NodeInfo& node, const SharersByGpu& sharers) {
  const NodeGpus& gpus = node.Gpus();
  if (gpus.cards == nullptr || (!gpus.vgpu && !node.gpu_holds.AnyShared())) return;
  const auto of_node = sharers.find(node.name);
  w.Key("gpus");
  w.StartArray();
  for (int g = 0; g < gpus.count(); ++g) {
    const GpuCard& card = (*gpus.cards)[static_cast<size_t>(g)];
    const GpuCardUse& use = node.gpu_holds.uses[static_cast<size_t>(g)];
    w.StartObject();
    w.IntField("index", g);
    w.StringFieldIfSet("uuid", card.uuid);
    w.IntFieldIfSet("memoryMiB", card.memory_mib);
    w.IntFieldIfSet("maxSharers", card.max_sharers);
    w.IntField("wholeHolders", use.whole);
    w.IntField("sharers", use.sharers);
    w.StringField("sharedCompute", FormatResourceQuantity(kNvidiaGpu, use.compute));
    w.StringField("freeShare", FormatResourceQuantity(
                                   kNvidiaGpu, use.whole > 0 ? 0 : kGpuCompute - use.compute));
    w.IntFieldIfSet("sharedMemoryMiB", use.memory_mib);
    w.Key("sharerPods");
    w.StartArray();
    if (of_node != sharers.end()) {
      if (auto it = of_node->second.find(g); it != of_node->second.end()) {
        for (const std::string& pod : it->second) w.String(pod);
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void WriteNode(kube::JsonWriter& w, const NodeInfo& node, const SharersByGpu& sharers) {
  w.StartObject();
  w.StringField("name", node.name);
  w.Key("known");
  w.Bool(node.known());
  WriteResources(w, "allocatable", node.allocatable);
  WriteResources(w, "allocated", node.allocated);
  WriteResources(w, "free", FreeOf(node));
  w.IntField("boundPods", node.bound_pods);
  w.IntField("assumedPods", node.assumed_pods);
  WriteGpus(w, node, sharers);
  w.EndObject();
}

// cpp-httplib (0.11) reads the body of these methods before routing.
bool ReadsBody(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE" ||
         method == "PRI";
}

// A body whose size cpp-httplib 0.11 does not bound, as {status, reason}; {0,
// ""} for one it does. It enforces the body limit only against Content-Length
// and buffers the others whole: a chunked body, a body without a length (read
// until the peer closes) and a compressed one (inflated in memory, 1000:1 for
// gzip) could each take any amount of memory. kube-scheduler always sends a
// plain body with Content-Length (HTTPExtender.send, pkg/scheduler/extender.go), so these are
// refused before anything is read.
std::pair<int, std::string> UnboundedBody(const httplib::Request& req) {
  if (!ReadsBody(req.method)) return {0, ""};
  if (req.has_header("Transfer-Encoding")) {
    return {411, "Transfer-Encoding is not accepted; send the body with Content-Length\n"};
  }
  if (!req.has_header("Content-Length")) return {411, "Content-Length required\n"};
  const std::string encoding = req.get_header_value("Content-Encoding");
  if (!encoding.empty() && encoding != "identity") {
    return {415, "Content-Encoding " + encoding + " is not accepted; send the body uncompressed\n"};
  }
  return {0, ""};
}

// The watched PodGroups (by namespace/name, with minMember and queue) and
// Queues (weight, state): what the gang and queue steps decide from.
void WriteWorkloads(kube::JsonWriter& w, const WorkloadView& workloads) {
  w.Key("podGroups");
  w.StartArray();
  for (const auto& [key, group] : workloads.pod_groups()) {
    w.StartObject();
    w.StringField("name", key);
    w.IntField("minMember", group.spec.min_member);
    w.StringField("queue", group.spec.queue.empty() ? "default" : group.spec.queue);
    w.StringField("phase", group.status.phase);
    w.EndObject();
  }
  w.EndArray();
  w.Key("queues");
  w.StartArray();
  for (const auto& [name, queue] : workloads.queues()) {
    w.StartObject();
    w.StringField("name", name);
    w.IntField("weight", queue.spec.weight);
    w.StringField("state", queue.status.state);
    w.EndObject();
  }
  w.EndArray();
}

// kube-scheduler's Go client sends "Accept-Encoding: gzip" with every call,
// and cpp-httplib (built with zlib) then gzips the reply after the handler:
// ~2 ms for a 5000-node reply, several times the decision itself, spent
// where no metric sees it - on loopback or in-cluster, bytes are cheaper.
// The request object is ours to change here (cpp-httplib hands it out as
// const, but owns it non-const and reads the header only after routing).
void NeverCompressVerbReplies(const httplib::Request& req) {
  if (req.method != "POST") return;
  const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
}

// The connection guard's limits: workers, request heads, the request
// deadline, connection caps, keep-alive and read timeouts.
base::GuardOptions GuardOptionsOf(const ServerOptions& options) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  return {.max_head_bytes = options.max_head_bytes,
          .max_headers = options.max_headers,
          .request_deadline = duration_cast<milliseconds>(options.request_deadline),
          .keep_alive_timeout = duration_cast<milliseconds>(options.keep_alive_timeout),
          .read_timeout = duration_cast<milliseconds>(options.read_timeout),
          .max_connections = options.max_connections,
          .max_connections_per_client = options.max_connections_per_client,
          .threads = std::max(1, options.threads)};
}

// The server's connections (the guard has the rest, GuardOptionsOf): TCP
// and socket options, the body limit (and the bodies it cannot bound,
// refused unread). (base::BindPort raises the listen backlog: a burst of
// parallel binds beyond cpp-httplib's 5 found connections dropped.)
void ConfigureConnections(httplib::Server& http, const ServerOptions& options) {
  http.set_tcp_nodelay(true);
  base::ReuseAddressOnly(http);
  http.set_payload_max_length(options.max_body_bytes);
  // The limit above holds only for Content-Length bodies: refuse the others
  // unread. Their body is still on the connection, so ask the client to
  // close it (cpp-httplib would parse the rest as further requests).
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    auto [status, reason] = UnboundedBody(req);
    if (status == 0) {
      NeverCompressVerbReplies(req);
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = status;
    res.set_header("Connection", "close");
    res.set_content(reason, kText);
    return httplib::Server::HandlerResponse::Handled;
  });
}

// Every error answer has a text body (413 names the limit), and an exception
// out of a handler is answered 500 instead of ending the worker.
void AnswerErrorsInText(httplib::Server& http, size_t limit) {
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [limit](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (res.status == 413) {
          res.set_content("request body exceeds the limit of " + std::to_string(limit) + " bytes\n",
                          kText);
        } else {
          res.set_content("HTTP " + std::to_string(res.status) + "\n", kText);
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  // The boundary for exceptions: cpp-httplib (and allocation) may throw; our
  // code does not. The worker answers 500 and lives on.
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("extender: {} {}: {}", req.method, req.path, what);
        res.status = 500;
        res.set_content("internal error: " + what + "\n", kText);
      });
}

}  // namespace

StatusOr<std::string> NormalizePrefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (prefix.empty()) return std::string();
  if (prefix.front() != '/') {
    return Status(StatusCode::kInvalidArgument,
                  "prefix \"" + std::string(prefix) + "\" must start with '/'");
  }
  for (char c : prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("/_-.").find(c) == std::string_view::npos) {
      return Status(StatusCode::kInvalidArgument, "prefix \"" + std::string(prefix) +
                                                      "\" may hold only letters, digits and /_-.");
    }
  }
  return std::string(prefix);
}

// ---- KubeBinder.

bool BindRetryable(const Status& post) {
  switch (post.code()) {
    case StatusCode::kUnavailable:        // 5xx, connection refused or broken
    case StatusCode::kInternal:           // 500
    case StatusCode::kDeadlineExceeded:   // a timeout
    case StatusCode::kResourceExhausted:  // 429: throttled before processing
      return true;
    default:
      return false;
  }
}

StatusOr<Pod> Binder::GetPod(std::string_view, std::string_view) {
  return Status(StatusCode::kUnimplemented, "this binder cannot look pods up");
}

KubeBinder::KubeBinder(kube::Client* client, KubeBinderOptions options)
    : client_(client), options_(options) {}

Status KubeBinder::Bind(const Binding& binding) {
  const auto deadline = std::chrono::steady_clock::now() + options_.deadline;
  const std::string json = kube::EncodeBinding(binding);
  Duration backoff = options_.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    StatusOr<std::string> posted = client_->Bind(binding.meta.namespace_, binding.meta.name, json);
    if (posted.ok()) return Status::Ok();
    const Status& error = posted.status();
    // A retry after a POST that landed answers 409 "already assigned":
    // FinishBind reads that as success, so the retry is safe.
    if (!BindRetryable(error) || std::chrono::steady_clock::now() + backoff >= deadline) {
      return error;
    }
    spdlog::warn("bind {}/{} to {}: attempt {} failed ({}), retrying", binding.meta.namespace_,
                 binding.meta.name, binding.target_node, attempt, error.ToString());
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

StatusOr<Pod> KubeBinder::GetPod(std::string_view ns, std::string_view name) {
  StatusOr<std::string> json =
      client_->Get(kube::ResourceRef::Core("pods", std::string(ns), std::string(name)));
  if (!json.ok()) return json.status();
  return kube::DecodePod(*json);
}

// ---- Server.

Server::Server(ServerOptions options, ServerDeps deps)
    : options_(std::move(options)),
      deps_(std::move(deps)),
      barrier_({.max_hold = options_.gang_bind_hold,
                .max_held = std::max(1, options_.threads - kWorkersNeverHeld)}) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  StatusOr<std::string> prefix = NormalizePrefix(options_.prefix);
  if (!prefix.ok()) return prefix.status();
  if (options_.tls_cert_path.empty() != options_.tls_key_path.empty()) {
    return Status(StatusCode::kInvalidArgument, "TLS needs both a certificate and a key");
  }
  if (!options_.client_ca_path.empty() && options_.tls_cert_path.empty()) {
    return Status(StatusCode::kInvalidArgument, "a client CA needs TLS (a certificate and a key)");
  }
  const base::GuardOptions guard = GuardOptionsOf(options_);
  http_ = options_.tls_cert_path.empty()
              ? base::NewGuardedServer(guard)
              : base::NewGuardedTlsServer(guard, options_.tls_cert_path, options_.tls_key_path,
                                          options_.client_ca_path);
  if (!http_->is_valid()) {
    return Status(StatusCode::kInvalidArgument,
                  "cannot load the TLS certificate, key or client CA (" + options_.tls_cert_path +
                      ", " + options_.tls_key_path + ", " + options_.client_ca_path + ")");
  }
  Route();
  port_ = base::BindPort(*http_, options_.listen_address, options_.port);
  if (port_ <= 0) {
    return Status(StatusCode::kUnavailable,
                  base::CannotListenMessage(options_.listen_address, options_.port));
  }
  listener_.Start(http_.get(), [](const std::exception& e) {
    spdlog::error("extender HTTP server stopped: {}", e.what());
  });
  return Status::Ok();
}

void Server::Stop() { listener_.Stop(); }

base::GuardStats Server::guard_stats() const {
  return http_ == nullptr ? base::GuardStats{} : base::GuardStatsOf(*http_);
}

void Server::Route() {
  ConfigureConnections(*http_, options_);
  const std::string prefix = EscapeRegex(*NormalizePrefix(options_.prefix));
  for (std::string_view verb : kVerbs) {
    http_->Post(prefix + "/" + std::string(verb),
                [this, verb](const httplib::Request& req, httplib::Response& res) {
                  std::string type;
                  std::string body;
                  HandleVerb(verb, req.body, &res.status, &type, &body);
                  res.set_content(std::move(body), type.c_str());
                });
  }
  base::AddOpsEndpoints(*http_, {.metrics = [this] { return deps_.metrics->Text(); },
                                 .ready = deps_.ready,
                                 .not_ready_reason = "caches not synced yet",
                                 .role = deps_.role});
  http_->Get("/debug/state", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(DebugState(), "application/json");
  });
  AnswerErrorsInText(*http_, options_.max_body_bytes);
}

void Server::HandleVerb(std::string_view verb, const std::string& body, int* status,
                        std::string* content_type, std::string* reply) {
  const auto start = std::chrono::steady_clock::now();
  VerbReply r;
  if (verb == "filter") {
    r = deps_.pipeline->Filter(body);
  } else if (verb == "prioritize") {
    r = deps_.pipeline->Prioritize(body);
  } else if (verb == "preempt") {
    r = deps_.pipeline->Preempt(body);
  } else {
    r = Bind(body);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  deps_.metrics->ObserveRequest(verb, r.outcome, took.count());
  deps_.metrics->CountDecisions(verb, r.decisions);
  if (!r.gpu_set.empty()) deps_.metrics->CountGpuSet(r.gpu_set);
  if (r.gpu_set == "shared") deps_.metrics->CountShareRequest("bound");
  if (!r.share_outcome.empty()) deps_.metrics->CountShareRequest(r.share_outcome);
  if (verb == "bind" && r.outcome != ReplyOutcome::kOk) {
    for (const auto& [reason, count] : r.decisions) deps_.metrics->CountBindFailure(reason);
  }
  *status = r.http_status;
  *content_type = std::string(r.content_type);
  *reply = std::move(r.body);
}

VerbReply Server::Bind(const std::string& body) {
  BindPlan plan = deps_.pipeline->ReserveBind(body);
  if (plan.action == BindAction::kReject && plan.code == kReasonPodUnknown &&
      LearnPodFromApi(plan.args)) {
    plan = deps_.pipeline->ReserveBind(body);
  }
  if (plan.action != BindAction::kPost) return deps_.pipeline->AnswerBind(plan);
  if (!plan.gang.empty() && barrier_.enabled()) {
    const BarrierOutcome held = barrier_.Hold(plan.gang, plan.args.pod_uid, plan.gang_reserved);
    deps_.metrics->ObserveBindHold(BarrierReleaseName(held.release),
                                   std::chrono::duration<double>(held.held).count());
  }
  const Status post = deps_.binder->Bind(plan.binding);
  return deps_.pipeline->FinishBind(plan, post);
}

bool Server::LearnPodFromApi(const kube::ExtenderBindingArgs& args) {
  StatusOr<Pod> pod = deps_.binder->GetPod(args.pod_namespace, args.pod_name);
  if (!pod.ok() || pod->meta.uid != args.pod_uid) return false;
  bool learned = false;
  deps_.cluster->Exclusive([&](ClusterState& state) {
    // The watch may have delivered it meanwhile, and its news is newer.
    if (state.FindPod(args.pod_uid) != nullptr) return;
    state.UpsertPod(*pod);
    learned = true;
  });
  spdlog::info("bind {}/{}: pod not yet watched; {} from the API", args.pod_namespace,
               args.pod_name, learned ? "read it" : "the watch delivered it meanwhile");
  return true;
}

std::string Server::DebugState() {
  const ClusterSnapshot snapshot = deps_.cluster->Snapshot({});
  size_t assumed = 0;
  size_t pods = 0;
  SharersByGpu sharers;
  deps_.cluster->Exclusive([&](ClusterState& state) {
    assumed = state.assumed_count();
    pods = state.pod_count();
    state.ForEachPod([&](const PodRecord& pod) {
      if (!pod.Counts()) return;
      for (const GpuSlice& s : pod.gpus.slices) {
        sharers[pod.node_name][s.gpu].push_back(ObjectKey(pod.namespace_, pod.name));
      }
    });
  });
  std::vector<const NodeInfo*> nodes;
  snapshot.ForEachNode([&](const NodeInfo& node) { nodes.push_back(&node); });
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeInfo* a, const NodeInfo* b) { return a->name < b->name; });
  kube::JsonWriter w;
  w.StartObject();
  w.IntField("generation", static_cast<int64_t>(snapshot.generation()));
  w.IntField("knownNodes", static_cast<int64_t>(snapshot.node_count()));
  w.IntField("pods", static_cast<int64_t>(pods));
  // Reservations: bind's assumed placements not yet seen bound; per node
  // in assumedPods (and inside "allocated").
  w.IntField("reservations", static_cast<int64_t>(assumed));
  w.Key("nodes");
  w.StartArray();
  for (const NodeInfo* node : nodes) WriteNode(w, *node, sharers);
  w.EndArray();
  WriteWorkloads(w, snapshot.workloads());
  // Each gang's phase, members and why it waits, as the last pass saw them.
  w.Key("gangs");
  w.RawValue(deps_.gangs ? deps_.gangs() : "[]");
  // Each queue's deserved share, holdings and share, as the last pass saw them.
  w.Key("fairShare");
  w.RawValue(deps_.queues ? deps_.queues() : "{}");
  // What the watches delivered and muster cannot decode (each answered on
  // the object where it can be: PodGroups, Queues).
  w.Key("undecodable");
  w.StartArray();
  if (deps_.undecodable) {
    for (const UndecodableEntry& e : deps_.undecodable()) {
      w.StartObject();
      w.StringField("kind", e.kind);
      w.StringField("key", e.key);
      w.StringField("problem", e.problem);
      w.StringField("reason", e.reason);
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::extender
