#include "kube/client/informer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace muster::kube {

std::string_view UndecodableReason(const UndecodableObject& object) {
  const std::string_view problem = object.problem;
  auto under = [&](std::string_view field) {
    if (!problem.starts_with(field)) return false;
    const char next = problem.size() > field.size() ? problem[field.size()] : '\0';
    return next == '.' || next == '[' || next == ':';
  };
  if (under("spec")) return kUndecodableReasons[0];
  if (under("status")) return kUndecodableReasons[1];
  if (under("metadata")) return kUndecodableReasons[2];
  return kUndecodableReasons[3];
}

InformerCore::InformerCore(Client* client, ResourceRef ref, InformerOptions options,
                           InformerStore* store)
    : client_(client),
      ref_(std::move(ref)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock()),
      random_(options_.random ? options_.random : DefaultRandomSource()),
      store_(store) {}

InformerCore::~InformerCore() { Stop(); }

void InformerCore::Start() {
  base::MutexLock lock(&mu_);
  if (started_ || stopped_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void InformerCore::Stop() {
  {
    base::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    synced_cv_.SignalAll();
  }
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

bool InformerCore::HasSynced() const {
  base::MutexLock lock(&mu_);
  return synced_;
}

bool InformerCore::WaitForSync(Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  base::MutexLock lock(&mu_);
  while (!synced_ && !stopped_) {
    if (!synced_cv_.WaitUntil(&mu_, deadline)) break;
  }
  return synced_;
}

InformerStats InformerCore::stats() const {
  base::MutexLock lock(&mu_);
  return stats_;
}

Status InformerCore::last_list_error() const {
  base::MutexLock lock(&mu_);
  return last_list_error_;
}

std::string InformerCore::resource_version() const {
  base::MutexLock lock(&mu_);
  return resource_version_;
}

void InformerCore::SetResourceVersion(const std::string& rv) {
  base::MutexLock lock(&mu_);
  resource_version_ = rv;
}

void InformerCore::ResumeWatchFromForTesting(std::string rv) {
  base::MutexLock lock(&mu_);
  forced_resource_version_ = std::move(rv);
}

void InformerCore::RecordDecodeFailure(const Status& error) {
  spdlog::warn("informer {}: an object does not decode (kept as undecodable): {}",
               ref_.DebugString(), error.ToString());
  base::MutexLock lock(&mu_);
  ++stats_.decode_failures;
}

Status InformerCore::ListAndReplace() {
  ListOptions list;
  list.label_selector = options_.label_selector;
  list.field_selector = options_.field_selector;
  list.limit = options_.page_size;
  std::string rv;
  int pages = 0;
  const Time start = clock_.Now();
  MUSTER_RETURN_IF_ERROR(client_->ListEach(
      ref_, list,
      [&](ListPage page) {
        if (page.first) {  // again after a restart: the pages before it are void
          store_->BeginList();
          rv = page.meta.resource_version;  // every page carries the first's
          pages = 0;
        }
        ++pages;
        return store_->ApplyListPage(page.json);
      },
      &cancel_));
  store_->EndList();
  // How long a (re)start waits on this collection.
  spdlog::info("informer {}: listed {} page(s) in {:.2f} s", ref_.DebugString(), pages,
               std::chrono::duration<double>(clock_.Now() - start).count());
  base::MutexLock lock(&mu_);
  resource_version_ = std::move(rv);
  ++stats_.lists;
  last_list_error_ = Status::Ok();
  if (!synced_) {
    synced_ = true;
    synced_cv_.SignalAll();
  }
  return Status::Ok();
}

Status InformerCore::WatchOnce(int64_t* events) {
  WatchOptions watch;
  {
    base::MutexLock lock(&mu_);
    watch.resource_version = forced_resource_version_.value_or(resource_version_);
    forced_resource_version_.reset();
  }
  watch.allow_watch_bookmarks = true;
  if (options_.watch_timeout_seconds > 0) {
    watch.timeout_seconds = options_.watch_timeout_seconds +
                            static_cast<int>(random_() * options_.watch_timeout_seconds);
  }
  watch.label_selector = options_.label_selector;
  watch.field_selector = options_.field_selector;
  {
    base::MutexLock lock(&mu_);
    ++stats_.watches;
  }
  return Watch(
      *client_, ref_, watch,
      [&](const WatchEvent& event) {
        if (event.type != WatchEventType::kBookmark) store_->Apply(event);
        // Advance even for objects that did not decode: the stream moved on.
        if (!event.resource_version.empty()) SetResourceVersion(event.resource_version);
        ++*events;
        base::MutexLock lock(&mu_);
        ++stats_.events;
        return !stopped_ && !forced_resource_version_;
      },
      &cancel_);
}

void InformerCore::Run() {
  const std::string name = ref_.DebugString();
  Backoff backoff(options_.backoff, clock_, random_);
  bool need_list = true;
  while (!cancel_.cancelled()) {
    if (need_list) {
      Status listed = ListAndReplace();
      if (cancel_.cancelled()) break;
      if (!listed.ok()) {
        {
          base::MutexLock lock(&mu_);
          const bool not_served =
              options_.optional_collection && listed.code() == StatusCode::kNotFound;
          if (!not_served) {
            spdlog::warn("informer {}: list failed: {}", name, listed.ToString());
          } else if (last_list_error_.code() != StatusCode::kNotFound) {
            spdlog::info(
                "informer {}: not served by this API server (404); counted as synced "
                "with none, asked again later",
                name);
          }
          ++stats_.list_errors;
          last_list_error_ = listed;
          if (not_served && !synced_) {
            synced_ = true;
            synced_cv_.SignalAll();
          }
        }
        if (cancel_.WaitFor(backoff.Next())) break;
        continue;
      }
      need_list = false;
    }
    int64_t events = 0;
    Status watched = WatchOnce(&events);
    if (cancel_.cancelled()) break;
    if (watched.code() == StatusCode::kGone) {
      spdlog::info("informer {}: resourceVersion too old, relisting", name);
      need_list = true;
      base::MutexLock lock(&mu_);
      ++stats_.gone;
    } else if (!watched.ok()) {
      spdlog::warn("informer {}: watch ended: {}", name, watched.ToString());
      base::MutexLock lock(&mu_);
      ++stats_.watch_errors;
    }
    // A stream that delivered events was healthy: resume at once. An empty
    // one may be a server that keeps failing: slow down.
    if (events > 0) {
      backoff.Reset();
    } else if (cancel_.WaitFor(backoff.Next())) {
      break;
    }
  }
}

namespace informer_internal {

void SetKey(std::string_view key, ObjectMeta* meta) {
  const size_t slash = key.find('/');
  meta->namespace_ = slash == std::string_view::npos ? "" : std::string(key.substr(0, slash));
  meta->name = std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

Status SplitList(std::string_view page, std::string* resource_version,
                 std::vector<RawItem>* items) {
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(ParseDocument(page, &doc).Annotate("list"));
  DecodeContext ctx;
  if (!ExpectObject(ctx, doc)) return ctx.status().Annotate("list");
  ReadObject(ctx, doc, "metadata", resource_version,
             [](DecodeContext& c, const JsonValue& m, std::string* rv) {
               ReadString(c, m, "resourceVersion", rv);
             });
  const JsonValue* list = Member(ctx, doc, "items");
  if (list != nullptr) {
    auto scope = ctx.Key("items");
    ExpectArray(ctx, *list);
  }
  if (ctx.failed()) return ctx.status().Annotate("list");
  if (list == nullptr) return Status::Ok();
  for (const JsonValue& item : list->GetArray()) {
    RawItem raw;
    raw.json = ToCompactJson(item);
    DecodeContext item_ctx;
    std::string ns, name;
    ReadObject(item_ctx, item, "metadata", &raw,
               [&](DecodeContext& c, const JsonValue& m, RawItem*) {
                 ReadString(c, m, "namespace", &ns);
                 ReadString(c, m, "name", &name);
               });
    raw.key = ns.empty() ? name : ns + "/" + name;
    items->push_back(std::move(raw));
  }
  return Status::Ok();
}

}  // namespace informer_internal
}  // namespace muster::kube
