#include "extender/cluster_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "model/testing/builders.h"

namespace muster::extender {
namespace {

using test::MakeNode;
using test::MakePod;

// Informer threads write while HTTP workers snapshot and reserve: every
// snapshot must be internally consistent and the final accounting exact.
// (Run under the tsan tier, this is also the data-race check.)
TEST(ClusterCacheTest, ConcurrentWritersReadersAndReservations) {
  FakeClock clock;
  ClusterCache cache(clock);
  for (int n = 0; n < 4; ++n) cache.UpsertNode(MakeNode("n" + std::to_string(n)).Gpu(8));

  constexpr int kPodCount = 200;
  std::atomic<bool> inconsistent{false};
  std::vector<std::thread> threads;
  // Two "informers": pods bound round-robin, then deleted.
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&cache, w] {
      for (int i = w; i < kPodCount; i += 2) {
        const std::string name = "p" + std::to_string(i);
        cache.UpsertPod(
            MakePod(name).Gpu(1).NodeName("n" + std::to_string(i % 4)).Phase("Running"));
        if (i % 3 == 0) cache.DeletePod("uid-" + name);
      }
    });
  }
  // Two "workers": snapshots must add up, reservations come and go.
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&cache, &inconsistent, r] {
      for (int i = 0; i < kPodCount; ++i) {
        const ClusterSnapshot snapshot = cache.Snapshot("");
        snapshot.ForEachNode([&](const NodeInfo& info) {
          if (info.allocated.Get(kPods) != info.bound_pods + info.assumed_pods) inconsistent = true;
        });
        const std::string uid = "r" + std::to_string(r) + "-" + std::to_string(i);
        cache.Exclusive([&](ClusterState& s) {
          s.Assume(uid, "n0", Resources{{"nvidia.com/gpu", 1000}});
        });
        cache.Exclusive([&](ClusterState& s) { s.Forget(uid); });
      }
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_FALSE(inconsistent);
  Status check;
  size_t pods = 0;
  cache.Exclusive([&](ClusterState& s) {
    check = s.CheckAccounting();
    pods = s.pod_count();
  });
  EXPECT_TRUE(check.ok()) << check;
  EXPECT_EQ(pods, static_cast<size_t>(kPodCount - (kPodCount + 2) / 3));
  int64_t gpus = 0;
  cache.Snapshot("").ForEachNode([&](const NodeInfo& info) { gpus += info.allocated.gpus(); });
  EXPECT_EQ(gpus, static_cast<int64_t>(pods)) << "one GPU per remaining pod, no reservation left";
}

TEST(ClusterCacheTest, ExpireAssumedSweepsOnTheInjectedClock) {
  FakeClock clock;
  ClusterCache cache(clock, {.assume_ttl = std::chrono::seconds(10)});
  cache.Exclusive([](ClusterState& s) {
    s.Assume("uid-p", "n1", Resources{{"nvidia.com/gpu", 2000}});
  });
  EXPECT_TRUE(cache.ExpireAssumed().empty());
  clock.Advance(std::chrono::seconds(10));
  EXPECT_EQ(cache.ExpireAssumed(), std::vector<std::string>{"uid-p"});
  EXPECT_EQ(cache.Snapshot("").FindNode("n1"), nullptr);
}

}  // namespace
}  // namespace muster::extender
