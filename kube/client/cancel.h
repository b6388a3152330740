// CancelToken: how a caller stops a blocked API call (a watch stream, a
// request in flight, a retry or rate-limit wait) from another thread.
//
// Cancellation is sticky: once Cancel() ran, cancelled() stays true and every
// later call that observes the token returns Cancelled at once. Code that
// blocks registers a callback that unblocks it (e.g. shuts a socket down);
// Cancel() runs the registered callbacks.
//
// Thread-safety: thread-safe. Callbacks run on the thread calling Cancel()
// (or Register(), when already cancelled) while the token's lock is held, so
// once Unregister() returns the callback is neither running nor will run.
// Callbacks must be short and must not call back into the token.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "base/mutex.h"
#include "model/time.h"

namespace muster::kube {

class CancelToken {
 public:
  using CallbackId = uint64_t;

  CancelToken() = default;
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  // Idempotent. Runs every registered callback once and wakes WaitFor().
  void Cancel() MUSTER_EXCLUDES(mu_);
  bool cancelled() const MUSTER_EXCLUDES(mu_);

  // Blocks for `d` or until cancelled; returns true when cancelled.
  bool WaitFor(Duration d) MUSTER_EXCLUDES(mu_);

  // Registers `fn` to run on Cancel(). When the token is already cancelled,
  // runs `fn` right away and returns 0 (a valid argument to Unregister).
  CallbackId Register(std::function<void()> fn) MUSTER_EXCLUDES(mu_);
  void Unregister(CallbackId id) MUSTER_EXCLUDES(mu_);

 private:
  mutable base::Mutex mu_;
  base::CondVar cv_;
  bool cancelled_ MUSTER_GUARDED_BY(mu_) = false;
  CallbackId next_id_ MUSTER_GUARDED_BY(mu_) = 1;
  std::map<CallbackId, std::function<void()>> callbacks_ MUSTER_GUARDED_BY(mu_);
};

// Registers a callback with up to two tokens for the scope's lifetime (an
// operation usually observes its caller's token and its owner's). Null
// tokens are skipped.
class ScopedCancelCallback {
 public:
  ScopedCancelCallback(CancelToken* a, CancelToken* b, const std::function<void()>& fn);
  ~ScopedCancelCallback();
  ScopedCancelCallback(const ScopedCancelCallback&) = delete;
  ScopedCancelCallback& operator=(const ScopedCancelCallback&) = delete;

 private:
  CancelToken* a_;
  CancelToken* b_;
  CancelToken::CallbackId id_a_ = 0;
  CancelToken::CallbackId id_b_ = 0;
};

inline bool IsCancelled(const CancelToken* token) { return token != nullptr && token->cancelled(); }

// Sleeps for `d` unless `cancel` (may be null) fires first; returns false
// when cancelled. Injected wherever kube/client waits, so tests can pass a
// sleeper that advances a FakeClock instead of sleeping.
using Sleeper = std::function<bool(Duration d, CancelToken* cancel)>;

// Really sleeps (interruptibly when a token is given).
Sleeper RealSleeper();

}  // namespace muster::kube
