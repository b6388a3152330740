// `muster job ...`, the pure half: the rows of `job list`, the screen of
// `job view`, and the request bodies `job suspend|resume|run` send - all from
// model values, so every screen and body is unit-tested with no cluster
// (job.cc does the I/O).
//
// The list columns are vcctl's (volcano-sh/volcano pkg/cli/job/list.go):
// NAME CREATION PHASE JOBTYPE REPLICAS MIN PENDING RUNNING SUCCEEDED FAILED
// UNKNOWN RETRYCOUNT; CREATION is the creation date (YYYY-MM-DD, UTC) as
// vcctl prints it. muster adds, as kubectl does, NAMESPACE first with
// --all-namespaces, and QUEUE and AGE last with -o wide.
//
// Pure; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/output.h"
#include "kube/codec/json.h"
#include "model/api_objects.h"
#include "model/job.h"
#include "model/object_meta.h"
#include "model/resources.h"
#include "model/status.h"
#include "model/time.h"

namespace muster::cli {

// The label vcctl reads the JOBTYPE column from; absent reads "Batch".
inline constexpr std::string_view kJobTypeLabel = "volcano.sh/job-type";

// Volcano's Command actions on a Job (vcctl job suspend / resume).
inline constexpr std::string_view kAbortJob = "AbortJob";
inline constexpr std::string_view kResumeJob = "ResumeJob";

struct JobListLayout {
  bool all_namespaces = false;  // NAMESPACE first
  bool wide = false;            // QUEUE and AGE last
};

// "cpu=1,memory=100Mi,nvidia.com/gpu=8": the non-zero quantities by name,
// for a cell; "" when there are none.
std::string ResourceListText(const Resources& resources);

// The `job list` table, one row per job in the order given.
Table JobTable(const std::vector<Job>& jobs, const JobListLayout& layout, Time now);

// The jobs of `queue` ("" keeps all; a Job naming no queue is in "default").
std::vector<Job> JobsInQueue(std::vector<Job> jobs, std::string_view queue);

// The `job view` screen: identity, queue, phase (+ reason, message),
// minAvailable, tasks, counters, retries, conditions, then `events` (the
// Job's, any order; the last ten by time are shown).
std::string JobViewText(const Job& job, const std::vector<Event>& events, Time now);

// The Command vcctl writes for `action` on `target` (namespaced like the
// Command, `ns`): generateName "<target name>-<action lowercased>-", the
// target as controller owner and as `target`. REQUIRES: target.uid set.
std::string CommandBody(std::string_view ns, const OwnerReference& target, std::string_view action);
// A Command's `target`: the object `meta` of `api_version`/`kind`, as the
// controller owner (controller and blockOwnerDeletion set).
OwnerReference CommandTarget(std::string_view api_version, std::string_view kind,
                             const ObjectMeta& meta);
// `target` for a Job.
OwnerReference JobTarget(const Job& job);

// Opens a request body's object: {"apiVersion": api_version, "kind": kind,
// "metadata": { - the metadata object left open for the caller's fields.
void StartBody(kube::JsonWriter& w, std::string_view api_version, std::string_view kind);

// `job run`'s flags, validated.
struct RunSpec {
  std::string name;
  std::string ns;
  std::string image = "busybox";
  int32_t min_available = 1;
  int32_t replicas = 1;
  std::map<std::string, std::string> requests;  // verbatim quantities
  std::map<std::string, std::string> limits;
  std::string scheduler = "volcano";
  std::string queue = "default";
};

// "cpu=1000m,memory=100Mi" as a ResourceList; InvalidArgument naming `flag`
// for an entry without "=" or a quantity muster cannot read.
StatusOr<std::map<std::string, std::string>> ParseResourceList(std::string_view flag,
                                                               std::string_view text);

// The Job vcctl's `job run` makes: one task and one container, both named
// after the job, restartPolicy Never.
std::string RunJobBody(const RunSpec& spec);

// A Job manifest a user wrote (YAML or JSON) as the JSON to create in `ns`:
// its metadata.namespace is set to `ns` when it names none. InvalidArgument
// for malformed text, a document that is not a batch.volcano.sh Job, or one
// whose namespace differs from an explicit `ns` (`ns_given`).
struct Manifest {
  std::string json;
  std::string ns;
  std::string name;
};
StatusOr<Manifest> JobManifest(std::string_view text, std::string_view ns, bool ns_given);

// The items of a list answer (a JobList, QueueList, ...), each as compact
// JSON as the API returned it. InvalidArgument for malformed JSON.
StatusOr<std::vector<std::string>> ListItems(std::string_view list_json);

// Objects as -o json|yaml prints them: one object alone (`view NAME`), or a
// List (`list`, even of zero or one item, as `kubectl get` without a name);
// as kubectl, without metadata.managedFields. InvalidArgument for an item
// that is not JSON.
// REQUIRES: format is kJson or kYaml.
StatusOr<std::string> FormatObjects(const std::vector<std::string>& items, bool as_list,
                                    OutputFormat format);

}  // namespace muster::cli
