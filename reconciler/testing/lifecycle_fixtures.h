// Jobs, requests and worlds for the lifecycle tests (lifecycle.h), in one
// vocabulary: Job "j" of tasks ps and worker, requests From(event, task,
// index), and worlds of pods coded one letter each. Plus readable gtest
// printers of the lifecycle's records.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/job.h"
#include "model/pod.h"
#include "model/time.h"
#include "reconciler/lifecycle.h"
#include "reconciler/naming.h"
#include "reconciler/testing/job_fixtures.h"

namespace muster::reconciler {

// Readable failures (found by argument-dependent lookup).
inline void PrintTo(const PodKill& kill, std::ostream* os) {
  *os << kill.name << " (uid " << kill.uid << ")";
}
inline void PrintTo(const Request& r, std::ostream* os) {
  *os << "{event=" << r.event << " task=" << r.task << " pod=" << r.pod << " uid=" << r.pod_uid
      << " version=" << r.pod_version
      << " exit=" << (r.exit_code ? std::to_string(*r.exit_code) : "-") << " action=" << r.action
      << " elapsed=" << r.timeout_elapsed << "}";
}
inline void PrintTo(const PodSlot& s, std::ostream* os) {
  *os << "{task=" << s.task << " index=" << s.index << "}";
}
inline void PrintTo(const JobEventRecord& e, std::ostream* os) {
  *os << "{" << e.type << " " << e.reason << ": " << e.message << "}";
}
inline void PrintTo(StatusWrite w, std::ostream* os) {
  constexpr const char* kNames[] = {"kNone", "kNow", "kMayWait"};
  *os << kNames[static_cast<int>(w)];
}
inline void PrintTo(Plan::PodGroupOp op, std::ostream* os) {
  constexpr const char* kNames[] = {"kNone", "kCreate", "kUpdate", "kDelete"};
  *os << kNames[static_cast<int>(op)];
}

namespace lifecycle_fixtures {

inline constexpr Time kT0 = Time::FromUnixSeconds(1'750'000'000);  // 2025-06-15T15:06:40Z
inline constexpr Time kNow = kT0 + std::chrono::minutes(30);

// --- Jobs ------------------------------------------------------------------

// One task of a job: `replicas` pods of one container requesting `cpu`;
// `extra` adds fields (a JSON fragment ending in a comma).
inline std::string TaskJson(std::string_view name, int replicas, std::string_view cpu,
                            std::string_view extra = "") {
  return R"({"name":")" + std::string(name) + R"(","replicas":)" + std::to_string(replicas) + "," +
         std::string(extra) +
         R"("template":{"spec":{"containers":[{"name":"c","image":"img","resources":{"requests":{"cpu":")" +
         std::string(cpu) + R"("}}}]}}})";
}

// Job "j" (uid "u1", namespace "ns", created at kT0, queue "research")
// with `tasks`; `spec` adds fields to the spec (a fragment ending in a
// comma). Defaulted (maxRetry 3, minAvailables).
inline Job JobOf(std::string_view spec, const std::vector<std::string>& tasks) {
  std::string list;
  for (const std::string& t : tasks) list += (list.empty() ? "" : ",") + t;
  return fixtures::MakeJob(R"({"metadata":{"name":"j","namespace":"ns","uid":"u1",)"
                           R"("creationTimestamp":"2025-06-15T15:06:40Z",)"
                           R"("labels":{"team":"a"},"annotations":{"note":"x"}},)"
                           R"("spec":{)" +
                           std::string(spec) + R"("queue":"research","tasks":[)" + list + "]}}");
}

// The job most tests use: tasks ps (2 x 1 CPU) and worker (2 x 2 CPU),
// minAvailable 4, maxRetry 3.
inline Job TwoTaskJob(std::string_view spec = "", std::string_view ps = "",
                      std::string_view worker = "") {
  return JobOf(spec, {TaskJson("ps", 2, "1", ps), TaskJson("worker", 2, "2", worker)});
}

inline Job At(Job job, std::string_view phase, int32_t version = 0, int32_t retry_count = 0) {
  job.status.state.phase = std::string(phase);
  job.status.state.last_transition_time = kT0;
  job.status.version = version;
  job.status.retry_count = retry_count;
  job.status.min_available = job.spec.min_available;
  return job;
}

