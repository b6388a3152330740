// A JobController (controller.h) over a FakeApi (kube/client/testing), for
// the controller's tests: the API, a client that does not retry (a refused
// write shows at once), the metrics, and readers of what the controller
// wrote - a Job's status, its Events, the objects of a Job by name prefix.
//
//   class JobControllerGpuTest : public fixtures::JobControllerTest {};
//   TEST_F(JobControllerGpuTest, ...) {
//     api_->Put(JobRef("half"), JobJson("half"));
//     StartController();
//     AdmitGroupOf("half");
//     ASSERT_TRUE(WaitFor([&] { return NamedJson(PodsRef(), "half-").size() == 2; }));
//   }
//
// Header-only, test code only. Thread-safety: the test's thread drives the
// fixture; the controller's workers touch only the FakeApi, which is
// thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/client/client.h"
#include "kube/client/testing/fake_api.h"
#include "kube/client/testing/loopback_server.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/controller.h"

namespace muster::reconciler::fixtures {

// Every Job of these tests lives here.
inline constexpr std::string_view kJobNamespace = "ml";

class JobControllerTest : public ::testing::Test {
 protected:
  static constexpr std::string_view kNamespace = kJobNamespace;

  JobControllerTest() {
    kube::ClientOptions options;
    options.retry.max_attempts = 1;
    client_ = std::make_unique<kube::Client>(api_, kube::ClientConfig{}, options);
  }
  ~JobControllerTest() override { StopController(); }

  // Two workers: enough to show ordering bugs, few enough for sanitizers.
  static ControllerOptions TestOptions() {
    ControllerOptions options;
    options.workers = 2;
    return options;
  }
  // Starts the controller and waits for its informers' first lists.
  // REQUIRES: no controller running (StopController first).
  // `clock`: RealClock(), or a FakeClock for a test that moves time; it
  // outlives the controller.
  void StartController(ControllerOptions options = TestOptions(),
                       const Clock& clock = RealClock()) {
    controller_ = std::make_unique<JobController>(client_.get(), clock, options, &metrics_);
    controller_->Start();
    ASSERT_TRUE(kube::testing::WaitFor([&] { return controller_->Synced(); }));
  }
  void StopController() {
    if (controller_) controller_->Stop();
    controller_.reset();
  }

  static kube::ResourceRef JobRef(const std::string& name) {
    return kube::VolcanoJobsRef().WithNamespace(std::string(kNamespace)).WithName(name);
  }
  static kube::ResourceRef PodsRef() { return kube::ResourceRef::Core("pods"); }
  // The Job's status as stored (it decodes on its own, even when the spec
  // does not); empty when the Job is gone.
  JobStatus Status(const std::string& name) const {
    std::optional<std::string> json = api_->Get(JobRef(name));
    if (!json) return {};
    StatusOr<JobStatus> status = kube::DecodeJobStatusOf(*json);
    return status.ok() ? *status : JobStatus{};
  }
  // "<type> <reason>: <message>" of each Event about the object `name`.
  std::vector<std::string> Events(const std::string& name) const {
    std::vector<std::string> out;
    for (const std::string& json : api_->List(kube::ResourceRef::Core("events"))) {
      StatusOr<Event> e = kube::DecodeEvent(json);
      if (e.ok() && e->involved_object.name == name) {
        out.push_back(e->type + " " + e->reason + ": " + e->message);
      }
    }
    return out;
  }
  // The objects of `collection` whose names start with `prefix`, by name.
  std::vector<std::string> NamedJson(const kube::ResourceRef& collection,
                                     const std::string& prefix) const {
    std::vector<std::pair<std::string, std::string>> named;
    for (std::string& json : api_->List(collection)) {
      std::string name = kube::DecodeObjectIdentity(json).name;
      if (name.starts_with(prefix)) named.emplace_back(std::move(name), std::move(json));
    }
    std::sort(named.begin(), named.end());
    std::vector<std::string> out;
    for (auto& [name, json] : named) out.push_back(std::move(json));
    return out;
  }
  // Their names only.
  std::vector<std::string> Names(const kube::ResourceRef& collection,
                                 const std::string& prefix) const {
    std::vector<std::string> out;
    for (const std::string& json : NamedJson(collection, prefix)) {
      out.push_back(kube::DecodeObjectIdentity(json).name);
    }
    return out;
  }
  // The gang controller's part: the Job's PodGroup is admitted (Inqueue).
  void AdmitGroupOf(const std::string& job) {
    std::vector<std::string> groups;
    ASSERT_TRUE(kube::testing::WaitFor([&] {
      groups = Names(kube::PodGroupsRef(), job + "-");
      return !groups.empty();
    }));
    ASSERT_TRUE(client_
                    ->Patch(kube::PodGroupsRef()
                                .WithNamespace(std::string(kNamespace))
                                .WithName(groups.front()),
                            kube::PatchType::kMerge, R"({"status":{"phase":"Inqueue"}})")
                    .ok());
  }

  std::shared_ptr<kube::testing::FakeApi> api_ = std::make_shared<kube::testing::FakeApi>();
  std::unique_ptr<kube::Client> client_;
  ReconcilerMetrics metrics_;
  std::unique_ptr<JobController> controller_;
};

}  // namespace muster::reconciler::fixtures
