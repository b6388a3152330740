#include "extender/pod_webhook.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "base/guarded_server.h"
#include "base/http_serving.h"
#include "kube/client/pem.h"
#include "kube/codec/core_codec.h"
#include "model/pod_group.h"

namespace muster::extender {
namespace {

PodAdmission Pass(std::string why) { return {.gate = false, .why = std::move(why)}; }

}  // namespace

PodAdmission AdmitPod(const kube::AdmissionRequest& request,
                      const std::vector<std::string>& gang_schedulers) {
  if (request.operation != "CREATE" || !request.pod.has_value()) {
    return Pass("not a pod being created");
  }
  const Pod& pod = *request.pod;
  if (std::ranges::find(gang_schedulers, pod.spec.scheduler_name) == gang_schedulers.end()) {
    return Pass("scheduler \"" + pod.spec.scheduler_name + "\" is not muster's");
  }
  // Kubernetes' own PodGroup wins over a Volcano one (GroupOfPod).
  if (!pod.spec.scheduling_group.empty()) return Pass("joins Kubernetes' PodGroup");
  const std::string group = pod.GroupName();
  if (group.empty()) return Pass("names no Volcano PodGroup");
  if (!pod.spec.node_name.empty()) return Pass("bound at creation to " + pod.spec.node_name);
  if (GangGateIndex(pod.spec.scheduling_gates).has_value()) return Pass("gated already");
  return {.gate = true, .why = "member of PodGroup " + group};
}

kube::AdmissionResponse AdmissionReply(const kube::AdmissionRequest& request,
                                       const PodAdmission& admission) {
  kube::AdmissionResponse reply{.uid = request.uid};
  if (!admission.gate) return reply;
  std::vector<std::string> gates = request.pod->spec.scheduling_gates;
  gates.emplace_back(kGangSchedulingGate);
  reply.patch_base64 = kube::EncodeBase64(kube::EncodeSchedulingGatesPatch(gates));
  return reply;
}

PodWebhook::PodWebhook(PodWebhookOptions options, std::vector<std::string> gang_schedulers,
                       ExtenderMetrics* metrics)
    : options_(std::move(options)),
      gang_schedulers_(std::move(gang_schedulers)),
      metrics_(metrics) {}

PodWebhook::~PodWebhook() { Stop(); }

Status PodWebhook::Start() {
  http_ = base::NewGuardedTlsServer({.threads = std::max(1, options_.threads)}, options_.cert_path,
                                    options_.key_path, "");
  if (!http_->is_valid()) {
    return Status(StatusCode::kInvalidArgument,
                  "webhook: cannot load the TLS certificate or key (" + options_.cert_path + ", " +
                      options_.key_path + ")");
  }
  // Without TCP_NODELAY every reply waited on the API server's delayed ACK:
  // 40 ms per pod created, 200 pods took 9.7 s instead of 1.
  http_->set_tcp_nodelay(true);
  base::ReuseAddressOnly(*http_);
  http_->Post(options_.path, [this](const httplib::Request& req, httplib::Response& res) {
    auto [status, body] = Handle(req.body);
    res.status = status;
    res.set_content(std::move(body), status == 200 ? "application/json" : "text/plain");
  });
  port_ = base::BindPort(*http_, options_.listen_address, options_.port);
  if (port_ <= 0) {
    return Status(StatusCode::kUnavailable,
                  "webhook: " + base::CannotListenMessage(options_.listen_address, options_.port));
  }
  listener_.Start(http_.get());
  return Status::Ok();
}

void PodWebhook::Stop() { listener_.Stop(); }

std::pair<int, std::string> PodWebhook::Handle(const std::string& body) {
  StatusOr<kube::AdmissionRequest> request = kube::DecodeAdmissionReview(body);
  if (!request.ok()) {
    metrics_->CountWebhookPod("bad_request");
    return {400, request.status().ToString() + "\n"};
  }
  const PodAdmission admission = AdmitPod(*request, gang_schedulers_);
  metrics_->CountWebhookPod(admission.gate ? "gated" : "passed");
  if (request->pod.has_value()) {
    spdlog::debug("webhook: pod {}/{}: {} ({})", request->namespace_, request->pod->meta.name,
                  admission.gate ? "gated" : "passed", admission.why);
  }
  return {200, kube::EncodeAdmissionReview(AdmissionReply(*request, admission))};
}

}  // namespace muster::extender
