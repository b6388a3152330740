#include "extender/gang_write_sender.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include "kube/client/client.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"

namespace muster::extender {
namespace {

using kube::PatchType;

// Logs a failed write; true when it did not fail.
bool Logged(const StatusOr<std::string>& r, std::string_view what, std::string_view ns,
            std::string_view name) {
  if (r.ok()) return true;
  spdlog::warn("{} {}/{}: {}", what, ns, name, r.status().ToString());
  return false;
}

struct Sender {
  kube::Client& client;

  bool operator()(const LiftGate& w) const {
    return Logged(
        client.Patch(kube::ResourceRef::Core("pods", w.namespace_, w.name), PatchType::kJson,
                     kube::EncodeLiftGatePatch(w.gate_index, kGangSchedulingGate,
                                               w.pin ? w.node : std::string_view())),
        "gang: waking pod", w.namespace_, w.name);
  }
  bool operator()(const AnnotateReservedNode& w) const {
    return Logged(
        client.Patch(
            kube::ResourceRef::Core("pods", w.namespace_, w.name), PatchType::kMerge,
            kube::EncodeAnnotationsPatch({{std::string(kAnnotationReservedNode), w.node}})),
        "gang: waking pod", w.namespace_, w.name);
  }
  bool operator()(const PodGroupStatusWrite& w) const {
    return Logged(client.Patch(kube::PodGroupsRef().WithNamespace(w.namespace_).WithName(w.name),
                               PatchType::kMerge, kube::EncodePodGroupStatusPatch(w.status)),
                  "gang: status of PodGroup", w.namespace_, w.name);
  }
  bool operator()(const AnswerBrokenPodGroup& w) const {
    StatusOr<std::string> r = client.Patch(
        kube::PodGroupsRef().WithNamespace(w.namespace_).WithName(w.name), PatchType::kMerge,
        kube::EncodePodGroupConditionsPatch(w.phase, {w.condition}));
    // A PodGroup deleted meanwhile needs no answer.
    if (!r.ok() && r.status().code() == StatusCode::kNotFound) return true;
    return Logged(r, "gang: answering PodGroup", w.namespace_, w.name);
  }
  bool operator()(const QueueStatusWrite& w) const {
    StatusOr<std::string> r =
        client.PatchStatus(kube::QueuesRef().WithName(w.name), PatchType::kMerge,
                           kube::EncodeQueueStatusPatch(w.status));
    if (r.ok()) return true;
    spdlog::warn("queue: status of Queue {}: {}", w.name, r.status().ToString());
    return false;
  }
  bool operator()(const CreateEvent& w) const {
    const Event& e = w.event;
    StatusOr<std::string> r =
        client.Create(kube::ResourceRef::Core("events", e.meta.namespace_), kube::EncodeEvent(e));
    if (r.ok()) return true;
    spdlog::warn("gang: event {}: {}", e.reason, r.status().ToString());
    return false;
  }
  bool operator()(const EvictPod& w) const {
    const Eviction eviction{.meta = {.name = w.name, .namespace_ = w.namespace_},
                            .precondition_uid = w.uid};
    return Logged(client.Evict(w.namespace_, w.name, kube::EncodeEviction(eviction)),
                  "gang: evicting", w.namespace_, w.name);
  }
};

}  // namespace

bool SendGangWrite(kube::Client& client, const GangWrite& write) {
  return std::visit(Sender{client}, write);
}

base::WriteExecutor::Write ToExecutorWrite(GangWrite write,
                                           std::function<bool(const GangWrite&)> send) {
  WriteSlot slot = SlotOf(write);
  return {slot.rank, std::move(slot.key),
          [write = std::move(write), send = std::move(send)] { return send(write); }};
}

}  // namespace muster::extender
