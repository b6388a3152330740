#include "reconciler/lifecycle.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "reconciler/naming.h"

namespace muster::reconciler {
namespace {

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string_view PhaseOf(const Job& job) {
  return job.status.state.phase.empty() ? kPending : std::string_view(job.status.state.phase);
}

bool IsInternal(const Request& request) { return request.event.empty(); }

int32_t TotalReplicas(const Job& job) {
  int32_t total = 0;
  for (const TaskSpec& task : job.spec.tasks) total += task.replicas;
  return total;
}

// A policy matches an event by name (or "*"), or an exit code by value.
// PodPending matches only with a timeout: without one it would fire on
// every pod creation.
bool Matches(const LifecyclePolicy& policy, const Request& request) {
  if (policy.exit_code.has_value()) {
    return request.exit_code.has_value() && *request.exit_code == *policy.exit_code;
  }
  std::vector<std::string> events = policy.events;
  if (!policy.event.empty()) events.push_back(policy.event);
  bool named = Contains(events, request.event) || Contains(events, kAnyEvent);
  if (!named) return false;
  return request.event != kPodPendingEvent || policy.timeout.has_value();
}

std::optional<ResolvedAction> FirstMatch(const std::vector<LifecyclePolicy>& policies,
                                         const Request& request) {
  for (const LifecyclePolicy& policy : policies) {
    if (Matches(policy, request)) return ResolvedAction{policy.action, policy.timeout};
  }
  return std::nullopt;
}

// The mutable state of one Reconcile call.
struct Run {
  const JobSnapshot& snap;
  const Job& job;
  Time now;
  Plan plan;
  std::set<std::string> killed;  // names killed by this plan
  std::string phase;             // the phase being decided

