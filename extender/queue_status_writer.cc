#include "extender/queue_status_writer.h"

#include <utility>

namespace muster::extender {
namespace {

// What each Queue's status should say: allocated from the shares, and its
// PodGroups counted by phase.
std::map<std::string, QueueStatus> Wanted(const std::map<std::string, Queue, std::less<>>& queues,
                                          const QueueStep& step,
                                          const std::vector<GangPhase>& phases) {
  std::map<std::string, QueueStatus> wanted;
  for (const auto& [name, q] : queues) {
    QueueStatus& st = wanted[name];
    st = q.status;
    st.allocated = Resources();
    const auto share = step.shares.queues.find(name);
    for (const auto& [resource, total] : step.shares.total.entries()) {
      st.allocated.Set(
          resource, share == step.shares.queues.end() ? 0 : share->second.allocated.Get(resource));
    }
    st.pending = st.running = st.inqueue = st.unknown = st.completed = 0;
  }
  for (const auto& [key, phase] : phases) {
    const auto queue = step.queue_of.find(key);
    const auto q = queue == step.queue_of.end() ? wanted.end() : wanted.find(queue->second);
    if (q == wanted.end()) continue;
    QueueStatus& st = q->second;
    if (phase == kPodGroupRunning)
      ++st.running;
    else if (phase == kPodGroupInqueue)
      ++st.inqueue;
    else if (phase == kPodGroupUnknown)
      ++st.unknown;
    else if (phase == kPodGroupCompleted)
      ++st.completed;
    else
      ++st.pending;
  }
  return wanted;
}

}  // namespace

std::vector<QueueStatusWrite> PlanQueueStatusWrites(
    const std::map<std::string, Queue, std::less<>>& queues, const QueueStep& step,
    const std::vector<GangPhase>& phases, Time now, std::chrono::milliseconds interval,
    QueueStatusRecords& records) {
  std::vector<QueueStatusWrite> out;
  for (auto& [name, st] : Wanted(queues, step, phases)) {
    const Queue& seen = queues.find(name)->second;
    const auto last = records.find(name);
    const QueueStatus& before = last == records.end() ? seen.status : last->second.written;
    if (st == before || st == seen.status) continue;
    if (last != records.end() && now - last->second.at < interval) continue;
    records[name] = {.written = st, .at = now};
    out.push_back({name, std::move(st)});
  }
  std::erase_if(records, [&](const auto& entry) { return !queues.contains(entry.first); });
  return out;
}

}  // namespace muster::extender
