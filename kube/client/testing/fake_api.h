// Test-only: an in-memory Kubernetes API behind the HttpTransport seam, for
// controller tests that need informers and writes but no server process.
//
//   auto api = std::make_shared<kube::testing::FakeApi>();
//   api->Put(kube::QueuesRef().WithName("q"), R"({"metadata":{"name":"q"}})");
//   kube::Client client(api, kube::ClientConfig{});
//   ... informers list and watch it; creates, merge patches and deletes
//   change it and are streamed to the watches ...
//   api->Requests();  // every call, in order
//
// What it serves: GET of an object or a collection (every item, one page;
// all namespaces when the path names none), watch=1 from a resourceVersion
// (ADDED / MODIFIED / DELETED, until the call is cancelled), POST (name from
// generateName, uid and resourceVersion assigned; 409 AlreadyExists), PATCH
// as an RFC 7386 merge patch (a patch of the status subresource changes
// status only; metadata.resourceVersion in the patch is a precondition),
// DELETE (preconditions.uid checked: 409 Conflict). Errors carry a
// metav1.Status body. FailNext() injects one answer, FailAlways() every
// answer until StopFailing(); SetCreateCheck() plays the API server's
// validation of creates (422 Invalid). No label or field selectors, no other
// admission, no garbage collection.
//
// Header-only, test code only (not compiled into any library).
//
// Thread-safety: thread-safe.
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client/http_transport.h"
#include "kube/client/resource_ref.h"

namespace muster::kube::testing {

class FakeApi final : public HttpTransport {
 public:
  struct Recorded {
    std::string method;
    std::string path;  // without the query
    std::string body;
  };

  // Stores `json` at `object` (a ResourceRef with a name), as created or
  // replaced by someone else: metadata name/namespace from the ref, uid
  // kept or made up, a fresh resourceVersion; watches see ADDED / MODIFIED.
  void Put(const ResourceRef& object, std::string_view json) {
    std::lock_guard lock(mu_);
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    Stamp(doc, object.namespace_, object.name);
    Store(Parse(object.Path()), doc);
  }
  // Deletes `object` as someone else would; watches see DELETED.
  void Remove(const ResourceRef& object) {
    std::lock_guard lock(mu_);
    Erase(Parse(object.Path()));
  }
  // The object's JSON, if it exists.
  std::optional<std::string> Get(const ResourceRef& object) const {
    std::lock_guard lock(mu_);
    auto it = objects_.find(Parse(object.Path()).Key());
    if (it == objects_.end()) return std::nullopt;
    return it->second.json;
  }
  // The JSON of every object of `collection` (all namespaces when it names none).
  std::vector<std::string> List(const ResourceRef& collection) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    const Path p = Parse(collection.Path());
    for (const auto& [key, o] : objects_) {
      if (o.collection == p.collection && (p.ns.empty() || o.ns == p.ns)) out.push_back(o.json);
    }
    return out;
  }
  std::vector<Recorded> Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // The next `method` call whose path starts with `path` answers `code`.
  void FailNext(std::string method, std::string path, int code) {
    std::lock_guard lock(mu_);
    failures_.push_back({std::move(method), std::move(path), code});
  }
  // Every `method` call whose path starts with `path` answers `code` with
  // `reason` and `message` until StopFailing(method, path): an API server
  // that keeps refusing (RBAC without the verb: 403 Forbidden). Checked
  // after FailNext's answers.
  void FailAlways(std::string method, std::string path, int code, std::string reason,
                  std::string message) {
    std::lock_guard lock(mu_);
    failures_.push_back(
        {std::move(method), std::move(path), code, true, std::move(reason), std::move(message)});
  }
  void StopFailing(const std::string& method, const std::string& path) {
    std::lock_guard lock(mu_);
    std::erase_if(failures_, [&](const Failure& f) {
      return f.always && f.method == method && f.path == path;
    });
  }