  void Kill(const Pod& pod) {
    if (pod.meta.deletion_timestamp.has_value()) return;
    if (killed.insert(pod.meta.name).second) {
      plan.kill_pods.push_back({.name = pod.meta.name, .uid = pod.meta.uid});
    }
  }
};

const Pod* FindPod(const JobSnapshot& snap, std::string_view name) {
  for (const Pod* pod : snap.pods) {
    if (pod->meta.name == name) return pod;
  }
  return nullptr;
}

// --- Status counters -------------------------------------------------------

void CountPods(Run& run) {
  JobStatus& status = run.plan.status;
  status.pending = status.running = status.succeeded = status.failed = 0;
  status.unknown = status.terminating = 0;
  // Every task and pod phase, zeros included: the status is written as a
  // merge patch, which cannot drop a key, so a count that went to 0 must be
  // written as 0 - and a plan must equal the status it wrote.
  status.task_status_count.clear();
  for (const TaskSpec& task : run.job.spec.tasks) {
    for (const char* phase : {"Pending", "Running", "Succeeded", "Failed", "Unknown"}) {
      status.task_status_count[task.name][phase] = 0;
    }
  }
  for (const Pod* pod : run.snap.pods) {
    if (pod->meta.deletion_timestamp.has_value() || run.killed.count(pod->meta.name)) {
      ++status.terminating;
      continue;
    }
    const std::string& phase = pod->status.phase.empty() ? "Pending" : pod->status.phase;
    if (phase == "Pending")
      ++status.pending;
    else if (phase == "Running")
      ++status.running;
    else if (phase == "Succeeded")
      ++status.succeeded;
    else if (phase == "Failed")
      ++status.failed;
    else
      ++status.unknown;
    // Only the Job's tasks: a pod of a task the spec no longer has (it
    // changed while muster did not enforce the update rules) is counted in
    // the totals, never under a task name the status would then keep.
    std::string task;
    int index = 0;
    if (!PodTaskAndIndex(*pod, &task, &index)) continue;
    auto counts = status.task_status_count.find(task);
    if (counts != status.task_status_count.end()) ++counts->second[phase];
  }
}

// --- Kills -----------------------------------------------------------------

// Volcano's killJob: every pod but (with `soft`, or on the last retry) the
// finished ones; the PodGroup goes too. `bump` starts a new job version.
void KillJob(Run& run, bool soft, bool bump) {
  const JobStatus& status = run.job.status;
  bool last_retry = status.retry_count >= run.job.spec.max_retry - 1;
  for (const Pod* pod : run.snap.pods) {
    if ((soft || last_retry) && pod->IsTerminal()) continue;
    run.Kill(*pod);
  }
  if (run.snap.pod_group != nullptr) run.plan.pod_group_op = Plan::PodGroupOp::kDelete;
  if (bump) ++run.plan.status.version;
}

// RestartTask / RestartPod: the event's task or pod only.
void KillTarget(Run& run, const Request& request, std::string_view action) {
  for (const Pod* pod : run.snap.pods) {
    std::string task;
    int index = 0;
    bool hit = action == kRestartPod ? pod->meta.name == request.pod
                                     : PodTaskAndIndex(*pod, &task, &index) && task == request.task;
    if (hit) run.Kill(*pod);
  }
}

// --- SyncJob ---------------------------------------------------------------

bool PodGroupDiffers(const PodGroup& have, const PodGroup& want) {
  return have.spec.min_member != want.spec.min_member ||
         have.spec.min_task_member != want.spec.min_task_member ||
         have.spec.priority_class_name != want.spec.priority_class_name ||
         have.spec.min_resources != want.spec.min_resources;
}

// Volcano's initiateJob/createOrUpdatePodGroup plus the plugin objects.
void EnsureGroupAndObjects(Run& run) {
  for (const auto& [name, args] : run.job.spec.plugins) {
    if (!run.job.status.controlled_resources.count("plugin-" + name)) {
      run.plan.ensure_job_objects = true;
    }
  }
  if (run.plan.ensure_job_objects) {
    for (const auto& [name, args] : run.job.spec.plugins) {
      run.plan.status.controlled_resources["plugin-" + name] = name;
    }
  }
  PodGroup want = DesiredPodGroup(run.job);
  if (run.snap.pod_group == nullptr) {
    run.plan.pod_group_op = Plan::PodGroupOp::kCreate;
    run.plan.pod_group = std::move(want);
  } else if (PodGroupDiffers(*run.snap.pod_group, want)) {
    run.plan.pod_group_op = Plan::PodGroupOp::kUpdate;
    run.plan.pod_group = std::move(want);
  }
}

// Ready: Running with every container ready.
bool IsReady(const Pod& pod) {
  if (pod.status.phase != "Running") return false;
  for (const ContainerStatus& c : pod.status.container_statuses) {
    if (!c.ready) return false;
  }
  return true;
}

// A task with dependsOn starts once its dependencies have at least their
// minAvailable pods Running and ready ("all": every one; "any": one).
bool DependenciesReady(const Run& run, const TaskSpec& task) {
  if (!task.depends_on.has_value() || task.depends_on->name.empty()) return true;
  bool any = task.depends_on->iteration == "any";
  bool all_ready = true;
  for (const std::string& dep : task.depends_on->name) {
    const TaskSpec* spec = FindTask(run.job, dep);
    int32_t need = spec == nullptr ? 0 : spec->min_available.value_or(spec->replicas);
    int32_t ready = 0;
    for (const Pod* pod : run.snap.pods) {
      std::string t;
      int i = 0;
      if (PodTaskAndIndex(*pod, &t, &i) && t == dep && IsReady(*pod)) ++ready;
    }
    bool ok = ready >= need;
    if (any && ok) return true;
    all_ready = all_ready && ok;
  }
  return !any && all_ready;
}

bool PodGroupAdmitted(const PodGroup* pg) {
  return pg != nullptr && !pg->status.phase.empty() && pg->status.phase != kPodGroupPending;
}

// Volcano's syncJob: create missing replicas (once admitted), kill surplus
// replicas, out-of-sync pods and live pods of an older version.
void SyncPods(Run& run) {
  bool initiate = run.phase == kPending || run.phase == kRunning;
  if (initiate) EnsureGroupAndObjects(run);
  bool may_create = initiate && PodGroupAdmitted(run.snap.pod_group);
  // Pods by name, once: every replica is looked up (a sync runs per pod event).
  std::unordered_map<std::string_view, const Pod*> by_name;
  by_name.reserve(run.snap.pods.size());
  for (const Pod* pod : run.snap.pods) by_name.emplace(pod->meta.name, pod);
  std::unordered_set<std::string> wanted;
  for (size_t t = 0; t < run.job.spec.tasks.size(); ++t) {
    const TaskSpec& task = run.job.spec.tasks[t];
    bool deps_ready = DependenciesReady(run, task);
    for (int i = 0; i < task.replicas; ++i) {
      std::string name = PodName(run.job.meta.name, task.name, i);
      wanted.insert(name);
      auto found = by_name.find(name);
      const Pod* pod = found == by_name.end() ? nullptr : found->second;
      if (pod == nullptr) {
        if (may_create && deps_ready) run.plan.create_pods.push_back(PodSlot{t, i});
        continue;
      }
      bool stale = PodVersion(*pod) < run.job.status.version && !pod->IsTerminal();
      if (stale || pod->meta.annotations.count(std::string(kOutOfSyncKey))) run.Kill(*pod);
    }
  }
  for (const Pod* pod : run.snap.pods) {
    if (!wanted.count(pod->meta.name)) run.Kill(*pod);
  }
}

// --- Phase decisions ---------------------------------------------------------

// Running + SyncJob (Volcano state/running.go).
std::string_view RunningPhase(const Job& job, const JobStatus& s) {
  int32_t total = TotalReplicas(job);
  if (total == 0) return kRunning;
  if (job.spec.min_success.has_value() && s.succeeded >= *job.spec.min_success) return kCompleted;
  if (s.succeeded + s.failed == total) {
    int32_t task_min_sum = 0;
    for (const TaskSpec& t : job.spec.tasks) task_min_sum += t.min_available.value_or(t.replicas);
    if (job.spec.min_available >= task_min_sum) {
      for (const TaskSpec& t : job.spec.tasks) {
        if (!t.min_available.has_value()) continue;
        auto it = s.task_status_count.find(t.name);
        int32_t done = 0;
        if (it != s.task_status_count.end() && it->second.count("Succeeded")) {
          done = it->second.at("Succeeded");
        }
        if (done < *t.min_available) return kFailed;
      }
    }
    if (job.spec.min_success.has_value() && s.succeeded < *job.spec.min_success) return kFailed;
    return s.succeeded >= job.spec.min_available ? kCompleted : kFailed;
  }
  if (s.pending > total - job.spec.min_available) return kPending;
  return kRunning;
}

// Restarting: Failed once the retries are spent, else Pending again when
// enough of the old pods are gone.
std::string_view RestartingPhase(const Job& job, const JobStatus& s) {
  if (s.retry_count >= job.spec.max_retry) return kFailed;
  if (TotalReplicas(job) - s.terminating >= s.min_available) return kPending;
  return kRestarting;
}

bool NoneAlive(const JobStatus& s) {
  return s.terminating == 0 && s.pending == 0 && s.running == 0;
}

void StartRestart(Run& run, bool soft, bool bump) {
  KillJob(run, soft, bump);
  ++run.plan.status.retry_count;
  run.phase = kRestarting;
}

// Executes `action` in the current phase (Volcano's state/*.go Execute).
void Execute(Run& run, std::string_view action, const Request& request) {
  const std::string phase = run.phase;
  bool live = phase == kPending || phase == kRunning;
  if (live && (action == kRestartJob)) return StartRestart(run, /*soft=*/false, /*bump=*/true);
  if (live && (action == kRestartTask || action == kRestartPod)) {
    KillTarget(run, request, action);
    ++run.plan.status.retry_count;
    run.phase = kRestarting;
    return;
  }
  if (live && (action == kAbortJob || action == kTerminateJob || action == kCompleteJob)) {
    KillJob(run, /*soft=*/true, /*bump=*/true);
    run.phase = action == kAbortJob       ? kAborting
                : action == kTerminateJob ? kTerminating
                                          : kCompleting;
    return;
  }
  if (live) return SyncPods(run);
  if (phase == kRestarting) {
    if (action == kRestartTask || action == kRestartPod)
      KillTarget(run, request, action);
    else if (action != kSync)
      KillJob(run, /*soft=*/false, /*bump=*/false);
    else
      SyncPods(run);
    return;
  }
  if ((phase == kAborting || phase == kAborted) && action == kResumeJob) {
    return StartRestart(run, /*soft=*/true, /*bump=*/true);
  }
  // Aborting, Aborted, Completing, Terminating and the finished phases: keep
  // killing what is still alive; the phase settles below.
  KillJob(run, /*soft=*/true, /*bump=*/false);
}

// The phase after the action, from the counters (Volcano's UpdateStatusFn).
std::string_view SettlePhase(const Run& run) {
  const JobStatus& s = run.plan.status;
  const Job& job = run.job;
  const std::string& phase = run.phase;
  if (phase == kPending) {
    return job.spec.min_available <= s.running + s.succeeded + s.failed ? kRunning : kPending;
  }
  if (phase == kRunning) return RunningPhase(job, s);
  if (phase == kRestarting) return RestartingPhase(job, s);
  if (phase == kAborting) return NoneAlive(s) ? kAborted : kAborting;
  if (phase == kCompleting) return NoneAlive(s) ? kCompleted : kCompleting;
  if (phase == kTerminating) return NoneAlive(s) ? kTerminated : kTerminating;
  return phase;
}

// Phase change: lastTransitionTime and Volcano's one-condition-per-phase list.
void SetPhase(Run& run, std::string_view next) {
  JobStatus& s = run.plan.status;
  if (s.state.phase == next) return;
  s.state.phase = std::string(next);
  s.state.last_transition_time = run.now;
  std::erase_if(s.conditions, [&](const JobCondition& c) { return c.status == next; });
  s.conditions.push_back(JobCondition{std::string(next), run.now});
  if (!run.job.meta.creation_timestamp.is_zero()) {
    s.running_duration = run.now - run.job.meta.creation_timestamp;
  }
  if (next == kFailed) {
    s.state.reason = s.retry_count >= run.job.spec.max_retry ? "MaxRetryExceeded" : "JobFailed";
    s.state.message = s.state.reason == "MaxRetryExceeded"
                          ? "retried " + std::to_string(s.retry_count) + " times (maxRetry " +
                                std::to_string(run.job.spec.max_retry) + ")"
                          : "fewer pods succeeded than the job needs";
    run.plan.events.push_back({"Warning", "JobFailed", s.state.message});
  } else {
    s.state.reason.clear();
    s.state.message.clear();
  }
}

// Would the event that raised `request` still be true? (A timed-out policy
// acts only then: a pod that left Pending cancels its PodPending action.)
bool StillHolds(const JobSnapshot& snap, const Request& request) {
  const Pod* pod = FindPod(snap, request.pod);
  if (request.event == kPodPendingEvent) {
    return pod != nullptr && pod->meta.uid == request.pod_uid &&
           (pod->status.phase.empty() || pod->status.phase == "Pending") &&
           !pod->meta.deletion_timestamp.has_value();
  }
  return pod == nullptr || pod->status.phase != "Running";
}

// PodPending timeouts, level-based (a restart of the reconciler loses
// nothing): the current-version pending pod whose policy is overdue first
// (`overdue`), else the first instant one will be.
struct PendingTimeout {
  std::optional<Request> overdue;
  std::optional<Time> next;
};
PendingTimeout PendingTimeouts(const JobSnapshot& snap, const Job& job, Time now) {
  PendingTimeout out;
  for (const Pod* pod : snap.pods) {
    if (!(pod->status.phase.empty() || pod->status.phase == "Pending")) continue;
    if (pod->meta.deletion_timestamp.has_value()) continue;
    if (PodVersion(*pod) < job.status.version) continue;
    Request probe{.event = std::string(kPodPendingEvent),
                  .pod = pod->meta.name,
                  .pod_uid = pod->meta.uid,
                  .pod_version = PodVersion(*pod)};
    int index = 0;
    PodTaskAndIndex(*pod, &probe.task, &index);
    ResolvedAction r = ResolveAction(job, probe);
    if (!r.timeout.has_value() || r.action == kSync) continue;
    Time due = pod->meta.creation_timestamp + *r.timeout;
    if (due <= now) {
      probe.timeout_elapsed = true;
      if (!out.overdue) out.overdue = probe;
    } else if (!out.next || due < *out.next) {
      out.next = due;
    }
  }
  return out;
}

void ScheduleTtl(Run& run) {
  const JobStatus& s = run.plan.status;
  if (!IsFinished(s.state.phase) || !run.job.spec.ttl_seconds_after_finished.has_value()) return;
  Time due =
      s.state.last_transition_time + std::chrono::seconds(*run.job.spec.ttl_seconds_after_finished);
  if (due <= run.now) {
    run.plan.delete_job = true;
  } else {
    run.plan.recheck_at = due;
  }
}

// `after` differs from `before` in the pod counters only.
bool CountersOnly(const JobStatus& before, JobStatus after) {
  after.pending = before.pending;
  after.running = before.running;
  after.succeeded = before.succeeded;
  after.failed = before.failed;
  after.terminating = before.terminating;
  after.unknown = before.unknown;
  after.task_status_count = before.task_status_count;
  return after == before;
}

}  // namespace

bool IsFinished(std::string_view phase) {
  return phase == kCompleted || phase == kFailed || phase == kTerminated;
}

ResolvedAction ResolveAction(const Job& job, const Request& request) {
  if (!request.action.empty()) return {request.action, std::nullopt};
  if (IsInternal(request) || request.pod_version < job.status.version)
    return {std::string(kSync), {}};
  if (const TaskSpec* task = FindTask(job, request.task)) {
    if (auto hit = FirstMatch(task->policies, request)) return *hit;
  }
  if (auto hit = FirstMatch(job.spec.policies, request)) return *hit;
  return {std::string(kSync), std::nullopt};
}

Plan Reconcile(const JobSnapshot& snapshot, const Request& request, Time now) {
  const Job& job = *snapshot.job;
  Run run{snapshot, job, now, Plan{}, {}, std::string(PhaseOf(job))};
  run.plan.status = job.status;
  run.plan.status.min_available = job.spec.min_available;

  // A plain sync also acts for a pod whose PodPending timeout has passed.
  std::optional<Request> overdue;
  if (IsInternal(request) && request.action.empty() && !IsFinished(run.phase)) {
    overdue = PendingTimeouts(snapshot, job, now).overdue;
  }
  const Request& req = overdue ? *overdue : request;
  ResolvedAction resolved{std::string(kSync), std::nullopt};
  if (!IsFinished(run.phase)) resolved = ResolveAction(job, req);
  if (resolved.timeout.has_value() && !req.timeout_elapsed) {
    Request later = req;
    later.timeout_elapsed = true;
    const Pod* pod = FindPod(snapshot, req.pod);
    bool from_creation =
        req.event == kPodPendingEvent && pod != nullptr && !pod->meta.creation_timestamp.is_zero();
    run.plan.delayed = later;
    run.plan.delayed_due = (from_creation ? pod->meta.creation_timestamp : now) + *resolved.timeout;
    resolved = {std::string(kSync), std::nullopt};
  } else if (req.timeout_elapsed && !StillHolds(snapshot, req)) {
    resolved = {std::string(kSync), std::nullopt};
  }
  if (resolved.action != kSync) {
    run.plan.events.push_back({"Normal", "ExecuteAction",
                               "Start to execute action " + resolved.action +
                                   (req.event.empty() ? "" : " on event " + req.event) +
                                   (req.pod.empty() ? "" : " of pod " + req.pod)});
  }
  run.plan.action = resolved.action;
  Execute(run, resolved.action, req);
  CountPods(run);
  SetPhase(run, SettlePhase(run));
  if (!IsFinished(run.plan.status.state.phase)) {
    run.plan.recheck_at = PendingTimeouts(snapshot, job, now).next;
  }
  ScheduleTtl(run);
  return std::move(run.plan);
}

StatusWrite StatusWriteOf(const Job& job, const Plan& plan) {
  if (plan.status == job.status) return StatusWrite::kNone;
  // An action's status goes at once (issue 19). The controller carries out
  // the action's kills, PodGroup delete and Event at once, and its phase
  // (Completing, Aborting, Terminating, Restarting), version bump and retry
  // count are recorded nowhere but in this status; the event that raised it
  // (TaskCompleted, PodFailed, ...) is not raised again. Held back, the next
  // plain sync planned from the unwritten status - a new Job's phase "" is
  // Pending - saw a Pending job with its pods gone, re-created the PodGroup
  // and left the Job Pending: the CompleteJob of a driver that succeeded
  // while the reconciler was down, before it wrote Running, was lost.
  if (plan.action != kSync) return StatusWrite::kNow;
  // A plain sync's phase of a new Job (Pending or Running: SettlePhase from
  // Pending) and pod counters are derived from the pods again. A new Job's
  // first status that records plugin objects (controlledResources) goes at
  // once, so they are not made again.
  bool first = job.status.state.phase.empty() && !plan.ensure_job_objects;
  return first || CountersOnly(job.status, plan.status) ? StatusWrite::kMayWait : StatusWrite::kNow;
}

PodGroup DesiredPodGroup(const Job& job) {
  PodGroup pg;
  pg.meta.name = PodGroupName(job);
  pg.meta.namespace_ = job.meta.namespace_;
  pg.meta.labels = job.meta.labels;
  pg.meta.annotations = job.meta.annotations;
  pg.meta.owner_references.push_back(OwnerReference{
      std::string(kJobApiVersion), std::string(kJobKind), job.meta.name, job.meta.uid, true, true});
  pg.spec.min_member = job.spec.min_available;
  pg.spec.queue = job.spec.queue;
  pg.spec.priority_class_name = job.spec.priority_class_name;
  pg.spec.network_topology = job.spec.network_topology;
  Resources min_resources;
  int32_t left = job.spec.min_available;
  int32_t task_min_sum = 0;
  for (const TaskSpec& task : job.spec.tasks) {
    pg.spec.min_task_member[task.name] = task.min_available.value_or(task.replicas);
    task_min_sum += task.min_available.value_or(task.replicas);
  }
  auto take = [&](const TaskSpec& task, int32_t count) {
    count = std::max(0, std::min(count, left));
    for (int32_t i = 0; i < count; ++i) min_resources += task.template_pod.EffectiveRequest();
    left -= count;
  };
  if (job.spec.min_available < task_min_sum) {
    // The first minAvailable pods, each task up to its replicas.
    for (const TaskSpec& task : job.spec.tasks) take(task, task.replicas);
  } else {
    // Each task's own minimum first, then the tasks' extra replicas in order.
    for (const TaskSpec& task : job.spec.tasks)
      take(task, task.min_available.value_or(task.replicas));
    for (const TaskSpec& task : job.spec.tasks) {
      take(task, task.replicas - task.min_available.value_or(task.replicas));
    }
  }
  pg.spec.min_resources = min_resources;
  return pg;
}

const TaskSpec* FindTask(const Job& job, std::string_view name) {
  for (const TaskSpec& task : job.spec.tasks) {
    if (task.name == name) return &task;
  }
  return nullptr;
}

}  // namespace muster::reconciler
