// JSON <-> model for Volcano objects: scheduling.volcano.sh/v1beta1 PodGroup
// and Queue, batch.volcano.sh/v1alpha1 Job. Same error contract as
// core_codec.h. Job task templates are kept verbatim (TaskSpec::template_json)
// and also decoded into TaskSpec::template_pod.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kube/codec/core_codec.h"
#include "model/job.h"
#include "model/pod_group.h"
#include "model/queue.h"

namespace muster::kube {

// The apiVersion of PodGroups and Queues (and of Events about them).
inline constexpr std::string_view kSchedulingApiVersion = "scheduling.volcano.sh/v1beta1";

void DecodePodGroupFrom(DecodeContext& ctx, const JsonValue& v, PodGroup* out);
StatusOr<PodGroup> DecodePodGroup(std::string_view json);
StatusOr<ObjectList<PodGroup>> DecodePodGroupList(std::string_view json);
std::string EncodePodGroup(const PodGroup& pg);
// The PodGroup status alone ({"status": {...}}) as a merge patch body.
std::string EncodePodGroupStatusPatch(const PodGroupStatus& status);
// The status of a PodGroup document alone (its spec is not read): what a
// PodGroup whose spec does not decode says already.
StatusOr<PodGroupStatus> DecodePodGroupStatusOf(std::string_view pod_group_json);
// {"status":{"phase":...,"conditions":[...]}} alone ("phase" left out when
// empty): the answer to a PodGroup muster cannot decode, whose counters it
// cannot know and so does not write.
std::string EncodePodGroupConditionsPatch(std::string_view phase,
                                          const std::vector<Condition>& conditions);
// The muster.io/gang-plan annotation's value (model/pod_group.h). Decode
// names the JSON path of the first thing wrong; a member with an empty pod
// or node name is an error.
StatusOr<GangPlacement> DecodeGangPlacement(std::string_view json);
std::string EncodeGangPlacement(const GangPlacement& placement);

void DecodeQueueFrom(DecodeContext& ctx, const JsonValue& v, Queue* out);
StatusOr<Queue> DecodeQueue(std::string_view json);
StatusOr<ObjectList<Queue>> DecodeQueueList(std::string_view json);
std::string EncodeQueue(const Queue& queue);
// Every status field but `state`, zeros included (the extender's write).
std::string EncodeQueueStatusPatch(const QueueStatus& status);
// {"status":{"state":...}} alone: Volcano's queue controller owns the state
// (reconciler/queue_state.h), the scheduler the other fields.
std::string EncodeQueueStatePatch(std::string_view state);

void DecodeJobFrom(DecodeContext& ctx, const JsonValue& v, Job* out);
StatusOr<Job> DecodeJob(std::string_view json);
StatusOr<ObjectList<Job>> DecodeJobList(std::string_view json);
std::string EncodeJob(const Job& job);
std::string EncodeJobStatusPatch(const JobStatus& status);
// The status of a Job document alone (its spec is not read).
StatusOr<JobStatus> DecodeJobStatusOf(std::string_view job_json);
// {"status":{"state":{...},"conditions":[...]}} ("conditions" left out when
// empty): the reconciler's answer to a Job it cannot decode, whose pod
// counters it cannot know and so does not write.
std::string EncodeJobStatePatch(const JobState& state, const std::vector<JobCondition>& conditions);
// The reconciler's status writes, made to hold only while the Job is at
// `resource_version`, the version the status was judged from:
//   {"metadata":{"resourceVersion":RV},"status":{...}}
// (the version written even when empty). The API server answers 409
// Conflict once the Job has a newer version, whose status must be judged
// anew. The status is EncodeJobStatusPatch's; `removed_tasks` (tasks the
// stored status counts and `status` no longer has) follow the status's own
// tasks in taskStatusCount, as nulls, in their order: a merge patch removes
// only the keys it names. A removed task that `status` counts is left out.
std::string EncodeJobStatusPatchAtVersion(std::string_view resource_version,
                                          const JobStatus& status,
                                          const std::vector<std::string>& removed_tasks = {});
// EncodeJobStatePatch, likewise at `resource_version`.
std::string EncodeJobStatePatchAtVersion(std::string_view resource_version, const JobState& state,
                                         const std::vector<JobCondition>& conditions);

}  // namespace muster::kube
