// The cluster and the request both extender benchmarks run (issue 4
// acceptance 5): extender_bench calls the pipeline in process,
// extender_http_bench the real server over loopback HTTP.
//
//  - 1000 or 5000 nodes "gpu-node-<i>" in a ClusterCache, 8 GPUs each, with
//    kPodsPerNode bound pods per node holding 0-1 GPU each, capped at what the
//    node has left: the 4-GPU probe pod fits on about a third of the nodes,
//    so both reply paths (NodeNames, FailedNodes) are exercised;
//  - a names-only (nodeCacheCapable) ExtenderArgs as kube-scheduler sends it:
//    the pod of kube/codec/testdata/pod_full.json (4 GPUs) in compact JSON
//    without metadata.managedFields (the scheduler's pod informer strips
//    them) nor its PodGroup (a plain pod: a gang member waits for its gang's
//    reservation instead of being fitted), "Nodes": null and every node name.
//
// Thread-safety: FixtureFor() is for the benchmark's main thread; a
// fixture's cache and pipeline are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "model/clock.h"

namespace muster::extender::bench {

inline constexpr int kGpusPerNode = 8;
inline constexpr int kPodsPerNode = 10;

std::string NodeName(int i);

// Fills `cache` with `nodes` nodes and `pods_per_node` bound pods on each.
// Deterministic (fixed seed). With `gpu_topology`, every node also publishes
// muster.io/gpu-topology (two 4-GPU NVLink islands, SYS between) and every
// bound pod names its GPUs (muster.io/gpu-ids, drawn at random among the
// free ones): the verbs then score GPU sets too.
void FillCache(ClusterCache& cache, int nodes, int pods_per_node, bool gpu_topology = false);

// The names-only ExtenderArgs body naming nodes 0..nodes-1.
std::string NamesOnlyRequest(int nodes);

// A filled cache, the default pipeline over it and the request body.
struct ClusterFixture {
  ClusterFixture(int nodes, bool gpu_topology);

  const int nodes;
  FakeClock clock;
  ClusterCache cache{clock};
  Pipeline pipeline{PolicyConfig{}, &cache};
  const std::string body;
};

// One fixture per size (and GPU topology or not) for the whole process
// (filling 5000 nodes takes a while); never freed.
ClusterFixture& FixtureFor(int nodes, bool gpu_topology = false);

// The p50 and p99 of `samples` (nearest rank, as the benchmarks always
// reported them). REQUIRES: !samples.empty().
struct Percentiles {
  double p50 = 0;
  double p99 = 0;
};
Percentiles PercentilesOf(std::vector<double> samples);

// VmRSS of this process in KiB, 0 when /proc is not readable.
int64_t RssKib();

}  // namespace muster::extender::bench
