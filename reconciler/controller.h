// JobController: the reconciler's I/O around the pure lifecycle
// (lifecycle.h). Informers on Volcano Jobs, on the pods they own (label
// volcano.sh/job-name) and on PodGroups turn every change into a Request
// queued on its job; worker threads take one job at a time, build its
// snapshot, ask Reconcile() for a Plan and carry it out.
//
// Crash safety - the reconciler may be killed at any point:
//   - every object has a deterministic name (pods <job>-<task>-<i>, PodGroup
//     <job>-<uid>, plugin objects <job>, <job>-svc, <job>-ssh), so a create
//     repeated after a restart answers AlreadyExists and is ignored;
//   - the status is written first, with the Job's resourceVersion as a
//     precondition, so a plan made from a stale Job fails (409) and is made
//     again from a fresh GET instead of overwriting newer state;
//   - pods to kill are marked volcano.sh/controller-out-of-sync before the
//     status write: a marked pod raises no event again, and a sync deletes
//     marked pods and live pods of an older job version;
//   - a status change of the pod counters alone, and a new Job's first
//     status, wait up to 2 s (controller.cc kStatusCoalesce) to be
//     written together with what follows; phase, version and retry changes
//     of a started Job, and whatever an action did, are written at once
//     (lifecycle.h StatusWriteOf);
//   - the job's state lives in the Job's status only; the controller keeps
//     just short-lived "expectations" (creates and deletes not yet seen by
//     the informers) so a sync racing its own writes does not repeat them.
//
// A Job that fails validation (job_admission.h) creates nothing: its status
// becomes Failed with reason InvalidSpec and the message naming the field,
// and a Warning Event says the same.
//
// GPU sharing (gpu_fraction.h): a task template's share of one GPU is built
// into its pods per options.pods.gpu_fraction, and the PodGroup's
// minResources count the pods so built (gpu_fraction.h JobAsBuilt). A new
// Job that asks GPU memory (vGPU memory, or a share in vgpu mode) waits
// until the Node informer (cluster_gpus.h, nodes seen as one number each)
// has listed the nodes, then is refused like an invalid one when no GPU of
// the cluster has that much memory, or none has a known memory
// (CheckGpuMemory) - checked once, as the queue is: a Job already admitted
// keeps running whatever the nodes become. Other Jobs never wait for the
// nodes (a reconciler without the nodes permission still runs them). A Job
// still waiting after 10 s (controller.cc kNodesWaitBound) gets one Warning
// Event, reason WaitingForNodes, saying why - the informer's last list error
// ("listing nodes failed: ... HTTP 403 Forbidden ... (the reconciler's
// ClusterRole needs list and watch on nodes)") - and is not failed: it is
// admitted as above once the nodes list. Once per Job per process (a
// restart may say it again).
//
// A Job that does not even decode (the CRD accepts it - a pod template
// keeps unknown fields, a duration is a plain string - but muster's codec
// refuses it, kube::UndecodableObject) is answered the same way from what
// the informer kept of it: a new one becomes Failed with reason InvalidSpec,
// the message starting with the JSON path of the first bad field ("spec.
// tasks[0].template.spec.containers[0].resources.requests.cpu: quantity
// \"1.2.3\" ..."), a Failed condition and one Warning Event; one that had
// started (a phase, not finished) is held like a refused update: reason
// UpdateRefused and that message, its phase and pods left as they are,
// nothing created, killed or run until its spec decodes again. The write is
// a merge patch of status.state (and conditions) alone, with the Job's
// resourceVersion as a precondition, made once: not again while the status
// says it, nor twice per process for the same uid and message.
//
// Updates (job_admission.h ValidateJobUpdate, Volcano's update rules): the
// controller acts on the last spec it accepted. It keeps that spec in memory
// (per Job, by uid) and its digest in the Job's status
// (controlledResources["muster.io/accepted-spec"], AcceptedSpec), written
// with the status it acts on. A spec change that breaks the rules is not
// acted on: reason UpdateRefused and the message naming the field in
// status.state, one Warning Event, and the Job goes on with the accepted
// spec - or, when this process has not seen that spec itself (a forbidden
// change made while it was down: the digest can tell the change, not undo
// it), the Job is held: nothing is created, killed or run for it until its
// spec is back within the rules. An accepted change is acted on at once:
// replicas scale the pods, minimums the PodGroup, and the svc plugin's
// hosts ConfigMap is rewritten (before the status records the new digest,
// so a crash in between rewrites it again).
//
// Thread-safety: Start/Stop from one thread; everything else is internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/informer.h"
#include "model/clock.h"
#include "model/job.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/queue.h"
#include "reconciler/cluster_gpus.h"
#include "reconciler/job_admission.h"
#include "reconciler/lifecycle.h"
#include "reconciler/metrics.h"
#include "reconciler/pod_builder.h"

