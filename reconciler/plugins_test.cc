#include "reconciler/plugins.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/client/pem.h"
#include "kube/codec/json.h"
#include "reconciler/testing/plugin_pods.h"

namespace muster::reconciler {
namespace {

using plugin_pods::Container;
using plugin_pods::Env;
using plugin_pods::EnvMap;
using plugin_pods::MakeJob;
using plugin_pods::Mounts;
using plugin_pods::Pod;
using plugin_pods::Ports;

// ---------------------------------------------------------------------------
// Hosts.

TEST(PluginsHostsTest, TemplateHostnameAndSubdomain) {
  const Job job = MakeJob(R"({"svc":[]})",
                          {{"plain", 2},
                           {"sub", 2, R"({"subdomain":"other","containers":[{"name":"c"}]})"},
                           {"named", 3, R"({"hostname":"boss","containers":[{"name":"c"}]})"}});
  EXPECT_EQ(TaskHosts(job, 0), (std::vector<std::string>{"j-plain-0.j", "j-plain-1.j"}));
  EXPECT_EQ(TaskHosts(job, 1), (std::vector<std::string>{"j-sub-0.other", "j-sub-1.other"}));
  EXPECT_EQ(TaskHosts(job, 2), (std::vector<std::string>{"boss.j"}));
  EXPECT_EQ(ReplicaHost(job, 1, 1), "j-sub-1.other");
  EXPECT_EQ(ReplicaHost(job, 2, 2), "boss.j");
}

// ---------------------------------------------------------------------------
// env.

TEST(PluginsEnvTest, EveryContainerAndInitContainer) {
  const Job job =
      MakeJob(R"({"env":[]})",
              {{"t", 4,
                R"({"initContainers":[{"name":"i"}],)"
                R"("containers":[{"name":"a"},{"name":"b","env":[{"name":"X","value":"1"}]}]})"}});
  rapidjson::Document pod = Pod(job, 0, 3);
  using E = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Env(Container(pod, 0, "initContainers")),
            (E{{"VK_TASK_INDEX", "3"}, {"VC_TASK_INDEX", "3"}}));
  EXPECT_EQ(Env(Container(pod, 0)), (E{{"VK_TASK_INDEX", "3"}, {"VC_TASK_INDEX", "3"}}));
  EXPECT_EQ(Env(Container(pod, 1)),
            (E{{"X", "1"}, {"VK_TASK_INDEX", "3"}, {"VC_TASK_INDEX", "3"}}));
}

TEST(PluginsEnvTest, TemplateValueWins) {
  const Job job = MakeJob(
      R"({"env":[]})",
      {{"t", 1, R"({"containers":[{"name":"a","env":[{"name":"VK_TASK_INDEX","value":"x"}]}]})"}});
  rapidjson::Document pod = Pod(job, 0, 0);
  using E = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Env(Container(pod)), (E{{"VK_TASK_INDEX", "x"}, {"VC_TASK_INDEX", "0"}}));
}

// ---------------------------------------------------------------------------
// svc.

TEST(PluginsSvcTest, PodHostsEnvAndMount) {
  const Job job = MakeJob(R"({"svc":[]})", {{"ps", 1}, {"my-worker", 2}});
  rapidjson::Document pod = Pod(job, 1, 1);
  EXPECT_STREQ(pod["spec"]["hostname"].GetString(), "j-my-worker-1");
  EXPECT_STREQ(pod["spec"]["subdomain"].GetString(), "j");
  using E = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Env(Container(pod)), (E{{"VC_PS_HOSTS", "j-svc/VC_PS_HOSTS"},
                                    {"VC_PS_NUM", "j-svc/VC_PS_NUM"},
                                    {"VC_MY_WORKER_HOSTS", "j-svc/VC_MY_WORKER_HOSTS"},
                                    {"VC_MY_WORKER_NUM", "j-svc/VC_MY_WORKER_NUM"}}));
  EXPECT_EQ(Mounts(Container(pod)), "j-svc@/etc/volcano;");
}

TEST(PluginsSvcTest, TemplateHostnameKeptAndNoEnvWhenDisabled) {
  const Job job = MakeJob(R"({"svc":["--inject-hosts-env=false"]})",
                          {{"t", 1,
                            R"({"hostname":"h","subdomain":"s","containers":[{"name":"c",)"
                            R"("volumeMounts":[{"name":"mine","mountPath":"/etc/volcano"}]}],)"
                            R"("volumes":[{"name":"mine","emptyDir":{}}]})"}});
  rapidjson::Document pod = Pod(job, 0, 0);
  EXPECT_STREQ(pod["spec"]["hostname"].GetString(), "h");
  EXPECT_STREQ(pod["spec"]["subdomain"].GetString(), "s");
  EXPECT_TRUE(Env(Container(pod)).empty());
  // The template's own mount at /etc/volcano is kept; the volume is still added.
  EXPECT_EQ(Mounts(Container(pod)), "mine@/etc/volcano;");
  EXPECT_EQ(pod["spec"]["volumes"].Size(), 2u);
}

