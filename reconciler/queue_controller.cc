#include "reconciler/queue_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "kube/codec/bus_codec.h"
#include "kube/codec/core_codec.h"
#include "kube/codec/volcano_codec.h"
#include "model/api_objects.h"
#include "reconciler/naming.h"
#include "reconciler/queue_state.h"

namespace muster::reconciler {
namespace {

constexpr std::string_view kComponent = "muster-reconciler";
constexpr std::string_view kBusApiVersion = "bus.volcano.sh/v1alpha1";
// How often the worker looks at its timers when nothing else wakes it.
constexpr auto kTick = std::chrono::milliseconds(100);

// "namespace/name" -> {namespace, name}; a cluster-scoped key has no '/'.
std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

int64_t ParseVersion(const std::string& rv) {
  int64_t v = 0;
  std::from_chars(rv.data(), rv.data() + rv.size(), v);
  return v;
}

// The queue a PodGroup names (Volcano's CRD default: "default").
std::string QueueOf(const PodGroup& pg) {
  return pg.spec.queue.empty() ? std::string(kDefaultQueue) : pg.spec.queue;
}

ObjectReference CommandRef(const Command& c) {
  return ObjectReference{.api_version = std::string(kBusApiVersion),
                         .kind = std::string(kCommandKind),
                         .namespace_ = c.meta.namespace_,
                         .name = c.meta.name,
                         .uid = c.meta.uid};
}

ObjectReference TargetRef(const CommandPlan& plan, const ObjectMeta& meta) {
  const bool job = plan.target == CommandTarget::kJob;
  return ObjectReference{.api_version = std::string(job ? kJobApiVersion : kQueueApiVersion),
                         .kind = std::string(job ? kJobKind : kQueueKind),
                         .namespace_ = meta.namespace_,
                         .name = meta.name,
                         .uid = meta.uid};
}

ObjectReference QueueRef(const Queue& q) {
  return ObjectReference{.api_version = std::string(kQueueApiVersion),
                         .kind = std::string(kQueueKind),
                         .name = q.meta.name,
                         .uid = q.meta.uid};
}

bool Ignorable(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kConflict;
}

}  // namespace

QueueController::QueueController(kube::Client* client, const Clock& clock,
                                 ReconcilerMetrics* metrics, JobCommandHooks jobs,
                                 QueueControllerOptions options)
    : client_(client),
      clock_(clock),
      metrics_(metrics),
      jobs_(std::move(jobs)),
      options_(options),
      commands_(client, kube::CommandsRef(), kube::DecodeCommand, kube::DecodeCommandList),
      queues_(client, kube::QueuesRef(), kube::DecodeQueue, kube::DecodeQueueList),
      groups_(client, kube::PodGroupsRef(), kube::DecodePodGroup, kube::DecodePodGroupList) {
  Wire();
}

QueueController::~QueueController() { Stop(); }

void QueueController::Wire() {
  auto on_command = [this](const Command& c) { Add({.command = true, .key = c.meta.Key()}); };
  commands_.AddHandlers(
      {.on_add = on_command,
       .on_update = [on_command](const Command&, const Command& c) { on_command(c); },
       .on_delete =
           [this](const Command& c) {
             std::lock_guard lock(mu_);
             refused_.erase(c.meta.uid);
           }});
  auto sync = [this](const std::string& queue) { AddQueueSync(queue); };
  queues_.AddHandlers({.on_add = [sync](const Queue& q) { sync(q.meta.name); },
                       .on_update =
                           [this, sync](const Queue& before, const Queue& after) {
                             {
                               std::lock_guard lock(mu_);
                               auto it = written_.find(after.meta.name);
                               if (it != written_.end() &&
                                   ParseVersion(after.meta.resource_version) >=
                                       ParseVersion(it->second->meta.resource_version)) {
                                 written_.erase(it);
                               }
                             }
                             if (before.status.state != after.status.state) sync(after.meta.name);
                           },
                       .on_delete =
                           [this](const Queue& q) {
                             std::lock_guard lock(mu_);
                             written_.erase(q.meta.name);
                           }});
  groups_.AddHandlers(
      {.on_add = [this](const PodGroup& g) { OnPodGroupChange(nullptr, &g); },
       .on_update = [this](const PodGroup& a, const PodGroup& b) { OnPodGroupChange(&a, &b); },
       .on_delete = [this](const PodGroup& g) { OnPodGroupChange(&g, nullptr); }});
}

void QueueController::AddQueueSync(const std::string& queue) {
  Add({.command = false, .key = queue, .action = std::string(kSyncQueue)});
}

void QueueController::OnPodGroupChange(const PodGroup* before, const PodGroup* after) {
  const PodGroup& pg = after != nullptr ? *after : *before;
  const std::string key = pg.meta.Key();
  const std::string queue = QueueOf(pg);
  std::string moved_from;
  {
    std::lock_guard lock(mu_);
    auto it = queue_of_group_.find(key);
    if (it != queue_of_group_.end() && (after == nullptr || it->second != queue)) {
      moved_from = it->second;
      groups_by_queue_[it->second].erase(key);
      if (groups_by_queue_[it->second].empty()) groups_by_queue_.erase(it->second);
      queue_of_group_.erase(it);
    }
    if (after != nullptr) {
      groups_by_queue_[queue].insert(key);
      queue_of_group_[key] = queue;
    }
  }
  if (!moved_from.empty() && moved_from != queue) AddQueueSync(moved_from);
  const bool changed = before == nullptr || after == nullptr ||
                       before->status.phase != after->status.phase ||
                       before->meta.deletion_timestamp != after->meta.deletion_timestamp ||
                       QueueOf(*before) != queue;
  if (changed) AddQueueSync(queue);
}

void QueueController::Start() {
  StartWatching();
  StartWorking();
}

void QueueController::StartWatching() {
  groups_.Start();
  queues_.Start();
  commands_.Start();
}

void QueueController::StartWorking() {
  worker_ = std::thread([this] { WorkerLoop(); });
}

void QueueController::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  commands_.Stop();
  queues_.Stop();
  groups_.Stop();
}