namespace muster::reconciler {

struct ControllerOptions {
  std::string default_scheduler = "volcano";  // a Job without schedulerName
  PodBuildOptions pods;                       // which schedulers' pods are gated
  int workers = 16;                           // jobs synced in parallel
  int writes_per_sync = 16;                   // API writes in flight per sync
  // The Queue named `name` as last seen (queue_controller.h GetQueue), or
  // null. A new Job whose queue is not Open is refused like an invalid one
  // (queue_state.h AdmitToQueue). Unset: no such check.
  std::function<std::shared_ptr<const Queue>(const std::string& name)> queue_of;
  // The names of the queues whose spec.parent is `name`: a new Job in a
  // queue with children is refused (only leaves take Jobs). Unset: no check.
  std::function<std::vector<std::string>(const std::string& name)> children_of;
};

class JobController {
 public:
  // `client` and `metrics` must outlive this.
  JobController(kube::Client* client, const Clock& clock, ControllerOptions options,
                ReconcilerMetrics* metrics);
  ~JobController();
  JobController(const JobController&) = delete;
  JobController& operator=(const JobController&) = delete;

  void Start();
  void Stop();
  bool Synced() const;
  // Jobs by phase, for the metrics gauge (a Job that does not decode by
  // the phase its status holds).
  std::map<std::string, int64_t> JobsByPhase() const;
  // The objects of its watches that do not decode, by kind ("jobs", "pods",
  // "podgroups"), for the undecodable-objects gauge.
  std::map<std::string, std::vector<std::shared_ptr<const kube::UndecodableObject>>> Undecodable()
      const;
  // For Commands (queue_controller.h): the Job as cached (null: absent),
  // and a request - an explicit action - queued on it like any other.
  std::shared_ptr<const Job> CachedJob(const std::string& job_key) const {
    return jobs_.Get(job_key);
  }
  void Submit(const std::string& job_key, Request request) { Enqueue(job_key, std::move(request)); }

 private:
  struct Work;
  void Wire();
  // The keys of the pods seen for the Job, a copy taken under mu_.
  std::vector<std::string> PodKeysOf(const std::string& job_key);
  void RaisePodEvents(const std::string& job_key, const Job& job, const Pod* before,
                      const Pod* after);
  void Enqueue(const std::string& job_key, Request request);
  void EnqueueAt(const std::string& job_key, Request request, Time due);
  void WorkerLoop();
  void TimerLoop();
  // What the update rules make of a Job's spec (job_admission.h).
  struct SpecVerdict {
    enum class Kind {
      kAccepted,  // act on the Job's own spec
      kRefused,   // act on the last accepted spec, swapped into the Job
      kHold,      // refused, the accepted spec is not in memory: act on nothing
      kInvalid,   // a Job never accepted that fails ValidateJob
    };
    Kind kind = Kind::kAccepted;
    Status why;           // kRefused, kHold, kInvalid
    AcceptedSpec record;  // the accepted spec's digest, for the status
  };
  // Judges `job` (defaulted) against its last accepted spec; for kRefused,
  // replaces job->spec with it.
  SpecVerdict JudgeSpec(Job* job);
  SpecVerdict Accept(const Job& job);
  // Prepares `job` for a sync: defaults, update rules. False: nothing to
  // sync (invalid, or held; already reported).
  bool Admit(Job* job, SpecVerdict* verdict);
  // The Warning Event of a refused update, once per refusal.
  void ReportRefused(const Job& job, const Status& why);
  void Sync(const std::string& job_key, std::vector<Request> requests);
  // `recorded` (may be null): set once the plan's status - the action's
  // effect - is written (or needs no write); a failure before that leaves
  // the request to be retried whole.
  Status SyncOnce(const Job& job, const SpecVerdict& verdict, const Request& request,
                  bool* conflict, bool* recorded = nullptr);
  // `rewrite_hosts`: patch the svc hosts ConfigMap before the status write.
  Status Apply(const Job& job, const Plan& plan, bool rewrite_hosts, bool* recorded = nullptr);
  Status RewriteHostsConfigMap(const Job& job);
  Status WriteStatus(const Job& job, const JobStatus& status);
  // True when a counters-only status change may be written now; else `due`
  // is when it may.
  bool StatusWriteDue(const Job& job, Time* due);
  struct PodRef {
    std::string name;
    std::string uid;
  };
  void KillPods(const Job& job, const std::vector<PodRef>& pods);
  // The first failure (all are tried; one Warning Event says how many).
  Status CreatePods(const Job& job, const std::vector<PodSlot>& slots);
  Status ApplyPodGroup(const Job& job, const Plan& plan);
  Status EnsureJobObjects(const Job& job);
  void RecordEvent(const Job& job, const JobEventRecord& event);
  void RejectInvalid(const Job& job, const Status& why);
  // The answer to a Job whose current version does not decode.
  void AnswerUndecodable(const kube::UndecodableObject& job);
  JobSnapshot Snapshot(const Job& job, std::vector<std::shared_ptr<const Pod>>* pods,
                       std::shared_ptr<const PodGroup>* pod_group);
  std::string PodGroupKey(const Job& job) const;
  // Volcano's admission of a new Job by what the cluster has (its queue,
  // GPU memory). False: refused (reported) or put off (requeued).
  bool AdmitNew(const Job& job);
  // Notes that `job` waits for the first list of nodes; past
  // kNodesWaitBound, its WaitingForNodes Event (once per Job).
  void WaitForNodes(const Job& job);

