#include "reconciler/plugin_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::reconciler {
namespace {

using Args = std::vector<std::string>;

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

}  // namespace
}  // namespace muster::reconciler
