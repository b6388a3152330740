// JobController's writes of one Plan (controller.h), in the order crash
// safety needs: pods to kill marked out of sync, the plugin objects and the
// svc hosts ConfigMap, the status (StatusWriter: at the Job's
// resourceVersion, coalesced when it may wait), then the kills, the
// PodGroup, the pods, the Events and the Job's deletion. The pod and
// PodGroup writes register their expectations (controller.h Expectations)
// before they are sent.
#include <spdlog/spdlog.h>

#include <utility>

#include "base/parallel.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"
#include "reconciler/controller_internal.h"
#include "reconciler/naming.h"
#include "reconciler/plugins.h"
#include "reconciler/ssh_keys.h"

namespace muster::reconciler {

using controller_internal::IgnorableCreate;
using controller_internal::IgnorableDelete;
using controller_internal::PodsIn;

Status JobController::Apply(const Job& job, const Plan& plan, bool rewrite_hosts, bool* recorded) {
  const std::vector<PodKill> kills = PodsToKill(plan);
  // Marked first: a marked pod raises no event again, even seen by a
  // reconciler started after this one's crash (controller.h).
  MarkOutOfSync(job, kills);
  // Before the status that records them (controlledResources): a crash in
  // between must leave them to be created again, not marked done.
  if (plan.ensure_job_objects) MUSTER_RETURN_IF_ERROR(EnsureJobObjects(job));
  if (rewrite_hosts) MUSTER_RETURN_IF_ERROR(RewriteHostsConfigMap(job));
  MUSTER_RETURN_IF_ERROR(WriteOrHoldStatus(job, plan));
  if (recorded != nullptr) *recorded = true;
  KillPods(job, kills);
  MUSTER_RETURN_IF_ERROR(ApplyPodGroup(job, plan));
  Status created = CreatePods(job, plan.create_pods);
  for (const JobEventRecord& event : plan.events) RecordEvent(job, event);
  MUSTER_RETURN_IF_ERROR(created);  // logged and retried in a second (Sync)
  if (plan.delete_job) MUSTER_RETURN_IF_ERROR(DeleteFinishedJob(job));
  return Status::Ok();
}

std::vector<PodKill> JobController::PodsToKill(const Plan& plan) {
  if (plan.kill_pods.empty()) return {};
  std::vector<PodKill> kills;
  base::MutexLock lock(&mu_);
  for (const PodKill& kill : plan.kill_pods) {
    // Not seen with a UID (created, not delivered yet): the next sync kills it.
    if (kill.uid.empty()) continue;
    if (!expected_.killed_pods.count(kill.uid)) kills.push_back(kill);
  }
  return kills;
}

void JobController::MarkOutOfSync(const Job& job, const std::vector<PodKill>& pods) {
  base::ParallelFor(pods.size(), options_.writes_per_sync, [&](size_t i) {
    // The uid precondition: a replacement of the same name is not marked.
    const std::string patch =
        kube::EncodeAnnotationsPatch({{std::string(kOutOfSyncKey), "true"}}, pods[i].uid);
    StatusOr<std::string> r = client_->Patch(PodsIn(job.meta.namespace_).WithName(pods[i].name),
                                             kube::PatchType::kMerge, patch);
    metrics_->CountWrite("patch", "pods");
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
      spdlog::warn("reconciler: mark pod {}/{}: {}", job.meta.namespace_, pods[i].name,
                   r.status().ToString());
    }
  });
}

Status JobController::WriteOrHoldStatus(const Job& job, const Plan& plan) {
  // What may wait waits for the coalescing window (StatusWriteOf says what).
  const StatusWrite write = StatusWriteOf(job, plan);
  Time due;
  if (write == StatusWrite::kMayWait && !status_writer_.MayWriteNow(job.meta.Key(), &due)) {
    EnqueueAt(job.meta.Key(), Request{}, due);  // coalesced with later changes
    return Status::Ok();
  }
  if (write == StatusWrite::kNone) return Status::Ok();
  return WriteStatus(job, plan.status);
}

Status JobController::WriteStatus(const Job& job, const JobStatus& status) {
  StatusOr<std::shared_ptr<const Job>> written = status_writer_.Write(job, status);
  if (!written.ok()) return written.status();
  if (*written != nullptr) {
    base::MutexLock lock(&mu_);
    records_[job.meta.Key()].written = *std::move(written);
  }
  return Status::Ok();
}

