#include "reconciler/pod_json.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "kube/codec/json.h"

namespace muster::reconciler::pod_json {
namespace {

using rapidjson::Value;

rapidjson::Document Parse(std::string_view json) {
  rapidjson::Document doc;
  EXPECT_TRUE(kube::ParseDocument(json, &doc).ok()) << json;
  return doc;
}

std::string Json(const Value& v) { return kube::ToCompactJson(v); }

TEST(PodJsonTest, LookupsTolerateAbsentNullAndNonObjects) {
  rapidjson::Document doc = Parse(R"({"s": "x", "n": null, "i": 1, "o": {"k": "v"}})");
  EXPECT_EQ(Find(doc, "absent"), nullptr);
  EXPECT_EQ(Find(doc, "n"), nullptr);
  ASSERT_NE(Find(doc, "o"), nullptr);
  EXPECT_EQ(StringAt(*Find(doc, "o"), "k"), "v");
  EXPECT_EQ(Find(doc["s"], "k"), nullptr);  // not an object
  EXPECT_EQ(StringAt(doc, "s"), "x");
  EXPECT_EQ(StringAt(doc, "i"), "");  // not a string
  EXPECT_EQ(StringAt(doc, "n"), "");
  EXPECT_EQ(StringAt(doc, "absent"), "");
  // MemberOf finds a null member; Find does not.
  ASSERT_NE(MemberOf(doc, "n"), nullptr);
  EXPECT_TRUE(MemberOf(doc, "n")->IsNull());
  EXPECT_EQ(MemberOf(doc, "absent"), nullptr);
}

TEST(PodJsonTest, ArrayMemberAndSetMember) {
  rapidjson::Document doc = Parse(R"({"n": null, "a": [1], "k": "old"})");
  PodAllocator& a = doc.GetAllocator();
  ArrayMember(doc, "n", a).PushBack(2, a);              // null becomes an array
  ArrayMember(doc, "a", a).PushBack(3, a);              // an array is kept
  ArrayMember(doc, "new", a).PushBack(Str("x", a), a);  // created
  SetMember(doc, "k", Str("replaced", a), a);
  SetMember(doc, "added", Value(true), a);
  EXPECT_EQ(Json(doc), R"({"n":[2],"a":[1,3],"k":"replaced","new":["x"],"added":true})");
}

TEST(PodJsonTest, EnvTheTemplateWins) {
  rapidjson::Document c = Parse(R"({"name": "main", "env": [{"name": "MINE", "value": "t"}]})");
  PodAllocator& a = c.GetAllocator();
  AddEnvValue(c, "MINE", "ours", a);
  AddEnvValue(c, "PLAIN", "1", a);
  Value ref(rapidjson::kObjectType);
  ref.AddMember("name", Str("cm", a), a);
  ref.AddMember("key", Str("FROM", a), a);
  AddEnvValueFrom(c, "FROM", "configMapKeyRef", std::move(ref), a);
  Value field(rapidjson::kObjectType);
  field.AddMember("fieldPath", Str("metadata.name", a), a);
  AddEnvValueFrom(c, "MINE", "fieldRef", std::move(field), a);
  EXPECT_EQ(Json(c["env"]),
            R"([{"name":"MINE","value":"t"},{"name":"PLAIN","value":"1"},)"
            R"({"name":"FROM","valueFrom":{"configMapKeyRef":{"name":"cm","key":"FROM"}}}])");
}

TEST(PodJsonTest, EnvIntoAContainerWithoutOrWithNullEnv) {
  for (std::string_view json : {R"({"name": "main"})", R"({"name": "main", "env": null})"}) {
    rapidjson::Document c = Parse(json);
    AddEnvValue(c, "A", "1", c.GetAllocator());
    EXPECT_EQ(Json(c), R"({"name":"main","env":[{"name":"A","value":"1"}]})") << json;
  }
}

TEST(PodJsonTest, VolumesByNameMountsByPath) {
  rapidjson::Document spec = Parse(R"({"volumes": [{"name": "data", "emptyDir": {}}]})");
  PodAllocator& a = spec.GetAllocator();
  Value same(rapidjson::kObjectType);
  same.AddMember("name", Str("data", a), a);
  same.AddMember("configMap", Value(rapidjson::kObjectType), a);
  AddVolume(spec, std::move(same), a);
  Value other(rapidjson::kObjectType);
  other.AddMember("name", Str("keys", a), a);
  AddVolume(spec, std::move(other), a);
  EXPECT_EQ(Json(spec), R"({"volumes":[{"name":"data","emptyDir":{}},{"name":"keys"}]})");

  rapidjson::Document c = Parse(R"({"volumeMounts": [{"name": "mine", "mountPath": "/etc/x"}]})");
  AddVolumeMount(c, "ours", "/etc/x", "", c.GetAllocator());
  AddVolumeMount(c, "keys", "/root/.ssh", ".ssh", c.GetAllocator());
  AddVolumeMount(c, "data", "/data", "", c.GetAllocator());
  EXPECT_EQ(Json(c["volumeMounts"]), R"([{"name":"mine","mountPath":"/etc/x"},)"
                                     R"({"name":"keys","mountPath":"/root/.ssh","subPath":".ssh"},)"
                                     R"({"name":"data","mountPath":"/data"}])");
}

TEST(PodJsonTest, JobOwnerReferences) {
  Job job;
  job.meta.name = "train";
  job.meta.uid = "u-1";
  rapidjson::Document doc;
  EXPECT_EQ(Json(JobOwnerReferences(job, doc.GetAllocator())),
            R"([{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train",)"
            R"("uid":"u-1","controller":true,"blockOwnerDeletion":true}])");
}

}  // namespace
}  // namespace muster::reconciler::pod_json
