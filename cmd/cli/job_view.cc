#include "cmd/cli/job_view.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "kube/codec/json.h"
#include "model/quantity.h"

namespace muster::cli {
namespace {

constexpr std::string_view kBatchApiVersion = "batch.volcano.sh/v1alpha1";
constexpr size_t kEventsShown = 10;

std::string CreationDate(Time created) {
  if (created.is_zero()) return "<unknown>";
  return FormatRfc3339(created).substr(0, 10);  // vcctl: "2006-01-02"
}

std::string JobType(const Job& job) {
  const auto it = job.meta.labels.find(std::string(kJobTypeLabel));
  return it == job.meta.labels.end() || it->second.empty() ? "Batch" : it->second;
}

int32_t Replicas(const Job& job) {
  int32_t total = 0;
  for (const TaskSpec& t : job.spec.tasks) total += t.replicas;
  return total;
}

// vcctl's MIN is status.minAvailable (what the controller took from the
// spec); a Job the reconciler has not seen yet shows its spec's.
int32_t MinAvailable(const Job& job) {
  return job.status.min_available > 0 ? job.status.min_available : job.spec.min_available;
}

std::string QueueOf(const Job& job) { return job.spec.queue.empty() ? "default" : job.spec.queue; }

std::string PhaseOf(const Job& job) {
  return job.status.state.phase.empty() ? "Pending" : job.status.state.phase;
}

std::string Images(const Pod& pod) {
  std::string out;
  for (const Container& c : pod.spec.containers) out += (out.empty() ? "" : ",") + c.image;
  return out;
}

// "label:  value" lines with the values aligned, as kubectl describe.
void Field(std::ostringstream& out, std::string_view label, std::string_view value) {
  DescribeField(out, label, value, /*width=*/15);
}

void TasksSection(std::ostringstream& out, const Job& job) {
  out << "Tasks:\n";
  Table tasks({"NAME", "REPLICAS", "MIN", "IMAGE", "REQUESTS"});
  for (const TaskSpec& t : job.spec.tasks) {
    tasks.AddRow({t.name, std::to_string(t.replicas),
                  std::to_string(t.min_available.value_or(t.replicas)), Images(t.template_pod),
                  ResourceListText(t.template_pod.ContainerRequest())});
  }
  if (tasks.empty()) {
    out << "  <none>\n";
  } else {
    WriteIndented(out, tasks);
  }
}

void ConditionsSection(std::ostringstream& out, const Job& job, Time now) {
  out << "Conditions:\n";
  if (job.status.conditions.empty()) {
    out << "  <none>\n";
    return;
  }
  Table conditions({"STATUS", "AGE"});
  for (const JobCondition& c : job.status.conditions) {
    conditions.AddRow({c.status, Age(c.last_transition_time, now)});
  }
  WriteIndented(out, conditions);
}

Time EventTime(const Event& e) {
  if (!e.last_timestamp.is_zero()) return e.last_timestamp;
  if (!e.event_time.is_zero()) return e.event_time;
  return e.first_timestamp;
}

// kubectl describe's Events block: oldest first, the last kEventsShown.
void EventsSection(std::ostringstream& out, std::vector<Event> events, Time now) {
  out << "Events:\n";
  if (events.empty()) {
    out << "  <none>\n";
    return;
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return EventTime(a) < EventTime(b); });
  if (events.size() > kEventsShown) events.erase(events.begin(), events.end() - kEventsShown);
  Table table({"TYPE", "REASON", "AGE", "FROM", "MESSAGE"});
  for (const Event& e : events) {
    std::string from = e.source_component.empty() ? e.reporting_component : e.source_component;
    table.AddRow({e.type, e.reason, Age(EventTime(e), now), from, e.message});
  }
  WriteIndented(out, table);
}

void WriteOwner(kube::JsonWriter& w, const OwnerReference& ref) {
  w.StartObject();
  w.StringField("apiVersion", ref.api_version);
  w.StringField("kind", ref.kind);
  w.StringField("name", ref.name);
  w.StringField("uid", ref.uid);
  w.Key("controller");
  w.Bool(true);
  w.Key("blockOwnerDeletion");
  w.Bool(true);
  w.EndObject();
}

void WriteStringMap(kube::JsonWriter& w, std::string_view key,
                    const std::map<std::string, std::string>& m) {
  w.Key(key);
  w.StartObject();
  for (const auto& [k, v] : m) w.StringField(k, v);
  w.EndObject();
}

// The one task of `job run`: its pod template.
void WriteRunTemplate(kube::JsonWriter& w, const RunSpec& spec) {
  w.Key("template");
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.StringField("name", spec.name);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.StringField("restartPolicy", "Never");
  w.Key("containers");
  w.StartArray();
  w.StartObject();
  w.StringField("name", spec.name);
  w.StringField("image", spec.image);
  w.StringField("imagePullPolicy", "IfNotPresent");
  w.Key("resources");
  w.StartObject();
  if (!spec.limits.empty()) WriteStringMap(w, "limits", spec.limits);
  if (!spec.requests.empty()) WriteStringMap(w, "requests", spec.requests);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

std::string StringMember(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return "";
  const auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// kubectl get -o json|yaml hides metadata.managedFields (its
// --show-managed-fields=false): pages of field ownership nobody reads here.
StatusOr<std::string> WithoutManagedFields(const std::string& object_json) {
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(kube::ParseDocument(object_json, &doc));
  if (!doc.IsObject() || !doc.HasMember("metadata") || !doc["metadata"].IsObject() ||
      !doc["metadata"].HasMember("managedFields")) {
    return object_json;
  }
  doc["metadata"].RemoveMember("managedFields");
  return kube::ToCompactJson(doc);
}

}  // namespace

std::string ResourceListText(const Resources& resources) {
  std::string out;
  for (const auto& [name, value] : resources.entries()) {
    if (value == 0) continue;  // a status's zero entries say nothing
    if (!out.empty()) out += ",";
    out += name + "=" + FormatResourceQuantity(name, value);
  }
  return out;
}

Table JobTable(const std::vector<Job>& jobs, const JobListLayout& layout, Time now) {
  std::vector<std::string> headers = {"NAME",      "CREATION", "PHASE",   "JOBTYPE",
                                      "REPLICAS",  "MIN",      "PENDING", "RUNNING",
                                      "SUCCEEDED", "FAILED",   "UNKNOWN", "RETRYCOUNT"};
  if (layout.all_namespaces) headers.insert(headers.begin(), "NAMESPACE");
  if (layout.wide) headers.insert(headers.end(), {"QUEUE", "AGE"});
  Table table(std::move(headers));
  for (const Job& job : jobs) {
    const JobStatus& s = job.status;
    std::vector<std::string> row = {job.meta.name,
                                    CreationDate(job.meta.creation_timestamp),
                                    PhaseOf(job),
                                    JobType(job),
                                    std::to_string(Replicas(job)),
                                    std::to_string(MinAvailable(job)),
                                    std::to_string(s.pending),
                                    std::to_string(s.running),
                                    std::to_string(s.succeeded),
                                    std::to_string(s.failed),
                                    std::to_string(s.unknown),
                                    std::to_string(s.retry_count)};
    if (layout.all_namespaces) row.insert(row.begin(), job.meta.namespace_);
    if (layout.wide) row.insert(row.end(), {QueueOf(job), Age(job.meta.creation_timestamp, now)});
    table.AddRow(std::move(row));
  }
  return table;
}

std::vector<Job> JobsInQueue(std::vector<Job> jobs, std::string_view queue) {
  if (queue.empty()) return jobs;
  std::erase_if(jobs, [&](const Job& job) { return QueueOf(job) != queue; });
  return jobs;
}

std::string JobViewText(const Job& job, const std::vector<Event>& events, Time now) {
  std::ostringstream out;
  Field(out, "Name", job.meta.name);
  Field(out, "Namespace", job.meta.namespace_);
  Field(out, "Created", CreatedText(job.meta.creation_timestamp, now));
  Field(out, "Queue", QueueOf(job));
  Field(out, "Job type", JobType(job));
  Field(out, "Phase", PhaseOf(job));
  if (!job.status.state.reason.empty()) Field(out, "Reason", job.status.state.reason);
  if (!job.status.state.message.empty()) Field(out, "Message", job.status.state.message);
  Field(out, "MinAvailable", std::to_string(job.spec.min_available));
  Field(out, "Replicas", std::to_string(Replicas(job)));
  TasksSection(out, job);
  const JobStatus& s = job.status;
  out << "Status:\n  Pending: " << s.pending << "  Running: " << s.running
      << "  Succeeded: " << s.succeeded << "  Failed: " << s.failed
      << "  Terminating: " << s.terminating << "  Unknown: " << s.unknown << "\n";
  Field(out, "Version", std::to_string(s.version));
  Field(out, "RetryCount",
        std::to_string(s.retry_count) + " (maxRetry " + std::to_string(job.spec.max_retry) + ")");
  ConditionsSection(out, job, now);
  EventsSection(out, events, now);
  return out.str();
}

OwnerReference CommandTarget(std::string_view api_version, std::string_view kind,
                             const ObjectMeta& meta) {
  return OwnerReference{.api_version = std::string(api_version),
                        .kind = std::string(kind),
                        .name = meta.name,
                        .uid = meta.uid,
                        .controller = true,
                        .block_owner_deletion = true};
}

OwnerReference JobTarget(const Job& job) {
  return CommandTarget(kBatchApiVersion, "Job", job.meta);
}

std::string CommandBody(std::string_view ns, const OwnerReference& target,
                        std::string_view action) {
  std::string lower(action);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  kube::JsonWriter w;
  StartBody(w, "bus.volcano.sh/v1alpha1", "Command");
  w.StringField("generateName", target.name + "-" + lower + "-");
  w.StringField("namespace", ns);
  w.Key("ownerReferences");
  w.StartArray();
  WriteOwner(w, target);
  w.EndArray();
  w.EndObject();
  w.StringField("action", action);
  w.Key("target");
  WriteOwner(w, target);
  w.EndObject();
  return w.TakeString();
}

StatusOr<std::map<std::string, std::string>> ParseResourceList(std::string_view flag,
                                                               std::string_view text) {
  std::map<std::string, std::string> list;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size()) {
      return InvalidArgumentError("flag " + std::string(flag) + ": \"" + std::string(entry) +
                                  "\" is not NAME=QUANTITY (e.g. cpu=1000m,memory=100Mi)");
    }
    const std::string name(entry.substr(0, eq));
    const std::string quantity(entry.substr(eq + 1));
    if (StatusOr<int64_t> q = ParseResourceQuantity(name, quantity); !q.ok()) {
      return InvalidArgumentError("flag " + std::string(flag) + ": " + q.status().message());
    }
    list[name] = quantity;
    start = comma + 1;
  }
  return list;
}

