// ComputeShares and WaterFill: deserved shares down the queue tree.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "queue/queue.h"

namespace muster::queue {
namespace {

bool IsTopLevel(const std::string& parent) { return parent.empty() || parent == "root"; }

// The queue tree: children by parent ("" for the top level), with the
// problems met while building it.
struct Tree {
  std::map<std::string, const QueueState*> by_name;
  std::map<std::string, std::vector<std::string>> children;  // sorted
  std::map<std::string, std::string> parent;                 // "" for top level
  const QueueState* root = nullptr;
};

// True when following parents from `name` comes back to it.
bool InCycle(const std::map<std::string, const QueueState*>& by_name, const std::string& name) {
  std::set<std::string> seen;
  std::string at = name;
  while (true) {
    const auto it = by_name.find(at);
    if (it == by_name.end() || IsTopLevel(it->second->parent)) return false;
    if (!seen.insert(at).second) return true;
    at = it->second->parent;
    if (at == name) return true;
  }
}

Tree BuildTree(const std::vector<QueueState>& queues, std::vector<std::string>& problems) {
  Tree tree;
  for (const QueueState& q : queues) {
    if (q.name == "root") {
      tree.root = &q;
    } else {
      tree.by_name[q.name] = &q;
    }
  }
  for (const auto& [name, q] : tree.by_name) {
    std::string parent = IsTopLevel(q->parent) ? "" : q->parent;
    if (!parent.empty() && !tree.by_name.contains(parent)) {
      problems.push_back("queue " + name + ": parent " + parent +
                         " does not exist, treated as top level");
      parent.clear();
    } else if (!parent.empty() && InCycle(tree.by_name, name)) {
      problems.push_back("queue " + name + ": its parents form a cycle, treated as top level");
      parent.clear();
    }
    tree.parent[name] = parent;
    tree.children[parent].push_back(name);
  }
  return tree;
}

// Sums allocated and demand up the tree (post-order from `name`).
void Aggregate(const Tree& tree, const std::string& name, std::map<std::string, QueueShare>& out) {
  const QueueState& q = *tree.by_name.at(name);
  QueueShare& share = out[name];
  share.name = name;
  share.allocated = q.allocated;
  share.demand = q.allocated + q.pending;
  share.reclaimable = q.reclaimable;
  share.open = q.open;
  share.priority = q.priority;
  for (std::string at = name; !at.empty(); at = tree.parent.at(at)) share.path.push_back(at);
  if (const auto kids = tree.children.find(name); kids != tree.children.end()) {
    for (const std::string& child : kids->second) {
      Aggregate(tree, child, out);
      share.allocated += out[child].allocated;
      share.demand += out[child].demand;
    }
  }
}

int64_t CapOf(const QueueState& q, const std::string& resource, int64_t otherwise) {
  return q.capability && q.capability->Has(resource)
             ? std::min(q.capability->Get(resource), otherwise)
             : otherwise;
}

// Splits `capacity` of `resource` among `parent`'s children, then down.
void Distribute(const Tree& tree, const std::string& parent, const std::string& resource,
                int64_t capacity, std::map<std::string, QueueShare>& out) {
  const auto kids = tree.children.find(parent);
  if (kids == tree.children.end()) return;
  std::vector<std::string> filling;
  std::vector<Claimant> claimants;
  int64_t left = capacity;
  for (const std::string& name : kids->second) {
    const QueueState& q = *tree.by_name.at(name);
    if (q.deserved && q.deserved->Has(resource)) {
      const int64_t fixed = std::min(CapOf(q, resource, q.deserved->Get(resource)), left);
      out[name].deserved.Set(resource, std::max<int64_t>(fixed, 0));
      left -= std::max<int64_t>(fixed, 0);
      continue;
    }
    const int64_t cap = CapOf(q, resource, out[name].demand.Get(resource));
    const int64_t guaranteed =
        q.guarantee ? CapOf(q, resource, q.guarantee->Get(resource)) : int64_t{0};
    filling.push_back(name);
    claimants.push_back({.weight = static_cast<double>(std::max(q.weight, 1)),
                         .floor = std::max<int64_t>(guaranteed, 0),
                         .cap = std::max<int64_t>(cap, 0)});
  }
  const std::vector<int64_t> got = WaterFill(std::max<int64_t>(left, 0), claimants);
  for (size_t i = 0; i < filling.size(); ++i) out[filling[i]].deserved.Set(resource, got[i]);
  for (const std::string& name : kids->second) {
    Distribute(tree, name, resource, out[name].deserved.Get(resource), out);
  }
}

double Clamp(double value, const Claimant& c) {
  return std::clamp(value, static_cast<double>(c.floor), static_cast<double>(c.cap));
}

}  // namespace

std::vector<int64_t> WaterFill(int64_t capacity, const std::vector<Claimant>& claimants) {
  std::vector<Claimant> cs = claimants;
  double floors = 0, caps = 0, top = 0;
  for (Claimant& c : cs) {
    if (c.weight <= 0) c.weight = 1;
    c.floor = std::max<int64_t>(c.floor, 0);
    c.cap = std::max(c.cap, c.floor);
    floors += static_cast<double>(c.floor);
    caps += static_cast<double>(c.cap);
    top = std::max(top, static_cast<double>(c.cap) / c.weight);
  }
  const double room = static_cast<double>(std::max<int64_t>(capacity, 0));
  std::vector<int64_t> out(cs.size());
  if (floors >= room) {  // guarantees alone use it all: scaled together
    for (size_t i = 0; i < cs.size(); ++i) {
      out[i] =
          floors == 0 ? 0 : static_cast<int64_t>(static_cast<double>(cs[i].floor) * room / floors);
    }
    return out;
  }
  if (caps <= room) {
    for (size_t i = 0; i < cs.size(); ++i) out[i] = cs[i].cap;
    return out;
  }
  // The fill level: sum of clamp(weight * level) is monotone in the level.
  double lo = 0, hi = top;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double mid = (lo + hi) / 2;
    double used = 0;
    for (const Claimant& c : cs) used += Clamp(c.weight * mid, c);
    (used > room ? hi : lo) = mid;
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    // A hair above the level absorbs the search's rounding (5.9999 -> 6).
    out[i] = static_cast<int64_t>(std::floor(Clamp(cs[i].weight * lo, cs[i]) + 1e-6));
  }
  return out;
}

Shares ComputeShares(const std::vector<QueueState>& queues, const Resources& total) {
  Shares shares;
  Tree tree = BuildTree(queues, shares.problems);
  shares.total = total;
  shares.total.Erase(kPods);
  if (tree.root && tree.root->capability) {
    for (const auto& [name, amount] : tree.root->capability->entries()) {
      if (shares.total.Has(name)) shares.total.Set(name, std::min(shares.total.Get(name), amount));
    }
  }
  if (const auto top = tree.children.find(""); top != tree.children.end()) {
    for (const std::string& name : top->second) Aggregate(tree, name, shares.queues);
  }
  for (const auto& [resource, amount] : shares.total.entries()) {
    Distribute(tree, "", resource, amount, shares.queues);
  }
  for (auto& [name, q] : shares.queues) {
    q.allocated.Erase(kPods);
    q.demand.Erase(kPods);
    std::tie(q.share, q.dominant) = q.allocated.DominantShareWithName(q.deserved);
  }
  return shares;
}

}  // namespace muster::queue
