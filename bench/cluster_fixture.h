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
//    reservation instead of being fitted), "Nodes": null and every node name;
//  - the queues read: the fixture publishes what the gang controller's first
//    pass would for an unlimited "default" queue, so the queue gate admits
//    the probe (a plain pod of schedulerName volcano, Volcano's PodGroup of
//    one) and filter fits it; before any pass it would wait on every node.
//
// GPU sharing (issue 18), `shared_gpus`: the nodes also say their GPUs'
// memory (nvidia.com/gpu.memory, 80 GiB), every bound pod names its GPUs
// (muster.io/gpu-ids, drawn at random among the free ones), and on every
// other node (the even ones: half the nodes) one or two of the GPUs left
// free carry 1-3 bound sharers of 0.25 (muster.io/gpu-fraction and
// muster.io/gpu-shares, as bind writes them). A whole-GPU pod's fit then
// looks at single GPUs on those nodes; `share_body` is the same probe
// asking 0.5 of one GPU (muster.io/gpu-fraction, no nvidia.com/gpu).
//
// The same sources also build at a commit before GPU sharing (the latency
// A/B of bench/extender_ab.sh): without model/gpu_share.h there,
// kGpuSharing is false, nvidia.com/gpu counts whole GPUs instead of
// thousandths, and a `shared_gpus` fixture is the plain one (the shared-GPU
// benchmarks skip themselves).
//
// Thread-safety: FixtureFor() is for the benchmark's main thread; a
// fixture's cache and pipeline are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "model/clock.h"

#if __has_include("model/gpu_share.h")
#define MUSTER_BENCH_GPU_SHARING 1
#else
#define MUSTER_BENCH_GPU_SHARING 0
#endif

namespace muster::extender::bench {

// Whether this build has GPU sharing (issue 18; see the top).
inline constexpr bool kGpuSharing = MUSTER_BENCH_GPU_SHARING != 0;

inline constexpr int kGpusPerNode = 8;
inline constexpr int kPodsPerNode = 10;

std::string NodeName(int i);

// Fills `cache` with `nodes` nodes and `pods_per_node` bound pods on each.
// Deterministic (fixed seed). With `gpu_topology`, every node also publishes
// muster.io/gpu-topology (two 4-GPU NVLink islands, SYS between) and every
// bound pod names its GPUs (muster.io/gpu-ids, drawn at random among the
// free ones): the verbs then score GPU sets too. With `shared_gpus`, see the
// top (GPU sharing).
void FillCache(ClusterCache& cache, int nodes, int pods_per_node, bool gpu_topology = false,
               bool shared_gpus = false);

// The names-only ExtenderArgs body naming nodes 0..nodes-1; with
// `gpu_fraction` ("0.5"), the probe asks that share of one GPU instead of
// its 4 whole GPUs.
std::string NamesOnlyRequest(int nodes, std::string_view gpu_fraction = "");

// A filled cache with its queues read, the default pipeline over it and the
// request bodies.
struct ClusterFixture {
  ClusterFixture(int nodes, bool gpu_topology, bool shared_gpus = false);

  const int nodes;
  FakeClock clock;
  ClusterCache cache{clock};
  Pipeline pipeline{PolicyConfig{}, &cache};
  const std::string body;        // the 4-GPU probe
  const std::string share_body;  // the same probe asking 0.5 of one GPU
};

// One fixture per size (and GPU topology, shared GPUs or not) for the whole
// process (filling 5000 nodes takes a while); never freed.
ClusterFixture& FixtureFor(int nodes, bool gpu_topology = false, bool shared_gpus = false);

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