void StartBody(kube::JsonWriter& w, std::string_view api_version, std::string_view kind) {
  w.StartObject();
  w.StringField("apiVersion", api_version);
  w.StringField("kind", kind);
  w.Key("metadata");
  w.StartObject();
}

std::string RunJobBody(const RunSpec& spec) {
  kube::JsonWriter w;
  StartBody(w, kBatchApiVersion, "Job");
  w.StringField("name", spec.name);
  w.StringField("namespace", spec.ns);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.IntField("minAvailable", spec.min_available);
  w.StringField("schedulerName", spec.scheduler);
  w.StringField("queue", spec.queue);
  w.Key("tasks");
  w.StartArray();
  w.StartObject();
  w.StringField("name", spec.name);
  w.IntField("replicas", spec.replicas);
  WriteRunTemplate(w, spec);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.TakeString();
}

StatusOr<Manifest> JobManifest(std::string_view text, std::string_view ns, bool ns_given) {
  MUSTER_ASSIGN_OR_RETURN(std::string json, YamlToJson(text));
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(kube::ParseDocument(json, &doc));
  const std::string api_version = StringMember(doc, "apiVersion");
  if (!doc.IsObject() || StringMember(doc, "kind") != "Job" ||
      api_version.rfind("batch.volcano.sh/", 0) != 0) {
    return InvalidArgumentError(
        "not a Volcano Job (want apiVersion batch.volcano.sh/v1alpha1, kind Job)");
  }
  if (!doc.HasMember("metadata") || !doc["metadata"].IsObject()) {
    return InvalidArgumentError("metadata.name: a Job needs a name");
  }
  rapidjson::Value& meta = doc["metadata"];
  Manifest out;
  out.name = StringMember(meta, "name");
  if (out.name.empty()) return InvalidArgumentError("metadata.name: a Job needs a name");
  out.ns = StringMember(meta, "namespace");
  if (!out.ns.empty() && ns_given && out.ns != ns) {
    return InvalidArgumentError("the manifest's namespace \"" + out.ns + "\" is not -n's \"" +
                                std::string(ns) + "\"");
  }
  if (out.ns.empty()) {
    out.ns = std::string(ns);
    meta.RemoveMember("namespace");
    meta.AddMember("namespace", rapidjson::Value(out.ns.c_str(), doc.GetAllocator()),
                   doc.GetAllocator());
  }
  out.json = kube::ToCompactJson(doc);
  return out;
}

StatusOr<std::vector<std::string>> ListItems(std::string_view list_json) {
  rapidjson::Document doc;
  MUSTER_RETURN_IF_ERROR(kube::ParseDocument(list_json, &doc));
  std::vector<std::string> items;
  if (!doc.IsObject()) return InvalidArgumentError("a list answer is not a JSON object");
  if (!doc.HasMember("items") || doc["items"].IsNull()) return items;
  const rapidjson::Value& list = doc["items"];
  if (!list.IsArray()) return InvalidArgumentError("items: not an array");
  for (const auto& item : list.GetArray()) items.push_back(kube::ToCompactJson(item));
  return items;
}

StatusOr<std::string> FormatObjects(const std::vector<std::string>& items, bool as_list,
                                    OutputFormat format) {
  std::vector<std::string> shown;
  for (const std::string& item : items) {
    MUSTER_ASSIGN_OR_RETURN(std::string stripped, WithoutManagedFields(item));
    shown.push_back(std::move(stripped));
  }
  const std::string json = as_list || shown.size() != 1 ? JsonList(shown) : shown.front();
  return format == OutputFormat::kYaml ? JsonToYaml(json) : PrettyJson(json);
}

}  // namespace muster::cli
