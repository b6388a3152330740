// GPU sharing, placement quality (issue 18 acceptance 5): how many requests
// muster places when whole-GPU pods and pods sharing GPUs arrive one after
// another, and how fragmented the GPUs are at the end, against first-fit on
// the same arrival order. A plain executable, not Google Benchmark: it
// measures placements, not time. Built as gpu_sharing_quality, run by
// bench/gpu_sharing.sh (several seeds).
//
// The cluster: 100 nodes "gpu-000".."gpu-099" (zero-padded, so name order
// is index order) x 8 GPUs of 80 GiB (label nvidia.com/gpu.memory=81920).
// Every node carries Volcano's vGPU registration (volcano.sh/node-vgpu-register,
// 8 GPUs of 81920 MiB, split 10) and advertises both nvidia.com/gpu 8 and
// the vGPU resources (volcano.sh/vgpu-number 80, -memory, -cores). Why every
// node: vGPU pods ask volcano.sh/vgpu-*, which only a registered node
// advertises, and half the nodes registered would split the cluster into
// two pools that whole and vGPU pods could not both use; with every node
// alike the three kinds of requests compete for the same GPUs, which is
// what fragments them. The registration makes each GPU take at most 10
// sharers (fractions included), on both sides.
//
// The arrivals (seeded; the same sequence for both sides): requests drawn
// from Mix() - whole-GPU pods (1, 2, 4, 8 GPUs), fractions
// (muster.io/gpu-fraction 0.25, 0.5, 0.75: that share of compute and of
// memory) and memory-bound vGPU pods (volcano.sh/vgpu-memory 20, 40, 60 GiB
// with vgpu-cores 10-20 %: memory fills the GPU before compute does) - until
// they offer --offer (1.2) times the cluster's GPUs. Request i arrives at
// time i and, once placed, leaves at time i + its lifetime (exponential,
// mean --life (4.0) times the number of requests): about an eighth of the
// placed pods leave before the end, so holes open while the cluster fills
// and the last arrivals meet a full, fragmented cluster (churn, not a plain
// fill-up). bench/gpu_sharing.sh also runs --offer=1.5 --life=2: a fifth
// leave, and the cluster stays full for the last third or so of the run (a
// steady state; "first refused" says when it filled). Departures due at
// time i go before arrival i. A request no node can take is refused and
// dropped: not retried, on either side (kube-scheduler would retry it;
// dropping keeps both sides on the same arrival sequence).
//
// muster: each arrival goes through the real pipeline, as kube-scheduler
// drives it: the pending pod enters the cache (the pod informer), Filter in
// cache mode (nodeCacheCapable: NodeNames) over every node, Prioritize over
// the nodes that passed, the highest score wins - ties by name, a
// deterministic stand-in for kube-scheduler, which also adds its in-tree
// scores and picks at random among equals - then ReserveBind and
// FinishBind(Ok), and the pod is upserted bound with the Binding's
// annotations (as the API server merges them). kube-scheduler's in-tree
// filters are not emulated: cpu, memory and pods are sized never to bind,
// and the vGPU totals a node advertises never bind before the per-GPU rules
// (80 vGPUs = 8 GPUs x 10 sharers, memory 8 x 81920 MiB). With 100 nodes
// kube-scheduler scores every node that passes (percentageOfNodesToScore).
//
// first-fit: the first node (by name) that can hold the request, and there
// the lowest-index GPUs: whole GPUs on idle GPUs, each share on the first
// GPU with room. "Room" is muster's own per-GPU rule (model/gpu_share.h
// PlaceShares asked about one GPU at a time: compute, memory, sharer limit,
// never beside a whole holder), so the two sides differ only in where they
// put things, never in what fits.
//
// Reported per seed and side, then the medians over the seeds with the
// seeds' min and max, and muster/first-fit (the ratio of the medians, and
// the median, min and max of the seeds' ratios): requests placed and
// refused, GPUs placed (a request's size in GPUs: whole count, fraction, or
// the larger of its memory and compute shares), whole-GPU requests refused
// while the cluster had enough GPUs for them in total - idle GPUs (spread
// over nodes), and free capacity counting what shared GPUs have left
// (stranded in shares) - and at the end the GPUs partly used (shared, with
// share left), what those have left (share_left, in GPUs: capacity stranded
// in shares, which no whole-GPU pod can use) and the GPUs idle. Each side
// keeps its own ledger of the GPUs; muster's is built from the Binding
// annotations and checked against the cache's after every run, and both
// are checked never to exceed a GPU's compute, memory or sharer limit. A
// failed check, or muster refusing a request first-fit's rules place on
// muster's own state, exits 1.
//
// usage: gpu_sharing_quality [--seed=N] [--runs=N] [--nodes=N] [--offer=X] [--life=X]
//   --seed  first seed (default 1); --runs seeds seed, seed+1, ... (default 9)
//   --nodes nodes (default 100); --offer GPUs offered per GPU (default 1.2)
//   --life  mean lifetime, in numbers of requests (default 4.0)
// Deterministic: the same flags give the same output.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extender/cluster_cache.h"
#include "extender/gpu_ledger.h"
#include "extender/pipeline.h"
#include "extender/workload_index.h"
#include "kube/codec/extender_types.h"
#include "kube/codec/vgpu_codec.h"
#include "model/clock.h"
#include "model/gpu_share.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/resources.h"