std::map<std::string, std::string> StringMap(const rapidjson::Value& v) {
  std::map<std::string, std::string> out;
  for (const auto& m : v.GetObject()) out[m.name.GetString()] = m.value.GetString();
  return out;
}

rapidjson::Document ParseObject(const JobObject& o) {
  rapidjson::Document doc;
  EXPECT_TRUE(kube::ParseDocument(o.json, &doc).ok()) << o.json;
  return doc;
}

TEST(PluginsSvcTest, ObjectsConfigMapServicePolicy) {
  const Job job =
      MakeJob(R"({"svc":["--publish-not-ready-addresses"]})",
              {{"ps", 1},
               {"my-worker", 2},
               {"named", 3, R"({"hostname":"boss","subdomain":"x","containers":[{"name":"c"}]})"},
               {"none", 0}});
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, {});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 3u);
  EXPECT_EQ((*objects)[0].resource, "configmaps");
  EXPECT_EQ((*objects)[0].name, "j-svc");
  EXPECT_EQ((*objects)[0].api_version, "v1");
  rapidjson::Document cm = ParseObject((*objects)[0]);
  EXPECT_STREQ(cm["kind"].GetString(), "ConfigMap");
  EXPECT_STREQ(cm["metadata"]["namespace"].GetString(), "ns");
  EXPECT_STREQ(cm["metadata"]["ownerReferences"][0]["kind"].GetString(), "Job");
  EXPECT_TRUE(cm["metadata"]["ownerReferences"][0]["controller"].GetBool());
  const std::map<std::string, std::string> want = {
      {"ps.host", "j-ps-0.j"},
      {"VC_PS_HOSTS", "j-ps-0.j"},
      {"VC_PS_NUM", "1"},
      {"my_worker.host", "j-my-worker-0.j\nj-my-worker-1.j"},
      {"VC_MY_WORKER_HOSTS", "j-my-worker-0.j,j-my-worker-1.j"},
      {"VC_MY_WORKER_NUM", "2"},
      {"named.host", "boss.x"},
      {"VC_NAMED_HOSTS", "boss.x"},
      {"VC_NAMED_NUM", "1"},
      {"none.host", ""},
      {"VC_NONE_HOSTS", ""},
      {"VC_NONE_NUM", "0"}};
  EXPECT_EQ(StringMap(cm["data"]), want);

  EXPECT_EQ((*objects)[1].resource, "services");
  EXPECT_EQ((*objects)[1].name, "j");
  rapidjson::Document svc = ParseObject((*objects)[1]);
  EXPECT_STREQ(svc["spec"]["clusterIP"].GetString(), "None");
  EXPECT_TRUE(svc["spec"]["publishNotReadyAddresses"].GetBool());
  const std::map<std::string, std::string> selector = {{"volcano.sh/job-name", "j"},
                                                       {"volcano.sh/job-namespace", "ns"}};
  EXPECT_EQ(StringMap(svc["spec"]["selector"]), selector);
  EXPECT_FALSE(svc["spec"].HasMember("ports"));

  EXPECT_EQ((*objects)[2].resource, "networkpolicies");
  EXPECT_EQ((*objects)[2].api_version, "networking.k8s.io/v1");
  rapidjson::Document np = ParseObject((*objects)[2]);
  EXPECT_EQ(StringMap(np["spec"]["podSelector"]["matchLabels"]), selector);
  EXPECT_EQ(StringMap(np["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"]), selector);
  EXPECT_STREQ(np["spec"]["policyTypes"][0].GetString(), "Ingress");
}

TEST(PluginsSvcTest, NetworkPolicyDisabled) {
  const Job job = MakeJob(R"({"svc":["--disable-network-policy"]})", {{"t", 1}});
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, {});
  ASSERT_TRUE(objects.ok());
  ASSERT_EQ(objects->size(), 2u);
  EXPECT_EQ((*objects)[1].resource, "services");
  rapidjson::Document svc = ParseObject((*objects)[1]);
  EXPECT_FALSE(svc["spec"].HasMember("publishNotReadyAddresses"));
}

// ---------------------------------------------------------------------------
// ssh.

