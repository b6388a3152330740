// Robustness of every object decoder over every value of every fixture:
// hostile or sloppy input is refused with a message naming its exact JSON
// path, or read as unset — never a crash or a misplaced error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kube/codec/bus_codec.h"
#include "kube/codec/codec_test_util.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::kube {
namespace {

using codec_test::AllLocations;
using codec_test::Parse;
using codec_test::ReadTestdata;
using ::testing::StartsWith;

using codec_test::StatusOf;
using codec_test::StatusOfDecode;

struct Fixture {
  std::string file;
  StatusOfDecode decode;
  std::string what;  // the message prefix: "decode Pod"
};

std::vector<Fixture> AllFixtures() {
  return {
      {"pod_full.json", StatusOf(DecodePod), "decode Pod"},
      {"pod_gated.json", StatusOf(DecodePod), "decode Pod"},
      {"node_gpu.json", StatusOf(DecodeNode), "decode Node"},
      {"pod_list_page.json", StatusOf(DecodePodList), "decode PodList"},
      {"podgroup.json", StatusOf(DecodePodGroup), "decode PodGroup"},
      {"queue.json", StatusOf(DecodeQueue), "decode Queue"},
      {"queue_list.json", StatusOf(DecodeQueueList), "decode QueueList"},
      {"job_tf.json", StatusOf(DecodeJob), "decode Job"},
      {"job_pytorch.json", StatusOf(DecodeJob), "decode Job"},
      {"command_abortjob.json", StatusOf(DecodeCommand), "decode Command"},
      {"command_list.json", StatusOf(DecodeCommandList), "decode CommandList"},
  };
}

// null reads as unset wherever it appears, as Go's encoding/json reads it.
TEST(CodecRobustnessTest, NullIsToleratedEverywhere) {
  for (const Fixture& f : AllFixtures()) {
    rapidjson::Document doc = Parse(ReadTestdata(f.file));
    for (const codec_test::JsonLocation& loc : AllLocations(doc)) {
      SCOPED_TRACE(f.file + ": " + loc.path);
      Status status = f.decode(codec_test::Replaced(doc, loc.pointer, rapidjson::Value()));
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

// A value of the wrong type is either outside the model (ignored) or an
// error naming exactly its path.
TEST(CodecRobustnessTest, WrongTypeAnywhereFailsAtItsPath) {
  for (const Fixture& f : AllFixtures()) {
    rapidjson::Document doc = Parse(ReadTestdata(f.file));
    for (const codec_test::JsonLocation& loc : AllLocations(doc)) {
      SCOPED_TRACE(f.file + ": " + loc.path);
      Status status =
          f.decode(codec_test::Replaced(doc, loc.pointer, codec_test::OtherTypeThan(loc.type)));
      if (status.ok()) continue;
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(status.message(), StartsWith(f.what + ": " + loc.path + ": "));
    }
  }
}

}  // namespace
}  // namespace muster::kube
