#include "extender/gang_controller.h"

#include <algorithm>
#include <utility>

#include "extender/gang_write_sender.h"
#include "extender/topology_step.h"

namespace muster::extender {
namespace {

// What tells the controller the cluster changed: the cache's pods and nodes,
// gang members (gates and annotations too), PodGroups and Queues.
uint64_t ChangeCount(const ClusterState& state) {
  return state.generation() + state.gang_generation() + state.workloads().View().generation();
}

// How a gang or pod in a queue that does not decode is told why it waits.
std::string BrokenQueueMessage(const BrokenObject& queue) {
  return "queue \"" + queue.name + "\" cannot be read: " + queue.problem +
         " (fix the Queue; nothing new is admitted to it meanwhile)";
}

// A queue that exists but does not decode is not "missing": the gangs it
// holds (QueueNotFound) are told what is wrong with it.
void NameBrokenQueues(const std::map<std::string, BrokenObject, std::less<>>& broken,
                      QueueStep& queues) {
  for (gang::Wait& w : queues.held) {
    if (w.reason != kWaitQueueNotFound) continue;
    const auto name = queues.queue_of.find(w.key);
    if (name == queues.queue_of.end()) continue;
    if (const auto b = broken.find(name->second); b != broken.end()) {
      w.message = BrokenQueueMessage(b->second);
    }
  }
}

WriteOptions WriteOptionsOf(const GangControllerOptions& options) {
  return {.pin_members = options.pin_members,
          .status_message_interval = options.status_message_interval,
          .queue_status_interval = options.queue_status_interval,
          .preemption_grace = options.preemption_grace,
          .reservation_timeout = options.pass.reservation_timeout};
}

}  // namespace

GangController::GangController(ClusterAccess* cluster, kube::Client* client, const Clock& clock,
                               GangControllerOptions options, ExtenderMetrics* metrics)
    : cluster_(cluster),
      client_(client),
      clock_(clock),
      options_(std::move(options)),
      observer_(metrics),
      executor_({.parallelism = options_.io_parallelism,
                 .on_batch = [this](const base::WriteExecutor::BatchReport& report) {
                   observer_.ObserveBatch(report);
                 }}) {}

GangController::~GangController() { Stop(); }

void GangController::Start() {
  stop_ = false;
  executor_.Start();
  thread_ = std::thread([this] { Loop(); });
}

void GangController::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // Unsent writes are planned again by a later pass (a restarted extender
  // plans and writes everything again anyway).
  executor_.Stop();
}

void GangController::Loop() {
  while (!stop_) {
    std::this_thread::sleep_for(std::max<std::chrono::steady_clock::duration>(
        options_.poll_interval, std::exchange(pause_after_pass_, {})));
    if (ShouldRun(clock_.Now())) RunPass();
  }
}

bool GangController::ShouldRun(Time now) {
  uint64_t generation = 0;
  cluster_->Exclusive([&](ClusterState& state) { generation = ChangeCount(state); });
  if (generation != last_generation_) return true;
  if (settle_release_ && now >= *settle_release_) return true;
  return !last_pass_ || now - *last_pass_ >= options_.resync_interval;
}

void GangController::RunPass() {
  const auto started = std::chrono::steady_clock::now();
  const Time now = clock_.Now();
  // What the last passes failed to write is planned again.
  for (const base::WriteExecutor::Unwritten& u : executor_.TakeUnwritten()) {
    ForgetUnwritten({u.rank, u.key}, memory_);
  }
  GangInputs inputs = ReadInputs(now);
  const QueueStep queues = RunQueues(inputs, now);
  gang::PassResult result = Decide(inputs, queues, now);
  const size_t held = HoldWhileSettling(inputs, result, now);
  const std::vector<std::string> applied = Reserve(inputs, queues, result, now);
  RememberReclaim(queues, result, now);
  const PassFacts facts{.inputs = inputs,
                        .queues = queues,
                        .result = result,
                        .applied = applied,
                        .now = now,
                        .plans_held = held};
  WritePlan plan = PlanWrites(facts, WriteOptionsOf(options_), memory_);
  observer_.ObservePass(facts, plan, memory_.gangs,
                        last_pass_ ? now - *last_pass_ : Duration::zero());
  last_pass_ = now;
  // The wall time, not the injected clock: this is a cost, not a decision.
  const auto cost = std::chrono::steady_clock::now() - started;
  observer_.ObservePassDuration(std::chrono::duration<double>(cost).count());
  pause_after_pass_ =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(cost * options_.pass_pacing);
  const int binds_ahead = BindsAhead(plan.writes);
  if (binds_ahead > 0 && options_.binds_ahead) options_.binds_ahead(binds_ahead);
  Execute(std::move(plan.writes));
}

