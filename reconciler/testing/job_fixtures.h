// Builders of Volcano Jobs and of what exists of them (pods, PodGroup) for
// the reconciler's tests, plus JobWorld: a job, its pods and its PodGroup
// held by value, with the effects of a Plan applied the way the controller
// (controller.h) applies them, minus the I/O.
//
//   Job job = MakeJob(R"({"metadata": {...}, "spec": {...}})");
//   Pod pod = MakeJobPod(job, "worker", 0).Phase("Running").Ready();
//   PodGroup pg = MakeJobPodGroup(job, kPodGroupInqueue);
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/codec/volcano_codec.h"
#include "model/job.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/testing/builders.h"
#include "model/time.h"
#include "reconciler/job_admission.h"
#include "reconciler/lifecycle.h"
#include "reconciler/naming.h"

namespace muster::reconciler::fixtures {

// The JSON of a Job named `name` in namespace "ns" with the given spec (JSON).
inline std::string JobJson(std::string_view name, std::string_view spec) {
  return R"({"metadata":{"name":")" + std::string(name) + R"(","namespace":"ns"},"spec":)" +
         std::string(spec) + "}";
}

// A Job decoded from `json` as its user wrote it (no defaults). A decode
// error fails the test.
inline Job DecodeJobAsWritten(std::string_view json) {
  StatusOr<Job> job = kube::DecodeJob(json);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << json;
  return job.ok() ? *job : Job{};
}

// A Job decoded from `json` (the whole object) and defaulted as the
// reconciler sees it (WithDefaults). A decode error fails the test.
inline Job MakeJob(std::string_view json) {
  StatusOr<Job> job = kube::DecodeJob(json);
  if (!job.ok()) {
    ADD_FAILURE() << job.status() << "\n" << json;
    return Job{};
  }
  return WithDefaults(*std::move(job));
}

// A pod of a job as the reconciler creates it (pod_builder.h): name
// <job>-<task>-<index>, annotations task-spec, task-index, job-version (the
// job's status.version unless Version() says otherwise) and group-name, a
// controller owner reference to the job. Pending, no container status.
class JobPodBuilder {
 public:
  JobPodBuilder(const Job& job, std::string_view task, int index)
      : pod_(test::MakePod(PodName(job.meta.name, task, index))
                 .Namespace(job.meta.namespace_)
                 .Annotation(kTaskSpecKey, task)
                 .Annotation(kTaskIndexKey, std::to_string(index))
                 .Annotation(kJobVersionKey, std::to_string(job.status.version))
                 .Annotation(kJobNameKey, job.meta.name)
                 .Group(PodGroupName(job))
                 .Build()) {
    pod_.meta.owner_references.push_back(OwnerReference{std::string(kJobApiVersion),
                                                        std::string(kJobKind), job.meta.name,
                                                        job.meta.uid, true, true});
  }

  JobPodBuilder& Phase(std::string phase) {
    pod_.status.phase = std::move(phase);
    return *this;
  }
  JobPodBuilder& Version(int32_t version) {
    pod_.meta.annotations[std::string(kJobVersionKey)] = std::to_string(version);
    return *this;
  }
  JobPodBuilder& Uid(std::string uid) {
    pod_.meta.uid = std::move(uid);
    return *this;
  }
  JobPodBuilder& CreatedAt(Time t) {
    pod_.meta.creation_timestamp = t;
    return *this;
  }
  // Running with its one container running and ready (or not).
  JobPodBuilder& Ready(bool ready = true) {
    pod_.status.phase = "Running";
    Container().state = "running";
    Container().ready = ready;
    return *this;
  }
  // Failed with the first container terminated with `code`.
  JobPodBuilder& ExitCode(int32_t code) {
    pod_.status.phase = "Failed";
    Container().state = "terminated";
    Container().exit_code = code;
    return *this;
  }
  JobPodBuilder& Restarts(int32_t count) {
    Container().restart_count = count;
    return *this;
  }
  // Deletion has begun (by anyone).
  JobPodBuilder& Deleting(Time t) {
    pod_.meta.deletion_timestamp = t;
    return *this;
  }
  // Marked by the reconciler before it deletes the pod.
  JobPodBuilder& OutOfSync() {
    pod_.meta.annotations[std::string(kOutOfSyncKey)] = "true";
    return *this;
  }
  JobPodBuilder& Annotation(std::string_view key, std::string_view value) {
    pod_.meta.annotations[std::string(key)] = std::string(value);
    return *this;
  }