bool QueueController::Synced() const {
  return commands_.HasSynced() && queues_.HasSynced() && groups_.HasSynced();
}

std::shared_ptr<const Queue> QueueController::GetQueue(const std::string& name) const {
  std::shared_ptr<const Queue> cached = queues_.Get(name);
  std::lock_guard lock(mu_);
  auto it = written_.find(name);
  if (it == written_.end()) return cached;
  if (cached == nullptr || (it->second->meta.uid == cached->meta.uid &&
                            ParseVersion(it->second->meta.resource_version) >
                                ParseVersion(cached->meta.resource_version))) {
    return it->second;
  }
  return cached;
}

std::map<std::string, std::vector<std::shared_ptr<const kube::UndecodableObject>>>
QueueController::Undecodable() const {
  return {{"queues", queues_.ListUndecodable()}, {"commands", commands_.ListUndecodable()}};
}

std::vector<std::string> QueueController::ChildQueues(const std::string& name) const {
  std::vector<std::string> children;
  for (const std::shared_ptr<const Queue>& q : queues_.List()) {
    if (q->spec.parent == name && q->meta.name != name) children.push_back(q->meta.name);
  }
  std::ranges::sort(children);
  return children;
}

// --- Work queue ------------------------------------------------------------

void QueueController::Add(Item item) {
  {
    std::lock_guard lock(mu_);
    if (item.command) {
      if (!waiting_commands_.insert(item.key).second) return;
    } else {
      auto [it, fresh] = waiting_queues_.try_emplace(item.key);
      std::vector<std::string>& actions = it->second;
      // Syncs in a row are one sync; OpenQueue/CloseQueue each run, in order.
      if (actions.empty() || actions.back() != item.action || item.action != kSyncQueue) {
        actions.push_back(item.action);
      }
      if (!fresh) return;
    }
    ready_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void QueueController::AddAt(Item item, Time due) {
  std::lock_guard lock(mu_);
  timers_.emplace(due, std::move(item));
}

void QueueController::WorkerLoop() {
  Time next_resync = clock_.Now() + options_.resync_period;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick, [this] { return stopping_ || !ready_.empty(); });
    if (stopping_) return;
    const Time now = clock_.Now();
    std::vector<Item> due;
    while (!timers_.empty() && timers_.begin()->first <= now) {
      due.push_back(std::move(timers_.begin()->second));
      timers_.erase(timers_.begin());
    }
    lock.unlock();
    for (Item& item : due) Add(std::move(item));
    if (now >= next_resync && Synced()) {
      next_resync = now + options_.resync_period;
      for (const auto& q : queues_.List()) {
        Add({.command = false, .key = q->meta.name, .action = std::string(kSyncQueue)});
      }
      for (const auto& c : commands_.List()) Add({.command = true, .key = c->meta.Key()});
    }
    lock.lock();
    while (!ready_.empty() && !stopping_) {
      Item item = std::move(ready_.front());
      ready_.pop_front();
      std::vector<std::string> actions;
      if (item.command) {
        waiting_commands_.erase(item.key);
      } else {
        actions = std::move(waiting_queues_[item.key]);
        waiting_queues_.erase(item.key);
      }
      lock.unlock();
      if (item.command)
        RunCommand(item.key);
      else
        SyncQueue(item.key, actions);
      lock.lock();
    }
  }
}

