// The framework plugins (mpi, pytorch, tensorflow) on the pods BuildPod makes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reconciler/plugins.h"
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
using plugin_pods::TaskDesc;

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

}  // namespace
}  // namespace muster::reconciler
