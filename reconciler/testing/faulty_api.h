// FaultyApi: the FakeApi (kube/client/testing/fake_api.h) behind two
// faults a controller test needs to make deterministic, for the
// JobController's tests (controller_expectations_test.cc,
// controller_crash_test.cc):
//   - a lagging informer: HoldWatch(collection) stops the watch events of
//     that collection from reaching the informers (the API has the objects,
//     the cache not yet) until ReleaseWatch();
//   - a crash: CrashAfterWrites(n) lets n more writes (POST, PATCH,
//     DELETE) through, then answers every write 503 - nothing the process
//     would have written after its n-th write reaches the API - until
//     Recover().
// Reads always pass.
//
//   auto faulty = std::make_shared<FaultyApi>(api);
//   kube::Client client(faulty, kube::ClientConfig{}, options);
//   faulty->HoldWatch("/api/v1/pods");
//
// FaultyJobControllerTest (below): a JobControllerTest over a FaultyApi.
//
// Header-only, test code only. Thread-safety: FaultyApi is thread-safe;
// the fixture is driven by the test's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "kube/client/cancel.h"
#include "kube/client/client.h"
#include "kube/client/http_transport.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/volcano_codec.h"
#include "model/clock.h"
#include "reconciler/testing/controller_fixture.h"

namespace muster::reconciler::fixtures {

class FaultyApi final : public kube::HttpTransport {
 public:
  explicit FaultyApi(std::shared_ptr<kube::testing::FakeApi> api) : api_(std::move(api)) {}

  // Watch events of paths starting with `collection` ("/api/v1/pods") wait.
  void HoldWatch(std::string collection) {
    std::lock_guard lock(mu_);
    held_ = std::move(collection);
  }
  void ReleaseWatch() {
    std::lock_guard lock(mu_);
    held_.clear();
  }
  // `writes` more writes pass, then every write answers 503.
  void CrashAfterWrites(int writes) {
    std::lock_guard lock(mu_);
    writes_left_ = writes;
  }
  void Recover() {
    std::lock_guard lock(mu_);
    writes_left_ = -1;
  }
  // Writes refused since the crash.
  int Refused() const {
    std::lock_guard lock(mu_);
    return refused_;
  }

  StatusOr<kube::HttpResponse> Send(const kube::HttpRequest& request) override {
    if (request.method != "GET" && !TakeWrite()) {
      return kube::HttpResponse{
          .status = 503,
          .body = R"({"kind":"Status","apiVersion":"v1","status":"Failure",)"
                  R"("reason":"ServiceUnavailable","code":503,"message":"crashed"})"};
    }
    return api_->Send(request);
  }

  Status Stream(const kube::HttpRequest& request, const kube::ChunkHandler& on_data,
                int* http_status) override {
    auto held_on_data = [&](std::string_view chunk) {
      while (Held(request.target)) {
        if (request.cancel != nullptr && request.cancel->cancelled()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      return on_data(chunk);
    };
    return api_->Stream(request, held_on_data, http_status);
  }

  void Cancel() override { api_->Cancel(); }

 private:
  bool TakeWrite() {
    std::lock_guard lock(mu_);
    if (writes_left_ < 0) return true;
    if (writes_left_ > 0) {
      --writes_left_;
      return true;
    }
    ++refused_;
    return false;
  }
  bool Held(const std::string& target) const {
    std::lock_guard lock(mu_);
    return !held_.empty() && target.starts_with(held_);
  }

  std::shared_ptr<kube::testing::FakeApi> api_;
  mutable std::mutex mu_;
  std::string held_;
  int writes_left_ = -1;  // -1: no crash
  int refused_ = 0;
};

// A JobControllerTest whose controller talks to a FaultyApi over the
// fixture's FakeApi, on a FakeClock the test moves; the test's own writes
// (the gang controller's, a user's) go to the FakeApi directly, never
// refused nor held.
class FaultyJobControllerTest : public JobControllerTest {
 protected:
  FaultyJobControllerTest() {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    client_ = std::make_unique<kube::Client>(faulty_, kube::ClientConfig{}, options);
    direct_ = std::make_unique<kube::Client>(api_, kube::ClientConfig{}, options);
  }
  // Before clock_ goes: the controller's threads read it.
  ~FaultyJobControllerTest() override { StopController(); }

  void StartController() { JobControllerTest::StartController(TestOptions(), clock_); }

  // Every write (not GET) the API received since request `since`, as
  // "METHOD path", in order.
  std::vector<std::string> Writes(size_t since = 0) const {
    std::vector<std::string> out;
    const std::vector<kube::testing::FakeApi::Recorded> all = api_->Requests();
    for (size_t i = since; i < all.size(); ++i) {
      if (all[i].method != "GET") out.push_back(all[i].method + " " + all[i].path);
    }
    return out;
  }
  // How many requests `method path` the API received.
  int Count(const std::string& method, const std::string& path) const {
    int n = 0;
    for (const auto& r : api_->Requests()) n += r.method == method && r.path == path;
    return n;
  }
  // Syncs counted by the controller (every result).
  double Syncs() const {
    double n = 0;
    std::istringstream text(metrics_.Serialize());
    for (std::string line; std::getline(text, line);) {
      if (line.starts_with("muster_reconciler_syncs_total{")) {
        n += std::stod(line.substr(line.rfind(' ') + 1));
      }
    }
    return n;
  }
  // Returns once a sync of `job_key` has run from start to end after this
  // call (two rounds: the first may end a sync already under way).
  void SyncAgain(const std::string& job_key) {
    for (int round = 0; round < 2; ++round) {
      const double before = Syncs();
      controller_->Submit(job_key, Request{});
      ASSERT_TRUE(kube::testing::WaitFor([&] { return Syncs() > before; }));
    }
  }
  // The gang controller's part: every PodGroup not yet admitted is.
  void AdmitGroups() {
    for (const std::string& json : api_->List(kube::PodGroupsRef())) {
      StatusOr<PodGroup> pg = kube::DecodePodGroup(json);
      if (!pg.ok() || pg->status.phase == kPodGroupInqueue) continue;
      (void)direct_->Patch(
          kube::PodGroupsRef().WithNamespace(pg->meta.namespace_).WithName(pg->meta.name),
          kube::PatchType::kMerge, R"({"status":{"phase":"Inqueue"}})");
    }
  }
  // Waits for `pred` while time passes (100 ms of the FakeClock a poll) and
  // the gang controller admits PodGroups.
  bool WaitWhileTimePasses(const std::function<bool()>& pred) {
    return kube::testing::WaitFor([&] {
      AdmitGroups();
      clock_.Advance(std::chrono::milliseconds(100));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      return pred();
    });
  }

  std::shared_ptr<FaultyApi> faulty_ = std::make_shared<FaultyApi>(api_);
  std::unique_ptr<kube::Client> direct_;
  FakeClock clock_;
};

}  // namespace muster::reconciler::fixtures
