// muster's mutating admission webhook for pods: the gang gate at creation.
//
//   POST {path} (TLS; an admission.k8s.io/v1 AdmissionReview)
//     -> decode (kube/codec/admission_codec.h)
//     -> AdmitPod (pure): gate or pass
//     -> reply: allowed, with a JSONPatch adding spec.schedulingGates
//        muster.io/gang to a gated pod
//
// Why: a gang member created without the gate goes through kube-scheduler at
// once; muster's filter rejects it until its gang is reserved whole, and
// kube-scheduler retries it on every cluster event (an extender's rejection
// names no plugin, so no queueing hint narrows the retries). Two 100-pod
// gangs on 100 GPUs cost 2500 rejected scheduling cycles that way, and the
// first gang's members were bound 1.5 s apart. A gated member waits outside
// kube-scheduler's queue until the gang controller lifts the gate, which it
// does for the whole gang at once (gang.md, "Pods: gated or not"): what
// muster's reconciler does for Volcano Jobs, extended to pods users create.
//
// Which pods: CREATE of a core/v1 Pod whose schedulerName is one of muster's
// gang schedulers, that names a Volcano PodGroup (Pod::GroupName), is not
// bound (spec.nodeName unset) and does not carry muster.io/gang yet. Every
// other pod passes unchanged: pods of other schedulers (the registration's
// matchConditions keep them from calling at all, manifests/webhook),
// plain pods of the volcano scheduler (no PodGroup: they are scheduled as
// they come), pods joining Kubernetes' own PodGroups (spec.schedulingGroup:
// the upstream plugins hold them). The webhook never refuses a pod: the
// registration's failurePolicy is Ignore, so a pod created while muster is
// down is admitted ungated and still scheduled as a gang, by filter.
//
// Thread-safety: Start() and Stop() from one owner thread; requests run on
// the server's worker threads (the metrics are thread-safe).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/http_serving.h"
#include "extender/metrics.h"
#include "kube/codec/admission_codec.h"
#include "model/status.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace muster::extender {

struct PodAdmission {
  bool gate = false;
  std::string why;  // for the debug log: why the pod is gated or passed
};

// plan: gate the pod of `request` or let it pass (see the top of this file).
PodAdmission AdmitPod(const kube::AdmissionRequest& request,
                      const std::vector<std::string>& gang_schedulers);

// The reply to `request`, with the gate's patch when `admission.gate`.
kube::AdmissionResponse AdmissionReply(const kube::AdmissionRequest& request,
                                       const PodAdmission& admission);

struct PodWebhookOptions {
  std::string listen_address = "0.0.0.0";
  int port = 0;  // 0: an ephemeral port (tests), see port()
  std::string path = "/mutate-pods";
  // The serving certificate and key (PEM); the registration's caBundle must
  // hold the CA that signed it. REQUIRES: both set.
  std::string cert_path;
  std::string key_path;
  int threads = 4;
};

class PodWebhook {
 public:
  // `metrics` must outlive the webhook.
  PodWebhook(PodWebhookOptions options, std::vector<std::string> gang_schedulers,
             ExtenderMetrics* metrics);
  ~PodWebhook();  // Stop()s
  PodWebhook(const PodWebhook&) = delete;
  PodWebhook& operator=(const PodWebhook&) = delete;

  // Loads the certificate, binds and serves on a thread. InvalidArgument
  // when the certificate or key does not load, Unavailable when the address
  // cannot be bound. REQUIRES: called at most once.
  Status Start();
  void Stop();  // idempotent
  int port() const { return port_; }

 private:
  // The HTTP status and body for one request body.
  std::pair<int, std::string> Handle(const std::string& body);

  const PodWebhookOptions options_;
  const std::vector<std::string> gang_schedulers_;
  ExtenderMetrics* const metrics_;
  std::unique_ptr<httplib::Server> http_;
  base::ListenThread listener_;  // after http_: stopped before the server goes
  int port_ = 0;
};

}  // namespace muster::extender
