#include "kube/codec/bus_codec.h"

#include "kube/codec/codec_helpers.h"

namespace muster::kube {
namespace {

constexpr std::string_view kBusApiVersion = "bus.volcano.sh/v1alpha1";

}  // namespace

// Volcano's Command has no spec: action, target, reason and message sit at
// the top level, next to metadata.
void DecodeCommandFrom(DecodeContext& ctx, const JsonValue& v, Command* out) {
  if (!BeginObject(ctx, v)) return;
  ReadObject(ctx, v, "metadata", &out->meta, DecodeObjectMetaFrom);
  ReadString(ctx, v, "action", &out->action);
  ReadOptionalObject(ctx, v, "target", &out->target, DecodeOwnerReferenceFrom);
  ReadString(ctx, v, "reason", &out->reason);
  ReadString(ctx, v, "message", &out->message);
}

StatusOr<Command> DecodeCommand(std::string_view json) {
  return DecodeDocument<Command>(json, "decode Command", DecodeCommandFrom);
}

StatusOr<ObjectList<Command>> DecodeCommandList(std::string_view json) {
  return DecodeDocument<ObjectList<Command>>(
      json, "decode CommandList",
      [](DecodeContext& ctx, const JsonValue& v, ObjectList<Command>* out) {
        DecodeListFrom(ctx, v, out, DecodeCommandFrom);
      });
}

std::string EncodeCommand(const Command& command) {
  JsonWriter w;
  w.StartObject();
  WriteTypeMeta(w, kBusApiVersion, "Command");
  w.Key("metadata");
  EncodeObjectMeta(w, command.meta);
  w.StringFieldIfSet("action", command.action);
  if (command.target) {
    w.Key("target");
    EncodeOwnerReference(w, *command.target);
  }
  w.StringFieldIfSet("reason", command.reason);
  w.StringFieldIfSet("message", command.message);
  w.EndObject();
  return w.TakeString();
}

}  // namespace muster::kube
