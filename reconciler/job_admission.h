// Volcano Job admission without a webhook: the defaults Volcano's mutating
// webhook applies on CREATE and the create-time validation rules that need
// no API call (pkg/webhooks/admission/jobs/mutate and validate). The reconciler applies both
// before it acts on a job, so a job muster cannot run faithfully is refused
// with one clear message instead of half-working.
//
// Rules that need the API (the queue exists, is Open and is a leaf) and the
// full Kubernetes PodTemplate validation are not here.
//
// On UPDATE, Volcano's update rules: job_update.h (included here).
//
// Where muster departs from Volcano:
//   - RestartPartition and the plugins ray and hcclrank are refused: muster
//     implements neither partitionPolicy nor those plugins;
//   - a policy must name its action (Volcano does not check the action of an
//     exitCode policy);
//   - a task's maxRetry below -1 is refused (-1 means unlimited);
//   - the pod-name length check uses the largest replica index (Volcano
//     passes the task's position by mistake).
//
// Pure and thread-compatible: no I/O, no clock, no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/job.h"
#include "model/status.h"
#include "reconciler/job_update.h"

namespace muster::reconciler {

// Policy events a user may write (bus/v1alpha1); "*" matches any event.
inline constexpr std::string_view kKnownEvents[] = {"*",          "PodFailed", "PodEvicted",
                                                    "PodPending", "Unknown",   "TaskCompleted",
                                                    "TaskFailed", "JobUpdated"};
// Policy actions muster executes (Volcano's RestartPartition is refused).
inline constexpr std::string_view kKnownActions[] = {"AbortJob",   "RestartJob",   "RestartTask",
                                                     "RestartPod", "TerminateJob", "CompleteJob",
                                                     "ResumeJob"};
// Job plugins muster implements, sorted.
inline constexpr std::string_view kSupportedPlugins[] = {"env", "mpi", "pytorch",   "ray",
                                                         "ssh", "svc", "tensorflow"};

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
bool IsDns1123Label(std::string_view s);
// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
bool IsDns1123Subdomain(std::string_view s);

// The job with Volcano's webhook defaults filled in: queue "default",
// schedulerName `default_scheduler` when empty, maxRetry 3 when 0; per task
// name "default<i>" when empty, minAvailable = replicas when unset, maxRetry 3
// when unset or 0; job minAvailable = sum of task minAvailable when 0;
// networkTopology mode "hard" when empty; the svc plugin added for
// tensorflow, mpi and pytorch, ssh for mpi. Idempotent.
Job WithDefaults(Job job, std::string_view default_scheduler = "volcano");

// Ok, or InvalidArgument for the first rule the job breaks. The message
// starts with the JSON path of the offending field, then says what is wrong
// and what is allowed, e.g.
//   spec.tasks[1].name: duplicate task name "worker" (task names must be unique)
// Checks run in a fixed order: metadata, spec scalars, tasks in order (name,
// counts, pod name length, topologyPolicy, GPUs - gpu_fraction.h
// ValidateTemplateGpus -, the task's policies), the job's
// minAvailable against all replicas, job policies, plugins, dependsOn,
// volumes.
// Meant for a job as its user wrote it, after WithDefaults (an empty task
// name is an error here, not "default<i>"). A job whose volumeClaim the
// controller has already turned into a volumeClaimName no longer passes
// (both are set), as in Volcano, which checks on CREATE only.
Status ValidateJob(const Job& job);

}  // namespace muster::reconciler