  // Every later POST to a collection is first put to `check(collection,
  // body)` - collection as "/api/v1/pods" - and refused with 422 Invalid and
  // its answer as the message when that is not empty.
  using CreateCheck = std::function<std::string(const std::string&, const std::string&)>;
  void SetCreateCheck(CreateCheck check) {
    std::lock_guard lock(mu_);
    create_check_ = std::move(check);
  }

  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::lock_guard lock(mu_);
    const std::string path = request.target.substr(0, request.target.find('?'));
    requests_.push_back({request.method, path, request.body});
    for (bool always : {false, true}) {
      for (auto it = failures_.begin(); it != failures_.end(); ++it) {
        if (it->always != always || it->method != request.method || !path.starts_with(it->path)) {
          continue;
        }
        if (always) return Error(it->code, it->reason, it->message);
        const int code = it->code;
        failures_.erase(it);
        return Error(code, "Injected", "injected failure");
      }
    }
    const Path p = Parse(path);
    if (request.method == "GET") return p.name.empty() ? ListAnswer(p) : GetAnswer(p);
    if (request.method == "POST") return Create(p, request.body);
    if (request.method == "PATCH") return PatchAnswer(p, request.body);
    if (request.method == "DELETE") return DeleteAnswer(p, request.body);
    return Error(405, "MethodNotAllowed", request.method);
  }

  Status Stream(const HttpRequest& request, const ChunkHandler& on_data,
                int* http_status) override {
    const std::string& target = request.target;
    const size_t q = target.find('?');
    const Path p = Parse(target.substr(0, q));
    int64_t from = 0;
    if (q != std::string::npos) {
      const std::string query = target.substr(q + 1);
      const size_t rv = query.find("resourceVersion=");
      if (rv != std::string::npos) from = std::atoll(query.c_str() + rv + 16);
    }
    *http_status = 200;
    std::unique_lock lock(mu_);
    for (;;) {
      std::vector<std::string> chunks;
      for (const WatchEvent& e : events_) {
        if (e.rv <= from || e.collection != p.collection || (!p.ns.empty() && e.ns != p.ns)) {
          continue;
        }
        chunks.push_back(R"({"type":")" + e.type + R"(","object":)" + e.json + "}\n");
        from = e.rv;
      }
      lock.unlock();
      for (const std::string& c : chunks) {
        if (!on_data(c)) return Status(StatusCode::kCancelled, "stopped by the reader");
      }
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(5));
      if (cancelled_ || (request.cancel != nullptr && request.cancel->cancelled())) {
        return Status(StatusCode::kCancelled, "watch cancelled");
      }
    }
  }

  void Cancel() override {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  struct Path {
    std::string collection;  // "/apis/group/version/resource" or "/api/v1/resource"
    std::string ns;
    std::string name;
    std::string subresource;
    std::string Key() const { return collection + "|" + ns + "|" + name; }
  };
  struct Object {
    std::string collection;
    std::string ns;
    std::string json;
  };
  struct WatchEvent {
    int64_t rv;
    std::string collection;
    std::string ns;
    std::string type;
    std::string json;
  };
  struct Failure {
    std::string method;
    std::string path;
    int code;
    bool always = false;  // FailAlways: stays until StopFailing
    std::string reason;   // FailAlways only
    std::string message;
  };

  static Path Parse(std::string_view path) {
    std::vector<std::string> seg;
    size_t i = 0;
    while (i < path.size()) {
      size_t j = path.find('/', i + 1);
      if (j == std::string_view::npos) j = path.size();
      std::string s(path.substr(i + 1, j - i - 1));
      if (!s.empty()) seg.push_back(s);
      i = j;
    }
    Path p;
    size_t at = 0;
    std::string prefix;
    if (!seg.empty() && seg[0] == "api") {
      prefix = "/api/" + (seg.size() > 1 ? seg[1] : "");
      at = 2;
    } else if (seg.size() >= 3) {
      prefix = "/apis/" + seg[1] + "/" + seg[2];
      at = 3;
    }
    if (at + 1 < seg.size() && seg[at] == "namespaces" && at + 2 < seg.size()) {
      p.ns = seg[at + 1];
      at += 2;
    }
    if (at < seg.size()) p.collection = prefix + "/" + seg[at];
    if (at + 1 < seg.size()) p.name = seg[at + 1];
    if (at + 2 < seg.size()) p.subresource = seg[at + 2];
    return p;
  }

  static std::string ToJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
  }

  static rapidjson::Value& Member(rapidjson::Document& doc, rapidjson::Value& obj,
                                  const char* key) {
    if (!obj.HasMember(key)) {
      obj.AddMember(rapidjson::Value(key, doc.GetAllocator()),
                    rapidjson::Value(rapidjson::kObjectType), doc.GetAllocator());
    }
    return obj[key];
  }

  static std::string StringAt(const rapidjson::Value& obj, const char* key) {
    if (!obj.IsObject() || !obj.HasMember(key) || !obj[key].IsString()) return "";
    return obj[key].GetString();
  }

  static void SetString(rapidjson::Document& doc, rapidjson::Value& obj, const char* key,
                        const std::string& value) {
    rapidjson::Value v(value, doc.GetAllocator());
    if (obj.HasMember(key)) {
      obj[key] = v;
    } else {
      obj.AddMember(rapidjson::Value(key, doc.GetAllocator()), v, doc.GetAllocator());
    }
  }

  // RFC 7386.
  static void MergePatch(rapidjson::Value& target, const rapidjson::Value& patch,
                         rapidjson::Document::AllocatorType& a) {
    if (!patch.IsObject()) {
      target.CopyFrom(patch, a);
      return;
    }
    if (!target.IsObject()) target.SetObject();
    for (const auto& m : patch.GetObject()) {
      if (m.value.IsNull()) {
        target.RemoveMember(m.name);
        continue;
      }
      if (!target.HasMember(m.name)) {
        rapidjson::Value v(rapidjson::kObjectType);
        MergePatch(v, m.value, a);
        target.AddMember(rapidjson::Value(m.name, a), v, a);
      } else {
        MergePatch(target[m.name], m.value, a);
      }
    }
  }

  // Name, namespace and uid of a stored object (the caller's lock held).
  void Stamp(rapidjson::Document& doc, const std::string& ns, const std::string& name) {
    if (!doc.IsObject()) doc.SetObject();
    rapidjson::Value& meta = Member(doc, doc, "metadata");
    if (!name.empty()) SetString(doc, meta, "name", name);
    if (!ns.empty()) SetString(doc, meta, "namespace", ns);
    if (StringAt(meta, "uid").empty()) {
      SetString(doc, meta, "uid", "uid-" + std::to_string(++next_uid_));
    }
  }

  // Stores `doc` at `p` with a new resourceVersion and tells the watches.
  std::string Store(const Path& p, rapidjson::Document& doc) {
    const int64_t rv = ++rv_;
    SetString(doc, Member(doc, doc, "metadata"), "resourceVersion", std::to_string(rv));
    const std::string json = ToJson(doc);
    const bool existed = objects_.count(p.Key()) > 0;
    objects_[p.Key()] = Object{p.collection, p.ns, json};
    events_.push_back({rv, p.collection, p.ns, existed ? "MODIFIED" : "ADDED", json});
    cv_.notify_all();
    return json;
  }

  bool Erase(const Path& p) {
    auto it = objects_.find(p.Key());
    if (it == objects_.end()) return false;
    rapidjson::Document doc;
    doc.Parse(it->second.json.c_str());
    const int64_t rv = ++rv_;
    SetString(doc, Member(doc, doc, "metadata"), "resourceVersion", std::to_string(rv));
    events_.push_back({rv, p.collection, p.ns, "DELETED", ToJson(doc)});
    objects_.erase(it);
    cv_.notify_all();
    return true;
  }

  static HttpResponse Error(int code, const std::string& reason, const std::string& text) {
    std::string message;  // a JSON string's content
    for (char c : text) {
      if (c == '"' || c == '\\') message += '\\';
      message += c;
    }
    return HttpResponse{.status = code,
                        .body = R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                                R"("reason":")" +
                                reason + R"(","code":)" + std::to_string(code) + R"(,"message":")" +
                                message + R"("})"};
  }
  static HttpResponse Ok(std::string body, int code = 200) {
    return HttpResponse{.status = code, .body = std::move(body)};
  }

  HttpResponse ListAnswer(const Path& p) const {
    std::string items;
    for (const auto& [key, o] : objects_) {
      if (o.collection != p.collection || (!p.ns.empty() && o.ns != p.ns)) continue;
      if (!items.empty()) items += ",";
      items += o.json;
    }
    return Ok(R"({"kind":"List","metadata":{"resourceVersion":")" + std::to_string(rv_) +
              R"("},"items":[)" + items + "]}");
  }

  HttpResponse GetAnswer(const Path& p) const {
    auto it = objects_.find(p.Key());
    if (it == objects_.end()) return Error(404, "NotFound", p.name + " not found");
    return Ok(it->second.json);
  }

  HttpResponse Create(Path p, const std::string& body) {
    if (create_check_) {
      if (std::string refused = create_check_(p.collection, body); !refused.empty()) {
        return Error(422, "Invalid", refused);
      }
    }
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    if (doc.HasParseError() || !doc.IsObject()) return Error(400, "BadRequest", "not JSON");
    rapidjson::Value& meta = Member(doc, doc, "metadata");
    p.name = StringAt(meta, "name");
    if (p.name.empty()) {
      p.name = StringAt(meta, "generateName") + "g" + std::to_string(++next_name_);
    }
    if (objects_.count(p.Key())) return Error(409, "AlreadyExists", p.name + " already exists");
    Stamp(doc, p.ns, p.name);
    return Ok(Store(p, doc), 201);
  }

  HttpResponse PatchAnswer(const Path& p, const std::string& body) {
    auto it = objects_.find(p.Key());
    if (it == objects_.end()) return Error(404, "NotFound", p.name + " not found");
    rapidjson::Document patch;
    patch.Parse(body.c_str());
    if (patch.HasParseError() || !patch.IsObject()) return Error(400, "BadRequest", "not JSON");
    rapidjson::Document doc;
    doc.Parse(it->second.json.c_str());
    const std::string want_rv =
        patch.HasMember("metadata") ? StringAt(patch["metadata"], "resourceVersion") : "";
    if (!want_rv.empty() && want_rv != StringAt(doc["metadata"], "resourceVersion")) {
      return Error(409, "Conflict", "the object has been modified");
    }
    if (p.subresource == "status") {
      if (patch.HasMember("status")) {
        MergePatch(Member(doc, doc, "status"), patch["status"], doc.GetAllocator());
      }
    } else {
      MergePatch(doc, patch, doc.GetAllocator());
    }
    return Ok(Store(p, doc));
  }

  HttpResponse DeleteAnswer(const Path& p, const std::string& body) {
    auto it = objects_.find(p.Key());
    if (it == objects_.end()) return Error(404, "NotFound", p.name + " not found");
    rapidjson::Document options;
    options.Parse(body.c_str());
    if (!options.HasParseError() && options.IsObject() && options.HasMember("preconditions")) {
      const std::string uid = StringAt(options["preconditions"], "uid");
      rapidjson::Document doc;
      doc.Parse(it->second.json.c_str());
      if (!uid.empty() && uid != StringAt(doc["metadata"], "uid")) {
        return Error(409, "Conflict", "precondition failed: uid");
      }
    }
    const std::string json = it->second.json;
    Erase(p);
    return Ok(json);
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;
  int64_t rv_ = 100;
  int64_t next_uid_ = 0;
  int64_t next_name_ = 0;
  std::map<std::string, Object> objects_;
  std::vector<WatchEvent> events_;
  std::vector<Recorded> requests_;
  std::deque<Failure> failures_;
  CreateCheck create_check_;
};

}  // namespace muster::kube::testing
