#include "kube/client/cancel.h"

#include <thread>
#include <utility>

namespace muster::kube {

void CancelToken::Cancel() {
  base::MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  // Run under the lock: Unregister() then waits for a running callback, so
  // the resources a callback touches stay alive while it runs.
  for (auto& [id, fn] : callbacks_) fn();
  callbacks_.clear();
  cv_.SignalAll();
}

bool CancelToken::cancelled() const {
  base::MutexLock lock(&mu_);
  return cancelled_;
}

bool CancelToken::WaitFor(Duration d) {
  const auto deadline = std::chrono::steady_clock::now() + d;
  base::MutexLock lock(&mu_);
  while (!cancelled_) {
    if (!cv_.WaitUntil(&mu_, deadline)) break;
  }
  return cancelled_;
}

CancelToken::CallbackId CancelToken::Register(std::function<void()> fn) {
  base::MutexLock lock(&mu_);
  if (cancelled_) {
    fn();
    return 0;
  }
  const CallbackId id = next_id_++;
  callbacks_.emplace(id, std::move(fn));
  return id;
}

void CancelToken::Unregister(CallbackId id) {
  base::MutexLock lock(&mu_);
  callbacks_.erase(id);
}

ScopedCancelCallback::ScopedCancelCallback(CancelToken* a, CancelToken* b,
                                           const std::function<void()>& fn)
    : a_(a), b_(b) {
  if (a_ != nullptr) id_a_ = a_->Register(fn);
  if (b_ != nullptr) id_b_ = b_->Register(fn);
}

ScopedCancelCallback::~ScopedCancelCallback() {
  if (a_ != nullptr) a_->Unregister(id_a_);
  if (b_ != nullptr) b_->Unregister(id_b_);
}

Sleeper RealSleeper() {
  return [](Duration d, CancelToken* cancel) {
    if (d <= Duration::zero()) return !IsCancelled(cancel);
    if (cancel != nullptr) return !cancel->WaitFor(d);
    std::this_thread::sleep_for(d);
    return true;
  };
}

}  // namespace muster::kube
