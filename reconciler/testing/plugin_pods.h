// Jobs for the plugin tests from a compact description (a plugins object and
// tasks of given replicas and pod spec), and the pods BuildPod makes of them
// parsed back, with readers of a container's env, ports and mounts.
//
// Header-only, test code only (not compiled into any library).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "model/job.h"
#include "reconciler/pod_builder.h"

namespace muster::reconciler::plugin_pods {

inline Job Decode(std::string_view json) {
  StatusOr<Job> job = kube::DecodeJob(json);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << json;
  return job.ok() ? *job : Job{};
}

struct TaskDesc {
  std::string name;
  int replicas;
  std::string spec = R"({"containers":[{"name":"c","image":"i"}]})";
};

// A defaulted job "j" in namespace "ns" with `plugins` (a JSON object).
inline Job MakeJob(const std::string& plugins, const std::vector<TaskDesc>& tasks) {
  std::string json = R"({"metadata":{"name":"j","namespace":"ns","uid":"u"},"spec":{)"
                     R"("schedulerName":"volcano","queue":"default","maxRetry":3,"plugins":)" +
                     plugins + R"(,"tasks":[)";
  int total = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskDesc& t = tasks[i];
    if (i > 0) json += ",";
    json += R"({"name":")" + t.name + R"(","replicas":)" + std::to_string(t.replicas) +
            R"(,"minAvailable":)" + std::to_string(t.replicas) + R"(,"template":{"spec":)" +
            t.spec + "}}";
    total += t.replicas;
  }
  return Decode(json + R"(],"minAvailable":)" + std::to_string(total) + "}}");
}

inline rapidjson::Document Pod(const Job& job, size_t task, int index) {
  StatusOr<std::string> pod = BuildPod(job, task, index);
  EXPECT_TRUE(pod.ok()) << pod.status();
  rapidjson::Document doc;
  EXPECT_TRUE(kube::ParseDocument(pod.ok() ? *pod : "{}", &doc).ok());
  return doc;
}

inline const rapidjson::Value& Container(const rapidjson::Document& pod, size_t i = 0,
                                         const char* list = "containers") {
  return pod["spec"][list][static_cast<rapidjson::SizeType>(i)];
}

// name -> value (or "<cm>/<key>" for a configMapKeyRef), in order.
inline std::vector<std::pair<std::string, std::string>> Env(const rapidjson::Value& c) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!c.HasMember("env")) return out;
  for (const auto& e : c["env"].GetArray()) {
    std::string value;
    if (e.HasMember("value")) {
      value = e["value"].GetString();
    } else if (e.HasMember("valueFrom")) {
      const auto& ref = e["valueFrom"]["configMapKeyRef"];
      value = std::string(ref["name"].GetString()) + "/" + ref["key"].GetString();
    }
    out.emplace_back(e["name"].GetString(), value);
  }
  return out;
}

inline std::map<std::string, std::string> EnvMap(const rapidjson::Value& c) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : Env(c)) out.emplace(k, v);
  return out;
}

inline std::string Ports(const rapidjson::Value& c) {
  std::string out;
  if (!c.HasMember("ports")) return out;
  for (const auto& p : c["ports"].GetArray()) {
    out += std::string(p.HasMember("name") ? p["name"].GetString() : "") + ":" +
           std::to_string(p["containerPort"].GetInt()) + ";";
  }
  return out;
}

inline std::string Mounts(const rapidjson::Value& c) {
  std::string out;
  if (!c.HasMember("volumeMounts")) return out;
  for (const auto& m : c["volumeMounts"].GetArray()) {
    out += std::string(m["name"].GetString()) + "@" + m["mountPath"].GetString();
    if (m.HasMember("subPath")) out += "/" + std::string(m["subPath"].GetString());
    out += ";";
  }
  return out;
}

}  // namespace muster::reconciler::plugin_pods
