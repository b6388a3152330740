#include "reconciler/job_update.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/job_admission.h"
#include "reconciler/plugins.h"

namespace muster::reconciler {
namespace {

bool Contains(std::span<const std::string_view> list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

Status Invalid(std::string_view path, std::string_view what) {
  return InvalidArgumentError(std::string(path) + ": " + std::string(what));
}

// Spec members an update may change (Volcano's validateJobUpdate copies them
// over before its DeepEqual), at the job and at the task level.
constexpr std::string_view kMutableJobFields[] = {"minAvailable", "priorityClassName"};
constexpr std::string_view kMutableTaskFields[] = {"replicas", "minAvailable"};
constexpr std::string_view kAcceptedSpecFormat = "v1";

// FNV-1a, 64 bits: a stable hash (std::hash may differ between builds, and
// the digest outlives the process in the Job's status).
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, 16);
  return std::string(buf, end);
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

template <typename T>
std::optional<T> ParseDecimal(std::string_view s) {
  T v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The words of `text` split at single spaces.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  for (size_t start = 0; start <= text.size();) {
    const size_t space = std::min(text.find(' ', start), text.size());
    words.push_back(text.substr(start, space - start));
    start = space + 1;
  }
  return words;
}

// True when `word` is "<key>=<value>"; `value` set.
bool ValueOf(std::string_view word, std::string_view key, std::string_view* value) {
  if (word.size() <= key.size() || !word.starts_with(key) || word[key.size()] != '=') return false;
  *value = word.substr(key.size() + 1);
  return true;
}

// Every member of `object` but the `mutable_fields`, hashed, under `prefix`.
void AddFrozenFields(const rapidjson::Value& object, const std::string& prefix,
                     std::span<const std::string_view> mutable_fields, AcceptedSpec& out) {
  for (const auto& m : object.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (Contains(mutable_fields, name) || (prefix == "spec." && name == "tasks")) continue;
    out.fields.emplace_back(prefix + std::string(name), Fnv1a(kube::ToCompactJson(m.value)));
  }
}

// The frozen fields of the spec as the codec writes it: one encoding for
// what the reconciler reads and what it compares, so a field the codec
// learns is frozen without a change here.
void AddSpecFields(const JobSpec& spec, AcceptedSpec& out) {
  Job holder;
  holder.spec = spec;
  rapidjson::Document doc;  // the codec's own output: it parses
  if (!kube::ParseDocument(kube::EncodeJob(holder), &doc).ok() || !doc.HasMember("spec")) return;
  const rapidjson::Value& encoded = doc["spec"];
  AddFrozenFields(encoded, "spec.", kMutableJobFields, out);
  if (!encoded.HasMember("tasks")) return;
  const rapidjson::Value& tasks = encoded["tasks"];
  for (rapidjson::SizeType i = 0; i < tasks.Size(); ++i) {
    AddFrozenFields(tasks[i], "spec.tasks[" + std::to_string(i) + "].", kMutableTaskFields, out);
  }
}

uint64_t SvcHostsDigest(const Job& job) {
  if (!job.spec.plugins.contains(std::string(kSvcPlugin))) return 0;
  std::string text;
  for (const auto& [key, value] : SvcHostsData(job)) text += key + "=" + value + "\n";
  return Fnv1a(text);
}

Status Frozen(std::string_view path) {
  return Invalid(path, "may not change after creation; " + std::string(kMutableSpecFields));
}

// The first field of `now` that differs from `before` (in `now`'s order),
// else the first one `now` has dropped.
Status CompareFrozen(const AcceptedSpec& before, const AcceptedSpec& now) {
  const std::map<std::string, uint64_t> old_fields(before.fields.begin(), before.fields.end());
  for (const auto& [path, hash] : now.fields) {
    auto it = old_fields.find(path);
    if (it == old_fields.end() || it->second != hash) return Frozen(path);
  }
  const std::map<std::string, uint64_t> new_fields(now.fields.begin(), now.fields.end());
  for (const auto& [path, hash] : before.fields) {
    if (!new_fields.contains(path)) return Frozen(path);
  }
  return Status::Ok();
}

}  // namespace

AcceptedSpec AcceptedSpecOf(const Job& job) {
  AcceptedSpec out;
  out.generation = job.meta.generation;
  out.tasks = static_cast<int32_t>(job.spec.tasks.size());
  AddSpecFields(job.spec, out);
  out.svc_hosts = SvcHostsDigest(job);
  return out;
}

std::string EncodeAcceptedSpec(const AcceptedSpec& accepted) {
  std::string out = std::string(kAcceptedSpecFormat) + " g=" + std::to_string(accepted.generation) +
                    " n=" + std::to_string(accepted.tasks) + " h=" + Hex(accepted.svc_hosts);
  for (const auto& [path, hash] : accepted.fields) out += " " + path + "=" + Hex(hash);
  return out;
}

std::optional<AcceptedSpec> DecodeAcceptedSpec(std::string_view text) {
  const std::vector<std::string_view> words = Words(text);
  if (words.size() < 4 || words[0] != kAcceptedSpecFormat) return std::nullopt;
  std::string_view g, n, h;
  if (!ValueOf(words[1], "g", &g) || !ValueOf(words[2], "n", &n) || !ValueOf(words[3], "h", &h)) {
    return std::nullopt;
  }
  const std::optional<int64_t> generation = ParseDecimal<int64_t>(g);
  const std::optional<int32_t> tasks = ParseDecimal<int32_t>(n);
  const std::optional<uint64_t> svc_hosts = ParseHex(h);
  if (!generation || !tasks || !svc_hosts) return std::nullopt;
  AcceptedSpec out{.generation = *generation, .tasks = *tasks, .svc_hosts = *svc_hosts};
  for (size_t i = 4; i < words.size(); ++i) {
    // <path>=<hex>: a path holds no '='.
    const size_t eq = words[i].find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    const std::optional<uint64_t> hash = ParseHex(words[i].substr(eq + 1));
    if (!hash) return std::nullopt;
    out.fields.emplace_back(std::string(words[i].substr(0, eq)), *hash);
  }
  return out;
}

Status ValidateJobUpdate(const AcceptedSpec& old_spec, const Job& new_job) {
  const AcceptedSpec now = AcceptedSpecOf(new_job);
  if (now.tasks != old_spec.tasks) {
    return Invalid("spec.tasks", "job updates may not add or remove tasks (the job has " +
                                     std::to_string(old_spec.tasks) + ", the update " +
                                     std::to_string(now.tasks) + ")");
  }
  MUSTER_RETURN_IF_ERROR(CompareFrozen(old_spec, now));
  return ValidateJob(new_job);
}

Status ValidateJobUpdate(const Job& old_job, const Job& new_job) {
  return ValidateJobUpdate(AcceptedSpecOf(old_job), new_job);
}

}  // namespace muster::reconciler
