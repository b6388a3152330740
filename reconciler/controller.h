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
//   - the writes of one plan go in this order (Apply): pods to kill marked
//     volcano.sh/controller-out-of-sync; the plugin objects and the svc
//     hosts ConfigMap (before the status that records them); the status;
//     then the kills, the PodGroup, the pods, the Events and, past
//     ttlSecondsAfterFinished, the Job's deletion. The status is written
//     before anything that acts on it, with the Job's resourceVersion as a
//     precondition, so a plan made from a stale Job fails (409) and is made
//     again from a fresh GET (up to 3 times in a sync) instead of
//     overwriting newer state;
//   - a marked pod raises no event again, and a sync deletes marked pods
//     and live pods of an older job version; nor does a pod this process
//     is killing (its expectation), when the informer's copy lacks the mark
//     (a relist after a broken watch, a mark that failed);
//   - a status change of the pod counters alone, and a new Job's first
//     status, wait until 2 s have passed since the Job's last status write
//     (or since the first change held back) to be written together with
//     what follows (status_writer.h StatusWriter::kCoalesce); phase,
//     version and retry changes of a started Job, and whatever an action
//     did, are written at once (lifecycle.h StatusWriteOf). A new Job's
//     pods may therefore exist before its first status;
//   - the job's state lives in the Job's status only; the controller keeps
//     just short-lived "expectations" (creates and deletes not yet seen by
//     the informers, for at most 30 s) so a sync racing its own writes does
//     not repeat them.
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
// still waiting after 10 s (controller_internal.h kNodesWaitBound) gets one Warning
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
// Files: controller.cc (start, stop, the work queue), controller_informers.cc
// (the handlers), controller_sync.cc (one Job's sync and snapshot),
// controller_admission.cc (update rules, invalid and undecodable Jobs),
// controller_writes.cc (the writes of a plan), status_writer.h (the status
// writes and their coalescing window).
//
// Thread-safety: Start and Stop from one thread; Synced, JobsByPhase,
// Undecodable, CachedJob and Submit from any thread. Inside, informer
// handlers, `options.workers` sync workers and a timer thread share the
// state below under one mutex, never held across an API call; one Job is
// synced by one worker at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"
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
#include "reconciler/status_writer.h"

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

  // Start() = StartWatching() + StartWorking(). A standby replica only
  // watches (warm caches, nothing written) until it leads.
  void Start();
  void StartWatching();
  // The sync workers and the timer. REQUIRES: after StartWatching(), once.
  void StartWorking();
  void Stop() MUSTER_EXCLUDES(mu_);
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
  void Submit(const std::string& job_key, Request request) MUSTER_EXCLUDES(mu_) {
    Enqueue(job_key, std::move(request));
  }

 private:
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
  // The spec last accepted (defaulted), as JudgeSpec saw it.
  struct AcceptedJob {
    std::string uid;
    std::shared_ptr<const JobSpec> spec;  // shared: a sync copies the entry
    AcceptedSpec record;
    std::string refused;  // the refusal last reported (one Event each)
  };
  // A new Job asking GPU memory that waits for the nodes' first list
  // (AdmitNew): since when this process saw it wait, and whether its
  // WaitingForNodes Event was recorded.
  struct NodesWait {
    std::string uid;
    Time since;
    bool said = false;
  };
  // What this process remembers of one Job between its syncs, by job key.
  // Erased when the Job is deleted; every field is also checked against
  // the Job's uid where a Job re-created under the same name could be
  // mistaken for its predecessor.
  struct JobRecord {
    // The Job as our last status write returned it, until the informer
    // catches up (a sync acts on the newer of the two).
    std::shared_ptr<const Job> written;
    std::optional<AcceptedJob> accepted;
    // Dropped once the nodes are listed and the Job is judged.
    std::optional<NodesWait> nodes_wait;
    // uid and message of the undecodable Job answered last: the answer is
    // not written twice, even when the status cannot be read back. Cleared
    // once the Job decodes again.
    std::string undecodable_said;
    // The uid of the Job once its first version's pods were all created
    // (job-to-pods latency, observed once).
    std::string pods_complete_uid;
  };
  // Expectations: writes done but not seen by the informers yet, so a sync
  // racing its own writes does not repeat them. Registered before the
  // write (the informer may deliver its event before the call returns),
  // dropped when the informer shows the write, when the write fails, or
  // after kExpectationTtl (the next sync trusts the informers again).
  // Keyed by pod and PodGroup, not by Job: they outlive a deleted Job.
  struct Expectations {
    std::map<std::string, Time> created_pods;    // pod key -> when
    std::map<std::string, Time> killed_pods;     // pod UID -> when
    std::set<std::string> deleted_group_uids;    // PodGroups deleted, still cached
    std::map<std::string, Time> created_groups;  // PodGroup key -> when
    // Drops the timed expectations older than `ttl` at `now`.
    void Expire(Time now, Duration ttl);
  };
  // What the expectations add to the informers' view of one Job (Snapshot).
  struct ExpectedOfJob {
    std::vector<std::string> pod_keys;  // pods seen with the Job's label
    struct CreatedPod {
      std::string key;
      const std::string* task;  // into the Job's spec
      int index;
      Time when;
    };
    std::vector<CreatedPod> created;  // created, maybe not seen yet
    bool group_deleted = false;       // the cached PodGroup is being deleted by us
    bool group_created = false;       // created by us, maybe not seen yet
  };
  // The record of the Job `job_key`, or null when this process keeps none.
  JobRecord* FindRecord(const std::string& job_key) MUSTER_REQUIRES(mu_);

  // --- Informers (controller_informers.cc) ---------------------------------
  void Wire() MUSTER_EXCLUDES(mu_);
  void WireJobs() MUSTER_EXCLUDES(mu_);
  void WirePods() MUSTER_EXCLUDES(mu_);
  void WireGroups() MUSTER_EXCLUDES(mu_);
  void OnJobAdded(const Job& job) MUSTER_EXCLUDES(mu_);
  void OnJobDeleted(const Job& job) MUSTER_EXCLUDES(mu_);
  // `before` null: an add; `after` null: a delete.
  void OnPod(const Pod* before, const Pod* after) MUSTER_EXCLUDES(mu_);
  void OnGroup(const PodGroup* before, const PodGroup* after) MUSTER_EXCLUDES(mu_);
  // The keys of the pods seen for the Job, a copy taken under mu_.
  std::vector<std::string> PodKeysOf(const std::string& job_key) MUSTER_EXCLUDES(mu_);
  // The policy events of one pod change (PodChangeRequests), queued for its
  // Job; a pod whose kill is expected (Expectations::killed_pods) raises a
  // plain sync only. REQUIRES: `job` is the pod's Job.
  void RaisePodEvents(const std::string& job_key, const Job& job, const Pod* before,
                      const Pod* after) MUSTER_EXCLUDES(mu_);
  // Logs a PodEvicted raised for `pod`, with the deleter if it said so.
  static void LogEviction(const std::string& job_key, const Pod& pod);

  // --- Work queue (controller.cc) --------------------------------------------
  void Enqueue(const std::string& job_key, Request request) MUSTER_EXCLUDES(mu_);
  void EnqueueAt(const std::string& job_key, Request request, Time due) MUSTER_EXCLUDES(mu_);
  void WorkerLoop() MUSTER_EXCLUDES(mu_);
  // Waits for a job to sync and takes it with its requests; false once
  // stopping.
  bool TakeReady(std::string* job_key, std::vector<Request>* requests) MUSTER_EXCLUDES(mu_);
  // The sync of `job_key` is over: hands it out again if requests came.
  void FinishSync(const std::string& job_key) MUSTER_EXCLUDES(mu_);
  void TimerLoop() MUSTER_EXCLUDES(mu_);
  // Waits one tick; then `*now`, the requests due and expired expectations
  // dropped. False once stopping.
  bool NextTick(Time* now, std::vector<std::pair<std::string, Request>>* due) MUSTER_EXCLUDES(mu_);

  // --- Sync (controller_sync.cc) ---------------------------------------------
  void Sync(const std::string& job_key, std::vector<Request> requests) MUSTER_EXCLUDES(mu_);
  // The Job as cached, or as our last status write returned it when that
  // is newer; null when absent or being deleted.
  std::shared_ptr<const Job> LatestJob(const std::string& job_key) MUSTER_EXCLUDES(mu_);
  // The Job as our last status write returned it (null: none pending).
  std::shared_ptr<const Job> WrittenJob(const std::string& job_key) MUSTER_EXCLUDES(mu_);
  // Runs each request in turn on `job`; the sync's result for the metrics,
  // or nullopt when the Job turned out not to be synced (not counted).
  std::optional<std::string_view> RunRequests(const std::string& job_key, Job* job,
                                              SpecVerdict* verdict,
                                              const std::vector<Request>& requests)
      MUSTER_EXCLUDES(mu_);
  // SyncOnce, then, while the status precondition fails (409), again on a
  // fresh GET of the Job, up to kConflictRetries times. `*s`: the outcome.
  // False: the Job read again is not to be synced (invalid or held).
  bool SyncRetryingConflicts(Job* job, SpecVerdict* verdict, const Request& request, Status* s,
                             bool* recorded, std::string_view* result) MUSTER_EXCLUDES(mu_);
  // `recorded` (may be null): set once the plan's status - the action's
  // effect - is written (or needs no write); a failure before that leaves
  // the request to be retried whole.
  Status SyncOnce(const Job& job, const SpecVerdict& verdict, const Request& request,
                  bool* conflict, bool* recorded = nullptr) MUSTER_EXCLUDES(mu_);
  // Job-to-pods latency, once per Job: when every pod of version 0 exists.
  void ObserveJobToPods(const Job& job, const JobSnapshot& snap, const Plan& plan, Time now)
      MUSTER_EXCLUDES(mu_);
  JobSnapshot Snapshot(const Job& job, std::vector<std::shared_ptr<const Pod>>* pods,
                       std::shared_ptr<const PodGroup>* pod_group) MUSTER_EXCLUDES(mu_);
  ExpectedOfJob ExpectationsOf(const Job& job, const PodGroup* cached_group) MUSTER_EXCLUDES(mu_);
  // Pods we deleted, as the informer will show them.
  void ShowKills(std::vector<std::shared_ptr<const Pod>>* pods) MUSTER_EXCLUDES(mu_);
  std::string PodGroupKey(const Job& job) const;
  // Volcano's admission of a new Job by what the cluster has (its queue,
  // GPU memory). False: refused (reported) or put off (requeued).
  bool AdmitNew(const Job& job) MUSTER_EXCLUDES(mu_);
  // Notes that `job` waits for the first list of nodes; past
  // kNodesWaitBound, its WaitingForNodes Event (once per Job).
  void WaitForNodes(const Job& job) MUSTER_EXCLUDES(mu_);
  // True (once) when the Job's wait has lasted past kNodesWaitBound.
  bool NodesWaitToSay(const Job& job) MUSTER_EXCLUDES(mu_);

  // --- Update rules (controller_admission.cc) --------------------------------
  // Judges `job` (defaulted) against its last accepted spec; for kRefused,
  // replaces job->spec with it.
  SpecVerdict JudgeSpec(Job* job) MUSTER_EXCLUDES(mu_);
  SpecVerdict Accept(const Job& job) MUSTER_EXCLUDES(mu_);
  // The accepted spec of the Job in memory; one of an earlier Job of the
  // same name is forgotten.
  std::optional<AcceptedJob> AcceptedOf(const Job& job) MUSTER_EXCLUDES(mu_);
  // Prepares `job` for a sync: defaults, update rules. False: nothing to
  // sync (invalid, or held; already reported).
  bool Admit(Job* job, SpecVerdict* verdict) MUSTER_EXCLUDES(mu_);
  // The Warning Event of a refused update, once per refusal.
  void ReportRefused(const Job& job, const Status& why) MUSTER_EXCLUDES(mu_);
  void RejectInvalid(const Job& job, const Status& why) MUSTER_EXCLUDES(mu_);
  // The answer to a Job whose current version does not decode.
  void AnswerUndecodable(const kube::UndecodableObject& job) MUSTER_EXCLUDES(mu_);
  bool UndecodableSaid(const std::string& job_key, const std::string& said) MUSTER_EXCLUDES(mu_);
  void SetUndecodableSaid(const std::string& job_key, const std::string& said) MUSTER_EXCLUDES(mu_);

  // --- Writes (controller_writes.cc) -----------------------------------------
  // Order: kills marked, plugin objects, hosts ConfigMap, status, kills,
  // PodGroup, pods, Events, the Job's deletion (controller.h).
  // `rewrite_hosts`: patch the svc hosts ConfigMap before the status write.
  Status Apply(const Job& job, const Plan& plan, bool rewrite_hosts, bool* recorded = nullptr)
      MUSTER_EXCLUDES(mu_);
  // The plan's kills not already expected and seen with a UID.
  std::vector<PodKill> PodsToKill(const Plan& plan) MUSTER_EXCLUDES(mu_);
  // A mark that fails is logged: its pod is killed all the same (KillPods'
  // expectation keeps its deletion from raising an event, OnPod).
  void MarkOutOfSync(const Job& job, const std::vector<PodKill>& pods) MUSTER_EXCLUDES(mu_);
  // The plan's status now, or a sync at the end of the coalescing window.
  Status WriteOrHoldStatus(const Job& job, const Plan& plan) MUSTER_EXCLUDES(mu_);
  Status WriteStatus(const Job& job, const JobStatus& status) MUSTER_EXCLUDES(mu_);
  void KillPods(const Job& job, const std::vector<PodKill>& pods) MUSTER_EXCLUDES(mu_);
  // The first failure (all are tried; one Warning Event says how many).
  Status CreatePods(const Job& job, const std::vector<PodSlot>& slots) MUSTER_EXCLUDES(mu_);
  // The slots whose pod is not expected already.
  std::vector<PodSlot> PodsToCreate(const Job& job, const std::vector<PodSlot>& slots)
      MUSTER_EXCLUDES(mu_);
  Status ApplyPodGroup(const Job& job, const Plan& plan) MUSTER_EXCLUDES(mu_);
  Status CreatePodGroup(const Job& job, const Plan& plan) MUSTER_EXCLUDES(mu_);
  Status DeletePodGroup(const Job& job) MUSTER_EXCLUDES(mu_);
  Status EnsureJobObjects(const Job& job) MUSTER_EXCLUDES(mu_);
  Status RewriteHostsConfigMap(const Job& job) MUSTER_EXCLUDES(mu_);
  Status DeleteFinishedJob(const Job& job) MUSTER_EXCLUDES(mu_);
  void RecordEvent(const Job& job, const JobEventRecord& event) MUSTER_EXCLUDES(mu_);

  kube::Client* const client_;
  const Clock& clock_;
  const ControllerOptions options_;
  ReconcilerMetrics* const metrics_;

  kube::Informer<Job> jobs_;
  kube::Informer<Pod> pods_;
  kube::Informer<PodGroup> groups_;
  ClusterGpuMemory gpu_memory_;
  StatusWriter status_writer_;

  base::Mutex mu_;
  // Workers wait on `work_cv_` for `ready_`, the timer on `timer_cv_` for
  // stopping_ only: with one condition variable a Signal meant for a
  // worker could wake the timer instead and be lost, leaving a Job in
  // `ready_` with every worker asleep until another Job's event.
  base::CondVar work_cv_;
  base::CondVar timer_cv_;
  bool stopping_ MUSTER_GUARDED_BY(mu_) = false;
  // Requests waiting per job; `ready_` holds each waiting key once, in
  // arrival order; a key being synced is in `busy_` and not handed out again.
  std::map<std::string, std::vector<Request>> waiting_ MUSTER_GUARDED_BY(mu_);
  std::deque<std::string> ready_ MUSTER_GUARDED_BY(mu_);
  std::set<std::string> busy_ MUSTER_GUARDED_BY(mu_);
  // Requests due later (retries, policy timeouts, rechecks, coalesced
  // status writes), moved into the queue by the timer.
  std::multimap<Time, std::pair<std::string, Request>> timers_ MUSTER_GUARDED_BY(mu_);
  // job key -> pod keys, kept by the pod informer's handlers (pods outlive
  // their Job, so this is not in JobRecord).
  std::map<std::string, std::set<std::string>> pods_by_job_ MUSTER_GUARDED_BY(mu_);
  Expectations expected_ MUSTER_GUARDED_BY(mu_);
  std::map<std::string, JobRecord> records_ MUSTER_GUARDED_BY(mu_);  // job key -> record

  std::vector<std::thread> workers_;
  std::thread timer_;
};

}  // namespace muster::reconciler
