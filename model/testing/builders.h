// Fluent builders of model objects for tests across the project.
//
//   Pod pod = MakePod("worker-0").Namespace("team-a").Cpu("500m").Memory("1Gi").Gpu(4)
//                 .Group("pg1");
//   Node node = MakeNode("n1").Cpu("32").Memory("256Gi").Gpu(8);
//   PodGroup pg = MakePodGroup("pg1").MinMember(4).Queue("research");
//   Queue q = MakeQueue("research").Weight(2).Capability({{"cpu", "64"}, {"nvidia.com/gpu",
//   "16"}});
//
// Each builder converts implicitly to its model type, or via Build() / Obj().
// Quantities are Kubernetes strings; a malformed one is a bug in the test, so
// it aborts with a message instead of returning an error.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/quantity.h"
#include "model/queue.h"
#include "model/resources.h"

namespace muster::test {

// The amount of `text` in muster's unit for `resource`; aborts when invalid.
inline int64_t Amount(std::string_view resource, std::string_view text) {
  StatusOr<int64_t> amount = ParseResourceQuantity(resource, text);
  if (!amount.ok()) {
    std::fprintf(stderr, "builders.h: %s\n", amount.status().ToString().c_str());
    std::abort();
  }
  return *amount;
}

// Resources from quantity strings: Res({{"cpu", "500m"}, {"memory", "1Gi"}}).
inline Resources Res(std::initializer_list<std::pair<std::string_view, std::string_view>> list) {
  Resources out;
  for (const auto& [name, text] : list) out.Set(name, Amount(name, text));
  return out;
}

inline constexpr std::string_view kPodQueueAnnotation = kQueueNameAnnotation;

class PodBuilder {
 public:
  // A Pending pod in namespace "default" with uid "uid-<name>" and one
  // container "main" without requests.
  explicit PodBuilder(std::string name) {
    pod_.meta.name = name;
    pod_.meta.namespace_ = "default";
    pod_.meta.uid = "uid-" + name;
    pod_.status.phase = "Pending";
    pod_.spec.containers.push_back(muster::Container{.name = "main"});
  }

