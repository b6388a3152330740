#include "kube/client/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "kube/client/testing/loopback_server.h"

namespace muster::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::LoopbackServer;
using testing::RequestLog;

std::string Event(const std::string& type, const std::string& name, const std::string& rv) {
  return R"({"type":")" + type + R"(","object":{"kind":"Node","metadata":{"name":")" + name +
         R"(","resourceVersion":")" + rv + R"("}}})";
}

// "TYPE name@rv" for compact comparisons.
std::string Describe(const WatchEvent& e) {
  return std::string(WatchEventTypeName(e.type)) + " " + e.name + "@" + e.resource_version;
}

struct Collected {
  std::vector<std::string> events;
  Status status;
};

Collected FeedAll(const std::vector<std::string_view>& chunks) {
  WatchStreamParser parser;
  Collected out;
  for (std::string_view chunk : chunks) {
    out.status = parser.Feed(chunk, [&](WatchEvent&& e) {
      out.events.push_back(Describe(e));
      return true;
    });
    if (!out.status.ok()) break;
  }
  return out;
}

const std::string kStream = Event("ADDED", "n1", "1") + "\n" + Event("MODIFIED", "n1", "2") + "\n" +
                            R"({"type":"BOOKMARK","object":{"kind":"Node","metadata":)"
                            R"({"resourceVersion":"7"}}})" +
                            "\n" + Event("DELETED", "n1", "8") + "\n";
const std::vector<std::string> kStreamEvents = {"ADDED n1@1", "MODIFIED n1@2", "BOOKMARK @7",
                                                "DELETED n1@8"};

TEST(WatchStreamParserTest, FramesEventsAcrossEverySplitPoint) {
  for (size_t split = 0; split <= kStream.size(); ++split) {
    SCOPED_TRACE(split);
    std::string_view all(kStream);
    Collected c = FeedAll({all.substr(0, split), all.substr(split)});
    ASSERT_TRUE(c.status.ok()) << c.status;
    EXPECT_EQ(c.events, kStreamEvents);
  }
}

TEST(WatchStreamParserTest, FramesEventsFedOneByteAtATime) {
  std::vector<std::string_view> bytes;
  std::string_view all(kStream);
  for (size_t i = 0; i < all.size(); ++i) bytes.push_back(all.substr(i, 1));
  Collected c = FeedAll(bytes);
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(c.events, kStreamEvents);
}

TEST(WatchStreamParserTest, HandlesTrickyInput) {
  struct Case {
    std::string name;
    std::string stream;
    std::vector<std::string> events;
  };
  const std::vector<Case> cases = {
      {"no newline between events",
       Event("ADDED", "a", "1") + Event("ADDED", "b", "2"),
       {"ADDED a@1", "ADDED b@2"}},
      {"braces and escaped quotes in strings",
       R"({"type":"ADDED","object":{"metadata":{"name":"x","resourceVersion":"3",)"
       R"("annotations":{"k":"}{ \" ][","b":"\\","c":"\\\""}}}})",
       {"ADDED x@3"}},
      {"CRLF and blank lines", "\r\n\r\n" + Event("ADDED", "a", "1") + "\r\n\r\n", {"ADDED a@1"}},
      {"namespaced object",
       R"({"type":"ADDED","object":{"metadata":{"namespace":"ns","name":"p","resourceVersion":"4"}}})",
       {"ADDED p@4"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Collected got = FeedAll({c.stream});
    ASSERT_TRUE(got.status.ok()) << got.status;
    EXPECT_EQ(got.events, c.events);
    // And split after every byte: an escape, a string or an event across
    // chunks.
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < c.stream.size(); ++i)
      bytes.push_back(std::string_view(c.stream).substr(i, 1));
    got = FeedAll(bytes);
    ASSERT_TRUE(got.status.ok()) << got.status;
    EXPECT_EQ(got.events, c.events);
  }
}

