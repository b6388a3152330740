// Informer: a local, always-updating cache of one Kubernetes collection.
//
// The informer lists the collection (page_size objects a page, as a
// consistent read: no resourceVersion), then watches it from the
// list's resourceVersion, applying each event to a cache keyed by
// "namespace/name" (or "name" for cluster-scoped objects) and telling
// registered handlers. It keeps itself correct without help:
//   - bookmarks advance the resourceVersion it resumes from;
//   - a dropped or ended watch is resumed from the last resourceVersion;
//   - 410 Gone (HTTP, or an ERROR event in the stream) means the version is
//     too old: it lists again and reconciles the cache with the list
//     ("replace": OnUpdate for objects whose resourceVersion changed, OnAdd
//     for new ones, OnDelete for objects that vanished);
//   - a list is applied page by page as the pages arrive (Client::ListEach):
//     only one page's JSON and decoded objects are held beside the cache,
//     so a list of 50 000 pods costs a page, not the collection. Each page
//     updates the cache and tells the handlers at once; the deletions come
//     after the last page. So while a list is under way (or after one failed
//     midway, until the next one completes) the cache holds the objects of
//     the pages applied at their listed version and the others as they were:
//     never fewer objects than before, never an object older than it was.
//     A continue token that expires (410 during paging) restarts the list
//     from its first page; what it no longer names is then deleted at its end;
//   - failures (API server restarting, connection refused, 5xx) are retried
//     forever with capped, jittered exponential backoff;
//   - an object that fails to decode is logged and counted (stats()), never
//     fatal: in a list it keeps its cached predecessor, in a DELETED event
//     it is still removed by its metadata key. It is not skipped silently:
//     the informer keeps a record of it (UndecodableObject: its identity,
//     the problem starting with the JSON path of the first bad field, the
//     JSON) until it is deleted or a later version decodes, and tells the
//     handlers (on_undecodable, on_undecodable_cleared), so that the
//     component can answer it on the object.
//
// What the cache keeps of each object is InformerOptions::cache_mode:
// the whole decoded object (kFull), or, for a component that keeps its own
// compact copy from the handlers and never reads the informer's cache, only
// its identity (kMetadataOnly; Informer<T> says what changes then).
//
// The core (InformerCore, non-template) runs the list/watch loop on its own
// thread; Informer<T> adds the typed cache on top.
//
// Thread-safety: Informer<T> is thread-safe: Get/List/HasSynced/stats/
// last_list_error may be called from any thread at any time. Handlers run on
// the informer's thread, one at a time, in event order, after the cache was
// updated; they must not call Stop() (it joins that thread) and should be
// quick.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "kube/client/backoff.h"
#include "kube/client/cancel.h"
#include "kube/client/client.h"
#include "kube/client/resource_ref.h"
#include "kube/client/watch.h"
#include "kube/codec/core_codec.h"
#include "model/clock.h"
#include "model/status.h"