  PodBuilder& Namespace(std::string ns) { return Set(pod_.meta.namespace_, std::move(ns)); }
  PodBuilder& Uid(std::string uid) { return Set(pod_.meta.uid, std::move(uid)); }
  // Requests of the first container (quantity strings / whole GPUs).
  PodBuilder& Cpu(std::string_view q) { return Request(kCpu, q); }
  PodBuilder& Memory(std::string_view q) { return Request(kMemory, q); }
  PodBuilder& Gpu(int64_t n) { return RequestAmount(kNvidiaGpu, n * kMilliPerGpu); }
  PodBuilder& Request(std::string_view resource, std::string_view q) {
    return RequestAmount(resource, Amount(resource, q));
  }
  // A limit of the first container (extended resources are asked in limits).
  PodBuilder& Limit(std::string_view resource, std::string_view q) {
    pod_.spec.containers.front().resources.limits.Set(resource, Amount(resource, q));
    return *this;
  }
  PodBuilder& RequestAmount(std::string_view resource, int64_t amount) {
    pod_.spec.containers.front().resources.requests.Set(resource, amount);
    return *this;
  }
  // Adds another app container with these requests.
  PodBuilder& Container(Resources requests) {
    pod_.spec.containers.push_back(
        muster::Container{.name = "c" + std::to_string(pod_.spec.containers.size()),
                          .resources = {.requests = std::move(requests)}});
    return *this;
  }
  // Adds an init container; `sidecar` sets restartPolicy "Always".
  PodBuilder& InitContainer(Resources requests, bool sidecar = false) {
    pod_.spec.init_containers.push_back(
        muster::Container{.name = "init" + std::to_string(pod_.spec.init_containers.size()),
                          .resources = {.requests = std::move(requests)},
                          .restart_policy = sidecar ? "Always" : ""});
    return *this;
  }
  PodBuilder& Overhead(Resources overhead) { return Set(pod_.spec.overhead, std::move(overhead)); }
  // The PodGroup annotation scheduling.k8s.io/group-name.
  PodBuilder& Group(std::string_view group) { return Annotation(kGroupNameAnnotation, group); }
  // Joins the Kubernetes PodGroup `group` (spec.schedulingGroup.podGroupName).
  PodBuilder& SchedulingGroup(std::string group) {
    return Set(pod_.spec.scheduling_group, std::move(group));
  }
  PodBuilder& Queue(std::string_view queue) { return Annotation(kPodQueueAnnotation, queue); }
  PodBuilder& Priority(int32_t priority) {
    pod_.spec.priority = priority;
    return *this;
  }
  // spec.priorityClassName only: the API server's admission sets the
  // priority from it, a test sets Priority() itself when it matters.
  PodBuilder& PriorityClass(std::string name) {
    return Set(pod_.spec.priority_class_name, std::move(name));
  }
  PodBuilder& Phase(std::string phase) { return Set(pod_.status.phase, std::move(phase)); }
  PodBuilder& NodeName(std::string node) { return Set(pod_.spec.node_name, std::move(node)); }
  PodBuilder& SchedulerName(std::string s) { return Set(pod_.spec.scheduler_name, std::move(s)); }
  // Appends a scheduling gate to spec.schedulingGates.
  PodBuilder& Gate(std::string gate) {
    pod_.spec.scheduling_gates.push_back(std::move(gate));
    return *this;
  }
  PodBuilder& CreatedAt(Time t) { return Set(pod_.meta.creation_timestamp, t); }
  PodBuilder& Label(std::string_view key, std::string_view value) {
    pod_.meta.labels[std::string(key)] = std::string(value);
    return *this;
  }
  PodBuilder& Annotation(std::string_view key, std::string_view value) {
    pod_.meta.annotations[std::string(key)] = std::string(value);
    return *this;
  }
  PodBuilder& NodeSelector(std::string_view key, std::string_view value) {
    pod_.spec.node_selector[std::string(key)] = std::string(value);
    return *this;
  }
  PodBuilder& Tolerate(muster::Toleration toleration) {
    pod_.spec.tolerations.push_back(std::move(toleration));
    return *this;
  }
  // Adds a requiredDuringSchedulingIgnoredDuringExecution term (terms are ORed).
  PodBuilder& RequiredNodeTerm(NodeSelectorTerm term) {
    if (!pod_.spec.affinity) pod_.spec.affinity.emplace();
    std::optional<NodeAffinity>& affinity = pod_.spec.affinity->node_affinity;
    if (!affinity) affinity.emplace();
    affinity->required.push_back(std::move(term));
    return *this;
  }

  Pod Build() const { return pod_; }
  Pod Obj() const { return pod_; }
  operator Pod() const { return pod_; }  // NOLINT: implicit by design

 private:
  template <typename T, typename V>
  PodBuilder& Set(T& field, V&& value) {
    field = std::forward<V>(value);
    return *this;
  }
  Pod pod_;
};

class NodeBuilder {
 public:
  // A Ready, schedulable node without capacity.
  explicit NodeBuilder(std::string name) {
    node_.meta.name = std::move(name);
    node_.meta.uid = "uid-" + node_.meta.name;
    Ready(true);
  }

  // Capacity and allocatable alike (quantity strings / whole GPUs).
  NodeBuilder& Cpu(std::string_view q) { return Allocatable(kCpu, q); }
  NodeBuilder& Memory(std::string_view q) { return Allocatable(kMemory, q); }
  NodeBuilder& Gpu(int64_t n) { return AllocatableAmount(kNvidiaGpu, n * kMilliPerGpu); }
  NodeBuilder& Pods(int64_t n) { return AllocatableAmount(kPods, n); }
  NodeBuilder& Allocatable(std::string_view resource, std::string_view q) {
    return AllocatableAmount(resource, Amount(resource, q));
  }
  NodeBuilder& AllocatableAmount(std::string_view resource, int64_t amount) {
    node_.capacity.Set(resource, amount);
    node_.allocatable.Set(resource, amount);
    return *this;
  }
  NodeBuilder& Label(std::string_view key, std::string_view value) {
    node_.meta.labels[std::string(key)] = std::string(value);
    return *this;
  }
  NodeBuilder& Annotation(std::string_view key, std::string_view value) {
    node_.meta.annotations[std::string(key)] = std::string(value);
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, std::string effect = "NoSchedule") {
    node_.taints.push_back(muster::Taint{
        .key = std::move(key), .value = std::move(value), .effect = std::move(effect)});
    return *this;
  }
  NodeBuilder& Unschedulable(bool unschedulable = true) {
    node_.unschedulable = unschedulable;
    return *this;
  }
  // Sets the Ready condition to "True" or "False".
  NodeBuilder& Ready(bool ready) {
    std::erase_if(node_.conditions, [](const Condition& c) { return c.type == "Ready"; });
    node_.conditions.push_back(Condition{.type = "Ready", .status = ready ? "True" : "False"});
    return *this;
  }