namespace muster::extender::bench {
namespace {

constexpr int kGpus = 8;
constexpr int64_t kGpuMemoryMib = 81920;
constexpr int32_t kSplit = 10;  // vGPUs (sharers) per GPU, as registered

// ---------------------------------------------------------------------------
// The requests.

struct Ask {
  enum class Kind { kWhole, kFraction, kVgpu };
  Kind kind = Kind::kWhole;
  int whole = 0;           // kWhole: GPUs
  std::string fraction;    // kFraction: the annotation's value
  int64_t vgpu_mib = 0;    // kVgpu: memory
  int32_t vgpu_cores = 0;  // kVgpu: percent of compute

  // Its size in GPUs (what "GPUs placed" adds up).
  double Gpus() const {
    switch (kind) {
      case Kind::kWhole:
        return whole;
      case Kind::kFraction:
        return std::stod(fraction);
      case Kind::kVgpu:
        return std::max(static_cast<double>(vgpu_mib) / kGpuMemoryMib, vgpu_cores / 100.0);
    }
    return 0;
  }
};

// What arrives, with weights (percent). Whole GPUs are most of the GPUs
// asked for (as in a training cluster), shares most of the requests.
struct MixEntry {
  Ask ask;
  int weight;
};
const std::vector<MixEntry>& Mix() {
  using K = Ask::Kind;
  static const auto* mix = new std::vector<MixEntry>{
      {{.kind = K::kWhole, .whole = 1}, 22},
      {{.kind = K::kWhole, .whole = 2}, 10},
      {{.kind = K::kWhole, .whole = 4}, 6},
      {{.kind = K::kWhole, .whole = 8}, 3},
      {{.kind = K::kFraction, .fraction = "0.25"}, 12},
      {{.kind = K::kFraction, .fraction = "0.5"}, 12},
      {{.kind = K::kFraction, .fraction = "0.75"}, 8},
      {{.kind = K::kVgpu, .vgpu_mib = 20480, .vgpu_cores = 10}, 10},
      {{.kind = K::kVgpu, .vgpu_mib = 40960, .vgpu_cores = 20}, 10},
      {{.kind = K::kVgpu, .vgpu_mib = 61440, .vgpu_cores = 20}, 7},
  };
  return *mix;
}

struct Arrival {
  Ask ask;
  int64_t leaves_at = 0;  // time (arrival index) it leaves once placed
};

// Draws from mt19937's raw output only (its sequence is fixed by the
// standard; the <random> distributions are not): the same seed gives the
// same arrivals with any standard library.
class Draw {
 public:
  explicit Draw(uint32_t seed) : rng_(seed) {}
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(rng_()) / 4294967296.0; }
  int Below(int n) { return static_cast<int>(Unit() * n); }

