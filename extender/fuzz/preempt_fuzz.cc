// libFuzzer target: Pipeline::Preempt with the input as the POST body.
//
// Invariants (pipeline.h, the wire contract): a body that does not decode is
// HTTP 400 with a text reason; any other is HTTP 200 with a JSON
// ExtenderPreemptionResult in the Meta form, whose nodes and victim UIDs were
// all proposed for that node by the request (in either form), and where no
// node is kept without victims.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "extender/fuzz/verb_fuzz.h"
#include "kube/codec/extender_types.h"

namespace extender = muster::extender;
namespace fuzz = muster::extender::fuzz;
namespace kube = muster::kube;

namespace {

// Node -> the victim UIDs proposed there, from both forms of the request
// (whichever the pipeline reads, nothing outside this may come back).
std::map<std::string, std::set<std::string>> Proposed(const kube::ExtenderPreemptionArgs& args) {
  std::map<std::string, std::set<std::string>> proposed;
  if (args.node_name_to_meta_victims.has_value()) {
    for (const auto& [node, victims] : *args.node_name_to_meta_victims) {
      for (const kube::MetaPod& pod : victims.pods) proposed[node].insert(pod.uid);
      proposed[node];
    }
  }
  if (args.node_name_to_victims.has_value()) {
    for (const auto& [node, victims] : *args.node_name_to_victims) {
      for (const muster::Pod& pod : victims.pods) proposed[node].insert(pod.meta.uid);
      proposed[node];
    }
  }
  return proposed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::AsText(data, size);
  const extender::VerbReply reply = fuzz::Cluster().pipeline.Preempt(input);
  const std::string& body = reply.body;
  muster::StatusOr<kube::ExtenderPreemptionArgs> args = kube::DecodeExtenderPreemptionArgs(input);
  if (!args.ok()) {
    fuzz::ExpectBadRequest(reply, input);
    return 0;
  }
  if (reply.http_status != 200 || reply.content_type != "application/json") {
    fuzz::Violation("a request that decodes must get 200 with JSON", input, body);
  }
  fuzz::ExpectJson(body, input);
  muster::StatusOr<kube::ExtenderPreemptionResult> result =
      kube::DecodeExtenderPreemptionResult(body);
  if (!result.ok()) {
    fuzz::Violation("the reply does not decode: " + result.status().ToString(), input, body);
  }
  if (!result->node_name_to_meta_victims.has_value()) return 0;  // null: no node kept
  const std::map<std::string, std::set<std::string>> proposed = Proposed(*args);
  for (const auto& [node, victims] : *result->node_name_to_meta_victims) {
    auto it = proposed.find(node);
    if (it == proposed.end()) {
      fuzz::Violation("node \"" + node + "\" was not proposed", input, body);
    }
    if (victims.pods.empty()) fuzz::Violation("a node kept without victims", input, body);
    for (const kube::MetaPod& pod : victims.pods) {
      if (!it->second.contains(pod.uid)) {
        fuzz::Violation("victim \"" + pod.uid + "\" was not proposed on node \"" + node + "\"",
                        input, body);
      }
    }
  }
  return 0;
}
