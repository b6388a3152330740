#include "kube/codec/bus_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"

namespace muster::kube {
namespace {

using codec_test::At;
using codec_test::ExpectRoundTrip;
using codec_test::ReadTestdata;
using codec_test::StatusOf;
using codec_test::StatusOfDecode;
using codec_test::WithValueAt;
using ::testing::StartsWith;

// A Command as `vcctl job suspend -N tf-dist-mnist -n ml-team` leaves it
// (volcano-sh/volcano pkg/cli/util/util.go CreateJobCommand): generateName
// <job>-<action lowercased>-, the Job as controller owner and as target.
TEST(BusCodecTest, DecodesVcctlSuspend) {
  StatusOr<Command> cmd = DecodeCommand(ReadTestdata("command_abortjob.json"));
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->meta.Key(), "ml-team/tf-dist-mnist-abortjob-x7k2p");
  EXPECT_EQ(cmd->meta.generate_name, "tf-dist-mnist-abortjob-");
  EXPECT_EQ(cmd->meta.creation_timestamp, At("2025-03-14T09:40:12Z"));
  ASSERT_EQ(cmd->meta.owner_references.size(), 1u);
  EXPECT_EQ(cmd->meta.owner_references[0].name, "tf-dist-mnist");
  EXPECT_EQ(cmd->action, "AbortJob");
  ASSERT_TRUE(cmd->target.has_value());
  EXPECT_EQ(*cmd->target, (OwnerReference{"batch.volcano.sh/v1alpha1", "Job", "tf-dist-mnist",
                                          "0f2d8c4e-6b1a-4e3f-9c7d-2a5b8e1f4d60", true, true}));
  EXPECT_EQ(cmd->reason, "");
  EXPECT_EQ(cmd->message, "");
}

TEST(BusCodecTest, DecodesCommandList) {
  StatusOr<ObjectList<Command>> list = DecodeCommandList(ReadTestdata("command_list.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "48231077");
  ASSERT_EQ(list->items.size(), 2u);
  const Command& close = list->items[0];
  EXPECT_EQ(close.action, "CloseQueue");
  ASSERT_TRUE(close.target.has_value());
  EXPECT_EQ(close.target->api_version, "scheduling.volcano.sh/v1beta1");
  EXPECT_EQ(close.target->kind, "Queue");
  EXPECT_EQ(close.target->name, "research");
  EXPECT_EQ(close.reason, "Maintenance");
  EXPECT_EQ(close.message, "draining research for the driver upgrade");
  // Written by hand without a target: decodes (the API allows it); the
  // reconciler refuses to run it (reconciler/commands.h).
  const Command& bare = list->items[1];
  EXPECT_EQ(bare.action, "ResumeJob");
  EXPECT_FALSE(bare.target.has_value());
}

// What vcctl sends for `vcctl queue operate -n research -a close`
// (CreateQueueCommand), byte for byte as EncodeCommand writes it.
TEST(BusCodecTest, EncodesVcctlQueueClose) {
  Command cmd;
  cmd.meta.generate_name = "research-closequeue-";
  cmd.meta.namespace_ = "default";
  OwnerReference queue{"scheduling.volcano.sh/v1beta1",        "Queue", "research",
                       "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4", true,    true};
  cmd.meta.owner_references.push_back(queue);
  cmd.target = queue;
  cmd.action = "CloseQueue";
  EXPECT_EQ(EncodeCommand(cmd),
            R"({"apiVersion":"bus.volcano.sh/v1alpha1","kind":"Command",)"
            R"("metadata":{"generateName":"research-closequeue-","namespace":"default",)"
            R"("ownerReferences":[{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",)"
            R"("name":"research","uid":"9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4","controller":true,)"
            R"("blockOwnerDeletion":true}]},"action":"CloseQueue",)"
            R"("target":{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",)"
            R"("name":"research","uid":"9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4","controller":true,)"
            R"("blockOwnerDeletion":true}})");
}

TEST(BusCodecTest, FixturesRoundTrip) {
  ExpectRoundTrip(ReadTestdata("command_abortjob.json"), DecodeCommand, EncodeCommand);
  StatusOr<ObjectList<Command>> list = DecodeCommandList(ReadTestdata("command_list.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  for (const Command& c : list->items) {
    ExpectRoundTrip(EncodeCommand(c), DecodeCommand, EncodeCommand);
  }
}

TEST(BusCodecTest, ErrorsNameTheJsonPath) {
  struct Case {
    std::string name;
    StatusOfDecode decode;
    std::string json;
    std::string want;  // the message's prefix
  };
  const std::string cmd = ReadTestdata("command_abortjob.json");
  const StatusOfDecode decode = StatusOf(DecodeCommand);
  const std::vector<Case> cases = {
      {"action as a number", decode, WithValueAt(cmd, "/action", "1"),
       "decode Command: action: expected a string, got a number"},
      {"target as a string", decode, WithValueAt(cmd, "/target", R"("tf-dist-mnist")"),
       "decode Command: target: expected an object, got a string"},
      {"target kind as a list", decode, WithValueAt(cmd, "/target/kind", "[]"),
       "decode Command: target.kind: expected a string, got an array"},
      {"target controller as a string", decode, WithValueAt(cmd, "/target/controller", R"("true")"),
       "decode Command: target.controller: expected a boolean, got a string"},
      {"message as an object", decode, WithValueAt(cmd, "/message", "{}"),
       "decode Command: message: expected a string, got an object"},
      {"items as an object", StatusOf(DecodeCommandList), R"({"items":{}})",
       "decode CommandList: items: expected an array, got an object"},
      {"not JSON", decode, "{", "decode Command: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = c.decode(c.json);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), StartsWith(c.want));
  }
}

TEST(BusCodecTest, NullTargetReadsAsAbsent) {
  StatusOr<Command> cmd =
      DecodeCommand(WithValueAt(ReadTestdata("command_abortjob.json"), "/target", "null"));
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_FALSE(cmd->target.has_value());
}

}  // namespace
}  // namespace muster::kube