namespace muster::kube {

// What an informer's cache keeps of each object.
enum class CacheMode {
  kFull,          // the decoded object
  kMetadataOnly,  // its name, namespace, uid and resourceVersion
};

struct InformerOptions {
  std::string label_selector;
  std::string field_selector;
  // Objects per list page: fewer round trips against a larger page (its
  // JSON and its decoded objects) held while it is applied.
  int64_t page_size = kDefaultListPageSize;
  CacheMode cache_mode = CacheMode::kFull;
  // Each watch asks the server to end it after a random time in [t, 2t), as
  // client-go does, so many informers do not reconnect in lockstep.
  int watch_timeout_seconds = 300;
  BackoffOptions backoff{std::chrono::milliseconds(100), std::chrono::seconds(30), 2.0, 0.2,
                         std::chrono::minutes(2)};
  const Clock* clock = nullptr;  // backoff bookkeeping; null: RealClock()
  RandomSource random;           // null: DefaultRandomSource()
  // A collection the API server may not serve (an API group behind a feature
  // gate, e.g. scheduling.k8s.io/v1beta1 PodGroups): while its list answers
  // 404 the informer counts as synced with nothing cached (said once in the
  // log, not at every retry), and it keeps listing at the backoff's pace, so
  // a server that starts serving it is followed without a restart. Other
  // collections stay unsynced on a 404 (a CRD not installed is an error).
  bool optional_collection = false;
};

struct InformerStats {
  int64_t lists = 0;  // successful (re)lists
  int64_t list_errors = 0;
  int64_t watches = 0;          // watch requests started
  int64_t watch_errors = 0;     // watches that ended with an error other than Gone
  int64_t gone = 0;             // 410 Gone answers that forced a relist
  int64_t events = 0;           // watch events applied (bookmarks included)
  int64_t decode_failures = 0;  // objects that could not be decoded
};

// An object of the collection that does not decode as the informer's type:
// what is kept of it so that it can still be answered. Identity only in
// `meta` (kube::DecodeObjectIdentity); `problem` is the decoder's message
// from the JSON path of the first bad field on ("spec.minResources.cpu:
// quantity \"1.2.3\" ..."); `json` the object as the API server sent it
// (compact), for the component to read what it needs of the rest (a
// status that decodes on its own). Records are few: only bad objects.
struct UndecodableObject {
  ObjectMeta meta;
  std::string problem;
  std::string json;
  std::string Key() const { return meta.Key(); }
};

// Where the first bad field of `object` is, as a bounded label value:
// "bad_spec", "bad_status", "bad_metadata", or "bad_object" (anything else:
// the document itself, or another top-level field).
std::string_view UndecodableReason(const UndecodableObject& object);
inline constexpr std::array<std::string_view, 4> kUndecodableReasons = {
    "bad_spec", "bad_status", "bad_metadata", "bad_object"};

// What a typed informer gives the core. Called on the informer thread only.
// A list is BeginList, ApplyListPage for each page, EndList once the last
// page was applied; a list that restarts from its first page BeginLists
// again, one that fails ends without EndList.
class InformerStore {
 public:
  virtual ~InformerStore() = default;
  // A list starts: what earlier lists named no longer counts.
  virtual void BeginList() = 0;
  // Applies one page: new objects added, changed ones updated (handlers
  // told). An error (a malformed page) applies nothing of that page.
  virtual Status ApplyListPage(std::string_view page) = 0;
  // The list is complete: objects (and records of undecodable objects) it
  // did not name are deleted.
  virtual void EndList() = 0;
  // Applies an ADDED, MODIFIED or DELETED event.
  virtual void Apply(const WatchEvent& event) = 0;
};

class InformerCore {
 public:
  // `client` and `store` must outlive this.
  InformerCore(Client* client, ResourceRef ref, InformerOptions options, InformerStore* store);
  ~InformerCore();  // Stop()s
  InformerCore(const InformerCore&) = delete;
  InformerCore& operator=(const InformerCore&) = delete;

  // REQUIRES: called at most once.
  void Start() MUSTER_EXCLUDES(mu_);
  // Cancels the list/watch in flight and joins the thread; returns promptly
  // even while a watch is blocked. Idempotent. The informer cannot restart.
  void Stop() MUSTER_EXCLUDES(mu_);

  bool HasSynced() const MUSTER_EXCLUDES(mu_);
  // Waits until the first list landed; false on timeout or Stop().
  bool WaitForSync(Duration timeout) MUSTER_EXCLUDES(mu_);
  InformerStats stats() const MUSTER_EXCLUDES(mu_);
  // Why the latest list failed (the client's error: "GET /api/v1/nodes...:
  // HTTP 403 Forbidden: ..."); Ok before the first list answers and once a
  // list succeeds. For a component to say why it still waits for the sync.
  Status last_list_error() const MUSTER_EXCLUDES(mu_);
  std::string resource_version() const MUSTER_EXCLUDES(mu_);
  const ResourceRef& ref() const { return ref_; }

  // Fault injection for tests on a real API server: ends the current watch
  // at its next event (bookmarks included) or timeout, and starts the next
  // one from `rv` instead of the last version seen. A long-gone `rv` ("1")
  // makes the server answer 410 Gone, which exercises the relist path.
  void ResumeWatchFromForTesting(std::string rv) MUSTER_EXCLUDES(mu_);

  // For the store: logs and counts an object that failed to decode.
  void RecordDecodeFailure(const Status& error) MUSTER_EXCLUDES(mu_);

 private:
  void Run();
  Status ListAndReplace();
  Status WatchOnce(int64_t* events);
  void SetResourceVersion(const std::string& rv) MUSTER_EXCLUDES(mu_);