TEST(WatchStreamParserTest, RejectsMalformedStreams) {
  struct Case {
    std::string name;
    std::string stream;
    std::string error_part;
  };
  const std::vector<Case> cases = {
      {"garbage between events", Event("ADDED", "a", "1") + "xyz", "unexpected byte 'x'"},
      {"unknown type", R"({"type":"RENAMED","object":{}})", "unknown watch event type"},
      {"missing object", R"({"type":"ADDED"})", "object"},
      {"object not an object", R"({"type":"ADDED","object":[1]})", "object"},
      {"metadata not an object", R"({"type":"ADDED","object":{"metadata":"x"}})", "metadata"},
      {"unbalanced", R"({"type":"ADDED","object":{}}]})", "unexpected byte ']'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Collected got = FeedAll({c.stream});
    ASSERT_FALSE(got.status.ok());
    EXPECT_EQ(got.status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status.message(), HasSubstr(c.error_part));
  }
}

TEST(WatchStreamParserTest, BoundsTheSizeOfOneEvent) {
  WatchStreamParser parser(/*max_event_bytes=*/64);
  Status s = parser.Feed(
      R"({"type":"ADDED","object":{"metadata":{"name":")" + std::string(100, 'x') + R"("}}})",
      [](WatchEvent&&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("larger than 64 bytes"));
}

TEST(WatchStreamParserTest, KeepsThePartialEventBuffered) {
  WatchStreamParser parser;
  std::string first = Event("ADDED", "a", "1");
  EXPECT_TRUE(parser.Feed(first.substr(0, 10), [](WatchEvent&&) { return true; }).ok());
  EXPECT_FALSE(parser.idle());
  EXPECT_TRUE(parser.Feed(first.substr(10), [](WatchEvent&&) { return true; }).ok());
  EXPECT_TRUE(parser.idle());
}

TEST(WatchEventTest, CarriesTheObjectVerbatim) {
  StatusOr<WatchEvent> e = ParseWatchEvent(
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"ns",)"
      R"("resourceVersion":"9"},"spec":{"nodeName":"n1"}}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, WatchEventType::kModified);
  EXPECT_EQ(e->namespace_, "ns");
  EXPECT_EQ(e->name, "p");
  EXPECT_EQ(e->resource_version, "9");
  EXPECT_EQ(e->object_json,
            R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns","resourceVersion":"9"},)"
            R"("spec":{"nodeName":"n1"}})");
}

// What ParseWatchEvent reads of an event's object: its identity and
// version, from its metadata only, wherever that is in the object.
TEST(WatchEventTest, ReadsTheMetadataOfTheObjectOnly) {
  struct Case {
    std::string name;
    std::string event;
    std::string want;  // "ns/name@rv"
  };
  const std::vector<Case> cases = {
      {"a bookmark", Event("BOOKMARK", "", "71"), "/@71"},
      {"a pod template's metadata is not the object's",
       R"({"type":"ADDED","object":{"metadata":{"name":"j","namespace":"ns","resourceVersion":)"
       R"("74"},"spec":{"template":{"metadata":{"name":"x","namespace":"y"}}}}})",
       "ns/j@74"},
      {"metadata after the spec, names in nested objects and arrays before it",
       R"({"type":"MODIFIED","object":{"spec":{"name":"no","items":[{"metadata":{"name":"no"}}]},)"
       R"("metadata":{"labels":{"name":"no"},"name":"p","namespace":"ns","resourceVersion":"75"}}})",
       "ns/p@75"},
      {"escaped quotes and braces in a string before the name",
       R"({"type":"ADDED","object":{"metadata":{"labels":{"k":"}{\" ]["},"name":"q"}}})", "/q@"},
      {"spaces between the members, object first",
       R"( {
 "object" : {"metadata" : {"name" : "n" , "resourceVersion" : "76"}} , "type" : "ADDED" } )",
       "/n@76"},
      {"an object without metadata (an ERROR's Status)",
       R"({"type":"ERROR","object":{"kind":"Status","code":500}})", "/@"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<WatchEvent> e = ParseWatchEvent(c.event);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->namespace_ + "/" + e->name + "@" + e->resource_version, c.want);
  }
}

TEST(WatchEventTest, HandsTheObjectOverAsTheServerSentIt) {
  const std::string object = R"({ "kind": "Node",  "metadata": {"name": "n"}, "x": [1, 2] })";
  StatusOr<WatchEvent> e = ParseWatchEvent(R"({"type": "ADDED", "object": )" + object + " }");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->object_json, object);
}

// Watch() against a loopback server replaying one scripted answer.
class WatchTest : public ::testing::Test {
 protected:
  struct Script {
    int http = 200;
    std::string body;   // streamed as it is
    bool drop = false;  // close the connection without ending the body
  };

