// QueueGate: the queue's say over pods no gang controller pass releases.
//
// A gang of minMember > 1 starts only when the gang controller reserves it
// whole, in queue order and within its queue's capability (queue_step.h).
// Two kinds of pods go straight to kube-scheduler instead, with no gate to
// lift: plain pods of a served scheduler (Deployments, ReplicaSets, Argo
// steps: each is in Volcano's PodGroup of one, Pod::ImplicitGroupName) and
// the ungated members of a PodGroup of minMember <= 1 (Spark's driver and
// executors). Their queue decides at filter time, here:
//
//  - The gang controller publishes, after every pass, what each queue had
//    left then (Publish): whether it exists and is Open, the capability left
//    along its path, what it holds and deserves, and whether another queue
//    below its deserved share is waiting for capacity.
//  - Filter asks Admit() for each such pod: it is admitted when its queue
//    exists and is Open, its request fits the capability left in every queue
//    of the path, and - while a queue owed capacity waits - its own queue
//    stays within its deserved share (idle capacity is lent only when no
//    queue owed it wants it, as the gang pass lends it). An admitted pod is
//    charged to its queues at once, so the next filter sees the room it
//    took; the charge ends once a pass sees the pod placed (its request then
//    counts in what the queue holds) or gone, or after `charge_ttl`.
//  - A pod turned away is remembered as waiting. The gang controller plans
//    waiting pods like any gang of one (in queue order, within capability)
//    and wakes each once it reserves it a node; filter then pins it there.
//    Pods admitted at once cost no API write.
//
// Restart safety: nothing here outlives the process, and nothing needs to:
// what queues hold is read from the pods; a restarted extender turns pods
// away until its first pass publishes, and plans those.
//
// Thread-safety: not thread-safe (a plain value): ClusterState owns it and
// ClusterCache's mutex guards both.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/resources.h"
#include "model/time.h"

namespace muster::extender {

// Wait reason of a pod filtered before the first pass published the queues.
inline constexpr std::string_view kWaitQueuesUnread = "QueuesNotRead";

// One queue as the last pass left it.
struct QueueRoom {
  bool open = true;
  // The queue, then its ancestors, up to (not including) the root.
  std::vector<std::string> path;
  // Capability left (only the resources the capability names are limited);
  // unset: none.
  std::optional<Resources> room;
  Resources allocated;  // held, own and descendants' (requests, no pods)
  Resources deserved;
  // A queue below its deserved share whose gang waits for capacity ("" for
  // none): this queue may not go past its own deserved share meanwhile.
  std::string owed_waiting;
};

// What the gang controller publishes after a pass.
struct QueueBoard {
  std::map<std::string, QueueRoom, std::less<>> queues;  // every existing queue (and "default")
  // Queues that exist but do not decode: what a pod naming one is told.
  std::map<std::string, std::string, std::less<>> broken;
  Time at;  // when the pass read the cluster
};

// A pod asking its queue (filter).
struct QueueAsk {
  std::string pod_uid;
  std::string queue;  // the queue its PodGroup names ("default" for none)
  Resources request;  // its effective request; "pods" is ignored
};

// The queue's answer: admitted, or why not (for the pod's FailedScheduling
// event and PodScheduled condition).
struct QueueAnswer {
  bool admitted = true;
  std::string_view code;  // kWaitQueue* of queue_step.h / gang.h
  std::string message;
  friend bool operator==(const QueueAnswer&, const QueueAnswer&) = default;
};

class QueueGate {
 public:
  // Replaces the board. `placed(uid)` tells whether the pass saw the pod
  // placed (reserved or bound) or finished at board.at: its charge ends
  // (what the queue holds includes it now, or it holds nothing), and so does
  // its wait. A pod the pass did not see (the watch may lag behind the
  // filter request, which carries kube-scheduler's copy) keeps both; charges
  // older than `ttl` end (the pod never bound: kube-scheduler gave up on it
  // after filter).
  template <typename Placed>
  void Publish(QueueBoard board, Placed placed, Duration ttl);
  // The pod is gone (deleted): its charge and wait end.
  void Forget(std::string_view pod_uid);
  // Whether the pod may start now (see the header comment). Idempotent: a
  // pod already charged is admitted again without a second charge.
  QueueAnswer Admit(const QueueAsk& ask, Time now);
  // Remembers a pod another rule turned away (its PodGroup awaits
  // admission): the gang controller plans it once admitted.
  void MarkWaiting(std::string_view pod_uid, Time now);

  bool published() const { return published_; }
  // The pods Publish would ask `placed` about (those holding a charge or
  // waiting), by uid, sorted: the only pods a pass need tell it about.
  std::vector<std::string> TrackedPods() const;
  // Pods turned away since they were last placed, by uid: the gang
  // controller plans them.
  const std::map<std::string, Time, std::less<>>& waiting() const { return waiting_; }
  // What admitted pods not yet seen placed hold, per queue (own and
  // descendants').
  const std::map<std::string, Resources, std::less<>>& charged() const { return charged_; }

 private:
  struct Charge {
    std::vector<std::string> path;
    Resources request;
    Time at;
  };
  void Uncharge(const Charge& charge);
  std::string Shortfall(const QueueRoom& queue, const Resources& need) const;

  bool published_ = false;
  QueueBoard board_;
  std::map<std::string, Charge, std::less<>> charges_;  // by pod uid
  std::map<std::string, Resources, std::less<>> charged_;
  std::map<std::string, Time, std::less<>> waiting_;
};

template <typename Placed>
void QueueGate::Publish(QueueBoard board, Placed placed, Duration ttl) {
  const Time at = board.at;
  board_ = std::move(board);
  published_ = true;
  for (auto it = charges_.begin(); it != charges_.end();) {
    const bool ends = (it->second.at <= at && placed(it->first)) || at - it->second.at > ttl;
    if (!ends) {
      ++it;
      continue;
    }
    Uncharge(it->second);
    it = charges_.erase(it);
  }
  std::erase_if(waiting_,
                [&](const auto& entry) { return entry.second <= at && placed(entry.first); });
}

}  // namespace muster::extender