  Client* const client_;
  const ResourceRef ref_;
  const InformerOptions options_;
  const Clock& clock_;
  const RandomSource random_;
  InformerStore* const store_;
  CancelToken cancel_;
  std::thread thread_;  // started by Start(), joined by Stop()

  mutable base::Mutex mu_;
  base::CondVar synced_cv_;
  bool started_ MUSTER_GUARDED_BY(mu_) = false;
  bool synced_ MUSTER_GUARDED_BY(mu_) = false;
  bool stopped_ MUSTER_GUARDED_BY(mu_) = false;
  std::string resource_version_ MUSTER_GUARDED_BY(mu_);
  std::optional<std::string> forced_resource_version_ MUSTER_GUARDED_BY(mu_);
  InformerStats stats_ MUSTER_GUARDED_BY(mu_);
  Status last_list_error_ MUSTER_GUARDED_BY(mu_);
};

namespace informer_internal {

struct RawItem {
  std::string json;  // compact
  std::string key;   // "namespace/name" from metadata ("" when missing)
};
// Splits a list answer into its items without decoding them (the fallback
// when the typed list decoder rejects a page). InvalidArgument when the page
// itself is malformed.
Status SplitList(std::string_view page, std::string* resource_version, std::vector<RawItem>* items);

inline std::string EventKey(const WatchEvent& e) {
  return e.namespace_.empty() ? e.name : e.namespace_ + "/" + e.name;
}

// Sets meta's namespace and name from a cache key ("namespace/name", "name").
void SetKey(std::string_view key, ObjectMeta* meta);

}  // namespace informer_internal

// `new_obj` and on_add's `obj` are always the whole decoded object. With
// CacheMode::kMetadataOnly, `old_obj` is a stub (Informer<T>::Get), and so is
// on_delete's `obj` unless it is the object of a DELETED event that decodes.
template <typename T>
struct InformerHandlers {
  std::function<void(const T& obj)> on_add;
  std::function<void(const T& old_obj, const T& new_obj)> on_update;
  std::function<void(const T& obj)> on_delete;  // the last state known
  // The object as it is now does not decode: `obj` is the record
  // Informer::Undecodable(key) returns from now on. Called once per
  // resourceVersion. The typed cache keeps the last version that decoded,
  // if any (Get), so on_update/on_delete still pair with it later.
  std::function<void(const UndecodableObject& obj)> on_undecodable;
  // The record is dropped: the object was deleted, or a later version
  // decodes. Called after that event's on_add/on_update/on_delete, so the
  // object is never seen neither decoded nor undecodable. `last` is the
  // record dropped.
  std::function<void(const UndecodableObject& last)> on_undecodable_cleared;
};

// T is a model type with `ObjectMeta meta` (Pod, Node, PodGroup, ...).
//
// CacheMode::kMetadataOnly: the cache keeps, per object, its key, uid and
// resourceVersion (about 200 bytes, against kilobytes for a decoded Pod).
// Get and List then return stubs: a T made on each call whose meta holds
// only name, namespace, uid and resourceVersion, everything else default
// (List makes one per object: for tests and debugging, not a hot path). The
// handlers' old objects are such stubs too (InformerHandlers). Undecodable
// records are kept whole in either mode (they are few).
template <typename T>
class Informer final : private InformerStore {
 public:
  using ObjectPtr = std::shared_ptr<const T>;
  using ItemDecoder = StatusOr<T> (*)(std::string_view);
  using ListDecoder = StatusOr<ObjectList<T>> (*)(std::string_view);

  // `client` must outlive this.
  Informer(Client* client, ResourceRef ref, ItemDecoder decode_item, ListDecoder decode_list,
           InformerOptions options = {})
      : decode_item_(decode_item),
        decode_list_(decode_list),
        mode_(options.cache_mode),
        core_(client, std::move(ref), std::move(options), this) {}
  ~Informer() override { core_.Stop(); }

  // REQUIRES: before Start().
  void AddHandlers(InformerHandlers<T> handlers) { handlers_.push_back(std::move(handlers)); }

