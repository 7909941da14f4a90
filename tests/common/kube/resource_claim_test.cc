// The typed view of a ResourceClaim (common/kube/resource_claim.h): a claim as the API server
// sends it decodes to its fields; each wrong type or missing required key is error 7 naming the
// key's path.
#include "common/kube/resource_claim.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

namespace rdmanet::kube {
namespace {

using nlohmann::json;

json fullClaim() {
  return json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "trainer-0-rdma", "namespace": "ml", "uid": "0b5a-7c1e",
                 "annotations": {"resource.kubernetes.io/pod-claim-name": "rdma"},
                 "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "trainer-0",
                                      "uid": "9f00", "controller": true}]},
    "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "rdma"}}]}},
    "status": {
      "allocation": {"devices": {"results": [
        {"request": "nic", "driver": "rdma.rdmanet.io", "pool": "node-a", "device": "pci-0000-17-00-2"},
        {"request": "nic/mon", "driver": "rdma.rdmanet.io", "pool": "node-a", "device": "pci-0000-17-00-3",
         "adminAccess": true, "shareID": "s-1",
         "consumedCapacity": {"rdmanet.io/bandwidth": "50G", "example.com/slots": "1500m"}}]}},
      "reservedFor": [{"resource": "pods", "name": "trainer-0", "uid": "9f00"},
                      {"apiGroup": "batch", "resource": "jobs", "name": "j", "uid": "77"}],
      "devices": [{"driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0",
                   "data": {"anything": 1}}]
    }})");
}

TEST(ResourceClaimViewTest, AFullClaimDecodesToItsFields) {
  const json doc = fullClaim();
  auto c = decodeResourceClaim(doc);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->metadata.name, "trainer-0-rdma");
  EXPECT_EQ(c->metadata.ns, "ml");
  EXPECT_EQ(c->metadata.uid, "0b5a-7c1e");
  const std::map<std::string, std::string> notes = {
      {"resource.kubernetes.io/pod-claim-name", "rdma"}};
  EXPECT_EQ(c->metadata.annotations, notes);
  ASSERT_EQ(c->metadata.owner_references.size(), 1u);
  EXPECT_EQ(c->metadata.owner_references[0].kind, "Pod");
  EXPECT_EQ(c->metadata.owner_references[0].api_version, "v1");
  EXPECT_EQ(c->metadata.owner_references[0].name, "trainer-0");
  EXPECT_TRUE(c->metadata.owner_references[0].controller);
  ASSERT_EQ(c->requests.size(), 1u);
  EXPECT_EQ(c->requests[0].name, "nic");
  EXPECT_TRUE(c->allocated);
  ASSERT_EQ(c->results.size(), 2u);
  EXPECT_EQ(c->results[0].request, "nic");
  EXPECT_EQ(c->results[0].driver, "rdma.rdmanet.io");
  EXPECT_EQ(c->results[0].pool, "node-a");
  EXPECT_EQ(c->results[0].device, "pci-0000-17-00-2");
  EXPECT_FALSE(c->results[0].admin_access);
  EXPECT_FALSE(c->results[0].share_id.has_value());
  EXPECT_EQ(c->results[1].request, "nic/mon");
  EXPECT_TRUE(c->results[1].admin_access);
  EXPECT_EQ(c->results[1].share_id, "s-1");
  EXPECT_TRUE(c->results[0].consumed_capacity.empty());
  const std::map<std::string, int64_t> consumed = {{"rdmanet.io/bandwidth", 50'000'000'000},
                                                   {"example.com/slots", 2}};
  EXPECT_EQ(c->results[1].consumed_capacity, consumed);
  ASSERT_EQ(c->reserved_for.size(), 2u);
  EXPECT_EQ(c->reserved_for[0].resource, "pods");
  EXPECT_EQ(c->reserved_for[0].api_group, "");
  EXPECT_EQ(c->reserved_for[0].uid, "9f00");
  EXPECT_EQ(c->reserved_for[1].api_group, "batch");
  ASSERT_EQ(c->devices.size(), 1u);
  EXPECT_EQ(c->devices[0].driver, "gpu.example.com");
  EXPECT_EQ(c->devices[0].device, "gpu-0");
  ASSERT_NE(c->devices[0].raw, nullptr);
  EXPECT_EQ(*c->devices[0].raw, doc["status"]["devices"][0]);  // carried whole
}

TEST(ResourceClaimViewTest, AClaimNotYetAllocatedIsEmptyNotAnError) {
  for (const json& doc : {json::object(), json{{"status", json::object()}},
                          json{{"status", {{"allocation", {{"devices", json::object()}}}}}},
                          json{{"metadata", nullptr}, {"status", nullptr}}}) {
    auto c = decodeResourceClaim(doc);
    ASSERT_TRUE(c.ok()) << doc.dump() << ": " << c.error().msg;
    EXPECT_FALSE(c->allocated) << doc.dump();
    EXPECT_TRUE(c->results.empty());
    EXPECT_EQ(c->metadata.uid, "");
  }
  auto empty = decodeResourceClaim(
      json{{"status", {{"allocation", {{"devices", {{"results", json::array()}}}}}}}});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->allocated);  // allocated, with no device at all
}

