// libFuzzer target: Pipeline::Prioritize with the input as the POST body.
//
// Invariants (pipeline.h, the wire contract): a body that does not decode is
// HTTP 400 with a text reason; any other is HTTP 200 with a JSON
// HostPriorityList of exactly the names sent, in the order sent, each scored
// in [0, 10], and 0 for a node the cache does not know.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "extender/fuzz/verb_fuzz.h"
#include "kube/codec/extender_types.h"

namespace extender = muster::extender;
namespace fuzz = muster::extender::fuzz;
namespace kube = muster::kube;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::AsText(data, size);
  const extender::VerbReply reply = fuzz::Cluster().pipeline.Prioritize(input);
  const std::string& body = reply.body;
  muster::StatusOr<extender::ExtenderRequest> request = extender::DecodeExtenderRequest(input);
  if (!request.ok()) {
    fuzz::ExpectBadRequest(reply, input);
    return 0;
  }
  if (reply.http_status != 200 || reply.content_type != "application/json") {
    fuzz::Violation("a request that decodes must get 200 with JSON", input, body);
  }
  fuzz::ExpectJson(body, input);
  muster::StatusOr<kube::HostPriorityList> list = kube::DecodeHostPriorityList(body);
  if (!list.ok()) {
    fuzz::Violation("the reply does not decode: " + list.status().ToString(), input, body);
  }
  const std::vector<std::string_view>& sent = request->candidates.names;
  if (list->size() != sent.size()) {
    fuzz::Violation("one HostPriority per name sent", input, body);
  }
  const extender::ClusterSnapshot snapshot = fuzz::Cluster().cache.Snapshot({});
  for (size_t i = 0; i < sent.size(); ++i) {
    const kube::HostPriority& p = (*list)[i];
    if (p.host != sent[i]) {
      fuzz::Violation("host \"" + p.host + "\" is not the name sent at its place, \"" +
                          std::string(sent[i]) + "\"",
                      input, body);
    }
    if (p.score < kube::kMinExtenderPriority || p.score > kube::kMaxExtenderPriority) {
      fuzz::Violation("score out of [0, 10]", input, body);
    }
    const extender::NodeInfo* node = snapshot.FindNode(p.host);
    if ((node == nullptr || !node->known()) && p.score != 0) {
      fuzz::Violation("a node the cache does not know scores above 0", input, body);
    }
  }
  return 0;
}
