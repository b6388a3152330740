#include "kube/client/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"

namespace muster::kube {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::LoopbackServer;
using testing::WaitFor;

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string NodeJson(const std::string& name, const std::string& rv) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","resourceVersion":")" + rv + R"("}})";
}

std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::string Bookmark(const std::string& rv) {
  return Event("BOOKMARK", R"({"kind":"Node","metadata":{"resourceVersion":")" + rv + R"("}})");
}

const char kExpired[] = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                        R"("message":"too old resource version","reason":"Expired","code":410})";

// One list answer, possibly in pages: items per page and the list's version.
struct ListSnapshot {
  std::string resource_version;
  std::vector<std::vector<std::string>> pages;
};

// How one watch request is answered.
struct WatchScript {
  enum End { kDrop, kEnd, kHold };
  int http = 200;
  std::string events;  // streamed before the end
  End end = kHold;
};

// A fake API server for /api/v1/nodes: list answers come from a queue of
// snapshots (the last one repeats), watch answers from a queue of scripts
// (an empty queue holds the stream open until the server stops). Requests
// are recorded; scripts can be changed between server restarts.
class FakeNodesApi {
 public:
  FakeNodesApi() : server_([this](httplib::Server& s) { Install(s); }) {}

  void AddList(ListSnapshot snapshot) {
    std::lock_guard<std::mutex> lock(mu_);
    lists_.push_back(std::move(snapshot));
  }
  void AddWatch(WatchScript script) {
    std::lock_guard<std::mutex> lock(mu_);
    watches_.push_back(std::move(script));
  }
  void BlockLists() {
    std::lock_guard<std::mutex> lock(mu_);
    block_lists_ = true;
  }
  // Lists answer 404 (an API the server does not serve) until served again.
  void SetServed(bool served) {
    std::lock_guard<std::mutex> lock(mu_);
    served_ = served;
  }
  // The next request for a page after the first answers 410 Gone (its
  // continue token expired): the list starts again, from the next snapshot.
  void ExpireNextContinue() {
    std::lock_guard<std::mutex> lock(mu_);
    expire_next_continue_ = true;
  }
  std::vector<std::string> watch_versions() {
    std::lock_guard<std::mutex> lock(mu_);
    return watch_versions_;
  }
  std::vector<std::string> list_queries() {
    std::lock_guard<std::mutex> lock(mu_);
    return list_queries_;
  }
  int held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  LoopbackServer& server() { return server_; }

