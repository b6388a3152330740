#include "cmd/cli/queue_view.h"

#include <set>
#include <sstream>

#include "cmd/cli/job_view.h"
#include "kube/codec/json.h"
#include "model/quantity.h"

namespace muster::cli {
namespace {

constexpr std::string_view kSchedulingApiVersion = "scheduling.volcano.sh/v1beta1";

struct DeservedEntry {
  std::string name;
  Resources deserved;
};
struct FairShare {
  std::vector<DeservedEntry> queues;
};

void DecodeDeservedEntry(kube::DecodeContext& ctx, const kube::JsonValue& v, DeservedEntry* out) {
  kube::ReadString(ctx, v, "name", &out->name);
  kube::ReadResources(ctx, v, "deserved", &out->deserved);
}

void DecodeFairShare(kube::DecodeContext& ctx, const kube::JsonValue& v, FairShare* out) {
  kube::ReadArray(ctx, v, "queues", &out->queues,
                  [](kube::DecodeContext& c, const kube::JsonValue& e, DeservedEntry* d) {
                    if (kube::ExpectObject(c, e)) DecodeDeservedEntry(c, e, d);
                  });
}

// "-": not known (muster not asked, or a queue its last pass did not see).
std::string DeservedCell(const Queue& queue, const DeservedShares& deserved) {
  if (!deserved.has_value()) return "-";
  const auto it = deserved->find(queue.meta.name);
  return it == deserved->end() ? "-" : ResourceListText(it->second);
}

std::string Quantity(const std::string& resource, const Resources& r) {
  return FormatResourceQuantity(resource, r.Get(resource));
}

void Field(std::ostringstream& out, std::string_view label, std::string_view value) {
  DescribeField(out, label, value, /*width=*/14);
}

// Per resource named anywhere in the queue (or its deserved share): what it
// holds, deserves, may hold at most, and is guaranteed.
void ResourcesSection(std::ostringstream& out, const Queue& queue, const DeservedShares& deserved) {
  const Resources* share = nullptr;
  if (deserved.has_value()) {
    const auto it = deserved->find(queue.meta.name);
    if (it != deserved->end()) share = &it->second;
  }
  std::set<std::string> names;
  for (const Resources* r :
       {&queue.status.allocated, share, queue.spec.capability ? &*queue.spec.capability : nullptr,
        queue.spec.guarantee ? &*queue.spec.guarantee : nullptr}) {
    if (r == nullptr) continue;
    for (const auto& [name, value] : r->entries()) names.insert(name);
  }
  out << "Resources:\n";
  if (names.empty()) {
    out << "  <none>\n";
    return;
  }
  Table table({"RESOURCE", "ALLOCATED", "DESERVED", "CAPABILITY", "GUARANTEE"});
  for (const std::string& name : names) {
    const auto& cap = queue.spec.capability;
    const auto& guarantee = queue.spec.guarantee;
    table.AddRow({name, Quantity(name, queue.status.allocated),
                  share != nullptr ? Quantity(name, *share) : "-",
                  cap && cap->Has(name) ? Quantity(name, *cap) : "unlimited",
                  guarantee && guarantee->Has(name) ? Quantity(name, *guarantee) : "-"});
  }
  WriteIndented(out, table);
}

}  // namespace

std::map<std::string, PodGroupCounts> CountPodGroups(const std::vector<PodGroup>& groups) {
  std::map<std::string, PodGroupCounts> counts;
  for (const PodGroup& pg : groups) {
    PodGroupCounts& c = counts[pg.spec.queue.empty() ? std::string(kDefaultQueue) : pg.spec.queue];
    const std::string& phase = pg.status.phase;
    if (phase.empty() || phase == kPodGroupPending) {
      ++c.pending;
    } else if (phase == kPodGroupInqueue) {
      ++c.inqueue;
    } else if (phase == kPodGroupRunning) {
      ++c.running;
    } else if (phase == kPodGroupUnknown) {
      ++c.unknown;
    } else if (phase == kPodGroupCompleted) {
      ++c.completed;
    }
  }
  return counts;
}

StatusOr<std::map<std::string, Resources>> ParseDeserved(std::string_view state_json) {
  MUSTER_ASSIGN_OR_RETURN(
      FairShare share, kube::DecodeDocument<FairShare>(
                           state_json, "muster /debug/state",
                           [](kube::DecodeContext& ctx, const kube::JsonValue& v, FairShare* out) {
                             kube::ReadObject(ctx, v, "fairShare", out, DecodeFairShare);
                           }));
  std::map<std::string, Resources> deserved;
  for (DeservedEntry& e : share.queues) deserved[e.name] = std::move(e.deserved);
  return deserved;
}

Table QueueTable(const std::vector<Queue>& queues,
                 const std::map<std::string, PodGroupCounts>& counts, bool wide,
                 const DeservedShares& deserved) {
  std::vector<std::string> headers = {"NAME",    "WEIGHT",  "STATE",   "PARENT",   "INQUEUE",
                                      "PENDING", "RUNNING", "UNKNOWN", "COMPLETED"};
  if (wide) headers.insert(headers.end(), {"ALLOCATED", "DESERVED"});
  Table table(std::move(headers));
  for (const Queue& q : queues) {
    const auto it = counts.find(q.meta.name);
    const PodGroupCounts c = it == counts.end() ? PodGroupCounts{} : it->second;
    std::vector<std::string> row = {q.meta.name,
                                    std::to_string(q.spec.weight),
                                    q.status.state,
                                    q.spec.parent,
                                    std::to_string(c.inqueue),
                                    std::to_string(c.pending),
                                    std::to_string(c.running),
                                    std::to_string(c.unknown),
                                    std::to_string(c.completed)};
    if (wide) {
      row.insert(row.end(), {ResourceListText(q.status.allocated), DeservedCell(q, deserved)});
    }
    table.AddRow(std::move(row));
  }
  return table;
}

std::string QueueViewText(const Queue& queue, const PodGroupCounts& counts,
                          const DeservedShares& deserved, Time now) {
  std::ostringstream out;
  Field(out, "Name", queue.meta.name);
  Field(out, "Created", CreatedText(queue.meta.creation_timestamp, now));
  Field(out, "Weight", std::to_string(queue.spec.weight));
  Field(out, "State", queue.status.state.empty() ? "<none>" : queue.status.state);
  Field(out, "Parent", queue.spec.parent.empty() ? "<none>" : queue.spec.parent);
  Field(out, "Reclaimable", queue.IsReclaimable() ? "true" : "false");
  ResourcesSection(out, queue, deserved);
  out << "PodGroups:\n";
  Table groups({"INQUEUE", "PENDING", "RUNNING", "UNKNOWN", "COMPLETED"});
  groups.AddRow({std::to_string(counts.inqueue), std::to_string(counts.pending),
                 std::to_string(counts.running), std::to_string(counts.unknown),
                 std::to_string(counts.completed)});
  WriteIndented(out, groups);
  return out.str();
}

std::string QueueBody(const QueueSpecFlags& spec) {
  kube::JsonWriter w;
  StartBody(w, kSchedulingApiVersion, "Queue");
  w.StringField("name", spec.name);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.IntField("weight", spec.weight);
  w.Key("reclaimable");
  w.Bool(spec.reclaimable);
  w.StringFieldIfSet("parent", spec.parent);
  if (spec.capability.has_value()) {
    w.Key("capability");
    w.StartObject();
    for (const auto& [name, quantity] : *spec.capability) w.StringField(name, quantity);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

OwnerReference QueueTarget(const Queue& queue) {
  return CommandTarget(kSchedulingApiVersion, "Queue", queue.meta);
}

Status CheckQueueDeletable(std::string_view name) {
  if (name == kDefaultQueue || name == kRootQueue) {
    return Status(StatusCode::kFailedPrecondition,
                  "`" + std::string(name) + "` queue can not be deleted (as Volcano's webhook)");
  }
  return Status::Ok();
}

}  // namespace muster::cli
