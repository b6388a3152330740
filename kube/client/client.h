// Client: the Kubernetes API verbs muster uses, on raw JSON.
//
// Every verb returns the response body as JSON text; callers decode it with
// kube/codec. There is deliberately no Update (PUT of a whole object): muster
// models only part of each object, and a PUT of a decoded object would erase
// what it does not model. Writes are patches, creates, deletes and subresource
// posts (pods/binding, pods/eviction).
//
// Errors: a non-2xx answer becomes a Status mapped as api_error.h describes,
// carrying the HTTP code and the metav1.Status reason.
//
// Rate limiting: a token bucket (ClientConfig::qps/burst) is taken before
// every attempt, retries included.
//
// Retries (with jittered exponential backoff, honouring Retry-After):
//   - 429 Too Many Requests: every verb.
//   - 5xx except 501, and connection failures: every verb but POST.
//   - POST (create, binding, eviction) is retried only on 429 and when the
//     transport proves the request never reached the server: the connect,
//     the TLS handshake or a write of the request failed (http_transport.h,
//     kReasonNotSent). With cpp-httplib we cannot tell whether a request
//     whose connection broke while we waited for the answer was processed,
//     so such a POST is not repeated and returns Unavailable with reason
//     kReasonMaybeSent: the caller must read back before trying again.
//   - Retried PATCH/DELETE are the caller's contract: a merge patch is
//     idempotent; a JSON patch "add" to a list or a DELETE whose first
//     attempt succeeded unseen can answer differently the second time
//     (e.g. 404 NotFound for the DELETE).
//
// Thread-safety: thread-safe. Calls may run concurrently from many threads;
// a watch (Stream) never blocks other calls. The Client must outlive every
// call and every Informer using it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client/backoff.h"
#include "kube/client/cancel.h"
#include "kube/client/http_transport.h"
#include "kube/client/kubeconfig.h"
#include "kube/client/rate_limiter.h"
#include "kube/client/resource_ref.h"
#include "model/clock.h"
#include "model/status.h"

namespace muster::kube {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;        // "" = most recent (a consistent read)
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  int64_t limit = 0;                   // page size; 0 = everything in one answer
  std::string continue_token;
  int timeout_seconds = 0;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kJson,            // application/json-patch+json (RFC 6902)
};
std::string_view PatchContentType(PatchType type);

struct DeleteOptions {
  std::string precondition_uid;               // delete only this incarnation
  std::string precondition_resource_version;  // delete only this version
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", "Orphan", "Background", "Foreground"
};

struct RetryPolicy {
  int max_attempts = 5;  // tries per call, the first one included
  BackoffOptions backoff{std::chrono::milliseconds(200), std::chrono::seconds(5), 2.0, 0.2,
                         Duration(0)};
  Duration max_retry_after = std::chrono::seconds(30);  // cap on a server's Retry-After
};

struct ClientOptions {
  RetryPolicy retry;
  const Clock* clock = nullptr;          // null: RealClock(); must outlive the Client
  Sleeper sleeper;                       // null: RealSleeper()
  RandomSource random;                   // null: DefaultRandomSource(); must be thread-safe
  std::string field_manager = "muster";  // ?fieldManager= on creates and patches
  // Leader election's fence: when set, every request but a GET (each retry
  // too) first asks it, and is refused FailedPrecondition without being sent
  // while it is false - so a replica that is no longer the leader writes
  // nothing, whichever of its threads tries. Must be thread-safe and cheap.
  std::function<bool()> write_fence;
};

// The metadata of a list answer.
struct ListMeta {
  std::string resource_version;
  std::string continue_token;
};
// Reads metadata.resourceVersion/continue of a list, stopping after the
// metadata (the items are not parsed). InvalidArgument for malformed JSON.
StatusOr<ListMeta> ReadListMeta(std::string_view list_json);

// Objects per list page when a caller names none. Pages of 2000, not 500: a
// list's pages after the first (those with a continue token) cost
// kube-apiserver more than their objects - on a quiet 1.37 cluster it served
// them from etcd, not from its watch cache
// (apiserver_storage_list_total{storage="etcd"}) - and 50 000 kwok pods read
// whole took 3.9-4.5 s in pages of 500, 2.6-2.8 s in pages of 2000, 2.5-2.9 s
// in pages of 5000 (3 rounds each). A page of 2000 pods is ~7 MB of JSON.
inline constexpr int64_t kDefaultListPageSize = 2000;