 private:
  void Install(httplib::Server& s) {
    s.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("watch")) {
        ServeWatch(req, res);
      } else {
        ServeList(req, res);
      }
    });
  }

  void ServeList(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu_);
    list_queries_.push_back("limit=" + req.get_param_value("limit") +
                            " continue=" + req.get_param_value("continue"));
    if (!served_) {
      res.status = 404;
      res.set_content(R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                      R"("reason":"NotFound","code":404})",
                      "application/json");
      return;
    }
    if (block_lists_) {
      lock.unlock();
      server_.WaitUntilStopping(seconds(30));
      res.status = 503;
      return;
    }
    const std::string token = req.get_param_value("continue");
    if (!token.empty() && expire_next_continue_) {
      expire_next_continue_ = false;
      res.status = 410;
      res.set_content(kExpired, "application/json");
      return;
    }
    size_t page = 0;
    if (token.empty()) {
      if (lists_.size() > 1 && served_first_page_) lists_.pop_front();
      served_first_page_ = true;
    } else {
      page = std::stoul(token);
    }
    const ListSnapshot& snap = lists_.front();
    std::string items;
    for (const std::string& item : snap.pages[page]) items += (items.empty() ? "" : ",") + item;
    const std::string next = page + 1 < snap.pages.size() ? std::to_string(page + 1) : "";
    res.set_content(R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":")" +
                        snap.resource_version + R"(","continue":")" + next + R"("},"items":[)" +
                        items + "]}",
                    "application/json");
  }

  void ServeWatch(const httplib::Request& req, httplib::Response& res) {
    WatchScript script;
    {
      std::lock_guard<std::mutex> lock(mu_);
      watch_versions_.push_back(req.get_param_value("resourceVersion"));
      if (!watches_.empty()) {
        script = watches_.front();
        watches_.pop_front();
      }
    }
    res.status = script.http;
    if (script.http != 200) {
      res.set_content(script.events, "application/json");
      return;
    }
    res.set_chunked_content_provider(
        "application/json",
        [this, script](size_t, httplib::DataSink& sink) { return Stream(script, sink); });
  }

  bool Stream(const WatchScript& script, httplib::DataSink& sink) {
    sink.write(script.events.data(), script.events.size());
    switch (script.end) {
      case WatchScript::kDrop:
        return false;  // closes the connection without ending the body
      case WatchScript::kEnd:
        sink.done();
        return true;
      case WatchScript::kHold:
        break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++held_;
    }
    server_.WaitUntilStopping(seconds(30));
    std::lock_guard<std::mutex> lock(mu_);
    --held_;
    return false;
  }

  std::mutex mu_;
  std::deque<ListSnapshot> lists_;
  bool served_first_page_ = false;
  bool block_lists_ = false;
  bool served_ = true;
  bool expire_next_continue_ = false;
  std::deque<WatchScript> watches_;
  std::vector<std::string> watch_versions_;
  std::vector<std::string> list_queries_;
  int held_ = 0;
  LoopbackServer server_;  // last: its threads use the members above
};

// Records handler calls as "add a@1", "update a@1->a@2", "delete b@3".
class EventLog {
 public:
  using Describer = std::string (*)(const Node&);
  // `describe` names an object in the log ("a@1" by default).
  explicit EventLog(Describer describe = &Describe) : describe_(describe) {}

  InformerHandlers<Node> Handlers() {
    return {
        [this](const Node& n) { Add("add " + describe_(n)); },
        [this](const Node& o, const Node& n) {
          Add("update " + describe_(o) + "->" + describe_(n));
        },
        [this](const Node& n) { Add("delete " + describe_(n)); },
    };
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_.size();
  }

 private:
  static std::string Describe(const Node& n) { return n.meta.name + "@" + n.meta.resource_version; }
  void Add(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(e));
  }
  const Describer describe_;
  std::mutex mu_;
  std::vector<std::string> events_;
};

std::vector<std::string> CacheContents(const Informer<Node>& informer) {
  std::vector<std::string> out;
  for (const auto& node : informer.List()) {
    out.push_back(node->meta.name + "@" + node->meta.resource_version);
  }
  return out;
}

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.server().Start()); }

  std::unique_ptr<Informer<Node>> MakeInformer() {
    ClientConfig config;
    config.server = api_.server().url();
    config.timeout = seconds(5);
    auto client = Client::New(config);
    EXPECT_TRUE(client.ok()) << client.status();
    client_ = std::move(client).value();
    InformerOptions options;
    options.page_size = 2;
    options.backoff = {milliseconds(1), milliseconds(20), 2.0, 0.0, Duration(0)};
    auto informer = std::make_unique<Informer<Node>>(client_.get(), ResourceRef::Core("nodes"),
                                                     &DecodeNode, &DecodeNodeList, options);
    informer->AddHandlers(log_.Handlers());
    return informer;
  }

  // Stops the informer and checks it did so promptly.
  void StopPromptly(Informer<Node>& informer) {
    const auto start = std::chrono::steady_clock::now();
    informer.Stop();
    EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
  }

  FakeNodesApi api_;
  EventLog log_;
  std::unique_ptr<Client> client_;
};

