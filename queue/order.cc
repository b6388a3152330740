// RankGangs: the order in which pending gangs are planned.
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "queue/queue.h"

namespace muster::queue {
namespace {

// The share that orders a job inside its queue: what it holds, as a dominant
// share of the cluster. A gang still assembling its minimum counts 0, so a
// partly placed gang is not pushed behind fresh ones (Volcano #5805).
double JobShare(const PendingGang& gang, const Resources& total) {
  return gang.minimum_met ? gang.allocated.DominantShare(total) : 0.0;
}

bool JobOrder(const PendingGang& a, const PendingGang& b, const Resources& total) {
  const double sa = JobShare(a, total), sb = JobShare(b, total);
  return std::tuple(-a.priority, sa, a.created, a.key) <
         std::tuple(-b.priority, sb, b.created, b.key);
}

// Where a queue stands when the next gang is chosen: at each level of its
// path from the top, (higher priority first, lower share, name). The queue
// with the smallest key is the one a walk down the tree picking the
// neediest child at every level reaches.
using Step = std::tuple<int32_t, double, std::string>;

std::vector<Step> StandingOf(const Shares& shares,
                             const std::map<std::string, Resources>& allocated,
                             const std::string& queue) {
  const std::vector<std::string>& path = shares.queues.at(queue).path;
  std::vector<Step> key;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const QueueShare& q = shares.queues.at(*it);
    key.emplace_back(-q.priority, allocated.at(*it).DominantShare(q.deserved), *it);
  }
  return key;
}

}  // namespace

std::vector<std::string> RankGangs(const Shares& shares, std::vector<PendingGang> gangs) {
  std::ranges::sort(gangs, [&](const PendingGang& a, const PendingGang& b) {
    return JobOrder(a, b, shares.total);
  });
  std::map<std::string, std::deque<const PendingGang*>> waiting;  // by queue, in job order
  std::vector<const PendingGang*> unknown;
  for (const PendingGang& gang : gangs) {
    if (shares.queues.contains(gang.queue)) {
      waiting[gang.queue].push_back(&gang);
    } else {
      unknown.push_back(&gang);
    }
  }
  std::map<std::string, Resources> allocated;  // as the ranking goes, every queue
  for (const auto& [name, q] : shares.queues) allocated[name] = q.allocated;

  std::vector<std::string> order;
  order.reserve(gangs.size());
  while (!waiting.empty()) {
    std::optional<std::vector<Step>> best;
    std::string chosen;
    for (const auto& [queue, list] : waiting) {
      std::vector<Step> standing = StandingOf(shares, allocated, queue);
      if (!best || standing < *best) {
        best = std::move(standing);
        chosen = queue;
      }
    }
    std::deque<const PendingGang*>& list = waiting[chosen];
    const PendingGang* next = list.front();
    list.pop_front();
    order.push_back(next->key);
    for (const std::string& at : shares.queues.at(chosen).path) allocated[at] += next->request;
    if (list.empty()) waiting.erase(chosen);
  }
  for (const PendingGang* gang : unknown) order.push_back(gang->key);
  return order;
}

}  // namespace muster::queue
