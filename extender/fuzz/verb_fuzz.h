// What the verb fuzz targets (<verb>_fuzz.cc) share: one small cluster the
// pipeline decides against, built once per process, and the way a violated
// invariant is reported.
//
// The targets drive the Pipeline entry points kube-scheduler's bodies reach
// (Filter, Prioritize, Preempt, ReserveBind + FinishBind) with the fuzz input
// as the body, and check the wire contract of pipeline.h on every reply:
// status and content type, a reply that is JSON and decodes as its wire
// type, and no node name (or victim UID) that the request did not carry. A
// violation prints the input, the reply and the reason to stderr and aborts,
// so libFuzzer records the input as a crash.
//
// Thread-safety: libFuzzer calls a target on one thread; the cluster is
// built on the first call.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "extender/cluster_cache.h"
#include "extender/pipeline.h"
#include "kube/codec/json.h"
#include "model/clock.h"
#include "model/testing/builders.h"

namespace muster::extender::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

[[noreturn]] inline void Violation(std::string_view what, std::string_view input,
                                   std::string_view reply) {
  std::fprintf(stderr, "verb invariant violated: %.*s\n--- input ---\n%.*s\n--- reply ---\n%.*s\n",
               static_cast<int>(what.size()), what.data(), static_cast<int>(input.size()),
               input.data(), static_cast<int>(reply.size()), reply.data());
  std::abort();
}

// The goldens' cluster (extender/testing/golden.h: the names the seeds in
// extender/testdata and kube/codec/testdata/extender use, so they reach fit,
// score and bind rather than "node not in cache") plus what reaches the
// other branches (extender/fuzz/seeds):
//   gpu-a1 8 GPUs free, gpu-a2 4 of 8 used, gpu-b1 4 of 4 used, gpu-c1 6 of 8
//   used, gpu-d1 8 free with 4 rdma/hca (a managed resource here); a pod
//   bound to "gpu-ghost", a node the cache has no Node object for.
//   Pending: ml/train-0 (8 GPUs, the goldens' uid), ml/small (1 GPU + 1
//   rdma/hca). Not bindable: batch/a2-user (bound to gpu-a2), batch/done
//   (Succeeded), batch/leaving (being deleted).
struct FuzzCluster {
  FuzzCluster() {
    using test::MakeNode;
    using test::MakePod;
    cache.UpsertNode(MakeNode("gpu-a1").Cpu("64").Memory("1Ti").Gpu(8));
    cache.UpsertNode(MakeNode("gpu-a2").Cpu("64").Memory("1Ti").Gpu(8));
    cache.UpsertNode(MakeNode("gpu-b1").Cpu("32").Memory("256Gi").Gpu(4));
    cache.UpsertNode(MakeNode("gpu-c1").Cpu("64").Memory("1Ti").Gpu(8));
    cache.UpsertNode(
        MakeNode("gpu-d1").Cpu("64").Memory("1Ti").Gpu(8).Allocatable("rdma/hca", "4"));
    cache.UpsertPod(
        MakePod("a2-user").Namespace("batch").Gpu(4).NodeName("gpu-a2").Phase("Running"));
    cache.UpsertPod(
        MakePod("b1-user").Namespace("batch").Gpu(4).NodeName("gpu-b1").Phase("Running"));
    cache.UpsertPod(
        MakePod("c1-user").Namespace("batch").Gpu(6).NodeName("gpu-c1").Phase("Running"));
    cache.UpsertPod(
        MakePod("ghost").Namespace("batch").Gpu(2).NodeName("gpu-ghost").Phase("Running"));
    cache.UpsertPod(
        MakePod("done").Namespace("batch").Gpu(8).NodeName("gpu-d1").Phase("Succeeded"));
    Pod leaving = MakePod("leaving").Namespace("batch").Gpu(1);
    leaving.meta.deletion_timestamp = clock.Now();
    cache.UpsertPod(leaving);
    cache.UpsertPod(MakePod("train-0")
                        .Namespace("ml")
                        .Uid("0b6f3c1e-1111-4c1a-9d7e-aaaaaaaaaaaa")
                        .Cpu("32")
                        .Memory("256Gi")
                        .Gpu(8));
    cache.UpsertPod(MakePod("small").Namespace("ml").Gpu(1).Request("rdma/hca", "1"));
  }

  FakeClock clock;  // never advanced: no reservation expires behind a target's back
  ClusterCache cache{clock, ClusterStateOptions{.indexed_resources = {"nvidia.com/gpu"}}};
  Pipeline pipeline{PolicyConfig{.extra_managed_resources = {"rdma/hca"}}, &cache};
};

inline FuzzCluster& Cluster() {
  static FuzzCluster* const cluster = new FuzzCluster();  // never destroyed: no exit-time order
  return *cluster;
}

// Aborts unless `reply` is one JSON document.
inline void ExpectJson(std::string_view reply, std::string_view input) {
  rapidjson::Document doc;
  const Status parsed = kube::ParseDocument(reply, &doc);
  if (!parsed.ok()) Violation("the reply is not JSON: " + parsed.ToString(), input, reply);
}

// Aborts unless every name of `names` is in `sent`.
template <typename Names>
void ExpectOnlySent(const Names& names, const std::set<std::string>& sent, std::string_view what,
                    std::string_view input, std::string_view reply) {
  for (const std::string& name : names) {
    if (!sent.contains(name)) {
      Violation(std::string(what) + " names \"" + name + "\", which the request did not carry",
                input, reply);
    }
  }
}

// The text reply of prioritize and preempt to a body that does not decode.
inline void ExpectBadRequest(const VerbReply& reply, std::string_view input) {
  if (reply.http_status != 400) Violation("a fault must be HTTP 400", input, reply.body);
  if (!reply.content_type.starts_with("text/plain")) {
    Violation("a 400 must carry a text body", input, reply.body);
  }
  if (!reply.body.starts_with(kReasonPrefix) || reply.body.size() <= kReasonPrefix.size() + 1) {
    Violation("a 400 must say what is wrong, after \"muster: \"", input, reply.body);
  }
  if (reply.outcome != ReplyOutcome::kBadRequest) {
    Violation("a 400 must count as bad_request", input, reply.body);
  }
}

}  // namespace muster::extender::fuzz
