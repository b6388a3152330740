// Volcano Jobs as JSON for the JobController's tests over an API
// (controller_expectations_test.cc, controller_writes_test.cc,
// controller_crash_test.cc): one task "worker" of 1-CPU pods, in the
// fixture's namespace.
//
// Header-only, test code only.
#pragma once

#include <string>

namespace muster::reconciler::fixtures {

// The tasks array: "worker" with `replicas` pods.
inline std::string WorkerTasksJson(int replicas) {
  return R"([{"name":"worker","replicas":)" + std::to_string(replicas) +
         R"(,"template":{"spec":{"containers":[{"name":"c","image":"img:1",)"
         R"("resources":{"requests":{"cpu":"1"}}}]}}}])";
}

// Job `name` with `replicas` workers; `svc`: with the svc plugin (a
// Service, the hosts ConfigMap <name>-svc and a NetworkPolicy);
// `more_spec`: more fields of the spec, each followed by a comma
// (R"("maxRetry":5,)").
inline std::string WorkerJobJson(const std::string& name, int replicas, bool svc,
                                 const std::string& more_spec = "") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","generation":1},"spec":{"queue":"default",)" + more_spec +
         (svc ? R"("plugins":{"svc":[]},)" : "") + R"("tasks":)" + WorkerTasksJson(replicas) + "}}";
}

}  // namespace muster::reconciler::fixtures