TEST_F(InformerTest, ListsWatchesResumesAndRelistsOnGone) {
  api_.AddList({"10", {{NodeJson("a", "1"), NodeJson("b", "2")}, {NodeJson("c", "3")}}});
  api_.AddList({"30", {{NodeJson("a", "20"), NodeJson("c", "3")}, {NodeJson("e", "21")}}});
  api_.AddList(
      {"50",
       {{NodeJson("a", "20"), NodeJson("c", "3")}, {NodeJson("e", "21"), NodeJson("f", "40")}}});
  // Watch 1: events and a bookmark, then the connection drops mid-stream.
  api_.AddWatch({200,
                 Event("ADDED", NodeJson("d", "11")) + Event("MODIFIED", NodeJson("a", "12")) +
                     Event("DELETED", NodeJson("b", "13")) + Bookmark("15") +
                     R"({"type":"MODIFIED","obj)",
                 WatchScript::kDrop});
  // Watch 2 (from the bookmark): the version is too old, as an HTTP 410.
  api_.AddWatch({410, kExpired, WatchScript::kEnd});
  // Watch 3 (after the relist): too old again, as an ERROR event in the stream.
  api_.AddWatch({200, Event("ERROR", kExpired), WatchScript::kEnd});
  // Watch 4: stays open.

  auto informer = MakeInformer();
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  const std::vector<std::string> want_events = {// first list (two pages)
                                                "add a@1", "add b@2", "add c@3",
                                                // watch 1
                                                "add d@11", "update a@1->a@12", "delete b@13",
                                                // relist after HTTP 410: replace semantics
                                                "update a@12->a@20", "add e@21", "delete d@11",
                                                // relist after the in-stream ERROR 410
                                                "add f@40"};
  ASSERT_TRUE(WaitFor([&] { return log_.size() >= want_events.size() && api_.held() == 1; }))
      << ::testing::PrintToString(log_.events());
  EXPECT_THAT(log_.events(), ElementsAreArray(want_events));
  EXPECT_THAT(api_.watch_versions(), ElementsAre("10", "15", "30", "50"));
  EXPECT_THAT(api_.list_queries(), ElementsAre("limit=2 continue=", "limit=2 continue=1",
                                               "limit=2 continue=", "limit=2 continue=1",
                                               "limit=2 continue=", "limit=2 continue=1"));
  EXPECT_THAT(CacheContents(*informer), ElementsAre("a@20", "c@3", "e@21", "f@40"));
  ASSERT_NE(informer->Get("a"), nullptr);
  EXPECT_EQ(informer->Get("a")->meta.resource_version, "20");
  EXPECT_EQ(informer->Get("b"), nullptr);
  EXPECT_EQ(informer->resource_version(), "50");
  InformerStats stats = informer->stats();
  EXPECT_EQ(stats.lists, 3);
  EXPECT_EQ(stats.gone, 2);
  EXPECT_EQ(stats.watch_errors, 1);  // the dropped stream
  EXPECT_EQ(stats.decode_failures, 0);
  // The fourth watch is blocked in read(): Stop must still return at once.
  StopPromptly(*informer);
}

TEST_F(InformerTest, SurvivesAnApiServerRestart) {
  api_.AddList({"10", {{NodeJson("a", "1")}}});
  auto informer = MakeInformer();
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  ASSERT_TRUE(WaitFor([&] { return api_.held() == 1; }));

  const int port = api_.server().port();
  api_.server().Stop();
  // Connection refused, again and again: the informer keeps retrying.
  const int64_t errors_before = informer->stats().watch_errors;
  ASSERT_TRUE(WaitFor([&] { return informer->stats().watch_errors >= errors_before + 3; }));
  EXPECT_TRUE(informer->HasSynced());
  EXPECT_THAT(CacheContents(*informer), ElementsAre("a@1"));

  // The restarted server lost the old watch window: 410, then a new list.
  api_.AddWatch({410, kExpired, WatchScript::kEnd});
  api_.AddList({"60", {{NodeJson("a", "1"), NodeJson("b", "5")}}});
  ASSERT_TRUE(api_.server().Start(port));
  ASSERT_TRUE(WaitFor([&] { return informer->Get("b") != nullptr && api_.held() == 1; }));
  EXPECT_THAT(log_.events(), ElementsAre("add a@1", "add b@5"));
  EXPECT_THAT(CacheContents(*informer), ElementsAre("a@1", "b@5"));
  EXPECT_THAT(api_.watch_versions(), Contains("10"));
  EXPECT_EQ(api_.watch_versions().back(), "60");
  StopPromptly(*informer);
}