// --- Commands --------------------------------------------------------------

void QueueController::RunCommand(const std::string& key) {
  std::shared_ptr<const Command> cmd = commands_.Get(key);
  if (cmd == nullptr) return;
  const Item retry{.command = true, .key = key};
  // A target not listed yet must not be refused as missing.
  if (!jobs_.synced() || !queues_.HasSynced()) return AddAt(retry, clock_.Now() + kTick);
  StatusOr<CommandPlan> plan = PlanCommand(*cmd);
  if (!plan.ok()) return Refuse(*cmd, plan.status(), nullptr, nullptr);
  std::shared_ptr<const ObjectMeta> target;
  bool cached = false;
  if (Status s = LookUpTarget(*plan, &target, &cached); !s.ok()) {
    spdlog::warn("reconciler: command {}: looking up {}: {}", key, TargetName(*plan), s.ToString());
    return AddAt(retry, clock_.Now() + options_.retry_delay);
  }
  if (Status s = CheckTarget(*plan, target.get()); !s.ok()) {
    return Refuse(*cmd, s, target.get(), &*plan);
  }
  // Created a moment ago: run it once our caches have it (the job
  // controller syncs its Job from its cache).
  if (!cached) return AddAt(retry, clock_.Now() + kTick);
  // At most once, as Volcano: the Command goes before its action runs.
  Status deleted = DeleteCommand(*cmd);
  if (Ignorable(deleted)) return;  // gone already, or another Command of that name
  if (!deleted.ok()) {
    spdlog::warn("reconciler: command {}: delete: {}", key, deleted.ToString());
    return AddAt(retry, clock_.Now() + options_.retry_delay);
  }
  spdlog::info("reconciler: command {}: {} on {}", key, plan->action, TargetName(*plan));
  if (plan->target == CommandTarget::kJob) {
    RecordEvent(TargetRef(*plan, *target), "Normal", kCommandIssued,
                "Start to execute command " + plan->action +
                    ", and clean it up to make sure executed not more than once.");
    jobs_.submit(plan->key, JobRequest(*plan));
  } else {
    Add({.command = false, .key = plan->key, .action = plan->action});
  }
}

Status QueueController::LookUpTarget(const CommandPlan& plan,
                                     std::shared_ptr<const ObjectMeta>* meta, bool* cached) {
  *cached = true;
  kube::ResourceRef ref;
  if (plan.target == CommandTarget::kJob) {
    if (std::shared_ptr<const Job> job = jobs_.job(plan.key)) {
      *meta = std::shared_ptr<const ObjectMeta>(job, &job->meta);
      return Status::Ok();
    }
    auto [ns, name] = SplitKey(plan.key);
    ref = kube::VolcanoJobsRef().WithNamespace(ns).WithName(name);
  } else {
    if (std::shared_ptr<const Queue> queue = GetQueue(plan.key)) {
      *meta = std::shared_ptr<const ObjectMeta>(queue, &queue->meta);
      return Status::Ok();
    }
    ref = kube::QueuesRef().WithName(plan.key);
  }
  *cached = false;
  StatusOr<std::string> got = client_->Get(ref);
  if (!got.ok()) return got.status().code() == StatusCode::kNotFound ? Status::Ok() : got.status();
  if (plan.target == CommandTarget::kJob) {
    StatusOr<Job> job = kube::DecodeJob(*got);
    if (!job.ok()) return job.status();
    *meta = std::make_shared<const ObjectMeta>(job->meta);
  } else {
    StatusOr<Queue> queue = kube::DecodeQueue(*got);
    if (!queue.ok()) return queue.status();
    *meta = std::make_shared<const ObjectMeta>(queue->meta);
  }
  return Status::Ok();
}

