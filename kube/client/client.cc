#include "kube/client/client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "base/mutex.h"
#include "kube/client/api_error.h"
#include "kube/codec/json.h"

namespace muster::kube {
namespace {

constexpr int kMaxListRestarts = 3;
constexpr size_t kMaxErrorBody = 64 * 1024;

bool Is2xx(int status) { return status >= 200 && status < 300; }

// Retry-After in seconds (the API server never sends the HTTP-date form).
std::optional<Duration> ParseRetryAfter(const std::string& value) {
  int64_t seconds = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || ptr != value.data() + value.size() || seconds < 0) return std::nullopt;
  return std::chrono::seconds(seconds);
}

std::string ListQuery(const ListOptions& options) {
  QueryBuilder q;
  q.AddIfSet("labelSelector", options.label_selector);
  q.AddIfSet("fieldSelector", options.field_selector);
  // The API server rejects a resourceVersion next to a continue token.
  if (options.continue_token.empty()) {
    q.AddIfSet("resourceVersion", options.resource_version);
    q.AddIfSet("resourceVersionMatch", options.resource_version_match);
  }
  if (options.limit > 0) q.Add("limit", std::to_string(options.limit));
  q.AddIfSet("continue", options.continue_token);
  if (options.timeout_seconds > 0) q.Add("timeoutSeconds", std::to_string(options.timeout_seconds));
  return q.str();
}

std::string DeleteBody(const DeleteOptions& options) {
  JsonWriter w;
  w.StartObject();
  w.StringField("kind", "DeleteOptions");
  w.StringField("apiVersion", "v1");
  w.OptionalIntField("gracePeriodSeconds", options.grace_period_seconds);
  w.StringFieldIfSet("propagationPolicy", options.propagation_policy);
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    w.Key("preconditions");
    w.StartObject();
    w.StringFieldIfSet("uid", options.precondition_uid);
    w.StringFieldIfSet("resourceVersion", options.precondition_resource_version);
    w.EndObject();
  }
  w.EndObject();
  return w.TakeString();
}

// SAX handler collecting the top-level "metadata" strings of a list; stops
// the parse as soon as that object ends, so the items are never parsed.
class ListMetaHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ListMetaHandler> {
 public:
  explicit ListMetaHandler(ListMeta* out) : out_(out) {}

  bool Key(const char* str, rapidjson::SizeType len, bool) {
    key_.assign(str, len);
    if (depth_ == 1) in_metadata_next_ = key_ == "metadata";
    return true;
  }
  bool String(const char* str, rapidjson::SizeType len, bool) {
    if (depth_ == 2 && in_metadata_) {
      if (key_ == "resourceVersion") out_->resource_version.assign(str, len);
      if (key_ == "continue") out_->continue_token.assign(str, len);
    }
    return true;
  }
  bool StartObject() {
    ++depth_;
    if (depth_ == 2 && in_metadata_next_) in_metadata_ = true;
    in_metadata_next_ = false;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (depth_ == 2 && in_metadata_) {
      done_ = true;
      return false;  // stop: the rest is items
    }
    --depth_;
    return true;
  }
  bool StartArray() {
    ++depth_;
    in_metadata_next_ = false;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool Default() {
    in_metadata_next_ = false;
    return true;
  }
  bool done() const { return done_; }

 private:
  ListMeta* out_;
  std::string key_;
  int depth_ = 0;
  bool in_metadata_next_ = false;
  bool in_metadata_ = false;
  bool done_ = false;
};

// Reads a list's pages on a thread of its own, one page ahead of the
// handler: the API server encodes the next page while ListEach's caller
// decodes this one. One thread for the whole list, not one per page: each
// new thread takes a malloc arena of its own, and a thread per page left
// ~16 arenas holding ~4 MiB of freed pages each after a 50 000-pod list.
// Thread-safety: Ask and Take from one thread (the list's), in turn.
class PageReader {
 public:
  using ListFn = std::function<StatusOr<std::string>(const ListOptions&)>;
  explicit PageReader(ListFn list) : list_(std::move(list)), thread_([this] { Run(); }) {}
  // Waits for the page asked for last, if not taken, and drops it.
  ~PageReader() {
    {
      base::MutexLock lock(&mu_);
      done_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }
  PageReader(const PageReader&) = delete;
  PageReader& operator=(const PageReader&) = delete;

  // Starts reading the page `options` names. REQUIRES: no page in flight.
  void Ask(ListOptions options) MUSTER_EXCLUDES(mu_) {
    {
      base::MutexLock lock(&mu_);
      asked_ = std::move(options);
    }
    cv_.SignalAll();
  }
  // Waits for the page last asked for. REQUIRES: Ask before each Take.
  StatusOr<std::string> Take() MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    while (!answer_) cv_.Wait(&mu_);
    StatusOr<std::string> page = std::move(*answer_);
    answer_.reset();
    return page;
  }