  Pod Build() const { return pod_; }
  operator Pod() const { return pod_; }  // NOLINT: implicit by design

 private:
  ContainerStatus& Container() {
    if (pod_.status.container_statuses.empty()) {
      pod_.status.container_statuses.push_back(ContainerStatus{.name = "main"});
    }
    return pod_.status.container_statuses.front();
  }
  Pod pod_;
};

inline JobPodBuilder MakeJobPod(const Job& job, std::string_view task, int index) {
  return JobPodBuilder(job, task, index);
}

// The job's PodGroup as the reconciler wants it (DesiredPodGroup, so a sync
// finds nothing to update), at `phase` ("" = not yet seen by the gang
// controller).
inline PodGroup MakeJobPodGroup(const Job& job, std::string_view phase) {
  PodGroup pg = DesiredPodGroup(job);
  pg.meta.uid = "uid-" + pg.meta.name;
  pg.status.phase = std::string(phase);
  return pg;
}

// A job and what exists of it, by value.
struct JobWorld {
  Job job;
  std::vector<Pod> pods;
  std::optional<PodGroup> group;

  // Pointers into this world: valid until it changes.
  JobSnapshot Snapshot() const {
    JobSnapshot snap{.job = &job};
    for (const Pod& pod : pods) snap.pods.push_back(&pod);
    if (group.has_value()) snap.pod_group = &*group;
    return snap;
  }

  Plan Reconcile(const Request& request, Time now) const {
    return reconciler::Reconcile(Snapshot(), request, now);
  }

  Pod* FindPod(std::string_view name) {
    for (Pod& pod : pods) {
      if (pod.meta.name == name) return &pod;
    }
    return nullptr;
  }

  // The controller's part, without the API: write the status, mark and
  // start deleting killed pods, create pods (Pending, at the new version,
  // created `now`), create/update/delete the PodGroup (a new one has no
  // phase until the gang controller sets it).
  void Apply(const Plan& plan, Time now) {
    job.status = plan.status;
    for (const PodKill& kill : plan.kill_pods) {
      Pod* pod = FindPod(kill.name);
      if (pod == nullptr || pod->meta.uid != kill.uid) {
        ADD_FAILURE() << "kill of a pod not in the world, or of another instance: " << kill.name
                      << " (uid " << kill.uid << ")";
        continue;
      }
      pod->meta.annotations[std::string(kOutOfSyncKey)] = "true";
      pod->meta.deletion_timestamp = now;
    }
    for (const PodSlot& slot : plan.create_pods) {
      Pod pod = MakeJobPod(job, job.spec.tasks.at(slot.task).name, slot.index).CreatedAt(now);
      if (FindPod(pod.meta.name) != nullptr) {
        ADD_FAILURE() << "create of a pod that exists: " << pod.meta.name;
        continue;
      }
      pods.push_back(std::move(pod));
    }
    switch (plan.pod_group_op) {
      case Plan::PodGroupOp::kNone:
        break;
      case Plan::PodGroupOp::kCreate:
        group = plan.pod_group;
        group->meta.uid = "uid-" + group->meta.name;
        break;
      case Plan::PodGroupOp::kUpdate:
        group->spec = plan.pod_group.spec;
        break;
      case Plan::PodGroupOp::kDelete:
        group.reset();
        break;
    }
  }

  // The API server (kubelet, garbage collector) finishes deletions.
  void FinishDeletions() {
    std::erase_if(pods, [](const Pod& pod) { return pod.meta.deletion_timestamp.has_value(); });
  }

  // Every live pod moves to `phase` (Running: ready).
  void SetPhaseOfAll(std::string_view phase) {
    for (Pod& pod : pods) {
      if (pod.meta.deletion_timestamp.has_value()) continue;
      pod.status.phase = std::string(phase);
      if (phase == "Running") {
        pod.status.container_statuses = {
            ContainerStatus{.name = "main", .ready = true, .state = "running"}};
      }
    }
  }
};

}  // namespace muster::reconciler::fixtures