  void SetUp() override {
    server_ = std::make_unique<LoopbackServer>([this](httplib::Server& s) {
      s.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
        log_.Add(req);
        const Script current = script();
        res.status = current.http;
        if (current.http != 200) {
          res.set_content(current.body, "application/json");
          return;
        }
        res.set_chunked_content_provider(
            "application/json", [current](size_t, httplib::DataSink& sink) {
              // Uneven chunks, to split events inside the client's reads.
              std::string_view body(current.body);
              for (size_t i = 0; i < body.size(); i += 7) {
                sink.write(body.data() + i, std::min<size_t>(7, body.size() - i));
              }
              if (current.drop) return false;
              sink.done();
              return true;
            });
      });
    });
    ASSERT_TRUE(server_->Start());
    ClientConfig config;
    config.server = server_->url();
    auto client = Client::New(config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(client).value();
  }

  Status RunWatch(std::vector<std::string>* events, int stop_after = -1) {
    WatchOptions options;
    options.resource_version = "100";
    options.timeout_seconds = 60;
    options.label_selector = "gpu=true";
    return Watch(*client_, ResourceRef::Core("nodes"), options, [&](const WatchEvent& e) {
      events->push_back(Describe(e));
      return stop_after < 0 || static_cast<int>(events->size()) < stop_after;
    });
  }

  void set_script(Script script) {
    std::lock_guard<std::mutex> lock(mu_);
    script_ = std::move(script);
  }
  Script script() {
    std::lock_guard<std::mutex> lock(mu_);
    return script_;
  }

  std::mutex mu_;
  Script script_;
  RequestLog log_;
  std::unique_ptr<LoopbackServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(WatchTest, DeliversEventsAndEndsCleanly) {
  set_script({200, kStream});
  std::vector<std::string> events;
  Status s = RunWatch(&events);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(events, kStreamEvents);
  ASSERT_EQ(log_.size(), 1u);
  testing::RecordedRequest r = log_.Snapshot()[0];
  EXPECT_EQ(r.Param("watch"), "1");
  EXPECT_EQ(r.Param("resourceVersion"), "100");
  EXPECT_EQ(r.Param("allowWatchBookmarks"), "true");
  EXPECT_EQ(r.Param("timeoutSeconds"), "60");
  EXPECT_EQ(r.Param("labelSelector"), "gpu=true");
}

TEST_F(WatchTest, HandlerCanStopTheWatch) {
  set_script({200, kStream});
  std::vector<std::string> events;
  EXPECT_TRUE(RunWatch(&events, /*stop_after=*/2).ok());
  EXPECT_THAT(events, ElementsAre("ADDED n1@1", "MODIFIED n1@2"));
}

TEST_F(WatchTest, ReportsGoneAndOtherErrors) {
  const std::string expired_status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource)"
      R"( version: 100","reason":"Expired","code":410})";
  struct Case {
    std::string name;
    Script script;
    StatusCode code;
    std::vector<std::string> events;
  };
  const std::vector<Case> cases = {
      {"410 as HTTP status", {410, expired_status}, StatusCode::kGone, {}},
      {"410 as ERROR event",
       {200, Event("ADDED", "a", "101") + "\n" + R"({"type":"ERROR","object":)" + expired_status +
                 "}\n"},
       StatusCode::kGone,
       {"ADDED a@101"}},
      {"500 as ERROR event",
       {200, R"({"type":"ERROR","object":{"kind":"Status","code":500,"message":"x"}})"},
       StatusCode::kInternal,
       {}},
      {"403 as HTTP status",
       {403, R"({"kind":"Status","reason":"Forbidden","code":403})"},
       StatusCode::kPermissionDenied,
       {}},
      {"dropped mid-event",
       {200, Event("ADDED", "a", "1") + R"({"type":"ADD)", true},
       StatusCode::kUnavailable,
       {"ADDED a@1"}},
      {"ended mid-event",
       {200, Event("ADDED", "a", "1") + R"({"type":"ADD)", false},
       StatusCode::kUnavailable,
       {"ADDED a@1"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    set_script(c.script);
    std::vector<std::string> events;
    Status s = RunWatch(&events);
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_EQ(events, c.events);
  }
}

}  // namespace
}  // namespace muster::kube