  Node Build() const { return node_; }
  Node Obj() const { return node_; }
  operator Node() const { return node_; }  // NOLINT: implicit by design

 private:
  Node node_;
};

class PodGroupBuilder {
 public:
  // A PodGroup in namespace "default" with minMember 1 and no phase yet.
  explicit PodGroupBuilder(std::string name) {
    pg_.meta.name = std::move(name);
    pg_.meta.namespace_ = "default";
    pg_.meta.uid = "uid-" + pg_.meta.name;
    pg_.spec.min_member = 1;
  }

  PodGroupBuilder& Namespace(std::string ns) {
    pg_.meta.namespace_ = std::move(ns);
    return *this;
  }
  PodGroupBuilder& MinMember(int32_t n) {
    pg_.spec.min_member = n;
    return *this;
  }
  PodGroupBuilder& MinTaskMember(std::string task, int32_t n) {
    pg_.spec.min_task_member[std::move(task)] = n;
    return *this;
  }
  PodGroupBuilder& Queue(std::string queue) {
    pg_.spec.queue = std::move(queue);
    return *this;
  }
  PodGroupBuilder& MinResources(Resources r) {
    pg_.spec.min_resources = std::move(r);
    return *this;
  }
  PodGroupBuilder& PriorityClass(std::string name) {
    pg_.spec.priority_class_name = std::move(name);
    return *this;
  }
  PodGroupBuilder& Phase(std::string_view phase) {
    pg_.status.phase = std::string(phase);
    return *this;
  }
  // A Kubernetes PodGroup (scheduling.k8s.io/v1beta1) rather than Volcano's.
  PodGroupBuilder& Kubernetes() {
    pg_.api = PodGroupApi::kKubernetes;
    return *this;
  }

  PodGroup Build() const { return pg_; }
  PodGroup Obj() const { return pg_; }
  operator PodGroup() const { return pg_; }  // NOLINT: implicit by design

 private:
  PodGroup pg_;
};

class QueueBuilder {
 public:
  // An Open queue with weight 1 and no limits.
  explicit QueueBuilder(std::string name) {
    queue_.meta.name = std::move(name);
    queue_.meta.uid = "uid-" + queue_.meta.name;
    queue_.status.state = "Open";
  }

  QueueBuilder& Weight(int32_t weight) {
    queue_.spec.weight = weight;
    return *this;
  }
  // Capability as Resources ({{"cpu", 4000}}) or quantity strings ({{"cpu", "4"}}).
  QueueBuilder& Capability(Resources r) {
    queue_.spec.capability = std::move(r);
    return *this;
  }
  QueueBuilder& Capability(std::initializer_list<std::pair<std::string_view, std::string_view>> l) {
    return Capability(Res(l));
  }
  QueueBuilder& Deserved(Resources r) {
    queue_.spec.deserved = std::move(r);
    return *this;
  }
  QueueBuilder& Guarantee(Resources r) {
    queue_.spec.guarantee = std::move(r);
    return *this;
  }
  QueueBuilder& Reclaimable(bool reclaimable) {
    queue_.spec.reclaimable = reclaimable;
    return *this;
  }
  QueueBuilder& Parent(std::string parent) {
    queue_.spec.parent = std::move(parent);
    return *this;
  }
  QueueBuilder& State(std::string state) {
    queue_.status.state = std::move(state);
    return *this;
  }

  muster::Queue Build() const { return queue_; }
  muster::Queue Obj() const { return queue_; }
  operator muster::Queue() const { return queue_; }  // NOLINT: implicit by design

 private:
  muster::Queue queue_;
};

inline PodBuilder MakePod(std::string name) { return PodBuilder(std::move(name)); }
inline NodeBuilder MakeNode(std::string name) { return NodeBuilder(std::move(name)); }
inline PodGroupBuilder MakePodGroup(std::string name) { return PodGroupBuilder(std::move(name)); }
inline QueueBuilder MakeQueue(std::string name) { return QueueBuilder(std::move(name)); }

}  // namespace muster::test