  void Start() { core_.Start(); }
  void Stop() { core_.Stop(); }
  bool HasSynced() const { return core_.HasSynced(); }
  bool WaitForSync(Duration timeout) { return core_.WaitForSync(timeout); }
  InformerStats stats() const { return core_.stats(); }
  Status last_list_error() const { return core_.last_list_error(); }
  std::string resource_version() const { return core_.resource_version(); }
  void ResumeWatchFromForTesting(std::string rv) { core_.ResumeWatchFromForTesting(std::move(rv)); }

  // The cached object with key "namespace/name" (or "name"); null if absent.
  // kMetadataOnly: its stub.
  ObjectPtr Get(const std::string& key) const MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    return it == cache_.end() ? nullptr : ObjectOf(it->first, it->second);
  }
  // A snapshot of every cached object, ordered by key. kMetadataOnly: stubs.
  std::vector<ObjectPtr> List() const MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    std::vector<ObjectPtr> out;
    out.reserve(cache_.size());
    for (const auto& [key, entry] : cache_) out.push_back(ObjectOf(key, entry));
    return out;
  }
  size_t size() const MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    return cache_.size();
  }

  using UndecodablePtr = std::shared_ptr<const UndecodableObject>;
  // The record of the object with `key` when its current version does not
  // decode (then Get returns the last version that did, or null); else null.
  UndecodablePtr Undecodable(const std::string& key) const MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    auto it = undecodable_.find(key);
    return it == undecodable_.end() ? nullptr : it->second;
  }
  // Every object whose current version does not decode, ordered by key.
  std::vector<UndecodablePtr> ListUndecodable() const MUSTER_EXCLUDES(mu_) {
    base::MutexLock lock(&mu_);
    std::vector<UndecodablePtr> out;
    out.reserve(undecodable_.size());
    for (const auto& [key, obj] : undecodable_) out.push_back(obj);
    return out;
  }

 private:
  // What the cache keeps of an object.
  struct Entry {
    ObjectPtr obj;                 // kFull: the object; kMetadataOnly: null
    std::string uid;               // kMetadataOnly only (kFull: obj->meta's)
    std::string resource_version;  // kMetadataOnly only
    uint64_t listed = 0;           // the list (list_epoch_) that last named it
  };
  using Cache = std::map<std::string, Entry>;
  using Records = std::map<std::string, UndecodablePtr>;
  struct Delta {
    enum Kind { kAdd, kUpdate, kDelete } kind;
    ObjectPtr old_obj;
    ObjectPtr new_obj;
  };
  // What applying objects changed, told once the lock is released: the
  // deltas, then the records dropped, then the new records.
  struct Changes {
    std::vector<Delta> deltas;
    std::vector<UndecodablePtr> cleared;
    std::vector<UndecodablePtr> told;
  };

  void BeginList() override MUSTER_EXCLUDES(mu_);
  Status ApplyListPage(std::string_view page) override MUSTER_EXCLUDES(mu_);
  void EndList() override MUSTER_EXCLUDES(mu_);
  void Apply(const WatchEvent& event) override MUSTER_EXCLUDES(mu_);
  // The page's objects that decode, and the records of those that do not.
  Status DecodePage(std::string_view page, std::vector<T>* items, std::vector<UndecodablePtr>* bad);
  // Logs and counts the failure; the record of the object (`key` when its
  // metadata names none).
  UndecodablePtr RecordOf(const Status& error, std::string_view json, const std::string& key,
                          std::string_view context);
  // Caches `obj` under `key`: its add or update, none when `skip_unchanged`
  // and the version cached is the same. Drops the undecodable record of
  // `key`, if any, into `changes`.
  void Upsert(std::string key, ObjectPtr obj, bool skip_unchanged, Changes* changes)
      MUSTER_REQUIRES(mu_);
  // Keeps `record` of an object that does not decode (the cache keeps its
  // last good state); told unless the record kept has the same version.
  void KeepUndecodable(const std::string& key, UndecodablePtr record, Changes* changes)
      MUSTER_REQUIRES(mu_);
  // What the cache hands out for `entry`: the object, or its stub.
  ObjectPtr ObjectOf(const std::string& key, const Entry& entry) const;
  const std::string& VersionOf(const Entry& entry) const {
    return entry.obj ? entry.obj->meta.resource_version : entry.resource_version;
  }
  void Tell(const Changes& changes) const;
  void Dispatch(const Delta& delta) const;

  const ItemDecoder decode_item_;
  const ListDecoder decode_list_;
  const CacheMode mode_;
  std::vector<InformerHandlers<T>> handlers_;  // written before Start() only
  mutable base::Mutex mu_;
  Cache cache_ MUSTER_GUARDED_BY(mu_);
  Records undecodable_ MUSTER_GUARDED_BY(mu_);
  uint64_t list_epoch_ MUSTER_GUARDED_BY(mu_) = 0;  // lists begun
  // Keys of the undecodable objects the current list named.
  std::set<std::string> listed_undecodable_ MUSTER_GUARDED_BY(mu_);
  InformerCore core_;  // last: its thread uses the members above
};