void QueueController::Refuse(const Command& command, const Status& why, const ObjectMeta* target,
                             const CommandPlan* plan) {
  bool told;
  {
    std::lock_guard lock(mu_);
    told = !refused_.insert(command.meta.uid).second;
  }
  if (!told) {
    spdlog::warn("reconciler: command {} refused: {}", command.meta.Key(), why.message());
    RecordEvent(CommandRef(command), "Warning", kInvalidCommand, why.message());
    if (target != nullptr && plan != nullptr) {
      RecordEvent(
          TargetRef(*plan, *target), "Warning", kInvalidCommand,
          "Command " + command.meta.name + " (" + command.action + ") refused: " + why.message());
    }
  }
  Status deleted = DeleteCommand(command);
  if (!deleted.ok() && !Ignorable(deleted)) {
    spdlog::warn("reconciler: command {}: delete: {}", command.meta.Key(), deleted.ToString());
    AddAt({.command = true, .key = command.meta.Key()}, clock_.Now() + options_.retry_delay);
  }
}

Status QueueController::DeleteCommand(const Command& command) {
  Status s = client_
                 ->Delete(kube::CommandsRef()
                              .WithNamespace(command.meta.namespace_)
                              .WithName(command.meta.name),
                          {.precondition_uid = command.meta.uid})
                 .status();
  metrics_->CountWrite("delete", "commands");
  return s;
}

// --- Queue state -----------------------------------------------------------

int QueueController::Unfinished(const std::string& queue) const {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(mu_);
    auto it = groups_by_queue_.find(queue);
    if (it != groups_by_queue_.end()) keys.assign(it->second.begin(), it->second.end());
  }
  int n = 0;
  for (const std::string& key : keys) {
    std::shared_ptr<const PodGroup> pg = groups_.Get(key);
    if (pg != nullptr && QueueHolds(*pg)) ++n;
  }
  return n;
}

void QueueController::SyncQueue(const std::string& name, const std::vector<std::string>& actions) {
  std::shared_ptr<const Queue> queue = GetQueue(name);
  if (queue == nullptr) return;
  const std::string before = queue->status.state;
  const int unfinished = Unfinished(name);
  std::string state = before;
  std::string cause(kSyncQueue);
  for (const std::string& action : actions) {
    state = NextQueueState(state, action, unfinished);
    if (action != kSyncQueue) cause = action;
  }
  if (state == before) return;
  StatusOr<std::string> written =
      client_->PatchStatus(kube::QueuesRef().WithName(name), kube::PatchType::kMerge,
                           kube::EncodeQueueStatePatch(state));
  metrics_->CountWrite("patch", "queues");
  if (!written.ok()) {
    if (written.status().code() == StatusCode::kNotFound) return;  // deleted meanwhile
    spdlog::warn("reconciler: queue {}: state {}: {}", name, state, written.status().ToString());
    // Each action again: a CloseQueue that was not written must still close.
    for (const std::string& action : actions) {
      AddAt({.command = false, .key = name, .action = action}, clock_.Now() + options_.retry_delay);
    }
    return;
  }
  if (StatusOr<Queue> decoded = kube::DecodeQueue(*written); decoded.ok()) {
    std::lock_guard lock(mu_);
    written_[name] = std::make_shared<const Queue>(*std::move(decoded));
  }
  std::string why;
  if (state == kQueueClosing) {
    why = ": " + std::to_string(unfinished) + " PodGroup" + (unfinished == 1 ? "" : "s") +
          " of the queue not finished; Closed once none is left";
  } else if (state == kQueueClosed) {
    why = ": no unfinished PodGroup left";
  } else if (state == kQueueOpen) {
    why = ": new Jobs and PodGroups are admitted";
  }
  spdlog::info("reconciler: queue {}: {} -> {} ({})", name, before.empty() ? "no state" : before,
               state, cause);
  RecordEvent(QueueRef(*queue), "Normal", cause,
              "state " + (before.empty() ? std::string("(none)") : before) + " -> " + state + why);
}

void QueueController::RecordEvent(const ObjectReference& object, std::string_view type,
                                  std::string_view reason, std::string message) {
  Event event = NewEvent(object, type, reason, std::move(message), kComponent, clock_.Now());
  // Events of cluster-scoped objects (Queues) live in "default", as
  // client-go's recorder puts them.
  if (event.meta.namespace_.empty()) event.meta.namespace_ = "default";
  Status s = client_
                 ->Create(kube::ResourceRef::Core("events", event.meta.namespace_),
                          kube::EncodeEvent(event))
                 .status();
  metrics_->CountWrite("create", "events");
  if (!s.ok()) {
    spdlog::warn("reconciler: event {} on {} {}: {}", reason, object.kind, object.name,
                 s.ToString());
  }
}

}  // namespace muster::reconciler