std::map<std::string, std::string> SecretData(const JobObject& o) {
  rapidjson::Document doc = ParseObject(o);
  std::map<std::string, std::string> out;
  const rapidjson::Value& data = doc["data"];  // const: clang rejects non-const member iterators
  for (const auto& m : data.GetObject()) {
    StatusOr<std::string> decoded = kube::DecodeBase64(m.value.GetString());
    EXPECT_TRUE(decoded.ok());
    out[m.name.GetString()] = decoded.ok() ? *decoded : "";
  }
  return out;
}

TEST(PluginsSshTest, SecretWithGeneratedKeysAndConfig) {
  const Job job = MakeJob(
      R"({"ssh":["--ssh-port=2222"]})",
      {{"m", 1}, {"w", 2}, {"h", 2, R"({"hostname":"fixed","containers":[{"name":"c"}]})"}});
  EXPECT_TRUE(NeedsSshKeys(job));
  StatusOr<std::vector<JobObject>> objects =
      BuildJobObjects(job, SshKeyPair{"PRIVATE\n", "ssh-rsa PUB\n"});
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_EQ((*objects)[0].resource, "secrets");
  EXPECT_EQ((*objects)[0].name, "j-ssh");
  const std::map<std::string, std::string> want = {
      {"id_rsa", "PRIVATE\n"},
      {"id_rsa.pub", "ssh-rsa PUB\n"},
      {"authorized_keys", "ssh-rsa PUB\n"},
      {"config",
       "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
       "Host j-m-0\n  HostName j-m-0.j\n  Port 2222\n"
       "Host j-w-0\n  HostName j-w-0.j\n  Port 2222\n"
       "Host j-w-1\n  HostName j-w-1.j\n  Port 2222\n"
       "Host fixed\n  HostName fixed.j\n  Port 2222\n"}};
  EXPECT_EQ(SecretData((*objects)[0]), want);
}

TEST(PluginsSshTest, KeysFromArgs) {
  const Job job =
      MakeJob(R"({"ssh":["--ssh-private-key=MINE","--ssh-public-key=ssh-rsa MINE"]})", {{"t", 1}});
  EXPECT_FALSE(NeedsSshKeys(job));
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, {});
  ASSERT_TRUE(objects.ok()) << objects.status();
  std::map<std::string, std::string> data = SecretData((*objects)[0]);
  EXPECT_EQ(data["id_rsa"], "MINE");
  EXPECT_EQ(data["authorized_keys"], "ssh-rsa MINE");
}

TEST(PluginsSshTest, NeedsKeys) {
  struct Case {
    std::string plugins;
    bool want;
  };
  const std::vector<Case> cases = {
      {R"({})", false},
      {R"({"svc":[]})", false},
      {R"({"ssh":[]})", true},
      {R"({"ssh":["--ssh-private-key=A"]})", true},
      {R"({"ssh":["--ssh-public-key=B"]})", true},
      {R"({"ssh":["--ssh-private-key=A","--ssh-public-key=B"]})", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NeedsSshKeys(MakeJob(c.plugins, {{"t", 1}})), c.want) << c.plugins;
  }
}

TEST(PluginsSshTest, MissingKeysIsFailedPrecondition) {
  StatusOr<std::vector<JobObject>> objects =
      BuildJobObjects(MakeJob(R"({"ssh":[]})", {{"t", 1}}), {});
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().code(), StatusCode::kFailedPrecondition);
}

TEST(PluginsSshTest, MountModeFollowsKeyPath) {
  struct Case {
    std::string plugins;
    std::string path;
    int mode;
  };
  const std::vector<Case> cases = {
      {R"({"ssh":[]})", "/root/.ssh", 0600},
      {R"({"ssh":["--ssh-key-file-path=/root/.ssh"]})", "/root/.ssh", 0600},
      {R"({"ssh":["--ssh-key-file-path=/home/u/.ssh"]})", "/home/u/.ssh", 0644},
  };
  for (const Case& c : cases) {
    const Job job = MakeJob(
        c.plugins, {{"t", 1, R"({"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]})"}});
    rapidjson::Document pod = Pod(job, 0, 0);
    const auto& volume = pod["spec"]["volumes"][0];
    EXPECT_STREQ(volume["name"].GetString(), "j-ssh");
    EXPECT_STREQ(volume["secret"]["secretName"].GetString(), "j-ssh");
    EXPECT_EQ(volume["secret"]["defaultMode"].GetInt(), c.mode) << c.plugins;
    std::string items;
    for (const auto& item : volume["secret"]["items"].GetArray()) {
      items += std::string(item["key"].GetString()) + "->" + item["path"].GetString() + ";";
    }
    EXPECT_EQ(items,
              "id_rsa->.ssh/id_rsa;id_rsa.pub->.ssh/id_rsa.pub;"
              "authorized_keys->.ssh/authorized_keys;config->.ssh/config;");
    EXPECT_EQ(Mounts(Container(pod)), "j-ssh@" + c.path + "/.ssh;");
    EXPECT_EQ(Mounts(Container(pod, 0, "initContainers")), "j-ssh@" + c.path + "/.ssh;");
  }
}

