#include "reconciler/plugins.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/client/pem.h"
#include "kube/codec/json.h"
#include "kube/codec/volcano_codec.h"
#include "reconciler/pod_builder.h"

namespace muster::reconciler {
namespace {

using Args = std::vector<std::string>;

// ---------------------------------------------------------------------------
// Argument parsing (Go flag syntax).

TEST(PluginsArgsTest, Svc) {
  struct Case {
    Args args;
    SvcArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {false, false, true}},
      {{"--publish-not-ready-addresses"}, {true, false, true}},
      {{"-publish-not-ready-addresses=true"}, {true, false, true}},
      {{"--disable-network-policy=true"}, {false, true, true}},
      {{"--disable-network-policy=1"}, {false, true, true}},
      {{"--inject-hosts-env=false"}, {false, false, false}},
      {{"--inject-hosts-env=F"}, {false, false, false}},
      // "--flag false" is not a boolean value in Go: the flag is set, the word ignored.
      {{"--disable-network-policy", "false"}, {false, true, true}},
      {{"--disable-network-policy=maybe"}, {false, false, true}},
      {{"--unknown", "--disable-network-policy"}, {false, true, true}},
      {{"--", "--disable-network-policy"}, {false, false, true}},
      {{"---disable-network-policy"}, {false, false, true}},
      {{"--inject-hosts-env=false", "--inject-hosts-env"}, {false, false, true}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseSvcArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

TEST(PluginsArgsTest, Ssh) {
  struct Case {
    Args args;
    SshArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {"/root/.ssh", "", "", 22}},
      {{"--ssh-key-file-path=/home/u/.ssh"}, {"/home/u/.ssh", "", "", 22}},
      {{"--ssh-key-file-path", "/home/u/.ssh"}, {"/home/u/.ssh", "", "", 22}},
      {{"--ssh-key-file-path="}, {"/root/.ssh", "", "", 22}},
      {{"--ssh-private-key=PRIV", "--ssh-public-key", "ssh-rsa AAA"},
       {"/root/.ssh", "PRIV", "ssh-rsa AAA", 22}},
      {{"--ssh-port=2222"}, {"/root/.ssh", "", "", 2222}},
      {{"--ssh-port", "2022"}, {"/root/.ssh", "", "", 2022}},
      {{"--ssh-port=abc"}, {"/root/.ssh", "", "", 22}},
      {{"--ssh-port=0"}, {"/root/.ssh", "", "", 22}},
      {{"--ssh-port=70000"}, {"/root/.ssh", "", "", 22}},
      {{"--ssh-port"}, {"/root/.ssh", "", "", 22}},  // needs a value
      {{"--no-root"}, {"/root/.ssh", "", "", 22}},   // removed upstream: ignored
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseSshArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

TEST(PluginsArgsTest, Mpi) {
  struct Case {
    Args args;
    MpiArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {"master", "worker", 22}},
      {{"--master=mpimaster", "--worker=mpiworker", "--port=22"}, {"mpimaster", "mpiworker", 22}},
      {{"-master", "m", "-worker", "w", "-port", "2200"}, {"m", "w", 2200}},
      {{"--port=+23"}, {"master", "worker", 23}},
      {{"--port=-1"}, {"master", "worker", 22}},
      {{"--port=1e3"}, {"master", "worker", 22}},
      {{"stray", "--master=a=b"}, {"a=b", "worker", 22}},
      {{"--master=a", "--master=b"}, {"b", "worker", 22}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseMpiArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

TEST(PluginsArgsTest, PyTorch) {
  struct Case {
    Args args;
    PyTorchArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {"master", "worker", 23456, false, 300, "busybox:1.36.1"}},
      {{"--master=m", "--worker=w", "--port=29500"},
       {"m", "w", 29500, false, 300, "busybox:1.36.1"}},
      {{"--wait-master-enabled", "--wait-master-timeout=60", "--wait-master-image=alpine"},
       {"master", "worker", 23456, true, 60, "alpine"}},
      {{"--wait-master-timeout=10m"}, {"master", "worker", 23456, false, 600, "busybox:1.36.1"}},
      {{"--wait-master-timeout=0"}, {"master", "worker", 23456, false, 300, "busybox:1.36.1"}},
      {{"--wait-master-timeout=soon"}, {"master", "worker", 23456, false, 300, "busybox:1.36.1"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParsePyTorchArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

TEST(PluginsArgsTest, TensorFlow) {
  struct Case {
    Args args;
    TensorFlowArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {"ps", "worker", "chief", "evaluator", 2222}},
      {{"--ps=server", "--worker=trainer", "--chief=boss", "--evaluator=eval", "--port=3333"},
       {"server", "trainer", "boss", "eval", 3333}},
      {{"--port=99999"}, {"ps", "worker", "chief", "evaluator", 2222}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseTensorFlowArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

TEST(PluginsArgsTest, Ray) {
  struct Case {
    Args args;
    RayArgs want;
  };
  const std::vector<Case> cases = {
      {{}, {"head", "head", "worker", "worker", 6379, 8265, 10001}},
      {{"--head=h", "--headContainer=ray-head", "--worker=w", "--workerContainer=ray-worker",
        "--port=6380", "--dashboardPort=8266", "--clientPort=10002"},
       {"h", "ray-head", "w", "ray-worker", 6380, 8266, 10002}},
      {{"--port=0", "--clientPort=70000"}, {"head", "head", "worker", "worker", 6379, 8265, 10001}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseRayArgs(c.args), c.want) << testing::PrintToString(c.args);
  }
}

// ---------------------------------------------------------------------------
// Helpers: jobs from a compact description, pods parsed back.

Job Decode(std::string_view json) {
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
Job MakeJob(const std::string& plugins, const std::vector<TaskDesc>& tasks) {
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

rapidjson::Document Pod(const Job& job, size_t task, int index) {
  StatusOr<std::string> pod = BuildPod(job, task, index);
  EXPECT_TRUE(pod.ok()) << pod.status();
  rapidjson::Document doc;
  EXPECT_TRUE(kube::ParseDocument(pod.ok() ? *pod : "{}", &doc).ok());
  return doc;
}

const rapidjson::Value& Container(const rapidjson::Document& pod, size_t i = 0,
                                  const char* list = "containers") {
  return pod["spec"][list][static_cast<rapidjson::SizeType>(i)];
}

// name -> value (or "<cm>/<key>" for a configMapKeyRef), in order.
std::vector<std::pair<std::string, std::string>> Env(const rapidjson::Value& c) {
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

std::map<std::string, std::string> EnvMap(const rapidjson::Value& c) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : Env(c)) out.emplace(k, v);
  return out;
}

std::string Ports(const rapidjson::Value& c) {
  std::string out;
  if (!c.HasMember("ports")) return out;
  for (const auto& p : c["ports"].GetArray()) {
    out += std::string(p.HasMember("name") ? p["name"].GetString() : "") + ":" +
           std::to_string(p["containerPort"].GetInt()) + ";";
  }
  return out;
}

std::string Mounts(const rapidjson::Value& c) {
  std::string out;
  if (!c.HasMember("volumeMounts")) return out;
  for (const auto& m : c["volumeMounts"].GetArray()) {
    out += std::string(m["name"].GetString()) + "@" + m["mountPath"].GetString();
    if (m.HasMember("subPath")) out += "/" + std::string(m["subPath"].GetString());
    out += ";";
  }
  return out;
}

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

// ---------------------------------------------------------------------------
// mpi.

TEST(PluginsMpiTest, MasterGetsWorkerHostsEveryPodGetsPort) {
  const std::string plugins = R"({"mpi":["--master=mm","--worker=ww","--port=2022"]})";
  const Job job = MakeJob(
      plugins, {{"mm", 1,
                 R"({"initContainers":[{"name":"i"}],)"
                 R"("containers":[{"name":"c"},{"name":"d","ports":[{"containerPort":2022}]}]})"},
                {"ww", 3},
                {"other", 1}});
  rapidjson::Document master = Pod(job, 0, 0);
  EXPECT_EQ(EnvMap(Container(master))["MPI_HOST"], "j-ww-0.j,j-ww-1.j,j-ww-2.j");
  EXPECT_EQ(EnvMap(Container(master, 0, "initContainers"))["MPI_HOST"],
            "j-ww-0.j,j-ww-1.j,j-ww-2.j");
  EXPECT_EQ(Ports(Container(master)), "mpijob-port:2022;");
  EXPECT_EQ(Ports(Container(master, 1)), ":2022;");  // already exposed
  EXPECT_EQ(Ports(Container(master, 0, "initContainers")), "mpijob-port:2022;");
  for (size_t task : {1u, 2u}) {
    rapidjson::Document pod = Pod(job, task, 0);
    EXPECT_EQ(EnvMap(Container(pod)).count("MPI_HOST"), 0u);
    EXPECT_EQ(Ports(Container(pod)), "mpijob-port:2022;");
  }
}

TEST(PluginsMpiTest, WorkerTemplateHostnameAndMissingWorker) {
  const Job named =
      MakeJob(R"({"mpi":[]})",
              {{"master", 1},
               {"worker", 2, R"({"hostname":"w","subdomain":"s","containers":[{"name":"c"}]})"}});
  EXPECT_EQ(EnvMap(Container(Pod(named, 0, 0)))["MPI_HOST"], "w.s");

  const Job alone = MakeJob(R"({"mpi":[]})", {{"master", 1}});
  rapidjson::Document pod = Pod(alone, 0, 0);
  EXPECT_EQ(EnvMap(Container(pod)).count("MPI_HOST"), 0u);
  EXPECT_EQ(Ports(Container(pod)), "mpijob-port:22;");

  const Job no_workers = MakeJob(R"({"mpi":[]})", {{"master", 1}, {"worker", 0}});
  EXPECT_EQ(EnvMap(Container(Pod(no_workers, 0, 0))).count("MPI_HOST"), 0u);
}

TEST(PluginsMpiTest, PortNameTakenIsLeft) {
  const Job job = MakeJob(
      R"({"mpi":[]})",
      {{"master", 1,
        R"({"containers":[{"name":"c","ports":[{"name":"mpijob-port","containerPort":80}]}]})"}});
  EXPECT_EQ(Ports(Container(Pod(job, 0, 0))), "mpijob-port:80;");
}

// ---------------------------------------------------------------------------
// pytorch.

TEST(PluginsPyTorchTest, EnvPerRole) {
  const Job job =
      MakeJob(R"({"pytorch":["--port=29500"]})", {{"master", 1}, {"worker", 3}, {"aux", 2}});
  struct Case {
    size_t task;
    int index;
    std::string rank;  // "" for none
  };
  for (const Case& c : std::vector<Case>{{0, 0, "0"}, {1, 0, "1"}, {1, 2, "3"}, {2, 1, ""}}) {
    rapidjson::Document pod = Pod(job, c.task, c.index);
    std::map<std::string, std::string> env = EnvMap(Container(pod));
    EXPECT_EQ(env["MASTER_ADDR"], "j-master-0.j");
    EXPECT_EQ(env["MASTER_PORT"], "29500");
    EXPECT_EQ(env["WORLD_SIZE"], "4");  // master + worker replicas only
    if (c.rank.empty()) {
      EXPECT_EQ(env.count("RANK"), 0u);
    } else {
      EXPECT_EQ(env["RANK"], c.rank);
    }
    EXPECT_EQ(Ports(Container(pod)), "pytorchjob-port:29500;");
  }
}

TEST(PluginsPyTorchTest, InitContainersUntouchedAndOrder) {
  const Job job = MakeJob(
      R"({"pytorch":[]})",
      {{"master", 1,
        R"({"initContainers":[{"name":"i"}],"containers":[{"name":"c","env":[{"name":"RANK","value":"9"}]}]})"},
       {"worker", 1}});
  rapidjson::Document pod = Pod(job, 0, 0);
  using E = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(Env(Container(pod)), (E{{"RANK", "9"},
                                    {"MASTER_ADDR", "j-master-0.j"},
                                    {"MASTER_PORT", "23456"},
                                    {"WORLD_SIZE", "2"}}));
  EXPECT_TRUE(Env(Container(pod, 0, "initContainers")).empty());
  EXPECT_EQ(Ports(Container(pod, 0, "initContainers")), "");
}

TEST(PluginsPyTorchTest, NoMasterTaskIsNoOp) {
  const Job job = MakeJob(R"({"pytorch":["--master=chief"]})", {{"master", 1}, {"worker", 1}});
  rapidjson::Document pod = Pod(job, 1, 0);
  EXPECT_TRUE(Env(Container(pod)).empty());
  EXPECT_EQ(Ports(Container(pod)), "");
}

TEST(PluginsPyTorchTest, MasterAddrRespectsTemplate) {
  const Job job =
      MakeJob(R"({"pytorch":[]})",
              {{"master", 1, R"({"hostname":"m","subdomain":"s","containers":[{"name":"c"}]})"},
               {"worker", 1}});
  EXPECT_EQ(EnvMap(Container(Pod(job, 1, 0)))["MASTER_ADDR"], "m.s");
}

TEST(PluginsPyTorchTest, WaitForMaster) {
  const Job job = MakeJob(
      R"({"pytorch":["--wait-master-enabled","--wait-master-timeout=60","--wait-master-image=img"]})",
      {{"master", 1},
       {"worker", 1, R"({"initContainers":[{"name":"mine"}],"containers":[{"name":"c"}]})"}});
  rapidjson::Document worker = Pod(job, 1, 0);
  const auto& init = worker["spec"]["initContainers"];
  ASSERT_EQ(init.Size(), 2u);
  EXPECT_STREQ(init[0]["name"].GetString(), "wait-for-master");
  EXPECT_STREQ(init[0]["image"].GetString(), "img");
  const std::string script = init[0]["command"][2].GetString();
  EXPECT_NE(script.find("nc -z j-master-0.j 23456"), std::string::npos) << script;
  EXPECT_NE(script.find("+ 60 "), std::string::npos) << script;
  EXPECT_NE(script.find("sleep 2"), std::string::npos) << script;
  EXPECT_STREQ(init[1]["name"].GetString(), "mine");
  rapidjson::Document master = Pod(job, 0, 0);
  EXPECT_FALSE(master["spec"].HasMember("initContainers"));
}

// ---------------------------------------------------------------------------
// tensorflow.

TEST(PluginsTensorFlowTest, TfConfigPerPod) {
  struct Case {
    std::string plugins;
    std::vector<TaskDesc> tasks;
    size_t task;
    int index;
    std::string want;  // "" for no TF_CONFIG
  };
  const std::vector<Case> cases = {
      {R"({"tensorflow":[]})",
       {{"ps", 1}, {"worker", 2}},
       1,
       1,
       R"({"cluster":{"ps":["j-ps-0.j:2222"],"worker":["j-worker-0.j:2222","j-worker-1.j:2222"]},)"
       R"("task":{"type":"worker","index":1}})"},
      {R"({"tensorflow":[]})",
       {{"ps", 1}, {"worker", 2}},
       0,
       0,
       R"({"cluster":{"ps":["j-ps-0.j:2222"],"worker":["j-worker-0.j:2222","j-worker-1.j:2222"]},)"
       R"("task":{"type":"ps","index":0}})"},
      {R"({"tensorflow":["--port=3000","--chief=boss","--evaluator=eval"]})",
       {{"boss", 1}, {"worker", 1}, {"eval", 1}, {"extra", 1}},
       3,
       0,
       R"({"cluster":{"worker":["j-worker-0.j:3000"],"chief":["j-boss-0.j:3000"],)"
       R"("evaluator":["j-eval-0.j:3000"]},"task":{"type":"extra","index":0}})"},
      {R"({"tensorflow":[]})",
       {{"chief", 1}, {"worker", 0}},
       0,
       0,
       R"({"cluster":{"chief":["j-chief-0.j:2222"]},"task":{"type":"chief","index":0}})"},
      // A single task with one replica is a stand-alone job: no TF_CONFIG.
      {R"({"tensorflow":[]})", {{"worker", 1}}, 0, 0, ""},
      // One task, two replicas: a cluster.
      {R"({"tensorflow":[]})",
       {{"worker", 2}},
       0,
       1,
       R"({"cluster":{"worker":["j-worker-0.j:2222","j-worker-1.j:2222"]},)"
       R"("task":{"type":"worker","index":1}})"},
  };
  for (const Case& c : cases) {
    std::map<std::string, std::string> env =
        EnvMap(Container(Pod(MakeJob(c.plugins, c.tasks), c.task, c.index)));
    if (c.want.empty()) {
      EXPECT_EQ(env.count("TF_CONFIG"), 0u) << c.plugins;
    } else {
      EXPECT_EQ(env["TF_CONFIG"], c.want) << c.plugins;
    }
  }
}

TEST(PluginsTensorFlowTest, InitContainersUntouched) {
  const Job job =
      MakeJob(R"({"tensorflow":[]})",
              {{"ps", 1, R"({"initContainers":[{"name":"i"}],"containers":[{"name":"c"}]})"},
               {"worker", 1}});
  rapidjson::Document pod = Pod(job, 0, 0);
  EXPECT_TRUE(Env(Container(pod, 0, "initContainers")).empty());
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
