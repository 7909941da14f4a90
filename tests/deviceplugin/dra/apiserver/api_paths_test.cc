// Claim and node paths: built only from valid names, and they reach the stand-in's
// namespaced ResourceClaims the way NodePrepareResources will (GET, then check the uid).
#include "deviceplugin/dra/apiserver/api_paths.h"

#include "common/kube/api_error.h"
#include "tests/deviceplugin/dra/apiserver/publisher_fixture.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

TEST(ApiPathsTest, BuildsPathsFromValidNames) {
  EXPECT_EQ(resourceClaimPath("ml", "job-0-nic-x7k2p").valueOr(""),
            "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/job-0-nic-x7k2p");
  EXPECT_EQ(nodePath("node-1.rack2").valueOr(""), "/api/v1/nodes/node-1.rack2");
}

TEST(ApiPathsTest, RefusesNamesThatCouldSteerTheRequest) {
  for (const auto& [ns, name] :
       std::vector<std::pair<std::string, std::string>>{{"..", "c"},
                                                        {"ml/x", "c"},
                                                        {"ml", "../../nodes/n"},
                                                        {"ml", "c?watch=1"},
                                                        {"ml", "c%2Fd"},
                                                        {"", "c"},
                                                        {"ml", ""},
                                                        {"a.b", "c"}}) {
    auto p = resourceClaimPath(ns, name);
    ASSERT_FALSE(p.ok()) << ns << "/" << name;
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidConfig);
  }
  EXPECT_FALSE(nodePath("n/../x").ok());
}

TEST_F(PublisherTest, ClaimIsReadFromItsNamespace) {
  const json claim = {{"apiVersion", "resource.k8s.io/v1"},
                      {"kind", "ResourceClaim"},
                      {"metadata", {{"name", "job-nic"}}},
                      {"spec", {{"devices", {{"requests", json::array()}}}}}};
  auto created = client().create("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims", claim);
  ASSERT_TRUE(created.ok()) << created.error().msg;
  auto got = client().get(resourceClaimPath("ml", "job-nic").value());
  ASSERT_TRUE(got.ok()) << got.error().msg;
  EXPECT_EQ((*got)["metadata"]["uid"], (*created)["metadata"]["uid"]);
  EXPECT_EQ((*got)["metadata"]["namespace"], "ml");
  auto elsewhere = client().get(resourceClaimPath("other", "job-nic").value());
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_TRUE(kube::isNotFound(elsewhere.error()));
  EXPECT_NE(elsewhere.error().msg.find("resourceclaims.resource.k8s.io \"job-nic\" not found"),
            std::string::npos)
      << elsewhere.error().msg;
}

}  // namespace
}  // namespace rdmanet::dra
