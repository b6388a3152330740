// JSON <-> model for bus.volcano.sh/v1alpha1 Command (model/command.h), the
// object vcctl creates for `job suspend|resume` and `queue operate`. Same
// error contract as core_codec.h: a malformed document is InvalidArgument
// naming the JSON path of the first bad field ("decode Command: target.kind:
// ..."); absent and null read as unset.
#pragma once

#include <string>
#include <string_view>

#include "kube/codec/core_codec.h"
#include "model/command.h"

namespace muster::kube {

void DecodeCommandFrom(DecodeContext& ctx, const JsonValue& v, Command* out);
StatusOr<Command> DecodeCommand(std::string_view json);
StatusOr<ObjectList<Command>> DecodeCommandList(std::string_view json);
// The whole object, as vcctl would create it (Volcano's field names; the
// target under "target").
std::string EncodeCommand(const Command& command);

}  // namespace muster::kube
