// The node table's index and allocator (node_index.h).
#include "extender/node_index.h"

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "extender/cluster_state.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace muster::extender {
namespace {

// Hands out the memory of NodeInfos (each with its shared_ptr control block)
// from 64 KiB slabs, reusing freed blocks last in, first out. A filter or
// prioritize reads the NodeInfo of every candidate: allocated one by one
// between the pod records of the same events, 5000 of them lie on 5000
// different pages, and the TLB misses of visiting them cost more than the
// reads (measured: 40% of the lookup at 5000 nodes). From the slabs they
// share a few hundred pages, whatever the order of events. One pool serves
// the process and is never freed: a NodeInfo may outlive its ClusterState in
// a snapshot, and the pool must outlive every NodeInfo.
//
// Thread-safety: thread-safe. A NodeInfo dies with the last snapshot holding
// it, on whichever thread drops that snapshot.
class NodeInfoPool {
 public:
  // A cache-line multiple, at least the control block with its NodeInfo
  // (checked by PoolAllocator).
  static constexpr size_t kBlockBytes = 576;
  static constexpr size_t kBlocksPerSlab = 256;

  static NodeInfoPool& Get() {
    static auto* pool = new NodeInfoPool();
    return *pool;
  }

  void* Allocate() {
    base::MutexLock lock(&mu_);
    if (free_.empty()) Grow();
    void* block = free_.back();
    free_.pop_back();
    Unpoison(block);
    return block;
  }
  // REQUIRES: `block` came from Allocate().
  void Free(void* block) {
    base::MutexLock lock(&mu_);
    Poison(block);
    free_.push_back(block);  // never reallocates: Grow() reserved a place for every block
  }

 private:
  struct alignas(64) Slab {
    std::byte bytes[kBlockBytes * kBlocksPerSlab];
  };
  void Grow() MUSTER_REQUIRES(mu_) {
    slabs_.push_back(std::make_unique<Slab>());
    free_.reserve(slabs_.size() * kBlocksPerSlab);
    // Pushed in reverse, so the blocks go out in address order.
    for (size_t i = kBlocksPerSlab; i-- > 0;) {
      free_.push_back(slabs_.back()->bytes + i * kBlockBytes);
      Poison(free_.back());
    }
  }
  // Under AddressSanitizer a free block is poisoned, so a use after free of
  // a NodeInfo is still caught though the block is not returned to malloc.
  static void Poison(void* block) {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_POISON_MEMORY_REGION(block, kBlockBytes);
#else
    (void)block;
#endif
  }
  static void Unpoison(void* block) {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(block, kBlockBytes);
#else
    (void)block;
#endif
  }

  base::Mutex mu_;
  std::vector<std::unique_ptr<Slab>> slabs_ MUSTER_GUARDED_BY(mu_);
  std::vector<void*> free_ MUSTER_GUARDED_BY(mu_);
};

// The allocator std::allocate_shared uses for NodeInfos (rebound to its
// control block type). Stateless, so the control block carries nothing more.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& /*other*/) {}  // NOLINT: rebinding converts implicitly

  T* allocate(size_t n) {
    static_assert(sizeof(T) <= NodeInfoPool::kBlockBytes && alignof(T) <= 64,
                  "raise NodeInfoPool::kBlockBytes");
    if (n != 1) return std::allocator<T>().allocate(n);  // not how allocate_shared asks
    return static_cast<T*>(NodeInfoPool::Get().Allocate());
  }
  void deallocate(T* p, size_t n) {
    if (n != 1) return std::allocator<T>().deallocate(p, n);
    NodeInfoPool::Get().Free(p);
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>& /*other*/) const {
    return true;
  }
};

}  // namespace

std::shared_ptr<NodeInfo> NewNodeInfo(const NodeInfo& from) {
  return std::allocate_shared<NodeInfo>(PoolAllocator<NodeInfo>(), from);
}

// ---- NodeIndex ----

size_t NodeIndex::Position(std::string_view name, const NodeSlots& slots) const {
  if (table_.empty()) return 0;
  return Position(name, Hash(name), slots);
}

size_t NodeIndex::Position(std::string_view name, uint64_t hash, const NodeSlots& slots) const {
  if (table_.empty()) return 0;
  const size_t mask = table_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Entry& e = table_[i];
    if (e.slot == kNone) return table_.size();
    if (e.hash == hash && slots[e.slot]->name == name) return i;
  }
}

uint32_t NodeIndex::Find(std::string_view name, const NodeSlots& slots) const {
  const size_t i = Position(name, slots);
  return i < table_.size() ? table_[i].slot : kNone;
}

void NodeIndex::Insert(std::string_view name, uint32_t slot) {
  if (2 * (size_ + 1) > table_.size()) Grow();
  const uint64_t hash = Hash(name);
  const size_t mask = table_.size() - 1;
  size_t i = hash & mask;
  while (table_[i].slot != kNone) i = (i + 1) & mask;
  table_[i] = Entry{.hash = hash, .slot = slot};
  ++size_;
}

void NodeIndex::Erase(std::string_view name, const NodeSlots& slots) {
  size_t hole = Position(name, slots);
  if (hole >= table_.size()) return;
  // Backward-shift deletion: move later entries of the probe run into the
  // hole when their home position allows, so no tombstones are needed.
  const size_t mask = table_.size() - 1;
  for (size_t i = (hole + 1) & mask; table_[i].slot != kNone; i = (i + 1) & mask) {
    const size_t home = table_[i].hash & mask;
    // The entry may fill the hole unless its home lies cyclically in (hole, i].
    const bool home_after_hole =
        hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!home_after_hole) {
      table_[hole] = table_[i];
      hole = i;
    }
  }
  table_[hole] = Entry{};
  --size_;
}

void NodeIndex::Grow() {
  std::vector<Entry> old = std::move(table_);
  table_.assign(old.empty() ? 16 : 2 * old.size(), Entry{});
  const size_t mask = table_.size() - 1;
  for (const Entry& e : old) {
    if (e.slot == kNone) continue;
    size_t i = e.hash & mask;
    while (table_[i].slot != kNone) i = (i + 1) & mask;
    table_[i] = e;
  }
}

}  // namespace muster::extender
