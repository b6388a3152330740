// libFuzzer target: one document, read as each thing the command line gets
// from the cluster - muster's /debug/state, a Job, a JobList, a QueueList, a
// PodGroupList - and printed through every pure screen that takes it (why,
// job list/view, queue list/get, -o json|yaml). Whatever the bytes, no
// crash, no sanitizer report: a user's terminal never sees an abort because
// an object or muster's answer is odd.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/job_view.h"
#include "cmd/cli/output.h"
#include "cmd/cli/queue_view.h"
#include "cmd/cli/why_explain.h"
#include "cmd/cli/why_inputs.h"
#include "kube/codec/volcano_codec.h"

namespace {

using namespace muster;       // NOLINT(build/namespaces): a fuzz entry point
using namespace muster::cli;  // NOLINT(build/namespaces)

const Time kNow = Time::FromUnixSeconds(1'800'000'000);

void Why(std::string_view text) {
  WhyInputs in;
  in.ns = "ml";
  in.asked.kind = WhyKind::kJob;
  in.asked.name = "train";
  if (StatusOr<DebugState> state = DecodeDebugState(text); state.ok()) in.muster = *state;
  if (StatusOr<Job> job = kube::DecodeJob(text); job.ok()) {
    in.job = *job;
    in.needs = MemberNeedsOf(in.job, {});
  }
  if (StatusOr<PodGroup> group = kube::DecodePodGroup(text); group.ok()) in.pod_group = *group;
  if (StatusOr<Queue> queue = kube::DecodeQueue(text); queue.ok()) in.queue = *queue;
  (void)ExplainWhy(in);
}

void Jobs(std::string_view text) {
  if (StatusOr<kube::ObjectList<Job>> jobs = kube::DecodeJobList(text); jobs.ok()) {
    (void)JobTable(jobs->items, {.all_namespaces = true, .wide = true}, kNow).Render();
  }
  if (StatusOr<Job> job = kube::DecodeJob(text); job.ok()) (void)JobViewText(*job, {}, kNow);
}

void Queues(std::string_view text) {
  DeservedShares deserved;
  if (auto parsed = ParseDeserved(text); parsed.ok()) deserved = *parsed;
  std::map<std::string, PodGroupCounts> counts;
  if (auto groups = kube::DecodePodGroupList(text); groups.ok()) {
    counts = CountPodGroups(groups->items);
  }
  if (auto queues = kube::DecodeQueueList(text); queues.ok()) {
    (void)QueueTable(queues->items, counts, true, deserved).Render();
    for (const Queue& q : queues->items)
      (void)QueueViewText(q, counts[q.meta.name], deserved, kNow);
  }
}

void Printed(std::string_view text) {
  if (auto items = ListItems(text); items.ok()) {
    (void)FormatObjects(*items, true, OutputFormat::kJson);
    (void)FormatObjects(*items, true, OutputFormat::kYaml);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Why(text);
  Jobs(text);
  Queues(text);
  Printed(text);
  return 0;
}