// ---- implementation ----

template <typename T>
void Informer<T>::BeginList() {
  base::MutexLock lock(&mu_);
  ++list_epoch_;
  listed_undecodable_.clear();
}

template <typename T>
Status Informer<T>::ApplyListPage(std::string_view page) {
  std::vector<T> items;
  std::vector<UndecodablePtr> bad;
  MUSTER_RETURN_IF_ERROR(DecodePage(page, &items, &bad));
  Changes changes;
  {
    base::MutexLock lock(&mu_);
    for (T& item : items) {
      std::string key = item.meta.Key();
      Upsert(std::move(key), std::make_shared<const T>(std::move(item)), /*skip_unchanged=*/true,
             &changes);
    }
    for (UndecodablePtr& record : bad) {
      const std::string key = record->Key();
      listed_undecodable_.insert(key);
      // Listed: its last good state, if any, stays.
      if (auto it = cache_.find(key); it != cache_.end()) it->second.listed = list_epoch_;
      KeepUndecodable(key, std::move(record), &changes);
    }
  }
  Tell(changes);
  return Status::Ok();
}

template <typename T>
void Informer<T>::EndList() {
  Changes changes;
  {
    base::MutexLock lock(&mu_);
    for (auto it = cache_.begin(); it != cache_.end();) {
      if (it->second.listed == list_epoch_) {
        ++it;
        continue;
      }
      ObjectPtr last = ObjectOf(it->first, it->second);
      changes.deltas.push_back({Delta::kDelete, last, last});
      it = cache_.erase(it);
    }
    for (auto it = undecodable_.begin(); it != undecodable_.end();) {
      if (listed_undecodable_.contains(it->first)) {
        ++it;
        continue;
      }
      changes.cleared.push_back(std::move(it->second));
      it = undecodable_.erase(it);
    }
  }
  Tell(changes);
}

template <typename T>
Status Informer<T>::DecodePage(std::string_view page, std::vector<T>* items,
                               std::vector<UndecodablePtr>* bad) {
  StatusOr<ObjectList<T>> list = decode_list_(page);
  if (list.ok()) {
    *items = std::move(list->items);
    return Status::Ok();
  }
  // Some item does not decode: each on its own, to keep the others.
  std::string rv;
  std::vector<informer_internal::RawItem> raw_items;
  MUSTER_RETURN_IF_ERROR(informer_internal::SplitList(page, &rv, &raw_items));
  for (informer_internal::RawItem& raw : raw_items) {
    StatusOr<T> item = decode_item_(raw.json);
    if (item.ok()) {
      items->push_back(std::move(item).value());
      continue;
    }
    UndecodablePtr record = RecordOf(item.status(), raw.json, raw.key, "list item");
    if (!record->Key().empty()) bad->push_back(std::move(record));
  }
  return Status::Ok();
}

template <typename T>
typename Informer<T>::UndecodablePtr Informer<T>::RecordOf(const Status& error,
                                                           std::string_view json,
                                                           const std::string& key,
                                                           std::string_view context) {
  auto record = std::make_shared<UndecodableObject>();
  record->meta = DecodeObjectIdentity(json);
  if (record->meta.name.empty() && !key.empty()) {
    // The identity did not read (metadata itself is broken): the key the
    // list or watch event named stands in.
    informer_internal::SetKey(key, &record->meta);
  }
  record->problem = DecodeProblem(error);
  record->json = std::string(json);
  core_.RecordDecodeFailure(error.Annotate(std::string(context) + " " + record->Key()));
  return record;
}

