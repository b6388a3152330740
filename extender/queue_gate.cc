#include "extender/queue_gate.h"

#include <algorithm>
#include <utility>

#include "extender/queue_step.h"
#include "gang/gang.h"
#include "model/pod.h"
#include "model/quantity.h"

namespace muster::extender {

void QueueGate::MarkWaiting(std::string_view pod_uid, Time now) {
  waiting_.try_emplace(std::string(pod_uid), now);
}

std::vector<std::string> QueueGate::TrackedPods() const {
  std::vector<std::string> uids;
  uids.reserve(charges_.size() + waiting_.size());
  for (const auto& [uid, charge] : charges_) uids.push_back(uid);
  for (const auto& [uid, since] : waiting_) uids.push_back(uid);
  std::ranges::sort(uids);
  uids.erase(std::unique(uids.begin(), uids.end()), uids.end());
  return uids;
}

void QueueGate::Forget(std::string_view pod_uid) {
  if (auto it = charges_.find(pod_uid); it != charges_.end()) {
    Uncharge(it->second);
    charges_.erase(it);
  }
  if (auto it = waiting_.find(pod_uid); it != waiting_.end()) waiting_.erase(it);
}

void QueueGate::Uncharge(const Charge& charge) {
  for (const std::string& name : charge.path) {
    auto it = charged_.find(name);
    if (it == charged_.end()) continue;
    it->second -= charge.request;
    if (it->second.IsZero()) charged_.erase(it);
  }
}

// Why `need` does not fit the capability `queue` has left, its admitted
// pods' charges included ("" when it fits).
std::string QueueGate::Shortfall(const QueueRoom& queue, const Resources& need) const {
  for (const std::string& name : queue.path) {
    const auto at = board_.queues.find(name);
    if (at == board_.queues.end() || !at->second.room) continue;
    Resources left = *at->second.room;
    if (auto charged = charged_.find(name); charged != charged_.end()) {
      for (const auto& [resource, amount] : charged->second.entries()) {
        if (left.Has(resource)) left.Set(resource, left.Get(resource) - amount);
      }
    }
    const std::vector<std::string> over = need.Exceeding(left, /*absent_is_unlimited=*/true);
    if (over.empty()) continue;
    std::string message = "queue " + name + " is at its capability: needs";
    for (const std::string& r : over) {
      message += " " + r + "=" + FormatResourceQuantity(r, need.Get(r)) + " (" +
                 FormatResourceQuantity(r, std::max<int64_t>(left.Get(r), 0)) + " left)";
    }
    return message;
  }
  return "";
}

QueueAnswer QueueGate::Admit(const QueueAsk& ask, Time now) {
  if (charges_.contains(ask.pod_uid)) return QueueAnswer{};
  auto refuse = [&](std::string_view code, std::string message) {
    MarkWaiting(ask.pod_uid, now);
    return QueueAnswer{.admitted = false, .code = code, .message = std::move(message)};
  };
  if (!published_) {
    return refuse(kWaitQueuesUnread,
                  "muster has not read the queues yet: the pod is planned with its first pass");
  }
  const auto it = board_.queues.find(ask.queue);
  if (const auto broken = board_.broken.find(ask.queue);
      it == board_.queues.end() && broken != board_.broken.end()) {
    return refuse(kWaitQueueNotFound, broken->second);
  }
  if (it == board_.queues.end()) {
    return refuse(kWaitQueueNotFound, "queue \"" + ask.queue +
                                          "\" does not exist: create it, or name another in the " +
                                          std::string(kQueueNameAnnotation) + " annotation");
  }
  const QueueRoom& queue = it->second;
  if (!queue.open) {
    return refuse(kWaitQueueClosed,
                  "queue \"" + ask.queue + "\" is not Open: it admits no new pods");
  }
  Resources need = ask.request;
  need.Erase(kPods);
  if (std::string full = Shortfall(queue, need); !full.empty()) {
    return refuse(gang::kWaitQueueCapability, std::move(full));
  }
  if (!queue.owed_waiting.empty() && queue.owed_waiting != ask.queue) {
    Resources held = queue.allocated + need;
    if (auto charged = charged_.find(ask.queue); charged != charged_.end()) {
      held += charged->second;
    }
    if (held.DominantShare(queue.deserved) > 1.0 + 1e-9) {
      return refuse(gang::kWaitQueueOverShare,
                    "queue " + ask.queue + " would go past its deserved share while queue " +
                        queue.owed_waiting + ", below its own, waits for capacity");
    }
  }
  Charge charge{.path = queue.path, .request = std::move(need), .at = now};
  for (const std::string& name : charge.path) charged_[name] += charge.request;
  charges_.insert_or_assign(ask.pod_uid, std::move(charge));
  if (auto waited = waiting_.find(ask.pod_uid); waited != waiting_.end()) waiting_.erase(waited);
  return QueueAnswer{};
}

}  // namespace muster::extender