// Volcano's svc OnJobUpdate (pkg/controllers/job/plugins/svc/svc.go): after a
// scale, the hosts ConfigMap lists the replicas as they are now.
TEST(PluginsSvcTest, OnJobUpdateRewritesTheHostsForNewReplicas) {
  Job job = MakeJob(R"({"svc":[]})", {{"ps", 1}, {"my-worker", 2}});
  job.spec.tasks[1].replicas = 3;  // scaled up from 2
  const std::map<std::string, std::string> want = {
      {"ps.host", "j-ps-0.j"},
      {"VC_PS_HOSTS", "j-ps-0.j"},
      {"VC_PS_NUM", "1"},
      {"my_worker.host", "j-my-worker-0.j\nj-my-worker-1.j\nj-my-worker-2.j"},
      {"VC_MY_WORKER_HOSTS", "j-my-worker-0.j,j-my-worker-1.j,j-my-worker-2.j"},
      {"VC_MY_WORKER_NUM", "3"}};
  EXPECT_EQ(SvcHostsData(job), want);
  // The merge patch rewrites exactly that data ...
  rapidjson::Document patch;
  ASSERT_TRUE(kube::ParseDocument(SvcHostsPatch(job), &patch).ok());
  EXPECT_EQ(patch.MemberCount(), 1u);
  EXPECT_EQ(StringMap(patch["data"]), want);
  // ... and the ConfigMap made when there is none is BuildJobObjects' own.
  const JobObject cm = SvcHostsConfigMap(job);
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, {});
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_EQ(cm, (*objects)[0]);
  EXPECT_EQ(StringMap(ParseObject(cm)["data"]), want);

  job.spec.tasks[1].replicas = 1;  // and down
  EXPECT_EQ(SvcHostsData(job).at("VC_MY_WORKER_NUM"), "1");
  EXPECT_EQ(SvcHostsData(job).at("VC_MY_WORKER_HOSTS"), "j-my-worker-0.j");
}

// ---------------------------------------------------------------------------
// Objects, all together.

TEST(PluginsObjectsTest, OrderAndNames) {
  Job job = MakeJob(R"({"svc":[],"ssh":[],"env":[],"mpi":[]})", {{"master", 1}, {"worker", 1}});
  job.spec.volumes = {VolumeSpec{"/a", "named", ""},
                      VolumeSpec{"/b", "", R"({"accessModes":["ReadWriteOnce"]})"},
                      VolumeSpec{"/c", "given", R"({"accessModes":["ReadWriteMany"]})"}};
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, SshKeyPair{"k", "p"});
  ASSERT_TRUE(objects.ok()) << objects.status();
  std::vector<std::string> got;
  for (const JobObject& o : *objects) got.push_back(o.resource + "/" + o.name);
  EXPECT_EQ(got, (std::vector<std::string>{"configmaps/j-svc", "services/j", "networkpolicies/j",
                                           "secrets/j-ssh", "persistentvolumeclaims/j-pvc-1",
                                           "persistentvolumeclaims/given"}));
  rapidjson::Document pvc = ParseObject((*objects)[4]);
  EXPECT_STREQ(pvc["kind"].GetString(), "PersistentVolumeClaim");
  EXPECT_STREQ(pvc["spec"]["accessModes"][0].GetString(), "ReadWriteOnce");
  EXPECT_STREQ(pvc["metadata"]["ownerReferences"][0]["uid"].GetString(), "u");
}

TEST(PluginsObjectsTest, NoPluginsNoObjects) {
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(MakeJob("{}", {{"t", 1}}), {});
  ASSERT_TRUE(objects.ok());
  EXPECT_TRUE(objects->empty());
}

TEST(PluginsObjectsTest, BadTemplateOrClaimNamesTheField) {
  Job job = MakeJob(R"({"svc":[]})", {{"a", 1}, {"b", 1}});
  job.spec.tasks[1].template_json = "{";
  StatusOr<std::vector<JobObject>> objects = BuildJobObjects(job, {});
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().message().rfind("spec.tasks[1].template: ", 0), 0u)
      << objects.status();

  Job claim = MakeJob("{}", {{"a", 1}});
  claim.spec.volumes = {VolumeSpec{"/a", "", "[]"}};
  objects = BuildJobObjects(claim, {});
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().message().rfind("spec.volumes[0].volumeClaim: ", 0), 0u)
      << objects.status();
}

}  // namespace
}  // namespace muster::reconciler
