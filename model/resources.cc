#include "model/resources.h"

#include <algorithm>
#include <limits>

#include "model/quantity.h"

namespace muster {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? kMax : kMin;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? kMax : kMin;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_mul_overflow(a, b, &out)) return out;
  return (a < 0) == (b < 0) ? kMax : kMin;
}

// Walks the union of names of two sorted entry lists, calling
// fn(name, a_amount, b_amount) with absent amounts read as 0.
template <typename Fn>
void ForEachUnion(const std::vector<Resources::Entry>& a, const std::vector<Resources::Entry>& b,
                  Fn fn) {
  auto ia = a.begin();
  auto ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      fn(ia->first, ia->second, int64_t{0});
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      fn(ib->first, int64_t{0}, ib->second);
      ++ib;
    } else {
      fn(ia->first, ia->second, ib->second);
      ++ia;
      ++ib;
    }
  }
}

// Builds the union of `a` and `b`, each amount being combine(a_amount, b_amount).
template <typename Combine>
std::vector<Resources::Entry> Merge(const std::vector<Resources::Entry>& a,
                                    const std::vector<Resources::Entry>& b, Combine combine) {
  std::vector<Resources::Entry> out;
  out.reserve(std::max(a.size(), b.size()));
  ForEachUnion(a, b, [&](const std::string& name, int64_t x, int64_t y) {
    out.emplace_back(name, combine(x, y));
  });
  return out;
}

// Combines `b` into `a` in place when every name of `b` is in `a` - most
// sums add requests of the kinds the total has already - and returns
// false, changing nothing, when one is not. A sum of 55 000 members'
// requests (the gang pass's queue shares) built a new vector per member.
template <typename Combine>
bool CombineInPlace(std::vector<Resources::Entry>& a, const std::vector<Resources::Entry>& b,
                    Combine combine) {
  constexpr size_t kMaxNames = 16;  // a request names a handful
  if (b.size() > kMaxNames) return false;
  size_t at[kMaxNames];
  size_t i = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    while (i < a.size() && a[i].first < b[j].first) ++i;
    if (i == a.size() || a[i].first != b[j].first) return false;
    at[j] = i++;
  }
  for (size_t j = 0; j < b.size(); ++j) a[at[j]].second = combine(a[at[j]].second, b[j].second);
  return true;
}

// Index of the first entry whose name is not less than `name`.
size_t LowerBound(const std::vector<Resources::Entry>& entries, std::string_view name) {
  auto it =
      std::lower_bound(entries.begin(), entries.end(), name,
                       [](const Resources::Entry& e, std::string_view n) { return e.first < n; });
  return static_cast<size_t>(it - entries.begin());
}

}  // namespace

Resources::Resources(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) Set(e.first, e.second);
}

StatusOr<Resources> Resources::FromQuantities(const std::map<std::string, std::string>& list) {
  Resources out;
  out.entries_.reserve(list.size());
  for (const auto& [name, text] : list) {
    // ParseResourceQuantity's messages name the resource and quote the text.
    StatusOr<int64_t> amount = ParseResourceQuantity(name, text);
    if (!amount.ok()) return amount.status();
    out.entries_.emplace_back(name, *amount);  // std::map iterates in sorted order
  }
  return out;
}

std::map<std::string, std::string> Resources::ToQuantities() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, amount] : entries_)
    out.emplace(name, FormatResourceQuantity(name, amount));
  return out;
}

int64_t Resources::Get(std::string_view name) const {
  const size_t i = LowerBound(entries_, name);
  return i < entries_.size() && entries_[i].first == name ? entries_[i].second : 0;
}

bool Resources::Has(std::string_view name) const {
  const size_t i = LowerBound(entries_, name);
  return i < entries_.size() && entries_[i].first == name;
}

void Resources::Set(std::string_view name, int64_t value) {
  const size_t i = LowerBound(entries_, name);
  if (i < entries_.size() && entries_[i].first == name) {
    entries_[i].second = value;
  } else {
    entries_.emplace(entries_.begin() + static_cast<std::ptrdiff_t>(i), std::string(name), value);
  }
}

void Resources::Erase(std::string_view name) {
  const size_t i = LowerBound(entries_, name);
  if (i < entries_.size() && entries_[i].first == name) {
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool Resources::IsZero() const {
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const Entry& e) { return e.second == 0; });
}

Resources& Resources::operator+=(const Resources& other) {
  if (!CombineInPlace(entries_, other.entries_, SaturatingAdd)) {
    entries_ = Merge(entries_, other.entries_, SaturatingAdd);
  }
  return *this;
}

Resources& Resources::operator-=(const Resources& other) {
  if (!CombineInPlace(entries_, other.entries_, SaturatingSub)) {
    entries_ = Merge(entries_, other.entries_, SaturatingSub);
  }
  return *this;
}

Resources& Resources::operator*=(int64_t factor) {
  for (Entry& e : entries_) e.second = SaturatingMul(e.second, factor);
  return *this;
}

Resources Resources::Max(const Resources& a, const Resources& b) {
  Resources out;
  out.entries_ = Merge(a.entries_, b.entries_, [](int64_t x, int64_t y) { return std::max(x, y); });
  return out;
}

Resources Resources::Min(const Resources& a, const Resources& b) {
  Resources out;
  out.entries_ = Merge(a.entries_, b.entries_, [](int64_t x, int64_t y) { return std::min(x, y); });
  return out;
}

Resources Resources::ClampedAtZero() const {
  Resources out = *this;
  for (Entry& e : out.entries_) e.second = std::max<int64_t>(e.second, 0);
  return out;
}

bool Resources::FitsIn(const Resources& capacity, bool absent_is_unlimited) const {
  return Exceeding(capacity, absent_is_unlimited).empty();
}

std::vector<std::string> Resources::Exceeding(const Resources& capacity,
                                              bool absent_is_unlimited) const {
  std::vector<std::string> out;
  for (const auto& [name, amount] : entries_) {
    if (amount <= 0) continue;
    if (!capacity.Has(name)) {
      if (!absent_is_unlimited) out.push_back(name);
      continue;
    }
    if (amount > capacity.Get(name)) out.push_back(name);
  }
  return out;
}

double Resources::DominantShare(const Resources& total) const {
  return DominantShareWithName(total).first;
}

std::pair<double, std::string> Resources::DominantShareWithName(const Resources& total) const {
  std::pair<double, std::string> best{0.0, ""};
  for (const auto& [name, amount] : entries_) {
    if (amount <= 0) continue;
    const int64_t available = total.Get(name);
    const double share = available <= 0
                             ? std::numeric_limits<double>::infinity()
                             : static_cast<double>(amount) / static_cast<double>(available);
    // Strictly greater: ties go to the name that sorts first.
    if (share > best.first) best = {share, name};
  }
  return best;
}

bool operator==(const Resources& a, const Resources& b) {
  bool equal = true;
  ForEachUnion(a.entries_, b.entries_,
               [&](const std::string&, int64_t x, int64_t y) { equal = equal && x == y; });
  return equal;
}

std::string Resources::ToString() const {
  if (entries_.empty()) return "none";
  std::string out;
  for (const auto& [name, amount] : entries_) {
    if (!out.empty()) out += ", ";
    out += name + "=" + FormatResourceQuantity(name, amount);
  }
  return out;
}

}  // namespace muster