inline LifecyclePolicy On(std::string event, std::string action,
                          std::optional<Duration> timeout = std::nullopt) {
  return LifecyclePolicy{
      .event = std::move(event), .action = std::move(action), .timeout = timeout};
}
inline LifecyclePolicy OnEvents(std::vector<std::string> events, std::string action) {
  return LifecyclePolicy{.events = std::move(events), .action = std::move(action)};
}
inline LifecyclePolicy OnExit(int32_t code, std::string action) {
  return LifecyclePolicy{.exit_code = code, .action = std::move(action)};
}

inline TaskSpec& Task(Job& job, std::string_view name) {
  for (TaskSpec& task : job.spec.tasks) {
    if (task.name == name) return task;
  }
  ADD_FAILURE() << "no task " << name;
  return job.spec.tasks.front();
}

// --- Requests --------------------------------------------------------------

// `event` raised by pod j-<task>-<index> (uid as fixtures::MakeJobPod gives it).
inline Request From(std::string_view event, std::string_view task, int index, int32_t version = 0) {
  std::string pod = PodName("j", task, index);
  return Request{.event = std::string(event),
                 .task = std::string(task),
                 .pod = pod,
                 .pod_uid = "uid-" + pod,
                 .pod_version = version};
}

// An explicit action (a Command) aimed at pod j-<task>-<index> (the target
// of RestartTask / RestartPod).
inline Request Command(std::string_view action, std::string_view task = "worker", int index = 0) {
  Request r = From("", task, index);
  r.action = std::string(action);
  return r;
}

// --- Worlds ----------------------------------------------------------------

// A pod of `job` from a one-letter code: P Pending, R Running and ready,
// N Running not ready, S Succeeded, F Failed, U Unknown, D Running with a
// deletionTimestamp, O Running marked out-of-sync; '-' is no pod.
inline std::optional<Pod> CodedPod(const Job& job, std::string_view task, int index, char code) {
  fixtures::JobPodBuilder pod = fixtures::MakeJobPod(job, task, index).CreatedAt(kT0);
  switch (code) {
    case '-':
      return std::nullopt;
    case 'P':
      break;
    case 'R':
      pod.Ready();
      break;
    case 'N':
      pod.Ready(false);
      break;
    case 'S':
      pod.Phase("Succeeded");
      break;
    case 'F':
      pod.ExitCode(1);
      break;
    case 'U':
      pod.Phase("Unknown");
      break;
    case 'D':
      pod.Ready().Deleting(kT0);
      break;
    case 'O':
      pod.Ready().OutOfSync();
      break;
    default:
      ADD_FAILURE() << "bad pod code " << code;
  }
  return pod.Build();
}

// `job` with pods coded per task in order (ps-0 ps-1 worker-0 worker-1 for
// the two-task job) and a PodGroup at `group_phase` (nullopt = absent).
inline fixtures::JobWorld World(Job job, std::string_view pods,
                                std::optional<std::string_view> group_phase = std::nullopt) {
  fixtures::JobWorld w{.job = std::move(job)};
  size_t at = 0;
  for (const TaskSpec& task : w.job.spec.tasks) {
    for (int i = 0; i < task.replicas && at < pods.size(); ++i, ++at) {
      if (std::optional<Pod> pod = CodedPod(w.job, task.name, i, pods[at])) {
        w.pods.push_back(*pod);
      }
    }
  }
  EXPECT_EQ(at, pods.size()) << "more pod codes than replicas: " << pods;
  if (group_phase.has_value()) w.group = fixtures::MakeJobPodGroup(w.job, *group_phase);
  return w;
}

inline std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// The names of the pods `plan` kills, in its order.
inline std::vector<std::string> KilledNames(const Plan& plan) {
  std::vector<std::string> out;
  for (const PodKill& kill : plan.kill_pods) out.push_back(kill.name);
  return out;
}

inline std::vector<std::string> Names(std::initializer_list<const char*> pods) {
  std::vector<std::string> out;
  for (const char* p : pods) out.push_back(p);
  return Sorted(out);
}

inline std::vector<std::string> ConditionPhases(const JobStatus& status) {
  std::vector<std::string> out;
  for (const JobCondition& c : status.conditions) out.push_back(c.status);
  return out;
}

}  // namespace lifecycle_fixtures
}  // namespace muster::reconciler
