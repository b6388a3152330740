#include "kube/codec/volcano_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kube/codec/codec_test_util.h"
#include "model/quantity.h"

namespace muster::kube {
namespace {

using codec_test::AllLocations;
using codec_test::Compact;
using codec_test::Parse;
using codec_test::ReadTestdata;
using codec_test::WithValueAt;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

using namespace std::chrono_literals;

using codec_test::At;
using codec_test::Bytes;
using codec_test::ExpectRoundTrip;
using codec_test::StatusOf;
using codec_test::StatusOfDecode;

// ---------------------------------------------------------------------------
// PodGroup.

TEST(VolcanoCodecTest, DecodesPodGroup) {
  StatusOr<PodGroup> pg = DecodePodGroup(ReadTestdata("podgroup.json"));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->meta.name, "tf-dist-mnist-6f1c2b9e-8d4a-4c1e-9a57-3e2f1d0c7b44");
  EXPECT_EQ(pg->meta.generation, 3);
  EXPECT_EQ(pg->meta.owner_references[0].kind, "Job");
  const PodGroupSpec& s = pg->spec;
  EXPECT_EQ(s.min_member, 3);
  EXPECT_THAT(s.min_task_member, ElementsAre(Pair("ps", 1), Pair("worker", 2)));
  EXPECT_EQ(s.queue, "research");
  EXPECT_EQ(s.priority_class_name, "ml-training-high");
  ASSERT_TRUE(s.min_resources.has_value());
  EXPECT_EQ(s.min_resources->milli_cpu(), 18000);
  EXPECT_EQ(s.min_resources->memory(), Bytes("112Gi"));
  EXPECT_EQ(s.min_resources->gpus(), 8);
  EXPECT_EQ(s.min_resources->Get("count/pods"), 3);
  EXPECT_EQ(s.network_topology, (NetworkTopologySpec{"hard", 2, ""}));
  const PodGroupStatus& st = pg->status;
  EXPECT_EQ(st.phase, kPodGroupRunning);
  EXPECT_EQ(st.running, 3);
  EXPECT_EQ(st.succeeded, 0);
  ASSERT_EQ(st.conditions.size(), 2u);
  EXPECT_EQ(st.conditions[0].type, "Unschedulable");
  EXPECT_EQ(st.conditions[0].reason, "NotEnoughResources");
  EXPECT_EQ(st.conditions[0].transition_id, "8a9b0c1d-2e3f-4a5b-6c7d-8e9f0a1b2c3d");
  EXPECT_EQ(st.conditions[1].last_transition_time, At("2025-03-14T09:26:58Z"));
}

TEST(VolcanoCodecTest, PodGroupWithoutOptionalFields) {
  StatusOr<PodGroup> pg =
      DecodePodGroup(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",)"
                     R"("metadata":{"name":"pg1","namespace":"default"},"spec":{"minMember":2}})");
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->spec.min_member, 2);
  EXPECT_EQ(pg->spec.queue, "");  // reads as "default" by the model's rule
  EXPECT_FALSE(pg->spec.min_resources.has_value());
  EXPECT_FALSE(pg->spec.network_topology.has_value());
  EXPECT_EQ(pg->status, PodGroupStatus{});
}

TEST(VolcanoCodecTest, EncodesPodGroup) {
  PodGroup pg;
  pg.meta.name = "pg1";
  pg.meta.namespace_ = "team-a";
  pg.spec.min_member = 4;
  pg.spec.min_task_member = {{"worker", 4}};
  pg.spec.queue = "research";
  pg.spec.min_resources = Resources{{"cpu", 4000}, {"nvidia.com/gpu", 8000}};
  pg.spec.network_topology = NetworkTopologySpec{"soft", std::nullopt, "rack"};
  EXPECT_EQ(
      EncodePodGroup(pg),
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",)"
      R"("metadata":{"name":"pg1","namespace":"team-a"},"spec":{"minMember":4,)"
      R"("minTaskMember":{"worker":4},"queue":"research","minResources":{"cpu":"4",)"
      R"("nvidia.com/gpu":"8"},"networkTopology":{"mode":"soft","highestTierName":"rack"}}})");
}

// ---------------------------------------------------------------------------
// Queue.