 private:
  void Run() MUSTER_EXCLUDES(mu_) {
    for (;;) {
      ListOptions options;
      {
        base::MutexLock lock(&mu_);
        while (!asked_ && !done_) cv_.Wait(&mu_);
        if (!asked_) return;  // a page asked for is read even when the list ended
        options = std::move(*asked_);
        asked_.reset();
      }
      StatusOr<std::string> page = list_(options);
      {
        base::MutexLock lock(&mu_);
        answer_ = std::move(page);
      }
      cv_.SignalAll();
    }
  }

  const ListFn list_;
  base::Mutex mu_;
  base::CondVar cv_;
  std::optional<ListOptions> asked_ MUSTER_GUARDED_BY(mu_);
  std::optional<StatusOr<std::string>> answer_ MUSTER_GUARDED_BY(mu_);
  bool done_ MUSTER_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it runs on the members above
};

}  // namespace

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

StatusOr<ListMeta> ReadListMeta(std::string_view list_json) {
  ListMeta meta;
  ListMetaHandler handler(&meta);
  rapidjson::MemoryStream stream(list_json.data(), list_json.size());
  rapidjson::Reader reader;
  rapidjson::ParseResult result = reader.Parse(stream, handler);
  if (!result && !handler.done()) {
    return InvalidArgumentError("list answer is not valid JSON at offset " +
                                std::to_string(result.Offset()));
  }
  return meta;
}

StatusOr<std::unique_ptr<Client>> Client::New(const ClientConfig& config, ClientOptions options) {
  MUSTER_ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> transport, NewHttpTransport(config));
  return std::make_unique<Client>(std::shared_ptr<HttpTransport>(std::move(transport)), config,
                                  std::move(options));
}

Client::Client(std::shared_ptr<HttpTransport> transport, const ClientConfig& config,
               ClientOptions options)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock()),
      sleeper_(options_.sleeper ? options_.sleeper : RealSleeper()),
      limiter_(config.qps, config.burst, clock_, sleeper_) {}

StatusOr<std::string> Client::Get(const ResourceRef& ref, CancelToken* cancel) {
  MUSTER_RETURN_IF_ERROR(ref.Validate());
  return Do(HttpRequest{.method = "GET", .target = ref.Path()}, cancel);
}

StatusOr<std::string> Client::List(const ResourceRef& ref, const ListOptions& options,
                                   CancelToken* cancel) {
  const ResourceRef collection = ref.Collection();
  MUSTER_RETURN_IF_ERROR(collection.Validate());
  return Do(HttpRequest{.method = "GET", .target = collection.Path() + ListQuery(options)}, cancel);
}

StatusOr<std::vector<std::string>> Client::ListAll(const ResourceRef& ref, ListOptions options,
                                                   CancelToken* cancel) {
  std::vector<std::string> pages;
  MUSTER_RETURN_IF_ERROR(ListEach(
      ref, std::move(options),
      [&pages](ListPage page) {
        if (page.first) pages.clear();  // a restart: the pages so far are void
        pages.push_back(std::move(page.json));
        return Status::Ok();
      },
      cancel));
  return pages;
}

Status Client::ListEach(const ResourceRef& ref, ListOptions options, const ListPageHandler& on_page,
                        CancelToken* cancel) {
  if (options.limit <= 0) options.limit = kDefaultListPageSize;
  const std::string first_resource_version = options.resource_version;
  PageReader reader([this, &ref, cancel](const ListOptions& page_options) {
    return List(ref, page_options, cancel);
  });
  for (int restarts = 0;; ++restarts) {
    options.continue_token.clear();
    options.resource_version = first_resource_version;
    reader.Ask(options);
    for (bool first = true;; first = false) {
      StatusOr<std::string> json = reader.Take();
      if (!json.ok()) {
        const bool expired =
            json.status().code() == StatusCode::kGone && !first && restarts < kMaxListRestarts;
        if (!expired) return json.status();
        spdlog::info("list {}: continue token expired, restarting the list", ref.DebugString());
        break;
      }
      ListPage page{.json = std::move(json).value(), .first = first};
      StatusOr<ListMeta> meta = ReadListMeta(page.json);
      if (!meta.ok()) return meta.status().Annotate("list " + ref.DebugString());
      page.meta = std::move(meta).value();
      options.continue_token = page.meta.continue_token;
      const bool last = options.continue_token.empty();
      // The next page is on its way while this one is handled: a list takes
      // the slower of the API server and on_page, not their sum.
      if (!last) reader.Ask(options);
      MUSTER_RETURN_IF_ERROR(on_page(std::move(page)));
      if (last) return Status::Ok();
    }
  }
}

StatusOr<std::string> Client::Create(const ResourceRef& ref, std::string_view body_json,
                                     CancelToken* cancel) {
  const ResourceRef target = ref.subresource.empty() ? ref.Collection() : ref;
  MUSTER_RETURN_IF_ERROR(target.Validate());
  QueryBuilder q;
  q.AddIfSet("fieldManager", options_.field_manager);
  return Do(HttpRequest{.method = "POST",
                        .target = target.Path() + q.str(),
                        .body = std::string(body_json),
                        .content_type = "application/json"},
            cancel);
}