template <typename T>
void Informer<T>::Apply(const WatchEvent& event) {
  const bool deleted = event.type == WatchEventType::kDeleted;
  StatusOr<T> decoded = decode_item_(event.object_json);
  std::string key = informer_internal::EventKey(event);
  ObjectPtr obj;
  UndecodablePtr record;
  if (decoded.ok()) {
    key = decoded->meta.Key();
    obj = std::make_shared<const T>(std::move(decoded).value());
  } else {
    record = RecordOf(decoded.status(), event.object_json, key, WatchEventTypeName(event.type));
    if (!record->Key().empty()) key = record->Key();
    if (key.empty()) return;
  }
  Changes changes;
  {
    base::MutexLock lock(&mu_);
    if (!deleted && record) {
      KeepUndecodable(key, std::move(record), &changes);
    } else if (!deleted) {
      Upsert(std::move(key), std::move(obj), /*skip_unchanged=*/false, &changes);
    } else {
      // Removed by its key even when the event's object does not decode.
      if (auto it = cache_.find(key); it != cache_.end()) {
        ObjectPtr last = ObjectOf(it->first, it->second);
        changes.deltas.push_back({Delta::kDelete, last, obj ? obj : last});
        cache_.erase(it);
      }
      if (auto r = undecodable_.find(key); r != undecodable_.end()) {
        changes.cleared.push_back(std::move(r->second));
        undecodable_.erase(r);
      }
    }
  }
  Tell(changes);
}

template <typename T>
void Informer<T>::Upsert(std::string key, ObjectPtr obj, bool skip_unchanged, Changes* changes) {
  if (auto r = undecodable_.find(key); r != undecodable_.end()) {  // decodes now
    changes->cleared.push_back(std::move(r->second));
    undecodable_.erase(r);
  }
  auto [it, added] = cache_.try_emplace(std::move(key));
  Entry& entry = it->second;
  entry.listed = list_epoch_;
  if (!added && skip_unchanged && VersionOf(entry) == obj->meta.resource_version) return;
  ObjectPtr old = added ? nullptr : ObjectOf(it->first, entry);
  if (mode_ == CacheMode::kFull) {
    entry.obj = obj;
  } else {
    entry.uid = obj->meta.uid;
    entry.resource_version = obj->meta.resource_version;
  }
  changes->deltas.push_back({added ? Delta::kAdd : Delta::kUpdate, std::move(old), std::move(obj)});
}

template <typename T>
void Informer<T>::KeepUndecodable(const std::string& key, UndecodablePtr record, Changes* changes) {
  UndecodablePtr& slot = undecodable_[key];
  if (slot && slot->meta.resource_version == record->meta.resource_version) return;
  slot = std::move(record);
  changes->told.push_back(slot);
}

template <typename T>
typename Informer<T>::ObjectPtr Informer<T>::ObjectOf(const std::string& key,
                                                      const Entry& entry) const {
  if (entry.obj) return entry.obj;
  auto stub = std::make_shared<T>();
  informer_internal::SetKey(key, &stub->meta);
  stub->meta.uid = entry.uid;
  stub->meta.resource_version = entry.resource_version;
  return stub;
}

template <typename T>
void Informer<T>::Tell(const Changes& changes) const {
  for (const Delta& d : changes.deltas) Dispatch(d);
  for (const UndecodablePtr& r : changes.cleared) {
    for (const InformerHandlers<T>& h : handlers_) {
      if (h.on_undecodable_cleared) h.on_undecodable_cleared(*r);
    }
  }
  for (const UndecodablePtr& r : changes.told) {
    for (const InformerHandlers<T>& h : handlers_) {
      if (h.on_undecodable) h.on_undecodable(*r);
    }
  }
}

template <typename T>
void Informer<T>::Dispatch(const Delta& delta) const {
  for (const InformerHandlers<T>& h : handlers_) {
    switch (delta.kind) {
      case Delta::kAdd:
        if (h.on_add) h.on_add(*delta.new_obj);
        break;
      case Delta::kUpdate:
        if (h.on_update) h.on_update(*delta.old_obj, *delta.new_obj);
        break;
      case Delta::kDelete:
        if (h.on_delete) h.on_delete(*delta.new_obj);
        break;
    }
  }
}

}  // namespace muster::kube