TEST(VolcanoCodecTest, DecodesQueue) {
  StatusOr<Queue> q = DecodeQueue(ReadTestdata("queue.json"));
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->meta.Key(), "research");
  const QueueSpec& s = q->spec;
  EXPECT_EQ(s.weight, 4);
  EXPECT_EQ(s.capability,
            (Resources{{"cpu", 256000}, {"memory", Bytes("2Ti")}, {"nvidia.com/gpu", 32000}}));
  EXPECT_EQ(s.deserved,
            (Resources{{"cpu", 128000}, {"memory", Bytes("1Ti")}, {"nvidia.com/gpu", 16000}}));
  EXPECT_EQ(s.guarantee,
            (Resources{{"cpu", 32000}, {"memory", Bytes("256Gi")}, {"nvidia.com/gpu", 4000}}));
  EXPECT_EQ(s.reclaimable, true);
  EXPECT_EQ(s.parent, "root");
  EXPECT_EQ(s.priority, 10);
  EXPECT_EQ(s.type, "training");
  const QueueStatus& st = q->status;
  EXPECT_EQ(st.state, "Open");
  EXPECT_TRUE(q->IsOpen());
  EXPECT_EQ(st.allocated.milli_cpu(), 18250);
  EXPECT_EQ(st.allocated.memory(), 117702918144);
  EXPECT_EQ(st.allocated.gpus(), 8);
  EXPECT_EQ(st.pending, 1);
  EXPECT_EQ(st.running, 1);
  EXPECT_EQ(st.inqueue, 2);
  EXPECT_EQ(st.completed, 0);
}

TEST(VolcanoCodecTest, DecodesQueueList) {
  StatusOr<ObjectList<Queue>> list = DecodeQueueList(ReadTestdata("queue_list.json"));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "48215611");
  EXPECT_EQ(list->continue_token, "");
  ASSERT_EQ(list->items.size(), 2u);
  const Queue& def = list->items[0];
  EXPECT_EQ(def.meta.name, "default");
  EXPECT_FALSE(def.spec.capability.has_value());  // unlimited
  EXPECT_FALSE(def.spec.guarantee.has_value());   // "guarantee": {} guarantees nothing
  EXPECT_TRUE(def.IsReclaimable());
  const Queue& root = list->items[1];
  EXPECT_EQ(root.spec.reclaimable, false);
  EXPECT_FALSE(root.IsReclaimable());
  EXPECT_EQ(root.spec.parent, "");
  EXPECT_EQ(root.status.allocated.gpus(), 13);
}

TEST(VolcanoCodecTest, QueueWeightDefaultsToOne) {
  StatusOr<Queue> q = DecodeQueue(R"({"metadata":{"name":"q"},"spec":{}})");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->spec.weight, 1);
  EXPECT_FALSE(q->spec.reclaimable.has_value());
  EXPECT_TRUE(q->IsReclaimable());
  EXPECT_TRUE(q->IsOpen());
}

TEST(VolcanoCodecTest, EncodesQueue) {
  Queue q;
  q.meta.name = "research";
  q.spec.weight = 2;
  q.spec.capability = Resources{{"nvidia.com/gpu", 16000}};
  q.spec.guarantee = Resources{{"cpu", 8000}};
  q.spec.reclaimable = false;
  q.spec.parent = "root";
  EXPECT_EQ(EncodeQueue(q),
            R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",)"
            R"("metadata":{"name":"research"},"spec":{"weight":2,)"
            R"("capability":{"nvidia.com/gpu":"16"},"guarantee":{"resource":{"cpu":"8"}},)"
            R"("reclaimable":false,"parent":"root"}})");
}

// ---------------------------------------------------------------------------
// Job.