StatusOr<std::string> Client::Patch(const ResourceRef& ref, PatchType type, std::string_view patch,
                                    CancelToken* cancel) {
  MUSTER_RETURN_IF_ERROR(ref.Validate());
  if (ref.name.empty()) return InvalidArgumentError("patch " + ref.DebugString() + ": no name");
  QueryBuilder q;
  q.AddIfSet("fieldManager", options_.field_manager);
  return Do(HttpRequest{.method = "PATCH",
                        .target = ref.Path() + q.str(),
                        .body = std::string(patch),
                        .content_type = std::string(PatchContentType(type))},
            cancel);
}

StatusOr<std::string> Client::Delete(const ResourceRef& ref, const DeleteOptions& options,
                                     CancelToken* cancel) {
  MUSTER_RETURN_IF_ERROR(ref.Validate());
  if (ref.name.empty()) return InvalidArgumentError("delete " + ref.DebugString() + ": no name");
  return Do(HttpRequest{.method = "DELETE",
                        .target = ref.Path(),
                        .body = DeleteBody(options),
                        .content_type = "application/json"},
            cancel);
}

StatusOr<std::string> Client::Bind(const std::string& ns, const std::string& pod,
                                   std::string_view binding_json, CancelToken* cancel) {
  return Create(ResourceRef::Core("pods", ns, pod).WithSubresource("binding"), binding_json,
                cancel);
}

StatusOr<std::string> Client::Evict(const std::string& ns, const std::string& pod,
                                    std::string_view eviction_json, CancelToken* cancel) {
  return Create(ResourceRef::Core("pods", ns, pod).WithSubresource("eviction"), eviction_json,
                cancel);
}

bool Client::ShouldRetry(const Status& error, bool is_post) const {
  if (error.code() == StatusCode::kCancelled) return false;
  const int http = error.http_code();
  if (http == 429) return true;
  if (http == 0) {
    if (error.code() != StatusCode::kUnavailable) return false;
    return !is_post || error.reason() == kReasonNotSent;
  }
  return http >= 500 && http != 501 && !is_post;
}

Duration Client::RetryDelay(const HttpResponse* response, Backoff& backoff) const {
  const Duration backoff_delay = backoff.Next();
  if (response == nullptr) return backoff_delay;
  std::optional<Duration> retry_after = ParseRetryAfter(response->Header("Retry-After"));
  if (!retry_after) return backoff_delay;
  return std::min(*retry_after, options_.retry.max_retry_after);
}

StatusOr<std::string> Client::Do(HttpRequest request, CancelToken* cancel) {
  request.cancel = cancel;
  const bool is_post = request.method == "POST";
  const std::string what = request.method + " " + request.target;
  Backoff backoff(options_.retry.backoff, clock_, options_.random);
  const int max_attempts = std::max(1, options_.retry.max_attempts);
  for (int attempt = 1;; ++attempt) {
    if (!limiter_.Wait(cancel)) return CancelledError(what + ": cancelled");
    if (request.method != "GET" && options_.write_fence && !options_.write_fence()) {
      return Status(StatusCode::kFailedPrecondition, what + ": not the leader (write fenced)");
    }
    StatusOr<HttpResponse> response = transport_->Send(request);
    if (response.ok() && Is2xx(response->status)) return std::move(response->body);
    Status error =
        response.ok() ? ErrorFromHttp(response->status, response->body, what) : response.status();
    if (attempt >= max_attempts || !ShouldRetry(error, is_post)) {
      if (attempt > 1) return error.Annotate("after " + std::to_string(attempt) + " attempts");
      return error;
    }
    const Duration delay = RetryDelay(response.ok() ? &*response : nullptr, backoff);
    spdlog::debug("{}: attempt {} failed ({}), retrying in {} ms", what, attempt, error.ToString(),
                  delay.count() / 1000);
    if (!sleeper_(delay, cancel)) return CancelledError(what + ": cancelled");
  }
}

Status Client::Stream(const std::string& target, const ChunkHandler& on_data, Duration read_timeout,
                      CancelToken* cancel) {
  const std::string what = "GET " + target;
  if (!limiter_.Wait(cancel)) return CancelledError(what + ": cancelled");
  HttpRequest request{
      .method = "GET", .target = target, .read_timeout = read_timeout, .cancel = cancel};
  int http_status = 0;
  std::string error_body;
  Status status = transport_->Stream(
      request,
      [&](std::string_view chunk) {
        if (Is2xx(http_status)) return on_data(chunk);
        error_body.append(
            chunk.substr(0, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
        return true;
      },
      &http_status);
  if (http_status != 0 && !Is2xx(http_status)) {
    return ErrorFromHttp(http_status, error_body, what);
  }
  return status;
}

}  // namespace muster::kube