 private:
  std::mt19937 rng_;
};

std::vector<Arrival> Arrivals(uint32_t seed, int nodes, double offer, double life) {
  Draw draw(seed);
  int total_weight = 0;
  for (const MixEntry& e : Mix()) total_weight += e.weight;
  std::vector<Arrival> out;
  double offered = 0;
  while (offered < offer * nodes * kGpus) {
    int pick = draw.Below(total_weight);
    const MixEntry* entry = &Mix().front();
    for (const MixEntry& e : Mix()) {
      entry = &e;
      if (pick < e.weight) break;
      pick -= e.weight;
    }
    out.push_back(Arrival{.ask = entry->ask});
    offered += entry->ask.Gpus();
  }
  // Lifetimes once the count is known: the mean is in units of the run.
  const double mean = life * static_cast<double>(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double lifetime = std::ceil(-mean * std::log(1.0 - draw.Unit()));
    out[i].leaves_at = static_cast<int64_t>(i) + std::max<int64_t>(1, std::llround(lifetime));
  }
  return out;
}

std::string NodeName(int i) {
  char name[16];
  std::snprintf(name, sizeof(name), "gpu-%03d", i);
  return name;
}

Node MakeNode(int i) {
  Node node;
  node.meta.name = NodeName(i);
  node.meta.uid = "node-uid-" + std::to_string(i);
  node.meta.labels = {{"kubernetes.io/hostname", node.meta.name},
                      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      {std::string(kLabelGpuMemory), std::to_string(kGpuMemoryMib)}};
  std::vector<kube::VgpuRegistration> gpus;
  for (int g = 0; g < kGpus; ++g) {
    gpus.push_back({.uuid = "GPU-" + std::to_string(i) + "-" + std::to_string(g),
                    .split = kSplit,
                    .memory_mib = kGpuMemoryMib,
                    .type = "NVIDIA-A100-SXM4-80GB",
                    .mode = "hami-core"});
  }
  node.meta.annotations[std::string(kube::kAnnotationVgpuRegister)] =
      kube::EncodeVgpuRegistration(gpus);
  node.allocatable = Resources{{"cpu", 95500},
                               {"memory", int64_t{1140} << 30},
                               {std::string(kNvidiaGpu), kGpus * kMilliPerGpu},
                               {"pods", 110},
                               {std::string(kVgpuNumber), kGpus * kSplit},
                               {std::string(kVgpuMemory), kGpus * kGpuMemoryMib},
                               {std::string(kVgpuCores), kGpus * 100}};
  node.capacity = node.allocatable;
  return node;
}

// The pending pod of request i: CPU and memory sized never to bind (see
// the top).
Pod MakePod(uint32_t seed, size_t i, const Ask& ask) {
  Pod pod;
  pod.meta.namespace_ = "bench";
  pod.meta.name = "r-" + std::to_string(i);
  pod.meta.uid = "uid-" + std::to_string(seed) + "-" + std::to_string(i);
  pod.spec.scheduler_name = std::string(kVolcanoSchedulerName);
  pod.status.phase = "Pending";
  Container c;
  c.name = "main";
  c.image = "registry.example.com/ml/infer:v1";
  switch (ask.kind) {
    case Ask::Kind::kWhole:
      c.resources.requests = Resources{{"cpu", 4000 * ask.whole},
                                       {"memory", (int64_t{32} << 30) * ask.whole},
                                       {std::string(kNvidiaGpu), ask.whole * kMilliPerGpu}};
      break;
    case Ask::Kind::kFraction:
      c.resources.requests = Resources{{"cpu", 2000}, {"memory", int64_t{8} << 30}};
      pod.meta.annotations[std::string(kAnnotationGpuFraction)] = ask.fraction;
      break;
    case Ask::Kind::kVgpu:
      c.resources.requests = Resources{{"cpu", 2000},
                                       {"memory", int64_t{8} << 30},
                                       {std::string(kVgpuNumber), 1},
                                       {std::string(kVgpuMemory), ask.vgpu_mib},
                                       {std::string(kVgpuCores), ask.vgpu_cores}};
      break;
  }
  c.resources.limits = c.resources.requests;
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

// ---------------------------------------------------------------------------
// A side's own record of the GPUs, and the figures read from it.

const std::vector<GpuCard>& Cards() {
  static const auto* cards = new std::vector<GpuCard>(
      kGpus, GpuCard{.memory_mib = kGpuMemoryMib, .max_sharers = kSplit, .vgpu = true});
  return *cards;
}

struct Ledger {
  explicit Ledger(int nodes) : uses(static_cast<size_t>(nodes)) {}
  std::vector<GpuUses> uses;

  // How full GPU g of node n is, 0..1 (held whole or at its sharer limit: 1).
  double Fill(size_t n, int g) const {
    const GpuCardUse& u = uses[n][static_cast<size_t>(g)];
    if (u.whole > 0 || u.sharers >= kSplit) return 1;
    return std::min(1.0, std::max(static_cast<double>(u.compute) / kGpuCompute,
                                  static_cast<double>(u.memory_mib) / kGpuMemoryMib));
  }
  int Idle() const {
    int idle = 0;
    for (const GpuUses& node : uses) {
      for (int g = 0; g < kGpus; ++g) idle += node[static_cast<size_t>(g)].idle() ? 1 : 0;
    }
    return idle;
  }
  // GPUs of free capacity: idle GPUs plus what shared GPUs have left.
  double FreeCapacity() const {
    double free = 0;
    for (size_t n = 0; n < uses.size(); ++n) {
      for (int g = 0; g < kGpus; ++g) free += 1 - Fill(n, g);
    }
    return free;
  }
  // Shared GPUs with share left: partly used.
  int PartlyUsed() const {
    int partly = 0;
    for (size_t n = 0; n < uses.size(); ++n) {
      for (int g = 0; g < kGpus; ++g) partly += IsPartlyUsed(n, g) ? 1 : 0;
    }
    return partly;
  }
  // What the partly used GPUs have left, in GPUs: capacity stranded in
  // shares (only more sharers can use it, never a whole-GPU pod).
  double ShareLeft() const {
    double left = 0;
    for (size_t n = 0; n < uses.size(); ++n) {
      for (int g = 0; g < kGpus; ++g) left += IsPartlyUsed(n, g) ? 1 - Fill(n, g) : 0;
    }
    return left;
  }
  bool IsPartlyUsed(size_t n, int g) const {
    return uses[n][static_cast<size_t>(g)].sharers > 0 && Fill(n, g) < 1;
  }
  // "" when every GPU is within its limits, else the first one that is not.
  std::string Overcommitted() const {
    for (size_t n = 0; n < uses.size(); ++n) {
      for (int g = 0; g < kMaxNodeGpus; ++g) {
        const GpuCardUse& u = uses[n][static_cast<size_t>(g)];
        const bool ok = (g < kGpus || u.idle()) && u.whole <= 1 &&
                        (u.whole == 0 || u.sharers == 0) && u.sharers <= kSplit &&
                        u.compute <= kGpuCompute && u.memory_mib <= kGpuMemoryMib;
        if (!ok) {
          return NodeName(static_cast<int>(n)) + " GPU " + std::to_string(g) + ": whole " +
                 std::to_string(u.whole) + ", sharers " + std::to_string(u.sharers) + ", compute " +
                 std::to_string(u.compute) + ", memory " + std::to_string(u.memory_mib);
        }
      }
    }
    return "";
  }
};

struct Placement {
  int node = -1;
  GpuHolding gpus;
};

// First-fit: the first node, by name, that holds the request, and there
// its lowest-index GPUs with room.
std::optional<Placement> FirstFit(const Ledger& ledger, const GpuDemand& demand) {
  for (size_t n = 0; n < ledger.uses.size(); ++n) {
    const GpuUses& uses = ledger.uses[n];
    if (demand.whole > 0) {
      uint32_t idle = 0;
      for (int g = 0; g < kGpus; ++g) {
        if (uses[static_cast<size_t>(g)].idle()) idle |= uint32_t{1} << g;
      }
      if (std::popcount(idle) < demand.whole) continue;
      uint32_t lowest = 0;
      for (uint32_t m = idle; std::popcount(lowest) < demand.whole; m &= m - 1) lowest |= m & -m;
      return Placement{.node = static_cast<int>(n), .gpus = GpuHolding{.whole = lowest}};
    }
    // Each GPU a share needs, the first with room (muster's rule for one GPU).
    GpuUses work = uses;
    GpuHolding holding;
    bool fits = true;
    for (const GpuShareAsk& ask : demand.shares) {
      if (!fits) break;
      GpuShareAsk one = ask;
      one.gpus = 1;
      uint32_t taken = 0;
      for (int32_t k = 0; k < ask.gpus && fits; ++k) {
        std::optional<std::vector<GpuSlice>> slice;
        for (int g = 0; g < kGpus && !slice; ++g) {
          if (((taken >> g) & 1U) != 0) continue;
          slice = PlaceShares(std::span(&one, 1), Cards(), work, uint32_t{1} << g, {});
        }
        if (!slice) {
          fits = false;
          break;
        }
        taken |= uint32_t{1} << slice->front().gpu;
        AccountHolding(work, GpuHolding{.slices = *slice}, +1);
        holding.slices.push_back(slice->front());
      }
    }
    if (fits) return Placement{.node = static_cast<int>(n), .gpus = std::move(holding)};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The two sides.

class Side {
 public:
  virtual ~Side() = default;
  // Where the pending pod goes (and it is placed there), nullopt: refused.
  virtual std::optional<Placement> Place(const Pod& pod, const GpuDemand& demand) = 0;
  virtual void Leave(const Pod& pod) = 0;
};

class FirstFitSide final : public Side {
 public:
  explicit FirstFitSide(Ledger* ledger) : ledger_(ledger) {}
  std::optional<Placement> Place(const Pod&, const GpuDemand& demand) override {
    return FirstFit(*ledger_, demand);
  }
  void Leave(const Pod&) override {}

 private:
  const Ledger* ledger_;
};

// Whether two holdings take the same of the same GPUs. (A fraction's slice
// says container -1 in bind's choice and 0 read back from
// muster.io/gpu-shares, whose segments are per container.)
bool SameGpus(const GpuHolding& a, const GpuHolding& b) {
  const auto same = [](const GpuSlice& x, const GpuSlice& y) {
    return x.gpu == y.gpu && x.compute == y.compute && x.memory_mib == y.memory_mib;
  };
  return a.whole == b.whole && std::ranges::equal(a.slices, b.slices, same);
}

// A bug in muster or in this driver: say so and stop.
[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "gpu_sharing_quality: %s\n", what.c_str());
  std::exit(1);
}

class MusterSide final : public Side {
 public:
  explicit MusterSide(int nodes) {
    for (int i = 0; i < nodes; ++i) {
      cache_.UpsertNode(MakeNode(i));
      names_.push_back(NodeName(i));
    }
    // What the gang controller's first pass publishes when the only queue
    // is an unlimited "default": the queue gate then admits plain pods
    // (each is Volcano's PodGroup of one).
    cache_.Exclusive([&](ClusterState& state) {
      state.queue_gate().Publish(
          QueueBoard{.queues = {{"default", QueueRoom{.path = {"default"}}}}, .at = clock_.Now()},
          [](std::string_view) { return true; }, std::chrono::seconds(30));
    });
  }

  std::optional<Placement> Place(const Pod& pending, const GpuDemand&) override {
    cache_.UpsertPod(pending);  // the pod informer sees it first
    // filter: every node, by name (kube-scheduler's cache mode).
    StatusOr<kube::ExtenderFilterResult> filtered = kube::DecodeExtenderFilterResult(
        pipeline_.Filter(kube::EncodeExtenderArgs({.pod = pending, .node_names = names_})).body);
    if (!filtered.ok() || !filtered->error.empty()) {
      Fail("filter of " + pending.meta.name + ": " +
           (filtered.ok() ? filtered->error : filtered.status().ToString()));
    }
    const std::vector<std::string> passed =
        filtered->node_names.value_or(std::vector<std::string>{});
    if (passed.empty()) {
      cache_.DeletePod(pending.meta.uid);  // refused, not retried
      return std::nullopt;
    }
    // prioritize the nodes that passed; the highest score, ties by name.
    StatusOr<kube::HostPriorityList> scores = kube::DecodeHostPriorityList(
        pipeline_.Prioritize(kube::EncodeExtenderArgs({.pod = pending, .node_names = passed}))
            .body);
    if (!scores.ok() || scores->size() != passed.size()) {
      Fail("prioritize of " + pending.meta.name + ": " +
           (scores.ok() ? "wrong number of hosts" : scores.status().ToString()));
    }
    const kube::HostPriority* best = &scores->front();
    for (const kube::HostPriority& h : *scores) {
      if (h.score > best->score || (h.score == best->score && h.host < best->host)) best = &h;
    }
    // bind: reserve, "post" (succeeds), finish; the pod is then seen bound
    // with the Binding's annotations.
    const BindPlan plan = pipeline_.ReserveBind(
        kube::EncodeExtenderBindingArgs({.pod_name = pending.meta.name,
                                         .pod_namespace = pending.meta.namespace_,
                                         .pod_uid = pending.meta.uid,
                                         .node = best->host}));
    if (plan.action != BindAction::kPost) {
      Fail("bind of " + pending.meta.name + " to " + best->host + ": " + plan.error);
    }
    pipeline_.FinishBind(plan, Status::Ok());
    Pod bound = pending;
    for (const auto& [k, v] : plan.binding.meta.annotations) bound.meta.annotations[k] = v;
    bound.spec.node_name = best->host;
    bound.status.phase = "Running";
    cache_.UpsertPod(bound);
    Placement placed{.node = std::stoi(best->host.substr(4)),
                     .gpus = HoldingOf(bound.meta.annotations)};
    if (!SameGpus(placed.gpus, plan.gpus)) {
      Fail(pending.meta.name + ": the Binding's annotations name other GPUs than bind chose");
    }
    return placed;
  }

  void Leave(const Pod& pod) override { cache_.DeletePod(pod.meta.uid); }

  // "" when the cache's GPU uses are the ledger's, else the first node that differs.
  std::string Differs(const Ledger& ledger) {
    std::string differs;
    cache_.Exclusive([&](ClusterState& state) {
      for (size_t n = 0; n < names_.size() && differs.empty(); ++n) {
        const NodeInfo* info = state.FindNode(names_[n]);
        if (info == nullptr || !(info->gpu_holds.uses == ledger.uses[n])) differs = names_[n];
      }
    });
    return differs;
  }

 private:
  FakeClock clock_;
  ClusterCache cache_{clock_};
  Pipeline pipeline_{PolicyConfig{}, &cache_};
  std::vector<std::string> names_;
};

// ---------------------------------------------------------------------------
// One run of one side.

struct Figures {
  int placed = 0;
  int refused = 0;
  int refused_whole = 0;
  double gpus_placed = 0;
  int frag_idle = 0;      // whole requests refused while >= k GPUs were idle in the cluster
  int frag_free = 0;      // ... while >= k GPUs of capacity were free, shares' leftovers included
  int partly_used = 0;    // at the end
  double share_left = 0;  // at the end, GPUs: what the partly used GPUs have left
  int idle = 0;           // at the end
  int departed = 0;
  int refused_placeable = 0;  // muster only: refused what first-fit's rules place (a bug)
  int first_refused = -1;     // the first request refused (-1: none)
};

Figures Run(Side& side, Ledger& ledger, bool check_refusals, uint32_t seed,
            const std::vector<Arrival>& arrivals) {
  Figures f;
  struct Live {
    Pod pod;
    Placement at;
  };
  // Placed pods by the time they leave (then by arrival: deterministic).
  std::multimap<std::pair<int64_t, size_t>, Live> live;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const auto now = static_cast<int64_t>(i);
    while (!live.empty() && live.begin()->first.first <= now) {
      Live& gone = live.begin()->second;
      side.Leave(gone.pod);
      AccountHolding(ledger.uses[static_cast<size_t>(gone.at.node)], gone.at.gpus, -1);
      ++f.departed;
      live.erase(live.begin());
    }
    const Ask& ask = arrivals[i].ask;
    const Pod pod = MakePod(seed, i, ask);
    const StatusOr<GpuDemand> demand = GpuDemandOf(pod);
    if (!demand.ok()) Fail(pod.meta.name + ": " + demand.status().ToString());
    std::optional<Placement> at = side.Place(pod, *demand);
    if (!at) {
      ++f.refused;
      if (f.first_refused < 0) f.first_refused = static_cast<int>(i);
      if (ask.kind == Ask::Kind::kWhole) {
        ++f.refused_whole;
        f.frag_idle += ledger.Idle() >= ask.whole ? 1 : 0;
        f.frag_free += ledger.FreeCapacity() >= ask.whole ? 1 : 0;
      }
      if (check_refusals && FirstFit(ledger, *demand)) ++f.refused_placeable;
      continue;
    }
    ++f.placed;
    f.gpus_placed += ask.Gpus();
    AccountHolding(ledger.uses[static_cast<size_t>(at->node)], at->gpus, +1);
    live.emplace(std::pair(arrivals[i].leaves_at, i), Live{.pod = pod, .at = *at});
  }
  f.partly_used = ledger.PartlyUsed();
  f.share_left = ledger.ShareLeft();
  f.idle = ledger.Idle();
  if (const std::string over = ledger.Overcommitted(); !over.empty()) {
    Fail("seed " + std::to_string(seed) + ": over a GPU's limits: " + over);
  }
  return f;
}

// ---------------------------------------------------------------------------
// The report.

struct Column {
  const char* name;
  double (*of)(const Figures&);
};
const std::vector<Column>& Columns() {
  static const auto* columns = new std::vector<Column>{
      {"placed", [](const Figures& f) { return double(f.placed); }},
      {"refused", [](const Figures& f) { return double(f.refused); }},
      {"whole_ref", [](const Figures& f) { return double(f.refused_whole); }},
      {"gpus_placed", [](const Figures& f) { return f.gpus_placed; }},
      {"frag_idle", [](const Figures& f) { return double(f.frag_idle); }},
      {"frag_free", [](const Figures& f) { return double(f.frag_free); }},
      {"partly_used", [](const Figures& f) { return double(f.partly_used); }},
      {"share_left", [](const Figures& f) { return f.share_left; }},
      {"idle_end", [](const Figures& f) { return double(f.idle); }},
  };
  return *columns;
}

void PrintHeader() {
  std::printf("  %-20s", "");
  for (const Column& c : Columns()) std::printf(" %11s", c.name);
  std::printf("\n");
}

void PrintRow(const char* label, const std::vector<double>& values) {
  std::printf("  %-20s", label);
  for (const double v : values) {
    if (v == std::floor(v)) {
      std::printf(" %11.0f", v);
    } else {
      std::printf(" %11.2f", v);
    }
  }
  std::printf("\n");
}

// m/ff; "=" when both are 0, "inf" when only ff is.
void PrintRatio(double m, double ff) {
  if (ff == 0 || std::isinf(m)) {
    std::printf(" %11s", m == 0 ? "=" : "inf");
  } else {
    std::printf(" %11.3f", m / ff);
  }
}

std::vector<double> Values(const Figures& f) {
  std::vector<double> out;
  for (const Column& c : Columns()) out.push_back(c.of(f));
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Options {
  uint32_t seed = 1;
  int runs = 9;
  int nodes = 100;
  double offer = 1.2;
  double life = 4.0;
};

Options ParseFlags(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const std::string value(eq == std::string_view::npos ? "" : arg.substr(eq + 1));
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (eq == std::string_view::npos || value.empty() || *end != '\0' || number <= 0) {
      Fail(
          "usage: gpu_sharing_quality [--seed=N] [--runs=N] [--nodes=N] [--offer=X] [--life=X]"
          " (positive numbers; got \"" +
          std::string(arg) + "\")");
    }
    if (name == "--seed") {
      o.seed = static_cast<uint32_t>(number);
    } else if (name == "--runs") {
      o.runs = static_cast<int>(number);
    } else if (name == "--nodes") {
      o.nodes = std::min(static_cast<int>(number), 999);
    } else if (name == "--offer") {
      o.offer = number;
    } else if (name == "--life") {
      o.life = number;
    } else {
      Fail("unknown flag " + std::string(arg));
    }
  }
  return o;
}

int Main(int argc, char** argv) {
  const Options o = ParseFlags(argc, argv);
  std::printf(
      "GPU sharing, placement quality: %d nodes x %d GPUs (80 GiB, vGPU split %d), requests "
      "offering %.2fx the GPUs, mean lifetime %.2fx the run; muster = the extender's "
      "filter/prioritize/bind, ties by name; first-fit = first node, lowest GPUs with room\n",
      o.nodes, kGpus, kSplit, o.offer, o.life);
  std::printf(
      "  columns: requests placed, refused (of which whole-GPU), GPUs placed (sizes summed), "
      "whole-GPU requests refused while >= k GPUs were idle (frag_idle) or free counting shares' "
      "leftovers (frag_free), at the end GPUs shared with share left (partly_used), what they have "
      "left in GPUs (share_left: stranded in shares) and idle GPUs (idle_end)\n");
  std::map<std::string, std::vector<Figures>> all;
  bool bad = false;
  for (int r = 0; r < o.runs; ++r) {
    const uint32_t seed = o.seed + static_cast<uint32_t>(r);
    const std::vector<Arrival> arrivals = Arrivals(seed, o.nodes, o.offer, o.life);
    int whole = 0;
    double offered = 0;
    for (const Arrival& a : arrivals) {
      whole += a.ask.kind == Ask::Kind::kWhole ? 1 : 0;
      offered += a.ask.Gpus();
    }
    std::printf("\nseed %u: %zu requests (%d whole-GPU, %zu shared), %.1f GPUs offered\n", seed,
                arrivals.size(), whole, arrivals.size() - static_cast<size_t>(whole), offered);
    Ledger muster_ledger(o.nodes);
    MusterSide muster(o.nodes);
    const Figures m = Run(muster, muster_ledger, /*check_refusals=*/true, seed, arrivals);
    if (const std::string node = muster.Differs(muster_ledger); !node.empty()) {
      Fail("seed " + std::to_string(seed) + ": the cache's GPU uses on " + node +
           " differ from the Bindings'");
    }
    Ledger ff_ledger(o.nodes);
    FirstFitSide first_fit(&ff_ledger);
    const Figures f = Run(first_fit, ff_ledger, /*check_refusals=*/false, seed, arrivals);
    PrintHeader();
    PrintRow("muster", Values(m));
    PrintRow("first-fit", Values(f));
    std::printf("  (left before the end: muster %d, first-fit %d; first refused: #%d, #%d)\n",
                m.departed, f.departed, m.first_refused, f.first_refused);
    if (m.refused_placeable > 0) {
      std::printf("  !! muster refused %d requests first-fit's rules place on muster's state\n",
                  m.refused_placeable);
      bad = true;
    }
    all["muster"].push_back(m);
    all["first-fit"].push_back(f);
  }
  std::printf("\nmedians over %d seeds (%u..%u), then the seeds' min and max\n", o.runs, o.seed,
              o.seed + static_cast<uint32_t>(o.runs) - 1);
  PrintHeader();
  std::map<std::string, std::vector<double>> medians;
  for (const char* side : {"muster", "first-fit"}) {
    std::vector<double> lows, highs;
    for (const Column& c : Columns()) {
      std::vector<double> v;
      for (const Figures& f : all[side]) v.push_back(c.of(f));
      medians[side].push_back(Median(v));
      lows.push_back(*std::min_element(v.begin(), v.end()));
      highs.push_back(*std::max_element(v.begin(), v.end()));
    }
    PrintRow(side, medians[side]);
    PrintRow("  min", lows);
    PrintRow("  max", highs);
  }
  // The ratio of the medians, and the median (min, max) of the seeds'
  // ratios (a seed where both are 0 has no ratio): the columns' medians may
  // come from different seeds.
  std::printf("  %-20s", "muster/first-fit");
  for (size_t k = 0; k < Columns().size(); ++k)
    PrintRatio(medians["muster"][k], medians["first-fit"][k]);
  std::vector<std::vector<double>> ratios;  // per column
  for (const Column& c : Columns()) {
    std::vector<double>& column = ratios.emplace_back();
    for (size_t r = 0; r < all["muster"].size(); ++r) {
      const double m = c.of(all["muster"][r]);
      const double ff = c.of(all["first-fit"][r]);
      if (ff != 0) {
        column.push_back(m / ff);
      } else if (m != 0) {
        column.push_back(HUGE_VAL);
      }
    }
  }
  const auto print_ratios = [&](const char* label, auto pick) {
    std::printf("\n  %-20s", label);
    for (const std::vector<double>& column : ratios) {
      if (column.empty()) {
        std::printf(" %11s", "=");
      } else {
        PrintRatio(pick(column), 1);
      }
    }
  };
  print_ratios("seeds' m/ff: median", [](const std::vector<double>& v) { return Median(v); });
  print_ratios("  min", [](const std::vector<double>& v) { return *std::ranges::min_element(v); });
  print_ratios("  max", [](const std::vector<double>& v) { return *std::ranges::max_element(v); });
  std::printf("\n");
  return bad ? 1 : 0;
}

}  // namespace
}  // namespace muster::extender::bench

int main(int argc, char** argv) { return muster::extender::bench::Main(argc, argv); }
