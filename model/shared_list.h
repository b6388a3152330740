// A list value whose copies share one vector until one of them is changed
// (copy on write).
//
// Why: the extender's gang pass copies every gang of the cluster each pass -
// at 5000 running Jobs, 55 000 members and their victims' pods - and changes
// the members of few. Copying the members one by one (their requests,
// strings and GPU holdings) and freeing them again was a third of the pass.
//
// Thread-safety: as a value type (std::vector's rules): a const SharedList
// may be read from several threads; one that is changed must not be touched
// by another thread meanwhile. Copies may live on different threads: a
// shared vector is never changed, Edit() copies it first.
// Ownership: the elements are owned by the vector the copies share.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace muster {

template <typename T>
class SharedList {
 public:
  using value_type = T;
  // Reading only: changes go through Edit(), which unshares first.
  using const_iterator = typename std::vector<T>::const_iterator;
  using iterator = const_iterator;

  SharedList() = default;
  SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}
  SharedList(std::vector<T> items)  // NOLINT(google-explicit-constructor): a list is a list
      : items_(items.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(items))) {}

  const_iterator begin() const { return all().begin(); }
  const_iterator end() const { return all().end(); }
  size_t size() const { return items_ == nullptr ? 0 : items_->size(); }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return (*items_)[i]; }
  const std::vector<T>& all() const { return items_ == nullptr ? Empty() : *items_; }

  // This copy's own vector, to change: copied first while another copy
  // shares it. Invalidates the iterators taken before.
  std::vector<T>& Edit() {
    if (items_ == nullptr) {
      items_ = std::make_shared<std::vector<T>>();
    } else if (items_.use_count() > 1) {
      // Another owner can only let go meanwhile, never take a new share of
      // this copy's vector: a stale count copies once too often, no worse.
      items_ = std::make_shared<std::vector<T>>(*items_);
    }
    return *items_;
  }
  void push_back(T item) { Edit().push_back(std::move(item)); }

  // Whether both copies read the same vector (tests of the sharing).
  bool SharesWith(const SharedList& other) const { return items_ == other.items_; }

 private:
  static const std::vector<T>& Empty() {
    static const std::vector<T>* const empty = new std::vector<T>();
    return *empty;
  }

  std::shared_ptr<std::vector<T>> items_;  // null when empty
};

}  // namespace muster
