// libFuzzer target: Pipeline::Filter with the input as the POST body.
//
// Invariants (pipeline.h, the wire contract): always HTTP 200 with a JSON
// ExtenderFilterResult. A body that does not decode gets an Error after
// "muster: " and no node at all; any other gets no Error and every name sent
// exactly once, either passing (NodeNames or Nodes, in the request's form)
// or failed, with a reason; a name the cache does not know never passes; no
// name comes back that was not sent.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "extender/fuzz/verb_fuzz.h"
#include "kube/codec/extender_types.h"

namespace extender = muster::extender;
namespace fuzz = muster::extender::fuzz;
namespace kube = muster::kube;

namespace {

void CheckReasons(const kube::FailedNodesMap& failed, std::string_view what, std::string_view input,
                  std::string_view body) {
  for (const auto& [name, reason] : failed) {
    if (!reason.starts_with(extender::kReasonPrefix)) {
      fuzz::Violation(std::string(what) + " \"" + name + "\" without a muster reason", input, body);
    }
  }
}

void CheckDecided(const extender::ExtenderRequest& request, const kube::ExtenderFilterResult& r,
                  std::string_view input, std::string_view body) {
  if (!r.error.empty()) fuzz::Violation("a request that decodes got an Error", input, body);
  const bool cache_mode = request.candidates.cache_mode;
  if (cache_mode != r.node_names.has_value() || cache_mode == r.nodes.has_value()) {
    fuzz::Violation("the reply is not in the request's form (NodeNames vs Nodes)", input, body);
  }
  std::vector<std::string> passed;
  if (r.node_names.has_value()) passed = *r.node_names;
  if (r.nodes.has_value()) {
    for (const kube::NodeWithRaw& n : *r.nodes) passed.push_back(n.node.meta.name);
  }
  const std::set<std::string> sent(request.candidates.names.begin(),
                                   request.candidates.names.end());
  fuzz::ExpectOnlySent(passed, sent, "NodeNames/Nodes", input, body);
  std::set<std::string> answered(passed.begin(), passed.end());
  for (const auto* failed : {&r.failed_nodes, &r.failed_and_unresolvable_nodes}) {
    for (const auto& [name, reason] : *failed) {
      if (!sent.contains(name)) {
        fuzz::Violation("a failed node \"" + name + "\" was not sent", input, body);
      }
      if (!answered.insert(name).second) {
        fuzz::Violation("node \"" + name + "\" has two verdicts", input, body);
      }
    }
  }
  if (answered != sent) fuzz::Violation("a node sent got no verdict", input, body);
  CheckReasons(r.failed_nodes, "FailedNodes", input, body);
  CheckReasons(r.failed_and_unresolvable_nodes, "FailedAndUnresolvableNodes", input, body);
  const extender::ClusterSnapshot snapshot = fuzz::Cluster().cache.Snapshot({});
  for (const std::string& name : passed) {
    const extender::NodeInfo* node = snapshot.FindNode(name);
    if (node == nullptr || !node->known()) {
      fuzz::Violation("node \"" + name + "\" passes though the cache does not know it", input,
                      body);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::AsText(data, size);
  const extender::VerbReply reply = fuzz::Cluster().pipeline.Filter(input);
  const std::string& body = reply.body;
  if (reply.http_status != 200) fuzz::Violation("filter must always answer 200", input, body);
  if (reply.content_type != "application/json") {
    fuzz::Violation("filter must answer JSON", input, body);
  }
  fuzz::ExpectJson(body, input);
  muster::StatusOr<kube::ExtenderFilterResult> result = kube::DecodeExtenderFilterResult(body);
  if (!result.ok())
    fuzz::Violation("the reply does not decode: " + result.status().ToString(), input, body);
  muster::StatusOr<extender::ExtenderRequest> request = extender::DecodeExtenderRequest(input);
  if (!request.ok()) {
    if (!result->error.starts_with(extender::kReasonPrefix) ||
        result->error.size() <= extender::kReasonPrefix.size()) {
      fuzz::Violation("a body that does not decode needs an Error after \"muster: \"", input, body);
    }
    if (reply.outcome != extender::ReplyOutcome::kBadRequest) {
      fuzz::Violation("a body that does not decode must count as bad_request", input, body);
    }
    const bool any_node = (result->node_names.has_value() && !result->node_names->empty()) ||
                          (result->nodes.has_value() && !result->nodes->empty()) ||
                          !result->failed_nodes.empty() ||
                          !result->failed_and_unresolvable_nodes.empty();
    if (any_node) fuzz::Violation("an Error reply names nodes", input, body);
    return 0;
  }
  CheckDecided(*request, *result, input, body);
  return 0;
}
