// Mutex, MutexLock and CondVar with Clang thread-safety annotations.
//
// libstdc++'s std::mutex carries no capability attributes, so GUARDED_BY on a
// std::mutex would not be checked by `-Wthread-safety` (clang builds). These
// thin wrappers make the locking discipline of muster a checked property:
// fields say MUSTER_GUARDED_BY(mu_), private helpers say
// MUSTER_REQUIRES(mu_).
//
// Thread-safety: Mutex and CondVar are thread-safe by definition; MutexLock
// belongs to the thread that constructed it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define MUSTER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define MUSTER_THREAD_ANNOTATION(x)
#endif

#define MUSTER_CAPABILITY(x) MUSTER_THREAD_ANNOTATION(capability(x))
#define MUSTER_SCOPED_CAPABILITY MUSTER_THREAD_ANNOTATION(scoped_lockable)
#define MUSTER_GUARDED_BY(x) MUSTER_THREAD_ANNOTATION(guarded_by(x))
#define MUSTER_PT_GUARDED_BY(x) MUSTER_THREAD_ANNOTATION(pt_guarded_by(x))
#define MUSTER_REQUIRES(...) MUSTER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define MUSTER_EXCLUDES(...) MUSTER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define MUSTER_ACQUIRE(...) MUSTER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define MUSTER_RELEASE(...) MUSTER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define MUSTER_NO_THREAD_SAFETY_ANALYSIS MUSTER_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace muster::base {

class CondVar;

class MUSTER_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() MUSTER_ACQUIRE() { mu_.lock(); }
  void Unlock() MUSTER_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for the lifetime of the scope.
class MUSTER_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) MUSTER_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() MUSTER_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
};

// A condition variable bound to a Mutex at each wait. Waits may wake
// spuriously: callers loop on their predicate (or use the predicate forms).
class CondVar {
 public:
  void Wait(Mutex* mu) MUSTER_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Waits until signalled or `deadline`; returns false once the deadline has
  // passed. Callers re-check their predicate in a loop under the lock.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) MUSTER_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_until(lock, deadline) == std::cv_status::timeout;
    lock.release();
    return !timed_out;
  }
  void SignalAll() { cv_.notify_all(); }
  void Signal() { cv_.notify_one(); }

 private:
  std::condition_variable cv_;
};

}  // namespace muster::base