TEST_F(InformerTest, CountsObjectsThatDoNotDecode) {
  const std::string bad_c = R"({"kind":"Node","metadata":{"name":"c","resourceVersion":"3",)"
                            R"("labels":5}})";
  api_.AddList({"10", {{NodeJson("a", "1"), NodeJson("b", "2")}, {bad_c}}});
  api_.AddWatch({200,
                 Event("MODIFIED", R"({"metadata":{"name":"a","resourceVersion":"11",)"
                                   R"("labels":"x"}})") +
                     Event("DELETED", R"({"metadata":{"name":"b","resourceVersion":"12",)"
                                      R"("labels":[]}})") +
                     Event("ADDED", NodeJson("d", "13")),
                 WatchScript::kHold});
  auto informer = MakeInformer();
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync(seconds(10)));
  ASSERT_TRUE(WaitFor([&] { return informer->Get("d") != nullptr; }));
  // a keeps its last good state, b is removed by its metadata key, c never
  // entered the cache; nothing crashed and the stream went on.
  EXPECT_THAT(CacheContents(*informer), ElementsAre("a@1", "d@13"));
  EXPECT_THAT(log_.events(), ElementsAre("add a@1", "add b@2", "delete b@2", "add d@13"));
  EXPECT_EQ(informer->stats().decode_failures, 3);
  EXPECT_EQ(informer->resource_version(), "13");
  StopPromptly(*informer);
}

// A Node whose spec does not decode (unschedulable is not a boolean).
std::string BadNodeJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"Node","metadata":{"name":")" + name + R"(","uid":"uid-)" + name +
         R"(","resourceVersion":")" + rv + R"(","generation":4},"spec":{"unschedulable":"yes"}})";
}

// Records the undecodable handlers as "undecodable c@3", "cleared c@3".
InformerHandlers<Node> UndecodableHandlers(EventLog* log, std::vector<std::string>* problems,
                                           std::mutex* mu) {
  InformerHandlers<Node> h = log->Handlers();
  h.on_undecodable = [=](const UndecodableObject& o) {
    std::lock_guard<std::mutex> lock(*mu);
    problems->push_back("undecodable " + o.meta.name + "@" + o.meta.resource_version);
  };
  h.on_undecodable_cleared = [=](const UndecodableObject& o) {
    std::lock_guard<std::mutex> lock(*mu);
    problems->push_back("cleared " + o.meta.name + "@" + o.meta.resource_version);
  };
  return h;
}