TEST(ResourceClaimViewTest, EachWrongTypeOrMissingKeyIsError7NamingItsPath) {
  struct Case {
    json::json_pointer at;
    json value;  // null: the key is removed
    std::string msg;
  };
  const std::string r0 = "status.allocation.devices.results[0]";
  const Case cases[] = {
      {json::json_pointer("/metadata"), "x", "\"metadata\" must be an object"},
      {json::json_pointer("/metadata/uid"), 7, "\"metadata.uid\" must be a string"},
      {json::json_pointer("/metadata/namespace"), true, "\"metadata.namespace\" must be a string"},
      {json::json_pointer("/metadata/annotations"), json::array(),
       "\"metadata.annotations\" must be an object"},
      {json::json_pointer("/metadata/annotations/resource.kubernetes.io~1pod-claim-name"), 1,
       "\"metadata.annotations.resource.kubernetes.io/pod-claim-name\" must be a string"},
      {json::json_pointer("/metadata/ownerReferences"), json::object(),
       "\"metadata.ownerReferences\" must be an array"},
      {json::json_pointer("/metadata/ownerReferences/0/kind"), nullptr,
       "\"metadata.ownerReferences[0].kind\" is required"},
      {json::json_pointer("/metadata/ownerReferences/0/controller"), "yes",
       "\"metadata.ownerReferences[0].controller\" must be a boolean"},
      {json::json_pointer("/spec/devices/requests/0/name"), 1,
       "\"spec.devices.requests[0].name\" must be a string"},
      {json::json_pointer("/status/allocation"), json::array(),
       "\"status.allocation\" must be an object"},
      {json::json_pointer("/status/allocation/devices/results"), "x",
       "\"status.allocation.devices.results\" must be an array"},
      {json::json_pointer("/status/allocation/devices/results/0"), "x",
       "\"" + r0 + "\" must be an object"},
      {json::json_pointer("/status/allocation/devices/results/0/pool"), 3,
       "\"" + r0 + ".pool\" must be a string"},
      {json::json_pointer("/status/allocation/devices/results/0/pool"), nullptr,
       "\"" + r0 + ".pool\" is required"},
      {json::json_pointer("/status/allocation/devices/results/0/driver"), nullptr,
       "\"" + r0 + ".driver\" is required"},
      {json::json_pointer("/status/allocation/devices/results/0/device"), json::array(),
       "\"" + r0 + ".device\" must be a string"},
      {json::json_pointer("/status/allocation/devices/results/0/request"), nullptr,
       "\"" + r0 + ".request\" is required"},
      {json::json_pointer("/status/allocation/devices/results/1/adminAccess"), "true",
       "\"status.allocation.devices.results[1].adminAccess\" must be a boolean"},
      {json::json_pointer("/status/allocation/devices/results/1/shareID"), 1,
       "\"status.allocation.devices.results[1].shareID\" must be a string"},
      {json::json_pointer("/status/allocation/devices/results/1/consumedCapacity"), "50G",
       "\"status.allocation.devices.results[1].consumedCapacity\" must be an object"},
      {json::json_pointer("/status/allocation/devices/results/1/consumedCapacity/a~1b"), 50,
       "\"status.allocation.devices.results[1].consumedCapacity[\"a/b\"]\" must be a quantity "
       "string"},
      {json::json_pointer("/status/allocation/devices/results/1/consumedCapacity/a~1b"), "50 G",
       "status.allocation.devices.results[1].consumedCapacity[\"a/b\"]: quantity \"50 G\" has "
       "an unknown suffix"},
      {json::json_pointer("/status/reservedFor"), "pods",
       "\"status.reservedFor\" must be an array"},
      {json::json_pointer("/status/reservedFor/0/uid"), nullptr,
       "\"status.reservedFor[0].uid\" is required"},
      {json::json_pointer("/status/reservedFor/1/apiGroup"), 1,
       "\"status.reservedFor[1].apiGroup\" must be a string"},
      {json::json_pointer("/status/devices/0/driver"), nullptr,
       "\"status.devices[0].driver\" is required"},
  };
  for (const Case& c : cases) {
    json doc = fullClaim();
    if (c.value.is_null()) {
      doc[c.at.parent_pointer()].erase(c.at.back());
    } else {
      doc[c.at] = c.value;
    }
    auto r = decodeResourceClaim(doc);
    ASSERT_FALSE(r.ok()) << c.at.to_string();
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidConfig) << c.at.to_string();
    EXPECT_EQ(r.error().msg, c.msg) << c.at.to_string();
  }
  auto top = decodeResourceClaim(json::array());
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().msg, "\"ResourceClaim\" must be an object");
}

TEST(ListMetaViewTest, TheContinueTokenIsReadWithItsType) {
  auto page = decodeListMeta(json{{"metadata", {{"continue", "abc"}}}, {"items", json::array()}});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->continue_token, "abc");
  auto last = decodeListMeta(json{{"metadata", json::object()}});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->continue_token, "");
  auto bad = decodeListMeta(json{{"metadata", {{"continue", 1}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(bad.error().msg, "\"metadata.continue\" must be a string");
}

}  // namespace
}  // namespace rdmanet::kube
