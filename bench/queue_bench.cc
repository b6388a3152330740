// The queue step's pure decision (queue::ComputeShares + queue::RankGangs):
// what every gang controller pass adds for fair share. Shapes: `queues`
// leaf queues (half of them under 4 parents), `gangs` pending gangs spread
// over them, 3 resources.
//
//   QueueStep/<queues>/<gangs>
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "queue/queue.h"

namespace muster::queue {
namespace {

Resources Request(int i) {
  return Resources{{"cpu", 1000 * (1 + i % 8)},
                   {"memory", int64_t{1} << (30 + i % 4)},
                   {std::string(kNvidiaGpu), i % 3 == 0 ? 0 : (1 + i % 8) * kMilliPerGpu}};
}

std::vector<QueueState> Queues(int n) {
  std::vector<QueueState> queues;
  for (int p = 0; p < 4; ++p)
    queues.push_back({.name = "parent-" + std::to_string(p), .weight = 1 + p});
  for (int i = 0; i < n; ++i) {
    QueueState q{.name = "q-" + std::to_string(i), .weight = 1 + i % 5};
    if (i % 2 == 0) q.parent = "parent-" + std::to_string(i % 4);
    q.allocated = Request(i);
    q.allocated *= 10;
    q.pending = Request(i + 1);
    q.pending *= 50;
    if (i % 7 == 0) q.capability = Resources{{std::string(kNvidiaGpu), 200 * kMilliPerGpu}};
    queues.push_back(std::move(q));
  }
  return queues;
}

std::vector<PendingGang> Gangs(int queues, int n) {
  std::vector<PendingGang> gangs;
  for (int i = 0; i < n; ++i) {
    gangs.push_back(PendingGang{.key = "ns/g-" + std::to_string(i),
                                .queue = "q-" + std::to_string(i % queues),
                                .priority = i % 3,
                                .created = Time::FromUnixSeconds(1000 + i),
                                .request = Request(i)});
  }
  return gangs;
}

void BM_QueueStep(benchmark::State& state) {
  const int queues = static_cast<int>(state.range(0));
  const std::vector<QueueState> list = Queues(queues);
  const std::vector<PendingGang> gangs = Gangs(queues, static_cast<int>(state.range(1)));
  const Resources total{{"cpu", 96'000 * 1000},
                        {"memory", int64_t{1536} << 40},
                        {std::string(kNvidiaGpu), 8000 * kMilliPerGpu}};
  for (auto _ : state) {
    const Shares shares = ComputeShares(list, total);
    benchmark::DoNotOptimize(RankGangs(shares, gangs));
  }
}
BENCHMARK(BM_QueueStep)
    ->Args({4, 100})
    ->Args({16, 1000})
    ->Args({64, 1000})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace muster::queue
