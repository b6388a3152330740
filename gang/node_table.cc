#include "gang/node_table.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "gang/feasibility.h"
#include "model/resources.h"

namespace muster::gang {
namespace {

void AddDims(const Gang& gang, PodFacts& facts, std::vector<std::string>& names) {
  for (const Member& m : gang.members) {
    if (!AwaitsPlacement(m)) continue;
    for (const auto& [name, amount] : facts.Of(*m.pod).slot.entries()) {
      if (amount > 0) names.push_back(name);
    }
  }
}

std::vector<std::string> Sorted(std::vector<std::string> names) {
  names.insert(names.end(), {std::string(kCpu), std::string(kNvidiaGpu), std::string(kPods)});
  std::ranges::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// The pod's scheduling constraints alone: what NodeAdmits reads of it.
Pod ConstraintsOf(const Pod& pod) {
  Pod out;
  out.spec.node_selector = pod.spec.node_selector;
  out.spec.affinity = pod.spec.affinity;
  out.spec.tolerations = pod.spec.tolerations;
  return out;
}

bool SameConstraints(const Pod& a, const Pod& b) {
  return a.spec.node_selector == b.spec.node_selector && a.spec.affinity == b.spec.affinity &&
         a.spec.tolerations == b.spec.tolerations;
}

}  // namespace

const PodFacts::Facts& PodFacts::Of(const Pod& pod) {
  std::unique_ptr<Facts>& facts = facts_[&pod];
  if (facts != nullptr) return *facts;
  facts = std::make_unique<Facts>();
  facts->request = pod.EffectiveRequest();
  facts->slot = WithPodSlot(facts->request);
  if (StatusOr<GpuDemand> gpu = GpuDemandOf(pod); gpu.ok()) {
    facts->shares = std::move(gpu->shares);
  } else {
    facts->gpu_request_ok = false;
  }
  return *facts;
}

std::vector<std::string> NodeTable::DimsOf(const std::vector<Gang>& gangs, PodFacts& facts) {
  std::vector<std::string> names;
  for (const Gang& gang : gangs) AddDims(gang, facts, names);
  return Sorted(std::move(names));
}

std::vector<std::string> NodeTable::DimsOf(const Gang& gang, PodFacts& facts) {
  std::vector<std::string> names;
  AddDims(gang, facts, names);
  return Sorted(std::move(names));
}

NodeTable::NodeTable(const ClusterView& view, std::vector<std::string> dims, Source source,
                     std::shared_ptr<PodFacts> facts)
    : view_(view),
      dims_(std::move(dims)),
      source_(source),
      facts_(facts != nullptr ? std::move(facts) : std::make_shared<PodFacts>()) {
  cpu_ = static_cast<size_t>(std::ranges::find(dims_, kCpu) - dims_.begin());
  gpu_ = static_cast<size_t>(std::ranges::find(dims_, kNvidiaGpu) - dims_.begin());
  const size_t nodes = view.nodes.size();
  rows_.resize(nodes * dims_.size());
  zeros_.assign(dims_.size(), 0);
  free_gpus_.assign(nodes, 0);
  uses_.assign(nodes, GpuUses{});
  excluded_.assign(nodes, 0);
  for (size_t n = 0; n < nodes; ++n) Load(n);
}

std::vector<int64_t> NodeTable::Row(const Resources& r) const {
  std::vector<int64_t> row(dims_.size(), 0);
  AddRow(r, row.data());
  return row;
}

void NodeTable::AddRow(const Resources& r, int64_t* row) const {
  // Both sorted by name: one merge instead of a search per resource. Most
  // have the same names as dims(), so equality is tried first.
  const auto& entries = r.entries();
  size_t e = 0;
  for (size_t d = 0; d < dims_.size() && e < entries.size(); ++d) {
    while (e < entries.size()) {
      const std::string& name = entries[e].first;
      if (name == dims_[d]) {
        row[d] += entries[e++].second;
        break;
      }
      if (dims_[d] < name) break;
      ++e;
    }
  }
}

// Node n as the view has it, by the table's source.
void NodeTable::Load(size_t n) {
  const NodeView& node = view_.nodes[n];
  const Resources& amounts = source_ == Source::kFree ? node.free : node.node->allocatable;
  int64_t* row = &rows_[n * dims_.size()];
  std::fill(row, row + dims_.size(), 0);
  AddRow(amounts, row);
  switch (source_) {
    case Source::kFree:
      free_gpus_[n] = node.free_gpus;
      uses_[n] = node.gpu_uses;
      break;
    case Source::kAllocatable:
      free_gpus_[n] = 0;
      uses_[n] = {};
      break;
    case Source::kEmptied:
      free_gpus_[n] = node.gpu_cards ? (uint32_t{1} << node.gpu_cards->size()) - 1 : node.free_gpus;
      uses_[n] = {};
      break;
  }
}

void NodeTable::Save(size_t n) {
  undo_.push_back(
      Undo{.node = static_cast<uint32_t>(n), .free_gpus = free_gpus_[n], .uses = uses_[n]});
  const auto row = rows_.begin() + static_cast<ptrdiff_t>(n * dims_.size());
  undo_rows_.insert(undo_rows_.end(), row, row + static_cast<ptrdiff_t>(dims_.size()));
}

void NodeTable::Change(size_t n, const std::vector<int64_t>& amount, int sign, uint32_t free_gpus,
                       const GpuUses& uses) {
  Save(n);
  int64_t* row = &rows_[n * dims_.size()];
  for (size_t d = 0; d < dims_.size(); ++d) row[d] += sign * amount[d];
  free_gpus_[n] = free_gpus;
  uses_[n] = uses;
  if (indexed_) Reindex(n);
}

void NodeTable::Rollback(size_t mark) {
  while (undo_.size() > mark) {
    const Undo& undo = undo_.back();
    const size_t n = undo.node;
    free_gpus_[n] = undo.free_gpus;
    uses_[n] = undo.uses;
    const auto from = undo_rows_.end() - static_cast<ptrdiff_t>(dims_.size());
    std::copy(from, undo_rows_.end(), rows_.begin() + static_cast<ptrdiff_t>(n * dims_.size()));
    undo_rows_.erase(from, undo_rows_.end());
    undo_.pop_back();
    if (indexed_) Reindex(n);
  }
}

void NodeTable::Sync(size_t n) {
  Load(n);
  if (indexed_) Reindex(n);
}

void NodeTable::Exclude(size_t n) {
  excluded_[n] = 1;
  if (indexed_) Reindex(n);
}

void NodeTable::Include(size_t n) {
  excluded_[n] = 0;
  if (indexed_) Reindex(n);
}

int NodeTable::AdmitsClass(const Pod& pod) {
  for (size_t i = 0; i < admits_.size(); ++i) {
    if (SameConstraints(admits_[i].pod, pod)) return static_cast<int>(i);
  }
  admits_.push_back(AdmitsRow{.pod = ConstraintsOf(pod), .row = std::vector<int8_t>(size(), -1)});
  return static_cast<int>(admits_.size() - 1);
}

bool NodeTable::Admits(int admits_class, size_t n) const {
  const AdmitsRow& a = admits_[static_cast<size_t>(admits_class)];
  if (a.row[n] < 0) a.row[n] = NodeAdmits(view_.nodes[n], a.pod) ? 1 : 0;
  return a.row[n] != 0;
}

bool NodeTable::AdmitsAny(int admits_class) const {
  for (size_t n = 0; n < size(); ++n) {
    if (Admits(admits_class, n)) return true;
  }
  return false;
}

std::optional<GpuPick> NodeTable::Pick(const GpuLayout& layout, uint32_t free, int k) const {
  const auto key = std::tuple(&layout, free, k);
  auto it = picks_.find(key);
  if (it == picks_.end()) it = picks_.emplace(key, layout.Pick(free, k)).first;
  return it->second;
}

// ---- The index.

void NodeTable::BuildIndex() {
  indexed_ = true;
  while (width_ < size()) width_ *= 2;
  bucket_of_.assign(size(), kNone);
  cpu_of_.assign(size(), 0);
  for (size_t n = 0; n < size(); ++n) Reindex(n);
}

// Only what may fit: a node that is not schedulable admits no pod.
bool NodeTable::Indexable(size_t n) const {
  return view_.nodes[n].schedulable && excluded_[n] == 0;
}

void NodeTable::Reindex(size_t n) {
  Restat(n);
  uint32_t id = kNone;
  const int64_t* row = &rows_[n * dims_.size()];
  if (Indexable(n)) id = BucketOf(view_.nodes[n].gpu_layout.get(), free_gpus_[n], row[gpu_]);
  if (id == bucket_of_[n] && (id == kNone || cpu_of_[n] == row[cpu_])) return;
  if (bucket_of_[n] != kNone) {
    buckets_[bucket_of_[n]].nodes.erase({cpu_of_[n], static_cast<uint32_t>(n)});
  }
  bucket_of_[n] = id;
  if (id == kNone) return;
  cpu_of_[n] = row[cpu_];
  buckets_[id].nodes.emplace(row[cpu_], static_cast<uint32_t>(n));
}

uint32_t NodeTable::BucketOf(const GpuLayout* layout, uint32_t mask, int64_t gpus) {
  const auto key = std::tuple(layout, mask, gpus);
  if (auto it = bucket_ids_.find(key); it != bucket_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(buckets_.size());
  buckets_.push_back(Bucket{.layout = layout, .mask = mask, .gpus = gpus, .nodes = {}});
  bucket_ids_.emplace(key, id);
  for (auto& [k, order] : orders_) Place(order, k, id);
  return id;
}

std::pair<int, int> NodeTable::KeyOf(const Bucket& bucket, int k) const {
  if (bucket.layout == nullptr || k <= 0) return {0, 0};
  const std::optional<GpuPick> pick = Pick(*bucket.layout, bucket.mask, k);
  return pick ? std::pair(-pick->link, pick->damage) : std::pair(0, 0);
}

void NodeTable::Place(Order& order, int k, uint32_t id) const {
  order.key.resize(buckets_.size());
  order.key[id] = KeyOf(buckets_[id], k);
  const auto rank = [&](uint32_t b) { return std::tuple(order.key[b], buckets_[b].gpus, b); };
  order.ids.insert(std::ranges::upper_bound(order.ids, rank(id), {}, rank), id);
}

const NodeTable::Order& NodeTable::OrderOf(int k) const {
  auto it = orders_.find(k);
  if (it != orders_.end()) return it->second;
  Order& order = orders_[k];
  for (uint32_t id = 0; id < buckets_.size(); ++id) Place(order, k, id);
  return order;
}

// ---- The trees behind Largest and CountBelow.

const NodeTable::Stats& NodeTable::StatsOf(int admits_class) const {
  if (auto it = stats_.find(admits_class); it != stats_.end()) return it->second;
  Stats& s = stats_[admits_class];
  const size_t dims = dims_.size();
  s.min.assign(dims * 2 * width_, std::numeric_limits<int64_t>::max());
  s.max.assign(dims * 2 * width_, std::numeric_limits<int64_t>::min());
  s.count.assign(2 * width_, 0);
  for (size_t n = 0; n < size(); ++n) {
    if (!Admits(admits_class, n)) continue;
    s.count[width_ + n] = 1;
    const int64_t* free = Free(n);
    for (size_t d = 0; d < dims; ++d) {
      s.min[d * 2 * width_ + width_ + n] = s.max[d * 2 * width_ + width_ + n] = free[d];
    }
  }
  for (size_t i = width_; i-- > 1;) {
    s.count[i] = s.count[2 * i] + s.count[2 * i + 1];
    for (size_t d = 0; d < dims; ++d) {
      const size_t b = d * 2 * width_;
      s.min[b + i] = std::min(s.min[b + 2 * i], s.min[b + 2 * i + 1]);
      s.max[b + i] = std::max(s.max[b + 2 * i], s.max[b + 2 * i + 1]);
    }
  }
  return s;
}

void NodeTable::Restat(size_t n) const {
  for (auto& [admits_class, s] : stats_) {
    if (s.count[width_ + n] == 0) continue;
    const int64_t* free = Free(n);
    for (size_t d = 0; d < dims_.size(); ++d) {
      const size_t b = d * 2 * width_;
      size_t i = width_ + n;
      s.min[b + i] = s.max[b + i] = free[d];
      for (i /= 2; i >= 1; i /= 2) {
        s.min[b + i] = std::min(s.min[b + 2 * i], s.min[b + 2 * i + 1]);
        s.max[b + i] = std::max(s.max[b + 2 * i], s.max[b + 2 * i + 1]);
      }
    }
  }
}

int64_t NodeTable::Largest(int admits_class, size_t d) const {
  return StatsOf(admits_class).max[d * 2 * width_ + 1];
}

int64_t NodeTable::CountBelow(int admits_class, size_t d, int64_t x) const {
  return CountBelow(StatsOf(admits_class), d * 2 * width_, 1, x);
}

int64_t NodeTable::CountBelow(const Stats& s, size_t base, size_t i, int64_t x) const {
  if (s.min[base + i] >= x) return 0;
  if (s.max[base + i] < x) return s.count[i];
  return CountBelow(s, base, 2 * i, x) + CountBelow(s, base, 2 * i + 1, x);
}

}  // namespace muster::gang