TEST_F(InformerTest, KeepsARecordOfEachObjectThatDoesNotDecodeUntilItDecodesOrGoes) {
  // List: c does not decode. Watch: a turns bad (the cache keeps a@1), e is
  // added bad, c is fixed, e is deleted; then 410 and a relist in which a
  // is still bad (same version: not told again) and f is bad.
  api_.AddList({"10", {{NodeJson("a", "1"), NodeJson("b", "2")}, {BadNodeJson("c", "3")}}});
  api_.AddList({"30",
                {{BadNodeJson("a", "11"), NodeJson("b", "2")},
                 {NodeJson("c", "13"), BadNodeJson("f", "20")}}});
  api_.AddWatch({200,
                 Event("MODIFIED", BadNodeJson("a", "11")) +
                     Event("ADDED", BadNodeJson("e", "12")) +
                     Event("MODIFIED", NodeJson("c", "13")) +
                     Event("DELETED", BadNodeJson("e", "14")) + Event("ERROR", kExpired),
                 WatchScript::kEnd});
  std::mutex mu;
  std::vector<std::string> told;
  ClientConfig config;
  config.server = api_.server().url();
  config.timeout = seconds(5);
  auto client = Client::New(config);
  ASSERT_TRUE(client.ok()) << client.status();
  InformerOptions options;
  options.backoff = {milliseconds(1), milliseconds(20), 2.0, 0.0, Duration(0)};
  Informer<Node> informer(client->get(), ResourceRef::Core("nodes"), &DecodeNode, &DecodeNodeList,
                          options);
  informer.AddHandlers(UndecodableHandlers(&log_, &told, &mu));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(seconds(10)));
  // Handlers run after the maps change: wait for the last one told.
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return told.size() >= 6;
  }));

  // What a component can answer with: identity, the problem from its JSON
  // path on, the object.
  const auto a = informer.Undecodable("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->meta.uid, "uid-a");
  EXPECT_EQ(a->meta.resource_version, "11");
  EXPECT_EQ(a->meta.generation, 4);
  EXPECT_EQ(a->problem, "spec.unschedulable: expected a boolean, got a string");
  EXPECT_EQ(a->json, BadNodeJson("a", "11"));
  EXPECT_EQ(UndecodableReason(*a), "bad_spec");
  // The typed cache keeps a's last good state; c decodes now; e is gone.
  EXPECT_THAT(CacheContents(informer), ElementsAre("a@1", "b@2", "c@13"));
  std::vector<std::string> keys;
  for (const auto& r : informer.ListUndecodable()) keys.push_back(r->Key());
  EXPECT_THAT(keys, ElementsAre("a", "f"));
  EXPECT_EQ(informer.Undecodable("c"), nullptr);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(told, ElementsAre("undecodable c@3", "undecodable a@11", "undecodable e@12",
                                "cleared c@3", "cleared e@12", "undecodable f@20"));
  EXPECT_THAT(log_.events(), ElementsAre("add a@1", "add b@2", "add c@13"));
  StopPromptly(informer);
}

// A Node with a uid and a label: a stub keeps the uid, not the label.
std::string LabeledNodeJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"Node","metadata":{"name":")" + name + R"(","uid":"uid-)" + name +
         R"(","resourceVersion":")" + rv + R"(","labels":{"zone":"z1"}}})";
}

// "a@1", with "(stub)" when the object came without its labels (a stub),
// and "(no uid)" when without its uid.
std::string DescribeLabeled(const Node& n) {
  std::string out = n.meta.name + "@" + n.meta.resource_version;
  if (n.meta.labels.empty()) out += "(stub)";
  if (n.meta.uid != "uid-" + n.meta.name) out += "(no uid)";
  return out;
}

struct CacheModeCase {
  std::string name;
  std::vector<ListSnapshot> lists;
  bool expire_continue;  // the first list's second page answers 410
  std::vector<WatchScript> watches;
  std::vector<std::string> want_full;      // handler calls (DescribeLabeled), CacheMode::kFull
  std::vector<std::string> want_metadata;  // the same, CacheMode::kMetadataOnly
  std::vector<std::string> want_cache;     // name@version, ordered by key
  std::string want_resource_version;
};