// Expectations are registered before the write: the informer may deliver
// its event before the call returns.
void JobController::KillPods(const Job& job, const std::vector<PodKill>& pods) {
  if (pods.empty()) return;
  // One line per plan's kills: what the Job's pod events are read against
  // when a restart or an eviction is in question.
  constexpr size_t kNamed = 8;
  std::string names;
  for (size_t i = 0; i < pods.size() && i < kNamed; ++i) {
    names += (i == 0 ? "" : ", ") + pods[i].name;
  }
  if (pods.size() > kNamed) names += " and " + std::to_string(pods.size() - kNamed) + " more";
  spdlog::info("reconciler: job {}/{}: killing {}", job.meta.namespace_, job.meta.name, names);
  Time now = clock_.Now();
  base::ParallelFor(pods.size(), options_.writes_per_sync, [&](size_t i) {
    {
      base::MutexLock lock(&mu_);
      expected_.killed_pods[pods[i].uid] = now;
    }
    Status s = client_
                   ->Delete(PodsIn(job.meta.namespace_).WithName(pods[i].name),
                            {.precondition_uid = pods[i].uid})
                   .status();
    metrics_->CountWrite("delete", "pods");
    if (IgnorableDelete(s) || s.code() == StatusCode::kConflict) return;  // gone or replaced
    spdlog::warn("reconciler: delete pod {}/{}: {}", job.meta.namespace_, pods[i].name,
                 s.ToString());
    base::MutexLock lock(&mu_);
    expected_.killed_pods.erase(pods[i].uid);
  });
}

std::vector<PodSlot> JobController::PodsToCreate(const Job& job,
                                                 const std::vector<PodSlot>& slots) {
  std::vector<PodSlot> todo;
  base::MutexLock lock(&mu_);
  for (const PodSlot& slot : slots) {
    std::string name = PodName(job.meta.name, job.spec.tasks[slot.task].name, slot.index);
    if (!expected_.created_pods.count(ObjectKey(job.meta.namespace_, name))) todo.push_back(slot);
  }
  return todo;
}

Status JobController::CreatePods(const Job& job, const std::vector<PodSlot>& slots) {
  const std::vector<PodSlot> todo = PodsToCreate(job, slots);
  Time now = clock_.Now();
  base::Mutex failed_mu;
  int failed = 0;
  Status first;  // the first failure, for the one Event and the requeue
  auto fail = [&](const std::string& name, const Status& why) {
    base::MutexLock lock(&failed_mu);
    if (failed++ == 0) first = why.Annotate("pod " + name);
  };
  base::ParallelFor(todo.size(), options_.writes_per_sync, [&](size_t i) {
    const PodSlot& slot = todo[i];
    std::string name = PodName(job.meta.name, job.spec.tasks[slot.task].name, slot.index);
    StatusOr<std::string> body = BuildPod(job, slot.task, slot.index, options_.pods);
    if (!body.ok()) return fail(name, body.status());
    const std::string key = ObjectKey(job.meta.namespace_, name);
    {
      base::MutexLock lock(&mu_);
      expected_.created_pods[key] = now;
    }
    Status s = client_->Create(PodsIn(job.meta.namespace_), *body).status();
    metrics_->CountWrite("create", "pods");
    if (s.ok()) return;
    {
      base::MutexLock lock(&mu_);
      expected_.created_pods.erase(key);  // AlreadyExists too: the informer has (or will have) it
    }
    if (s.code() == StatusCode::kAlreadyExists) return;
    fail(name, s);
  });
  if (failed == 0) return Status::Ok();
  std::string what =
      first.message() +
      (failed > 1 ? " (and " + std::to_string(failed - 1) + " more pods failed)" : "");
  RecordEvent(job, {"Warning", "FailedCreate", what});
  return Status(first.code(), what);
}

Status JobController::ApplyPodGroup(const Job& job, const Plan& plan) {
  switch (plan.pod_group_op) {
    case Plan::PodGroupOp::kNone:
      return Status::Ok();
    case Plan::PodGroupOp::kCreate:
      return CreatePodGroup(job, plan);
    case Plan::PodGroupOp::kUpdate: {
      Status s = client_
                     ->Patch(kube::PodGroupsRef()
                                 .WithNamespace(job.meta.namespace_)
                                 .WithName(PodGroupName(job)),
                             kube::PatchType::kMerge, kube::EncodePodGroup(plan.pod_group))
                     .status();
      metrics_->CountWrite("patch", "podgroups");
      return s;
    }
    case Plan::PodGroupOp::kDelete:
      return DeletePodGroup(job);
  }
  return Status::Ok();
}

Status JobController::CreatePodGroup(const Job& job, const Plan& plan) {
  {
    base::MutexLock lock(&mu_);
    expected_.created_groups[PodGroupKey(job)] = clock_.Now();
  }
  Status s = client_
                 ->Create(kube::PodGroupsRef().WithNamespace(job.meta.namespace_),
                          kube::EncodePodGroup(plan.pod_group))
                 .status();
  metrics_->CountWrite("create", "podgroups");
  if (s.ok()) return s;
  base::MutexLock lock(&mu_);
  expected_.created_groups.erase(PodGroupKey(job));
  return IgnorableCreate(s) ? Status::Ok() : s;
}

