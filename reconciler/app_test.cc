#include "reconciler/app.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::reconciler {
namespace {

TEST(ReconcilerFlagsTest, DefaultsAreTheSidecarCase) {
  StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags({});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->listen_address, "127.0.0.1");
  EXPECT_EQ(flags->port, 8889);
  EXPECT_EQ(flags->controller.default_scheduler, "volcano");
  EXPECT_EQ(flags->controller.pods.gated_schedulers, std::vector<std::string>{"volcano"});
}

TEST(ReconcilerFlagsTest, ParsesEveryFlagInBothSpellings) {
  StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags(
      {"--kubeconfig=/k", "--port", "9000", "--listen=0.0.0.0", "--scheduler-name=batch",
       "--gated-scheduler=batch", "--gated-scheduler", "volcano", "--workers=4",
       "--kube-api-qps=20", "--kube-api-burst", "40"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->kubeconfig, "/k");
  EXPECT_EQ(flags->port, 9000);
  EXPECT_EQ(flags->listen_address, "0.0.0.0");
  EXPECT_EQ(flags->controller.default_scheduler, "batch");
  // The first --gated-scheduler replaces the default list.
  EXPECT_EQ(flags->controller.pods.gated_schedulers,
            (std::vector<std::string>{"batch", "volcano"}));
  EXPECT_EQ(flags->controller.workers, 4);
  EXPECT_EQ(flags->kube_api_qps, 20);
  EXPECT_EQ(flags->kube_api_burst, 40);
}

TEST(ReconcilerFlagsTest, EachParseStartsFromTheDefaultGatedList) {
  ASSERT_TRUE(ParseReconcilerFlags({"--gated-scheduler=a"}).ok());
  StatusOr<ReconcilerFlags> again = ParseReconcilerFlags({"--gated-scheduler=b"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->controller.pods.gated_schedulers, std::vector<std::string>{"b"});
}

TEST(ReconcilerFlagsTest, GpuFractionMode) {
  StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags({});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->controller.pods.gpu_fraction.mode, GpuFractionMode::kAnnotation);
  flags = ParseReconcilerFlags({"--gpu-fraction-mode=vgpu", "--vgpu-gpu-memory-mib", "81920"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->controller.pods.gpu_fraction.mode, GpuFractionMode::kVgpu);
  EXPECT_EQ(flags->controller.pods.gpu_fraction.vgpu_gpu_memory_mib, 81920);
  flags = ParseReconcilerFlags({"--gpu-fraction-mode=annotation"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->controller.pods.gpu_fraction.mode, GpuFractionMode::kAnnotation);
}

// Leader election: off by default (one replica acts alone); on, a Lease of
// the reconciler's own and an identity unique to the process.
TEST(ReconcilerFlagsTest, LeaderElection) {
  StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags({});
  ASSERT_TRUE(flags.ok());
  EXPECT_FALSE(flags->leader.enabled);
  flags = ParseReconcilerFlags({"--leader-elect=true"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  const kube::LeaderElectionOptions& e = flags->leader.election;
  EXPECT_EQ(e.mode, kube::LeaderMode::kAcquire);
  EXPECT_EQ(kube::LeaseKey(e), "muster-system/muster-reconciler");
  EXPECT_NE(e.identity.find('_'), std::string::npos) << "hostname_<random>: " << e.identity;
  EXPECT_NE(ParseReconcilerFlags({"--leader-elect=true"})->leader.election.identity, e.identity)
      << "two processes on one host need two identities";
  flags = ParseReconcilerFlags({"--leader-elect=true", "--leader-lease=ops/rec",
                                "--leader-identity=pod-1", "--leader-lease-duration=20s",
                                "--leader-renew-deadline=15s", "--leader-retry-period=3s"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(kube::LeaseKey(flags->leader.election), "ops/rec");
  EXPECT_EQ(flags->leader.election.identity, "pod-1");
  EXPECT_EQ(flags->leader.election.lease_duration, std::chrono::seconds(20));
  EXPECT_EQ(flags->leader.election.renew_deadline, std::chrono::seconds(15));
  EXPECT_EQ(flags->leader.election.retry_period, std::chrono::seconds(3));
}

TEST(ReconcilerFlagsTest, BadInputNamesTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  };
  const Case cases[] = {
      {{"--frobnicate=1"}, "unknown flag --frobnicate"},
      {{"--port=http"}, "flag --port: \"http\" is not an integer in [0, 65535]"},
      {{"--workers=0"}, "flag --workers: \"0\" is not an integer in [1, 256]"},
      {{"--kube-api-qps=0"}, "flag --kube-api-qps"},
      {{"--port"}, "flag --port: needs a value"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--gpu-fraction-mode=mig"},
       "flag --gpu-fraction-mode: \"mig\" is not one of annotation, vgpu"},
      {{"--vgpu-gpu-memory-mib=0"}, "flag --vgpu-gpu-memory-mib: \"0\" is not an integer in [1, "},
      // vgpu mode cannot build a pod without the GPU memory: no start.
      {{"--gpu-fraction-mode=vgpu"}, "--gpu-fraction-mode=vgpu needs --vgpu-gpu-memory-mib"},
      {{"--leader-elect=yes"}, "flag --leader-elect: \"yes\" is not true or false"},
      {{"--leader-lease=rec"}, "flag --leader-lease: \"rec\" is not NAMESPACE/NAME"},
      {{"--leader-lease=a/b/c"}, "flag --leader-lease: \"a/b/c\" is not NAMESPACE/NAME"},
      {{"--leader-identity="}, "flag --leader-identity: empty identity"},
      // A renew deadline past the lease duration would let two replicas
      // act at once: refused.
      {{"--leader-elect=true", "--leader-renew-deadline=10s"},
       "renew deadline must be shorter than the lease duration"},
      {{"--leader-elect=true", "--leader-retry-period=7s"},
       "retry period must be shorter than the renew deadline"},
  };
  for (const Case& c : cases) {
    StatusOr<ReconcilerFlags> flags = ParseReconcilerFlags(c.args);
    ASSERT_FALSE(flags.ok()) << c.args[0];
    EXPECT_EQ(flags.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(flags.status().message().find(c.want), std::string::npos) << flags.status().message();
  }
}

}  // namespace
}  // namespace muster::reconciler