std::vector<CacheModeCase> CacheModeCases() {
  const auto node = LabeledNodeJson;
  return {
      {"a relist after 410 adds, updates and deletes across its pages",
       {{"10", {{node("a", "1"), node("b", "2")}, {node("c", "3")}}},
        {"30", {{node("a", "20"), node("c", "3")}, {node("d", "21")}, {node("e", "22")}}}},
       false,
       {{410, kExpired, WatchScript::kEnd}},
       {"add a@1", "add b@2", "add c@3", "update a@1->a@20", "add d@21", "add e@22", "delete b@2"},
       {"add a@1", "add b@2", "add c@3", "update a@1(stub)->a@20", "add d@21", "add e@22",
        "delete b@2(stub)"},
       {"a@20", "c@3", "d@21", "e@22"},
       "30"},
      {"a continue token that expires restarts the list; what it no longer names goes",
       {{"10", {{node("a", "1"), node("b", "2")}, {node("c", "3")}}},
        {"12", {{node("a", "1"), node("c", "3")}, {node("d", "4")}}}},
       true,
       {},
       {"add a@1", "add b@2", "add c@3", "add d@4", "delete b@2"},
       {"add a@1", "add b@2", "add c@3", "add d@4", "delete b@2(stub)"},
       {"a@1", "c@3", "d@4"},
       "12"},
      {"watch events: the old object is a stub, a DELETED event's object is whole",
       {{"10", {{node("a", "1"), node("b", "2")}}}},
       false,
       {{200, Event("MODIFIED", node("a", "5")) + Event("DELETED", node("b", "6")),
         WatchScript::kHold}},
       {"add a@1", "add b@2", "update a@1->a@5", "delete b@6"},
       {"add a@1", "add b@2", "update a@1(stub)->a@5", "delete b@6"},
       {"a@5"},
       "6"},
  };
}

// Runs `c` with `mode`: what the handlers were told, what the cache holds.
void ExpectCacheModeCase(const CacheModeCase& c, CacheMode mode) {
  const bool stubs = mode == CacheMode::kMetadataOnly;
  FakeNodesApi api;
  ASSERT_TRUE(api.server().Start());
  for (const ListSnapshot& list : c.lists) api.AddList(list);
  for (const WatchScript& watch : c.watches) api.AddWatch(watch);
  if (c.expire_continue) api.ExpireNextContinue();
  auto client = Client::New(ClientConfig{.server = api.server().url()});
  ASSERT_TRUE(client.ok()) << client.status();
  InformerOptions options{.page_size = 2, .cache_mode = mode};
  options.backoff = {milliseconds(1), milliseconds(20), 2.0, 0.0, Duration(0)};
  Informer<Node> informer(client->get(), ResourceRef::Core("nodes"), &DecodeNode, &DecodeNodeList,
                          options);
  EventLog log(&DescribeLabeled);
  informer.AddHandlers(log.Handlers());
  informer.Start();
  const std::vector<std::string>& want = stubs ? c.want_metadata : c.want_full;
  ASSERT_TRUE(WaitFor([&] { return log.size() >= want.size() && api.held() == 1; }))
      << ::testing::PrintToString(log.events());
  EXPECT_THAT(log.events(), ElementsAreArray(want));
  std::vector<std::string> cached;
  for (const auto& n : informer.List()) {
    cached.push_back(n->meta.name + "@" + n->meta.resource_version);
    EXPECT_EQ(n->meta.uid, "uid-" + n->meta.name);
    EXPECT_EQ(n->meta.labels.empty(), stubs) << "the cache keeps what the mode says";
  }
  EXPECT_THAT(cached, ElementsAreArray(c.want_cache));
  const std::string first = c.want_cache.front().substr(0, c.want_cache.front().find('@'));
  ASSERT_NE(informer.Get(first), nullptr);
  EXPECT_EQ(informer.Get(first)->meta.labels.empty(), stubs);
  EXPECT_EQ(informer.Get("nope"), nullptr);
  EXPECT_EQ(informer.size(), c.want_cache.size());
  EXPECT_EQ(informer.resource_version(), c.want_resource_version);
  informer.Stop();
}