  kube::Client* const client_;
  const Clock& clock_;
  const ControllerOptions options_;
  ReconcilerMetrics* const metrics_;

  kube::Informer<Job> jobs_;
  kube::Informer<Pod> pods_;
  kube::Informer<PodGroup> groups_;
  ClusterGpuMemory gpu_memory_;

  mutable std::mutex mu_;
  // Workers wait on `work_cv_` for `ready_`, the timer on `timer_cv_` for
  // stopping_ only: with one condition variable a notify_one meant for a
  // worker could wake the timer instead and be lost, leaving a Job in
  // `ready_` with every worker asleep until another Job's event.
  std::condition_variable work_cv_;
  std::condition_variable timer_cv_;
  bool stopping_ = false;
  // Requests waiting per job; `ready_` holds each waiting key once, in
  // arrival order; a key being synced is in `busy_` and not handed out again.
  std::map<std::string, std::vector<Request>> waiting_;
  std::deque<std::string> ready_;
  std::set<std::string> busy_;
  std::multimap<Time, std::pair<std::string, Request>> timers_;
  // job key -> pod keys, kept by the pod informer's handlers.
  std::map<std::string, std::set<std::string>> pods_by_job_;
  // Expectations: writes done but not seen by the informers yet.
  std::map<std::string, Time> created_pods_;    // pod key -> when
  std::map<std::string, Time> killed_pods_;     // pod UID -> when
  std::set<std::string> deleted_group_uids_;    // PodGroups deleted, still cached
  std::map<std::string, Time> created_groups_;  // PodGroup key -> when
  // The Job as our last status write returned it, until the informer catches up.
  std::map<std::string, std::shared_ptr<const Job>> written_jobs_;
  // job key -> our last status write (counters-only writes are coalesced).
  std::map<std::string, Time> status_written_at_;
  // Jobs whose first version's pods were all created (job-to-pods latency).
  std::set<std::string> pods_complete_;
  // job key -> the spec last accepted (defaulted), as JudgeSpec saw it.
  struct AcceptedJob {
    std::string uid;
    std::shared_ptr<const JobSpec> spec;  // shared: a sync copies the entry
    AcceptedSpec record;
    std::string refused;  // the refusal last reported (one Event each)
  };
  std::map<std::string, AcceptedJob> accepted_;
  // job key -> a new Job asking GPU memory that waits for the nodes' first
  // list (AdmitNew): since when this process saw it wait, and whether its
  // WaitingForNodes Event was recorded. Dropped once the nodes are listed
  // and it is judged, or the Job is deleted.
  struct NodesWait {
    std::string uid;
    Time since;
    bool said = false;
  };
  std::map<std::string, NodesWait> nodes_waits_;
  // job key -> uid and message of the undecodable Job answered last: the
  // answer is not written twice, even when the status cannot be read back.
  std::map<std::string, std::string> undecodable_said_;

  std::vector<std::thread> workers_;
  std::thread timer_;
};

}  // namespace muster::reconciler