// One page of a list as Client::ListEach hands it over.
struct ListPage {
  std::string json;  // the answer: {"metadata":{...},"items":[...]}
  ListMeta meta;     // its metadata (a page's continue token is "" on the last)
  // The first page of the list; again after a restart (the continue token
  // expired): whatever the earlier pages said belongs to a list that is void.
  bool first = false;
};
// Handles one page (its own: the handler may keep or drop it); an error ends
// the list with it.
using ListPageHandler = std::function<Status(ListPage page)>;

class Client {
 public:
  // A client on the cpp-httplib transport for `config`.
  static StatusOr<std::unique_ptr<Client>> New(const ClientConfig& config,
                                               ClientOptions options = {});
  // A client on any transport (tests); `config` supplies qps/burst only.
  Client(std::shared_ptr<HttpTransport> transport, const ClientConfig& config,
         ClientOptions options = {});

  StatusOr<std::string> Get(const ResourceRef& ref, CancelToken* cancel = nullptr);

  // One page (or everything when options.limit is 0) of `ref`'s collection.
  StatusOr<std::string> List(const ResourceRef& ref, const ListOptions& options = {},
                             CancelToken* cancel = nullptr);

  // Every page, following metadata.continue (limit defaults to kDefaultListPageSize). When a
  // continue token expires (410 Gone) the list restarts from the first page,
  // at most 3 times. All pages share the first page's resourceVersion.
  // Holds the whole collection's JSON at once: for a large collection, use
  // ListEach.
  StatusOr<std::vector<std::string>> ListAll(const ResourceRef& ref, ListOptions options = {},
                                             CancelToken* cancel = nullptr);

  // ListAll's pages, handed to `on_page` one at a time, in order, as they
  // arrive. The next page is asked for (on a thread of its own) while
  // `on_page` holds this one, so at most two pages are held at once and a
  // client's memory does not grow with the collection; when `on_page` fails,
  // the page already asked for is waited for and dropped. A
  // restart (continue token expired) starts again with a page whose `first`
  // is set. Returns the first error, `on_page`'s included; Ok once the last
  // page was handled. `on_page` runs on the calling thread.
  Status ListEach(const ResourceRef& ref, ListOptions options, const ListPageHandler& on_page,
                  CancelToken* cancel = nullptr);

  // POST `body_json`: to the collection of `ref`, or, when ref.subresource is
  // set, to that subresource of ref.name (pods/binding, pods/eviction).
  StatusOr<std::string> Create(const ResourceRef& ref, std::string_view body_json,
                               CancelToken* cancel = nullptr);

  // PATCH ref (an object or its subresource, e.g. "status").
  StatusOr<std::string> Patch(const ResourceRef& ref, PatchType type, std::string_view patch,
                              CancelToken* cancel = nullptr);
  StatusOr<std::string> PatchStatus(const ResourceRef& ref, PatchType type, std::string_view patch,
                                    CancelToken* cancel = nullptr) {
    return Patch(ref.WithSubresource("status"), type, patch, cancel);
  }

  StatusOr<std::string> Delete(const ResourceRef& ref, const DeleteOptions& options = {},
                               CancelToken* cancel = nullptr);

  // POST pods/<pod>/binding with a Binding (kube/codec EncodeBinding).
  StatusOr<std::string> Bind(const std::string& ns, const std::string& pod,
                             std::string_view binding_json, CancelToken* cancel = nullptr);
  // POST pods/<pod>/eviction with an Eviction (kube/codec EncodeEviction).
  StatusOr<std::string> Evict(const std::string& ns, const std::string& pod,
                              std::string_view eviction_json, CancelToken* cancel = nullptr);

  // A streamed GET (watch). `target` is a path with query. 2xx bodies go to
  // `on_data`; a non-2xx answer is returned as an error. Rate-limited, never
  // retried. `read_timeout` 0 means the transport's default.
  Status Stream(const std::string& target, const ChunkHandler& on_data, Duration read_timeout,
                CancelToken* cancel = nullptr);

  // Aborts every call in flight; later calls fail with Cancelled.
  void Shutdown() { transport_->Cancel(); }

  // Up to `connections` requests are about to go at once: connections for
  // them are opened in the background (HttpTransport::Prewarm). Never blocks.
  void Prewarm(int connections) { transport_->Prewarm(connections); }

 private:
  StatusOr<std::string> Do(HttpRequest request, CancelToken* cancel);
  bool ShouldRetry(const Status& error, bool is_post) const;
  Duration RetryDelay(const HttpResponse* response, Backoff& backoff) const;

  const std::shared_ptr<HttpTransport> transport_;
  const ClientOptions options_;
  const Clock& clock_;
  const Sleeper sleeper_;
  RateLimiter limiter_;
};

}  // namespace muster::kube
