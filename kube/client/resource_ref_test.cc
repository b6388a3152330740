#include "kube/client/resource_ref.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::kube {
namespace {

TEST(ResourceRefTest, BuildsRestPaths) {
  struct Case {
    std::string name;
    ResourceRef ref;
    std::string path;
  };
  const std::vector<Case> cases = {
      {"core, cluster-scoped collection", ResourceRef::Core("nodes"), "/api/v1/nodes"},
      {"core, cluster-scoped object", ResourceRef::Core("nodes", "", "n1"), "/api/v1/nodes/n1"},
      {"core, namespaced collection", ResourceRef::Core("pods", "ns"),
       "/api/v1/namespaces/ns/pods"},
      {"core, subresource", ResourceRef::Core("pods", "ns", "p").WithSubresource("binding"),
       "/api/v1/namespaces/ns/pods/p/binding"},
      {"named group",
       {"scheduling.volcano.sh", "v1beta1", "podgroups", "ns", "pg", "status"},
       "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg/status"},
      {"group, cluster-scoped",
       {"scheduling.volcano.sh", "v1beta1", "queues", "", "q", ""},
       "/apis/scheduling.volcano.sh/v1beta1/queues/q"},
      {"vcctl's Commands", CommandsRef().WithNamespace("ml").WithName("j-abortjob-x"),
       "/apis/bus.volcano.sh/v1alpha1/namespaces/ml/commands/j-abortjob-x"},
      {"names are escaped", ResourceRef::Core("roles", "", "system:kube scheduler/x"),
       "/api/v1/roles/system%3Akube%20scheduler%2Fx"},
      {"a pod's proxy: the subresource's slashes kept, each segment escaped",
       ResourceRef::Core("pods", "muster-system", "volcano-0:8080")
           .WithSubresource("proxy/debug/state"),
       "/api/v1/namespaces/muster-system/pods/volcano-0%3A8080/proxy/debug/state"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(c.ref.Validate().ok());
    EXPECT_EQ(c.ref.Path(), c.path);
  }
}

TEST(ResourceRefTest, ValidatesRequiredParts) {
  EXPECT_FALSE(ResourceRef{}.Validate().ok());
  EXPECT_FALSE(ResourceRef::Core("").Validate().ok());
  EXPECT_FALSE(ResourceRef::Core("pods", "ns").WithSubresource("status").Validate().ok());
  EXPECT_EQ(ResourceRef::Core("pods", "ns", "p").WithSubresource("status").Collection().Path(),
            "/api/v1/namespaces/ns/pods");
}

TEST(QueryBuilderTest, EncodesValues) {
  QueryBuilder q;
  q.Add("labelSelector", "app in (a,b),!gpu").AddIfSet("continue", "").Add("limit", "5");
  EXPECT_EQ(q.str(), "?labelSelector=app%20in%20%28a%2Cb%29%2C%21gpu&limit=5");
  EXPECT_EQ(QueryBuilder().str(), "");
}

}  // namespace
}  // namespace muster::kube
