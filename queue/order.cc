// RankGangs: the order in which pending gangs are planned.
#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
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

// The queue tree flattened for the ranking loop: every queue's children,
// its waiting gangs and its share as the ranking goes.
struct Ranking {
  struct Node {
    const QueueShare* queue = nullptr;
    int parent = -1;  // -1: top level
    std::vector<int> children;
    std::deque<const PendingGang*> waiting;  // in job order
    int waiting_below = 0;                   // in this subtree
    Resources allocated;
    double share = 0;
  };
  std::vector<Node> nodes;
  std::vector<int> top;  // top-level queues

  explicit Ranking(const Shares& shares) {
    std::map<std::string, int> id;
    for (const auto& [name, q] : shares.queues) {
      id[name] = static_cast<int>(nodes.size());
      nodes.push_back(Node{.queue = &q, .allocated = q.allocated, .share = q.share});
    }
    for (Node& node : nodes) {
      const std::vector<std::string>& path = node.queue->path;
      const int self = id.at(path.front());
      if (path.size() > 1) {
        node.parent = id.at(path[1]);
        nodes[node.parent].children.push_back(self);
      } else {
        top.push_back(self);
      }
    }
  }

  // (higher priority first, lower share, name): the order among siblings.
  bool Before(int a, int b) const {
    const Node& x = nodes[a];
    const Node& y = nodes[b];
    return std::tie(y.queue->priority, x.share, x.queue->name) <
           std::tie(x.queue->priority, y.share, y.queue->name);
  }

  // Walks down from the top picking the neediest child with gangs waiting
  // in its subtree; a queue's own gangs go before its children's.
  int Next() const {
    const std::vector<int>* level = &top;
    for (;;) {
      int best = -1;
      for (int n : *level) {
        if (nodes[n].waiting_below > 0 && (best < 0 || Before(n, best))) best = n;
      }
      if (best < 0 || !nodes[best].waiting.empty()) return best;
      level = &nodes[best].children;
    }
  }

  // Takes the next gang of queue `n`.
  const PendingGang* Take(int n) {
    const PendingGang* gang = nodes[n].waiting.front();
    nodes[n].waiting.pop_front();
    for (int at = n; at >= 0; at = nodes[at].parent) --nodes[at].waiting_below;
    Grow(n, gang->request);
    return gang;
  }

  // The share of queue `n` and its ancestors grows by `request`.
  void Grow(int n, const Resources& request) {
    for (int at = n; at >= 0; at = nodes[at].parent) {
      Node& node = nodes[at];
      node.allocated += request;
      node.share = node.allocated.DominantShare(node.queue->deserved);
    }
  }
};

}  // namespace

std::vector<std::string> RankGangs(const Shares& shares, const std::vector<PendingGang>& gangs) {
  // Job order, with each job's share computed once.
  std::vector<std::pair<double, const PendingGang*>> by_job;
  by_job.reserve(gangs.size());
  for (const PendingGang& gang : gangs) by_job.emplace_back(JobShare(gang, shares.total), &gang);
  std::ranges::sort(by_job, [](const auto& a, const auto& b) {
    const PendingGang& x = *a.second;
    const PendingGang& y = *b.second;
    return std::tie(y.priority, a.first, x.created, x.key) <
           std::tie(x.priority, b.first, y.created, y.key);
  });
  Ranking ranking(shares);
  std::map<std::string_view, int> id;
  for (size_t i = 0; i < ranking.nodes.size(); ++i) {
    id[ranking.nodes[i].queue->name] = static_cast<int>(i);
  }
  std::vector<std::string> order;
  order.reserve(gangs.size());
  std::vector<const PendingGang*> unknown;
  // Claims first, in job order; the rest queue up behind them.
  std::stable_partition(by_job.begin(), by_job.end(),
                        [](const auto& job) { return job.second->claims; });
  for (const auto& [job_share, gang] : by_job) {
    const auto it = id.find(gang->queue);
    if (it == id.end()) {
      unknown.push_back(gang);
      continue;
    }
    if (gang->claims) {
      order.push_back(gang->key);
      ranking.Grow(it->second, gang->request);
      continue;
    }
    ranking.nodes[it->second].waiting.push_back(gang);
    for (int at = it->second; at >= 0; at = ranking.nodes[at].parent) {
      ++ranking.nodes[at].waiting_below;
    }
  }
  for (int n = ranking.Next(); n >= 0; n = ranking.Next()) order.push_back(ranking.Take(n)->key);
  for (const PendingGang* gang : unknown) order.push_back(gang->key);
  return order;
}

}  // namespace muster::queue