// Both modes list page by page with the same add/update/delete semantics;
// handlers get whole new objects; the cache (and so old objects) is whole
// in kFull, stubs with name, uid and version in kMetadataOnly.
TEST(InformerCacheModeTest, ListsPageByPageAndKeepsWhatTheModeSays) {
  for (const CacheModeCase& c : CacheModeCases()) {
    for (CacheMode mode : {CacheMode::kFull, CacheMode::kMetadataOnly}) {
      SCOPED_TRACE(c.name + (mode == CacheMode::kFull ? " (full)" : " (metadata only)"));
      ExpectCacheModeCase(c, mode);
    }
  }
}

TEST(UndecodableReasonTest, NamesTheTopLevelFieldOfTheProblem) {
  struct Case {
    std::string problem;
    std::string_view want;
  };
  const std::vector<Case> cases = {
      {R"(spec.minResources["nvidia.com/gpu"]: quantity "lots" ...)", "bad_spec"},
      {"spec: expected an object, got a string", "bad_spec"},
      {"status.conditions[0].lastTransitionTime: not RFC 3339", "bad_status"},
      {"metadata.labels: expected an object, got a number", "bad_metadata"},
      {"specification.x: made up", "bad_object"},
      {"<root>: expected an object, got an array", "bad_object"},
      {"invalid JSON at offset 3: Invalid value.", "bad_object"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(UndecodableReason(UndecodableObject{.problem = c.problem}), c.want) << c.problem;
  }
}

// An API behind a feature gate (Kubernetes' own PodGroups): the extender
// must get ready on a server that does not serve it, and follow it once the
// server does. Any other collection answering 404 (a CRD not installed)
// keeps the informer unsynced.
TEST_F(InformerTest, AnOptionalCollectionNotServedCountsAsSyncedUntilItIs) {
  for (const bool optional : {false, true}) {
    SCOPED_TRACE(optional ? "optional" : "required");
    FakeNodesApi api;
    ASSERT_TRUE(api.server().Start());
    api.SetServed(false);
    api.AddList({"10", {{NodeJson("a", "1")}}});
    ClientConfig config;
    config.server = api.server().url();
    auto client = Client::New(config);
    ASSERT_TRUE(client.ok()) << client.status();
    InformerOptions options;
    options.backoff = {milliseconds(1), milliseconds(20), 2.0, 0.0, Duration(0)};
    options.optional_collection = optional;
    Informer<Node> informer(client->get(), ResourceRef::Core("nodes"), &DecodeNode, &DecodeNodeList,
                            options);
    informer.Start();
    ASSERT_TRUE(WaitFor([&] { return informer.stats().list_errors >= 2; }));
    EXPECT_EQ(informer.HasSynced(), optional);
    EXPECT_EQ(informer.last_list_error().code(), StatusCode::kNotFound);
    EXPECT_TRUE(informer.List().empty());

    api.SetServed(true);
    // The list's objects are cached as its pages arrive, before the list is
    // complete: wait for its end, which clears the error.
    ASSERT_TRUE(WaitFor([&] { return informer.last_list_error().ok(); }));
    EXPECT_NE(informer.Get("a"), nullptr);
    EXPECT_TRUE(informer.HasSynced());
    informer.Stop();
  }
}

TEST_F(InformerTest, StopsPromptlyWhileAListIsStuck) {
  api_.BlockLists();
  auto informer = MakeInformer();
  informer->Start();
  ASSERT_TRUE(WaitFor([&] { return !api_.list_queries().empty(); }));
  EXPECT_FALSE(informer->WaitForSync(milliseconds(20)));
  StopPromptly(*informer);
  EXPECT_FALSE(informer->HasSynced());
}

TEST_F(InformerTest, WaitForSyncReturnsOnStop) {
  api_.BlockLists();
  auto informer = MakeInformer();
  informer->Start();
  std::thread stopper([&] {
    WaitFor([&] { return !api_.list_queries().empty(); });
    informer->Stop();
  });
  EXPECT_FALSE(informer->WaitForSync(seconds(30)));
  stopper.join();
}

}  // namespace
}  // namespace muster::kube
