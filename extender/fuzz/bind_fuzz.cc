// libFuzzer target: bind with the input as the POST body, in the Pipeline's
// three calls (ReserveBind, then AnswerBind or FinishBind), without I/O: a
// plan that POSTs is replayed once per outcome the API server might give
// the Binding POST (a fake Status each time), from the cluster as built.
//
// Invariants (pipeline.h, the wire contract): always HTTP 200 with a JSON
// ExtenderBindingResult; Error is empty exactly when the reply counts as ok,
// and otherwise says what is wrong after "muster: ". A body that does not
// decode is a bad_request reject. A plan that POSTs carries a Binding of the
// very pod and node the request named and holds a reservation; one that does
// not reserves nothing. A bind is ok exactly when its POST bound the pod;
// the reservation stays unless the POST surely failed. The cache's
// accounting stays consistent, and each round returns it to the state it
// was built in (no reservation).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "extender/fuzz/verb_fuzz.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/extender_types.h"

namespace extender = muster::extender;
namespace fuzz = muster::extender::fuzz;
namespace kube = muster::kube;
using muster::Status;
using muster::StatusCode;
using muster::StatusOr;

namespace {

// What the API server might answer the Binding POST of a pod to `node`.
std::vector<Status> FakePosts(const std::string& node) {
  return {
      Status::Ok(),
      Status(StatusCode::kNotFound, "pods \"x\" not found"),
      Status(StatusCode::kUnavailable, "HTTP 503"),
      Status(StatusCode::kConflict, "pod x is already assigned to node \"" + node + "\""),
      Status(StatusCode::kConflict, "Operation cannot be fulfilled on pods/binding"),
      Status(StatusCode::kResourceExhausted, "HTTP 429"),
  };
}

void CheckPostPlan(const extender::BindPlan& plan, std::string_view input) {
  const kube::ExtenderBindingArgs& args = plan.args;
  const muster::Binding& b = plan.binding;
  if (b.meta.name != args.pod_name || b.meta.namespace_ != args.pod_namespace ||
      b.meta.uid != args.pod_uid || b.target_node != args.node) {
    fuzz::Violation("the Binding is not of the pod and node the request named", input,
                    kube::EncodeBinding(b));
  }
  auto annotation = b.meta.annotations.find(std::string(extender::kAnnotationNode));
  if (annotation == b.meta.annotations.end() || annotation->second != args.node) {
    fuzz::Violation("the Binding lacks the node annotation", input, kube::EncodeBinding(b));
  }
  if (!plan.assumed.has_value() || (*plan.assumed != extender::AssumeResult::kAssumed &&
                                    *plan.assumed != extender::AssumeResult::kRefreshed &&
                                    *plan.assumed != extender::AssumeResult::kMoved)) {
    fuzz::Violation("a plan that POSTs must hold a reservation", input, "");
  }
}

void CheckReply(const extender::VerbReply& reply, std::string_view input) {
  const std::string& body = reply.body;
  if (reply.http_status != 200) fuzz::Violation("bind must always answer 200", input, body);
  if (reply.content_type != "application/json") {
    fuzz::Violation("bind must answer JSON", input, body);
  }
  fuzz::ExpectJson(body, input);
  StatusOr<kube::ExtenderBindingResult> result = kube::DecodeExtenderBindingResult(body);
  if (!result.ok()) {
    fuzz::Violation("the reply does not decode: " + result.status().ToString(), input, body);
  }
  const bool ok = reply.outcome == extender::ReplyOutcome::kOk;
  if (ok != result->error.empty()) {
    fuzz::Violation("Error must be empty exactly when the bind is ok", input, body);
  }
  if (!ok && (!result->error.starts_with(extender::kReasonPrefix) ||
              result->error.size() <= extender::kReasonPrefix.size())) {
    fuzz::Violation("an Error must say what is wrong after \"muster: \"", input, body);
  }
}

// After the POST: the reply and the reservation agree with what `post` did.
extender::VerbReply FinishAndCheck(const extender::BindPlan& plan, const Status& post,
                                   std::string_view input) {
  fuzz::FuzzCluster& cluster = fuzz::Cluster();
  extender::VerbReply reply = cluster.pipeline.FinishBind(plan, post);
  const bool bound = post.ok() || extender::AlreadyAssignedTo(post, plan.args.node);
  if (bound != (reply.outcome == extender::ReplyOutcome::kOk)) {
    fuzz::Violation("a bind is ok exactly when its POST bound the pod: " + post.ToString(), input,
                    reply.body);
  }
  std::optional<extender::Placement> placement;
  cluster.cache.Exclusive(
      [&](extender::ClusterState& s) { placement = s.PlacementOf(plan.args.pod_uid); });
  const bool released = extender::BindPostSurelyFailed(post);
  if (released == placement.has_value()) {
    fuzz::Violation(released
                        ? "a POST that surely failed kept its reservation: " + post.ToString()
                        : "the reservation went though the pod may be bound: " + post.ToString(),
                    input, reply.body);
  }
  if (placement.has_value() && placement->node != plan.args.node) {
    fuzz::Violation("the reservation is on another node than the request's", input, reply.body);
  }
  return reply;
}

// One bind of `input`, with `post` as the POST's outcome should it come to
// one; then back to the cluster as built. True when it came to a POST.
bool BindRound(std::string_view input, const Status& post) {
  fuzz::FuzzCluster& cluster = fuzz::Cluster();
  const extender::BindPlan plan = cluster.pipeline.ReserveBind(input);
  extender::VerbReply reply;
  const bool posting = plan.action == extender::BindAction::kPost;
  if (!posting) {
    size_t assumed = 0;
    cluster.cache.Exclusive([&](extender::ClusterState& s) { assumed = s.assumed_count(); });
    if (assumed != 0) fuzz::Violation("a bind without a POST reserved capacity", input, "");
    if (!kube::DecodeExtenderBindingArgs(input).ok() &&
        (plan.action != extender::BindAction::kReject ||
         plan.outcome != extender::ReplyOutcome::kBadRequest)) {
      fuzz::Violation("a body that does not decode must be a bad_request reject", input, "");
    }
    reply = cluster.pipeline.AnswerBind(plan);
  } else {
    CheckPostPlan(plan, input);
    reply = FinishAndCheck(plan, post, input);
  }
  CheckReply(reply, input);
  cluster.cache.Exclusive([&](extender::ClusterState& s) {
    if (posting) s.Forget(plan.args.pod_uid);
    const Status accounting = s.CheckAccounting();
    if (!accounting.ok()) fuzz::Violation(accounting.ToString(), input, reply.body);
    if (s.assumed_count() != 0) fuzz::Violation("a reservation outlived its round", input, "");
  });
  return posting;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::AsText(data, size);
  // Every round decides alike (each starts from the cluster as built), so a
  // plan that POSTs meets every outcome and any other stops after one round.
  StatusOr<kube::ExtenderBindingArgs> args = kube::DecodeExtenderBindingArgs(input);
  for (const Status& post : FakePosts(args.ok() ? args->node : "")) {
    if (!BindRound(input, post)) break;
  }
  return 0;
}