Status JobController::DeletePodGroup(const Job& job) {
  std::shared_ptr<const PodGroup> have = groups_.Get(PodGroupKey(job));
  if (have == nullptr) return Status::Ok();
  {
    base::MutexLock lock(&mu_);
    expected_.deleted_group_uids.insert(have->meta.uid);
    expected_.created_groups.erase(PodGroupKey(job));
  }
  Status s =
      client_
          ->Delete(
              kube::PodGroupsRef().WithNamespace(job.meta.namespace_).WithName(PodGroupName(job)),
              {.precondition_uid = have->meta.uid})
          .status();
  metrics_->CountWrite("delete", "podgroups");
  if (IgnorableDelete(s) || s.code() == StatusCode::kConflict) return Status::Ok();
  base::MutexLock lock(&mu_);
  expected_.deleted_group_uids.erase(have->meta.uid);
  return s;
}

Status JobController::EnsureJobObjects(const Job& job) {
  SshKeyPair keys;
  if (NeedsSshKeys(job)) {
    StatusOr<SshKeyPair> generated = GenerateSshKeyPair();
    if (!generated.ok()) return generated.status();
    keys = std::move(generated).value();
  }
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, keys);
  if (!objects.ok()) return objects.status();
  for (const JobObject& object : *objects) {
    std::string group, version = object.api_version;
    if (size_t slash = version.find('/'); slash != std::string::npos) {
      group = version.substr(0, slash);
      version = version.substr(slash + 1);
    }
    kube::ResourceRef ref{.group = group,
                          .version = version,
                          .resource = object.resource,
                          .namespace_ = job.meta.namespace_};
    Status s = client_->Create(ref, object.json).status();
    metrics_->CountWrite("create", object.resource);
    if (!IgnorableCreate(s)) return s.Annotate(object.resource + " " + object.name);
    // Made before a crash, maybe for other replicas: rewritten to these.
    if (s.code() == StatusCode::kAlreadyExists && object.resource == "configmaps" &&
        object.name == HostsConfigMapName(job)) {
      MUSTER_RETURN_IF_ERROR(RewriteHostsConfigMap(job));
    }
  }
  return Status::Ok();
}

// Volcano's svc OnJobUpdate: ConfigMap <job>-svc holds the hosts of the
// replicas as they are now (created again if someone deleted it).
Status JobController::RewriteHostsConfigMap(const Job& job) {
  const kube::ResourceRef ref = kube::ResourceRef::Core("configmaps", job.meta.namespace_);
  const std::string name = HostsConfigMapName(job);
  Status s =
      client_->Patch(ref.WithName(name), kube::PatchType::kMerge, SvcHostsPatch(job)).status();
  metrics_->CountWrite("patch", "configmaps");
  if (s.code() == StatusCode::kNotFound) {
    s = client_->Create(ref, SvcHostsConfigMap(job).json).status();
    metrics_->CountWrite("create", "configmaps");
  }
  if (!s.ok()) return s.Annotate("configmaps " + name);
  spdlog::info("reconciler: job {}: hosts ConfigMap {} rewritten", job.meta.Key(), name);
  return Status::Ok();
}

// ttlSecondsAfterFinished has elapsed: the Job goes (its pods and objects
// with it, by the garbage collector), this incarnation only.
Status JobController::DeleteFinishedJob(const Job& job) {
  kube::DeleteOptions options{.precondition_uid = job.meta.uid, .propagation_policy = "Background"};
  Status s =
      client_
          ->Delete(
              kube::VolcanoJobsRef().WithNamespace(job.meta.namespace_).WithName(job.meta.name),
              options)
          .status();
  metrics_->CountWrite("delete", "jobs");
  if (!IgnorableDelete(s)) return s;
  spdlog::info("reconciler: job {} deleted (ttlSecondsAfterFinished)", job.meta.Key());
  return Status::Ok();
}

void JobController::RecordEvent(const Job& job, const JobEventRecord& record) {
  Event event =
      NewEvent(ObjectReference{.api_version = std::string(kJobApiVersion),
                               .kind = std::string(kJobKind),
                               .namespace_ = job.meta.namespace_,
                               .name = job.meta.name,
                               .uid = job.meta.uid},
               record.type, record.reason, record.message, "muster-reconciler", clock_.Now());
  Status s =
      client_
          ->Create(kube::ResourceRef::Core("events", job.meta.namespace_), kube::EncodeEvent(event))
          .status();
  metrics_->CountWrite("create", "events");
  if (!s.ok()) spdlog::warn("reconciler: event on job {}: {}", job.meta.Key(), s.ToString());
}

}  // namespace muster::reconciler
