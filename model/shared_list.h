// A list value whose copies share one vector until one of them is changed
// (copy on write), with a summary of its elements kept beside them.
//
// Why: the extender's gang pass copies every gang of the cluster each pass -
// at 5000 running Jobs, 55 000 members and their victims' pods - and changes
// the members of few. Copying the members one by one (their requests,
// strings and GPU holdings) and freeing them again was a third of the pass.
// And each pass asks every gang the same questions of its members (how many
// are bound, what they request): at 5000 Jobs, walking 55 000 members for
// them was a third of what was left. A list keeps the answers (`Summary`),
// computed when the list is made or changed, so a gang nobody changed
// answers without a walk.
//
// `Summary` is a value type with `static Summary Of(const std::vector<T>&)`;
// NoSummary (the default) keeps nothing.
//
// Thread-safety: as a value type (std::vector's rules): a const SharedList
// may be read from several threads; one that is changed must not be touched
// by another thread meanwhile. Copies may live on different threads: a
// shared vector is never changed, Edit() copies it first. The summary is
// computed while a list is made or changed, never while it is read.
// Ownership: the elements and the summary are owned by the block the copies
// share.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace muster {

// The summary of a list that keeps none.
struct NoSummary {
  template <typename T>
  static NoSummary Of(const std::vector<T>& /*items*/) {
    return {};
  }
};

template <typename T, typename Summary = NoSummary>
class SharedList {
  struct Block {
    std::vector<T> items;
    Summary summary;
  };

 public:
  using value_type = T;
  // Reading only: changes go through Edit(), which unshares first.
  using const_iterator = typename std::vector<T>::const_iterator;
  using iterator = const_iterator;

  // This list's own vector while it is changed; the summary is computed
  // again when the Editor goes (the end of the statement, for a temporary;
  // the end of the loop, for a range-for over Edit()).
  // REQUIRES: the list is neither copied nor edited again while an Editor
  // of it is alive.
  class Editor {
   public:
    Editor(const Editor&) = delete;
    Editor& operator=(const Editor&) = delete;
    ~Editor() { block_->summary = Summary::Of(block_->items); }

    std::vector<T>& operator*() const { return block_->items; }
    std::vector<T>* operator->() const { return &block_->items; }
    typename std::vector<T>::iterator begin() const { return block_->items.begin(); }
    typename std::vector<T>::iterator end() const { return block_->items.end(); }
    T& operator[](size_t i) const { return block_->items[i]; }

   private:
    friend class SharedList;
    explicit Editor(Block* block) : block_(block) {}
    Block* block_;  // not owned: the list's
  };

  SharedList() = default;
  SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}
  SharedList(std::vector<T> items)  // NOLINT(google-explicit-constructor): a list is a list
  {
    if (items.empty()) return;
    Summary summary = Summary::Of(items);
    block_ = std::make_shared<Block>(Block{std::move(items), std::move(summary)});
  }

  const_iterator begin() const { return all().begin(); }
  const_iterator end() const { return all().end(); }
  size_t size() const { return block_ == nullptr ? 0 : block_->items.size(); }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return block_->items[i]; }
  const std::vector<T>& all() const { return block_ == nullptr ? Empty() : block_->items; }
  // Summary::Of(all()), as of the list's last change.
  const Summary& summary() const { return block_ == nullptr ? EmptySummary() : block_->summary; }

  // This copy's own vector, to change: copied first while another copy
  // shares it. Invalidates the iterators taken before.
  Editor Edit() {
    if (block_ == nullptr) {
      block_ = std::make_shared<Block>();
    } else if (block_.use_count() > 1) {
      // Another owner can only let go meanwhile, never take a new share of
      // this copy's vector: a stale count copies once too often, no worse.
      block_ = std::make_shared<Block>(*block_);
    }
    return Editor(block_.get());
  }
  void push_back(T item) { Edit()->push_back(std::move(item)); }

  // Whether both copies read the same vector (tests of the sharing).
  bool SharesWith(const SharedList& other) const { return block_ == other.block_; }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T>* const empty = new std::vector<T>();
    return *empty;
  }
  static const Summary& EmptySummary() {
    static const Summary* const empty = new Summary(Summary::Of(Empty()));
    return *empty;
  }

  std::shared_ptr<Block> block_;  // null when empty
};

}  // namespace muster
