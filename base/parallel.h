// ParallelFor: API writes in flight at once (the gang controller's gate
// lifts and status writes, the reconciler's pod creates and deletes). The
// Client is thread-safe and keeps a connection per request in flight.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace muster::base {

// Runs fn(i) for i in [0, n) on up to `threads` threads (the caller's
// included) and returns when all are done. `fn` must be thread-safe.
template <typename Fn>
void ParallelFor(size_t n, int threads, Fn&& fn) {
  if (n == 0) return;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  const size_t extra = std::min<size_t>(n, static_cast<size_t>(std::max(threads, 1))) - 1;
  std::vector<std::thread> pool;
  pool.reserve(extra);
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace muster::base
