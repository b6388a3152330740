// The node table's machinery under ClusterState (cluster_state.h): how a node
// name finds its NodeInfo fast enough for the thousands of candidates of a
// filter or prioritize, and where NodeInfos are allocated.
//
// ClusterState keeps its nodes in a table of slots (NodeSlots), shared with
// its snapshots and copied on write. NodeIndex maps a name to its slot; its
// FindEach pipelines many lookups with prefetches; NewNodeInfo allocates the
// NodeInfos close together. None of it changes what a lookup answers, only
// how fast (the 5000-node filter and prioritize benchmarks in bench/).
//
// Thread-safety: a NodeIndex is a value, not thread-safe; a const one may be
// read from any thread (a snapshot's). NewNodeInfo is thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace muster::extender {

struct NodeInfo;  // cluster_state.h
using NodeSlots = std::vector<std::shared_ptr<const NodeInfo>>;

// A copy of `from`, its memory (with its shared_ptr control block) from
// slabs that keep the NodeInfos of a cluster on a few hundred pages instead of
// one page each: visiting 5000 of them then costs far fewer TLB misses
// (measured: 40% of the lookup at 5000 nodes). Thread-safe.
std::shared_ptr<NodeInfo> NewNodeInfo(const NodeInfo& from);

namespace internal {

// Asks for the cache line of `p`, to be read soon; never faults.
inline void PrefetchLine(const void* p) { __builtin_prefetch(p, /*rw=*/0, /*locality=*/3); }

}  // namespace internal

// Node name -> slot in a NodeSlots table: open addressing with linear
// probing over (hash, slot) pairs, the names being those of the slots. A
// lookup reads one place in a flat array and then the NodeInfo it needs
// anyway, where a node-based hash map chases two more pointers: the filter
// of 5000 candidates does 5000 lookups. Copying it (copy-on-write after a
// snapshot) is one vector copy.
class NodeIndex {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  // The slot named `name`, or kNone.
  uint32_t Find(std::string_view name, const NodeSlots& slots) const;
  // Calls fn(i, node) for every names[i] in order, node being the NodeInfo
  // of Find(names[i]) or null. The lookups are pipelined: each one's index
  // entry and NodeInfo are prefetched a few names ahead, so the cache misses
  // of thousands of lookups overlap instead of queueing, and fn reads the
  // NodeInfo while it is still cached. `Info` is NodeInfo (deduced, so that
  // this header needs only its declaration): it has `name` and
  // PrefetchHotFields().
  template <typename Info, typename Fn>
  void FindEach(std::span<const std::string_view> names,
                const std::vector<std::shared_ptr<const Info>>& slots, Fn&& fn) const;
  // REQUIRES: no slot named `name` in the index; slots[slot]->name == name.
  void Insert(std::string_view name, uint32_t slot);
  // Removes `name` if present. REQUIRES: its slot still holds its NodeInfo.
  void Erase(std::string_view name, const NodeSlots& slots);
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t slot = kNone;  // kNone: empty
  };
  static uint64_t Hash(std::string_view name) { return std::hash<std::string_view>{}(name); }
  size_t Position(std::string_view name, const NodeSlots& slots) const;  // table_.size(): absent
  size_t Position(std::string_view name, uint64_t hash, const NodeSlots& slots) const;
  // The slot of the first entry of `hash`'s probe run holding `hash`, or
  // kNone: then no name with that hash is in the index.
  uint32_t FirstSlotWithHash(uint64_t hash) const {
    const size_t mask = table_.size() - 1;
    for (size_t i = hash & mask; table_[i].slot != kNone; i = (i + 1) & mask) {
      if (table_[i].hash == hash) return table_[i].slot;
    }
    return kNone;
  }
  void Grow();

  std::vector<Entry> table_;  // size a power of two (or 0), at most half full
  size_t size_ = 0;
};

template <typename Info, typename Fn>
void NodeIndex::FindEach(std::span<const std::string_view> names,
                         const std::vector<std::shared_ptr<const Info>>& slots, Fn&& fn) const {
  const size_t n = names.size();
  if (table_.empty()) {
    for (size_t i = 0; i < n; ++i) fn(i, static_cast<const Info*>(nullptr));
    return;
  }
  // How many names apart the stages run: far enough for a miss to resolve
  // behind the other names' work, near enough that what was fetched is still
  // in L1 when it is used.
  constexpr size_t kAhead = 8;
  // What a name carries from stage to stage, for the 3 * kAhead names in
  // flight (a ring, not a vector per request: thousands of names).
  struct InFlight {
    uint64_t hash = 0;
    uint32_t hint = kNone;  // FirstSlotWithHash(hash)
  };
  constexpr size_t kRing = 32;  // a power of two > 3 * kAhead
  static_assert(kRing > 3 * kAhead && (kRing & (kRing - 1)) == 0);
  std::array<InFlight, kRing> ring;
  // Four stages kAhead names apart, each following one pointer that the
  // stage before brought near: name i's home index entry, then the slot
  // holding its hash (the hint), then the NodeInfo in that slot, then the
  // lookup and fn, on cached lines. The hint decides only once its name
  // compares equal; a rare hash collision takes the full lookup.
  for (size_t i = 0; i < n + 3 * kAhead; ++i) {
    if (i < n) {
      InFlight& first = ring[i % kRing];
      first = InFlight{.hash = Hash(names[i])};
      internal::PrefetchLine(&table_[first.hash & (table_.size() - 1)]);
    }
    if (i >= kAhead && i - kAhead < n) {
      InFlight& second = ring[(i - kAhead) % kRing];
      second.hint = FirstSlotWithHash(second.hash);
      if (second.hint != kNone) internal::PrefetchLine(&slots[second.hint]);
    }
    if (i >= 2 * kAhead && i - 2 * kAhead < n) {
      const InFlight& third = ring[(i - 2 * kAhead) % kRing];
      if (third.hint != kNone) slots[third.hint]->PrefetchHotFields();
    }
    if (i < 3 * kAhead) continue;
    const size_t k = i - 3 * kAhead;
    const InFlight& last = ring[k % kRing];
    const Info* node = nullptr;
    if (last.hint != kNone) {
      node = slots[last.hint].get();
      if (node->name != names[k]) {
        const size_t at = Position(names[k], last.hash, slots);
        node = at < table_.size() ? slots[table_[at].slot].get() : nullptr;
      }
    }
    fn(k, node);
  }
}

}  // namespace muster::extender