GangInputs GangController::ReadInputs(Time now) {
  GangRead read;
  cluster_->Exclusive([&](ClusterState& state) {
    last_generation_ = ChangeCount(state);
    read = ReadGangs(state, built_);
  });
  return AssembleInputs(std::move(read), memory_.gangs, memory_.evicted, now);
}

QueueStep GangController::RunQueues(GangInputs& inputs, Time now) {
  QueueStep queues = RunQueueStep(inputs.queues, inputs.free, inputs.gangs, inputs.victims);
  NameBrokenQueues(inputs.broken_queues, queues);
  ApplyReclaimHysteresis(queues, reclaim_, now, options_.reclaim);
  for (gang::Wait& w :
       ApplyNetworkTiers(options_.network_tiers, inputs.view, inputs.groups, inputs.gangs)) {
    queues.held.push_back(std::move(w));
  }
  return queues;
}

gang::PassResult GangController::Decide(const GangInputs& inputs, const QueueStep& queues,
                                        Time now) const {
  // The pass plans within what the pods the queue gate admitted left.
  gang::QueueLimits limits = queues.limits;
  ChargeLimits(limits, inputs.charged);
  gang::PassResult result = gang::RunPass(
      inputs.view, PlannedGangs(inputs.gangs, queues.held, inputs.waiting, inputs.queues),
      inputs.victims, now, options_.pass, limits);
  result.waits.insert(result.waits.end(), queues.held.begin(), queues.held.end());
  return result;
}

size_t GangController::HoldWhileSettling(const GangInputs& inputs, gang::PassResult& result,
                                         Time now) {
  const gang::SettleDecision d =
      gang::Settle(settle_, inputs.free, gang::ShortOfCapacity(result), now, options_.settle);
  settle_ = d.next;
  settle_release_ = d.release_at;
  if (!d.hold) return 0;
  const size_t held = result.plans.size();
  result.plans.clear();  // planned again, together, once the capacity settled
  return held;
}

std::vector<std::string> GangController::Reserve(const GangInputs& inputs, const QueueStep& queues,
                                                 const gang::PassResult& result, Time now) {
  std::vector<std::string> applied;
  const Duration ttl = options_.pass.reservation_timeout * 2;
  cluster_->Exclusive([&](ClusterState& state) {
    applied = ApplyPass(state, inputs, result, ttl);
    QueueBoard board = BoardOf(queues, inputs.queues,
                               ReservedPerQueue(inputs.gangs, result, applied), result.waits, now);
    for (const auto& [name, broken] : inputs.broken_queues) {
      board.broken[name] = BrokenQueueMessage(broken);
    }
    state.queue_gate().Publish(
        std::move(board), [&](std::string_view uid) { return inputs.placed.contains(uid); },
        options_.queue_charge_ttl);
  });
  return applied;
}

void GangController::RememberReclaim(const QueueStep& queues, const gang::PassResult& result,
                                     Time now) {
  if (!result.preemption.has_value()) return;
  const gang::Preemption& p = *result.preemption;
  std::vector<std::string> from;
  for (const std::string& v : p.reclaimed) {
    if (const auto q = queues.queue_of.find(v); q != queues.queue_of.end()) {
      from.push_back(q->second);
    }
  }
  RecordReclaim(reclaim_, p.queue, from, now);
}

void GangController::Execute(std::vector<GangWrite> writes) {
  if (client_ == nullptr || writes.empty()) return;  // tests: nothing is written
  std::vector<base::WriteExecutor::Write> out;
  out.reserve(writes.size());
  kube::Client* client = client_;
  for (GangWrite& w : writes) {
    out.push_back(ToExecutorWrite(
        std::move(w), [client](const GangWrite& write) { return SendGangWrite(*client, write); }));
  }
  executor_.Submit(std::move(out));
}

}  // namespace muster::extender
