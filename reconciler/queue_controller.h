// QueueController: the reconciler's I/O for Commands (commands.h) and queue
// state (queue_state.h) - Volcano's queue controller plus the Command half
// of its job controller (volcano-sh/volcano pkg/controllers/queue/*.go,
// pkg/controllers/job/job_controller_handler.go processNextCommand).
//
// Informers on Commands, Queues and PodGroups feed one worker thread:
//   - a Command is planned (PlanCommand) and its target looked up (the
//     informers' caches, then a GET: a target created a moment ago is
//     waited for, not refused). One that cannot run gets a Warning Event
//     (reason InvalidCommand, the message naming the field) on the Command
//     and, when it exists, on its target, and is deleted. One that can is
//     deleted first (UID precondition) and only then run, as Volcano does:
//     at most once - a crash between the delete and the run loses it, never
//     runs it twice. A job Command becomes an explicit action on the job
//     (lifecycle.h Request::action) with a Normal CommandIssued Event on the
//     Job; a queue Command an OpenQueue / CloseQueue of the queue;
//   - a queue is synced (SyncQueue) when it appears or its state changes,
//     when a PodGroup of it appears, changes phase or goes, and every
//     resync period; the state is written when NextQueueState differs, as a
//     merge patch of status.state alone on the status subresource, so the
//     extender's allocated and counters are never overwritten. A change is
//     told by a Normal Event on the Queue.
// Commands wait until the Job and Queue informers have listed, so none is
// refused for a target not listed yet after a restart.
//
// Thread-safety: Start/Stop from one thread; GetQueue from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/informer.h"
#include "model/clock.h"
#include "model/command.h"
#include "model/job.h"
#include "model/pod_group.h"
#include "model/queue.h"
#include "reconciler/commands.h"
#include "reconciler/lifecycle.h"
#include "reconciler/metrics.h"

namespace muster::reconciler {

// What job Commands need of the job controller (controller.h); app.cc
// wires it to JobController::Synced, CachedJob and Submit.
struct JobCommandHooks {
  std::function<bool()> synced;  // the Job informer has listed
  std::function<std::shared_ptr<const Job>(const std::string& job_key)> job;  // null: absent
  std::function<void(const std::string& job_key, Request request)> submit;
};

struct QueueControllerOptions {
  Duration resync_period = std::chrono::seconds(30);
  Duration retry_delay = std::chrono::seconds(1);
};

class QueueController {
 public:
  // `client`, `clock` and `metrics` must outlive this.
  QueueController(kube::Client* client, const Clock& clock, ReconcilerMetrics* metrics,
                  JobCommandHooks jobs, QueueControllerOptions options = {});
  ~QueueController();
  QueueController(const QueueController&) = delete;
  QueueController& operator=(const QueueController&) = delete;

  // Start() = StartWatching() + StartWorking(), as JobController's.
  void Start();
  void StartWatching();
  // The worker. REQUIRES: after StartWatching(), once.
  void StartWorking();
  void Stop();
  bool Synced() const;
  // The queue as last known: the informer's copy, or the one our last state
  // write returned while the informer has not caught up. Null when unknown.
  std::shared_ptr<const Queue> GetQueue(const std::string& name) const;
  // The names of the queues whose spec.parent is `name`, sorted.
  std::vector<std::string> ChildQueues(const std::string& name) const;
  // The objects of its Queue and Command watches that do not decode, by
  // kind ("queues", "commands"), for the undecodable-objects gauge.
  std::map<std::string, std::vector<std::shared_ptr<const kube::UndecodableObject>>> Undecodable()
      const;

 private:
  // One unit of work: a Command (by key) or a queue with the actions to run.
  struct Item {
    bool command = false;
    std::string key;     // Command "namespace/name", or the queue's name
    std::string action;  // queues: kSyncQueue, kOpenQueue, kCloseQueue
  };
  void Wire();
  // A PodGroup added (`before` null), changed or deleted (`after` null):
  // moves it between the queues' indexes and asks a sync of the queue it
  // left and of its queue when its phase, deletion or queue changed.
  void OnPodGroupChange(const PodGroup* before, const PodGroup* after);
  // Asks a kSyncQueue of `queue`.
  void AddQueueSync(const std::string& queue);
  void Add(Item item);
  void AddAt(Item item, Time due);
  void WorkerLoop();
  void RunCommand(const std::string& key);
  void SyncQueue(const std::string& name, const std::vector<std::string>& actions);
  // The target's metadata: from the caches, else a GET. *cached is false
  // when only the GET found it. An error other than NotFound is returned.
  Status LookUpTarget(const CommandPlan& plan, std::shared_ptr<const ObjectMeta>* meta,
                      bool* cached);
  void Refuse(const Command& command, const Status& why, const ObjectMeta* target,
              const CommandPlan* plan);
  Status DeleteCommand(const Command& command);
  int Unfinished(const std::string& queue) const;
  void RecordEvent(const ObjectReference& object, std::string_view type, std::string_view reason,
                   std::string message);

  kube::Client* const client_;
  const Clock& clock_;
  ReconcilerMetrics* const metrics_;
  const JobCommandHooks jobs_;
  const QueueControllerOptions options_;

  kube::Informer<Command> commands_;
  kube::Informer<Queue> queues_;
  kube::Informer<PodGroup> groups_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  // Waiting work: each Command key and queue name once, in arrival order;
  // a queue's actions in order (repeated syncs collapse).
  std::deque<Item> ready_;
  std::set<std::string> waiting_commands_;
  std::map<std::string, std::vector<std::string>> waiting_queues_;
  std::multimap<Time, Item> timers_;
  // queue name -> keys of its PodGroups; PodGroup key -> its queue.
  std::map<std::string, std::set<std::string>> groups_by_queue_;
  std::map<std::string, std::string> queue_of_group_;
  // Queues as our last state write returned them (GetQueue).
  std::map<std::string, std::shared_ptr<const Queue>> written_;
  // UIDs of Commands refused and told, until their delete is seen.
  std::set<std::string> refused_;

  std::thread worker_;
};

}  // namespace muster::reconciler