TEST(VolcanoCodecTest, DecodesTfJobSpec) {
  StatusOr<Job> job = DecodeJob(ReadTestdata("job_tf.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->meta.Key(), "ml-team/tf-dist-mnist");
  const JobSpec& s = job->spec;
  EXPECT_EQ(s.scheduler_name, "volcano");
  EXPECT_EQ(s.min_available, 3);
  EXPECT_EQ(s.min_success, 2);
  EXPECT_EQ(s.queue, "research");
  EXPECT_EQ(s.max_retry, 3);
  EXPECT_EQ(s.ttl_seconds_after_finished, 3600);
  EXPECT_EQ(s.priority_class_name, "ml-training-high");
  EXPECT_EQ(s.running_estimate, Duration(2h + 30min));
  EXPECT_EQ(s.network_topology, (NetworkTopologySpec{"hard", 2, ""}));
  EXPECT_THAT(
      s.plugins,
      ElementsAre(Pair("env", IsEmpty()),
                  Pair("svc", ElementsAre("--publish-not-ready-addresses=true",
                                          "--disable-network-policy=false")),
                  Pair("tensorflow", ElementsAre("--ps=ps", "--worker=worker", "--port=2222"))));
  EXPECT_THAT(
      s.policies,
      ElementsAre(LifecyclePolicy{"PodEvicted", {}, std::nullopt, "RestartJob", std::nullopt},
                  LifecyclePolicy{"PodPending", {}, std::nullopt, "RestartJob", 10min},
                  LifecyclePolicy{"", {}, 137, "AbortJob", std::nullopt}));
  rapidjson::Document doc = Parse(ReadTestdata("job_tf.json"));
  EXPECT_THAT(s.volumes,
              ElementsAre(VolumeSpec{"/data", "mnist-data", ""},
                          VolumeSpec{"/checkpoints", "tf-dist-mnist-pvc-k3m9x2q7w1za",
                                     Compact(doc["spec"]["volumes"][1]["volumeClaim"])}));
}

TEST(VolcanoCodecTest, DecodesTfJobTasks) {
  StatusOr<Job> job = DecodeJob(ReadTestdata("job_tf.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->spec.tasks.size(), 2u);
  const TaskSpec& ps = job->spec.tasks[0];
  EXPECT_EQ(ps.name, "ps");
  EXPECT_EQ(ps.replicas, 1);
  EXPECT_EQ(ps.min_available, 1);
  EXPECT_EQ(ps.max_retry, 3);
  EXPECT_FALSE(ps.depends_on.has_value());
  EXPECT_EQ(ps.template_pod.meta.labels.at("role"), "ps");
  EXPECT_EQ(ps.template_pod.spec.containers[0].resources.requests,
            (Resources{{"cpu", 2000}, {"memory", Bytes("16Gi")}}));
  const TaskSpec& worker = job->spec.tasks[1];
  EXPECT_EQ(worker.name, "worker");
  EXPECT_EQ(worker.replicas, 2);
  EXPECT_EQ(worker.min_available, 2);
  EXPECT_EQ(worker.depends_on, (DependsOn{{"ps"}, "all"}));
  EXPECT_THAT(
      worker.policies,
      ElementsAre(LifecyclePolicy{"TaskCompleted", {}, std::nullopt, "CompleteJob", std::nullopt},
                  LifecyclePolicy{
                      "", {"PodFailed", "PodEvicted"}, std::nullopt, "RestartTask", std::nullopt}));
  const Pod& tmpl = worker.template_pod;
  EXPECT_EQ(tmpl.meta.annotations.at("sidecar.istio.io/inject"), "false");
  EXPECT_EQ(tmpl.spec.restart_policy, "OnFailure");
  EXPECT_EQ(tmpl.spec.node_selector.at("nvidia.com/gpu.present"), "true");
  EXPECT_EQ(tmpl.spec.containers[0].resources.requests.gpus(), 4);
  EXPECT_EQ(tmpl.spec.containers[0].resources.limits.gpus(), 4);
  EXPECT_EQ(tmpl.spec.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(tmpl.EffectiveRequest().gpus(), 4);
}

TEST(VolcanoCodecTest, DecodesTfJobStatus) {
  StatusOr<Job> job = DecodeJob(ReadTestdata("job_tf.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  const JobStatus& st = job->status;
  EXPECT_EQ(st.state, (JobState{"Running", "", "", At("2025-03-14T09:31:07Z")}));
  EXPECT_EQ(st.min_available, 3);
  EXPECT_EQ(st.running, 3);
  EXPECT_EQ(st.pending, 0);
  EXPECT_EQ(st.running_duration, Duration(4min + 17s));
  EXPECT_THAT(st.task_status_count, ElementsAre(Pair("ps", ElementsAre(Pair("Running", 1))),
                                                Pair("worker", ElementsAre(Pair("Running", 2)))));
  EXPECT_EQ(st.controlled_resources.size(), 5u);
  EXPECT_EQ(st.controlled_resources.at("plugin-svc"), "svc");
  EXPECT_THAT(st.conditions, ElementsAre(JobCondition{"Pending", At("2025-03-14T09:26:51Z")},
                                         JobCondition{"Running", At("2025-03-14T09:31:07Z")}));
}

TEST(VolcanoCodecTest, DecodesCompletedPytorchJob) {
  StatusOr<Job> job = DecodeJob(ReadTestdata("job_pytorch.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.min_available, 5);
  EXPECT_EQ(job->spec.max_retry, 5);
  EXPECT_FALSE(job->spec.min_success.has_value());
  EXPECT_FALSE(job->spec.ttl_seconds_after_finished.has_value());
  EXPECT_THAT(job->spec.plugins,
              ElementsAre(Pair("pytorch",
                               ElementsAre("--master=master", "--worker=worker", "--port=23456")),
                          Pair("svc", IsEmpty())));
  ASSERT_EQ(job->spec.tasks.size(), 2u);
  EXPECT_EQ(job->spec.tasks[1].replicas, 4);
  EXPECT_EQ(job->spec.tasks[1].template_pod.spec.containers[0].resources.requests.milli_cpu(),
            3500);
  EXPECT_TRUE(job->spec.tasks[1].template_pod.meta == ObjectMeta{});
  const JobStatus& st = job->status;
  EXPECT_EQ(st.state.phase, "Completed");
  EXPECT_EQ(st.succeeded, 5);
  EXPECT_EQ(st.retry_count, 1);
  EXPECT_EQ(st.version, 1);
  EXPECT_EQ(st.running_duration, Duration(6h + 45min + 17s));
  EXPECT_EQ(st.conditions.size(), 4u);
  EXPECT_EQ(st.conditions.back().status, "Completed");
}

TEST(VolcanoCodecTest, TaskTemplatesAreKeptVerbatim) {
  for (const char* file : {"job_tf.json", "job_pytorch.json"}) {
    SCOPED_TRACE(file);
    std::string json = ReadTestdata(file);
    rapidjson::Document fixture = Parse(json);
    StatusOr<Job> job = DecodeJob(json);
    ASSERT_TRUE(job.ok()) << job.status();
    rapidjson::Document encoded = Parse(EncodeJob(*job));
    const rapidjson::Value& want_tasks = fixture["spec"]["tasks"];
    ASSERT_EQ(job->spec.tasks.size(), want_tasks.Size());
    for (rapidjson::SizeType i = 0; i < want_tasks.Size(); ++i) {
      SCOPED_TRACE(i);
      // Byte for byte the compact form of what the user wrote, ...
      EXPECT_EQ(job->spec.tasks[i].template_json, Compact(want_tasks[i]["template"]));
      // ... and written back whole, fields muster does not model included.
      EXPECT_TRUE(encoded["spec"]["tasks"][i]["template"] == want_tasks[i]["template"]);
    }
  }
}

TEST(VolcanoCodecTest, EncodesTemplateBuiltInCode) {
  Job job;
  job.meta.name = "j";
  job.meta.namespace_ = "team-a";
  TaskSpec task;
  task.name = "worker";
  task.replicas = 2;
  task.template_pod.meta.labels = {{"role", "worker"}};
  task.template_pod.spec.restart_policy = "Never";
  task.template_pod.spec.containers = {Container{"main", "img:1", {}, ""}};
  job.spec.tasks = {task};
  job.spec.plugins = {{"svc", {}}};
  EXPECT_EQ(EncodeJob(job),
            R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j",)"
            R"("namespace":"team-a"},"spec":{"tasks":[{"name":"worker","replicas":2,"template":)"
            R"({"metadata":{"labels":{"role":"worker"}},"spec":{"containers":[{"name":"main",)"
            R"("image":"img:1"}],"restartPolicy":"Never"}}}],"plugins":{"svc":[]}}})");
}

// ---------------------------------------------------------------------------
// Round trips.

TEST(VolcanoCodecTest, FixturesRoundTrip) {
  ExpectRoundTrip(ReadTestdata("podgroup.json"), DecodePodGroup, EncodePodGroup);
  ExpectRoundTrip(ReadTestdata("queue.json"), DecodeQueue, EncodeQueue);
  for (const char* file : {"job_tf.json", "job_pytorch.json"}) {
    SCOPED_TRACE(file);
    ExpectRoundTrip(ReadTestdata(file), DecodeJob, EncodeJob);
  }
  StatusOr<ObjectList<Queue>> queues = DecodeQueueList(ReadTestdata("queue_list.json"));
  ASSERT_TRUE(queues.ok()) << queues.status();
  for (const Queue& q : queues->items) {
    SCOPED_TRACE(q.meta.name);
    StatusOr<Queue> again = DecodeQueue(EncodeQueue(q));
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(*again == q);
  }
}

TEST(VolcanoCodecTest, DecodesLists) {
  auto list_of = [](std::string_view kind, const std::string& item) {
    return R"({"kind":")" + std::string(kind) +
           R"(","metadata":{"resourceVersion":"5","continue":"next"},"items":[)" + item + "]}";
  };
  StatusOr<ObjectList<PodGroup>> pgs =
      DecodePodGroupList(list_of("PodGroupList", ReadTestdata("podgroup.json")));
  ASSERT_TRUE(pgs.ok()) << pgs.status();
  EXPECT_EQ(pgs->continue_token, "next");
  ASSERT_EQ(pgs->items.size(), 1u);
  EXPECT_EQ(pgs->items[0].spec.min_member, 3);
  StatusOr<ObjectList<Job>> jobs = DecodeJobList(
      list_of("JobList", ReadTestdata("job_tf.json") + "," + ReadTestdata("job_pytorch.json")));
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->resource_version, "5");
  ASSERT_EQ(jobs->items.size(), 2u);
  EXPECT_EQ(jobs->items[1].meta.name, "resnet50-ddp");
}

// ---------------------------------------------------------------------------
// Status patches: {"status": {...}} with every field explicit, because in a
// merge patch an omitted field keeps its old value on the server.

TEST(VolcanoCodecTest, PodGroupStatusPatch) {
  struct Case {
    std::string name;
    PodGroupStatus status;
    std::string want;
  };
  PodGroupStatus unschedulable;
  unschedulable.phase = "Inqueue";
  unschedulable.conditions = {
      Condition{"Unschedulable", "True", "NotEnoughResources",
                "2/4 tasks in gang unschedulable: 2 Insufficient nvidia.com/gpu",
                At("2025-03-14T09:26:52Z"), Time(), Time(), "s-1"}};
  PodGroupStatus running;
  running.phase = "Running";
  running.running = 4;
  std::vector<Case> cases = {
      {"unschedulable, zero counts written", unschedulable,
       R"({"status":{"phase":"Inqueue","conditions":[{"type":"Unschedulable","status":"True",)"
       R"("lastTransitionTime":"2025-03-14T09:26:52Z","reason":"NotEnoughResources",)"
       R"("message":"2/4 tasks in gang unschedulable: 2 Insufficient nvidia.com/gpu",)"
       R"("transitionID":"s-1"}],"running":0,"succeeded":0,"failed":0}})"},
      {"running, conditions cleared", running,
       R"({"status":{"phase":"Running","conditions":[],"running":4,"succeeded":0,"failed":0}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(EncodePodGroupStatusPatch(c.status), c.want);
  }
}

// The muster.io/gang-plan annotation: golden JSON, round trip, bad input.
TEST(VolcanoCodecTest, GangPlacementGolden) {
  const GangPlacement placement{
      .pod_group = "train-1a2b",
      .members = {{"train-worker-0", "gpu-a-1"}, {"train-worker-1", "gpu-a-2"}}};
  const std::string golden = R"({"podGroup":"train-1a2b","members":{"train-worker-0":"gpu-a-1",)"
                             R"("train-worker-1":"gpu-a-2"}})";
  EXPECT_EQ(EncodeGangPlacement(placement), golden);
  StatusOr<GangPlacement> decoded = DecodeGangPlacement(golden);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, placement);
}

TEST(VolcanoCodecTest, GangPlacementErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string want;  // a substring of the error
  };
  const std::vector<Case> cases = {
      {R"({"members":{}})", "podGroup is empty"},
      {R"({"podGroup":"g","members":{"p":""}})", "members[\"p\"]"},
      {R"({"podGroup":"g","members":{"p":3}})", "members"},
      {R"({"podGroup":7})", "podGroup"},
      {"not json", "muster.io/gang-plan"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    StatusOr<GangPlacement> decoded = DecodeGangPlacement(c.json);
    ASSERT_FALSE(decoded.ok());
    EXPECT_THAT(decoded.status().message(), ::testing::HasSubstr(c.want));
  }
}

TEST(VolcanoCodecTest, QueueStatusPatch) {
  QueueStatus s;
  s.state = "Open";
  s.allocated = Resources{{"cpu", 18250}, {"memory", Bytes("2Gi")}};
  s.allocated.Set("nvidia.com/gpu", 0);  // released: must be written to reach 0
  s.running = 2;
  s.pending = 1;
  // No state: the extender's patch must not undo a CloseQueue the
  // reconciler wrote after the extender read the queue.
  EXPECT_EQ(EncodeQueueStatusPatch(s),
            R"({"status":{"allocated":{"cpu":"18250m","memory":"2Gi",)"
            R"("nvidia.com/gpu":"0"},"pending":1,"running":2,"inqueue":0,"unknown":0,)"
            R"("completed":0}})");
  EXPECT_EQ(EncodeQueueStatusPatch(QueueStatus{}),
            R"({"status":{"allocated":{},"pending":0,"running":0,"inqueue":0,"unknown":0,)"
            R"("completed":0}})");
}

// The reconciler's write (queue_state.h): the state alone, so a merge patch
// leaves allocated and the counters to the extender.
TEST(VolcanoCodecTest, QueueStatePatch) {
  EXPECT_EQ(EncodeQueueStatePatch("Closing"), R"({"status":{"state":"Closing"}})");
  EXPECT_EQ(EncodeQueueStatePatch("Open"), R"({"status":{"state":"Open"}})");
}

TEST(VolcanoCodecTest, JobStatusPatch) {
  JobStatus s;
  s.state = JobState{"Running", "", "", At("2025-03-14T09:31:07Z")};
  s.min_available = 3;
  s.running = 3;
  s.running_duration = 4min + 17s;
  s.task_status_count = {{"ps", {{"Running", 1}}}, {"worker", {{"Pending", 0}, {"Running", 2}}}};
  s.controlled_resources = {{"plugin-svc", "svc"}};
  s.conditions = {JobCondition{"Pending", At("2025-03-14T09:26:51Z")},
                  JobCondition{"Running", At("2025-03-14T09:31:07Z")}};
  EXPECT_EQ(EncodeJobStatusPatch(s),
            R"({"status":{"state":{"phase":"Running","reason":"","message":"",)"
            R"("lastTransitionTime":"2025-03-14T09:31:07Z"},"minAvailable":3,"pending":0,)"
            R"("running":3,"succeeded":0,"failed":0,"terminating":0,"unknown":0,"version":0,)"
            R"("retryCount":0,"runningDuration":"4m17s","taskStatusCount":{"ps":{"phase":)"
            R"({"Running":1}},"worker":{"phase":{"Pending":0,"Running":2}}},)"
            R"("controlledResources":{"plugin-svc":"svc"},"conditions":[{"status":"Pending",)"
            R"("lastTransitionTime":"2025-03-14T09:26:51Z"},{"status":"Running",)"
            R"("lastTransitionTime":"2025-03-14T09:31:07Z"}]}})");
  // The patch decodes back into the same status.
  StatusOr<Job> back = DecodeJob(EncodeJobStatusPatch(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->status, s);
}

// ---------------------------------------------------------------------------
// Objects the CRDs accept that muster cannot decode, and what is read of
// them to answer them (informer.h UndecodableObject).

TEST(VolcanoCodecTest, UndecodableObjectsTheCrdsAcceptNameTheField) {
  struct Case {
    std::string name;
    StatusOfDecode decode;
    std::string json;
    std::string want;  // DecodeProblem of the error
  };
  const std::vector<Case> cases = {
      {"a Job's template asks for cpu 1.2.3", StatusOf(DecodeJob),
       ReadTestdata("job_undecodable.json"),
       "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantity \"1.2.3\" of "
       "cpu is invalid: it has more than one decimal point"},
      {"a PodGroup's minResources of nvidia.com/gpu \"lots\"", StatusOf(DecodePodGroup),
       ReadTestdata("podgroup_undecodable.json"),
       "spec.minResources[\"nvidia.com/gpu\"]: quantity \"lots\" of nvidia.com/gpu is invalid: "
       "expected a number such as \"1\", \"0.5\" or \"500m\""},
      {"a Queue's negative capability", StatusOf(DecodeQueue),
       ReadTestdata("queue_undecodable.json"),
       "spec.capability.cpu: quantity \"-1\" of cpu is negative"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DecodeProblem(c.decode(c.json)), c.want);
  }
}

TEST(VolcanoCodecTest, DecodesTheStatusOfAnObjectWhoseSpecDoesNot) {
  StatusOr<JobStatus> job = DecodeJobStatusOf(ReadTestdata("job_undecodable.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state.phase, "Pending");
  ASSERT_EQ(job->conditions.size(), 1u);
  EXPECT_EQ(job->conditions[0].status, "Pending");
  StatusOr<PodGroupStatus> group =
      DecodePodGroupStatusOf(ReadTestdata("podgroup_undecodable.json"));
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(*group, PodGroupStatus{});
  EXPECT_EQ(DecodeProblem(DecodeJobStatusOf(R"({"status":{"state":{"phase":7}}})").status()),
            "status.state.phase: expected a string, got a number");
}

// The answers' wire format: the state (and conditions) alone, no counters.
TEST(VolcanoCodecTest, JobStatePatchGolden) {
  const JobState failed{"Failed", "InvalidSpec",
                        R"(spec.runningEstimate: "forever" is not a duration)",
                        At("2025-03-14T09:31:07Z")};
  EXPECT_EQ(EncodeJobStatePatch(failed, {JobCondition{"Pending", At("2025-03-14T09:26:51Z")},
                                         JobCondition{"Failed", At("2025-03-14T09:31:07Z")}}),
            R"({"status":{"state":{"phase":"Failed","reason":"InvalidSpec",)"
            R"("message":"spec.runningEstimate: \"forever\" is not a duration",)"
            R"("lastTransitionTime":"2025-03-14T09:31:07Z"},"conditions":[{"status":"Pending",)"
            R"("lastTransitionTime":"2025-03-14T09:26:51Z"},{"status":"Failed",)"
            R"("lastTransitionTime":"2025-03-14T09:31:07Z"}]}})");
  // Without conditions, the Job's stay as they are.
  EXPECT_EQ(EncodeJobStatePatch(JobState{"Running", "UpdateRefused", "spec.x: bad", {}}, {}),
            R"({"status":{"state":{"phase":"Running","reason":"UpdateRefused",)"
            R"("message":"spec.x: bad"}}})");
}

TEST(VolcanoCodecTest, PodGroupConditionsPatchGolden) {
  const Condition unschedulable{.type = "Unschedulable",
                                .status = "True",
                                .reason = "InvalidSpec",
                                .message = "spec.minMember: integer 3000000000 out of range",
                                .last_transition_time = At("2025-03-14T09:31:07Z")};
  EXPECT_EQ(
      EncodePodGroupConditionsPatch("Pending", {unschedulable}),
      R"({"status":{"phase":"Pending","conditions":[{"type":"Unschedulable",)"
      R"("status":"True","lastTransitionTime":"2025-03-14T09:31:07Z",)"
      R"("reason":"InvalidSpec","message":"spec.minMember: integer 3000000000 out of range"}]}})");
  EXPECT_EQ(EncodePodGroupConditionsPatch("", {}), R"({"status":{"conditions":[]}})");
}

// ---------------------------------------------------------------------------
// Errors name the JSON path of the first bad field.

struct ErrorCase {
  std::string name;
  StatusOfDecode decode;
  std::string json;
  std::string want;  // the start of the message
};

TEST(VolcanoCodecTest, ErrorsNameTheJsonPath) {
  std::string pg = ReadTestdata("podgroup.json");
  std::string queue = ReadTestdata("queue.json");
  std::string job = ReadTestdata("job_tf.json");
  StatusOfDecode decode_pg = StatusOf(DecodePodGroup);
  StatusOfDecode decode_queue = StatusOf(DecodeQueue);
  StatusOfDecode decode_job = StatusOf(DecodeJob);
  std::vector<ErrorCase> cases = {
      {"minMember beyond int32", decode_pg, WithValueAt(pg, "/spec/minMember", "2147483648"),
       "decode PodGroup: spec.minMember: integer 2147483648 out of range"},
      {"minMember as a string", decode_pg, WithValueAt(pg, "/spec/minMember", R"("3")"),
       "decode PodGroup: spec.minMember: expected an integer, got a string"},
      {"minTaskMember as a string", decode_pg,
       WithValueAt(pg, "/spec/minTaskMember/worker", R"("2")"),
       "decode PodGroup: spec.minTaskMember.worker: expected an integer, got a string"},
      {"a GPU count that is no quantity in minResources", decode_pg,
       WithValueAt(pg, "/spec/minResources/requests.nvidia.com~1gpu", R"("half")"),
       R"(decode PodGroup: spec.minResources["requests.nvidia.com/gpu"]: )"},
      {"fractional highestTierAllowed", decode_pg,
       WithValueAt(pg, "/spec/networkTopology/highestTierAllowed", "1.5"),
       "decode PodGroup: spec.networkTopology.highestTierAllowed: expected an integer, got a "
       "fraction"},
      {"bad condition time", decode_pg,
       WithValueAt(pg, "/status/conditions/0/lastTransitionTime", R"("2025-03-14")"),
       "decode PodGroup: status.conditions[0].lastTransitionTime: "},
      {"running as a string", decode_pg, WithValueAt(pg, "/status/running", R"("3")"),
       "decode PodGroup: status.running: expected an integer, got a string"},
      {"weight as a string", decode_queue, WithValueAt(queue, "/spec/weight", R"("4")"),
       "decode Queue: spec.weight: expected an integer, got a string"},
      {"bad guarantee", decode_queue,
       WithValueAt(queue, "/spec/guarantee/resource/cpu", R"("lots")"),
       "decode Queue: spec.guarantee.resource.cpu: "},
      {"guarantee as a list", decode_queue, WithValueAt(queue, "/spec/guarantee", "[]"),
       "decode Queue: spec.guarantee: expected an object, got an array"},
      {"reclaimable as a string", decode_queue, WithValueAt(queue, "/spec/reclaimable", R"("yes")"),
       "decode Queue: spec.reclaimable: expected a boolean, got a string"},
      {"negative allocated memory", decode_queue,
       WithValueAt(queue, "/status/allocated/memory", R"("-1Gi")"),
       "decode Queue: status.allocated.memory: "},
      {"a GPU count that is no quantity in a task template", decode_job,
       WithValueAt(job,
                   "/spec/tasks/1/template/spec/containers/0/resources/requests/nvidia.com~1gpu",
                   R"("lots")"),
       "decode Job: spec.tasks[1].template.spec.containers[0].resources."
       R"(requests["nvidia.com/gpu"]: )"},
      {"replicas beyond int32", decode_job,
       WithValueAt(job, "/spec/tasks/0/replicas", "4294967296"),
       "decode Job: spec.tasks[0].replicas: integer 4294967296 out of range"},
      {"bad policy timeout", decode_job,
       WithValueAt(job, "/spec/policies/1/timeout", R"("10 minutes")"),
       "decode Job: spec.policies[1].timeout: "},
      {"runningEstimate as a number", decode_job, WithValueAt(job, "/spec/runningEstimate", "9000"),
       "decode Job: spec.runningEstimate: expected a duration, got a number"},
      {"plugin args as a string", decode_job, WithValueAt(job, "/spec/plugins/svc", R"("x")"),
       "decode Job: spec.plugins.svc: expected an array, got a string"},
      {"plugin arg as a number", decode_job, WithValueAt(job, "/spec/plugins/tensorflow/1", "1"),
       "decode Job: spec.plugins.tensorflow[1]: expected a string, got a number"},
      {"template as a string", decode_job, WithValueAt(job, "/spec/tasks/0/template", R"("x")"),
       "decode Job: spec.tasks[0].template: expected an object, got a string"},
      {"template metadata as a list", decode_job,
       WithValueAt(job, "/spec/tasks/0/template/metadata", "[]"),
       "decode Job: spec.tasks[0].template.metadata: expected an object, got an array"},
      {"dependsOn name as a string", decode_job,
       WithValueAt(job, "/spec/tasks/1/dependsOn/name", R"("ps")"),
       "decode Job: spec.tasks[1].dependsOn.name: expected an array, got a string"},
      {"volumeClaim as a list", decode_job, WithValueAt(job, "/spec/volumes/1/volumeClaim", "[]"),
       "decode Job: spec.volumes[1].volumeClaim: expected an object, got an array"},
      {"fractional task count", decode_job,
       WithValueAt(job, "/status/taskStatusCount/worker/phase/Running", "2.5"),
       "decode Job: status.taskStatusCount.worker.phase.Running: expected an integer, got a "
       "fraction"},
      {"task state as a string", decode_job,
       WithValueAt(job, "/status/taskStatusCount/worker", R"("Running")"),
       "decode Job: status.taskStatusCount.worker: expected an object, got a string"},
      {"bad state time", decode_job,
       WithValueAt(job, "/status/state/lastTransitionTime", R"("2025-03-14T25:00:00Z")"),
       "decode Job: status.state.lastTransitionTime: "},
      {"bad runningDuration", decode_job,
       WithValueAt(job, "/status/runningDuration", R"("forever")"),
       "decode Job: status.runningDuration: "},
      {"bad condition time", decode_job,
       WithValueAt(job, "/status/conditions/1/lastTransitionTime", "true"),
       "decode Job: status.conditions[1].lastTransitionTime: expected a timestamp, got a boolean"},
      {"minAvailable beyond int32 in a list", StatusOf(DecodeJobList),
       R"({"items":[{"spec":{"minAvailable":-2147483649}}]})",
       "decode JobList: items[0].spec.minAvailable: integer -2147483649 out of range"},
      {"reclaimable as a string in a list", StatusOf(DecodeQueueList),
       WithValueAt(ReadTestdata("queue_list.json"), "/items/1/spec/reclaimable", R"("no")"),
       "decode QueueList: items[1].spec.reclaimable: expected a boolean, got a string"},
      {"list items as an object", StatusOf(DecodePodGroupList), R"({"items":{}})",
       "decode PodGroupList: items: expected an array, got an object"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = c.decode(c.json);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), StartsWith(c.want));
  }
}

TEST(VolcanoCodecTest, NullFieldsReadAsUnset) {
  std::string job = ReadTestdata("job_tf.json");
  struct Case {
    std::string name;
    const char* pointer;
    std::function<bool(const Job&)> unset;
  };
  std::vector<Case> cases = {
      {"minSuccess", "/spec/minSuccess", [](const Job& j) { return !j.spec.min_success; }},
      {"a plugin's args", "/spec/plugins/svc",
       [](const Job& j) {
         return j.spec.plugins.count("svc") == 1 && j.spec.plugins.at("svc").empty();
       }},
      {"a template", "/spec/tasks/0/template",
       [](const Job& j) {
         return j.spec.tasks[0].template_json.empty() && j.spec.tasks[0].template_pod == Pod{};
       }},
      {"dependsOn", "/spec/tasks/1/dependsOn",
       [](const Job& j) { return !j.spec.tasks[1].depends_on; }},
      {"runningDuration", "/status/runningDuration",
       [](const Job& j) { return !j.status.running_duration; }},
      {"a task count", "/status/taskStatusCount/worker/phase/Running",
       [](const Job& j) { return j.status.task_status_count.at("worker").empty(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StatusOr<Job> decoded = DecodeJob(WithValueAt(job, c.pointer, "null"));
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_TRUE(c.unset(*decoded));
  }
}

}  // namespace
}  // namespace muster::kube
